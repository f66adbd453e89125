@auth
Feature: Privilege separation of API tokens
  A token without privilege separation acts with its user's privileges; a
  privilege-separated token gets only what ACLs grant the token itself,
  and never more than its user has.

  Background:
    Given a user "alice" with password "wonderland"
    And "alice" has the role "PVEAuditor" on "/"

  Scenario: A token without privilege separation is its user
    Given "alice" has an API token "alice!full"
      | privsep | 0 |
    When I use the API token "alice!full"
    And I read the cluster status
    Then the call succeeds
    And "alice!full" has "Sys.Audit" on "/"

  Scenario: A privilege-separated token starts with nothing
    Given "alice" has an API token "alice!sep"
    When I use the API token "alice!sep"
    And I read the cluster status
    Then PVE answers 403 "Permission check failed (/, Sys.Audit)"
    And "alice!sep" has no privileges on "/"

  Scenario: A privilege-separated token gets its own ACLs, limited by its user's
    Given "alice" has an API token "alice!sep"
    And "token alice!sep" has the role "PVEAdmin" on "/"
    Then "alice!sep" has "Sys.Audit, VM.Audit" on "/"
    And "alice!sep" does not have "VM.Allocate, Sys.Console" on "/"
    When I use the API token "alice!sep"
    And I read the cluster status
    Then the call succeeds

  Scenario: A call that needs a ticket refuses API tokens
    Given "alice" has an API token "alice!full"
      | privsep | 0 |
    When I use the API token "alice!full"
    And I call PUT "/access/password"
      | userid   | {user:alice} |
      | password | looking-glass |
    Then PVE answers 403 "Permission check failed (URI '/access/password' not available with API token, need proper ticket.\n)"

  Scenario: A user without privileges is refused with the privilege and path PVE checked
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I read the cluster status
    Then PVE answers 403 "Permission check failed (/, Sys.Audit)"
    When I read the status of node "{node}"
    Then PVE answers 403 "Permission check failed (/nodes/{node}, Sys.Audit)"
    When I stop the guests "{vm1}" on node "{node}"
    Then PVE answers 403 "Permission check failed (/vms/{vm1}, VM.PowerMgmt)"

  Scenario: Without Sys.Audit the node list has no figures
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I list the nodes
    Then the item with "node" = "{node}" has "status" = "online"
    And the item with "node" = "{node}" has no "maxmem"
