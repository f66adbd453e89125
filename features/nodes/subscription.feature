@nodes
Feature: A node's subscription
  Any user may read the status of a node's subscription; the key and the
  server id need Sys.Audit on the node. fake-pve reaches no shop: a
  well-formed key for enough sockets checks out as active.

  Scenario: Everyone reads the status and the shop's address
    When I call GET "/nodes/{node}/subscription"
    Then the answer has "status"
    And the answer has "url"

  Scenario: A malformed key is refused
    When I call PUT "/nodes/{node}/subscription"
      | key | pve3x-12 |
    Then parameter "key" is rejected with "value does not match the regex pattern"

  @fake-only
  Scenario: A key is set, gives the node its level, and is removed
    When I call GET "/nodes/{node}/subscription"
    Then the answer has "status" = "notfound"
    And the answer has "message" = "There is no subscription key"
    When I call PUT "/nodes/{node}/subscription"
      | key | pve1s-0123456789 |
    Then the call succeeds
    When I call GET "/nodes/{node}/subscription"
    Then the answer has "status" = "active"
    And the answer has "level" = "s"
    When I list the nodes
    Then the item with "node" = "{node}" has "level" = "s"
    When I call DELETE "/nodes/{node}/subscription"
    And I call GET "/nodes/{node}/subscription"
    Then the answer has "status" = "notfound"
