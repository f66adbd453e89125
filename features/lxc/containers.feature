@lxc
Feature: Containers
  LXC containers live beside VMs in one VMID space: created from an OS
  template (vzcreate), configured with a digest, started and stopped
  (vzstart, vzshutdown, vzstop), snapshotted without RAM state
  (vzsnapshot), cloned (vzclone), turned into templates (vztemplate),
  resized and destroyed (vzdestroy). Against a real cluster the OS
  template comes from PVE_TEST_OSTEMPLATE or the appliance index.

  Background:
    Given the OS template is available

  Scenario: Create, configure, start, stop and destroy a container
    When I create container "{vm1}" with:
      | hostname     | ct-one                                      |
      | memory       | 256                                         |
      | swap         | 128                                         |
      | cores        | 1                                           |
      | rootfs       | {storage}:1                                 |
      | net0         | name=eth0,bridge={bridge},ip=dhcp           |
      | password     | not-shown-1                                 |
      | unprivileged | 1                                           |
    Then the task ID names node "{node}", type "vzcreate", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of container "{vm1}"
    Then the answer has "hostname" = "ct-one"
    And the answer has "memory" = "256"
    And the answer has "swap" = "128"
    And the answer has "unprivileged" = "1"
    And the answer has "net0" matching "^name=eth0,bridge={bridge},hwaddr=[0-9A-F:]{17},ip=dhcp,type=veth$"
    And the answer has "rootfs" matching "^{storage}:.*size=1G"
    And the answer has "arch"
    And the answer has "ostype"
    And the answer has "digest"
    And the answer has no "password"
    When I update container "{vm1}" with:
      | cores       | 2              |
      | description | made by a test |
    Then the answer is null
    When I read the config of container "{vm1}"
    Then the answer has "cores" = "2"
    And the answer has "description" = "made by a test"
    When I update container "{vm1}" with:
      | memory | 512              |
      | digest | 0000000000000000 |
    Then PVE answers 500 "detected modified configuration - file changed by other user? Try again."
    When I start container "{vm1}"
    Then the task ID names node "{node}", type "vzstart", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the status of container "{vm1}"
    Then the answer has "status" = "running"
    And the answer has "type" = "lxc"
    And the answer has "name" = "ct-one"
    And the answer has "maxmem" = "268435456"
    And the answer has "maxswap" = "134217728"
    And the answer has "pid"
    When I list the containers
    Then the item with "vmid" = "{vm1}" has "status" = "running"
    When I call GET "/cluster/resources"
      | type | vm |
    Then the item with "id" = "lxc/{vm1}" has "type" = "lxc"
    When I start container "{vm1}"
    Then PVE answers 500 "CT {vm1} already running"
    When I shutdown container "{vm1}"
      | timeout | 30 |
    Then the task ID names node "{node}", type "vzshutdown", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the status of container "{vm1}"
    Then the answer has "status" = "stopped"
    And the answer has no "pid"
    When I stop container "{vm1}"
    Then PVE answers 500 "CT {vm1} not running"
    When I reboot container "{vm1}"
    Then PVE answers 500 "VM {vm1} not running"
    When I destroy container "{vm1}"
      | purge | 1 |
    Then the task ID names node "{node}", type "vzdestroy", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of container "{vm1}"
    Then PVE answers 500 "Configuration file 'nodes/{node}/lxc/{vm1}.conf' does not exist"

  Scenario: A running container keeps some changes pending
    Given container "{vm1}" was created
    And container "{vm1}" was started
    When I update container "{vm1}" with:
      | memory     | 384        |
      | nameserver | 192.0.2.53 |
    Then the answer is null
    When I read the config of container "{vm1}"
      | current | 1 |
    Then the answer has "memory" = "384"
    And the answer has no "nameserver"
    When I read the config of container "{vm1}"
    Then the answer has "nameserver" = "192.0.2.53"
    When I read the pending changes of container "{vm1}"
    Then the item with "key" = "nameserver" has "pending" = "192.0.2.53"
    And the item with "key" = "memory" has "value" = "384"
    When I reboot container "{vm1}"
    Then the task ends with "OK"
    When I read the config of container "{vm1}"
      | current | 1 |
    Then the answer has "nameserver" = "192.0.2.53"

  Scenario: Snapshots, a template and a linked clone
    Given container "{vm1}" was created
    When I take snapshot "first" of container "{vm1}"
      | description | before the change |
    Then the task ID names node "{node}", type "vzsnapshot", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I update container "{vm1}" with:
      | cores | 2 |
    And I list the snapshots of container "{vm1}"
    Then the answer is a list of 2 items
    And the item with "name" = "first" has "description" = "before the change"
    And the item with "name" = "first" has no "vmstate"
    And the item with "name" = "current" has "parent" = "first"
    When I roll container "{vm1}" back to snapshot "first"
    Then the task ID names node "{node}", type "vzrollback", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of container "{vm1}"
    Then the answer has no "cores"
    And the answer has "parent" = "first"
    When I convert container "{vm1}" to a template
    Then PVE answers 500 "unable to create template, because CT contains snapshots"
    When I delete snapshot "first" of container "{vm1}"
    Then the task ID names node "{node}", type "vzdelsnapshot", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I convert container "{vm1}" to a template
    Then the answer is null
    When I read the config of container "{vm1}"
    Then the answer has "template" = "1"
    When I start container "{vm1}"
    Then the task ends with "you can't start a CT if it's a template"
    When I clone container "{vm1}" as "{vm2}" with:
      | hostname | linked-clone |
    Then the task ID names node "{node}", type "vzclone", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of container "{vm2}"
    Then the answer has "hostname" = "linked-clone"
    And the answer has no "template"
    And the answer has no "lock"

  Scenario: Resizing the root file system
    Given container "{vm1}" was created
    When I resize "rootfs" of container "{vm1}" to "+1G"
    Then the task ID names node "{node}", type "resize", ID "{vm1}" and user "{me}"
    And the task ends with "OK"
    When I read the config of container "{vm1}"
    Then the answer has "rootfs" matching ".*,size=2G"
    When I resize "rootfs" of container "{vm1}" to "1G"
    Then PVE answers 500 "unable to shrink disk size"

  Scenario: One VMID space for VMs and containers
    Given VM "{vm1}" was created
    When I create container "{vm1}" with:
      | rootfs | {storage}:1 |
    Then PVE answers 500 "VM {vm1} already exists on node '{node}'"

  Scenario: Refused creations
    When I create container "{vm1}" with:
      | mp0 | {storage}:1,mp=/data |
    Then PVE answers 500 "mount points configured, but 'rootfs' not set - aborting"

  @fake-only
  Scenario: The appliance index lists PVE's system templates
    When I read the appliance index
    Then the item with "template" = "debian-12-standard_12.7-1_amd64.tar.zst" has "type" = "lxc"
    And every item has "section" = "system"

  Scenario: The interfaces of a running container
    Given container "{vm1}" was created
    When I read the interfaces of container "{vm1}"
    Then the answer is null
    Given container "{vm1}" was started
    When I read the interfaces of container "{vm1}"
    Then the item with "name" = "lo" has "inet" = "127.0.0.1/8"
    And the answer lists "name" = "eth0"
    And every item has "hwaddr"
    And every item has "ip-addresses"

  @fake-only
  Scenario: Interfaces set through the control API
    Given container "{vm1}" was created
    And container "{vm1}" was started
    And container "{vm1}" has the interfaces:
      """
      [{"name": "eth0", "hardware-address": "bc:24:11:00:00:09",
        "ip-addresses": [{"ip-address": "192.0.2.7", "ip-address-type": "ipv4", "prefix": 24}]}]
      """
    When I read the interfaces of container "{vm1}"
    Then the answer is a list of 1 item
    And the item with "name" = "eth0" has "inet" = "192.0.2.7/24"
    And the item with "name" = "eth0" has "hwaddr" = "bc:24:11:00:00:09"
