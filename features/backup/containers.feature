@backup @lxc
Feature: Container backups and restore
  vzdump backs a container up as a tar archive (`vzdump-lxc-<vmid>-...`)
  in a vzdump task that logs the mount points it includes and the mode
  it uses; create_vm of a container with `restore=1` and the backup as
  `ostemplate` brings it back (a vzrestore task) with the backed-up
  config and new volumes. The scenarios back up to a directory storage
  of their own.

  Background:
    Given the OS template is available
    And I define storage "{storage:ctdumps}" with:
      | type    | dir                       |
      | path    | /var/tmp/{prefix}-ctdumps |
      | content | backup                    |

  Scenario: Back a container up, read its config, restore it as a new container
    Given container "{vm1}" was created
    When I back up container "{vm1}" to storage "{storage:ctdumps}"
      | compress       | zstd    |
      | mode           | stop    |
      | notes-template | nightly |
    Then the task ID names node "{node}", type "vzdump", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log contains "INFO: Starting Backup of VM {vm1} (lxc)"
    And the log contains "INFO: status = stopped"
    And the log contains "INFO: backup mode: stop"
    And the log contains "INFO: including mount point rootfs ('/') in backup"
    And the log contains "INFO: adding notes to backup"
    And the log contains "INFO: Backup job finished successfully"
    When I list the backups of container "{vm1}" on storage "{storage:ctdumps}"
    Then the answer is a list of 1 item
    And every item has "content" = "backup"
    And every item has "subtype" = "lxc"
    And every item has "format" = "tar.zst"
    And every item has "notes" = "nightly"
    And every item has "vmid" = "{vm1}"
    When I remember the newest backup of container "{vm1}" on storage "{storage:ctdumps}" as "bk"
    And I extract the config of backup "{var:bk}"
    Then the answer contains "memory: 256"
    And the answer contains "unprivileged: 1"
    When I restore "{var:bk}" as container "{vm2}"
      | storage | {storage} |
    Then the task ID names node "{node}", type "vzrestore", ID "{vm2}" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log contains "recovering backed-up configuration from '{var:bk}'"
    And the log contains "merging backed-up and given configuration.."
    When I read the config of container "{vm2}"
    Then the answer has "memory" = "256"
    And the answer has "unprivileged" = "1"
    And the answer has "rootfs" matching "{storage}:.*{vm2}.*"
    When I restore "{var:bk}" as container "{vm2}"
      | storage | {storage} |
    Then PVE answers 500 "CT {vm2} already exists on node '{node}'"

  Scenario: What a container restore refuses
    Given container "{vm1}" was created
    And VM "{vm2}" was created
    And container "{vm1}" was backed up to storage "{storage:ctdumps}"
    And VM "{vm2}" was backed up to storage "{storage:ctdumps}"
    When I remember the newest backup of container "{vm1}" on storage "{storage:ctdumps}" as "bk"
    And I restore "{var:bk}" as container "{vm2}"
      | storage | {storage} |
      | force   | 1         |
    Then PVE answers 500 "VM {vm2} already exists on node '{node}'"
    Given container "{vm1}" was started
    When I restore "{var:bk}" as container "{vm1}"
      | storage | {storage} |
      | force   | 1         |
    Then PVE answers 500 "can't overwrite running container"
    When I restore "{var:ostemplate}" as container "{vm3}"
      | storage | {storage} |
    Then PVE answers 500 "unable to use volume {var:ostemplate} - content type needs to be 'backup'"
    When I restore "{storage:ctdumps}:backup/vzdump-lxc-{vm1}-2020_01_01-00_00_00.tar.zst" as container "{vm3}"
      | storage | {storage} |
    Then the task ends with an error matching "unable to restore CT {vm3} - can't find file '{storage:ctdumps}:backup/vzdump-lxc-{vm1}-2020_01_01-00_00_00.tar.zst'"
    When I remember the newest backup of VM "{vm2}" on storage "{storage:ctdumps}" as "vmbk"
    And I restore "{var:vmbk}" as container "{vm3}"
      | storage | {storage} |
    Then the task ends with an error matching "unable to restore CT {vm3} - .*archive contains no configuration file"
    When I call GET "/nodes/{node}/lxc/{vm3}"
    Then PVE answers 500 "Configuration file 'nodes/{node}/lxc/{vm3}.conf' does not exist"

  @fake-only
  Scenario: A running container is backed up from a snapshot, locked while it runs
    Given vzdump tasks take 30 seconds
    And container "{vm1}" was created
    And container "{vm1}" was started
    When I start a backup of VM "{vm1}" to storage "{storage:ctdumps}"
    Then the task is still running
    When I read the config of container "{vm1}"
    Then the answer has "lock" = "backup"
    When 30 seconds pass
    And I read the config of container "{vm1}"
    Then the answer has no "lock"
    When I read the task log
    Then the log contains "INFO: status = running"
    And the log contains "INFO: backup mode: snapshot"
    And the log contains "INFO: create storage snapshot 'vzdump'"
    And the log contains "INFO: cleanup temporary 'vzdump' snapshot"
