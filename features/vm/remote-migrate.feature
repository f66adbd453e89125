@vm @remote-migrate @fake-only @destructive
Feature: Moving a guest to another cluster
  qm remote-migrate (POST .../remote_migrate) moves a guest to another
  cluster over HTTPS: a qmigrate task here opens a tunnel there with an
  API token (POST .../mtunnel, then its websocket), sends the config and
  the disks, and leaves the guest here stopped and locked, unless told
  to delete it. Here the other cluster is a second fake-pve on loopback.

  Background:
    Given a second fake-pve runs the cluster:
      """
      nodes:
        - { name: dst, ip: 198.51.100.20, bridges: [vmbr0, vmbr1] }
      storages:
        - { id: tank, type: lvmthin, thinpool: tank, vgname: tank, content: [images, rootdir] }
      users:
        - userid: root@pam
          tokens:
            - { tokenid: mig, secret: 0b1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9, privsep: false }
      vms:
        - { vmid: {vm3}, name: taken }
      """

  Scenario: A stopped VM moves, and stays here stopped and locked
    Given VM "{vm1}" was created with:
      | memory | 128                    |
      | scsi0  | {storage}:1            |
      | net0   | virtio,bridge={bridge} |
    When I call POST "/nodes/{node}/qemu/{vm1}/remote_migrate"
      | target-endpoint | host={var:cluster_ip},port={var:cluster_port},apitoken=PVEAPIToken=root@pam!mig=0b1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9,fingerprint={var:cluster_fingerprint} |
      | target-vmid     | {vm2}                                                                                                                                      |
      | target-storage  | tank                                                                                                                                      |
      | target-bridge   | vmbr1                                                                                                                                     |
    And the migration has ended
    Then the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "lock" = "migrate"
    When I act as "the cluster"
    And I call GET "/nodes/dst/qemu/{vm2}/config"
    Then the answer has "memory" = "128"
    And the answer has "scsi0" matching "tank:vm-{vm2}-disk-0,.*size=1G"
    And the answer has "net0" matching "virtio=.*,bridge=vmbr1"

  Scenario: The other cluster's refusals end the task and leave the VM here
    Given VM "{vm1}" was created with:
      | memory | 128         |
      | scsi0  | {storage}:1 |
    When I call POST "/nodes/{node}/qemu/{vm1}/remote_migrate"
      | target-endpoint | host={var:cluster_ip},port={var:cluster_port},apitoken=PVEAPIToken=root@pam!mig=0b1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9,fingerprint={var:cluster_fingerprint} |
      | target-vmid     | {vm3}                                                                                                                                      |
      | target-storage  | tank                                                                                                                                      |
      | target-bridge   | vmbr0                                                                                                                                     |
    And the migration has ended
    Then the task ends with "migration aborted"
    When I read the task log
    Then a line of the answer contains "vmid: unable to create empty VM config - VM {vm3} already exists on node 'dst'"
    When I read the config of VM "{vm1}"
    Then the answer has no "lock"
