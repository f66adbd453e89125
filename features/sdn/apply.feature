@sdn
Feature: Applying the SDN configuration
  PUT /cluster/sdn makes the running configuration the pending one (task
  reloadnetworkall); an applied VNet is a bridge guests' NICs can use.
  Applying reaches every pending change of the cluster, not only a
  scenario's own: these scenarios are @destructive, and run alone
  (@serial) so that no other scenario's pending objects are applied.

  @destructive @serial
  Scenario: An applied VNet is a bridge a VM can start on
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
    When I create VM "{vm1}" with:
      | memory | 128                    |
      | net0   | virtio,bridge={vnet:a} |
    Then the task ends with "OK"
    When I start VM "{vm1}"
    Then the task ends with an error matching ".*bridge '{vnet:a}' does not exist.*"
    When I apply the SDN configuration
    Then the task ends with "OK"
    When I call GET "/cluster/sdn/vnets/{vnet:a}"
      | running | 1 |
    Then the answer has "zone" = "{zone:s}"
    When I call GET "/cluster/sdn/zones/{zone:s}"
      | pending | 1 |
    Then the answer has no "state"
    When I list the network interfaces of node "{node}"
      | type | any_bridge |
    Then the item with "iface" = "{vnet:a}" has "type" = "vnet"
    When I start VM "{vm1}"
    Then the task ends with "OK"

  @fake-only @pve9
  Scenario: Applied zones are network resources on 9.x
    Given SDN zone "{zone:s}" of type "simple" exists
    When I apply the SDN configuration
    Then the task ends with "OK"
    When I call GET "/cluster/resources"
    Then the item with "id" = "network/{node}/zone/{zone:s}" has "zone-type" = "simple"
    And the item with "id" = "network/{node}/zone/{zone:s}" has "status" = "available"

  @fake-only @pve8
  Scenario: Applied zones are sdn resources on 8.4
    Given SDN zone "{zone:s}" of type "simple" exists
    When I apply the SDN configuration
    Then the task ends with "OK"
    When I call GET "/cluster/resources"
      | type | sdn |
    Then the item with "id" = "sdn/{node}/{zone:s}" has "status" = "available"

  @fake-only @pve9
  Scenario: The 9.x global lock guards the configuration until released
    Given SDN zone "{zone:s}" of type "simple" exists
    When I call POST "/cluster/sdn/lock"
    Then PVE answers 500 "could not acquire lock for SDN config: configuration has pending changes"
    When I call POST "/cluster/sdn/lock"
      | allow-pending | 1 |
    Then the call succeeds
    When I remember the answer as "token"
    And I create VNet "{vnet:a}" in zone "{zone:s}"
    Then PVE answers 500 "create sdn vnet object failed: invalid lock token provided!"
    When I create VNet "{vnet:a}" in zone "{zone:s}"
      | lock-token | {var:token} |
    Then the answer is null
    When I call POST "/cluster/sdn/rollback"
      | lock-token | {var:token} |
    Then the answer is null
    When I call GET "/cluster/sdn/zones/{zone:s}"
    Then PVE answers 500 "sdn '{zone:s}' does not exist"
    When I call POST "/cluster/sdn/lock"
    Then the call succeeds
    When I call DELETE "/cluster/sdn/lock"
      | force | 1 |
    Then the answer is null
