@cluster @destructive
Feature: Datacenter options
  PUT /cluster/options writes datacenter.cfg: every option of the
  release, each given as a string (property strings as PVE writes them),
  `delete` removing options. GET /cluster/options reads it back as PVE
  parses it: property strings as objects, `registered-tags` as a list,
  the description as comment lines. The options that steer other calls
  take effect: `next-id` bounds /cluster/nextid, `mac_prefix` starts
  generated MAC addresses.

  Scenario: Options are written, read back parsed, and take effect
    When I call PUT "/cluster/options"
      | keyboard  | de                                 |
      | migration | type=insecure,network=10.99.0.0/16 |
      | next-id   | lower={vm9},upper=999999           |
      | mac_prefix | 02:ab                             |
    Then the call succeeds
    When I call GET "/cluster/options"
    Then the answer has "keyboard" = "de"
    And the answer has "migration/type" = "insecure"
    And the answer has "migration/network" = "10.99.0.0/16"
    And the answer has "next-id/lower" = "{vm9}"
    And the answer has "mac_prefix" = "02:ab"
    When I ask for the next free VMID
    Then the answer is "{vm9}"
    When I create VM "{vm1}" with:
      | memory | 128                    |
      | net0   | virtio,bridge={bridge} |
    Then the task succeeds
    When I read the config of VM "{vm1}"
    Then the answer has "net0" matching "virtio=02:AB(:[0-9A-F]{2}){4},bridge={bridge}"
    When I call PUT "/cluster/options"
      | next-id | lower=200000,upper=100000 |
    Then PVE answers 500 "lower (200000) <= upper (100000) boundary rule broken"
    When I call PUT "/cluster/options"
      | delete | keyboard,migration,next-id,mac_prefix |
    Then the call succeeds
    When I call GET "/cluster/options"
    Then the answer has no "keyboard"
    And the answer has no "next-id"
    And the answer has "mac_prefix" = "BC:24:11"
