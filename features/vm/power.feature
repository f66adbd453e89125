@vm
Feature: Power
  Each power call is a task of its own type; PVE refuses what makes no
  sense for the VM's state, before or inside the task.

  Scenario: Start, reset and stop a VM
    Given VM "{vm1}" was created
    When I start VM "{vm1}"
    Then the task ID names node "{node}", type "qmstart", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "running"
    And the answer has "qmpstatus" = "running"
    And the answer has "pid"
    And the answer has "ha/managed" = "0"
    When I start VM "{vm1}"
    Then the task ends with "VM {vm1} already running"
    When I reset VM "{vm1}"
    Then the task ID names node "{node}", type "qmreset", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I stop VM "{vm1}"
    Then the task ID names node "{node}", type "qmstop", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "stopped"
    And the answer has no "pid"

  Scenario: A stopped VM reports no runtime fields
    Given VM "{vm1}" was created
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "stopped"
    And the answer has "qmpstatus" = "stopped"
    And the answer has "maxmem" = "134217728"
    And the answer has "cpus" = "1"
    And the answer has "uptime" = "0"
    And the answer has no "diskread"
    And the answer has no "running-qemu"

  Scenario: Calls that need a running VM are refused on a stopped one
    Given VM "{vm1}" was created
    When I reboot VM "{vm1}"
    Then PVE answers 500 "VM {vm1} not running"
    When I reset VM "{vm1}"
    Then PVE answers 500 "VM {vm1} not running"
    When I suspend VM "{vm1}"
    Then PVE answers 500 "VM {vm1} not running"
    When I resume VM "{vm1}"
    Then PVE answers 500 "VM {vm1} not running"
    When I stop VM "{vm1}"
    Then the task ends with "OK"
    When I shut down VM "{vm1}"
    Then the task ID names node "{node}", type "qmshutdown", ID "{vm1}" and user "{me}"
    And the task ends with "OK"

  Scenario: A paused VM resumes and refuses a shutdown
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I suspend VM "{vm1}"
    Then the task ID names node "{node}", type "qmpause", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "running"
    And the answer has "qmpstatus" = "paused"
    When I shut down VM "{vm1}"
    Then PVE answers 500 "VM is paused - cannot shutdown"
    When I resume VM "{vm1}"
    Then the task ID names node "{node}", type "qmresume", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "qmpstatus" = "running"

  Scenario: A VM that does not exist does not start
    When I start VM "{vm9}"
    Then PVE answers 500 "Configuration file 'nodes/{node}/qemu-server/{vm9}.conf' does not exist"
    When I reset VM "{vm9}"
    Then PVE answers 500 "unable to find configuration file for VM {vm9} on node '{node}'"

  @fake-only
  Scenario: A reboot is a qmreboot task (a guest without an OS would not answer ACPI)
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I reboot VM "{vm1}"
    Then the task ID names node "{node}", type "qmreboot", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "running"

  @fake-only
  Scenario: Hibernation stores the RAM and locks the VM until it resumes
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I hibernate VM "{vm1}"
    Then the task ID names node "{node}", type "qmsuspend", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "stopped"
    And the answer has "lock" = "suspended"
    When I start VM "{vm1}"
    Then the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has no "lock"
    And the answer has no "vmstate"

  @fake-only
  Scenario: A shutdown without ACPI times out, a forced one stops the VM
    Given VM "{vm1}" was created with:
      | memory | 128 |
      | acpi   | 0   |
    And VM "{vm1}" is running
    And qmshutdown tasks take 0 seconds
    When I shut down VM "{vm1}"
      | timeout | 10 |
    And 10 seconds pass
    Then the task ends with "VM quit/powerdown failed - got timeout"
    When I shut down VM "{vm1}"
      | timeout   | 10 |
      | forceStop | 1  |
    And 10 seconds pass
    Then the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "stopped"

  @fake-only
  Scenario: A VM on a bridge that does not exist fails to start
    Given VM "{vm1}" was created with:
      | memory | 128                  |
      | net0   | virtio,bridge=vmbr99 |
    When I start VM "{vm1}"
    Then the task ends with "bridge 'vmbr99' does not exist"
