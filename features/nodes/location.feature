@nodes @pve9.2
Feature: Where a node and the datacenter are (PVE 9.2)
  PVE 9.2 keeps a map location for the datacenter (datacenter.cfg) and,
  overriding it, for each node (its node config): a latitude and a
  longitude, and a name if wanted.

  Scenario: A node's location reads back and goes again
    When I call PUT "/nodes/{node}/config"
      | location | latitude=48.2082,longitude=16.3738,name=Vienna |
    Then the call succeeds
    When I call GET "/nodes/{node}/config"
      | property | location |
    Then the answer's fields are "location"
    And the answer has "location" = "latitude=48.2082,longitude=16.3738,name=Vienna"
    When I call PUT "/nodes/{node}/config"
      | delete | location |
    Then the call succeeds
    When I call GET "/nodes/{node}/config"
      | property | location |
    Then the answer is an empty object

  Scenario: A location needs both coordinates
    When I call PUT "/nodes/{node}/config"
      | location | latitude=48.2082 |
    Then parameter "location" is rejected with "invalid format - format error\nlocation.longitude: property is missing and it is not optional"

  @fake-only
  Scenario: The datacenter's location is one of its options
    When I call PUT "/cluster/options"
      | location | latitude=47.07,longitude=15.44,name=Graz |
    Then the call succeeds
    When I call GET "/cluster/options"
    Then the answer has "location" = "latitude=47.07,longitude=15.44,name=Graz"
    When I call PUT "/cluster/options"
      | location | longitude=16.3738 |
    Then parameter "location" is rejected with "invalid format - format error\nlocation.latitude: property is missing and it is not optional"
