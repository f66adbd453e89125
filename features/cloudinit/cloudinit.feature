@vm @cloudinit
Feature: Cloud-init
  PVE renders the cloud-init drive from the VM's config: user data,
  network config and meta data (its instance ID a hash of the other
  two). A running VM's drive keeps what it was generated from; the
  changes it does not hold yet show as pending until the drive is
  regenerated.

  Background:
    Given VM "{vm1}" was created with:
      | name         | web                                                |
      | memory       | 128                                                |
      | ide2         | {storage}:cloudinit                                |
      | net0         | virtio=BC:24:11:AA:BB:CC,bridge={bridge}           |
      | ipconfig0    | ip=10.0.0.5/24,gw=10.0.0.1                         |
      | ciuser       | admin                                              |
      | cipassword   | secret                                             |
      | searchdomain | example.com                                        |
      | nameserver   | 1.1.1.1                                            |

  Scenario: The user, network and meta data PVE generates
    When I dump the cloud-init "user" data of VM "{vm1}"
    Then the text answer contains "#cloud-config\nhostname: web\nmanage_etc_hosts: true\nfqdn: web.example.com\nuser: admin\npassword: secret\n"
    And the text answer contains "package_upgrade: true\n"
    When I dump the cloud-init "network" data of VM "{vm1}"
    Then the text answer contains "version: 1\nconfig:\n    - type: physical\n      name: eth0\n      mac_address: 'bc:24:11:aa:bb:cc'\n"
    And the text answer contains "        address: '10.0.0.5'\n        netmask: '255.255.255.0'\n        gateway: '10.0.0.1'\n"
    And the text answer contains "    - type: nameserver\n      address:\n      - '1.1.1.1'\n      search:\n      - 'example.com'\n"
    When I dump the cloud-init "meta" data of VM "{vm1}"
    Then the text answer matches "instance-id: [0-9a-f]{40}\n"
    When I dump the cloud-init "vendor" data of VM "{vm1}"
    Then parameter "type" is rejected with "value 'vendor' does not have a value in the enumeration 'user, network, meta'"

  Scenario: A stopped VM has nothing pending: its drive is generated at start
    When I read the cloud-init changes of VM "{vm1}"
    Then the item with "key" = "ciuser" has "value" = "admin"
    And the item with "key" = "cipassword" has "value" = "**********"
    When I update VM "{vm1}" with:
      | ciuser | ops |
    And I read the cloud-init changes of VM "{vm1}"
    Then the item with "key" = "ciuser" has "value" = "ops"
    And the item with "key" = "ciuser" has no "pending"

  Scenario: A running VM's changes are pending until the drive is regenerated
    Given VM "{vm1}" is running
    When I update VM "{vm1}" with:
      | ciuser     | ops          |
      | nameserver | 9.9.9.9      |
      | delete     | searchdomain |
    And I read the cloud-init changes of VM "{vm1}"
    Then the item with "key" = "ciuser" has "value" = "admin"
    And the item with "key" = "ciuser" has "pending" = "ops"
    And the item with "key" = "nameserver" has "pending" = "9.9.9.9"
    And the item with "key" = "searchdomain" has "delete" = "1"
    When I read the config of VM "{vm1}"
    Then the answer has "ciuser" = "ops"
    When I regenerate the cloud-init drive of VM "{vm1}"
    Then the answer is null
    When I read the cloud-init changes of VM "{vm1}"
    Then the item with "key" = "ciuser" has "value" = "ops"
    And the item with "key" = "ciuser" has no "pending"
    And the item with "key" = "nameserver" has no "pending"
    And the answer does not list "key" = "searchdomain"
