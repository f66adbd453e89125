@vm @pve9
Feature: The dbus-vmstate helper
  On 9.x POST /nodes/{node}/qemu/{vmid}/dbus-vmstate starts or stops the
  pve-dbus-vmstate@<vmid> helper a migration uses to carry a running
  VM's conntrack state. The VM must run on the node the call goes to;
  the helper ends with the VM's run.

  Scenario: Start and stop the helper of a running VM
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I call POST "/nodes/{node}/qemu/{vm1}/dbus-vmstate"
      | action | start |
    Then the call succeeds
    When I call POST "/nodes/{node}/qemu/{vm1}/dbus-vmstate"
      | action | stop |
    Then the call succeeds
    When I call POST "/nodes/{node}/qemu/{vm1}/dbus-vmstate"
      | action | stop |
    Then the call succeeds

  @fake-only
  Scenario: The node's journal shows the helper start and stop
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I call POST "/nodes/{node}/qemu/{vm1}/dbus-vmstate"
      | action | start |
    And I call GET "/nodes/{node}/journal"
      | lastentries | 5 |
    Then a line of the answer contains "starting dbus-vmstate helper for VM {vm1}"
    And a line of the answer contains "Started pve-dbus-vmstate@{vm1}.service - PVE DBus VMState Helper (VM {vm1})."
    When I call POST "/nodes/{node}/qemu/{vm1}/dbus-vmstate"
      | action | stop |
    And I call GET "/nodes/{node}/journal"
      | lastentries | 5 |
    Then a line of the answer contains "Stopped pve-dbus-vmstate@{vm1}.service - PVE DBus VMState Helper (VM {vm1})."

  Scenario: Only a VM running on the node
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/dbus-vmstate"
      | action | start |
    Then parameter "node" is rejected with "VM {vm1} not running locally on node '{node}'"
    When I call POST "/nodes/{node}/qemu/{vm1}/dbus-vmstate"
      | action | restart |
    Then parameter "action" is rejected with "value 'restart' does not have a value in the enumeration 'start, stop'"

  Scenario: It needs VM.Migrate on the VM
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    And a user "alice" with password "wonderland"
    And "alice" has the role "PVEVMUser" on "/vms/{vm1}"
    And "alice" logs in with password "wonderland"
    When I act as "alice"
    And I call POST "/nodes/{node}/qemu/{vm1}/dbus-vmstate"
      | action | start |
    Then PVE answers 403 "Permission check failed (/vms/{vm1}, VM.Migrate)"
