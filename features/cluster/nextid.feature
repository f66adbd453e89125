@cluster
Feature: The next free VMID
  /cluster/nextid proposes the lowest free VMID, as a string, and
  reserves nothing.

  Scenario: The proposal is a VMID, as a string
    When I ask for the next free VMID
    Then the answer is a VMID as a string

  Scenario: A free VMID is echoed back
    When I ask whether VMID "{vm1}" is free
    Then the answer is "{vm1}"

  @fake-only
  Scenario: A fresh cluster proposes 100, and nothing is reserved
    When I ask for the next free VMID
    Then the answer is "100"
    When I ask for the next free VMID
    Then the answer is "100"

  @fake-only
  Scenario: A VMID in use is refused
    Given the node has the guests:
      | vmid  | name |
      | {vm1} | web  |
    When I ask whether VMID "{vm1}" is free
    Then parameter "vmid" is rejected with "VM {vm1} already exists"
    When I ask whether VMID "{vm2}" is free
    Then the answer is "{vm2}"
