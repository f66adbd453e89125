@ceph @fake-only
Feature: Ceph pools
  Pools are made, changed and destroyed by tasks, as PVE's `pveceph
  pool` does: the task applies each setting that differs from what
  Ceph gave the new pool and logs it, a refused setting makes the task
  fail with `Could not set`, `add_storages` adds an `rbd` storage named
  after the pool, and a pool whose storage still holds images is not
  destroyed unless forced.

  Background:
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph: { release: squid, network: 127.0.0.0/8, mons: [{node}], mgrs: [{node}] }
      """

  Scenario: A pool with its storage
    When I start the Ceph task POST "/nodes/{node}/ceph/pool"
      | name         | vm |
      | add_storages | 1  |
    Then the task ID names node "{node}", type "cephcreatepool", ID "vm" and user "root@pam"
    And the task ends with "OK"
    When I read the task log
    Then the log reads:
      """
      skipping 'size', did not change
      pool vm: applying application = rbd
      skipping 'min_size', did not change
      pool vm: applying pg_autoscale_mode = warn
      skipping 'pg_num', did not change
      TASK OK
      """
    When I call GET "/nodes/{node}/ceph/pool"
    Then the item with "pool_name" = "vm" has "size" = "3"
    And the item with "pool_name" = "vm" has "pg_autoscale_mode" = "warn"
    And the item with "pool_name" = "vm" has "crush_rule_name" = "replicated_rule"
    When I read storage "vm"
    Then the answer has "type" = "rbd"
    And the answer has "pool" = "vm"
    When I call GET "/nodes/{node}/ceph/pool/vm/status"
    Then the answer has "min_size" = "2"
    And the answer has "crush_rule" = "replicated_rule"

  Scenario: A refused setting fails the task
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph:
        release: squid
        network: 127.0.0.0/8
        mons: [{node}]
        mgrs: [{node}]
        pools: [vm]
      """
    When I start the Ceph task PUT "/nodes/{node}/ceph/pool/vm"
      | min_size | 4 |
    Then the task ends with "Could not set: min_size"
    When I read the task log
    Then the log reads:
      """
      pool vm: applying min_size = 4
      mon_command failed - pool min_size must be between 1 and size, which is set to 3
      TASK ERROR: Could not set: min_size
      """
    When I start the Ceph task PUT "/nodes/{node}/ceph/pool/vm"
      | size | 2 |
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/ceph/pool/vm/status"
    Then the answer has "size" = "2"
    And the answer has "min_size" = "2"
    When I call GET "/nodes/{node}/ceph/pool/nope/status"
    Then PVE answers 500 "mon_command failed - unrecognized pool 'nope'"

  Scenario: A pool in use by a storage is kept unless forced
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph:
        release: squid
        network: 127.0.0.0/8
        mons: [{node}]
        mgrs: [{node}]
        pools: [{ name: vm, storage: true }]
      vms:
        - { vmid: 100, node: {node}, config: { scsi0: 'vm:vm-100-disk-0,size=8G' } }
      """
    When I start the Ceph task DELETE "/nodes/{node}/ceph/pool/vm"
    Then the task ends with "ceph pool 'vm' still in use by storage 'vm'"
    When I start the Ceph task DELETE "/nodes/{node}/ceph/pool/vm"
      | force           | 1 |
      | remove_storages | 1 |
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/ceph/pool"
    Then the answer does not list "pool_name" = "vm"
    When I read storage "vm"
    Then PVE answers 500 "storage 'vm' does not exist"

  Scenario: A storage needs a name fit for storage IDs
    When I call POST "/nodes/{node}/ceph/pool"
      | name         | 1vm |
      | add_storages | 1   |
    Then PVE answers 500 "pool name contains characters which are illegal for storage naming"

  Scenario: An erasure-coded pool with its metadata pool, profile and storage
    When I start the Ceph task POST "/nodes/{node}/ceph/pool"
      | name           | ec      |
      | erasure-coding | k=2,m=1 |
    Then the task ID names node "{node}", type "cephcreatepool", ID "ec" and user "root@pam"
    And the task ends with "OK"
    When I read the task log
    Then the log reads:
      """
      created new erasure code profile 'pve_ec_ec'
      pool ec-data: applying allow_ec_overwrites = true
      pool ec-data: applying application = rbd
      pool ec-data: applying pg_autoscale_mode = warn
      skipping 'pg_num', did not change
      skipping 'size', did not change
      pool ec-metadata: applying application = rbd
      skipping 'min_size', did not change
      pool ec-metadata: applying pg_autoscale_mode = warn
      skipping 'pg_num', did not change
      TASK OK
      """
    When I call GET "/nodes/{node}/ceph/pool"
    Then the item with "pool_name" = "ec-data" has "type" = "erasure"
    And the item with "pool_name" = "ec-data" has "size" = "3"
    And the item with "pool_name" = "ec-data" has "crush_rule_name" = "ec-data"
    And the item with "pool_name" = "ec-metadata" has "type" = "replicated"
    And the item with "pool_name" = "ec-metadata" has "pg_num" = "32"
    When I read storage "ec"
    Then the answer has "pool" = "ec-metadata"
    And the answer has "data-pool" = "ec-data"
    When I call GET "/nodes/{node}/ceph/rules"
    Then the answer lists "name" = "ec-data"
    When I call POST "/nodes/{node}/ceph/pool"
      | name           | other                |
      | erasure-coding | k=2,m=1,profile=nope |
    Then PVE answers 500 "Erasure code profile 'nope' does not exist."
    When I start the Ceph task PUT "/nodes/{node}/ceph/pool/ec-data"
      | size | 4 |
    Then the task ends with "Could not set: size"
    When I start the Ceph task DELETE "/nodes/{node}/ceph/pool/ec-data"
      | force | 1 |
    Then the task ends with "OK"
    When I read the task log
    Then the log reads:
      """
      found erasure coded profile 'pve_ec_ec', destroying its CRUSH rule
      destroying erasure coded profile 'pve_ec_ec'
      TASK OK
      """

  Scenario: A pool holds the images of its storage
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
        pools: [{ name: vm, storage: true }]
      vms:
        - { vmid: {vm1}, node: {node}, config: { scsi0: 'vm:vm-{vm1}-disk-0,size=8G' } }
      """
    When I call GET "/nodes/{node}/ceph/pool"
    Then the item with "pool_name" = "vm" has "bytes_used" = "25769803776"
    When I call GET "/nodes/{node}/ceph/pool/vm/status"
      | verbose | 1 |
    Then the answer has "statistics/stored" = "8589934592"
    And the answer has "statistics/objects" = "2048"
    When I call GET "/nodes/{node}/storage/vm/status"
    Then the answer has "used" = "8589934592"
    When I call POST "/nodes/{node}/storage/vm/content"
      | vmid     | {vm1}            |
      | filename | vm-{vm1}-disk-1  |
      | size     | 4G               |
    Then the call succeeds
    When I call GET "/nodes/{node}/storage/vm/status"
    Then the answer has "used" = "12884901888"
    When I call GET "/cluster/ceph/status"
    Then the answer has "pgmap/data_bytes" = "12884901888"
    And the answer has "pgmap/bytes_total" = "9001778946048"
