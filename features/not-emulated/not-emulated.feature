@fake-only @not-emulated
Feature: What fake-pve does not emulate
  fake-pve serves every endpoint of the release: it routes, authenticates,
  checks permissions and validates each of them, then answers as an empty
  PVE would, or says plainly that it does not emulate the call. It never
  invents placeholder items.

  @pve9
  Scenario: Work that is not emulated for its parameters says so
    When I call GET "/nodes/pve/capabilities/qemu/machines"
      | arch | aarch64 |
    Then PVE answers 501 "Method 'GET /api2/json/nodes/pve/capabilities/qemu/machines' is not emulated by fake-pve for arch 'aarch64'"

  Scenario: It is still validated and permission-checked first
    When I call GET "/nodes/pve/ceph/cmd-safety"
      | service | osd     |
      | id      | 0       |
      | action  | explode |
    Then parameter "action" is rejected with "value 'explode' does not have a value in the enumeration 'stop, destroy'"
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call GET "/nodes/pve/ceph/cmd-safety"
      | service | osd  |
      | id      | 0    |
      | action  | stop |
    Then PVE answers 403 "Permission check failed (/, Sys.Audit)"

  Scenario: A collection that is empty on a fresh install answers an empty list
    When I call GET "/cluster/ha/resources"
    Then the answer is a list of 0 items
    When I call GET "/cluster/replication"
    Then the answer is a list of 0 items

  Scenario: A directory answers the children the schema names
    When I call GET "/cluster/ha"
    Then the answer lists "id" = "resources"
    And the answer lists "id" = "status"

  Scenario: An unknown path is not implemented, as on PVE
    When I call GET "/nodes/pve/teleport"
    Then PVE answers 501 "Method 'GET /nodes/pve/teleport' not implemented"
