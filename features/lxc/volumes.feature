@lxc
Feature: A container's volume moves to another container
  move_volume with `target-vmid` hands a mount point (or an unused
  volume) to another container of the node: the volume is renamed for
  its new owner, leaves the source's config and joins the target's, in
  a move_volume task named `<vmid>-<key>><target>-<key>`.

  Background:
    Given the OS template is available

  Scenario: A mount point moves to another container
    Given container "{vm1}" was created
    And container "{vm2}" was created
    When I update container "{vm1}" with:
      | mp0 | {storage}:1,mp=/data |
    Then the call succeeds
    When I move a volume of container "{vm1}" with:
      | volume        | mp0   |
      | target-vmid   | {vm2} |
      | target-volume | mp1   |
    Then the task ID names node "{node}", type "move_volume", ID "{vm1}-mp0>{vm2}-mp1" and user "{me}"
    And the task ends with "OK"
    When I read the config of container "{vm1}"
    Then the answer has no "mp0"
    When I read the config of container "{vm2}"
    Then the answer has "mp1" matching "{storage}:.*{vm2}.*mp=/data.*"

  Scenario: What moving a volume to another container refuses
    Given container "{vm1}" was created
    And container "{vm2}" was created
    When I move a volume of container "{vm1}" with:
      | volume      | rootfs |
      | target-vmid | {vm2}  |
    Then PVE answers 500 "Cannot move to/from 'rootfs'"
    When I move a volume of container "{vm1}" with:
      | volume      | mp5   |
      | target-vmid | {vm2} |
    Then PVE answers 500 "volume 'mp5' for container '{vm1}' does not exist"
    When I move a volume of container "{vm1}" with:
      | volume      | mp0   |
      | target-vmid | {vm3} |
    Then PVE answers 500 "could not find CT {vm3}"
    When I move a volume of container "{vm1}" with:
      | volume      | rootfs    |
      | target-vmid | {vm2}     |
      | storage     | {storage} |
    Then PVE answers 500 "either set storage or target-vmid, but not both"
