@vm
Feature: The QEMU monitor
  POST /nodes/{node}/qemu/{vmid}/monitor hands a command line to the VM's
  QEMU monitor and answers its output, each line ending in \r\n; a VM
  that does not run answers "ERROR: VM <vmid> not running". `stop` and
  `cont` pause and resume the guest as PVE then shows it. On 9.x a
  command needs what qemu-server's list says: nothing more for `info`,
  Sys.Modify on / for a command that changes the VM, root@pam for the
  root-only ones and for a command the list does not name.

  Scenario: Read the status, pause and resume
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | info status |
    Then the answer is "VM status: running\r\n"
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | stop |
    Then the answer is ""
    When I call GET "/nodes/{node}/qemu/{vm1}/status/current"
    Then the answer has "qmpstatus" = "paused"
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | cont |
    Then the answer is ""
    When I call GET "/nodes/{node}/qemu/{vm1}/status/current"
    Then the answer has "qmpstatus" = "running"
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | sendkey ctrl-alt-nokey |
    Then the answer is "invalid parameter: nokey\r\n"

  Scenario: The VM's disks and network cards
    Given VM "{vm1}" was created with:
      | scsi0 | {storage}:1                          |
      | net0  | virtio=BC:24:11:12:34:56,bridge=vmbr0 |
    And VM "{vm1}" is running
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | info network |
    Then the answer contains "net0: index=0,type=nic,model=virtio-net-pci,macaddr=bc:24:11:12:34:56"
    And the answer contains "net0: index=0,type=tap,ifname=tap{vm1}i0,"
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | info block |
    Then the answer contains "drive-scsi0"
    And the answer contains "vm-{vm1}-disk-0"
    And the answer contains "Attached to:      scsi0"

  Scenario: A stopped VM's monitor does not answer
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | info status |
    Then the answer is "ERROR: VM {vm1} not running\n"

  @pve9
  Scenario: What a command needs
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    And a user "alice" with password "wonderland"
    And "alice" has the role "PVEAuditor" on "/"
    And "alice" logs in with password "wonderland"
    When I act as "alice"
    And I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | info status |
    Then the answer is "VM status: running\r\n"
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | stop |
    Then PVE answers 403 "Permission check failed (/, Sys.Modify)"
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | device_add e1000 |
    Then PVE answers 500 "root-only command 'device_add'"
    When I call POST "/nodes/{node}/qemu/{vm1}/monitor"
      | command | frobnicate |
    Then PVE answers 500 "command 'frobnicate' non-existent or not assigned a required permission yet, limiting to root user"
