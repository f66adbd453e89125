@cluster @replication
Feature: Storage replication
  /cluster/replication keeps jobs `<guest>-<jobnum>` that copy a guest's
  local ZFS volumes to another node on a schedule; each node lists the
  jobs of its guests with what pvesr recorded of their last runs
  (`last_sync`, `next_sync`, `fail_count`, `duration`, `error`) and the
  log of the last run. Jobs run every minute the schedule says; a failed
  one is retried after 5, 10, 15, then every 30 minutes.

  Scenario: A job needs a guest and another node
    When I call POST "/cluster/replication"
      | id     | {vm1}-0 |
      | type   | local   |
      | target | {node}  |
    Then PVE answers 500 "Guest '{vm1}' does not exist."
    Given VM "{vm1}" was created
    When I call POST "/cluster/replication"
      | id     | {vm1}-0    |
      | type   | local      |
      | target | nosuchnode |
    Then PVE answers 500 "Target 'nosuchnode' does not exist."
    When I call POST "/cluster/replication"
      | id     | {vm1}-0 |
      | type   | local   |
      | target | {node}  |
    Then PVE answers 500 "Source and target must not be identical"

  Scenario: Unknown jobs are refused in PVE's words
    When I call GET "/cluster/replication/{vm1}-0"
    Then PVE answers 500 "no such replication job '{vm1}-0'"
    When I call PUT "/cluster/replication/{vm1}-0"
      | comment | x |
    Then PVE answers 500 "no such job '{vm1}-0'"
    When I call DELETE "/cluster/replication/{vm1}-0"
    Then PVE answers 500 "no such job '{vm1}-0'"
    When I call GET "/nodes/{node}/replication/{vm1}-0/status"
    Then PVE answers 500 "no such replication job '{vm1}-0'"
    When I call GET "/nodes/{node}/replication/{vm1}-0/log"
    Then PVE answers 500 "no such replication job '{vm1}-0'"
    When I call POST "/nodes/{node}/replication/{vm1}-0/schedule_now"
    Then PVE answers 500 "no such replication job '{vm1}-0'"
    When I call GET "/nodes/{node}/replication"
    Then the answer does not list "id" = "{vm1}-0"

  @fake-only
  Scenario: Only volumes on storages that can replicate qualify
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1 }
        - { name: pve2 }
      storages:
        - { id: local, type: dir, path: /var/lib/vz }
        - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
        - { id: local-zfs, type: zfspool, pool: rpool/data, size: 500G }
      vms:
        - { vmid: 100, node: pve1, config: { scsi0: 'local-lvm:vm-100-disk-0,size=8G' } }
        - { vmid: 101, node: pve1, config: { memory: 512 } }
      """
    When I call POST "/cluster/replication"
      | id     | 100-0 |
      | type   | local |
      | target | pve2  |
    Then PVE answers 500 "missing replicate feature on volume 'local-lvm:vm-100-disk-0'"
    When I call POST "/cluster/replication"
      | id     | 101-0 |
      | type   | local |
      | target | pve2  |
    Then PVE answers 500 "No replicatable volumes found"

  @fake-only
  Scenario: A job runs at the next minute, then on its schedule, and is removed
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1 }
        - { name: pve2 }
      storages:
        - { id: local, type: dir, path: /var/lib/vz }
        - { id: local-zfs, type: zfspool, pool: rpool/data, size: 500G }
      vms:
        - { vmid: 100, node: pve1, config: { scsi0: 'local-zfs:vm-100-disk-0,size=8G' } }
      """
    When I call POST "/cluster/replication"
      | id       | 100-0   |
      | type     | local   |
      | target   | pve2    |
      | schedule | */30    |
      | comment  | db copy |
    Then the call succeeds
    When I call POST "/cluster/replication"
      | id     | 100-1 |
      | type   | local |
      | target | pve2  |
    Then PVE answers 500 "replication job for guest '100' to target 'local/pve2' already exists"
    When I call GET "/cluster/replication/100-0"
    Then the answer has "source" = "pve1"
    And the answer has "guest" = "100"
    And the answer has "jobnum" = "0"
    And the answer has "digest"
    When I call GET "/nodes/pve1/replication"
    Then the item with "id" = "100-0" has "last_sync" = "0"
    And the item with "id" = "100-0" has "next_sync" = "1800"
    And the item with "id" = "100-0" has "vmtype" = "qemu"
    When I call GET "/nodes/pve2/replication"
    Then the answer is a list of 0 items
    When 60 seconds pass
    And I call GET "/nodes/pve1/replication/100-0/status"
    Then the answer has "fail_count" = "0"
    And the answer has "duration"
    And the answer's "last_sync" differs from "0"
    When I call GET "/nodes/pve1/replication/100-0/log"
    Then a log line ends with "100-0: start replication job"
    And a log line contains "100-0: full sync 'local-zfs:vm-100-disk-0'"
    And a log line ends with "100-0: end replication job"
    When I call GET "/nodes/pve2/replication/100-0/log"
    Then the item with "n" = "1" has "t" = "unable to open file - No such file or directory"
    When I call DELETE "/cluster/replication/100-0"
    Then the call succeeds
    When I call GET "/cluster/replication/100-0"
    Then the answer has "remove_job" = "full"
    When 60 seconds pass
    And I call GET "/cluster/replication"
    Then the answer is a list of 0 items

  @fake-only
  Scenario: A job to an offline node fails and waits for it
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1 }
        - { name: pve2, status: offline, ip: 192.0.2.12 }
      storages:
        - { id: local-zfs, type: zfspool, pool: rpool/data, size: 500G }
      vms:
        - { vmid: 100, node: pve1, config: { scsi0: 'local-zfs:vm-100-disk-0,size=8G' } }
      """
    When I call POST "/cluster/replication"
      | id     | 100-0 |
      | type   | local |
      | target | pve2  |
    Then the call succeeds
    When 60 seconds pass
    And I call GET "/nodes/pve1/replication/100-0/status"
    Then the answer has "fail_count" = "1"
    And the answer has "next_sync" = "0"
    And the answer has "error" matching "^command '/usr/bin/ssh -e none -o 'BatchMode=yes' -o 'HostKeyAlias=pve2' .* root@192\.0\.2\.12 -- pvesr prepare-local-job 100-0 local-zfs:vm-100-disk-0 --last_sync 0' failed: exit code 255$"

  @fake-only @pve9
  Scenario: 9.x asks for VM.Replicate on the guest
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1 }
        - { name: pve2 }
      storages:
        - { id: local-zfs, type: zfspool, pool: rpool/data, size: 500G }
      vms:
        - { vmid: 100, node: pve1, config: { scsi0: 'local-zfs:vm-100-disk-0,size=8G' } }
      """
    Given a user "bob" with password "builder1"
    And "bob" has the role "PVEAuditor" on "/vms/100"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call POST "/cluster/replication"
      | id     | 100-0 |
      | type   | local |
      | target | pve2  |
    Then PVE answers 403 "Permission check failed (/vms/100, VM.Replicate)"
