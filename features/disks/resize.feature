@vm @disks
Feature: Growing a VM's disks
  A resize is a task: "+N" grows a disk by N, a plain size sets it; the
  drive's size= follows. Refusals, shrinking included, end the task
  rather than the request.

  Scenario: Grow a disk by an amount and to a size
    Given VM "{vm1}" was created with:
      | memory | 128              |
      | scsi0  | {storage}:1      |
      | ide2   | none,media=cdrom |
    When I resize disk "scsi0" of VM "{vm1}" to "+1G"
    Then the task ID names node "{node}", type "resize", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "scsi0" matching "{storage}:.*vm-{vm1}-disk-0.*,size=2G"
    When I resize disk "scsi0" of VM "{vm1}" to "3G"
    Then the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "scsi0" matching "{storage}:.*vm-{vm1}-disk-0.*,size=3G"
    When I resize disk "scsi0" of VM "{vm1}" to "+512M"
    Then the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "scsi0" matching "{storage}:.*vm-{vm1}-disk-0.*,size=3584M"

  Scenario: A shrink, a missing disk, a CD-ROM and a stale digest fail the task
    Given VM "{vm1}" was created with:
      | memory | 128              |
      | scsi0  | {storage}:2      |
      | ide2   | none,media=cdrom |
    When I resize disk "scsi0" of VM "{vm1}" to "1G"
    Then the task ends with "shrinking disks is not supported"
    When I resize disk "scsi9" of VM "{vm1}" to "+1G"
    Then the task ends with "disk 'scsi9' does not exist"
    When I resize disk "ide2" of VM "{vm1}" to "+1G"
    Then the task ends with "you can't resize a cdrom"
    When I resize disk "scsi0" of VM "{vm1}" to "+1G"
      | digest | 0000000000000000000000000000000000000000 |
    Then the task ends with "checksum mismatch (file change by other user?)"
    When I read the config of VM "{vm1}"
    Then the answer has "scsi0" matching "{storage}:.*,size=2G"
    When I resize disk "scsi0" of VM "{vm1}" to "-1G"
    Then parameter "size" is rejected with "value does not match the regex pattern"
