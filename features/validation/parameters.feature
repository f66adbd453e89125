@validation
Feature: Parameter validation
  PVE checks every parameter against its schema before doing anything and
  answers 400 "Parameter verification failed." with one message per
  parameter, several at once.

  Scenario: An unknown parameter is refused
    When I call GET "/version"
      | verbose | 1 |
    Then parameter "verbose" is rejected with "property is not defined in schema and the schema does not allow additional properties"

  Scenario: Booleans are 1 or 0
    When I call POST "/nodes/{node}/startall"
      | vms   | {vm1} |
      | force | True  |
    Then parameter "force" is rejected with "type check ('boolean') failed - got 'True'"

  Scenario: Integers are checked for type and range
    When I call POST "/nodes/{node}/stopall"
      | vms     | {vm1} |
      | timeout | 7201  |
    Then parameter "timeout" is rejected with "value must have a maximum value of 7200"
    When I call GET "/nodes/{node}/tasks"
      | limit | many |
    Then parameter "limit" is rejected with "type check ('integer') failed - got 'many'"

  Scenario: Enumerations name their values
    When I list the cluster resources of type "vms"
    Then parameter "type" is rejected with "value 'vms' does not have a value in the enumeration 'vm, storage, node, sdn'"

  Scenario: List formats check every item
    When I call POST "/nodes/{node}/startall"
      | vms | {vm1},abc |
    Then parameter "vms" is rejected with "invalid format - value does not look like a valid VM ID"

  Scenario: Named formats say what they expected
    When I call GET "/access/users/root/token"
    Then parameter "userid" is rejected with "invalid format - value 'root' does not look like a valid user name" for root@pam
    And PVE answers 500 "value 'root' does not look like a valid user name" to anyone else

  Scenario: Several bad parameters are reported at once
    When I call POST "/nodes/{node}/stopall"
      | vms       | {vm1} |
      | timeout   | -1    |
      | force-stop | maybe |
    Then exactly these parameters are rejected:
      | timeout    | value must have a minimum value of 0       |
      | force-stop | type check ('boolean') failed - got 'maybe' |

  Scenario: Property strings are checked key by key
    When I call POST "/nodes/{node}/qemu"
      | vmid  | {vm1}                  |
      | net0  | virtio,bridge=vm br    |
      | cores | 0                      |
    Then exactly these parameters are rejected:
      | net0  | invalid format - format error\nnet0.bridge: invalid format - invalid bridge ID 'vm br' |
      | cores | value must have a minimum value of 1                                              |

  Scenario: A property string with an unknown key is refused
    When I call POST "/nodes/{node}/qemu"
      | vmid  | {vm1}                        |
      | net0  | virtio,bridge={bridge},speed=9 |
      | cores | 0                            |
    Then exactly these parameters are rejected:
      | net0  | invalid format - invalid key in comma-separated list property: speed |
      | cores | value must have a minimum value of 1                                 |

  Scenario: A path parameter repeated with another value is refused
    When I call GET "/nodes/{node}/status"
      | node | elsewhere |
    Then parameter "node" is rejected with "duplicate parameter (already defined in URI) with conflicting values!"
