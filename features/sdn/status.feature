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

  @destructive @serial @pve9
  Scenario: A zone's bridges carry the running guests' ports
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
      | vlanaware | 1 |
    And VNet "{vnet:b}" in zone "{zone:s}" exists
    When I call GET "/nodes/{node}/sdn/zones/{zone:s}/bridges"
    Then parameter "zone" is rejected with "zone does not exist"
    When I apply the SDN configuration
    Then the task ends with "OK"
    Given VM "{vm1}" was created with:
      | memory | 128                                |
      | net0   | virtio,bridge={vnet:a},tag=20      |
      | net1   | virtio,bridge={vnet:a},firewall=1  |
      | net2   | virtio,bridge={vnet:b}             |
    When I start VM "{vm1}"
    Then the task succeeds
    When I call GET "/nodes/{node}/sdn/zones/{zone:s}/bridges"
    Then the answer is a list of 2 items
    And the item with "name" = "{vnet:a}" has "vlan_filtering" = "1"
    And the item with "name" = "{vnet:a}" has "ports/0/name" = "tap{vm1}i0"
    And the item with "name" = "{vnet:a}" has "ports/0/primary_vlan" = "20"
    And the item with "name" = "{vnet:a}" has "ports/0/index" = "net0"
    And the item with "name" = "{vnet:a}" has "ports/1/name" = "fwpr{vm1}p1"
    And the item with "name" = "{vnet:a}" has "ports/1/primary_vlan" = "1"
    And the item with "name" = "{vnet:a}" has "ports/1/vlans/0" = "2-4094"
    And the item with "name" = "{vnet:b}" has "vlan_filtering" = "0"
    And the item with "name" = "{vnet:b}" has "ports/0/name" = "tap{vm1}i2"
    And the item with "name" = "{vnet:b}" has no "ports/0/vlans"
    When I call GET "/nodes/{node}/sdn/zones/localnetwork/bridges"
    Then the answer lists "name" = "{bridge}"

  @pve9
  Scenario: The EVPN views need a running EVPN zone
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
    When I call GET "/nodes/{node}/sdn/zones/{zone:s}/ip-vrf"
    Then parameter "zone" is rejected with "zone does not exist"
    When I call GET "/nodes/{node}/sdn/vnets/{vnet:a}/mac-vrf"
    Then parameter "vnet" is rejected with "vnet does not exist"
