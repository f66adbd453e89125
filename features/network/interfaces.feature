@network
Feature: Node network
  Changes to a node's interfaces are written as pending: the list then
  shows the new configuration and the diff in "changes"; applying
  reloads the network (a srvreload task), reverting drops them.

  Scenario: The node lists its interfaces
    When I list the network interfaces of node "{node}"
    Then the answer lists "iface" = "{bridge}"
    And the item with "iface" = "{bridge}" has "type" = "bridge"
    And there are no pending network changes
    When I list the network interfaces of node "{node}"
      | type | bridge |
    Then every item has "type" = "bridge"
    When I read network interface "{bridge}" of node "{node}"
    Then the answer has "type" = "bridge"
    When I read network interface "nosuch0" of node "{node}"
    Then parameter "iface" is rejected with "interface does not exist"
    When I list the network interfaces of node "{node}"
      | type | wlan |
    Then PVE answers 400 "Parameter verification failed."

  @destructive
  Scenario: A new bridge is pending until the changes are reverted
    When I create network interface "vmbr97" on node "{node}" with:
      | type      | bridge           |
      | autostart | 1                |
      | comments  | conformance test |
    Then the answer is null
    When I list the network interfaces of node "{node}"
    Then the answer lists "iface" = "vmbr97"
    And the pending changes add the line "auto vmbr97"
    When I update network interface "vmbr97" of node "{node}" with:
      | type              | bridge |
      | bridge_vlan_aware | 1      |
    Then the answer is null
    When I read network interface "vmbr97" of node "{node}"
    Then the answer has "bridge_vlan_aware" = "1"
    When I delete network interface "vmbr97" of node "{node}"
    Then the answer is null
    When I revert the pending network changes of node "{node}"
    Then the answer is null
    When I list the network interfaces of node "{node}"
    Then the answer does not list "iface" = "vmbr97"
    And there are no pending network changes

  @destructive
  Scenario: Refused interface definitions
    When I create network interface "{bridge}" on node "{node}" with:
      | type | bridge |
    Then parameter "iface" is rejected with "interface already exists"
    When I create network interface "x" on node "{node}" with:
      | type | bridge |
    Then parameter "iface" is rejected with "invalid format - invalid network interface name 'x'"
    When I create network interface "vmbr97" on node "{node}" with:
      | type    | bridge      |
      | address | 10.0.0.3      |
      | netmask | 255.255.255.0 |
      | cidr    | 10.0.0.2/24 |
    Then parameter "address" is rejected with "address conflicts with cidr"
    When I update network interface "nosuch0" of node "{node}" with:
      | type | eth |
    Then parameter "iface" is rejected with "interface does not exist"
    When I revert the pending network changes of node "{node}"
    Then the answer is null

  @fake-only
  Scenario: Applied changes take effect, and a VM may then use the new bridge
    Given VM "{vm1}" was created with:
      | memory | 128                  |
      | net0   | virtio,bridge=vmbr97 |
    When I start VM "{vm1}"
    Then the task ends with "bridge 'vmbr97' does not exist"
    When I create network interface "vmbr97" on node "{node}" with:
      | type      | bridge |
      | autostart | 1      |
    And I apply the pending network changes of node "{node}"
    Then the task ID names node "{node}", type "srvreload", ID "networking" and user "{me}"
    And the task ends with "OK"
    When I list the network interfaces of node "{node}"
    Then the item with "iface" = "vmbr97" has "active" = "1"
    And there are no pending network changes
    When I start VM "{vm1}"
    Then the task ends with "OK"
    When I create network interface "vmbr96" on node "{node}" with:
      | type         | bridge |
      | bridge_ports | eno9   |
    Then PVE answers 500 "bridge 'vmbr96' - unable to find bridge port 'eno9'"
    When I create network interface "vmbr96" on node "{node}" with:
      | type         | bridge |
      | bridge_ports | eno1   |
    Then parameter "bridge_ports" is rejected with "eno1 is already used on interface 'vmbr0'."
