@auth
Feature: API tokens
  An API token (USER@REALM!TOKENID with a secret shown once) authenticates
  with the Authorization header `PVEAPIToken=USER@REALM!TOKENID=SECRET`.

  Background:
    Given a user "alice" with password "wonderland"
    And "alice" has the role "PVEAuditor" on "/"

  Scenario: Creating a token shows its secret once
    When I create the API token "alice!ci"
      | privsep | 0         |
      | comment | CI runner |
    Then the answer has "full-tokenid" = "{token:alice!ci}"
    And the answer has "info/privsep" = "0"
    And the answer has "info/comment" = "CI runner"
    And the new token's secret is a UUID

  Scenario: The secret follows the token ID after "=" or a space
    Given "alice" has an API token "alice!ci"
      | privsep | 0 |
    When I call GET "/nodes" with the header "Authorization: PVEAPIToken={token:alice!ci}={secret:alice!ci}"
    Then the call succeeds
    When I call GET "/nodes" with the header "Authorization: PVEAPIToken {token:alice!ci}={secret:alice!ci}"
    Then the call succeeds
    When I use the API token "alice!ci"
    And I list the nodes
    Then the answer lists "node" = "{node}"

  @pve9
  Scenario: PVE 9 refuses a wrong secret or an unknown token without saying why
    Given "alice" has an API token "alice!ci"
    When I call GET "/nodes" with the header "Authorization: PVEAPIToken={token:alice!ci}=00000000-0000-0000-0000-000000000000"
    Then PVE answers 401 "Authentication failed!" with no body
    When I call GET "/nodes" with the header "Authorization: PVEAPIToken={token:alice!nope}={secret:alice!ci}"
    Then PVE answers 401 "Authentication failed!" with no body

  @pve8
  Scenario: PVE 8 says why it refuses a token
    Given "alice" has an API token "alice!ci"
    When I call GET "/nodes" with the header "Authorization: PVEAPIToken={token:alice!ci}=00000000-0000-0000-0000-000000000000"
    Then PVE answers 401 "invalid token value!" with no body
    When I call GET "/nodes" with the header "Authorization: PVEAPIToken={token:alice!nope}={secret:alice!ci}"
    Then PVE answers 401 "no such token 'nope' for user '{user:alice}'" with no body

  Scenario: Listing, reading and updating tokens
    Given "alice" has an API token "alice!ci"
      | privsep | 0         |
      | comment | CI runner |
    When I list the API tokens of "alice"
    Then the answer is a list of 1 item
    And the item with "tokenid" = "ci" has "comment" = "CI runner"
    When I read the API token "alice!ci"
    Then the answer has "privsep" = "0"
    And the answer has "expire" = "0"
    And the answer has "comment" = "CI runner"
    When I update the API token "alice!ci" with:
      | privsep | 1          |
      | expire  | 1900000000 |
    Then the answer has "privsep" = "1"
    And the answer has "expire" = "1900000000"

  @pve9.2
  Scenario: A regenerated secret replaces the old one at once
    Given "alice" has an API token "alice!ci"
      | privsep | 0         |
      | comment | CI runner |
    When I regenerate the API token "alice!ci"
    Then the answer has "full-tokenid" = "{token:alice!ci}"
    And the new token's secret is a UUID
    And the answer has "comment" = "CI runner"
    And the answer has "privsep" = "0"
    When I use the API token "alice!ci"
    And I list the nodes
    Then the answer lists "node" = "{node}"
    When I use the API token "alice!ci (old secret)"
    And I list the nodes
    Then PVE answers 401 "Authentication failed!"
    When I act as the administrator
    And I update the API token "alice!ci" with:
      | comment | still CI |
    Then the answer has "comment" = "still CI"
    And the answer has no "value"

  @pve9
  Scenario: A removed token no longer authenticates
    Given "alice" has an API token "alice!ci"
    When I remove the API token "alice!ci"
    Then the answer is null
    When I read the API token "alice!ci"
    Then PVE answers 500 "no such token 'ci' for user '{user:alice}'"
    When I use the API token "alice!ci"
    And I list the nodes
    Then PVE answers 401 "Authentication failed!"

  @pve8
  Scenario: A removed token no longer authenticates, and PVE 8.4 says why
    Given "alice" has an API token "alice!ci"
    When I remove the API token "alice!ci"
    Then the answer is null
    When I use the API token "alice!ci"
    And I list the nodes
    Then PVE answers 401 "no such token 'ci' for user '{user:alice}'"

  Scenario: A token ID is unique per user
    Given "alice" has an API token "alice!ci"
    When I create the API token "alice!ci"
    Then parameter "tokenid" is rejected with "Token already exists."

  Scenario: Tokens of an unknown or malformed user
    When I list the API tokens of "nobody"
    Then PVE answers 500 "no such user ('{user:nobody}')" to root@pam
    And PVE answers 403 "Permission check failed" to anyone else
    When I call GET "/access/users/bad/token"
    Then parameter "userid" is rejected with "invalid format - value 'bad' does not look like a valid user name" for root@pam
    And PVE answers 500 "value 'bad' does not look like a valid user name" to anyone else

  Scenario: A user manages their own tokens but not another's
    Given a user "bob" with password "builder1"
    And "alice" logs in with password "wonderland"
    When I act as "alice"
    And I create the API token "alice!mine"
    Then the call succeeds
    When I list the API tokens of "bob"
    Then PVE answers 403 "Permission check failed"
