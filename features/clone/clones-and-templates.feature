@clone
Feature: Clones and templates
  clone_vm is a qmclone task whose ID is the source VM; the clone gets
  new MACs and a new smbios1 uuid. A template (qmtemplate) neither starts
  nor snapshots, and its clones are linked by default.

  Scenario: A full clone of a stopped VM
    Given VM "{vm1}" was created with:
      | name   | conformance-src        |
      | memory | 128                    |
      | net0   | virtio,bridge={bridge} |
      | scsi0  | {storage}:1            |
    When I read the config of VM "{vm1}"
    And I remember the answer's "net0" as "net0"
    And I remember the answer's "smbios1" as "smbios1"
    And I remember the answer's "meta" as "meta"
    When I clone VM "{vm1}" to "{vm2}"
    Then the task ID names node "{node}", type "qmclone", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log contains "create full clone of drive scsi0 ({storage}:vm-{vm1}-disk-0)"
    When I read the config of VM "{vm2}"
    Then the answer has "name" = "Copy-of-VM-conformance-src"
    And the answer's "net0" differs from "net0"
    And the answer's "smbios1" differs from "smbios1"
    And the answer's "meta" is "{var:meta}"
    And the answer has "scsi0" matching "{storage}:vm-{vm2}-disk-0,size=1G"
    And the answer has no "lock"

  Scenario: Refused clones
    Given VM "{vm1}" was created
    And VM "{vm2}" was created
    When I clone VM "{vm1}" to "{vm2}"
    Then PVE answers 500 "unable to create VM {vm2}: config file already exists"
    When I clone VM "{vm1}" to "{vm3}"
      | full | 0 |
    Then PVE answers 500 "Linked clone feature is not supported for '{storage}:vm-{vm1}-disk-0' (scsi0)"
    When I clone VM "{vm1}" to "{vm3}"
      | snapname | nope |
    Then PVE answers 500 "snapshot 'nope' does not exist"
    When I clone VM "{vm9}" to "{vm3}"
    Then PVE answers 500 "Configuration file 'nodes/{node}/qemu-server/{vm9}.conf' does not exist"

  Scenario: A template is made from a stopped VM and refuses to start
    Given VM "{vm1}" was created
    When I convert VM "{vm1}" to a template
    Then the task ID names node "{node}", type "qmtemplate", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of VM "{vm1}"
    Then the answer has "template" = "1"
    And the answer has "scsi0" matching "{storage}:base-{vm1}-disk-0,size=1G"
    When I read the status of VM "{vm1}"
    Then the answer has "template" = "1"
    When I start VM "{vm1}"
    Then the task ends with "you can't start a vm if it's a template"
    When I take snapshot "first" of VM "{vm1}"
    Then the task ends with "you can't take a snapshot if it's a template"
    When I convert VM "{vm1}" to a template
    Then PVE answers 500 "you can't convert a template to a template"

  Scenario: A running VM is not converted
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When I convert VM "{vm1}" to a template
    Then PVE answers 500 "you can't convert a VM to template if VM is running"

  Scenario: A template's clone is linked by default, a full one on request
    Given VM "{vm1}" was created
    When I convert VM "{vm1}" to a template
    Then the task ends with "OK"
    When I clone VM "{vm1}" to "{vm2}"
      | name | linked |
    Then the task ends with "OK"
    When I read the task log
    Then the log contains "create linked clone of drive scsi0 ({storage}:base-{vm1}-disk-0)"
    When I clone VM "{vm1}" to "{vm3}"
      | full | 1    |
      | name | full |
    Then the task ends with "OK"
    When I read the config of VM "{vm3}"
    Then the answer has "name" = "full"
    And the answer has no "template"
    When I clone VM "{vm1}" to "{vm4}"
      | full    | 0         |
      | storage | {storage} |
    Then PVE answers 500 "parameter 'storage' not allowed for linked clones"

  @fake-only
  Scenario: The clone is listed at once with a clone lock, the source edits wait
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    And qmclone tasks take 5 seconds
    When I clone VM "{vm1}" to "{vm2}"
    Then the task is still running
    When I list the cluster resources of type "vm"
    Then the item with "id" = "qemu/{vm2}" has "lock" = "clone"
    When I update VM "{vm2}" with:
      | cores | 2 |
    Then PVE answers 500 "VM is locked (clone)"
    When I update VM "{vm1}" with:
      | cores | 2 |
    Then PVE answers 500 "can't lock file '/var/lock/qemu-server/lock-{vm1}.conf' - got timeout"
    When 5 seconds pass
    Then the task ends with "OK"
