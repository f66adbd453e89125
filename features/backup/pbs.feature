@backup @pbs
Feature: Backups on a Proxmox Backup Server
  A `pbs` storage reaches the Proxmox Backup Server it names: vzdump
  writes a guest's backup there as a snapshot `vm/<vmid>/<time>` or
  `ct/<vmid>/<time>` of the datastore, the storage's content lists the
  snapshots (`pbs-vm`, `pbs-ct`) with their notes, protection and
  verification, a guest comes back from one, and file-restore lists and
  downloads single files of a backup. The server is fake-pve's (a
  scenario's `pbs:`): an in-process fake-pve is told about it, and
  `ci/conformance-real` starts fake-pve with `ci/conformance-real.yaml`,
  which declares the same server; the file trees are fake-pve's.

  Background:
    Given a Proxmox Backup Server runs:
      | name       | pbs1      |
      | address    | 127.0.0.5 |
      | datastore  | store1    |
      | namespaces | dev       |
      | verify-new | 1         |
    And I define storage "{storage:pbs}" with:
      | type      | pbs       |
      | server    | 127.0.0.5 |
      | datastore | store1    |
      | username  | backup@pbs |
      | content   | backup    |

  Scenario: Back a VM up to the server, list it and restore it
    Given VM "{vm1}" was created with:
      | name   | web-{vm1}              |
      | memory | 128                    |
      | scsi0  | {storage}:1            |
      | net0   | virtio,bridge={bridge} |
    When I back up VM "{vm1}" to storage "{storage:pbs}"
      | notes-template | nightly |
    Then the task ends with "OK"
    When I read the task log
    Then the log has a line matching "INFO: creating Proxmox Backup Server archive 'vm/{vm1}/.*Z'"
    And the log contains "INFO: starting kvm to execute backup task"
    And the log contains "INFO: scsi0: dirty-bitmap status: created new"
    And the log contains "INFO: adding notes to backup"
    And the log contains "INFO: running 'proxmox-backup-client prune' for 'vm/{vm1}'"
    And the log contains "INFO: Backup job finished successfully"
    When I list the backups of VM "{vm1}" on storage "{storage:pbs}"
    Then the answer is a list of 1 item
    And every item has "format" = "pbs-vm"
    And every item has "subtype" = "qemu"
    And every item has "notes" = "nightly"
    And every item has "verification"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:pbs}" as "bk"
    And I read volume "{var:bk}" of storage "{storage:pbs}"
    Then the answer has "format" = "pbs-vm"
    And the answer has "path" matching "pbs://backup@pbs@127.0.0.5:store1/vm/{vm1}/.*"
    When I restore "{var:bk}" as VM "{vm2}"
      | storage | {storage} |
    Then the task ID names node "{node}", type "qmrestore", ID "{vm2}" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log has a line matching "restore proxmox backup image: /usr/bin/pbs-restore --repository backup@pbs@127.0.0.5:store1 vm/{vm1}/.*Z drive-scsi0.img.fidx .*"
    When I read the config of VM "{vm2}"
    Then the answer has "name" = "web-{vm1}"
    And the answer has "memory" = "128"

  Scenario: A protected snapshot stays until its protection is lifted
    Given VM "{vm1}" was created
    When I back up VM "{vm1}" to storage "{storage:pbs}"
      | protected | 1 |
    Then the task ends with "OK"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:pbs}" as "bk"
    And I read volume "{var:bk}" of storage "{storage:pbs}"
    Then the answer has "protected" = "true"
    When I delete volume "{var:bk}" of storage "{storage:pbs}"
    Then the task ends with an error matching "proxmox-backup-client failed: Error: cannot remove protected snapshot"
    When I update volume "{var:bk}" of storage "{storage:pbs}" with:
      | protected | 0            |
      | notes     | kept by hand |
    Then the call succeeds
    When I list the backups of VM "{vm1}" on storage "{storage:pbs}"
    Then every item has "notes" = "kept by hand"
    And no item has "protected"
    When I delete volume "{var:bk}" of storage "{storage:pbs}"
    Then the task ends with "OK"
    When I list the backups of VM "{vm1}" on storage "{storage:pbs}"
    Then the answer is a list of 0 items

  Scenario: Pruning a PBS storage prunes the guest's group
    Given VM "{vm1}" was created
    And VM "{vm1}" was backed up to storage "{storage:pbs}"
    When the clock moves on 2 seconds
    And I back up VM "{vm1}" to storage "{storage:pbs}"
    Then the task ends with "OK"
    When I remember the oldest backup of VM "{vm1}" on storage "{storage:pbs}" as "old"
    And I remember the newest backup of VM "{vm1}" on storage "{storage:pbs}" as "new"
    And I dry-run a prune of storage "{storage:pbs}"
      | prune-backups | keep-last=1 |
      | vmid          | {vm1}       |
    Then the answer is a list of 2 items
    And the item with "volid" = "{var:old}" has "mark" = "remove"
    And the item with "volid" = "{var:new}" has "mark" = "keep"
    And every item has "type" = "qemu"
    When I prune storage "{storage:pbs}"
      | prune-backups | keep-last=1 |
      | vmid          | {vm1}       |
    Then the task ID names node "{node}", type "prunebackups", ID "{vm1}@{storage:pbs}" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log contains "running 'proxmox-backup-client prune' for 'vm/{vm1}'"
    When I list the backups of VM "{vm1}" on storage "{storage:pbs}"
    Then the answer is a list of 1 item

  Scenario: Single files of a container's backup
    Given the OS template is available
    When I create container "{vm1}" with:
      | hostname | ct-{vm1}                          |
      | memory   | 256                               |
      | rootfs   | {storage}:1                       |
      | net0     | name=eth0,bridge={bridge},ip=dhcp |
    Then the task ends with "OK"
    When I back up container "{vm1}" to storage "{storage:pbs}"
    Then the task ends with "OK"
    When I read the task log
    Then the log has a line matching "INFO: creating Proxmox Backup Server archive 'ct/{vm1}/.*Z'"
    And the log has a line matching "INFO: run: .*/usr/bin/proxmox-backup-client backup --crypt-mode=none pct.conf:.* root.pxar:.*"
    And the log has a line matching "INFO: Upload directory '.*' to 'backup@pbs@127.0.0.5:8007:store1' as root.pxar.didx"
    When I remember the newest backup of container "{vm1}" on storage "{storage:pbs}" as "bk"
    And I list the files of backup "{var:bk}" on storage "{storage:pbs}" under "/"
    Then the answer is a list of 1 item
    And the item with "text" = "root.pxar.didx" has "type" = "d"
    And the entry "root.pxar.didx" has the path "/root.pxar.didx"
    When I list the files of backup "{var:bk}" on storage "{storage:pbs}" under "root.pxar.didx/etc"
    Then the item with "text" = "hostname" has "type" = "f"
    And the item with "text" = "hostname" has "leaf" = "1"
    And the entry "hostname" has the path "root.pxar.didx/etc/hostname"
    When I download "root.pxar.didx/etc/hostname" from backup "{var:bk}" on storage "{storage:pbs}"
    Then the answer contains "ct-{vm1}"
    When I download "root.pxar.didx/etc" from backup "{var:bk}" on storage "{storage:pbs}"
    Then the answer contains "PK"
    When I restore "{var:bk}" as container "{vm2}"
      | storage | {storage} |
    Then the task ID names node "{node}", type "vzrestore", ID "{vm2}" and user "{me}"
    And the task ends with "OK"
    When I read the config of container "{vm2}"
    Then the answer has "hostname" = "ct-{vm1}"

  Scenario: Single files of a VM's backup: its drive's partitions
    Given VM "{vm1}" was created with:
      | name  | files-{vm1} |
      | scsi0 | {storage}:1 |
    When I back up VM "{vm1}" to storage "{storage:pbs}"
    Then the task ends with "OK"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:pbs}" as "bk"
    And I list the files of backup "{var:bk}" on storage "{storage:pbs}" under "/"
    Then the item with "text" = "drive-scsi0.img.fidx" has "type" = "v"
    When I list the files of backup "{var:bk}" on storage "{storage:pbs}" under "drive-scsi0.img.fidx"
    Then the item with "text" = "part" has "type" = "v"
    When I list the files of backup "{var:bk}" on storage "{storage:pbs}" under "drive-scsi0.img.fidx/part"
    Then the item with "text" = "1" has "type" = "d"
    When I download "drive-scsi0.img.fidx/part/1/etc/hostname" from backup "{var:bk}" on storage "{storage:pbs}"
    Then the answer contains "files-{vm1}"

  Scenario: A storage that does not reach its server, and file-restore elsewhere
    When I define storage "{storage:gone}" with:
      | type      | pbs       |
      | server    | 127.0.0.9 |
      | datastore | store1    |
      | content   | backup    |
    Then PVE answers 500 "create storage failed: {storage:gone}: error fetching datastores - 500 Can't connect to 127.0.0.9:8007 (Connection refused)"
    When I read storage "{storage:gone}"
    Then PVE answers 500 "storage '{storage:gone}' does not exist"
    When I define storage "{storage:gone}" with:
      | type      | pbs       |
      | server    | 127.0.0.9 |
      | datastore | store1    |
      | content   | backup    |
      | disable   | 1         |
    Then the call succeeds
    When I update storage "{storage:gone}" with:
      | delete | disable |
    And I list the content of storage "{storage:gone}"
    Then PVE answers 500 "{storage:gone}: error fetching datastores - 500 Can't connect to 127.0.0.9:8007 (Connection refused)"
    When I read the status of storage "{storage:gone}" on node "{node}"
    Then the answer has "active" = "0"
    And the answer has "total" = "0"
    When I define storage "{storage:nostore}" with:
      | type      | pbs       |
      | server    | 127.0.0.5 |
      | datastore | nope      |
      | content   | backup    |
    Then PVE answers 500 "create storage failed: {storage:nostore}: Cannot find datastore 'nope', check permissions and existence!"
    When I list the files of backup "local:backup/vzdump-qemu-{vm1}-2026_01_01-00_00_00.vma.zst" on storage "local" under "/"
    Then parameter "storage" is rejected with "Only PBS storages supported for file-restore."

  Scenario: An encrypted storage's key, and a restore with another key
    When I define storage "{storage:sealed}" with:
      | type           | pbs        |
      | server         | 127.0.0.5  |
      | datastore      | store1     |
      | username       | backup@pbs |
      | content        | backup     |
      | encryption-key | autogen    |
    Then the call succeeds
    And the answer has "config"
    When I read the status of storage "{storage:sealed}" on node "{node}"
    Then the answer has "active" = "1"
    Given VM "{vm1}" was created with:
      | name   | sealed-{vm1} |
      | memory | 128          |
      | scsi0  | {storage}:1  |
    When I back up VM "{vm1}" to storage "{storage:sealed}"
    Then the task ends with "OK"
    When I read the task log
    Then the log contains "INFO: enabling encryption"
    When I list the backups of VM "{vm1}" on storage "{storage:sealed}"
    Then every item has "encrypted"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:sealed}" as "bk"
    And I update storage "{storage:sealed}" with:
      | encryption-key | autogen |
    Then the answer has "config"
    When I restore "{var:bk}" as VM "{vm2}"
      | storage | {storage} |
    Then the task ends with an error matching "command '/usr/bin/proxmox-backup-client restore --crypt-mode=encrypt .* index.json .*' failed: exit code 255"
    When I read the task log
    Then the log has a line matching "Error: wrong key - manifest's key .* does not match provided key .*"
    When I update storage "{storage:sealed}" with:
      | delete | encryption-key |
    And I restore "{var:bk}" as VM "{vm3}"
      | storage | {storage} |
    Then the task ends with an error matching "command '/usr/bin/proxmox-backup-client restore --crypt-mode=none .*' failed: exit code 255"
    When I read the task log
    Then the log has a line matching "Error: missing key - manifest was created with key .*"
