@auth
Feature: CSRF prevention tokens
  Writes made with a ticket must carry the CSRF prevention token that came
  with it; API tokens need none.

  Background:
    Given a user "alice" with password "wonderland"
    And "alice" has the role "PVEUserAdmin" on "/access"
    And "alice" logs in with password "wonderland"

  Scenario: A write with a ticket but without the CSRF token is refused
    When "alice" calls PUT "/access/users/{user:alice}" with the ticket but without the CSRF token
      | comment | changed |
    Then PVE answers 401 "Permission denied - invalid csrf token" with no body

  Scenario: A write with a wrong CSRF token is refused
    When "alice" calls PUT "/access/users/{user:alice}" with the ticket and the CSRF token "00000000:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
      | comment | changed |
    Then PVE answers 401 "Permission denied - invalid csrf token" with no body

  Scenario: Another user's CSRF token does not fit the ticket
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When "alice" calls PUT "/access/users/{user:alice}" with the ticket and the CSRF token "{csrf:bob}"
      | comment | changed |
    Then PVE answers 401 "Permission denied - invalid csrf token" with no body

  Scenario: A write with the right CSRF token goes through
    When "alice" calls PUT "/access/users/{user:alice}" with the ticket and the CSRF token "{csrf:alice}"
      | comment | changed |
    Then the answer is null
    When I read the user "alice"
    Then the answer has "comment" = "changed"

  Scenario: Reads need no CSRF token
    When "alice" calls GET "/access/users/{user:alice}" with the ticket but without the CSRF token
    Then the call succeeds

  Scenario: API tokens need no CSRF token
    Given "alice" has an API token "alice!ci"
      | privsep | 0 |
    When I use the API token "alice!ci"
    And I update the user "alice" with:
      | comment | by token |
    Then the answer is null
