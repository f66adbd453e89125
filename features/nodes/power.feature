@nodes
Feature: Node power
  `POST /nodes/{node}/status` reboots or shuts a node down: its guests
  stop (a `stopall` task), then the node is offline in the node list,
  the cluster status and resources, and calls proxied to it fail with
  595. A reboot is back after a minute of the emulated clock; a shut-down
  node stays off until woken on LAN (or brought back through fake-pve's
  control API), and boots its `onboot` guests.

  @destructive
  Scenario: Rebooting or shutting down a node needs Sys.PowerMgmt on it
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I reboot node "{node}"
    Then PVE answers 403 "Permission check failed (/nodes/{node}, Sys.PowerMgmt)"

  @destructive
  Scenario: The command is one of reboot and shutdown
    When I call POST "/nodes/{node}/status"
      | command | halt |
    Then parameter "command" is rejected with "value 'halt' does not have a value in the enumeration 'reboot, shutdown'" for root@pam
    And PVE answers 403 "Permission check failed (/nodes/{node}, Sys.PowerMgmt)" to anyone else

  @fake-only
  Scenario: A rebooted node goes offline, stops its guests and comes back by itself
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1 }
        - { name: pve2 }
      vms:
        - { vmid: {vm1}, node: pve2, status: running, config: { onboot: 1 } }
        - { vmid: {vm2}, node: pve2, status: running }
      """
    When I reboot node "pve2"
    Then the answer is null
    And node "pve2" is offline in the node list
    When I read the status of node "pve2"
    Then PVE answers 595 "No route to host"
    When I read the cluster status
    Then the item with "name" = "pve2" has "online" = "0"
    When 59 seconds pass
    Then node "pve2" is offline in the node list
    When 1 second passes
    Then node "pve2" is online in the node list
    And guest "{vm1}" is "running"
    And guest "{vm2}" is "stopped"

  @fake-only
  Scenario: A shut-down node stays off until woken on LAN
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1 }
        - { name: pve2 }
      """
    When I call PUT "/nodes/pve2/config"
      | wakeonlan | mac=BC:24:11:AA:BB:CC |
    Then the call succeeds
    When I shut down node "pve2"
    And 600 seconds pass
    Then node "pve2" is offline in the node list
    When I call POST "/nodes/pve2/wakeonlan"
    Then the answer is "BC:24:11:AA:BB:CC"
    When 60 seconds pass
    Then node "pve2" is online in the node list

  @fake-only
  Scenario: The control API brings a shut-down node back at once
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1 }
        - { name: pve2 }
      """
    When I shut down node "pve2"
    Then node "pve2" is offline in the node list
    When node "pve2" is booted through the control API
    Then node "pve2" is online in the node list

  @fake-only
  Scenario: execute answers each call of the batch on its own
    When I run these calls on node "{node}":
      """
      [
        { "method": "GET", "path": "version" },
        { "method": "GET", "path": "no/such/thing" },
        { "method": "GET", "path": "qemu", "args": { "node": "{node}" } }
      ]
      """
    Then call 1 of the batch answered 200
    And call 2 of the batch answered 500 "no handler for 'nodes/{node}/no/such/thing'"
    And call 3 of the batch answered 400
