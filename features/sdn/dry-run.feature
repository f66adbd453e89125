@sdn
Feature: The SDN dry run and the EVPN tables of a node
  GET /cluster/sdn/dry-run renders, for a node, the interfaces file and
  the FRR configuration the pending SDN configuration would give and
  answers their unified diffs against the files the last apply wrote;
  a file that would not change gives no diff. Once an EVPN zone is
  applied, a node's ip-vrf lists the routes of the zone's VRF and a
  VNet's mac-vrf the MAC/IP entries of the guests on it.

  @pve9
  Scenario: The dry run shows the bridge a pending VNet would get
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
      | alias | dry run |
    When I call GET "/cluster/sdn/dry-run"
      | node | {node} |
    Then the answer has "interfaces-diff" matching "(?s)--- /etc/network/interfaces.d/sdn\t.*\n\+\+\+ /proc/[0-9]+/fd/[0-9]+\t.*\n\+auto {vnet:a}\n\+iface {vnet:a}\n\+\tbridge_ports none\n\+\tbridge_stp off\n\+\tbridge_fd 0\n\+\talias dry run\n.*"
    And the answer has "frr-diff"

  @destructive @serial @pve9
  Scenario: An applied EVPN zone's tables hold its subnet and its guests
    Given SDN controller "{controller:e}" of type "evpn" exists
      | asn   | 65000     |
      | peers | 127.0.0.1 |
    And SDN zone "{zone:e}" of type "evpn" exists
      | controller | {controller:e} |
      | vrf-vxlan  | 10000          |
    And VNet "{vnet:e}" in zone "{zone:e}" exists
      | tag | 20000 |
    And subnet "10.77.0.0/24" on VNet "{vnet:e}" exists
      | gateway | 10.77.0.1 |
    When I call GET "/cluster/sdn/dry-run"
      | node | {node} |
    Then the answer has "frr-diff" matching "(?s).*\n\+vrf vrf_{zone:e}\n\+ vni 10000\n\+exit-vrf\n.*"
    And the answer has "interfaces-diff" matching "(?s).*\n\+auto vxlan_{vnet:e}\n\+iface vxlan_{vnet:e}\n\+\tvxlan-id 20000\n.*"
    When I apply the SDN configuration
    Then the task ends with "OK"
    When I call GET "/cluster/sdn/dry-run"
      | node | {node} |
    Then the answer has "frr-diff" = "null"
    And the answer has "interfaces-diff" = "null"
    When I call GET "/nodes/{node}/sdn/zones/{zone:e}/ip-vrf"
    Then the item with "ip" = "10.77.0.0/24" has "protocol" = "connected"
    And the item with "ip" = "10.77.0.0/24" has "nexthops/0" = "{vnet:e}"
    And the item with "ip" = "10.77.0.1/32" has "protocol" = "local"
    And the item with "ip" = "0.0.0.0/0" has "protocol" = "kernel"
    Given VM "{vm1}" was created with:
      | memory    | 128                                      |
      | net0      | virtio=BC:24:11:77:00:01,bridge={vnet:e} |
      | ipconfig0 | ip=10.77.0.5/24                          |
    When I call GET "/nodes/{node}/sdn/vnets/{vnet:e}/mac-vrf"
    Then the answer is a list of 0 items
    When I start VM "{vm1}"
    Then the task succeeds
    When I call GET "/nodes/{node}/sdn/vnets/{vnet:e}/mac-vrf"
    Then the item with "ip" = "10.77.0.5" has "mac" = "bc:24:11:77:00:01"
    When I call GET "/nodes/{node}/sdn/zones/{zone:e}/ip-vrf"
    Then the answer does not list "ip" = "10.77.0.5/32"
