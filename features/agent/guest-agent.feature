@agent
Feature: Guest agent
  PVE checks, in this order, that an agent is configured, that the VM
  runs, and that the agent answers; then it passes the agent's answer
  through, wrapped in "result" except for exec, exec-status and files.

  Scenario: An agent that is not configured, or a VM that does not run
    Given VM "{vm1}" was created
    And VM "{vm2}" was created with:
      | memory | 128 |
      | agent  | 1   |
    When I ask the guest agent of VM "{vm1}" for "ping"
    Then PVE answers 500 "No QEMU guest agent configured"
    When I ask the guest agent of VM "{vm2}" for "ping"
    Then PVE answers 500 "VM {vm2} is not running"
    When I ask the guest agent of VM "{vm2}" for "get-osinfo"
    Then PVE answers 500 "VM {vm2} is not running"
    When I list the guest agent calls of VM "{vm2}"
    Then the answer lists "name" = "ping"
    And the answer lists "name" = "exec"

  Scenario: A running VM's agent does not answer before its guest has booted
    Given VM "{vm1}" was created with:
      | memory | 128                    |
      | agent  | 1                      |
      | net0   | virtio,bridge={bridge} |
    And VM "{vm1}" is running
    When I ask the guest agent of VM "{vm1}" for "ping"
    Then PVE answers 500 "QEMU guest agent is not running"

  @fake-only
  Scenario: Once booted, the agent reports the guest
    Given VM "{vm1}" was created with:
      | name   | web01                  |
      | memory | 1024                   |
      | agent  | 1                      |
      | net0   | virtio,bridge={bridge} |
    And VM "{vm1}" is running
    When 5 seconds pass
    And I ask the guest agent of VM "{vm1}" for "ping"
    Then the answer has "result"
    When I ask the guest agent of VM "{vm1}" for "get-host-name"
    Then the answer has "result/host-name" = "web01"
    When I ask the guest agent of VM "{vm1}" for "info"
    Then the answer has "result/version"
    When I ask the guest agent of VM "{vm1}" for "get-osinfo"
    Then the answer has "result/id"
    When I ask the guest agent of VM "{vm1}" for "get-time"
    Then the answer has "result"
    When I ask the guest agent of VM "{vm1}" for "get-timezone"
    Then the answer has "result/offset"
    When I ask the guest agent of VM "{vm1}" for "get-users"
    Then the answer has "result"
    When I ask the guest agent of VM "{vm1}" for "get-vcpus"
    Then the answer has "result/0/logical-id" = "0"
    When I ask the guest agent of VM "{vm1}" for "get-memory-blocks"
    Then the answer has "result/0/phys-index"
    When I ask the guest agent of VM "{vm1}" for "get-memory-block-info"
    Then the answer has "result/size"
    When I ask the guest agent of VM "{vm1}" for "get-fsinfo"
    Then the answer has "result"
    When I ask the guest agent of VM "{vm1}" for "network-get-interfaces"
    Then the answer has "result/0/name" = "lo"
    When I send the guest agent of VM "{vm1}" the command "ping"
    Then the answer has "result"

  @fake-only
  Scenario: Commands, files and file systems through the agent
    Given VM "{vm1}" was created with:
      | memory | 128 |
      | agent  | 1   |
    And VM "{vm1}" is running
    When 5 seconds pass
    And I ask the guest agent of VM "{vm1}" for "exec"
      | command | echo   |
      | command | hello  |
    Then the answer has "pid"
    When I remember the answer's "pid" as "pid"
    And I ask the guest agent of VM "{vm1}" for "exec-status"
      | pid | {var:pid} |
    Then the answer has "exited" = "1"
    And the answer has "exitcode" = "0"
    And the answer has "out-data" matching "hello\n"
    When I ask the guest agent of VM "{vm1}" for "exec-status"
      | pid | 4242 |
    Then PVE answers 500 "Agent error: Invalid parameter 'pid'"
    When I ask the guest agent of VM "{vm1}" for "file-write"
      | file    | /tmp/note |
      | content | hi there  |
    Then the answer is null
    When I ask the guest agent of VM "{vm1}" for "file-read"
      | file | /tmp/note |
    Then the answer has "content" = "hi there"
    When I ask the guest agent of VM "{vm1}" for "file-read"
      | file | /missing |
    Then PVE answers 500 "Agent error: failed to open file '/missing' (mode: 'r'): No such file or directory"
    When I ask the guest agent of VM "{vm1}" for "set-user-password"
      | username | root     |
      | password | s3cret!! |
    Then the answer has "result"
    When I ask the guest agent of VM "{vm1}" for "fsfreeze-freeze"
    Then the answer has "result"
    When I ask the guest agent of VM "{vm1}" for "fsfreeze-status"
    Then the answer has "result" = "frozen"
    When I ask the guest agent of VM "{vm1}" for "fsfreeze-thaw"
    And I ask the guest agent of VM "{vm1}" for "fsfreeze-status"
    Then the answer has "result" = "thawed"
    When I ask the guest agent of VM "{vm1}" for "fstrim"
    Then the answer has "result/paths"
    When I ask the guest agent of VM "{vm1}" for "suspend-ram"
    Then the answer has "result"
    When I read the status of VM "{vm1}"
    Then the answer has "qmpstatus" = "paused"
    When I resume VM "{vm1}"
    Then the task ends with "OK"
    When I ask the guest agent of VM "{vm1}" for "shutdown"
    Then the answer has "result"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "stopped"
