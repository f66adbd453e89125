@vm
Feature: VM lifecycle
  Creating a VM is a qmcreate task; PVE stores the config in canonical
  form and adds meta, smbios1, vmgenid, boot and a MAC by itself.

  Scenario: A created VM has PVE's canonical config
    When I create VM "{vm1}" with:
      | name   | conformance-web           |
      | memory | 128                       |
      | cores  | 1                         |
      | net0   | virtio,bridge={bridge}    |
      | scsi0  | {storage}:1               |
    Then the task ID names node "{node}", type "qmcreate", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "name" = "conformance-web"
    And the answer has "memory" = "128"
    And the answer has "cores" = "1"
    And the answer has "boot" = "order=scsi0;net0"
    And the answer has "net0" matching "virtio=BC:24:11:[0-9A-F]{2}:[0-9A-F]{2}:[0-9A-F]{2},bridge={bridge}"
    And the answer has "scsi0" matching "{storage}:(vm-{vm1}-disk-0|{vm1}/vm-{vm1}-disk-0\.raw),size=1G"
    And the answer has "smbios1" matching "uuid=[0-9a-f-]{36}"
    And the answer has "vmgenid" matching "[0-9a-f-]{36}"
    And the answer has "meta" matching "creation-qemu=[0-9.]+,ctime=[0-9]+"
    And the answer has "digest" matching "[0-9a-f]{40}"
    And the answer has no "vmid"
    And the answer has no "lock"

  Scenario: A VMID in use is refused, and no longer proposed
    Given VM "{vm1}" was created
    When I create VM "{vm1}"
    Then PVE answers 500 "unable to create VM {vm1} - VM {vm1} already exists on node '{node}'"
    When I ask whether VMID "{vm1}" is free
    Then parameter "vmid" is rejected with "VM {vm1} already exists"

  Scenario: Disks on a missing storage are refused
    When I create VM "{vm1}" with:
      | scsi0 | nosuchstore:1 |
    Then PVE answers 500 "storage 'nosuchstore' does not exist"

  @fake-only
  Scenario: Disks on a storage without images are refused
    When I create VM "{vm1}" with:
      | scsi0 | local:1 |
    Then parameter "storage" is rejected with "storage 'local' does not support vm images"

  Scenario: The VM directory, the VM list and the cluster show the new VM
    Given VM "{vm1}" was created
    When I read the directory of VM "{vm1}"
    Then the answer lists "subdir" = "config"
    And the answer lists "subdir" = "pending"
    And the answer lists "subdir" = "snapshot"
    When I list the VMs of node "{node}"
    Then the item with "vmid" = "{vm1}" has "status" = "stopped"
    And the item with "vmid" = "{vm1}" has "maxmem" = "134217728"
    And the item with "vmid" = "{vm1}" has "maxdisk" = "1073741824"
    And the item with "vmid" = "{vm1}" has no "qmpstatus"
    When I list the VMs of node "{node}"
      | full | 1 |
    Then the item with "vmid" = "{vm1}" has "qmpstatus" = "stopped"
    When I list the cluster resources of type "vm"
    Then the answer lists "id" = "qemu/{vm1}"

  Scenario: A VM created with start=1 is running once its task ends
    When I create VM "{vm1}" with:
      | memory | 128                    |
      | net0   | virtio,bridge={bridge} |
      | start  | 1                      |
    Then the task ends with "OK"
    When I read the status of VM "{vm1}"
    Then the answer has "status" = "running"

  @fake-only
  Scenario: The config holds only a create lock while qmcreate runs
    Given qmcreate tasks take 5 seconds
    When I create VM "{vm1}"
    Then the task is still running
    When I read the config of VM "{vm1}"
    Then the answer's fields are "digest, lock"
    And the answer has "lock" = "create"
    When I update VM "{vm1}" with:
      | cores | 2 |
    Then PVE answers 500 "VM is locked (create)"
    When 5 seconds pass
    Then the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has no "lock"
