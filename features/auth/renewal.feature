@auth
Feature: Ticket renewal and expiry
  A ticket is valid for two hours. A client renews it by logging in again
  with the ticket as the password.

  Background:
    Given a user "alice" with password "wonderland"
    And "alice" logs in with password "wonderland"

  Scenario: A ticket renews itself when given as the password
    When "alice" renews the ticket
    Then the ticket is for "alice"
    When I call GET "/version" with the header "Cookie: PVEAuthCookie={ticket:alice}"
    Then the call succeeds

  Scenario: A ticket does not renew another user's session
    Given a user "bob" with password "builder1"
    When "alice" asks for a ticket for "bob" with the own ticket
    Then PVE answers 401 "authentication failure"

  @fake-only @pve9
  Scenario: A ticket expires after two hours; a renewed one lives on
    Given 3600 seconds have passed
    When "alice" renews the ticket
    Then the ticket was issued at 1790003600
    When 3601 seconds pass
    And I call GET "/version" with the header "Cookie: PVEAuthCookie={ticket:alice-old}"
    Then PVE answers 401 "Authentication failed!" with no body
    When I call GET "/version" with the header "Cookie: PVEAuthCookie={ticket:alice}"
    Then the call succeeds

  @fake-only
  Scenario: root@pam may ask for a ticket for another user with its own ticket
    Given "root@pam" logs in with password "password"
    When "root@pam" asks for a ticket for "alice" with the own ticket
    Then the ticket is for "alice"
