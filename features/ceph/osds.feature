@ceph @fake-only
Feature: Ceph OSDs, CephFS and the safety checks
  An OSD is made by a task on an unused disk of the node, which then
  shows as LVM holding the OSD in the node's disk list. An OSD is
  destroyed only once it is out and down. A CephFS needs a standby
  metadata server and makes its two pools. `cmd-safety` answers from
  the model whether stopping or destroying a daemon is safe.

  Background:
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph: { release: squid, network: 127.0.0.0/8, mons: [{node}], mgrs: [{node}] }
      """

  Scenario: An OSD on an unused disk, then destroyed
    When I start the Ceph task POST "/nodes/{node}/ceph/osd"
      | dev | /dev/sdb |
    Then the task ID names node "{node}", type "cephcreateosd", ID "sdb" and user "root@pam"
    And the task ends with "OK"
    When I call GET "/nodes/{node}/disks/list"
    Then the item with "devpath" = "/dev/sdb" has "used" = "LVM"
    And the item with "devpath" = "/dev/sdb" has "osdid" = "0"
    And the item with "devpath" = "/dev/sdc" has "osdid" = "-1"
    When I call POST "/nodes/{node}/ceph/osd"
      | dev | /dev/sdb |
    Then PVE answers 500 "device '/dev/sdb' is already in use"
    When I call GET "/nodes/{node}/ceph/osd"
    Then the answer has "root/children/0/children/0/name" = "{node}"
    And the answer has "root/children/0/children/0/children/0/name" = "osd.0"
    And the answer has "root/children/0/children/0/children/0/status" = "up"
    When I call DELETE "/nodes/{node}/ceph/osd/0"
    Then PVE answers 500 "osd is in use (in == 1)"
    When I call POST "/nodes/{node}/ceph/osd/0/out"
    Then the call succeeds
    When I call DELETE "/nodes/{node}/ceph/osd/0"
    Then PVE answers 500 "osd is still running (up == 1)"
    When I start the Ceph task POST "/nodes/{node}/ceph/stop"
      | service | osd.0 |
    Then the task ends with "OK"
    When I start the Ceph task DELETE "/nodes/{node}/ceph/osd/0"
      | cleanup | 1 |
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/disks/list"
    Then the item with "devpath" = "/dev/sdb" has no "used"
    When I call POST "/nodes/{node}/ceph/osd/0/in"
    Then PVE answers 500 "no such OSD '0'"

  Scenario: OSDs declared on named disks, and the safety checks
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph:
        release: squid
        network: 127.0.0.0/8
        mons: [{node}]
        mgrs: [{node}]
        osds:
          - { node: {node}, disk: /dev/sdb }
          - { node: {node}, disk: /dev/nvme0n1 }
        pools: [vm]
      """
    When I call GET "/nodes/{node}/ceph/osd/1/metadata"
    Then the answer has "devices/0/physical_device" = "nvme0n1"
    When I call GET "/nodes/{node}/ceph/cmd-safety"
      | service | osd  |
      | id      | 0    |
      | action  | stop |
    Then the answer has "safe" = "false"
    And the answer has "status" = "unsafe to stop osd(s) at this time (128 PGs are or would become offline)"
    When I call GET "/nodes/{node}/ceph/cmd-safety"
      | service | mds     |
      | id      | a       |
      | action  | destroy |
    Then PVE answers 500 "Service does not support this action: mds: destroy"
    When I call GET "/nodes/{node}/ceph/cmd-safety"
      | service | mon     |
      | id      | {node}  |
      | action  | stop    |
    Then the answer has "safe" = "false"

  Scenario: A CephFS needs a standby metadata server
    When I call POST "/nodes/{node}/ceph/fs/cephfs"
    Then PVE answers 500 "no running Metadata Server (MDS) found!"
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph: { release: squid, network: 127.0.0.0/8, mons: [{node}], mgrs: [{node}], mdss: [{node}] }
      """
    When I start the Ceph task POST "/nodes/{node}/ceph/fs/cephfs"
      | add-storage | 1 |
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/ceph/fs"
    Then the item with "name" = "cephfs" has "data_pool" = "cephfs_data"
    When I call GET "/nodes/{node}/ceph/pool"
    Then the item with "pool_name" = "cephfs_metadata" has "pg_num" = "32"
    When I read storage "cephfs"
    Then the answer has "type" = "cephfs"
    When I call GET "/nodes/{node}/ceph/mds"
    Then the item with "name" = "{node}" has "state" = "up:active"
    When I call POST "/nodes/{node}/ceph/fs/other"
    Then PVE answers 500 "no standby Metadata Server (MDS) found!"

  @pve9.2
  Scenario: A node's OSDs restart one after the other
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph:
        release: squid
        network: 127.0.0.0/8
        mons: [{node}]
        mgrs: [{node}]
        osds:
          - { node: {node}, disk: /dev/sdb }
          - { node: {node}, disk: /dev/sdc }
          - { node: {node}, disk: /dev/nvme0n1, up: false }
      """
    When I start the Ceph task POST "/nodes/{node}/ceph/restart-bulk"
      | service-type | osd |
    Then the task ends with "Ceph cluster has blocking HEALTH_WARN issues, refusing rolling restart of 'osd' daemons (pass force=1 to override):   - OSD_DOWN: 1 osds down"
    When I start the Ceph task POST "/nodes/{node}/ceph/restart-bulk"
      | service-type | osd |
      | force        | 1   |
    Then the task ID names node "{node}", type "srvrestart", ID "{node}-osd" and user "root@pam"
    And the task ends with "OK"
    When I read the task log
    Then the item with "t" = "[3/3] osd.2 is up" has "n"
    And the item with "t" = "rolling restart of 'osd' daemons on node '{node}' finished" has "n"
    When I call GET "/nodes/{node}/ceph/osd"
    Then the answer has "root/children/0/children/0/children/2/status" = "up"

  @pve9.2
  Scenario: The cluster's daemons of a type restart one after the other
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph:
        release: squid
        network: 127.0.0.0/8
        mons: [{node}]
        mgrs: [{node}]
        osds:
          - { node: {node}, disk: /dev/sdb }
          - { node: {node}, disk: /dev/sdc }
          - { node: {node}, disk: /dev/nvme0n1 }
      """
    When I call POST "/cluster/ceph/restart-bulk"
      | service-type  | mon |
      | only-outdated | 1   |
    Then parameter "only-outdated" is rejected with "only supported with service-type=osd"
    When I start the Ceph task POST "/cluster/ceph/restart-bulk"
      | service-type | mgr |
    Then the task ID names node "{node}", type "srvrestart", ID "cluster-mgr" and user "root@pam"
    And the task ends with "[1/1] Ceph reports 'mgr.{node}' is not safe to stop: no standby mgr available for failover, would cause mgr outage"
    When I start the Ceph task POST "/cluster/ceph/restart-bulk"
      | service-type | mon |
    Then the task ends with "[1/1] Ceph reports 'mon.{node}' is not safe to stop: 'mon ok-to-stop' for '{node}' did not pass after 4 attempts: not enough monitors would be available () after stopping mons [{node}]"
    When I start the Ceph task POST "/cluster/ceph/restart-bulk"
      | service-type | osd |
    Then the task ends with "OK"
    When I read the task log
    Then the item with "t" = "  [1/1] {node} (3 OSDs)" has "n"
    And the item with "t" = "cluster-wide OSD rolling restart finished" has "n"

  Scenario: An OSD with its DB and WAL on other disks, cleaned up with it
    When I start the Ceph task POST "/nodes/{node}/ceph/osd"
      | dev          | /dev/sdb     |
      | db_dev       | /dev/nvme0n1 |
      | db_dev_size  | 20           |
      | wal_dev      | /dev/sdc     |
    Then the task ends with "OK"
    When I read the task log
    Then the item with "t" = "creating block.db on '/dev/nvme0n1'" has "n"
    And the item with "t" = "creating block.wal on '/dev/sdc'" has "n"
    When I call GET "/nodes/{node}/disks/list"
    Then the item with "devpath" = "/dev/nvme0n1" has "used" = "LVM"
    And the item with "devpath" = "/dev/nvme0n1" has "db" = "1"
    And the item with "devpath" = "/dev/nvme0n1" has "osdid" = "-1"
    And the item with "devpath" = "/dev/sdc" has "wal" = "1"
    And the item with "devpath" = "/dev/sdb" has "osdid" = "0"
    When I call GET "/nodes/{node}/ceph/osd/0/metadata"
    Then the answer has "devices/1/device" = "db"
    And the answer has "devices/1/physical_device" = "nvme0n1"
    And the answer has "devices/1/size" = "21474836480"
    And the answer has "devices/2/device" = "wal"
    When I call GET "/nodes/{node}/ceph/osd/0/lv-info"
      | type | wal |
    Then the answer has "lv_size" = "40009465856"
    When I call POST "/nodes/{node}/ceph/osd/0/out"
    Then the call succeeds
    When I start the Ceph task POST "/nodes/{node}/ceph/stop"
      | service | osd.0 |
    Then the task ends with "OK"
    When I start the Ceph task DELETE "/nodes/{node}/ceph/osd/0"
      | cleanup | 1 |
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/disks/list"
    Then the item with "devpath" = "/dev/nvme0n1" has no "used"
    And the item with "devpath" = "/dev/sdc" has no "used"
    And the item with "devpath" = "/dev/sdb" has no "used"

  Scenario: The devices of an OSD are checked before its task
    When I call POST "/nodes/{node}/ceph/osd"
      | dev             | /dev/sdb     |
      | db_dev          | /dev/nvme0n1 |
      | osds-per-device | 2            |
    Then parameter "db_dev" is rejected with "cannot use 'osds-per-device' parameter with 'db_dev'"
    When I call POST "/nodes/{node}/ceph/osd"
      | dev    | /dev/sdb |
      | db_dev | /dev/sdb |
    Then parameter "db_dev" is rejected with "cannot chose '/dev/sdb' for more than one type."
    When I call POST "/nodes/{node}/ceph/osd"
      | dev    | /dev/sdb |
      | db_dev | /dev/sda |
    Then PVE answers 501 "Method 'POST /api2/json/nodes/{node}/ceph/osd' is not emulated by fake-pve"

  Scenario: Two OSDs share one NVMe disk
    When I start the Ceph task POST "/nodes/{node}/ceph/osd"
      | dev             | /dev/nvme0n1 |
      | osds-per-device | 2            |
    Then the task ends with "OK"
    When I read the task log
    Then the item with "t" = "--> relative data size: 0.5" has "n"
    When I call GET "/nodes/{node}/disks/list"
    Then the item with "devpath" = "/dev/nvme0n1" has "bluestore" = "1"
    When I call GET "/nodes/{node}/ceph/osd"
    Then the answer has "root/children/0/children/0/children/1/name" = "osd.1"
