@sdn
Feature: SDN controllers
  Controllers (evpn, bgp, isis, faucet) are sections of the pending SDN
  configuration (sdn/controllers.cfg). PVE 9.2 lets several evpn
  controllers be defined: each runs on the nodes it names (all by
  default) with a BGP peer group of its own (VTEP by default) and a BGP
  mode, evpn and bgp controllers apply route maps to the routes they
  receive and send, and an evpn zone names further evpn controllers as
  its secondary controllers. Messages from PVE's plugins carry the Perl
  file and line on a real PVE, so they are matched by pattern.

  @pve9.2
  Scenario: An evpn controller runs on its nodes with its peer group and route maps
    Given entry 10 of SDN route map "{route-map:a}" with action "permit" exists
    When I create SDN controller "{controller:a}" of type "evpn"
      | asn             | 65000          |
      | peers           | 198.18.80.1    |
      | nodes           | {node}         |
      | peer-group-name | {controller:a} |
      | bgp-mode        | internal       |
      | route-map-in    | {route-map:a}  |
      | route-map-out   | {route-map:a}  |
    Then the answer is null
    When I call GET "/cluster/sdn/controllers/{controller:a}"
    Then the answer has "type" = "evpn"
    And the answer has "nodes" = "{node}"
    And the answer has "peer-group-name" = "{controller:a}"
    And the answer has "bgp-mode" = "internal"
    And the answer has "route-map-in" = "{route-map:a}"
    And the answer has "route-map-out" = "{route-map:a}"
    When I call GET "/cluster/sdn/controllers"
      | pending | 1 |
    Then the item with "controller" = "{controller:a}" has "state" = "new"
    And the item with "controller" = "{controller:a}" has "pending/peer-group-name" = "{controller:a}"
    When I call DELETE "/cluster/sdn/route-maps/entries/{route-map:a}/entry/10"
    Then PVE answers 500 with a message matching "deleting route map entry failed: route map {route-map:a} still referenced by controller {controller:a}.*"
    When I call PUT "/cluster/sdn/controllers/{controller:a}"
      | delete | route-map-in,route-map-out,bgp-mode |
    Then the answer is null
    When I call GET "/cluster/sdn/controllers/{controller:a}"
    Then the answer has no "bgp-mode"
    And the answer has no "route-map-in"
    And the answer has "peer-group-name" = "{controller:a}"
    When I call DELETE "/cluster/sdn/route-maps/entries/{route-map:a}/entry/10"
    Then the answer is null

  @pve9.2
  Scenario: A controller's route maps exist and its options fit its type
    When I create SDN controller "{controller:a}" of type "evpn"
      | asn             | 65000          |
      | peers           | 198.18.81.1    |
      | peer-group-name | {controller:a} |
      | route-map-out   | {route-map:x}  |
    Then PVE answers 500 with a message matching "create sdn controller object failed: route map {route-map:x} does not exist!.*"
    When I create SDN controller "{controller:b}" of type "bgp"
      | asn   | 65000       |
      | node  | {node}      |
      | peers | 198.18.81.9 |
      | nodes | {node}      |
    Then PVE answers 500 "unexpected property 'nodes'"
    When I create SDN controller "{controller:b}" of type "bgp"
      | asn             | 65000          |
      | node            | {node}         |
      | peers           | 198.18.81.9    |
      | peer-group-name | {controller:b} |
    Then PVE answers 500 "unexpected property 'peer-group-name'"
    When I create SDN controller "{controller:b}" of type "evpn"
      | asn             | 65000          |
      | peer-group-name | {controller:b} |
    Then PVE answers 500 with a message matching "create sdn controller object failed: must have exactly one of peers / fabric defined.*"

  @pve9.2
  Scenario: Evpn controllers on a node share its ASN, each with a peer group of its own
    Given SDN controller "{controller:a}" of type "evpn" exists
      | asn             | 65000          |
      | peers           | 198.18.82.1    |
      | peer-group-name | {controller:a} |
    When I create SDN controller "{controller:b}" of type "evpn"
      | asn             | 65000          |
      | peers           | 198.18.82.2    |
      | peer-group-name | {controller:a} |
    Then PVE answers 500 with a message matching "create sdn controller object failed: cannot have two controllers with same peer-group-name configured \({controller:a}\).*"
    When I create SDN controller "{controller:b}" of type "evpn"
      | asn             | 65001          |
      | peers           | 198.18.82.2    |
      | peer-group-name | {controller:b} |
    Then PVE answers 500 with a message matching "create sdn controller object failed: all EVPN controllers on a node must have the same ASN configured.*"
    When I create SDN controller "{controller:b}" of type "evpn"
      | asn             | 65000          |
      | peers           | 198.18.82.2    |
      | peer-group-name | {controller:b} |
      | bgp-mode        | external       |
    Then the answer is null
    When I call GET "/cluster/sdn/controllers"
      | type | evpn |
    Then the answer lists "controller" = "{controller:a}"
    And the answer lists "controller" = "{controller:b}"

  @pve9.2
  Scenario: An evpn zone names secondary evpn controllers, which then stay
    Given SDN controller "{controller:a}" of type "evpn" exists
      | asn             | 65000          |
      | peers           | 198.18.83.1    |
      | peer-group-name | {controller:a} |
    And SDN controller "{controller:b}" of type "evpn" exists
      | asn             | 65000          |
      | peers           | 198.18.83.2    |
      | peer-group-name | {controller:b} |
    When I create SDN zone "{zone:e}" of type "evpn"
      | controller            | {controller:a} |
      | vrf-vxlan             | 4000083        |
      | secondary-controllers | {controller:x} |
    Then PVE answers 500 with a message matching "create sdn zone object failed: controller {controller:x} don't exist.*"
    When I create SDN zone "{zone:e}" of type "evpn"
      | controller            | {controller:a} |
      | vrf-vxlan             | 4000083        |
      | secondary-controllers | {controller:b} |
    Then the answer is null
    When I call GET "/cluster/sdn/zones/{zone:e}"
    Then the answer has "secondary-controllers/0" = "{controller:b}"
    When I call GET "/cluster/sdn/zones/{zone:e}"
      | pending | 1 |
    Then the answer has "pending/secondary-controllers/0" = "{controller:b}"
    When I call DELETE "/cluster/sdn/controllers/{controller:b}"
    Then PVE answers 500 with a message matching "delete sdn controller object failed: controller {controller:b} is used by {zone:e}.*"
    When I call PUT "/cluster/sdn/zones/{zone:e}"
      | delete | secondary-controllers |
    Then the answer is null
    When I call DELETE "/cluster/sdn/controllers/{controller:b}"
    Then the answer is null

  @pve8.4 @pve9.1
  Scenario: Before 9.2 controllers and zones know none of these options
    When I create SDN controller "{controller:a}" of type "evpn"
      | asn             | 65000          |
      | peers           | 198.18.84.1    |
      | nodes           | {node}         |
      | peer-group-name | {controller:a} |
      | bgp-mode        | internal       |
      | route-map-in    | {route-map:a}  |
      | route-map-out   | {route-map:a}  |
    Then parameter "nodes" is rejected with "property is not defined in schema and the schema does not allow additional properties"
    And parameter "peer-group-name" is rejected with "property is not defined in schema and the schema does not allow additional properties"
    And parameter "bgp-mode" is rejected with "property is not defined in schema and the schema does not allow additional properties"
    And parameter "route-map-in" is rejected with "property is not defined in schema and the schema does not allow additional properties"
    And parameter "route-map-out" is rejected with "property is not defined in schema and the schema does not allow additional properties"
    When I create SDN zone "{zone:e}" of type "evpn"
      | controller            | {controller:a} |
      | vrf-vxlan             | 4000084        |
      | secondary-controllers | {controller:a} |
    Then parameter "secondary-controllers" is rejected with "property is not defined in schema and the schema does not allow additional properties"
