@ceph @fake-only
Feature: A Ceph cluster on the node
  A scenario declares Ceph installed (a release) and, optionally,
  initialised with monitors and managers. `init` writes ceph.conf as
  PVE does, the first monitor is a task that also makes a manager, and
  the status's health follows the OSD map's flags.

  Background:
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph: { release: squid }
      """

  Scenario: Installed but not initialised
    When I call GET "/nodes/{node}/ceph/status"
    Then PVE answers 500 "pveceph configuration not initialized - missing '/etc/pve/ceph.conf', missing '/etc/pve/ceph'"
    When I call GET "/cluster/ceph/flags"
    Then PVE answers 500 "pveceph configuration not initialized - missing '/etc/pve/ceph.conf', missing '/etc/pve/ceph'"

  Scenario: Init, then the first monitor as a task
    When I call POST "/nodes/{node}/ceph/init"
      | network | 127.0.0.0/8 |
    Then the call succeeds
    When I call GET "/nodes/{node}/ceph/cfg/raw"
    Then the text answer contains "public_network = 127.0.0.0/8"
    When I call GET "/nodes/{node}/ceph/status"
    Then PVE answers 500 "rados_connect failed - No such file or directory"
    When I start the Ceph task POST "/nodes/{node}/ceph/mon/{node}"
    Then the answer is a task ID
    And the task ID names node "{node}", type "cephcreatemon", ID "mon.{node}" and user "root@pam"
    And the task ends with "OK"
    When I call GET "/nodes/{node}/ceph/mon"
    Then the item with "name" = "{node}" has "state" = "running"
    When I call GET "/nodes/{node}/ceph/mgr"
    Then the item with "name" = "{node}" has "state" = "active"
    When I call POST "/nodes/{node}/ceph/mon/{node}"
    Then PVE answers 500 "monitor address '127.0.0.1' already in use"
    When I call DELETE "/nodes/{node}/ceph/mon/{node}"
    Then PVE answers 500 "can't remove last monitor"
    When I call GET "/nodes/{node}/ceph/cfg/db"
    Then the item with "name" = "auth_allow_insecure_global_id_reclaim" has "value" = "false"

  Scenario: Health follows the flags
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph: { release: squid, network: 127.0.0.0/8, mons: [{node}], mgrs: [{node}] }
      """
    When I call GET "/cluster/ceph/status"
    Then the answer has "health/status" = "HEALTH_WARN"
    And the answer has "health/checks/TOO_FEW_OSDS/summary/message" = "OSD count 0 < osd_pool_default_size 3"
    And the answer has no "health/checks/OSDMAP_FLAGS"
    When I call PUT "/cluster/ceph/flags/noout"
      | value | 1 |
    Then the call succeeds
    When I call GET "/cluster/ceph/status"
    Then the answer has "health/checks/OSDMAP_FLAGS/summary/message" = "noout flag(s) set"
    When I call GET "/cluster/ceph/flags"
    Then the item with "name" = "noout" has "value" = "1"
    And the item with "name" = "pause" has "value" = "0"

  Scenario: Stopped monitors time out
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node}, ip: 127.0.0.1 }
      ceph: { release: squid, network: 127.0.0.0/8, mons: [{node}], mgrs: [{node}] }
      """
    When I start the Ceph task POST "/nodes/{node}/ceph/stop"
      | service | mon |
    Then the task ends with "OK"
    When I call GET "/cluster/ceph/status"
    Then PVE answers 500 "got timeout"
    When I call GET "/nodes/{node}/ceph/mon"
    Then the item with "name" = "{node}" has "state" = "unknown"
