@pools
Feature: Resource pools
  /pools groups guests and storages: a pool is made empty, takes members,
  lists them as /cluster/resources shows them, and is removed only when
  empty. 9.x and 8.4 both have /pools with a poolid parameter (for
  nested pools) and the older /pools/{poolid}. The roles a user holds on
  /pool/<pool> apply to its members.

  Scenario: Make a pool, add a VM, list it and take it out again
    Given VM "{vm1}" was created
    When I create pool "{pool:web}"
      | comment | Web servers |
    Then the call succeeds
    When I update pool "{pool:web}" with:
      | vms | {vm1} |
    Then the call succeeds
    When I read pool "{pool:web}"
    Then the pool's members are "qemu/{vm1}"
    And the item with "poolid" = "{pool:web}" has "comment" = "Web servers"
    When I call GET "/pools"
    Then the item with "poolid" = "{pool:web}" has "comment" = "Web servers"
    When I call GET "/pools/{pool:web}"
    Then the answer has "comment" = "Web servers"
    When I call GET "/cluster/resources"
      | type | vm |
    Then the item with "id" = "qemu/{vm1}" has "pool" = "{pool:web}"
    When I update pool "{pool:web}" with:
      | vms | {vm1} |
    Then PVE answers 500 "update pools failed: VM {vm1} is already a pool member"
    When I delete pool "{pool:web}"
    Then PVE answers 500 "delete pool failed: pool '{pool:web}' is not empty (contains VM {vm1})"
    When I update pool "{pool:web}" with:
      | vms    | {vm1} |
      | delete | 1     |
    Then the call succeeds
    When I read pool "{pool:web}"
    Then the pool's members are ""
    When I delete pool "{pool:web}"
    Then the call succeeds
    When I call GET "/pools"
    Then the answer does not list "poolid" = "{pool:web}"

  Scenario: A VM made into a pool joins it, and leaves it when destroyed
    Given pool "{pool:ops}" exists
    When I create VM "{vm1}" with:
      | pool   | {pool:ops} |
      | memory | 128        |
    Then the task ends with "OK"
    When I read pool "{pool:ops}"
    Then the pool's members are "qemu/{vm1}"
    When I destroy VM "{vm1}"
    Then the task ends with "OK"
    When I read pool "{pool:ops}"
    Then the pool's members are ""

  Scenario: Nested pools need their parent, and keep it from being removed
    When I create pool "{pool:orphan}/child"
    Then PVE answers 500 "create pool failed: parent '{pool:orphan}' of pool '{pool:orphan}/child' does not exist"
    Given pool "{pool:team}" exists
    When I create pool "{pool:team}"
    Then PVE answers 500 "create pool failed: pool '{pool:team}' already exists"
    When I create pool "{pool:team}/dev"
    Then the call succeeds
    When I delete pool "{pool:team}"
    Then PVE answers 500 "delete pool failed: pool '{pool:team}' is not empty (contains pool '{pool:team}/dev')"
    When I read pool "{pool:nope}"
    Then PVE answers 500 "pool '{pool:nope}' does not exist"

  Scenario: A VM cannot be made into a pool that does not exist
    When I create VM "{vm1}" with:
      | pool | {pool:nope} |
    Then PVE answers 403 "Permission check failed (pool '{pool:nope}' does not exist)"

  Scenario: Roles on a pool apply to its guests
    Given a user "bob" with password "builder1"
    And pool "{pool:lab}" exists
    And VM "{vm1}" was created
    And VM "{vm2}" was created
    When I update pool "{pool:lab}" with:
      | vms | {vm1} |
    Then the call succeeds
    Given "bob" has the role "PVEVMUser" on "/pool/{pool:lab}"
    Then "bob" has "VM.PowerMgmt" on "/vms/{vm1}"
    And "bob" does not have "VM.PowerMgmt" on "/vms/{vm2}"
