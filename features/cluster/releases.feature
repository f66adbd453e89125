@cluster
Feature: Each release answers as itself
  A client meets the release the target runs: its version, and only the
  paths of its own schema. 9.2 added the cluster-wide QEMU settings
  (/cluster/qemu: custom CPU models and CPU flags); 9.1 and 8.4 have no
  such path and refuse it as any unknown path.

  @fake-only @pve9.2
  Scenario: PVE 9.2 names its version
    When I read the version
    Then the answer has "version" = "9.2.11"
    And the answer has "release" = "9.2"
    And the answer has "repoid" = "f6997e698c7933ea"

  @fake-only @pve9.1
  Scenario: PVE 9.1 names its version
    When I read the version
    Then the answer has "version" = "9.1.5"
    And the answer has "release" = "9.1"
    And the answer has "repoid" = "80cf92a64bef6889"

  @fake-only @pve9.2
  Scenario: A 9.2 node runs 9.2's kernel and manager
    When I read the status of node "{node}"
    Then the answer has "pveversion" = "pve-manager/9.2.11/f6997e698c7933ea"
    And the answer has "current-kernel/release" = "7.0.14-12-pve"

  @pve9.2
  Scenario: A path 9.2 added is a directory on 9.2
    When I call GET "/cluster/qemu"
    Then the call succeeds
    And the answer lists "name" = "custom-cpu-models"
    And the answer lists "name" = "cpu-flags"

  @pve8.4 @pve9.1
  Scenario: Before 9.2 the same path is unknown
    When I call GET "/cluster/qemu"
    Then PVE answers 501 "Method 'GET /cluster/qemu' not implemented"
