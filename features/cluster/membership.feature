@cluster @membership @fake-only @destructive
Feature: Cluster membership
  An administrator takes a node out of the cluster with
  DELETE /cluster/config/nodes/{node} (pvecm delnode): it leaves corosync's node list and the node views.
  As on PVE, nothing else is removed: its guests' configs stay in
  /etc/pve/nodes/<node>.

  Background:
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1, ip: 192.0.2.11 }
        - { name: pve2, ip: 192.0.2.12 }
        - { name: pve3, ip: 192.0.2.13, status: offline }
      storages:
        - { id: local, type: dir, path: /var/lib/vz }
      vms:
        - vmid: 300
          node: pve3
          config:
            net0: virtio=BC:24:11:00:03:00,bridge=vmbr0
      """

  Scenario: A node leaves the cluster, its guests' configs stay
    When I call DELETE "/cluster/config/nodes/pve3"
    Then the call succeeds
    When I call GET "/cluster/config/nodes"
    Then the answer is a list of 2 items
    And the answer does not list "node" = "pve3"
    When I call GET "/nodes"
    Then the answer does not list "node" = "pve3"
    When I call GET "/cluster/status"
    Then the answer does not list "name" = "pve3"
    And the item with "type" = "cluster" has "nodes" = "2"
    When I call GET "/cluster/config/totem"
    Then the answer has "config_version" = "2"
    When I call GET "/cluster/resources"
      | type | vm |
    Then the item with "vmid" = "300" has "node" = "pve3"
    When I call GET "/cluster/log"
    Then a log line contains "deleting node pve3 from cluster"

  # PVE also matches the name against each member's ring0 and ring1
  # address, but the node name's format lets no IP address through.
  Scenario: An IP address is no node name
    When I call DELETE "/cluster/config/nodes/192.0.2.12"
    Then parameter "node" is rejected with "invalid format - value does not look like a valid node name"
    When I call GET "/cluster/config/nodes"
    Then the answer is a list of 3 items

  Scenario: PVE's refusals
    When I call DELETE "/cluster/config/nodes/pve1"
    Then PVE answers 500 "Cannot delete myself from cluster!"
    When I call DELETE "/cluster/config/nodes/pve9"
    Then PVE answers 500 "Node/IP: pve9 is not a known host of the cluster."
    When I call GET "/cluster/config/nodes"
    Then the answer is a list of 3 items

  Scenario: Only root@pam removes nodes
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call DELETE "/cluster/config/nodes/pve3"
    Then PVE answers 403 "Permission check failed (user != root@pam)"
