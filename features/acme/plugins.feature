@acme
Feature: ACME challenge plugins
  /cluster/acme/plugins keeps the challenge plugins of
  `/etc/pve/priv/acme/plugins.cfg`: the built-in `standalone` plugin
  (http-01 from a webserver the node starts on port 80), always there,
  and DNS plugins (dns-01 through one of the DNS APIs of
  `challenge-schema`, configured by base64-encoded `KEY=value` data).
  Managing them needs Sys.Modify on `/`.

  Scenario: The standalone plugin is always there
    When I call GET "/cluster/acme/plugins"
    Then the item with "plugin" = "standalone" has "type" = "standalone"
    When I call GET "/cluster/acme/plugins/standalone"
    Then the answer has "type" = "standalone"
    And the answer has "digest"

  Scenario: Add, read, change and remove a DNS plugin
    # data: CF_Token=tok / CF_Account_ID=acct
    When I add the ACME plugin "{prefix}cf" with:
      | type             | dns                                      |
      | api              | cf                                       |
      | data             | Q0ZfVG9rZW49dG9rCkNGX0FjY291bnRfSUQ9YWNjdA== |
      | validation-delay | 10                                       |
    Then the call succeeds
    When I call GET "/cluster/acme/plugins/{prefix}cf"
    Then the answer has "api" = "cf"
    And the answer has "data" matching "CF_Token=tok\sCF_Account_ID=acct"
    And the answer has "validation-delay" = "10"
    And the answer has "plugin" = "{prefix}cf"
    When I call GET "/cluster/acme/plugins"
      | type | dns |
    Then the item with "plugin" = "{prefix}cf" has "type" = "dns"
    And the answer does not list "plugin" = "standalone"
    When I call PUT "/cluster/acme/plugins/{prefix}cf"
      | delete | validation-delay |
      | disable | 1               |
    Then the call succeeds
    When I call GET "/cluster/acme/plugins/{prefix}cf"
    Then the answer has no "validation-delay"
    And the answer has "disable" = "1"
    When I call PUT "/cluster/acme/plugins/{prefix}cf"
      | delete | api |
    Then PVE answers 500 "unable to delete required option 'api'"
    When I call PUT "/cluster/acme/plugins/{prefix}cf"
      | digest | 0000000000000000000000000000000000000000 |
      | disable | 0                                       |
    Then PVE answers 500 "detected modified configuration - file changed by other user? Try again."
    When I call DELETE "/cluster/acme/plugins/{prefix}cf"
    Then the call succeeds
    When I call GET "/cluster/acme/plugins/{prefix}cf"
    Then PVE answers 500 "ACME plugin '{prefix}cf' not defined"

  Scenario: A plugin takes the options of its type only
    When I add the ACME plugin "{prefix}dns" with:
      | type | dns |
    Then PVE answers 500 "missing value for required option 'api'"
    When I add the ACME plugin "{prefix}web" with:
      | type | standalone |
      | api  | cf         |
    Then PVE answers 500 "unexpected property 'api'"
    When I add the ACME plugin "{prefix}web" with:
      | type | standalone |
    Then the call succeeds
    When I add the ACME plugin "{prefix}web" with:
      | type | standalone |
    Then PVE answers 500 "ACME plugin ID '{prefix}web' already exists"
    When I call DELETE "/cluster/acme/plugins/{prefix}web"
    Then the call succeeds

  Scenario: The DNS APIs and their fields
    When I call GET "/cluster/acme/challenge-schema"
    Then the item with "id" = "cf" has "name" = "Cloudflare Managed DNS"
    And the item with "id" = "cf" has "type" = "dns"
    And the item with "id" = "ovh" has "schema/fields/OVH_END_POINT/default" = "ovh-eu"

  Scenario: Managing plugins needs Sys.Modify on /
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call GET "/cluster/acme/plugins"
    Then PVE answers 403 "Permission check failed (/, Sys.Modify)"
