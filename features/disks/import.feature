@vm @disks
Feature: Importing a disk when creating a VM
  "STORAGE:0,import-from=VOLUME" copies an existing volume into the new
  VM's disk, which takes the source's size.

  Scenario: A new VM's disk imported from another VM's volume
    Given VM "{vm1}" was created with:
      | memory | 128         |
      | scsi0  | {storage}:2 |
    When I read the config of VM "{vm1}"
    And I remember the volume of "scsi0" as "source"
    And I create VM "{vm2}" with:
      | memory | 128                                           |
      | scsi0  | {storage}:0,import-from={var:source},discard=on |
    Then the task ends with "OK"
    When I read the config of VM "{vm2}"
    Then the answer has "scsi0" matching "{storage}:.*vm-{vm2}-disk-0.*,discard=on,size=2G"

  Scenario: An import needs the special syntax and an existing source
    Given VM "{vm1}" was created with:
      | memory | 128         |
      | scsi0  | {storage}:2 |
    When I read the config of VM "{vm1}"
    And I remember the volume of "scsi0" as "source"
    And I create VM "{vm2}" with:
      | scsi0 | {storage}:4,import-from={var:source} |
    Then parameter "scsi0" is rejected with "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>"
    When I create VM "{vm3}" with:
      | scsi0 | {storage}:0,import-from={storage}:vm-{vm9}-disk-0 |
    Then the task ends with an error matching ".*cannot import from '{storage}:vm-{vm9}-disk-0' - could not get size of {storage}:vm-{vm9}-disk-0.*"
