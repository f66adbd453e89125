@nodes
Feature: A node's services
  /nodes/{node}/services lists the systemd units PVE manages; start,
  stop, restart and reload run as tasks (srvstart, srvstop, srvrestart,
  srvreload) and the unit's state follows. PVE refuses to stop the units
  its API needs.

  Scenario: The API's own daemons run
    When I call GET "/nodes/{node}/services"
    Then the item with "service" = "pveproxy" has "active-state" = "active"
    And the item with "service" = "pvedaemon" has "state" = "running"
    And every item has "unit-state"
    When I call GET "/nodes/{node}/services/pvestatd/state"
    Then the answer has "desc" = "PVE Status Daemon"
    When I call GET "/nodes/{node}/services/pvestatd"
    Then the answer is a list of 5 items

  @pve9
  Scenario: 9.x lists qmeventd and lxcfs
    When I call GET "/nodes/{node}/services"
    Then the answer lists "service" = "qmeventd"
    And the answer lists "service" = "lxcfs"

  @pve8
  Scenario: 8.4 does not list qmeventd
    When I call GET "/nodes/{node}/services"
    Then the answer does not list "service" = "qmeventd"

  Scenario: Stopping pveproxy is refused by its task
    When I stop service "pveproxy" of node "{node}"
    Then the answer is a task ID
    And the task ends with "invalid service cmd 'pveproxy stop': refusing to stop essential service!"
    When I call GET "/nodes/{node}/services/pveproxy/state"
    Then the answer has "state" = "running"

  @destructive
  Scenario: A stopped service shows in its state and in the journal
    When I stop service "pvestatd" of node "{node}"
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/services/pvestatd/state"
    Then the answer has "active-state" = "inactive"
    When I call GET "/nodes/{node}/syslog"
      | service | pvestatd |
      | limit   | 500      |
    Then a line of the answer contains "Stopped pvestatd.service"
    When I start service "pvestatd" of node "{node}"
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/services/pvestatd/state"
    Then the answer has "active-state" = "active"
