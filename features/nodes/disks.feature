@nodes @disks
Feature: A node's disks
  /nodes/{node}/disks lists the node's block devices with their SMART
  health, wear and what uses them, and makes ZFS pools, LVM volume
  groups, LVM-thin pools and directory storages on unused disks as
  tasks (zfscreate, lvmcreate, lvmthincreate, dircreate) that mark the
  disks used and, with add_storage, add a storage of the node. A fresh
  fake-pve node has the system disk /dev/sda (the pve volume group)
  and the unused disks /dev/sdb, /dev/sdc and /dev/nvme0n1; the
  scenarios that change disks are @fake-only, as on a real cluster they
  would destroy data.

  Scenario: The disks are listed with their health and usage
    When I call GET "/nodes/{node}/disks/list"
    Then the call succeeds
    And every item has "devpath"
    And every item has "health"
    And every item has "wearout"
    When I call GET "/nodes/{node}/disks/lvm"
    Then the call succeeds
    And the answer has "children"

  Scenario: Paths that are no disk are refused as PVE refuses them
    When I call GET "/nodes/{node}/disks/smart"
      | disk | /dev/nosuchdisk |
    Then PVE answers 500 "not a valid block device"
    When I call GET "/nodes/{node}/disks/smart"
      | disk | /dev/nosuch/disk |
    Then PVE answers 500 "failed to get absolute path to /dev/nosuch/disk"
    When I call GET "/nodes/{node}/disks/smart"
      | disk | sda |
    Then parameter "disk" is rejected with "value does not match the regex pattern"

  @fake-only
  Scenario: A fresh node's disks
    When I call GET "/nodes/{node}/disks/list"
    Then the answer is a list of 4 items
    And the item with "devpath" = "/dev/sda" has "used" = "BIOS boot"
    And the item with "devpath" = "/dev/sdb" has no "used"
    And the item with "devpath" = "/dev/nvme0n1" has "type" = "nvme"
    When I call GET "/nodes/{node}/disks/list"
      | type | unused |
    Then the answer is a list of 3 items
    When I call GET "/nodes/{node}/disks/smart"
      | disk | /dev/sdb |
    Then the answer has "health" = "PASSED"
    And the answer has "type" = "ata"
    When I call GET "/nodes/{node}/disks/lvmthin"
    Then the item with "lv" = "data" has "vg" = "pve"
    When I call GET "/nodes/{node}/scan/lvm"
    Then the answer lists "vg" = "pve"

  @fake-only
  Scenario: A ZFS mirror with a storage, then destroyed with its disks wiped
    When I start the task POST "/nodes/{node}/disks/zfs"
      | name        | tank                |
      | raidlevel   | mirror              |
      | devices     | /dev/sdb,/dev/sdc   |
      | add_storage | 1                   |
    Then the task ID names node "{node}", type "zfscreate", ID "tank" and user "{me}"
    When 5 seconds pass
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/disks/zfs"
    Then the item with "name" = "tank" has "health" = "ONLINE"
    When I call GET "/nodes/{node}/disks/list"
      | type | unused |
    Then the answer is a list of 1 item
    When I call GET "/storage/tank"
    Then the answer has "type" = "zfspool"
    And the answer has "pool" = "tank"
    And the answer has "nodes" = "{node}"
    When I start the task POST "/nodes/{node}/disks/zfs"
      | name      | tank         |
      | raidlevel | single       |
      | devices   | /dev/nvme0n1 |
    Then PVE answers 500 "pool 'tank' already exists on node '{node}'"
    When I start the task POST "/nodes/{node}/disks/lvm"
      | name   | vg2      |
      | device | /dev/sdb |
    Then PVE answers 500 "device '/dev/sdb' is already in use"
    When I start the task DELETE "/nodes/{node}/disks/zfs/tank"
      | cleanup-config | 1 |
      | cleanup-disks  | 1 |
    And 5 seconds pass
    Then the task ends with "OK"
    When I call GET "/storage/tank"
    Then PVE answers 500 "storage 'tank' does not exist"
    When I call GET "/nodes/{node}/disks/list"
      | type | unused |
    Then the answer is a list of 3 items

  @fake-only
  Scenario: RAID levels need their number of disks
    When I start the task POST "/nodes/{node}/disks/zfs"
      | name      | tank     |
      | raidlevel | raidz    |
      | devices   | /dev/sdb |
    Then PVE answers 500 "raidz needs at least 3 disks"
    When I start the task POST "/nodes/{node}/disks/zfs"
      | name      | tank              |
      | raidlevel | single            |
      | devices   | /dev/sdb,/dev/sdc |
    Then PVE answers 500 "please give only one disk for single disk mode"

  @fake-only
  Scenario: An LVM-thin pool and a directory storage on the free disks
    When I start the task POST "/nodes/{node}/disks/lvmthin"
      | name        | fast         |
      | device      | /dev/nvme0n1 |
      | add_storage | 1            |
    And 5 seconds pass
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/disks/lvmthin"
    Then the item with "lv" = "fast" has "vg" = "fast"
    When I call GET "/storage/fast"
    Then the answer has "type" = "lvmthin"
    And the answer has "thinpool" = "fast"
    When I start the task POST "/nodes/{node}/disks/directory"
      | name        | bulk     |
      | device      | /dev/sdc |
      | filesystem  | xfs      |
      | add_storage | 1        |
    And 5 seconds pass
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/disks/directory"
    Then the item with "path" = "/mnt/pve/bulk" has "type" = "xfs"
    When I call GET "/storage/bulk"
    Then the answer has "path" = "/mnt/pve/bulk"
    When I start the task POST "/nodes/{node}/disks/directory"
      | name   | bulk     |
      | device | /dev/sdb |
    Then PVE answers 500 "a systemd mount unit already exists: /etc/systemd/system/mnt-pve-bulk.mount"
    When I start the task PUT "/nodes/{node}/disks/wipedisk"
      | disk | /dev/sdc |
    Then PVE answers 500 "disk/partition '/dev/sdc1' is mounted"
    When I start the task PUT "/nodes/{node}/disks/wipedisk"
      | disk | /dev/sda |
    Then PVE answers 500 "disk/partition '/dev/sda2' is mounted"
    When I start the task DELETE "/nodes/{node}/disks/lvmthin/fast"
      | volume-group   | fast |
      | cleanup-config | 1    |
      | cleanup-disks  | 1    |
    And 5 seconds pass
    Then the task ends with "OK"
    When I start the task DELETE "/nodes/{node}/disks/lvmthin/fast"
      | volume-group | fast |
    And 5 seconds pass
    Then the task ends with "no such thin pool fast/fast"

  @fake-only
  Scenario: A new GPT on an empty disk, and a wipe
    When I start the task POST "/nodes/{node}/disks/initgpt"
      | disk | /dev/sdb |
    Then the task ID names node "{node}", type "diskinit", ID "sdb" and user "{me}"
    When 5 seconds pass
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/disks/list"
    Then the item with "devpath" = "/dev/sdb" has "gpt" = "1"
    When I start the task POST "/nodes/{node}/disks/initgpt"
      | disk | /dev/sda |
    Then PVE answers 500 "disk /dev/sda already in use"
    When I start the task POST "/nodes/{node}/disks/initgpt"
      | disk | /dev/sda3 |
    Then PVE answers 500 "/dev/sda3 is a partition"
    When I start the task PUT "/nodes/{node}/disks/wipedisk"
      | disk | /dev/sdb |
    And 5 seconds pass
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/disks/list"
    Then the item with "devpath" = "/dev/sdb" has "gpt" = "0"
