@cluster @services
Feature: The cluster's tasks, log and corosync configuration
  Monitoring and admin tools read every node's recent tasks from
  /cluster/tasks, the cluster log from /cluster/log and the corosync
  configuration from /cluster/config.

  # pvestatd broadcasts each node's task list every ten seconds, so on a
  # real cluster a task shows there only a little later.
  @fake-only
  Scenario: The cluster's tasks include a task just run
    Given VM "{vm1}" was created
    When I call GET "/cluster/tasks"
    Then the answer lists "type" = "qmcreate"
    And the item with "id" = "{vm1}" has "node" = "{node}"
    And the item with "id" = "{vm1}" has "status" = "OK"
    And the item with "id" = "{vm1}" has "endtime"

  Scenario: The cluster log tells of the tasks
    Given VM "{vm1}" was created
    When I call GET "/cluster/log"
      | max | 100 |
    Then a log line contains "starting task UPID:{node}:"
    And every item has "uid"
    And every item has "pri"
    And every item has "tag"

  Scenario: Without Sys.Syslog a user reads only what is about them
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call GET "/cluster/log"
    Then the answer does not list "user" = "root@pam"
    When I call GET "/cluster/tasks"
    Then the answer does not list "user" = "root@pam"

  Scenario: The join API version and the QDevice status
    When I call GET "/cluster/config/apiversion"
    Then the call succeeds
    When I call GET "/cluster/config/qdevice"
    Then the call succeeds

  @fake-only
  Scenario: A standalone node has no corosync configuration, until it makes a cluster
    When I call GET "/cluster/config/nodes"
    Then the answer is a list of 0 items
    When I call GET "/cluster/config/join"
    Then PVE answers 424 "node is not in a cluster, no join info available!"
    When I call POST "/cluster/config"
      | clustername | lab |
    Then the call succeeds
    When I call GET "/cluster/config/nodes"
    Then the item with "node" = "pve" has "nodeid" = "1"
    And the item with "node" = "pve" has "quorum_votes" = "1"
    When I call GET "/cluster/config/totem"
    Then the answer has "cluster_name" = "lab"
    And the answer has "secauth" = "on"
    When I call GET "/cluster/status"
    Then the item with "type" = "cluster" has "name" = "lab"
    When I call POST "/cluster/config"
      | clustername | other |
    Then PVE answers 500 "cluster config '/etc/pve/corosync.conf' already exists"

  @fake-only
  Scenario: A member names its cluster's nodes and how to join
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1, ip: 192.0.2.11 }
        - { name: pve2, ip: 192.0.2.12 }
      """
    When I call GET "/cluster/config/nodes"
    Then the item with "node" = "pve2" has "ring0_addr" = "192.0.2.12"
    And the item with "node" = "pve2" has "nodeid" = "2"
    When I call GET "/cluster/config/join"
      | node | pve2 |
    Then the answer has "preferred_node" = "pve2"
    And the answer has "config_digest"
    And the answer has "totem/cluster_name" = "lab"
    When I call GET "/cluster/config/join"
      | node | pve9 |
    Then PVE answers 500 "unknown node 'pve9'"
