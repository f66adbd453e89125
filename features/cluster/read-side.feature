@cluster
Feature: Reading the cluster
  Version, nodes, node status, cluster status and resources, as monitoring
  and inventory tools read them.

  Scenario: The version names the release
    When I read the version
    Then the version is the release the target runs
    And the answer has no "console"

  Scenario: The node's version is the cluster's
    When I read the version of node "{node}"
    Then the answer has "release" = "{release}"

  Scenario: The node list shows each node online with its figures
    When I list the nodes
    Then the item with "node" = "{node}" has "status" = "online"
    And the item with "node" = "{node}" has "id" = "node/{node}"
    And the item with "node" = "{node}" has "type" = "node"
    And every item has "ssl_fingerprint"
    And every item has "level"

  Scenario: A node's status has the figures PVE reports
    When I read the status of node "{node}"
    Then the answer has "uptime"
    And the answer has "loadavg/2"
    And the answer has "memory/total"
    And the answer has "rootfs/avail"
    And the answer has "cpuinfo/cpus"
    And the answer has "pveversion" matching "pve-manager/{release}\.\d+/[0-9a-f]+"
    And the answer has "kversion"

  Scenario: A node's index lists its sub-directories
    When I read the node "{node}"
    Then the answer lists "name" = "status"
    And the answer lists "name" = "tasks"

  Scenario: An unknown node name fails the host name lookup
    When I read the status of node "nosuchnode"
    Then PVE answers 500 "hostname lookup 'nosuchnode' failed - failed to get address info for: nosuchnode: Name or service not known"

  Scenario: The cluster status lists the node answering
    When I read the cluster status
    Then the answer lists "type" = "node"
    And the item with "name" = "{node}" has "online" = "1"

  @fake-only
  Scenario: A standalone node lists only itself
    When I read the cluster status
    Then the answer is a list of 1 item
    And the item with "name" = "pve" has "local" = "1"
    And the item with "name" = "pve" has "id" = "node/pve"

  @fake-only
  Scenario: A cluster lists itself and every member, online or not
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1, ip: 192.0.2.11 }
        - { name: pve2, ip: 192.0.2.12 }
        - { name: pve3, ip: 192.0.2.13, status: offline }
      """
    When I read the cluster status
    Then the item with "type" = "cluster" has "name" = "lab"
    And the item with "type" = "cluster" has "nodes" = "3"
    And the item with "name" = "pve3" has "online" = "0"
    And the item with "name" = "pve1" has "local" = "1"
    When I read the status of node "pve3"
    Then PVE answers 595 "No route to host"
    When I list the nodes
    Then the item with "node" = "pve3" has "status" = "offline"

  Scenario: Cluster resources can be filtered by type
    When I list the cluster resources of type "node"
    Then every item has "type" = "node"
    And the answer lists "node" = "{node}"
    When I list the cluster resources of type "storage"
    Then every item has "type" = "storage"
    And every item has "plugintype"
    When I list the cluster resources of type "pool"
    Then parameter "type" is rejected with "value 'pool' does not have a value in the enumeration 'vm, storage, node, sdn'"

  @fake-only
  Scenario: Guests appear among the resources
    Given the node has the guests:
      | vmid  | name    | status  |
      | {vm1} | gateway | running |
      | {vm2} | db      | stopped |
    When I list the cluster resources of type "vm"
    Then the answer is a list of 2 items
    And the item with "vmid" = "{vm1}" has "status" = "running"
    And the item with "vmid" = "{vm1}" has "id" = "qemu/{vm1}"
    And the item with "vmid" = "{vm2}" has "name" = "db"
