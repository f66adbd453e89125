@vm
Feature: Destroying a VM
  destroy_vm is a qmdestroy task that frees the VM's volumes; PVE refuses
  running and protected VMs before starting it.

  Scenario: A stopped VM is destroyed with its disks
    Given VM "{vm1}" was created
    When I destroy VM "{vm1}"
      | purge                      | 1 |
      | destroy-unreferenced-disks | 1 |
    Then the task ID names node "{node}", type "qmdestroy", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log contains "purging VM {vm1} from related configurations.."
    And the log's last line is "TASK OK"
    And VM "{vm1}" does not exist
    When I ask whether VMID "{vm1}" is free
    Then the answer is "{vm1}"

  Scenario: A running VM is not destroyed
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I destroy VM "{vm1}"
    Then PVE answers 500 "VM {vm1} is running - destroy failed"

  Scenario: A protected VM is not destroyed
    Given VM "{vm1}" was created with:
      | memory     | 128 |
      | protection | 1   |
    When I destroy VM "{vm1}"
    Then PVE answers 500 "can't remove VM {vm1} - protection mode enabled"
    When I update VM "{vm1}" with:
      | delete | protection |
    And I destroy VM "{vm1}"
    Then the task ends with "OK"

  Scenario: A VM that does not exist
    When I destroy VM "{vm9}"
    Then PVE answers 500 "Configuration file 'nodes/{node}/qemu-server/{vm9}.conf' does not exist"
