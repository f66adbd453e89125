@nodes @hardware
Feature: A node's hardware, QEMU capabilities and packages
  /nodes/{node}/hardware lists PCI devices (with PVE's default class
  filter, 05;06;0b) and USB devices; /nodes/{node}/capabilities/qemu the
  CPU models and machine types of the release's QEMU; /nodes/{node}/apt
  the installed versions of the release's packages and the updates the
  node knows of.

  Scenario: The CPU models and machine types
    When I call GET "/nodes/{node}/capabilities/qemu/cpu"
    Then the call succeeds
    And the item with "name" = "x86-64-v2-AES" has "vendor" = "default"
    And the item with "name" = "host" has "custom" = "0"
    And the item with "name" = "EPYC-Rome" has "vendor" = "AuthenticAMD"
    When I call GET "/nodes/{node}/capabilities/qemu/machines"
    Then the call succeeds
    And the item with "id" = "pc-i440fx-4.1+pve2" has "type" = "i440fx"
    And the item with "id" = "pc-q35-9.2+pve1" has "changes" = "Disables S3/S4 power states by default."

  @pve9
  Scenario: The 9.x capabilities
    When I call GET "/nodes/{node}/capabilities/qemu/machines"
    Then the item with "id" = "pc-q35-10.1" has "version" = "10.1"
    When I call GET "/nodes/{node}/capabilities/qemu/cpu-flags"
    Then the answer lists "name" = "md-clear"
    And the answer lists "name" = "aes"

  Scenario: The installed packages are the release's
    When I call GET "/nodes/{node}/apt/versions"
    Then the call succeeds
    And the item with "Package" = "proxmox-ve" has "CurrentState" = "Installed"
    And the answer lists "Package" = "qemu-server"
    And the answer lists "Package" = "pve-qemu-kvm"

  @pve9.2
  Scenario: 9.2's QEMU 11.0 machine types
    When I call GET "/nodes/{node}/capabilities/qemu/machines"
    Then the item with "id" = "pc-q35-11.0+pve2" has "version" = "11.0+pve2"
    And the item with "id" = "pc-i440fx-11.0+pve1" has "changes" = "Use host_tunnel=off by default for VirtIO NICs."

  @fake-only @pve9.2
  Scenario: 9.2's versions
    When I call GET "/nodes/{node}/apt/versions"
    Then the item with "Package" = "pve-manager" has "Version" = "9.2.11"
    And the item with "Package" = "proxmox-ve" has "RunningKernel" = "7.0.14-12-pve"
    And the item with "Package" = "pve-qemu-kvm" has "Version" = "11.0.2-1"

  @fake-only @pve9.1
  Scenario: 9.1's versions
    When I call GET "/nodes/{node}/apt/versions"
    Then the item with "Package" = "pve-manager" has "Version" = "9.1.5"
    And the item with "Package" = "proxmox-ve" has "RunningKernel" = "6.17.2-1-pve"

  @fake-only @pve8
  Scenario: 8.4's versions
    When I call GET "/nodes/{node}/apt/versions"
    Then the item with "Package" = "pve-manager" has "Version" = "8.4.14"
    And the item with "Package" = "proxmox-ve" has "RunningKernel" = "6.8.12-15-pve"

  @fake-only
  Scenario: Refreshing the package lists is a task
    When I start the task POST "/nodes/{node}/apt/update"
    Then the task ID names node "{node}", type "aptupdate", ID "" and user "{me}"
    When 5 seconds pass
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/apt/update"
    Then the answer is a list of 0 items

  @fake-only
  Scenario: PCI and USB devices
    When I call GET "/nodes/{node}/hardware/pci"
    Then the call succeeds
    And the answer does not list "class" = "0x060000"
    And the item with "id" = "0000:65:00.0" has "mdev" = "1"
    # An empty blacklist (the web UI's `?pci-class-blacklist=`) and a
    # list without a class in it both turn the filter off.
    When I call GET "/nodes/{node}/hardware/pci"
      | pci-class-blacklist | |
    Then the answer lists "class" = "0x060000"
    When I call GET "/nodes/{node}/hardware/pci"
      | pci-class-blacklist | , |
    Then the answer lists "class" = "0x060000"
    When I call GET "/nodes/{node}/hardware/pci/0000:65:00.0/mdev"
    Then the item with "type" = "nvidia-222" has "name" = "GRID T4-1B"
    When I call GET "/nodes/{node}/hardware/usb"
    Then the item with "vendid" = "0781" has "product" = "Ultra Fit"

  Scenario: A PCI id that is neither an id nor a mapping name is refused
    When I call GET "/nodes/{node}/hardware/pci/0:1/mdev"
    Then parameter "pci-id-or-mapping" is rejected with "value does not match the regex pattern"
