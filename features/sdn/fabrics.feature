@sdn @pve9
Feature: SDN fabrics
  PVE 9 routes between the nodes over fabrics (OpenFabric or OSPF) kept in
  sdn/fabrics.cfg: each fabric has an IP prefix, each node of a fabric a
  router IP inside it and its interfaces. They are part of the pending SDN
  configuration, and the whole file is checked (by PVE's Rust code) before
  it is written. Messages from that code carry the Perl file and line on
  a real PVE, so they are matched by pattern. (A new fabric in the pending
  view has its ID only under "pending", against PVE's own return schema,
  so the runner's schema check cannot read it; the model's tests do.)

  Scenario: A fabric and its node are pending until the configuration is applied
    When I create SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip_prefix      | 198.18.61.7/24 |
      | hello_interval | 3              |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:a}"
    Then the answer has "protocol" = "openfabric"
    And the answer has "ip_prefix" = "198.18.61.0/24"
    And the answer has "hello_interval" = "3"
    And the answer has "digest"
    When I add node "{node}" to SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip         | 198.18.61.1                       |
      | interfaces | name={fabric:a}x                  |
      | interfaces | hello_multiplier=3,name={fabric:a}y |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/node/{fabric:a}/{node}"
    Then the answer has "fabric_id" = "{fabric:a}"
    And the answer has "ip" = "198.18.61.1"
    And the answer has "interfaces/0" = "name={fabric:a}x"
    And the answer has "interfaces/1" = "name={fabric:a}y,hello_multiplier=3"
    When I call GET "/cluster/sdn/fabrics/node/{fabric:a}"
    Then the item with "node_id" = "{node}" has "protocol" = "openfabric"
    When I call GET "/cluster/sdn/fabrics/fabric"
    Then the item with "id" = "{fabric:a}" has "ip_prefix" = "198.18.61.0/24"
    When I call GET "/cluster/sdn/fabrics/fabric"
      | running | 1 |
    Then the answer does not list "id" = "{fabric:a}"
    When I call GET "/cluster/sdn/fabrics/node/{fabric:a}"
      | running | 1 |
    Then PVE answers 500 with a message matching "fabric '{fabric:a}' does not exist in configuration.*"
    When I call GET "/cluster/sdn/fabrics/all"
    Then the answer has "fabrics"
    And the answer has "nodes"

  Scenario: The fabrics' prefixes and protocols are checked
    Given SDN fabric "{fabric:a}" with protocol "openfabric" exists
      | ip_prefix | 198.18.62.0/24 |
    When I create SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip_prefix | 198.18.63.0/24 |
    Then PVE answers 500 with a message matching "adding fabric failed: fabric '{fabric:a}' already exists in config.*"
    When I create SDN fabric "{fabric:b}" with protocol "openfabric"
    Then PVE answers 500 with a message matching "adding fabric failed: fabric '{fabric:b}' does not have an IP prefix configured.*"
    When I create SDN fabric "{fabric:b}" with protocol "openfabric"
      | ip_prefix | 198.18.62.128/25 |
    Then PVE answers 500 with a message matching "adding fabric failed: IP prefix 198.18.62.128/25 in fabric '{fabric:b}' overlaps with IPv4 prefix 198.18.62.0/24 in fabric '{fabric:a}'.*"
    When I create SDN fabric "{fabric:c}" with protocol "ospf"
      | area        | 198.18.62.1    |
      | ip_prefix   | 198.18.64.0/24 |
      | ip6_prefix  | fd18:64::/64   |
    Then PVE answers 500 with a message matching "adding fabric failed: IPv6 is currently not supported for protocol ospf.*"
    When I create SDN fabric "{fabric:c}" with protocol "ospf"
      | area      | 198.18.62.1    |
      | ip_prefix | 198.18.64.0/24 |
    Then the answer is null
    When I create SDN fabric "{fabric:d}" with protocol "ospf"
      | area      | 198.18.62.1    |
      | ip_prefix | 198.18.65.0/24 |
    Then PVE answers 500 with a message matching "adding fabric failed: duplicate OSPF area.*"
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:a}"
      | protocol | ospf |
    Then PVE answers 500 with a message matching "updating fabric failed: node has a different protocol than the referenced fabric.*"

  @pve9.1
  Scenario: 9.1 knows no WireGuard fabric
    When I create SDN fabric "{fabric:d}" with protocol "wireguard"
      | ip_prefix | 198.18.65.0/24 |
    Then parameter "protocol" is rejected with "value 'wireguard' does not have a value in the enumeration 'openfabric, ospf'"

  @pve9.2
  Scenario: A WireGuard fabric has internal nodes with keyed interfaces and external peers
    When I create SDN fabric "{fabric:w}" with protocol "wireguard"
      | ip_prefix            | 198.18.90.0/24 |
      | persistent_keepalive | 25             |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:w}"
    Then the answer has "protocol" = "wireguard"
    And the answer has "persistent_keepalive" = "25"
    When I add node "{fabric:w}x" to SDN fabric "{fabric:w}" with protocol "wireguard"
      | role       | external                                     |
      | ip         | 198.18.90.9                                  |
      | public_key | AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8= |
      | endpoint   | 198.51.100.90:51820                          |
    Then the answer is null
    When I add node "{node}" to SDN fabric "{fabric:w}" with protocol "wireguard"
      | role       | internal                                       |
      | ip         | 198.18.90.1                                    |
      | endpoint   | 192.0.2.90                                     |
      | interfaces | name={fabric:w},listen_port=51890,ip=198.18.91.1/24 |
      | peers      | type=external,node={fabric:w}x,iface={fabric:w} |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/node/{fabric:w}/{node}"
    Then the answer has "role" = "internal"
    And the answer has "endpoint" = "192.0.2.90"
    And the answer has "interfaces/0" matching "^name={fabric:w},listen_port=51890,public_key=[A-Za-z0-9+/]{43}=,ip=198.18.91.1/24$"
    And the answer has "peers/0" = "type=external,node={fabric:w}x,iface={fabric:w}"
    When I call GET "/cluster/sdn/fabrics/node/{fabric:w}/{fabric:w}x"
    Then the answer has "role" = "external"
    And the answer has "public_key" = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
    And the answer has no "interfaces"

  @pve9.2
  Scenario: WireGuard nodes are checked as PVE checks them
    Given SDN fabric "{fabric:w}" with protocol "wireguard" exists
    When I add node "{node}" to SDN fabric "{fabric:w}" with protocol "wireguard"
      | interfaces | name={fabric:w},listen_port=51891 |
    Then PVE answers 500 with a message matching "adding node failed: missing field `role`.*"
    When I add node "{fabric:w}x" to SDN fabric "{fabric:w}" with protocol "wireguard"
      | role     | external            |
      | endpoint | 198.51.100.91:51820 |
    Then PVE answers 500 with a message matching "adding node failed: missing field `public_key`.*"
    When I add node "{node}" to SDN fabric "{fabric:w}" with protocol "wireguard"
      | role       | internal                           |
      | interfaces | name={fabric:w}-too-long,listen_port=1 |
    Then parameter "interfaces[0]" is rejected with "invalid format - format error\nname: invalid format - WireGuard interface name '{fabric:w}-too-long' contains illegal characters or exceeds the eight character limit"
    When I add node "{node}" to SDN fabric "{fabric:w}" with protocol "wireguard"
      | role       | internal                          |
      | interfaces | name={fabric:w},listen_port=51891 |
      | peers      | type=external,node=nobody,iface={fabric:w} |
    Then PVE answers 500 with a message matching "adding node failed: peer configuration references non-existing external node 'nobody'.*"
    When I add node "{node}" to SDN fabric "{fabric:w}" with protocol "wireguard"
      | role       | internal                          |
      | interfaces | name={fabric:w},listen_port=51891 |
    Then the answer is null
    When I call PUT "/cluster/sdn/fabrics/node/{fabric:w}/{node}"
      | protocol | wireguard |
      | role     | external  |
    Then PVE answers 500 with a message matching "updating node failed: cannot change role of existing WireGuard node.*"

  Scenario: A node's router IP lies in its fabric's prefix
    Given SDN fabric "{fabric:a}" with protocol "openfabric" exists
      | ip_prefix | 198.18.66.0/24 |
    When I add node "{node}" to SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip | 198.18.99.1 |
    Then PVE answers 500 with a message matching "adding node failed: node IP 198.18.99.1 is outside the IP prefix 198.18.66.0/24 of the fabric.*"
    When I add node "{node}" to SDN fabric "{fabric:a}" with protocol "openfabric"
    Then PVE answers 500 with a message matching "adding node failed: node '{fabric:a}_{node}' does not have an IP configured for this fabric prefix 198.18.66.0/24.*"
    When I add node "{node}" to SDN fabric "{fabric:a}" with protocol "ospf"
      | ip | 198.18.66.1 |
    Then PVE answers 500 with a message matching "adding node failed: node has a different protocol than the referenced fabric.*"
    When I add node "{node}" to SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip | 198.18.66.1 |
    Then the answer is null
    When I add node "{node}" to SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip | 198.18.66.2 |
    Then PVE answers 500 with a message matching "adding node failed: node '{node}' already exists in config for fabric {fabric:a}.*"
    When I call PUT "/cluster/sdn/fabrics/node/{fabric:a}/{node}"
      | protocol | openfabric |
      | delete   | ip         |
    Then PVE answers 500 with a message matching "updating node failed: node '{fabric:a}_{node}' does not have an IP configured for this fabric prefix 198.18.66.0/24.*"
    When I call PUT "/cluster/sdn/fabrics/node/{fabric:a}/{node}"
      | protocol   | openfabric          |
      | interfaces | name={fabric:a}z    |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/node/{fabric:a}/{node}"
    Then the answer has "interfaces/0" = "name={fabric:a}z"
    When I call DELETE "/cluster/sdn/fabrics/node/{fabric:a}/{node}"
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/node/{fabric:a}/{node}"
    Then PVE answers 500 with a message matching "node '{node}' does not exist in fabric '{fabric:a}'.*"

  Scenario: A fabric a VXLAN zone uses cannot be deleted
    Given SDN fabric "{fabric:a}" with protocol "openfabric" exists
      | ip_prefix      | 198.18.67.0/24 |
      | hello_interval | 3              |
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:a}"
      | protocol      | openfabric     |
      | csnp_interval | 20             |
      | delete        | hello_interval |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:a}"
    Then the answer has "csnp_interval" = "20"
    And the answer has no "hello_interval"
    Given SDN zone "{zone:x}" of type "vxlan" exists
      | fabric | {fabric:a} |
    When I call DELETE "/cluster/sdn/fabrics/fabric/{fabric:a}"
    Then PVE answers 500 with a message matching "deleting fabric failed: this fabric is still used in the VXLAN zone .{zone:x}..*"
    When I call DELETE "/cluster/sdn/zones/{zone:x}"
    Then the answer is null
    When I call DELETE "/cluster/sdn/fabrics/fabric/{fabric:a}"
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/fabric/{fabric:a}"
    Then PVE answers 500 with a message matching "fabric '{fabric:a}' does not exist in configuration.*"

  @destructive @serial
  Scenario: An applied fabric is in the running configuration
    Given SDN fabric "{fabric:a}" with protocol "openfabric" exists
      | ip_prefix | 198.18.68.0/24 |
    And node "{node}" is in SDN fabric "{fabric:a}" with protocol "openfabric"
      | ip | 198.18.68.1 |
    When I apply the SDN configuration
    Then the task ends with "OK"
    When I call GET "/cluster/sdn/fabrics/fabric"
      | running | 1 |
    Then the item with "id" = "{fabric:a}" has "ip_prefix" = "198.18.68.0/24"
    When I call GET "/cluster/sdn/fabrics/node/{fabric:a}"
      | pending | 1 |
    Then the item with "node_id" = "{node}" has no "state"
    When I call PUT "/cluster/sdn/fabrics/node/{fabric:a}/{node}"
      | protocol | openfabric  |
      | ip       | 198.18.68.2 |
    Then the answer is null
    When I call GET "/cluster/sdn/fabrics/node/{fabric:a}"
      | pending | 1 |
    Then the item with "node_id" = "{node}" has "state" = "changed"
    And the item with "node_id" = "{node}" has "pending/ip" = "198.18.68.2"

  @pve9.1
  Scenario: 9.1 deletes no prefix and knows no redistribution
    Given SDN fabric "{fabric:a}" with protocol "openfabric" exists
      | ip_prefix | 198.18.69.0/24 |
    When I call PUT "/cluster/sdn/fabrics/fabric/{fabric:a}"
      | protocol | openfabric |
      | delete   | ip_prefix  |
    Then parameter "delete[0]" is rejected with "value 'ip_prefix' does not have a value in the enumeration 'hello_interval, csnp_interval'"
    When I create SDN fabric "{fabric:b}" with protocol "bgp"
      | ip_prefix | 198.18.70.0/24 |
    Then parameter "protocol" is rejected with "value 'bgp' does not have a value in the enumeration 'openfabric, ospf'"
