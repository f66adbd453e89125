@access
Feature: Roles
  PVE's built-in roles carry the privileges of the release; custom roles
  carry what the administrator gives them.

  Scenario: The built-in roles list their privileges sorted
    When I list the roles
    Then the answer lists "roleid" = "PVEAuditor"
    And the answer lists "roleid" = "NoAccess"
    And the item with "roleid" = "PVEVMUser" has "special" = "1"
    And the privileges in "privs" are sorted and joined by commas

  @pve9
  Scenario: PVE 9 roles know the guest agent privileges
    Then the role "PVEAuditor" has exactly the privileges "Datastore.Audit, Mapping.Audit, Pool.Audit, SDN.Audit, Sys.Audit, VM.Audit, VM.GuestAgent.Audit"
    And the role "PVEVMUser" has exactly the privileges "VM.Audit, VM.Backup, VM.Config.CDROM, VM.Config.Cloudinit, VM.Console, VM.GuestAgent.Audit, VM.GuestAgent.FileRead, VM.GuestAgent.FileSystemMgmt, VM.GuestAgent.FileWrite, VM.PowerMgmt"

  @pve8
  Scenario: PVE 8 roles still have VM.Monitor
    Then the role "PVEAuditor" has exactly the privileges "Datastore.Audit, Mapping.Audit, Pool.Audit, SDN.Audit, Sys.Audit, VM.Audit"
    And the role "PVEVMAdmin" has exactly the privileges "VM.Allocate, VM.Audit, VM.Backup, VM.Clone, VM.Config.CDROM, VM.Config.CPU, VM.Config.Cloudinit, VM.Config.Disk, VM.Config.HWType, VM.Config.Memory, VM.Config.Network, VM.Config.Options, VM.Console, VM.Migrate, VM.Monitor, VM.PowerMgmt, VM.Snapshot, VM.Snapshot.Rollback"

  Scenario: A custom role is created, extended and deleted
    Given a role "Starter" with the privileges "VM.PowerMgmt,VM.Audit"
    Then the role "Starter" has exactly the privileges "VM.Audit, VM.PowerMgmt"
    When I update the role "Starter" with:
      | privs  | Sys.Audit |
      | append | 1         |
    Then the answer is null
    And the role "Starter" has exactly the privileges "Sys.Audit, VM.Audit, VM.PowerMgmt"
    When I delete the role "Starter"
    Then the answer is null
    When I read the role "Starter"
    Then PVE answers 500 "role '{role:Starter}' does not exist"

  @fake-only
  Scenario: Built-in roles cannot be changed or deleted
    When I update the role "PVEAuditor" with:
      | privs | Sys.Modify |
    Then PVE answers 500 "auto-generated role 'PVEAuditor' cannot be modified"
    When I delete the role "NoAccess"
    Then PVE answers 500 "auto-generated role 'NoAccess' cannot be deleted"

  Scenario: The PVE namespace is reserved
    When I call POST "/access/roles"
      | roleid | PVEMine |
    Then parameter "roleid" is rejected with "cannot use role ID starting with the (case-insensitive) 'PVE' namespace"

  @pve9
  Scenario: A privilege PVE 9 dropped is refused
    When I create the role "Monitor" with the privileges "VM.Monitor"
    Then parameter "privs" is rejected with "invalid format - invalid privilege 'VM.Monitor'"

  Scenario: A role ID is unique
    Given a role "Starter" with the privileges "VM.Audit"
    When I create the role "Starter" with the privileges "VM.Audit"
    Then PVE answers 500 "create role failed: role '{role:Starter}' already exists"
