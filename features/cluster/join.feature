@cluster @join @fake-only @destructive
Feature: Joining a cluster
  A standalone node joins the cluster of another PVE with
  POST /cluster/config/join (pvecm add, the web interface's Join
  Cluster): a clusterjoin task logs in there as root@pam over HTTPS, the
  cluster's certificate trusted by its fingerprint alone, asks the
  cluster's addnode and finishes locally. Here the cluster is a second
  fake-pve on loopback.

  Background:
    Given the cluster is seeded with:
      """
      nodes:
        - { name: pve2, ip: 192.0.2.12 }
      """
    And a second fake-pve runs the cluster:
      """
      cluster: lab
      nodes:
        - { name: pve1, ip: 192.0.2.11 }
      users:
        - { userid: alice@pve, comment: Alice }
      groups:
        - { groupid: ops, members: [alice@pve] }
      """

  Scenario: A standalone node joins and both sides list it
    When I call POST "/cluster/config/join"
      | hostname    | {var:cluster_host}        |
      | fingerprint | {var:cluster_fingerprint} |
      | password    | password                  |
    And the join has ended
    Then the task ends with "OK"
    When I read the task log
    Then the log's last line is "TASK OK"
    When I call GET "/cluster/config/nodes"
    Then the answer is a list of 2 items
    And the item with "node" = "pve2" has "nodeid" = "2"
    And the item with "node" = "pve2" has "ring0_addr" = "192.0.2.12"
    When I call GET "/cluster/status"
    Then the item with "type" = "cluster" has "name" = "lab"
    And the item with "name" = "pve1" has "online" = "1"
    When I call GET "/access/users"
    Then the answer lists "userid" = "alice@pve"
    When I call GET "/access/groups"
    Then the item with "groupid" = "ops" has "users" = "alice@pve"
    When I act as "the cluster"
    And I call GET "/cluster/config/nodes"
    Then the item with "node" = "pve2" has "ring0_addr" = "192.0.2.12"
    When I call GET "/nodes"
    Then the item with "node" = "pve2" has "status" = "online"

  Scenario: The join's refusals end its task
    When I call POST "/cluster/config/join"
      | hostname    | {var:cluster_host}        |
      | fingerprint | {var:cluster_fingerprint} |
      | password    | wrong                     |
    And the join has ended
    Then the task ends with "401 authentication failure"
    When I call POST "/cluster/config/join"
      | hostname    | {var:cluster_host}                                                                              |
      | fingerprint | 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00 |
      | password    | password                                                                                        |
    And the join has ended
    Then the task ends with "fingerprint '{var:cluster_fingerprint}' not verified, abort!"
    When I call POST "/cluster/config/join"
      | hostname    | {var:cluster_host}        |
      | fingerprint | {var:cluster_fingerprint} |
      | password    | password                  |
      | link0       | 192.0.2.99                |
    And the join has ended
    Then the task ends with "Check if node may join a cluster failed!"
    When I call GET "/cluster/config/nodes"
    Then the answer is a list of 0 items

  Scenario: Only root@pam joins a node to a cluster
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call POST "/cluster/config/join"
      | hostname    | {var:cluster_host}        |
      | fingerprint | {var:cluster_fingerprint} |
      | password    | password                  |
    Then PVE answers 403 "Permission check failed (user != root@pam)"
