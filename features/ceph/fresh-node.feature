@ceph
Feature: Ceph on a node without it
  A node where Ceph was never installed answers every Ceph call as PVE
  does: the handler's first check names the binary it looks for
  (`/usr/bin/ceph-mon` for most), before anything else. Clients probe
  `GET /cluster/ceph/status` this way to learn that Ceph is absent.

  Scenario: The cluster's Ceph status says the monitor binary is missing
    When I call GET "/cluster/ceph/status"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"

  Scenario: A node's Ceph calls say the same
    When I call GET "/nodes/{node}/ceph/status"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"
    When I call GET "/nodes/{node}/ceph/mon"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"
    When I call GET "/nodes/{node}/ceph/pool"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"
    When I call GET "/nodes/{node}/ceph/cfg/raw"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"
    When I call GET "/cluster/ceph/flags"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"

  Scenario: Metadata's versions need no Ceph, the rest does
    When I call GET "/cluster/ceph/metadata"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"

  @pve9.2
  Scenario: The releases are listed without Ceph
    When I call GET "/nodes/{node}/ceph/releases"
    Then the call succeeds
    And the item with "release" = "tentacle" has "is-default" = "1"
    And the item with "release" = "squid" has "available" = "1"
    And the item with "release" = "reef" has "available" = "0"

  Scenario: The OSD, CephFS and safety calls say the same
    When I call GET "/nodes/{node}/ceph/osd"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"
    When I call GET "/nodes/{node}/ceph/fs"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"
    When I call GET "/nodes/{node}/ceph/pool/rbd/status"
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"
    When I call GET "/nodes/{node}/ceph/cmd-safety"
      | service | osd  |
      | id      | 0    |
      | action  | stop |
    Then PVE answers 500 "binary not installed: /usr/bin/ceph-mon"
