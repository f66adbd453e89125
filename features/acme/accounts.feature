@acme
Feature: ACME accounts and directories
  The accounts of `/etc/pve/priv/acme/` are registered, updated and
  deactivated by tasks (`acmeregister`, `acmeupdate`, `acmerefresh`,
  `acmedeactivate`). Let's Encrypt's two directories answer from
  fake-pve's emulated CA, without network; any other directory is one the
  node cannot reach. The account calls are root@pam's alone.

  Scenario: The known directories and what they answer
    When I call GET "/cluster/acme/directories"
    Then the answer has "0/name" = "Let's Encrypt V2"
    And the answer has "0/url" = "https://acme-v02.api.letsencrypt.org/directory"
    And the answer has "1/name" = "Let's Encrypt V2 Staging"
    And the answer has "1/url" = "https://acme-staging-v02.api.letsencrypt.org/directory"
    When I call GET "/cluster/acme/tos"
    Then the answer is "https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf"
    When I call GET "/cluster/acme/meta"
      | directory | https://acme-staging-v02.api.letsencrypt.org/directory |
    Then the answer has "website" = "https://letsencrypt.org/docs/staging-environment/"
    And the answer has "caaIdentities/0" = "letsencrypt.org"

  @fake-only
  Scenario: A directory the node cannot reach
    When I call GET "/cluster/acme/meta"
      | directory | https://acme.conformance.invalid/directory |
    Then PVE answers 500 "Error: GET to https://acme.conformance.invalid/directory\nCan't connect to acme.conformance.invalid:443 (Name or service not known)"

  # The account calls have no permissions in the schema: root@pam's alone,
  # which the real-target runner is not.
  @fake-only
  Scenario: Register, update and deactivate an account
    When I register the ACME account "{prefix}acct" with:
      | contact   | admin@example.com                                                  |
      | directory | https://acme-staging-v02.api.letsencrypt.org/directory             |
      | tos_url   | https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf |
    Then the task ends with "OK"
    When I call GET "/cluster/acme/account"
    Then the answer lists "name" = "{prefix}acct"
    When I call GET "/cluster/acme/account/{prefix}acct"
    Then the answer has "account/status" = "valid"
    And the answer has "account/contact/0" = "mailto:admin@example.com"
    And the answer has "location" matching "https://acme-staging-v02.api.letsencrypt.org/acme/acct/[0-9]+"
    When I register the ACME account "{prefix}acct" with:
      | contact | admin@example.com |
    Then parameter "name" is rejected with "ACME account config file '{prefix}acct' already exists."
    When I start the task PUT "/cluster/acme/account/{prefix}acct"
      | contact | ops@example.com |
    Then the task ends with "OK"
    When I call GET "/cluster/acme/account/{prefix}acct"
    Then the answer has "account/contact/0" = "mailto:ops@example.com"
    When I start the task DELETE "/cluster/acme/account/{prefix}acct"
    Then the task ends with "OK"
    When I call GET "/cluster/acme/account"
    Then the answer does not list "name" = "{prefix}acct"
    When I call GET "/cluster/acme/account/{prefix}acct"
    Then parameter "name" is rejected with "ACME account config file '{prefix}acct' does not exist."

  @fake-only
  Scenario: Without agreeing to the terms of service the CA refuses
    When I register the ACME account "{prefix}notos" with:
      | contact   | admin@example.com                                      |
      | directory | https://acme-staging-v02.api.letsencrypt.org/directory |
    Then the task ends with an error matching "Registration failed: Error: POST to https://acme-staging-v02.api.letsencrypt.org/acme/new-acct .*must agree to terms of service.*"

  Scenario: The account calls are root@pam's
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call GET "/cluster/acme/account/{prefix}acct"
    Then PVE answers 403 "Permission check failed (user != root@pam)"
