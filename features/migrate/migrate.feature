@vm @migrate
Feature: Migrating VMs between nodes
  A migration is a qmigrate task that holds "lock: migrate" while it
  runs. PVE refuses the local node as a target, unknown nodes, and a
  running VM without "online"; GET .../migrate tells beforehand which
  nodes may take the VM and which disks and devices tie it to this one.

  Scenario: The local node and unknown nodes are refused as targets
    Given VM "{vm1}" was created
    When I migrate VM "{vm1}" to node "{node}"
    Then parameter "target" is rejected with "target is local node."
    When I migrate VM "{vm1}" to node "nosuchnode"
    Then PVE answers 500 "no such cluster node 'nosuchnode'"

  Scenario: The preconditions of a stopped VM with a local disk
    Given VM "{vm1}" was created with:
      | memory | 128              |
      | scsi0  | {storage}:1      |
      | ide2   | none,media=cdrom |
    When I read the migration preconditions of VM "{vm1}"
    Then the answer has "running" = "0"
    And the answer has "local_resources" = "[]"
    And the answer has "local_disks/0/volid" matching "{storage}:.*vm-{vm1}-disk-0.*"
    And the answer has "local_disks/0/drivename" = "scsi0"
    And the answer has "local_disks/0/size" = "1073741824"
    And the answer has "local_disks/0/is_attached" = "1"

  @fake-only
  Scenario: An offline migration moves the config and the local disks, and back
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node} }
        - { name: pve2, ip: 10.0.0.2 }
      """
    And VM "{vm1}" was created with:
      | memory | 128         |
      | scsi0  | {storage}:1 |
    When I read the migration preconditions of VM "{vm1}"
    Then the answer has "allowed_nodes/0" = "pve2"
    When I migrate VM "{vm1}" to node "pve2"
    Then the task ID names node "{node}", type "qmigrate", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    And VM "{vm1}" does not exist
    When I read the config of VM "{vm1}" on node "pve2"
    Then the answer has "scsi0" = "{storage}:vm-{vm1}-disk-0,size=1G"
    And the answer has no "lock"
    When I migrate VM "{vm1}" from node "pve2" to node "{node}"
    Then the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "scsi0" = "{storage}:vm-{vm1}-disk-0,size=1G"

  @fake-only
  Scenario: A running VM migrates only online, with its local disks
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node} }
        - { name: pve2, ip: 10.0.0.2 }
      """
    And VM "{vm1}" was created with:
      | memory | 128         |
      | scsi0  | {storage}:1 |
    And VM "{vm1}" is running
    When I read the migration preconditions of VM "{vm1}"
    Then the answer has "running" = "1"
    When I migrate VM "{vm1}" to node "pve2"
    Then PVE answers 500 "can't migrate running VM without --online"
    When I migrate VM "{vm1}" to node "pve2"
      | online | 1 |
    Then the task ends with "migration aborted"
    When I read the config of VM "{vm1}"
    Then the answer has no "lock"
    When I migrate VM "{vm1}" to node "pve2"
      | online           | 1 |
      | with-local-disks | 1 |
    Then the task ends with "OK"
    When I read the status of VM "{vm1}" on node "pve2"
    Then the answer has "status" = "running"
    When I migrate VM "{vm1}" from node "pve2" to node "{node}"
      | online           | 1 |
      | with-local-disks | 1 |
    Then the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "running"

  @fake-only
  Scenario: A live migration takes its network, type and speed limit from datacenter.cfg
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node} }
        - { name: pve2, ip: 10.0.0.2 }
      setup:
        - { method: PUT, path: /cluster/options, params: { migration: "type=insecure,network=10.0.0.0/24", bwlimit: "migration=102400" } }
      """
    And VM "{vm1}" was created with:
      | memory | 2048 |
    And VM "{vm1}" is running
    When I migrate VM "{vm1}" to node "pve2"
      | online | 1 |
    Then the task ends with "OK"
    When I read the task log
    Then the log has a line containing "use dedicated network address for sending migration traffic (10.0.0.2)"
    And the log has a line containing "starting online/live migration on tcp:10.0.0.2:60000"
    And the log has a line containing "migration speed limit: 100.0 MiB/s"
    And the log has a line containing "migration downtime limit: 100 ms"
    And the log has a line containing "migration cachesize: 256.0 MiB"
    When I migrate VM "{vm1}" from node "pve2" to node "{node}"
      | online            | 1              |
      | migration_network | 192.168.7.0/24 |
    Then the task ends with an error matching "command '/usr/bin/ssh -e none -o BatchMode=yes -o HostKeyAlias={node} .* pvecm mtunnel -migration_network 192.168.7.0/24 -get_migration_ip' failed: exit code 255"
    When I read the task log
    Then the log has a line containing "could not get migration ip: no IP address configured on local node for network '192.168.7.0/24'"
    When I migrate VM "{vm1}" from node "pve2" to node "{node}"
      | online            | 1              |
      | migration_type    | secure         |
      | migration_network | 192.0.2.0/24   |
      | bwlimit           | 51200          |
    Then the task ends with "OK"
    When I read the task log
    Then the log has a line containing "use dedicated network address for sending migration traffic (192.0.2.10)"
    And the log has a line containing "starting online/live migration on unix:/run/qemu-server/{vm1}.migrate"
    And the log has a line containing "migration speed limit: 50.0 MiB/s"
