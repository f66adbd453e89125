@vm
Feature: Config and pending changes
  update_vm (PUT, synchronous) and update_vm_async (POST, a qmconfig
  task) write every change to [PENDING] first: a stopped VM applies it at
  once, a running one hot-plugs what it can and keeps the rest pending.

  Scenario: A stopped VM applies changes at once, typed as PVE types them
    Given VM "{vm1}" was created
    When I update VM "{vm1}" with:
      | cores       | 2            |
      | onboot      | 1            |
      | description | web frontend |
    Then the answer is null
    When I read the config of VM "{vm1}"
    Then the answer has "cores" = "2"
    And the answer has "onboot" = "1"
    And the answer has "description" = "web frontend"
    When I read the pending changes of VM "{vm1}"
    Then the item with "key" = "cores" has "value" = "2"
    And the item with "key" = "cores" has no "pending"
    And the answer lists "key" = "digest"

  Scenario: Options are kept as given, a NIC is written PVE's way
    Given VM "{vm1}" was created
    When I update VM "{vm1}" with:
      | agent     | enabled=1,fstrim_cloned_disks=1  |
      | ipconfig0 | ip=10.2.16.80/21,gw=10.2.16.1    |
      | net1      | bridge={bridge},model=virtio     |
    Then the answer is null
    When I read the config of VM "{vm1}"
    Then the answer has "agent" = "enabled=1,fstrim_cloned_disks=1"
    And the answer has "ipconfig0" = "ip=10.2.16.80/21,gw=10.2.16.1"
    And the answer has "net1" matching "virtio=[0-9A-F:]{17},bridge={bridge}"

  Scenario: Deleting a disk leaves it unused, deleting the unused volume frees it
    Given VM "{vm1}" was created
    When I update VM "{vm1}" with:
      | delete | scsi0 |
    And I read the config of VM "{vm1}"
    Then the answer has no "scsi0"
    And the answer has "unused0" matching "{storage}:.*vm-{vm1}-disk-0.*"
    When I update VM "{vm1}" with:
      | delete | unused0 |
    And I read the config of VM "{vm1}"
    Then the answer has no "unused0"

  Scenario: An update in the background is a qmconfig task that logs what it changes
    Given VM "{vm1}" was created
    When I update VM "{vm1}" in the background with:
      | cores  | 2   |
      | memory | 256 |
    Then the task ID names node "{node}", type "qmconfig", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log contains "update VM {vm1}: -cores 2 -memory 256"
    When I read the config of VM "{vm1}"
    Then the answer has "memory" = "256"

  Scenario: Refused updates
    Given VM "{vm1}" was created
    When I update VM "{vm1}" with:
      | delete | bogus |
    Then parameter "delete" is rejected with "unknown option 'bogus'"
    When I update VM "{vm1}" with:
      | revert | nothing |
    Then parameter "revert" is rejected with "unknown option 'nothing'"
    When I update VM "{vm1}" with:
      | cores  | 2     |
      | delete | cores |
    Then parameter "delete" is rejected with "you can't use '-cores' and -delete cores' at the same time"
    When I update VM "{vm9}" with:
      | cores | 2 |
    Then PVE answers 500 "Configuration file 'nodes/{node}/qemu-server/{vm9}.conf' does not exist"

  Scenario: A running VM keeps cold changes pending until it restarts
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I update VM "{vm1}" with:
      | cores | 2        |
      | name  | renamed  |
    And I read the config of VM "{vm1}"
    Then the answer has "cores" = "2"
    And the answer has "name" = "renamed"
    When I read the config of VM "{vm1}"
      | current | 1 |
    Then the answer has "cores" = "1"
    And the answer has "name" = "renamed"
    When I read the pending changes of VM "{vm1}"
    Then the item with "key" = "cores" has "value" = "1"
    And the item with "key" = "cores" has "pending" = "2"
    And the item with "key" = "name" has no "pending"
    When I read the status of VM "{vm1}"
    Then the answer has "cpus" = "1"
    When I stop VM "{vm1}"
    Then the task ends with "OK"
    When I start VM "{vm1}"
    Then the task ends with "OK"
    When I read the pending changes of VM "{vm1}"
    Then the item with "key" = "cores" has no "pending"
    When I read the status of VM "{vm1}"
    Then the answer has "cpus" = "2"

  Scenario: A pending removal is marked and can be reverted
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I update VM "{vm1}" with:
      | delete | cores |
    And I read the pending changes of VM "{vm1}"
    Then the item with "key" = "cores" has "delete" = "1"
    When I update VM "{vm1}" with:
      | revert | cores |
    And I read the pending changes of VM "{vm1}"
    Then the item with "key" = "cores" has no "delete"
    And the item with "key" = "cores" has "value" = "1"
