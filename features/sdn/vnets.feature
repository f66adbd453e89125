@sdn
Feature: SDN VNets and subnets
  A VNet belongs to a zone, whose type says which tags it may carry. A
  subnet of a VNet is named after the zone and its CIDR, keeps its
  gateway inside it, and holds its VNet in place.

  Scenario: VNets carry the tags their zone's type allows
    Given SDN zone "{zone:s}" of type "simple" exists
    And SDN zone "{zone:v}" of type "vlan" exists
      | bridge | {bridge} |
    When I create VNet "{vnet:a}" in zone "{zone:s}"
      | tag | 5 |
    Then PVE answers 500 with a message matching "^create sdn vnet object failed: 400 Parameter verification failed\..*tag: vlan tag is not allowed on simple zone"
    When I create VNet "{vnet:a}" in zone "{zone:s}"
      | alias | web tier |
    Then the answer is null
    When I call GET "/cluster/sdn/vnets/{vnet:a}"
    Then the answer has "zone" = "{zone:s}"
    And the answer has "alias" = "web tier"
    And the answer has "digest"
    When I call GET "/cluster/sdn/vnets"
      | pending | 1 |
    Then the item with "vnet" = "{vnet:a}" has "state" = "new"
    When I create VNet "{vnet:b}" in zone "{zone:v}"
    Then PVE answers 500 with a message matching "tag: missing vlan tag"
    When I create VNet "{vnet:b}" in zone "{zone:v}"
      | tag | 100 |
    Then the answer is null
    When I create VNet "{vnet:c}" in zone "{zone:v}"
      | tag | 100 |
    Then PVE answers 500 with a message matching "tag: tag 100 already exist in vnet {vnet:b}"
    When I create VNet "{vnet:c}" in zone "{zone:v}"
      | tag | 5000 |
    Then PVE answers 500 with a message matching "tag: vlan tag max value is 4096"
    When I call PUT "/cluster/sdn/vnets/{vnet:b}"
      | tag | 101 |
    Then the answer is null
    When I call GET "/cluster/sdn/vnets/{vnet:b}"
    Then the answer has "tag" = "101"
    When I call DELETE "/cluster/sdn/zones/{zone:v}"
    Then PVE answers 500 with a message matching "^delete sdn zone object failed: zone {zone:v} is used by vnet {vnet:b}"
    When I call GET "/cluster/sdn/vnets/{vnet:x}"
    Then PVE answers 500 "sdn vnet '{vnet:x}' does not exist"

  Scenario: Subnets are named after their zone and keep their gateway inside
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
    When I create subnet "10.99.1.0/24" on VNet "{vnet:a}"
      | gateway | 10.99.2.1 |
    Then PVE answers 500 with a message matching "gateway: 10.99.2.1 is not in subnet 10.99.1.0/24"
    When I create subnet "10.99.1.0/24" on VNet "{vnet:a}"
      | gateway | 10.99.1.1 |
      | snat    | 1         |
    Then the answer is null
    When I call GET "/cluster/sdn/vnets/{vnet:a}/subnets/{zone:s}-10.99.1.0-24"
    Then the answer has "cidr" = "10.99.1.0/24"
    And the answer has "gateway" = "10.99.1.1"
    And the answer has "zone" = "{zone:s}"
    And the answer has "mask" = "24"
    When I call GET "/cluster/sdn/vnets/{vnet:a}/subnets"
    Then the answer lists "subnet" = "{zone:s}-10.99.1.0-24"
    When I create subnet "10.99.1.0/24" on VNet "{vnet:a}"
    Then PVE answers 500 "create sdn subnet object failed: sdn subnet object ID '{zone:s}-10.99.1.0-24' already defined"
    When I call DELETE "/cluster/sdn/vnets/{vnet:a}"
    Then PVE answers 500 with a message matching "vnet: Can't delete vnet if subnets exists"
    When I call DELETE "/cluster/sdn/vnets/{vnet:a}/subnets/{zone:s}-10.99.1.0-24"
    Then the answer is null
    When I call DELETE "/cluster/sdn/vnets/{vnet:a}"
    Then the answer is null
