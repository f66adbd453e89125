@fake-only @cluster @notifications
Feature: Notifications are sent
  What PVE notifies goes through the matchers to the targets: a webhook
  target on loopback receives the request PVE would send (method,
  headers and body rendered from the templates); every delivery lands in
  fake-pve's outbox (`GET /_fake/notifications/outbox`).

  Scenario: The test call reaches a webhook receiver
    Given a webhook receiver listens on loopback
    When I call POST "/cluster/notifications/endpoints/webhook"
      | name   | {prefix}hook                                                                   |
      | url    | http://{var:receiver}/alert/{{ severity }}                                     |
      | method | put                                                                            |
      | header | name=Content-Type,value=YXBwbGljYXRpb24vanNvbg==                                |
      | body   | eyJ0aXRsZSI6ICJ7eyB0aXRsZSB9fSIsICJtZXNzYWdlIjogInt7IGVzY2FwZSBtZXNzYWdlIH19In0= |
    Then the call succeeds
    When I call POST "/cluster/notifications/targets/{prefix}hook/test"
    Then the call succeeds
    And the receiver gets a PUT request to "/alert/info"
    And the receiver's request has the header "Content-Type" = "application/json"
    And the receiver's request body is "{\"title\": \"Test notification\", \"message\": \"This is a test of the notification target '{prefix}hook'.\"}"
    And the outbox has a delivery to "{prefix}hook" with "notification.template" = "test"

  Scenario: A failed backup job reaches the target its matcher selects
    Given VM "{vm1}" was created with:
      | memory | 512 |
    And a webhook receiver listens on loopback
    When I call POST "/cluster/notifications/endpoints/webhook"
      | name   | {prefix}hook                      |
      | url    | http://{var:receiver}/backup      |
      | method | post                              |
      | body   | e3sgZmllbGRzLmpvYi1pZCB9fQ==      |
    Then the call succeeds
    When I call POST "/cluster/notifications/endpoints/sendmail"
      | name   | {prefix}quiet     |
      | mailto | ops@example.com   |
    Then the call succeeds
    When I call POST "/cluster/notifications/matchers"
      | name           | {prefix}failures  |
      | target         | {prefix}hook      |
      | match-field    | exact:type=vzdump |
      | match-severity | error             |
    Then the call succeeds
    When I call POST "/cluster/notifications/matchers"
      | name           | {prefix}fine      |
      | target         | {prefix}quiet     |
      | match-severity | info              |
    Then the call succeeds
    Given the next vzdump task fails with "job errors"
    When I call vzdump with:
      | vmid    | {vm1}       |
      | storage | local       |
      | job-id  | {prefix}job |
    And 120 seconds pass
    Then the outbox has a delivery to "{prefix}hook" with "notification.severity" = "error"
    And the outbox has a delivery to "{prefix}hook" with "notification.fields.job-id" = "{prefix}job"
    And the outbox has a delivery to "mail-to-root" with "notification.fields.type" = "vzdump"
    And the outbox has no delivery to "{prefix}quiet"
    And the receiver gets a POST request to "/backup"
    And the receiver's request body is "{prefix}job"
