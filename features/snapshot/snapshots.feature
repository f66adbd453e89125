@snapshot
Feature: Snapshots
  qmsnapshot, qmrollback and qmdelsnapshot tasks; the list is a tree
  with "current" last, and each snapshot keeps the config it was taken
  from.

  Scenario: Take, list, describe, roll back and delete snapshots
    Given VM "{vm1}" was created
    When I take snapshot "first" of VM "{vm1}"
      | description | before the upgrade |
    Then the task ID names node "{node}", type "qmsnapshot", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I update VM "{vm1}" with:
      | cores | 2 |
    And I take snapshot "second" of VM "{vm1}"
    Then the task ends with "OK"
    When I list the snapshots of VM "{vm1}"
    Then the answer is a list of 3 items
    And the item with "name" = "first" has "description" = "before the upgrade"
    And the item with "name" = "first" has "vmstate" = "0"
    And the item with "name" = "first" has no "parent"
    And the item with "name" = "second" has "parent" = "first"
    And the item with "name" = "current" has "parent" = "second"
    And the item with "name" = "current" has "description" = "You are here!"
    And the item with "name" = "current" has "running" = "0"
    When I read the config of VM "{vm1}"
    Then the answer has "parent" = "second"
    When I read snapshot "first" of VM "{vm1}"
    Then the answer lists "cmd" = "config"
    And the answer lists "cmd" = "rollback"
    When I read the config of snapshot "first" of VM "{vm1}"
    Then the answer has "cores" = "1"
    And the answer has "description" = "before the upgrade"
    And the answer has "snaptime"
    And the answer has no "digest"
    When I describe snapshot "first" of VM "{vm1}" as "known good"
    Then the answer is null
    When I read the config of VM "{vm1}"
      | snapshot | first |
    Then the answer has "description" = "known good"
    When I roll VM "{vm1}" back to snapshot "first"
    Then the task ID names node "{node}", type "qmrollback", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "cores" = "1"
    And the answer has "parent" = "first"
    When I delete snapshot "first" of VM "{vm1}"
    Then the task ID names node "{node}", type "qmdelsnapshot", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I list the snapshots of VM "{vm1}"
    Then the answer is a list of 2 items
    And the item with "name" = "second" has no "parent"
    And the item with "name" = "current" has no "parent"

  Scenario: Refused snapshots
    Given VM "{vm1}" was created
    When I take snapshot "current" of VM "{vm1}"
    Then PVE answers 500 "unable to use snapshot name 'current' (reserved name)"
    When I take snapshot "first" of VM "{vm1}"
    Then the task ends with "OK"
    When I take snapshot "first" of VM "{vm1}"
    Then the task ends with "snapshot name 'first' already used"
    When I read the config of snapshot "nope" of VM "{vm1}"
    Then PVE answers 500 "snapshot 'nope' does not exist"
    When I delete snapshot "nope" of VM "{vm1}"
    Then the task ends with "snapshot 'nope' does not exist"
    When I read the config of VM "{vm1}"
      | current  | 1     |
      | snapshot | first |
    Then parameter "snapshot" is rejected with "cannot use 'snapshot' parameter with 'current'"
    When I convert VM "{vm1}" to a template
    Then PVE answers 500 "unable to create template, because VM contains snapshots"

  Scenario: A snapshot of a running VM with its RAM
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I take snapshot "live" of VM "{vm1}"
      | vmstate | 1 |
    Then the task ends with "OK"
    When I list the snapshots of VM "{vm1}"
    Then the item with "name" = "live" has "vmstate" = "1"
    And the item with "name" = "current" has "running" = "1"
    When I read the config of snapshot "live" of VM "{vm1}"
    Then the answer has "vmstate" matching "{storage}:.*vm-{vm1}-state-live.*"
    And the answer has "runningmachine"
    When I roll VM "{vm1}" back to snapshot "live"
    Then the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "running"
    When I delete snapshot "live" of VM "{vm1}"
    Then the task ends with "OK"
