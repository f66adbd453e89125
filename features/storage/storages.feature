@storage
Feature: Storage configuration and capacity
  /storage holds storage.cfg (with a digest); /nodes/{node}/storage shows
  each storage's capacity as the node sees it, following the volumes
  its VMs allocate.

  Scenario: The storages and their capacity
    When I list the storages
    Then the answer lists "storage" = "{storage}"
    And every item has "digest"
    And every item has "content"
    When I read storage "{storage}"
    Then the answer has "storage" = "{storage}"
    And the answer has "digest" matching "[0-9a-f]{40}"
    When I list the storages of node "{node}"
    Then the item with "storage" = "{storage}" has "enabled" = "1"
    And the item with "storage" = "{storage}" has "active" = "1"
    When I list the storages of node "{node}"
      | content | images |
    Then the answer lists "storage" = "{storage}"
    When I list the storages of node "{node}"
      | storage | nosuch |
    Then parameter "storage" is rejected with "No such storage."
    When I read the status of storage "{storage}" on node "{node}"
    Then the storage's usage adds up
    When I read storage "nosuch"
    Then PVE answers 500 "storage 'nosuch' does not exist"

  # storage.cfg has one digest for every storage: while this scenario
  # reads and writes it back, no other may change the file.
  @serial
  Scenario: Define, update and remove a storage
    When I define storage "{storage:isos}" with:
      | type    | dir                   |
      | path    | /var/tmp/{prefix}     |
      | content | iso                   |
      | disable | 1                     |
    Then the call succeeds
    When I read storage "{storage:isos}"
    Then the answer has "type" = "dir"
    And the answer has "content" = "iso"
    And the answer has "path" = "/var/tmp/{prefix}"
    When I remember the answer's "digest" as "digest"
    And I update storage "{storage:isos}" with:
      | content | iso,vztmpl   |
      | digest  | {var:digest} |
    Then the call succeeds
    When I update storage "{storage:isos}" with:
      | content | iso          |
      | digest  | {var:digest} |
    Then PVE answers 500 "update storage failed: detected modified configuration - file changed by other user? Try again."
    When I define storage "{storage:isos}" with:
      | type | dir      |
      | path | /var/tmp |
    Then PVE answers 500 "create storage failed: storage ID '{storage:isos}' already defined"
    When I list the storages
      | type | dir |
    Then every item has "type" = "dir"
    And the answer lists "storage" = "{storage:isos}"
    When I remove storage "{storage:isos}"
    Then the answer is null
    When I remove storage "{storage:isos}"
    Then PVE answers 500 "delete storage failed: storage '{storage:isos}' does not exist"

  @fake-only
  Scenario: A VM's disks are volumes that use the storage's capacity
    When I read the status of storage "{storage}" on node "{node}"
    And I remember the answer's "used" as "before"
    Given VM "{vm1}" was created with:
      | memory | 128          |
      | scsi0  | {storage}:8  |
    When I read the status of storage "{storage}" on node "{node}"
    Then the answer's "used" differs from "before"
    When I list the cluster resources of type "storage"
    Then the answer lists "storage" = "{storage}"
    When I destroy VM "{vm1}"
    Then the task ends with "OK"
    When I read the status of storage "{storage}" on node "{node}"
    Then the answer's "used" is "{var:before}"

  Scenario: Each storage type's required options are fixed once defined
    When I define storage "{storage:nfs}" with:
      | type   | nfs               |
      | server | 192.0.2.50        |
      | path   | /mnt/pve/{prefix} |
    Then PVE answers 500 "missing value for required option 'export'"
    When I define storage "{storage:nfs}" with:
      | type    | nfs               |
      | server  | 192.0.2.50        |
      | export  | /export/{prefix}  |
      | path    | /mnt/pve/{prefix} |
      | disable | 1                 |
    Then the call succeeds
    When I update storage "{storage:nfs}" with:
      | server | 192.0.2.51 |
    Then PVE answers 500 "update storage failed: can't change value of fixed parameter 'server'"
    When I update storage "{storage:nfs}" with:
      | delete | export |
    Then PVE answers 500 "update storage failed: unable to delete required option 'export'"

  Scenario: A storage's statistics over an hour
    When I call GET "/nodes/{node}/storage/{storage}/rrddata"
      | timeframe | hour |
    Then the answer is a list of 60 items
    And every item has "time"
    And every item has "total"
    And every item has "used"
    When I call GET "/nodes/{node}/storage/{storage}/rrd"
      | timeframe | hour       |
      | ds        | total,used |
    Then the answer has "filename" = "/var/lib/rrdcached/db/pve2-storage/{node}/{storage}_total_used.png"

  @pve9
  Scenario: The format flag adds the formats of every storage
    When I list the storages of node "{node}"
      | format | 1 |
    Then every item has "formats"
    When I list the storages of node "{node}"
    Then the item with "storage" = "{storage}" has no "formats"

  # A plugin's check on create: a network file system is mounted under
  # /mnt/pve when no path is given; a directory's path must be plain and
  # is made canonical. Disabled, so a real cluster mounts nothing.
  @serial
  Scenario: What the plugins set and refuse on create
    When I define storage "{storage:nfs}" with:
      | type    | nfs       |
      | server  | 127.0.0.1 |
      | export  | /export   |
      | disable | 1         |
    Then the call succeeds
    When I read storage "{storage:nfs}"
    Then the answer has "path" = "/mnt/pve/{storage:nfs}"
    When I remove storage "{storage:nfs}"
    Then the call succeeds
    When I define storage "{storage:dir}" with:
      | type    | dir                        |
      | path    | /var//tmp/./{prefix}-dir/ |
      | disable | 1                          |
    Then the call succeeds
    When I read storage "{storage:dir}"
    Then the answer has "path" = "/var/tmp/{prefix}-dir"
    When I remove storage "{storage:dir}"
    Then the call succeeds
    When I define storage "{storage:dir}" with:
      | type    | dir           |
      | path    | /var/{prefix} dir |
      | disable | 1                 |
    Then PVE answers 500 "illegal path for directory storage: /var/{prefix} dir"

  @pve9.2
  Scenario: Only a backup server storage has an identity
    When I call GET "/nodes/{node}/storage/{storage}/identity"
    Then PVE answers 500 "get_identity not implemented for this plugin at /usr/share/perl5/PVE/Storage/Plugin.pm line 2681."

  @pve9.2 @fake-only
  Scenario: Two storages on one backup server share its identity
    Given a Proxmox Backup Server runs:
      | name       | pbs-id      |
      | address    | 127.0.0.6   |
      | datastore  | main        |
      | namespaces | archive     |
    When I define storage "{storage:pbs1}" with:
      | type      | pbs       |
      | server    | 127.0.0.6 |
      | datastore | main      |
      | username  | root@pam  |
      | password  | secret    |
      | content   | backup    |
    Then the call succeeds
    When I define storage "{storage:pbs2}" with:
      | type      | pbs       |
      | server    | 127.0.0.6 |
      | datastore | main      |
      | namespace | archive   |
      | username  | root@pam  |
      | password  | secret    |
      | content   | backup    |
    Then the call succeeds
    When I call GET "/nodes/{node}/storage/{storage:pbs1}/identity"
    Then the answer has "type" = "pbs"
    And the answer has "id" matching "^[0-9a-f]{64}$"
    When I remember the answer's "id" as "first"
    When I call GET "/nodes/{node}/storage/{storage:pbs2}/identity"
    Then the answer has "id" = "{var:first}"
