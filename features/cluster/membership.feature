@cluster @membership @fake-only @destructive
Feature: Cluster membership
  A joining node is put into the node list with
  POST /cluster/config/nodes/{node} (pvecm addnode), which answers the
  new corosync.conf and the cluster's auth key; the node shows offline
  until it has joined. An administrator takes a node out of the cluster
  with DELETE /cluster/config/nodes/{node} (pvecm delnode): it leaves corosync's node list and the node views.
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

  Scenario: A node enters the node list with the next free node id
    When I call POST "/cluster/config/nodes/pve4"
      | link0      | 192.0.2.14 |
      | apiversion | 1          |
    Then the call succeeds
    And the answer has "corosync_authkey"
    And the answer has "warnings"
    When I call GET "/cluster/config/nodes"
    Then the item with "node" = "pve4" has "nodeid" = "4"
    And the item with "node" = "pve4" has "ring0_addr" = "192.0.2.14"
    When I call GET "/cluster/status"
    Then the item with "name" = "pve4" has "online" = "0"
    When I call GET "/nodes"
    Then the item with "node" = "pve4" has "status" = "offline"
    When I call GET "/cluster/resources"
    Then the item with "id" = "node/pve4" has "status" = "offline"
    When I call GET "/cluster/log"
    Then a log line contains "adding node pve4 to cluster"

  Scenario: PVE's refusals of a new node
    When I call POST "/cluster/config/nodes/pve4"
      | link0 | 192.0.2.12 |
    Then PVE answers 500 "corosync: address '192.0.2.12' already used on link ring0_addr by node 'pve2'"
    When I call POST "/cluster/config/nodes/pve4"
      | link1      | 192.0.2.14 |
      | apiversion | 1          |
    Then PVE answers 500 "corosync: link 0 exists in cluster config but wasn't specified for new node"
    When I call POST "/cluster/config/nodes/pve4"
      | link0      | 192.0.2.14 |
      | link1      | 192.0.2.24 |
    Then PVE answers 500 "corosync: link 1 specified for new node doesn't exist in cluster config"
    When I call POST "/cluster/config/nodes/pve4"
    Then PVE answers 500 "no links and no fallback ip (new_node_ip) given, cannot join cluster"
    When I call POST "/cluster/config/nodes/pve2"
      | new_node_ip | 192.0.2.22 |
    Then PVE answers 500 "can't add existing node 'pve2'"
    When I call POST "/cluster/config/nodes/pve2"
      | new_node_ip | 192.0.2.22 |
      | force       | 1          |
    Then the call succeeds
    When I call GET "/cluster/config/nodes"
    Then the answer is a list of 3 items
    And the item with "node" = "pve2" has "ring0_addr" = "192.0.2.22"
