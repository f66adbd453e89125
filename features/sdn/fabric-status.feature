@sdn @pve9
Feature: A node's views of an applied SDN fabric
  PVE asks FRR (vtysh) for a node's interfaces, neighbors and routes of a
  fabric and keeps those of the fabric. fake-pve runs no FRR: it reports
  what FRR would for the applied fabric, with the online members'
  daemons up since the apply. Only applied fabrics are known; a node that
  is no member of the fabric has nothing in it.

  Scenario: A fabric's index on a node lists its neighbors and routes
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:a}"
    Then the answer is a list of 2 items
    And the answer lists "subdir" = "neighbors"
    And the answer lists "subdir" = "routes"
    And the answer does not list "subdir" = "interfaces"

  @destructive @serial
  Scenario: An applied OpenFabric fabric's interfaces on the node
    Given SDN fabric "{fabric:a}" with protocol "openfabric" exists
      | ip_prefix | 198.18.73.0/24 |
    And node "{node}" is in SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip         | 198.18.73.1      |
      | interfaces | name={fabric:a}x |
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:a}/interfaces"
    Then PVE answers 500 with a message matching "(fabric '{fabric:a}' does not exist in configuration|No such file or directory .os error 2.).*"
    When I apply the SDN configuration
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:a}/interfaces"
    Then the item with "name" = "dummy_{fabric:a}" has "type" = "Loopback"
    And the item with "name" = "{fabric:a}x" has "type" = "Point-To-Point"
    And the item with "name" = "{fabric:a}x" has "state" = "Up"
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:a}/neighbors"
    Then the answer is a list of 0 items
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:a}/routes"
    Then the answer is a list of 0 items

  @fake-only
  Scenario: Neighbors and routes of a three-node OpenFabric mesh, one node offline
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: {node} }
        - { name: pve2 }
        - { name: pve3, status: offline }
      """
    And SDN fabric "{fabric:a}" with protocol "openfabric" exists
      | ip_prefix | 198.18.74.0/24 |
    And node "{node}" is in SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip         | 198.18.74.1 |
      | interfaces | name=ens19  |
      | interfaces | name=ens20  |
    And node "pve2" is in SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip         | 198.18.74.2 |
      | interfaces | name=ens19  |
    And node "pve3" is in SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip         | 198.18.74.3 |
      | interfaces | name=ens20  |
    When I apply the SDN configuration
    Then the task ends with "OK"
    When 30252 seconds pass
    And I call GET "/nodes/{node}/sdn/fabrics/{fabric:a}/neighbors"
    Then the answer is a list of 1 item
    And the item with "neighbor" = "pve2" has "status" = "Up"
    And the answer has "0/uptime" matching "^8h24m1[0-9]s$"
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:a}/routes"
    Then the answer is a list of 1 item
    And the item with "route" = "198.18.74.2/32" has "via/0" = "198.18.74.2"
    When I call GET "/nodes/pve3/sdn/fabrics/{fabric:a}/routes"
    Then PVE answers 595 "No route to host"

  @fake-only
  Scenario: OSPF neighbors on a broadcast subnet are elected DR and Backup
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: {node} }
        - { name: pve2 }
        - { name: pve3 }
      """
    And SDN fabric "{fabric:o}" with protocol "ospf" exists
      | area      | 0              |
      | ip_prefix | 198.18.75.0/24 |
    And node "{node}" is in SDN fabric "{fabric:o}" with protocol "ospf"
      | ip         | 198.18.75.1                 |
      | interfaces | name=ens21,ip=10.75.0.1/24 |
    And node "pve2" is in SDN fabric "{fabric:o}" with protocol "ospf"
      | ip         | 198.18.75.2                 |
      | interfaces | name=ens21,ip=10.75.0.2/24 |
    And node "pve3" is in SDN fabric "{fabric:o}" with protocol "ospf"
      | ip         | 198.18.75.3                 |
      | interfaces | name=ens21,ip=10.75.0.3/24 |
    When I apply the SDN configuration
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:o}/interfaces"
    Then the item with "name" = "ens21" has "type" = "Broadcast"
    And the item with "name" = "ens21" has "state" = "up"
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:o}/neighbors"
    Then the item with "neighbor" = "10.75.0.3" has "status" = "Full/DR"
    And the item with "neighbor" = "10.75.0.2" has "status" = "Full/Backup"
    When I call GET "/nodes/{node}/sdn/fabrics/{fabric:o}/routes"
    Then the item with "route" = "198.18.75.3/32" has "via/0" = "10.75.0.3"
    When I call GET "/nodes/{node}/sdn/fabrics/nofabric/routes"
    Then PVE answers 500 with a message matching "fabric 'nofabric' does not exist in configuration.*"
