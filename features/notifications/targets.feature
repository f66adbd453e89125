@cluster @notifications
Feature: Notification targets and matchers
  /cluster/notifications keeps PVE's notification system: sendmail,
  gotify, smtp and webhook targets, and the matchers that route each
  notification to them. A fresh cluster has the built-in `mail-to-root`
  target and `default-matcher`. Names are unique across every kind; a
  target a matcher names cannot be deleted; secrets are never shown.

  Scenario: The built-ins are there
    When I call GET "/cluster/notifications/targets"
    Then the item with "name" = "mail-to-root" has "type" = "sendmail"
    When I call GET "/cluster/notifications/matchers/default-matcher"
    Then the answer has "mode" = "all"
    And the answer has "digest"
    When I call GET "/cluster/notifications/matcher-fields"
    Then the answer lists "name" = "job-id"

  Scenario: A gotify target is made, kept secret, used, refused and removed
    When I call POST "/cluster/notifications/endpoints/gotify"
      | name    | {prefix}phone          |
      | server  | http://127.0.0.1:9     |
      | token   | not-shown              |
      | comment | on call                |
      | disable | 1                      |
    Then the call succeeds
    When I call GET "/cluster/notifications/endpoints/gotify/{prefix}phone"
    Then the answer has "comment" = "on call"
    And the answer has "origin" = "user-created"
    And the answer has no "token"
    When I call POST "/cluster/notifications/endpoints/sendmail"
      | name   | {prefix}phone    |
      | mailto | ops@example.com  |
    Then PVE answers 400 "Cannot create '{prefix}phone', an entity with the same name already exists"
    When I call POST "/cluster/notifications/endpoints/sendmail"
      | name    | {prefix}mail |
      | comment | nobody       |
    Then PVE answers 400 "must at least provide one recipient, either in mailto or in mailto-user"
    When I call POST "/cluster/notifications/matchers"
      | name           | {prefix}failures   |
      | target         | {prefix}phone      |
      | match-severity | error              |
      | match-field    | exact:type=vzdump  |
    Then the call succeeds
    When I call POST "/cluster/notifications/matchers"
      | name   | {prefix}other    |
      | target | {prefix}nothere  |
    Then PVE answers 404 "endpoint '{prefix}nothere' does not exist"
    When I call DELETE "/cluster/notifications/endpoints/gotify/{prefix}phone"
    Then PVE answers 400 "cannot delete '{prefix}phone', referenced by: {prefix}failures"
    When I call PUT "/cluster/notifications/matchers/{prefix}failures"
      | digest | 0000000000000000000000000000000000000000000000000000000000000000 |
    Then PVE answers 400 "detected modified configuration - file changed by other user? Try again."
    When I call DELETE "/cluster/notifications/matchers/{prefix}failures"
    Then the call succeeds
    When I call DELETE "/cluster/notifications/endpoints/gotify/{prefix}phone"
    Then the call succeeds
    When I call GET "/cluster/notifications/endpoints/gotify/{prefix}phone"
    Then PVE answers 404 "endpoint '{prefix}phone' not found"

  Scenario: A webhook shows its secrets by name only
    When I call POST "/cluster/notifications/endpoints/webhook"
      | name    | {prefix}hook                          |
      | url     | http://127.0.0.1:9/hook               |
      | method  | post                                  |
      | secret  | name=key,value=czNjcjN0               |
      | disable | 1                                     |
    Then the call succeeds
    When I call GET "/cluster/notifications/endpoints/webhook/{prefix}hook"
    Then the answer has "secret"
    And the answer has "url" = "http://127.0.0.1:9/hook"
    When I call PUT "/cluster/notifications/endpoints/webhook/{prefix}hook"
      | secret | name=other |
    Then PVE answers 400 "secret 'other' not known"
    When I call DELETE "/cluster/notifications/endpoints/webhook/{prefix}hook"
    Then the call succeeds
