@vm @disks
Feature: Moving a VM's disks between storages
  A move is a qmmove task: the disk is copied to the target storage (in
  the format asked for), the source stays as an unused disk unless
  "delete" frees it.

  Background:
    Given I define storage "{storage:scratch}" with:
      | type    | dir               |
      | path    | /var/tmp/{prefix} |
      | content | images            |
    And VM "{vm1}" was created with:
      | memory | 128              |
      | scsi0  | {storage}:1      |
      | ide2   | none,media=cdrom |

  Scenario: Move a disk away and back, freeing the copy
    When I move disk "scsi0" of VM "{vm1}" to storage "{storage:scratch}"
      | format | qcow2 |
    Then the task ID names node "{node}", type "qmmove", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "scsi0" = "{storage:scratch}:{vm1}/vm-{vm1}-disk-0.qcow2,size=1G"
    And the answer has "unused0" matching "{storage}:.*vm-{vm1}-disk-0.*"
    When I list the content of storage "{storage:scratch}"
    Then the item with "volid" = "{storage:scratch}:{vm1}/vm-{vm1}-disk-0.qcow2" has "format" = "qcow2"
    When I move disk "scsi0" of VM "{vm1}" to storage "{storage}"
      | delete | 1 |
    Then the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "scsi0" matching "{storage}:.*vm-{vm1}-disk-1.*,size=1G"
    And the answer has "unused0" matching "{storage}:.*vm-{vm1}-disk-0.*"
    And the answer has no "unused1"
    When I list the content of storage "{storage:scratch}"
    Then the answer is a list of 0 items

  Scenario: Moves PVE refuses before starting the task
    When I move disk "scsi0" of VM "{vm1}" to storage "{storage}"
    Then PVE answers 500 "you can't move to the same storage with same format"
    When I move disk "scsi5" of VM "{vm1}" to storage "{storage:scratch}"
    Then PVE answers 500 "disk 'scsi5' does not exist"
    When I move disk "ide2" of VM "{vm1}" to storage "{storage:scratch}"
    Then PVE answers 500 "you can't move a cdrom"
    When I move disk "scsi0" of VM "{vm1}" to storage "nosuchstore"
    Then PVE answers 500 "storage 'nosuchstore' does not exist"
    When I move disk "scsi0" of VM "{vm1}" with:
      | format | raw |
    Then parameter "storage" is rejected with "both 'storage' and 'target-vmid' missing, either needs to be set"
