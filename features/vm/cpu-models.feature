@vm @pve9.2
Feature: Custom CPU models
  PVE 9.2 manages /etc/pve/virtual-guest/cpu-models.conf through
  /cluster/qemu/custom-cpu-models: a model has a name (the `custom-`
  prefix optional), the model it reports to the guest and its own flags,
  and a VM names it as `cpu: custom-<name>`. Who may see, change or use
  a model is set on /mapping/cpu/<name> (Mapping.Audit, Mapping.Modify,
  Mapping.Use).

  Scenario: Make a model, use it in a VM, change it and remove it
    When I create custom CPU model "{prefix}fast" with:
      | reported-model | Skylake-Server |
      | flags          | +aes;+avx2     |
    Then the call succeeds
    When I call GET "/cluster/qemu/custom-cpu-models/custom-{prefix}fast"
    Then the answer has "cputype" = "custom-{prefix}fast"
    And the answer has "reported-model" = "Skylake-Server"
    And the answer has "flags" = "+aes;+avx2"
    And the answer has "digest"
    When I call GET "/cluster/qemu/custom-cpu-models"
    Then the item with "cputype" = "custom-{prefix}fast" has "reported-model" = "Skylake-Server"
    When I call GET "/nodes/{node}/capabilities/qemu/cpu"
    Then the item with "name" = "custom-{prefix}fast" has "vendor" = "GenuineIntel"
    When I create VM "{vm1}" with:
      | cpu    | custom-{prefix}fast |
      | memory | 512                 |
    Then the task succeeds
    When I call PUT "/cluster/qemu/custom-cpu-models/{prefix}fast"
      | level  | 30    |
      | delete | flags |
    Then the call succeeds
    When I call GET "/cluster/qemu/custom-cpu-models/{prefix}fast"
    Then the answer has "level" = "30"
    And the answer has no "flags"
    When I call POST "/cluster/qemu/custom-cpu-models"
      | cputype        | {prefix}fast |
      | reported-model | kvm64        |
    Then PVE answers 500 "custom CPU model '{prefix}fast' already exists"
    When I call PUT "/cluster/qemu/custom-cpu-models/{prefix}fast"
      | delete | reported-model |
    Then PVE answers 500 "cannot delete 'reported-model'"
    When I call DELETE "/cluster/qemu/custom-cpu-models/{prefix}fast"
    Then the call succeeds
    When I call GET "/cluster/qemu/custom-cpu-models/{prefix}fast"
    Then PVE answers 500 "Custom cputype '{prefix}fast' not found"

  Scenario: A VM cannot name a model that does not exist
    When I call POST "/nodes/{node}/qemu"
      | vmid | {vm1}                |
      | cpu  | custom-{prefix}ghost |
    Then parameter "cpu" is rejected with "invalid format - Custom cputype '{prefix}ghost' not found"
    When I call POST "/nodes/{node}/qemu"
      | vmid | {vm1}          |
      | cpu  | DiamondRapids2 |
    Then parameter "cpu" is rejected with "invalid format - Built-in cputype 'DiamondRapids2' is not defined (missing 'custom-' prefix?)"

  Scenario: Mapping.Use on the model lets a user put it in a VM
    Given custom CPU model "{prefix}fast" was created with:
      | reported-model | EPYC-Genoa |
    And a user "alice" with password "wonderland"
    And "alice" has the role "PVEVMAdmin" on "/vms"
    And "alice" has the role "PVEDatastoreUser" on "/storage"
    And "alice" logs in with password "wonderland"
    When I act as "alice"
    And I call GET "/cluster/qemu/custom-cpu-models"
    Then the answer does not list "cputype" = "custom-{prefix}fast"
    When I call POST "/nodes/{node}/qemu"
      | vmid | {vm1}               |
      | cpu  | custom-{prefix}fast |
    Then PVE answers 403 "Permission check failed (/mapping/cpu/{prefix}fast, Mapping.Use)"
    When I act as the administrator
    And I grant "alice" the role "PVEMappingUser" on "/mapping/cpu/{prefix}fast"
    And I act as "alice"
    And I call GET "/cluster/qemu/custom-cpu-models"
    Then the answer lists "cputype" = "custom-{prefix}fast"
    When I create VM "{vm1}" with:
      | cpu | custom-{prefix}fast |
    Then the task succeeds

  Scenario: The nodes that support each CPU flag
    When I call GET "/cluster/qemu/cpu-flags"
    Then the call succeeds
    And the answer lists "name" = "nested-virt"
    And the answer lists "name" = "avx512f"
    When I call GET "/nodes/{node}/capabilities/qemu/cpu-flags"
    Then the answer lists "name" = "md-clear"
    And every item has "supported-on"
