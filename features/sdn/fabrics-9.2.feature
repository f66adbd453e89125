@sdn @pve9.2
Feature: SDN fabrics of PVE 9.2: BGP fabrics, redistribution, deletable prefixes
  9.2 adds BGP fabrics (an IP prefix, what they redistribute), lets OSPF
  fabrics redistribute routes of other protocols (each source once, with a
  route map), and lets an update delete a fabric's prefixes. The crate's
  BGP node wants a role and an AS number that 9.2's API does not take, so
  no BGP node can be added through it.

  Scenario: A BGP fabric redistributes routes until that is deleted
    When I create SDN fabric "{fabric:b}" with protocol "bgp"
      | ip_prefix    | 198.18.70.5/24                    |
      | redistribute | source=connected                  |
      | redistribute | route-map=rm{fabric:b},source=static |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:b}"
    Then the answer has "protocol" = "bgp"
    And the answer has "ip_prefix" = "198.18.70.0/24"
    And the answer has "redistribute/0" = "source=connected"
    And the answer has "redistribute/1" = "source=static,route-map=rm{fabric:b}"
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:b}"
      | protocol     | bgp           |
      | redistribute | source=kernel |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:b}"
    Then the answer has "redistribute/0" = "source=kernel"
    And the answer has no "redistribute/1"
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:b}"
      | protocol | bgp          |
      | delete   | redistribute |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:b}"
    Then the answer has no "redistribute"
    When I add node "{node}" to SDN fabric "{fabric:b}" with protocol "bgp"
      | ip         | 198.18.70.1      |
      | interfaces | name={fabric:b}x |
    Then PVE answers 500 with a message matching "adding node failed: missing field `role`.*"
    When I create SDN fabric "{fabric:c}" with protocol "bgp"
    Then PVE answers 500 with a message matching "adding fabric failed: fabric '{fabric:c}' does not have an IP prefix configured.*"
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:b}"
      | protocol | bgp       |
      | delete   | ip_prefix |
    Then PVE answers 500 with a message matching "updating fabric failed: fabric '{fabric:b}' does not have an IP prefix configured.*"

  Scenario: An OSPF fabric redistributes BGP routes, not OSPF ones
    When I create SDN fabric "{fabric:o}" with protocol "ospf"
      | area         | 198.18.71.1    |
      | ip_prefix    | 198.18.71.0/24 |
      | redistribute | source=bgp     |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:o}"
    Then the answer has "redistribute/0" = "source=bgp"
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:o}"
      | protocol     | ospf        |
      | redistribute | source=ospf |
    Then parameter "redistribute[0]" is rejected with "invalid format - format error\nredistribute[0].source: value 'ospf' does not have a value in the enumeration 'bgp, connected, kernel, static'"
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:o}"
      | protocol | ospf |
      | delete   | area |
    Then PVE answers 500 with a message matching "updating fabric failed: data did not match any variant of untagged enum FabricDeletableProperties.*"
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:o}"
      | protocol | ospf         |
      | delete   | redistribute |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:o}"
    Then the answer has no "redistribute"

  Scenario: An OpenFabric fabric's IPv6 prefix is deleted
    When I create SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip_prefix  | 198.18.72.0/24 |
      | ip6_prefix | fd18:72::/64   |
    Then the answer is null
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:a}"
      | protocol | openfabric |
      | delete   | ip6_prefix |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:a}"
    Then the answer has "ip_prefix" = "198.18.72.0/24"
    And the answer has no "ip6_prefix"
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:a}"
      | protocol | openfabric |
      | delete   | ip_prefix  |
    Then PVE answers 500 with a message matching "updating fabric failed: fabric '{fabric:a}' does not have an IP prefix configured.*"
