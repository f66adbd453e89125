@vm @rrd
Feature: A VM's statistics
  rrddata answers a VM's series for a time frame at the resolution of
  the release's RRD layout: pve2-vm (70 points a frame) on PVE 8,
  pve-vm-9.0 (finer, with the host's view of memory and pressure) on
  PVE 9. A frame always spans its fixed number of steps, but the VM's
  RRD file holds nothing from before the VM was created: for a VM made
  a moment ago every point carries only its time, and the last one (the
  step still being filled) is left out.

  Scenario: An hour at one point a minute, and refused frames
    Given VM "{vm1}" was created
    When I read the hour statistics of VM "{vm1}"
    Then the answer is a list of 59 items
    And the points are 60 seconds apart
    And no item has "maxmem"
    And no item has "cpu"
    When I read the decade statistics of VM "{vm1}"
    Then parameter "timeframe" is rejected with "value 'decade' does not have a value in the enumeration 'hour, day, week, month, year'"
    When I read the hour statistics of VM "{vm2}"
    Then PVE answers 500 "Configuration file 'nodes/{node}/qemu-server/{vm2}.conf' does not exist"

  @pve8
  Scenario: PVE 8 keeps a day as 70 half-hour points
    Given VM "{vm1}" was created
    When I read the day statistics of VM "{vm1}"
    Then the answer is a list of 69 items
    And the points are 1800 seconds apart
    And no item has "maxmem"

  @pve9
  Scenario: PVE 9 keeps a day at one point a minute
    Given VM "{vm1}" was created
    When I read the day statistics of VM "{vm1}"
      | cf | MAX |
    Then the answer is a list of 1439 items
    And the points are 60 seconds apart
    And no item has "memhost"
    And no item has "cpu"

  # pvestatd records a stopped VM's usage as unknown, and rrddata leaves
  # unknown values out: only a running VM's points carry them.
  @pve9 @fake-only
  Scenario: PVE 9 records a running VM's host memory and pressure
    Given VM "{vm1}" was created
    And VM "{vm1}" is running
    When 180 seconds pass
    And I read the hour statistics of VM "{vm1}"
    Then the answer has "59/memhost"
    And the answer has "59/pressurememorysome"
    And the answer has "59/cpu"
    And the answer has "59/netin"
    And the answer has no "0/cpu"
    And the answer has no "0/memhost"
    And the answer has no "0/maxmem"
    And the answer has "59/maxmem"

  @pve8
  Scenario: PVE 8 keeps a week as 70 three-hour points
    Given VM "{vm1}" was created
    When I read the week statistics of VM "{vm1}"
    Then the answer is a list of 69 items
    And the points are 10800 seconds apart

  @pve9
  Scenario: PVE 9 keeps a week as 336 half-hour points
    Given VM "{vm1}" was created
    When I read the week statistics of VM "{vm1}"
    Then the answer is a list of 335 items
    And the points are 1800 seconds apart
