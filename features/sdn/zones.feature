@sdn
Feature: SDN zones
  Zones, VNets and subnets are written to the pending SDN configuration
  (sdn/zones.cfg and its siblings): reads show it as written (with the
  file's digest), as running (what was last applied) or as pending (the
  running configuration with each object's state and the values applying
  would set). Each zone type demands its own options.

  Scenario: A new zone is pending until the configuration is applied
    When I create SDN zone "{zone:a}" of type "simple"
      | mtu | 1450 |
    Then the answer is null
    When I call GET "/cluster/sdn/zones/{zone:a}"
    Then the answer has "type" = "simple"
    And the answer has "mtu" = "1450"
    And the answer has "digest"
    When I call GET "/cluster/sdn/zones/{zone:a}"
      | pending | 1 |
    Then the answer has "state" = "new"
    And the answer has "pending"
    And the answer has no "digest"
    When I call GET "/cluster/sdn/zones"
      | type | simple |
    Then the item with "zone" = "{zone:a}" has "mtu" = "1450"
    When I call GET "/cluster/sdn/zones"
      | running | 1 |
    Then the answer does not list "zone" = "{zone:a}"
    When I create SDN zone "{zone:a}" of type "simple"
    Then PVE answers 500 "create sdn zone object failed: sdn zone object ID '{zone:a}' already defined"
    When I call PUT "/cluster/sdn/zones/{zone:a}"
      | mtu    | 1400                                     |
      | digest | 0000000000000000000000000000000000000000 |
    Then PVE answers 500 "update sdn zone object failed: detected modified configuration - file changed by other user? Try again."
    When I call PUT "/cluster/sdn/zones/{zone:a}"
      | mtu | 1400 |
    Then the answer is null
    When I call GET "/cluster/sdn/zones/{zone:a}"
    Then the answer has "mtu" = "1400"
    When I call DELETE "/cluster/sdn/zones/{zone:a}"
    Then the answer is null
    When I call GET "/cluster/sdn/zones/{zone:a}"
    Then PVE answers 500 "sdn '{zone:a}' does not exist"

  Scenario: Each zone type demands its options
    When I create SDN zone "{zone:v}" of type "vlan"
    Then PVE answers 500 "missing value for required option 'bridge'"
    When I create SDN zone "{zone:q}" of type "qinq"
      | bridge | {bridge} |
    Then PVE answers 500 "missing value for required option 'tag'"
    When I create SDN zone "{zone:s}" of type "simple"
      | bridge | {bridge} |
    Then PVE answers 500 "unexpected property 'bridge'"
    When I create SDN zone "{zone:e}" of type "evpn"
      | vrf-vxlan | 10000 |
    Then PVE answers 500 "missing value for required option 'controller'"
    When I create SDN zone "{zone:s}" of type "simple"
      | ipam | {zone:nope} |
    Then PVE answers 500 with a message matching "^create sdn zone object failed: 400 Parameter verification failed\..*ipam: {zone:nope} not existing"
    When I create SDN zone "{zone:v}" of type "vlan"
      | bridge | {bridge} |
    Then the answer is null
    When I call GET "/cluster/sdn/zones/{zone:v}"
    Then the answer has "bridge" = "{bridge}"
