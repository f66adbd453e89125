@auth
Feature: Permissions PVE's handlers check themselves
  Some calls let every authenticated caller in (`user: all`) or ask only
  for one privilege of many, and check the rest in their code: creating a
  VM needs VM.Allocate on it (or on its pool), Datastore.AllocateSpace
  where its disks are made, SDN.Use on its bridges, access to the volumes
  and archives it uses; a volume's attributes need access to the volume;
  /cluster/resources shows a node's figures only to those who may audit
  the node. Refusals are 403 "Permission check failed", naming the path
  and privilege checked.

  Background:
    Given a user "ann" with password "ann-password"
    And "ann" logs in with password "ann-password"

  Scenario: A privilege-separated token without ACLs cannot create a VM
    Given a user "nobody"
    And "nobody" has an API token "nobody!sep"
    When I use the API token "nobody!sep"
    And I create VM "{vm1}" with:
      | scsi0 | {storage}:1               |
      | net0  | virtio,bridge={bridge}    |
    Then PVE answers 403 "Permission check failed"
    When I act as the administrator
    Then VM "{vm1}" does not exist

  Scenario: Auditing a VMID does not allow creating it
    Given "ann" has the role "PVEAuditor" on "/vms/{vm1}"
    When I act as "ann"
    And I create VM "{vm1}" with:
      | memory | 128 |
    Then PVE answers 403 "Permission check failed"
    When I act as the administrator
    Then VM "{vm1}" does not exist

  Scenario: A pool the caller has no rights on does not help
    Given pool "{pool:team}" exists
    And "ann" has the role "PVEAuditor" on "/vms/{vm1}"
    When I act as "ann"
    And I create VM "{vm1}" with:
      | memory | 128         |
      | pool   | {pool:team} |
    Then PVE answers 403 "Permission check failed"
    When I create VM "{vm1}" with:
      | memory | 128              |
      | pool   | {pool:no-such-1} |
    Then PVE answers 403 "Permission check failed (pool '{pool:no-such-1}' does not exist)"
    When I act as the administrator
    Then VM "{vm1}" does not exist

  Scenario: Disks need Datastore.AllocateSpace, network devices SDN.Use
    Given "ann" has the role "PVEVMAdmin" on "/vms/{vm1}"
    When I act as "ann"
    And I create VM "{vm1}" with:
      | memory | 128         |
      | scsi0  | {storage}:1 |
    Then PVE answers 403 "Permission check failed (/storage/{storage}, Datastore.AllocateSpace)"
    When I act as the administrator
    And I grant "ann" the role "PVEDatastoreUser" on "/storage/{storage}"
    And I act as "ann"
    And I create VM "{vm1}" with:
      | memory | 128                    |
      | scsi0  | {storage}:1            |
      | net0   | virtio,bridge={bridge} |
    Then PVE answers 403 "Permission check failed (/sdn/zones/localnetwork/{bridge}, SDN.Use)"
    When I create VM "{vm1}" with:
      | memory | 128                           |
      | net0   | virtio,bridge={bridge},tag=42 |
    Then PVE answers 403 "Permission check failed (/sdn/zones/localnetwork/{bridge}/42, SDN.Use)"
    When I act as the administrator
    Then VM "{vm1}" does not exist
    When I grant "ann" the role "PVESDNUser" on "/sdn/zones/localnetwork/{bridge}"
    And I act as "ann"
    And I create VM "{vm1}" with:
      | memory | 128                           |
      | scsi0  | {storage}:1                   |
      | net0   | virtio,bridge={bridge},tag=42 |
    Then the task ends with "OK"

  Scenario: Options beyond the caller's privileges are refused
    Given a role "Alloc" with the privileges "VM.Allocate"
    And "ann" has the role "Alloc" on "/vms/{vm1}"
    When I act as "ann"
    And I create VM "{vm1}" with:
      | cores | 2 |
    Then PVE answers 403 "Permission check failed (/vms/{vm1}, VM.Config.CPU)"
    When I create VM "{vm1}" with:
      | args | -no-reboot |
    Then PVE answers 500 "only root can set 'args' config"
    When I create VM "{vm1}" with:
      | name | allowed-name |
    Then PVE answers 403 "Permission check failed (/vms/{vm1}, VM.Config.Options)"
    When I act as the administrator
    Then VM "{vm1}" does not exist

  Scenario: Changing a VM's options needs each option's privilege and its bridges'
    Given VM "{vm1}" was created
    And "ann" has the role "PVEVMUser" on "/vms/{vm1}"
    When I act as "ann"
    And I update VM "{vm1}" with:
      | cores | 2 |
    Then PVE answers 403 "Permission check failed (/vms/{vm1}, VM.Config.CPU)"
    When I update VM "{vm1}" with:
      | ide2 | none,media=cdrom |
    Then the call succeeds
    When I act as the administrator
    And I grant "ann" the role "PVEVMAdmin" on "/vms/{vm1}"
    And I act as "ann"
    And I update VM "{vm1}" with:
      | net1 | virtio,bridge={bridge} |
    Then PVE answers 403 "Permission check failed (/sdn/zones/localnetwork/{bridge}, SDN.Use)"

  Scenario: Restoring another VM's backup needs access to that backup
    Given I define storage "{storage:dumps}" with:
      | type    | dir                     |
      | path    | /var/tmp/{prefix}-dumps |
      | content | backup                  |
    And VM "{vm1}" was created
    And VM "{vm1}" was backed up to storage "{storage:dumps}"
    And "ann" has the role "PVEVMAdmin" on "/vms/{vm2}"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:dumps}" as "bk"
    And I act as "ann"
    And I create VM "{vm2}" with:
      | archive | {var:bk} |
    Then PVE answers 403 "Permission check failed (/storage/{storage:dumps}, Datastore.AllocateSpace)"
    When I act as the administrator
    And I grant "ann" the role "PVEDatastoreUser" on "/storage/{storage:dumps}"
    And I act as "ann"
    And I create VM "{vm2}" with:
      | archive | {var:bk} |
    Then PVE answers 403 "Permission check failed (/vms/{vm1}, VM.Backup)"
    When I act as the administrator
    Then VM "{vm2}" does not exist

  Scenario: A restore checks the backed-up network devices' bridges
    Given I define storage "{storage:dumps}" with:
      | type    | dir                     |
      | path    | /var/tmp/{prefix}-dumps |
      | content | backup                  |
    And VM "{vm1}" was created with:
      | memory | 128                    |
      | net0   | virtio,bridge={bridge} |
    And VM "{vm1}" was backed up to storage "{storage:dumps}"
    And "ann" has the role "PVEVMAdmin" on "/vms/{vm1}"
    And "ann" has the role "PVEVMAdmin" on "/vms/{vm2}"
    And "ann" has the role "PVEDatastoreUser" on "/storage/{storage:dumps}"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:dumps}" as "bk"
    And I act as "ann"
    And I create VM "{vm2}" with:
      | archive | {var:bk} |
    Then the task ends with "Permission check failed (/sdn/zones/localnetwork/{bridge}, SDN.Use)"
    When I read the config of VM "{vm2}"
    Then the answer has no "lock"
    And the answer has no "net0"

  Scenario: A backup's attributes need access to the backup
    Given I define storage "{storage:dumps}" with:
      | type    | dir                     |
      | path    | /var/tmp/{prefix}-dumps |
      | content | backup                  |
    And VM "{vm1}" was created
    And VM "{vm1}" was backed up to storage "{storage:dumps}"
    And a user "nobody"
    And "nobody" has an API token "nobody!sep"
    When I remember the newest backup of VM "{vm1}" on storage "{storage:dumps}" as "bk"
    And I use the API token "nobody!sep"
    And I update volume "{var:bk}" of storage "{storage:dumps}" with:
      | notes     | mine |
      | protected | 1    |
    Then PVE answers 403 "Permission check failed (/storage/{storage:dumps}, Datastore.AllocateSpace)"
    When I read volume "{var:bk}" of storage "{storage:dumps}"
    Then PVE answers 403 "Permission check failed (/storage/{storage:dumps}, Datastore.AllocateSpace)"
    When I act as the administrator
    And I read volume "{var:bk}" of storage "{storage:dumps}"
    Then the answer has "protected" = "0"

  Scenario: Without Datastore.Allocate the content list holds only what the caller may access
    Given I define storage "{storage:dumps}" with:
      | type    | dir                     |
      | path    | /var/tmp/{prefix}-dumps |
      | content | backup                  |
    And VM "{vm1}" was created
    And VM "{vm1}" was backed up to storage "{storage:dumps}"
    And "ann" has the role "PVEDatastoreUser" on "/storage/{storage:dumps}"
    When I act as "ann"
    And I list the content of storage "{storage:dumps}"
    Then the answer is a list of 0 items
    When I act as the administrator
    And I grant "ann" the role "PVEVMUser" on "/vms/{vm1}"
    And I act as "ann"
    And I list the content of storage "{storage:dumps}"
    Then the answer is a list of 1 item

  Scenario: /cluster/resources leaves a node's figures out without Sys.Audit on it
    When I act as "ann"
    And I list the cluster resources of type "node"
    Then the item with "node" = "{node}" has "status" = "online"
    And the item with "node" = "{node}" has no "maxmem"
    And the item with "node" = "{node}" has no "maxcpu"
    And the item with "node" = "{node}" has no "uptime"
    When I act as the administrator
    And I grant "ann" the role "PVEAuditor" on "/nodes/{node}"
    And I act as "ann"
    And I list the cluster resources of type "node"
    Then the item with "node" = "{node}" has "maxmem"
