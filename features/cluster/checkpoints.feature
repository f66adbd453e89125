@fake-only @cluster
Feature: Checkpoints of fake-pve's world
  A test suite seeds fake-pve once and returns to that world before each
  test. A checkpoint keeps everything a PVE cluster would have on disk:
  guests with their configuration and power state, tasks, users.

  Scenario: Restoring a checkpoint brings back the world it saved
    Given VM "{vm1}" was created with:
      | memory | 512 |
    And the world is saved as checkpoint "clean"
    When I create VM "{vm2}"
    And I update VM "{vm1}" with:
      | memory | 2048 |
    And I start VM "{vm1}"
    Then the task succeeds
    And guest "{vm1}" is "running"
    When I restore checkpoint "clean"
    Then VM "{vm2}" does not exist
    And guest "{vm1}" is "stopped"
    When I read the config of VM "{vm1}"
    Then the answer has "memory" = "512"

  Scenario: A checkpoint can be restored again and again
    Given the world is saved as checkpoint "empty"
    When I create VM "{vm1}"
    And I restore checkpoint "empty"
    Then VM "{vm1}" does not exist
    When I create VM "{vm1}"
    Then the answer is a task ID
    When I restore checkpoint "empty"
    Then VM "{vm1}" does not exist
