@access
Feature: ACLs and the resulting permissions
  Privileges come from roles granted on paths to users, groups and
  tokens; a deeper entry replaces what is inherited, and NoAccess takes
  everything away.

  Background:
    Given a user "alice" with password "wonderland"

  Scenario: A role granted on a path shows in the ACL and the permissions
    Given "alice" has the role "PVEVMUser" on "/vms"
    When I read the ACL
    Then the answer lists "ugid" = "{user:alice}"
    And the item with "ugid" = "{user:alice}" has "roleid" = "PVEVMUser"
    And the item with "ugid" = "{user:alice}" has "path" = "/vms"
    And the item with "ugid" = "{user:alice}" has "type" = "user"
    And the item with "ugid" = "{user:alice}" has "propagate" = "1"
    And "alice" has "VM.PowerMgmt, VM.Audit" on "/vms/{vm1}"
    And "alice" does not have "VM.Allocate" on "/vms/{vm1}"
    And "alice" has no privileges on "/"

  Scenario: Without propagation a role applies to its path only
    Given "alice" has the role "PVEVMUser" on "/vms" only
    Then "alice" has "VM.Audit" on "/vms"
    And "alice" has no privileges on "/vms/{vm1}"

  Scenario: Group members get the group's roles
    Given a group "ops"
    And "alice" is a member of group "ops"
    And "group ops" has the role "PVEAuditor" on "/"
    Then "alice" has "Sys.Audit" on "/nodes/{node}"

  Scenario: A deeper entry replaces what is inherited
    Given "alice" has the role "PVEAdmin" on "/"
    And "alice" has the role "PVEAuditor" on "/vms"
    Then "alice" has "VM.Allocate" on "/"
    And "alice" has "VM.Audit" on "/vms/{vm1}"
    And "alice" does not have "VM.Allocate" on "/vms/{vm1}"

  Scenario: NoAccess takes everything away below its path
    Given "alice" has the role "PVEAdmin" on "/"
    And "alice" has the role "NoAccess" on "/vms/{vm1}"
    Then "alice" has no privileges on "/vms/{vm1}"
    And "alice" has "VM.Allocate" on "/vms/{vm2}"

  Scenario: A user reads their own permissions
    Given "alice" has the role "PVEAuditor" on "/nodes"
    And "alice" logs in with password "wonderland"
    When I act as "alice"
    And I read my permissions
    Then the permissions on "/nodes" include "Sys.Audit"
    When I read the permissions of "{user:alice}"
      | path | /nodes/{node} |
    Then the permissions on "/nodes/{node}" include "Sys.Audit"

  Scenario: Reading someone else's permissions needs Sys.Audit on /access
    Given a user "bob" with password "builder1"
    And "alice" logs in with password "wonderland"
    When I act as "alice"
    And I read the permissions of "bob"
    Then PVE answers 403 "Permission check failed (/access, Sys.Audit)"

  Scenario: ACL entries need a known role, a known subject and a valid path
    When I call PUT "/access/acl"
      | path  | /vms         |
      | roles | PVEAuditor   |
    Then parameter "users" is rejected with "either 'users', 'groups' or 'tokens' is required."
    When I call PUT "/access/acl"
      | path  | /nowhere     |
      | roles | PVEAuditor   |
      | users | {user:alice} |
    Then parameter "path" is rejected with "invalid ACL path '/nowhere'"
    When I call PUT "/access/acl"
      | path  | /vms         |
      | roles | {role:Nope}  |
      | users | {user:alice} |
    Then PVE answers 500 "ACL update failed: role '{role:Nope}' does not exist"
    When I call PUT "/access/acl"
      | path   | /vms         |
      | roles  | PVEAuditor   |
      | groups | {group:nope} |
    Then PVE answers 500 "ACL update failed: group '{group:nope}' does not exist"
    When I call PUT "/access/acl"
      | path  | /vms          |
      | roles | PVEAuditor    |
      | users | {user:nobody} |
    Then PVE answers 500 "ACL update failed: user '{user:nobody}' does not exist"

  @fake-only
  Scenario: root@pam has every privilege everywhere
    When I read my permissions
      | path | /vms/{vm1} |
    Then the permissions on "/vms/{vm1}" include "VM.Allocate, Permissions.Modify, Sys.PowerMgmt"
