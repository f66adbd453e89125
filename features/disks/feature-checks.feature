@vm @disks
Feature: Storage features of a VM's disks
  GET .../feature answers whether every disk's storage can snapshot,
  clone or copy it (hasFeature), and the nodes that see all its volumes.

  Scenario: A VM on the test storage can be snapshotted and copied
    Given VM "{vm1}" was created with:
      | memory | 128              |
      | scsi0  | {storage}:1      |
      | ide2   | none,media=cdrom |
    When I ask whether VM "{vm1}" supports "snapshot"
    Then the answer has "hasFeature" = "1"
    And the answer has "nodes/0" = "{node}"
    When I ask whether VM "{vm1}" supports "copy"
    Then the answer has "hasFeature" = "1"
    When I ask whether VM "{vm1}" supports "clone"
    Then the answer has "hasFeature" = "0"

  Scenario: Features of a snapshot, and refused questions
    Given VM "{vm1}" was created
    When I take snapshot "s1" of VM "{vm1}"
    Then the task ends with "OK"
    When I ask whether VM "{vm1}" supports "copy"
      | snapname | s1 |
    Then the answer has "hasFeature" = "1"
    When I ask whether VM "{vm1}" supports "copy"
      | snapname | nope |
    Then PVE answers 500 "snapshot 'nope' does not exist"
    When I ask whether VM "{vm1}" supports "backup"
    Then parameter "feature" is rejected with "value 'backup' does not have a value in the enumeration 'snapshot, clone, copy'"
    When I ask whether VM "{vm2}" supports "copy"
    Then PVE answers 500 "Configuration file 'nodes/{node}/qemu-server/{vm2}.conf' does not exist"
