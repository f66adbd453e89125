@vm
Feature: Locks and digests
  A config's digest changes with every write, and a write that names an
  old digest is refused. A locked VM refuses changes until the lock goes;
  only root@pam may skip it.

  Scenario: A stale digest is refused
    Given VM "{vm1}" was created
    When I read the config of VM "{vm1}"
    And I remember the answer's "digest" as "before"
    And I update VM "{vm1}" with:
      | cores  | 2               |
      | digest | {var:before}    |
    Then the answer is null
    When I read the config of VM "{vm1}"
    Then the answer's "digest" differs from "before"
    When I update VM "{vm1}" with:
      | cores  | 1            |
      | digest | {var:before} |
    Then PVE answers 500 "checksum mismatch (file change by other user?)"

  Scenario: The pending list carries the same digest as the config
    Given VM "{vm1}" was created
    When I read the config of VM "{vm1}"
    And I remember the answer's "digest" as "digest"
    And I read the pending changes of VM "{vm1}"
    Then the item with "key" = "digest" has "value" = "{var:digest}"

  @fake-only
  Scenario: A locked VM refuses changes, root@pam may skip the lock
    Given VM "{vm1}" was created
    When I update VM "{vm1}" with:
      | lock | backup |
    And I read the config of VM "{vm1}"
    Then the answer has "lock" = "backup"
    When I update VM "{vm1}" with:
      | cores | 2 |
    Then PVE answers 500 "VM is locked (backup)"
    When I start VM "{vm1}"
    Then the task ends with "VM is locked (backup)"
    When I update VM "{vm1}" with:
      | cores    | 2 |
      | skiplock | 1 |
    Then the answer is null
    When I update VM "{vm1}" with:
      | delete   | lock |
      | skiplock | 1    |
    And I read the config of VM "{vm1}"
    Then the answer has no "lock"
    And the answer has "cores" = "2"

  @fake-only
  Scenario: A running snapshot holds the snapshot lock
    Given VM "{vm1}" was created
    And qmsnapshot tasks take 3 seconds
    When I take snapshot "first" of VM "{vm1}"
    Then the task is still running
    When I list the cluster resources of type "vm"
    Then the item with "id" = "qemu/{vm1}" has "lock" = "snapshot"
    When I update VM "{vm1}" with:
      | cores | 2 |
    Then PVE answers 500 "VM is locked (snapshot)"
    When 3 seconds pass
    And I update VM "{vm1}" with:
      | cores | 2 |
    Then the answer is null
