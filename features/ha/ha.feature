@ha
Feature: High availability
  /cluster/ha keeps HA resources (a VM or container by `vm:<vmid>`,
  `ct:<vmid>` or its bare VMID), 8.x groups and 9.x rules. The power and
  migrate calls of an HA-managed guest go through the HA manager: they
  answer with an `hastart`, `hastop` or `hamigrate` task that only asks
  the manager, and the guest follows at the manager's next rounds.
  Adding an HA resource arms the node's watchdog on a real cluster, so
  the scenarios that make one are destructive.

  Scenario: Calls about a guest that HA does not manage are refused
    When I call GET "/cluster/ha/resources"
    Then the call succeeds
    When I make "vm:{vm1}" an HA resource
    Then PVE answers 500 "resource 'vm:{vm1}' does not exist in cluster"
    When I call GET "/cluster/ha/resources/vm:{vm1}"
    Then PVE answers 500 "no such resource 'vm:{vm1}'"
    When I call DELETE "/cluster/ha/resources/vm:{vm1}"
    Then PVE answers 500 "cannot delete service 'vm:{vm1}', not HA managed!"
    When I call POST "/cluster/ha/resources/vm:{vm1}/migrate"
      | node | {node} |
    Then PVE answers 500 "resource 'vm:{vm1}' is not HA managed"
    When I call POST "/cluster/ha/resources/vm:{vm1}/relocate"
      | node | {node} |
    Then PVE answers 500 "resource 'vm:{vm1}' is not HA managed"

  @pve9
  Scenario: A bare VMID of no guest cannot be resolved (9.x)
    When I make "{vm1}" an HA resource
    Then PVE answers 500 "unable to detect SID from VMID - VM/CT {vm1} does not exist"

  @pve8
  Scenario: A bare VMID of no guest cannot be resolved (8.4 spells it its way)
    When I make "{vm1}" an HA resource
    Then PVE answers 500 "unable do detect SID from VMID - VM/CT {vm1} does not exist"

  @pve9
  Scenario: Rules name managed resources and existing rules
    When I create HA rule "{prefix}-keep" with:
      | type      | node-affinity |
      | resources | vm:{vm1}      |
      | nodes     | {node}        |
    Then PVE answers 500 "create ha rule failed: cannot use unmanaged resource(s) vm:{vm1}."
    When I call GET "/cluster/ha/rules/{prefix}-keep"
    Then PVE answers 500 "no such ha rule '{prefix}-keep'"
    When I call GET "/cluster/ha/rules"
      | type | resource-affinity |
    Then the answer does not list "rule" = "{prefix}-keep"

  @pve8
  Scenario: Groups of nodes with priorities (8.4)
    When I create HA group "{prefix}-pref" with:
      | nodes      | {node}:2 |
      | restricted | 1        |
      | comment    | first    |
    Then the call succeeds
    When I call GET "/cluster/ha/groups/{prefix}-pref"
    Then the answer has "nodes" = "{node}:2"
    And the answer has "restricted" = "1"
    And the answer has "type" = "group"
    When I create HA group "{prefix}-pref" with:
      | nodes | {node} |
    Then PVE answers 500 "create ha group failed: ha group ID '{prefix}-pref' already defined"
    When I call PUT "/cluster/ha/groups/{prefix}-pref"
      | delete | nodes |
    Then PVE answers 500 "update ha group failed: unable to delete required option 'nodes'"
    When I call GET "/cluster/ha/groups"
    Then the item with "group" = "{prefix}-pref" has "comment" = "first"
    When I call DELETE "/cluster/ha/groups/{prefix}-pref"
    Then the call succeeds
    When I call GET "/cluster/ha/groups/{prefix}-pref"
    Then PVE answers 500 "no such ha group '{prefix}-pref'"

  @fake-only @pve9
  Scenario: 9.x has no groups once they are migrated to rules
    When I call GET "/cluster/ha/groups"
    Then PVE answers 500 "cannot index groups: ha groups have been migrated to rules"
    When I create HA group "{prefix}-pref" with:
      | nodes | {node} |
    Then PVE answers 500 "cannot create group: ha groups have been migrated to rules"

  @destructive
  Scenario: A VM under HA starts and stops through the HA manager
    Given VM "{vm1}" was created with:
      | memory | 128 |
    When I make "{vm1}" an HA resource with:
      | state   | stopped   |
      | comment | conformance |
    Then the call succeeds
    When I call GET "/cluster/ha/resources/vm:{vm1}"
    Then the answer has "sid" = "vm:{vm1}"
    And the answer has "type" = "vm"
    And the answer has "state" = "stopped"
    And the answer has "comment" = "conformance"
    And the answer has "digest"
    When I make "vm:{vm1}" an HA resource
    Then PVE answers 500 "create resource failed: resource ID 'vm:{vm1}' already defined"
    When I start VM "{vm1}"
    Then the task succeeds
    And the task ID names node "{node}", type "hastart", ID "{vm1}" and user "{me}"
    When I call GET "/cluster/ha/resources/vm:{vm1}"
    Then the answer has "state" = "started"
    And within 120 seconds VM "{vm1}" is "running"
    And within 60 seconds the HA service "vm:{vm1}" is "started"
    When I read the status of VM "{vm1}"
    Then the answer has "ha/managed" = "1"
    When I call GET "/cluster/resources"
      | type | vm |
    Then the item with "id" = "qemu/{vm1}" has "hastate" = "started"
    When I stop VM "{vm1}"
    Then the task succeeds
    And the task ID names node "{node}", type "hastop", ID "{vm1}" and user "{me}"
    And within 120 seconds VM "{vm1}" is "stopped"
    When I call GET "/cluster/ha/resources/vm:{vm1}"
    Then the answer has "state" = "stopped"
    When I call DELETE "/cluster/ha/resources/vm:{vm1}"
    Then the call succeeds

  @destructive @pve9
  Scenario: Rules of a managed VM (9.x)
    Given VM "{vm1}" was created with:
      | memory | 128 |
    And VM "{vm2}" was created with:
      | memory | 128 |
    When I make "{vm1}" an HA resource with:
      | state | stopped |
    Then the call succeeds
    When I make "{vm2}" an HA resource with:
      | state | stopped |
    Then the call succeeds
    When I create HA rule "{prefix}-home" with:
      | type      | node-affinity        |
      | resources | vm:{vm1},vm:{vm2}    |
      | nodes     | {node}:2             |
      | strict    | 0                    |
      | comment   | stay home            |
    Then the call succeeds
    When I call GET "/cluster/ha/rules/{prefix}-home"
    Then the answer has "type" = "node-affinity"
    And the answer has "nodes" = "{node}:2"
    And the answer has "resources" = "vm:{vm1},vm:{vm2}"
    And the answer has "comment" = "stay home"
    And the answer has "digest"
    When I create HA rule "{prefix}-home" with:
      | type      | node-affinity |
      | resources | vm:{vm1}      |
      | nodes     | {node}        |
    Then PVE answers 500 "create ha rule failed: HA rule '{prefix}-home' already defined"
    When I create HA rule "{prefix}-alone" with:
      | type      | resource-affinity |
      | resources | vm:{vm1}          |
      | affinity  | positive          |
    Then PVE answers 500 "create ha rule failed: 400 Rule '{prefix}-alone' is invalid.\nresources: rule is ineffective as there are less than two resources"
    When I call GET "/cluster/ha/rules"
      | resource | vm:{vm2} |
    Then the item with "rule" = "{prefix}-home" has "type" = "node-affinity"
    When I call DELETE "/cluster/ha/resources/vm:{vm2}"
    Then the call succeeds
    When I call GET "/cluster/ha/rules/{prefix}-home"
    Then the answer has "resources" = "vm:{vm1}"
    When I call DELETE "/cluster/ha/rules/{prefix}-home"
    Then the call succeeds
    When I call GET "/cluster/ha/rules/{prefix}-home"
    Then PVE answers 500 "no such ha rule '{prefix}-home'"

  @pve9.2
  Scenario: A resource kept out of automatic rebalancing (9.2)
    Given VM "{vm1}" was created with:
      | memory | 128 |
    And VM "{vm2}" was created with:
      | memory | 128 |
    When I make "{vm1}" an HA resource with:
      | state          | stopped |
      | auto-rebalance | 0       |
    Then the call succeeds
    When I make "{vm2}" an HA resource with:
      | state | stopped |
    Then the call succeeds
    When I call GET "/cluster/ha/resources/vm:{vm1}"
    Then the answer has "auto-rebalance" = "0"
    When I call GET "/cluster/ha/resources/vm:{vm2}"
    Then the answer has no "auto-rebalance"
    When I call GET "/cluster/ha/status/current"
    Then the item with "sid" = "vm:{vm1}" has "auto-rebalance" = "0"
    And the item with "sid" = "vm:{vm2}" has "auto-rebalance" = "1"
    When I call PUT "/cluster/ha/resources/vm:{vm1}"
      | delete | auto-rebalance |
    Then the call succeeds
    When I call GET "/cluster/ha/resources/vm:{vm1}"
    Then the answer has no "auto-rebalance"

  @pve9.2
  Scenario: 9.2 checks a rule's parameters against its type before anything else
    When I create HA rule "{prefix}-pair" with:
      | type      | resource-affinity |
      | resources | vm:{vm1},vm:{vm2} |
      | affinity  | positive          |
      | strict    | 1                 |
    Then parameter "strict" is rejected with "property is not defined in schema and the schema does not allow additional properties"
    When I create HA rule "{prefix}-pair" with:
      | type      | resource-affinity |
      | resources | vm:{vm1},vm:{vm2} |
    Then parameter "oneOf[resource-affinity].affinity" is rejected with "property is missing and it is not optional"
    When I create HA rule "{prefix}-pair" with:
      | type      | bogus    |
      | resources | vm:{vm1} |
    Then parameter "type" is rejected with "value 'bogus' does not have a value in the enumeration 'node-affinity, resource-affinity'"
    When I call PUT "/cluster/ha/rules/{prefix}-pair"
      | comment | no type |
    Then parameter "type" is rejected with "property is missing and it is not optional"

  @pve9.1
  Scenario: 9.1 takes any rule parameter and leaves it to the rule's type
    When I create HA rule "{prefix}-pair" with:
      | type      | resource-affinity |
      | resources | vm:{vm1},vm:{vm2} |
      | affinity  | positive          |
      | strict    | 1                 |
    Then PVE answers 500 "unexpected property 'strict'"
