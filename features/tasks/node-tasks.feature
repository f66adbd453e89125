@tasks
Feature: Tasks
  Asynchronous calls answer a task ID (UPID); the task's status, log and
  the node's task list say how it went.

  Scenario: startall answers a task that ends well
    When I start the guests "{vm1}" on node "{node}"
    Then the task ID names node "{node}", type "startall", ID "" and user "{me}"
    And the task ends with "OK"
    When I read the task status
    Then the answer has "status" = "stopped"
    And the answer has "exitstatus" = "OK"
    And the answer has "type" = "startall"
    And the answer has "node" = "{node}"
    When I read the task log
    Then the log's last line is "TASK OK"
    When I call GET "/nodes/{node}/tasks/{upid}"
    Then the answer lists "name" = "log"
    And the answer lists "name" = "status"

  Scenario: stopall answers a task that ends well
    When I stop the guests "{vm1},{vm2}" on node "{node}"
    Then the task ID names node "{node}", type "stopall", ID "" and user "{me}"
    And the task ends with "OK"

  Scenario: A finished task is in the node's task list
    When I stop the guests "{vm1}" on node "{node}"
    Then the task ends with "OK"
    When I list the tasks of node "{node}"
      | typefilter | stopall |
    Then the list holds the task
    And every item has "type" = "stopall"
    When I list the tasks of node "{node}"
      | typefilter | startall |
    Then the list does not hold the task

  Scenario: Unknown and malformed task IDs
    When I call GET "/nodes/{node}/tasks/not-a-upid/status"
    Then parameter "upid" is rejected with "unable to parse worker upid"
    When I call GET "/nodes/{node}/tasks/UPID:{node}:00001234:00005678:6A000000:qmstart:{vm1}:root@pam:/status"
    Then parameter "upid" is rejected with "no such task"
    When I call DELETE "/nodes/{node}/tasks/UPID:{node}:00001234:00005678:6A000000:qmstart:{vm1}:root@pam:"
    Then parameter "upid" is rejected with "no such task"

  Scenario: Task list filters are validated
    When I list the tasks of node "{node}"
      | statusfilter | fine |
    Then parameter "statusfilter" is rejected with "invalid format - invalid status 'fine'"
    When I list the tasks of node "{node}"
      | source | old |
    Then parameter "source" is rejected with "value 'old' does not have a value in the enumeration 'archive, active, all'"

  @fake-only
  Scenario: startall starts the guests marked onboot, stopall stops the running ones
    Given the node has the guests:
      | vmid  | name | status  | onboot |
      | {vm1} | web  | stopped | 1      |
      | {vm2} | db   | stopped | 0      |
      | {vm3} | mail | running | 0      |
    When I start all guests on node "pve"
    Then the task ends with "OK"
    And guest "{vm1}" is "running"
    And guest "{vm2}" is "stopped"
    When I read the task log
    Then the log reads:
      """
      Starting VM {vm1}
      TASK OK
      """
    When I stop all guests on node "pve"
      | timeout | 30 |
    Then the task ends with "OK"
    When I read the task log
    Then the log reads:
      """
      Stopping VM {vm3} (timeout = 30 seconds)
      Stopping VM {vm1} (timeout = 30 seconds)
      TASK OK
      """
    And guest "{vm3}" is "stopped"

  @fake-only
  Scenario: A running task is listed as active, then ends when its time has come
    Given startall tasks take 10 seconds
    When I start all guests on node "pve"
    Then the task is still running
    And the task started at 1790000000
    When I list the tasks of node "pve"
      | source | active |
    Then the list holds the task
    And the item with "type" = "startall" has "status" = "RUNNING"
    When I list the tasks of node "pve"
    Then the list does not hold the task
    When 10 seconds pass
    Then the task ends with "OK"

  @fake-only
  Scenario: Stopping a running task interrupts it
    Given the node has the guests:
      | vmid  | name | onboot |
      | {vm1} | web  | 1      |
    And startall tasks take 10 seconds
    When I start all guests on node "pve"
    And I stop the task
    Then the answer is null
    And the task ends with "received interrupt"
    When I read the task log
    Then the log's last line is "TASK ERROR: received interrupt"
    When 10 seconds pass
    Then guest "{vm1}" is "stopped"
    When I stop the task
    Then the answer is null

  @fake-only
  Scenario: The task list filters by type, user, status, time and paging
    Given startall tasks take 10 seconds
    When I stop all guests on node "pve"
    And 60 seconds pass
    And I stop all guests on node "pve"
    And 60 seconds pass
    And I start all guests on node "pve"
    And I stop the task
    And I list the tasks of node "pve"
    Then the list holds the tasks 3, 2, 1 in this order
    And the total is 3
    When I list the tasks of node "pve"
      | limit | 1 |
      | start | 1 |
    Then the list holds the tasks 2 in this order
    And the total is 3
    When I list the tasks of node "pve"
      | errors | 1 |
    Then the list holds the tasks 3 in this order
    When I list the tasks of node "pve"
      | statusfilter | ok |
    Then the list holds the tasks 2, 1 in this order
    When I list the tasks of node "pve"
      | since | 1790000001 |
    Then the list holds the tasks 3, 2 in this order
    When I list the tasks of node "pve"
      | until | 1790000060 |
    Then the list holds the tasks 2, 1 in this order
    When I list the tasks of node "pve"
      | typefilter | qmstart |
    Then the answer is a list of 0 items
    And the answer has no total
    When I list the tasks of node "pve"
      | userfilter | ROOT |
    Then the list holds the tasks 3, 2, 1 in this order

  @fake-only
  Scenario: The task log pages by line
    Given the node has the guests:
      | vmid  | name | status  |
      | {vm1} | web  | running |
    When I stop all guests on node "pve"
    And I read the task log
      | start | 1 |
      | limit | 1 |
    Then the log reads:
      """
      TASK OK
      """
    And the total is 2
    When I read the task log
      | start | 5 |
    Then the answer is a list of 0 items
