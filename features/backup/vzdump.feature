@backup
Feature: Backups and restore
  vzdump writes a guest's backup into a storage's backup content as a
  vzdump task that logs as PVE's does and holds the guest's `backup`
  lock while it runs; the backup carries its notes, protection, guest
  type and owner. A VM comes back from a backup through create_vm with
  `archive` (a qmrestore task). The scenarios back up to a directory
  storage of their own.

  Background:
    Given I define storage "{storage:dumps}" with:
      | type    | dir                     |
      | path    | /var/tmp/{prefix}-dumps |
      | content | backup                  |

  Scenario: Back a VM up, read the backup and its config, restore it as a new VM
    Given VM "{vm1}" was created with:
      | name   | web-{vm1}              |
      | memory | 128                    |
      | scsi0  | {storage}:1            |
      | net0   | virtio,bridge={bridge} |
    When I back up VM "{vm1}" to storage "{storage:dumps}"
      | compress       | zstd    |
      | mode           | stop    |
      | notes-template | nightly |
    Then the task ID names node "{node}", type "vzdump", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log contains "INFO: Starting Backup of VM {vm1} (qemu)"
    And the log contains "INFO: status = stopped"
    And the log contains "INFO: backup mode: stop"
    And the log contains "INFO: VM Name: web-{vm1}"
    And the log contains "INFO: adding notes to backup"
    And the log contains "INFO: Backup job finished successfully"
    When I list the backups of VM "{vm1}" on storage "{storage:dumps}"
    Then the answer is a list of 1 item
    And every item has "content" = "backup"
    And every item has "subtype" = "qemu"
    And every item has "format" = "vma.zst"
    And every item has "notes" = "nightly"
    And every item has "vmid" = "{vm1}"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:dumps}" as "bk"
    And I extract the config of backup "{var:bk}"
    Then the answer contains "name: web-{vm1}"
    And the answer contains "#qmdump#map:scsi0:drive-scsi0:"
    When I restore "{var:bk}" as VM "{vm2}"
      | storage | {storage} |
    Then the task ID names node "{node}", type "qmrestore", ID "{vm2}" and user "{me}"
    And the task ends with "OK"
    When I read the config of VM "{vm2}"
    Then the answer has "name" = "web-{vm1}"
    And the answer has "memory" = "128"
    And the answer has "scsi0" matching "{storage}:.*"
    When I restore "{var:bk}" as VM "{vm2}"
    Then PVE answers 500 "unable to restore VM {vm2} - VM {vm2} already exists on node '{node}'"

  Scenario: A protected backup cannot be deleted until its protection is lifted
    Given VM "{vm1}" was created
    When I back up VM "{vm1}" to storage "{storage:dumps}"
      | protected | 1 |
    Then the task ends with "OK"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:dumps}" as "bk"
    And I read volume "{var:bk}" of storage "{storage:dumps}"
    Then the answer has "protected" = "1"
    When I delete volume "{var:bk}" of storage "{storage:dumps}"
    Then the task ends with an error matching "cannot remove protected volume .*"
    When I update volume "{var:bk}" of storage "{storage:dumps}" with:
      | protected | 0            |
      | notes     | kept by hand |
    Then the call succeeds
    When I read volume "{var:bk}" of storage "{storage:dumps}"
    Then the answer has "notes" = "kept by hand"
    When I delete volume "{var:bk}" of storage "{storage:dumps}"
    Then the task ends with "OK"

  Scenario: What vzdump and a restore refuse
    Given VM "{vm1}" was created
    When I call vzdump with:
      | vmid   | {vm1} |
      | stdout | 1     |
    Then parameter "stdout" is rejected with "option is only allowed on the command line interface."
    When I call vzdump with:
      | vmid | {vm1}       |
      | pool | {pool:none} |
    Then parameter "pool" is rejected with "option conflicts with option 'vmid'"
    When I call vzdump with:
      | storage | {storage:dumps} |
    Then parameter "vmid" is rejected with "property is missing"
    When I restore "{storage:dumps}:backup/vzdump-qemu-{vm1}-2020_01_01-00_00_00.vma.zst" as VM "{vm2}"
    Then PVE answers 500 "can't find file '{storage:dumps}:backup/vzdump-qemu-{vm1}-2020_01_01-00_00_00.vma.zst'"
    When I back up VM "{vm1}" to storage "{storage}"
    Then the task ends with an error matching ".*can't use storage '{storage}' for backups - wrong content type"

  @fake-only
  Scenario: The guest is locked while its backup runs
    Given vzdump tasks take 30 seconds
    And VM "{vm1}" was created
    When I start a backup of VM "{vm1}" to storage "{storage:dumps}"
    Then the task is still running
    When I read the config of VM "{vm1}"
    Then the answer has "lock" = "backup"
    When 30 seconds pass
    And I read the config of VM "{vm1}"
    Then the answer has no "lock"

  Scenario: A restore and a running clone at a bandwidth limit
    Given VM "{vm1}" was created with:
      | name   | limited-{vm1} |
      | memory | 128           |
      | scsi0  | {storage}:1   |
    When I back up VM "{vm1}" to storage "{storage:dumps}"
    Then the task ends with "OK"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:dumps}" as "bk"
    And I restore "{var:bk}" as VM "{vm2}"
      | storage | {storage} |
      | bwlimit | 10240     |
    Then the task ends with "OK"
    When I read the task log
    Then the log contains "applying read rate limit: 10240"
    And the log has a line matching "restore vma archive: cstream -t 10485760 -- .* \| vma extract -v -r .* - .*"
    And the log contains "rate limit for storage {storage}: 10240 KiB/s"
    Given VM "{vm1}" is running
    When I clone VM "{vm1}" to "{vm3}"
      | full    | 1     |
      | bwlimit | 20480 |
    Then the task ends with "OK"
    When I read the task log
    Then the log contains "drive mirror is starting for drive-scsi0 with bandwidth limit: 20480 KiB/s"
    And the log has a line matching "drive-scsi0: transferred .* of .* \(100.00%\) in .*, ready"
