@nodes
Feature: A node's own settings
  Each node keeps its DNS resolver, /etc/hosts, time zone and its own
  options (/etc/pve/nodes/<node>/config). Reading them needs Sys.Audit;
  PVE checks what is written before it writes it.

  Scenario: DNS, hosts and time as monitoring tools read them
    When I call GET "/nodes/{node}/dns"
    Then the call succeeds
    And the answer has "dns1"
    When I call GET "/nodes/{node}/hosts"
    Then the answer has "data"
    And the answer has "digest"
    When I call GET "/nodes/{node}/time"
    Then the answer's fields are "localtime,time,timezone"

  Scenario: What PVE refuses to write
    When I call PUT "/nodes/{node}/time"
      | timezone | Mars/Olympus_Mons |
    Then parameter "timezone" is rejected with "No such timezone"
    When I call POST "/nodes/{node}/hosts"
      | data | 300.0.0.1 broken |
    Then parameter "data" is rejected with "Invalid IP '300.0.0.1'"
    When I call POST "/nodes/{node}/hosts"
      | data | 192.0.2.1 bad_name |
    Then parameter "data" is rejected with "Invalid Hostname 'bad_name'"

  # Waking a node needs Sys.PowerMgmt, which the book's runner role
  # does not grant (it could also power nodes off).
  @fake-only
  Scenario: A node cannot wake itself
    When I call POST "/nodes/{node}/wakeonlan"
    Then PVE answers 500 "'{node}' is local node, cannot wake my self!"

  @destructive
  Scenario: The time zone changes the local time, and back
    When I call GET "/nodes/{node}/time"
    And I remember the answer's "timezone" as "zone"
    And I call PUT "/nodes/{node}/time"
      | timezone | Asia/Kolkata |
    Then the call succeeds
    When I call GET "/nodes/{node}/time"
    Then the answer has "timezone" = "Asia/Kolkata"
    When I call PUT "/nodes/{node}/time"
      | timezone | {var:zone} |
    Then the call succeeds

  @fake-only
  Scenario: The node's options read back with a digest that guards them
    When I call GET "/nodes/{node}/config"
    Then the answer is an empty object
    When I call PUT "/nodes/{node}/config"
      | description | rack 4                         |
      | wakeonlan   | mac=BC:24:11:00:00:01          |
    Then the call succeeds
    When I call GET "/nodes/{node}/config"
    Then the answer has "description" matching "rack 4\s*"
    And the answer has "wakeonlan" = "mac=BC:24:11:00:00:01"
    When I call PUT "/nodes/{node}/config"
      | delete | wakeonlan                                |
      | digest | 0000000000000000000000000000000000000000 |
    Then PVE answers 500 "detected modified configuration - file changed by other user? Try again."
    When I call GET "/nodes/{node}/config"
      | property | wakeonlan |
    Then the answer's fields are "wakeonlan"

  @fake-only
  Scenario: DNS servers replace the old ones, hosts follow their digest
    When I call PUT "/nodes/{node}/dns"
      | search | lab.example |
      | dns1   | 192.0.2.53  |
      | dns2   | 192.0.2.53  |
    Then the call succeeds
    When I call GET "/nodes/{node}/dns"
    Then the answer's fields are "dns1,search"
    And the answer has "dns1" = "192.0.2.53"
    When I call GET "/nodes/{node}/hosts"
    And I remember the answer's "digest" as "digest"
    And I call POST "/nodes/{node}/hosts"
      | data   | 127.0.0.1 localhost |
      | digest | {var:digest} |
    Then the call succeeds
    When I call POST "/nodes/{node}/hosts"
      | data   | 127.0.0.1 localhost |
      | digest | {var:digest} |
    Then PVE answers 500 "detected modified configuration - file changed by other user? Try again."
