@sdn
Feature: A node's view of the applied SDN configuration
  /nodes/{node}/sdn/zones lists the zones the node runs with their
  status, and a zone's content its VNets: what the running configuration
  puts on the node, not what is pending. Applying reaches every pending
  change of the cluster: the scenario that applies is @destructive and
  runs alone.

  @destructive @serial
  Scenario: Applied zones and their VNets are available on the node
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
    When I call GET "/nodes/{node}/sdn/zones"
    Then the answer does not list "zone" = "{zone:s}"
    When I call GET "/nodes/{node}/sdn/zones/{zone:s}/content"
    Then the answer is a list of 0 items
    When I apply the SDN configuration
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/sdn/zones"
    Then the item with "zone" = "{zone:s}" has "status" = "available"
    When I call GET "/nodes/{node}/sdn/zones/{zone:s}/content"
    Then the answer is a list of 1 item
    And the item with "vnet" = "{vnet:a}" has "status" = "available"
    When I create VNet "{vnet:b}" in zone "{zone:s}"
    And I call GET "/nodes/{node}/sdn/zones/{zone:s}/content"
    Then the answer does not list "vnet" = "{vnet:b}"

  @pve9
  Scenario: A VNet's node view needs SDN.Audit on the VNet
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
    When I call GET "/nodes/{node}/sdn/vnets/{vnet:a}"
    Then the items' "subdir" are "mac-vrf"
    When I call GET "/nodes/{node}/sdn/vnets/{vnet:x}"
    Then PVE answers 500 "sdn vnet '{vnet:x}' does not exist"
