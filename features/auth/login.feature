@auth
Feature: Logging in with a password
  Automation logs in with POST /access/ticket and gets a ticket, which it
  sends back as the PVEAuthCookie cookie, and a CSRF prevention token,
  which it sends with every write made with that ticket.

  Background:
    Given a user "alice" with password "wonderland"

  Scenario: A login answers a ticket, a CSRF prevention token and the capabilities
    When "alice" logs in with password "wonderland"
    Then the ticket is for "alice"
    And the answer has "cap/vms"
    And the answer has "cap/access"

  Scenario: The realm may be given apart from the user name
    When "alice" logs in to realm "pve" with password "wonderland"
    Then the ticket is for "alice"

  Scenario: A wrong password is refused
    When "alice" logs in with password "rabbithole"
    Then PVE answers 401 "authentication failure"

  Scenario: An unknown user is refused like a wrong password
    When "nobody" logs in with password "wonderland"
    Then PVE answers 401 "authentication failure"

  Scenario: A disabled user cannot log in
    Given a user "bob" with password "builder1"
      | enable | 0 |
    When "bob" logs in with password "builder1"
    Then PVE answers 401 "authentication failure"

  Scenario: A login without a password is a parameter error
    When I log in with:
      | username | {user:alice} |
    Then parameter "password" is rejected with "property is missing and it is not optional"

  Scenario: A malformed realm is a parameter error
    When I log in with:
      | username | alice      |
      | realm    | p!         |
      | password | wonderland |
    Then parameter "realm" is rejected with "invalid format - value does not look like a valid realm"

  Scenario: The ticket travels as a cookie, escaped or not, or in the Authorization header
    Given "alice" logs in with password "wonderland"
    When I call GET "/version" with the header "Cookie: PVEAuthCookie={ticket:alice}"
    Then the call succeeds
    When I call GET "/version" with the header "Cookie: lang=en; PVEAuthCookie={ticket-escaped:alice}"
    Then the call succeeds
    When I call GET "/version" with the header "Authorization: PVEAuthCookie={ticket:alice}"
    Then the call succeeds

  Scenario: Without credentials only the open calls answer
    When I call GET "/version" without credentials
    Then PVE answers 401 "No ticket" with no body
    When I call GET "/access/ticket" without credentials
    Then the answer is null
    When I call GET "/access/domains" without credentials
    Then the call succeeds
    And the answer lists "realm" = "pam"
    And the answer lists "realm" = "pve"
    And the item with "realm" = "pam" has "type" = "pam"

  @pve9
  Scenario: PVE 9 answers a forged ticket with a plain refusal
    When I call GET "/version" with the header "Cookie: PVEAuthCookie=PVE:{user:alice}:00000000::Zm9yZ2Vk"
    Then PVE answers 401 "Authentication failed!" with no body

  @pve8
  Scenario: PVE 8 names the reason for refusing a forged ticket
    When I call GET "/version" with the header "Cookie: PVEAuthCookie=PVE:{user:alice}:00000000::Zm9yZ2Vk"
    Then PVE answers 401 "permission denied - invalid PVE ticket" with no body
