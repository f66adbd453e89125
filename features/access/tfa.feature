@access
Feature: Second factors
  A user with a TOTP key or recovery keys logs in in two steps: the
  password answers a half ticket that names no user and grants nothing
  (`NeedTFA`), and the second factor, sent with that ticket as
  `tfa-challenge`, completes the login. Changing one's second factors
  needs one's own password.

  Scenario: A TOTP key makes the login ask for a second factor
    Given a user "alice" with password "wonderland"
    And "alice" logs in with password "wonderland"
    When "alice" adds the TOTP key "phone"
    Then the answer has "id"
    When I act as the administrator
    And I list the second factors of "alice"
    Then the item with "id" = "{var:totp-phone}" has "type" = "totp"
    And the item with "id" = "{var:totp-phone}" has "description" = "phone"
    When I read the second factor "{var:totp-phone}" of "alice"
    Then the answer has "type" = "totp"
    And the answer has "created"
    When I read the user "alice"
    Then the answer has "keys" = "x"
    When "alice" logs in with password "wonderland"
    Then the login asks for a second factor
    When "alice" answers the challenge with a wrong TOTP value
    Then PVE answers 401 "authentication failure"
    When "alice" logs in with password "wonderland"
    Then the login asks for a second factor
    When "alice" answers the challenge with the TOTP key
    Then the login is complete
    And the ticket is for "alice"

  Scenario: Recovery keys are shown once and used once
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When "bob" adds recovery keys
    Then the answer has "id" = "recovery"
    And the answer has "recovery/9"
    When "bob" adds recovery keys
    Then PVE answers 500 "user already has recovery keys"
    When "bob" logs in with password "builder1"
    Then the login asks for a second factor
    When "bob" answers the challenge with "recovery:{var:recovery-3}"
    Then the login is complete
    When "bob" logs in with password "builder1"
    And "bob" answers the challenge with "recovery:{var:recovery-3}"
    Then PVE answers 401 "authentication failure"

  Scenario: Changing second factors needs the own password and a working key
    Given a user "carol" with password "caroline"
    And "carol" logs in with password "caroline"
    When I act as "carol"
    And I add a second factor for "carol" with:
      | type | recovery |
    Then parameter "password" is rejected with "password is required to modify user"
    When I add a second factor for "carol" with:
      | type     | totp     |
      | totp     | otpauth://totp/pve:carol?secret=GEZDGNBVGY3TQOJQ |
      | value    | 12345    |
      | password | caroline |
    Then PVE answers 500 "'description' is required for new entries"
    When I add a second factor for "carol" with:
      | type        | totp      |
      | description | phone     |
      | totp        | http://x  |
      | value       | 123456    |
      | password    | caroline  |
    Then PVE answers 500 "not an otpauth uri"
    When I add a second factor for "carol" with:
      | type        | totp     |
      | description | phone    |
      | password    | caroline |
    Then PVE answers 500 "'totp' type requires both 'totp' and 'value' parameters"
    When "carol" adds the TOTP key "phone"
    Then the answer has "id"
    When I update the second factor "{var:totp-phone}" of "carol" with:
      | description | old phone |
      | password    | caroline  |
    Then the answer is null
    When I read the second factor "{var:totp-phone}" of "carol"
    Then the answer has "description" = "old phone"
    When I delete the second factor "{var:totp-phone}" of "carol"
      | password | caroline |
    Then the answer is null
    When I list the second factors of "carol"
    Then the answer is a list of 0 items
    When I delete the second factor "{var:totp-phone}" of "carol"
      | password | caroline |
    Then PVE answers 500 "no such entry: {user:carol}/{var:totp-phone}"
    When I read the second factor "{var:totp-phone}" of "carol"
    Then PVE answers 404 "No such tfa entry '{var:totp-phone}'"
    When "carol" logs in with password "caroline"
    Then the login is complete

  @fake-only
  Scenario: A disabled key is not asked for
    Given a user "dave" with password "davepass"
    And "dave" logs in with password "davepass"
    And "dave" adds the TOTP key "phone"
    When I act as the administrator
    And I update the second factor "{var:totp-phone}" of "dave" with:
      | enable | 0 |
    Then the answer is null
    When I list the second factors of "dave"
    Then the item with "id" = "{var:totp-phone}" has "enable" = "0"
    When "dave" logs in with password "davepass"
    Then the login is complete

  @fake-only
  Scenario: WebAuthn and U2F need a configuration, Yubico a realm set up for it
    Given a user "erin" with password "erinpass"
    When I add a second factor for "erin" with:
      | type        | webauthn |
      | description | key      |
    Then PVE answers 500 "no webauthn configuration available"
    When I add a second factor for "erin" with:
      | type        | u2f |
      | description | key |
    Then PVE answers 500 "no u2f configuration available"
    When I add a second factor for "erin" with:
      | type  | yubico       |
      | value | ccccccbcgujh |
    Then PVE answers 500 "no yubico otp configuration available for realm pve"

  @fake-only
  Scenario: Eight wrong TOTP values lock TOTP until an administrator unlocks it
    Given a user "frank" with password "frankpass"
    And "frank" logs in with password "frankpass"
    And "frank" adds the TOTP key "phone"
    When "frank" logs in with password "frankpass"
    And "frank" answers the challenge with "totp:00000a"
    And "frank" logs in with password "frankpass"
    And "frank" answers the challenge with "totp:00000b"
    And "frank" logs in with password "frankpass"
    And "frank" answers the challenge with "totp:00000c"
    And "frank" logs in with password "frankpass"
    And "frank" answers the challenge with "totp:00000d"
    And "frank" logs in with password "frankpass"
    And "frank" answers the challenge with "totp:00000e"
    And "frank" logs in with password "frankpass"
    And "frank" answers the challenge with "totp:00000f"
    And "frank" logs in with password "frankpass"
    And "frank" answers the challenge with "totp:00000g"
    And "frank" logs in with password "frankpass"
    And "frank" answers the challenge with "totp:00000h"
    Then PVE answers 401 "authentication failure"
    When I act as the administrator
    And I list the second factors
    Then the item with "userid" = "{user:frank}" has "totp-locked" = "1"
    When "frank" logs in with password "frankpass"
    And "frank" answers the challenge with the TOTP key
    Then PVE answers 401 "authentication failure"
    When I act as the administrator
    And I unlock the second factors of "frank"
    Then the call succeeds
    When I list the second factors
    Then the item with "userid" = "{user:frank}" has no "totp-locked"
    When "frank" logs in with password "frankpass"
    And "frank" answers the challenge with the TOTP key
    Then the login is complete
