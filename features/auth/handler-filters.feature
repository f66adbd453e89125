@auth
Feature: Permissions PVE's handlers check themselves
  Many calls let every user in (`user: all` in the schema) and check in
  their handler: a list shows only what the caller may see, a call on
  several guests needs the privilege on each guest listed (or on `/`).

  Background:
    Given a user "bob" with password "builder1"
    And "bob" has the role "PVEVMUser" on "/vms/{vm1}"
    And "bob" logs in with password "builder1"

  Scenario: The VM list shows only the VMs one may audit
    Given VM "{vm1}" was created
    And VM "{vm2}" was created
    When I act as "bob"
    And I list the VMs of node "{node}"
    Then the call succeeds
    And the answer lists "vmid" = "{vm1}"
    And the answer does not list "vmid" = "{vm2}"

  Scenario: Starting or stopping listed guests needs VM.PowerMgmt on each
    When I act as "bob"
    And I call POST "/nodes/{node}/stopall"
      | vms | {vm1},{vm2} |
    Then PVE answers 403 "Permission check failed (/vms/{vm2}, VM.PowerMgmt)"
    When I call POST "/nodes/{node}/startall"
      | vms | {vm2} |
    Then PVE answers 403 "Permission check failed (/vms/{vm2}, VM.PowerMgmt)"

  Scenario: Suspending or migrating every guest of a node needs the privileges on /
    When I act as "bob"
    And I call POST "/nodes/{node}/suspendall"
    Then PVE answers 403 "Permission check failed (/, VM.PowerMgmt && VM.Config.Disk)"
    When I call POST "/nodes/{node}/migrateall"
      | target | {node} |
    Then PVE answers 403 "Permission check failed (/, VM.Migrate)"
    When I call POST "/nodes/{node}/migrateall"
      | target | {node}  |
      | vms    | {vm1}   |
    Then PVE answers 403 "Permission check failed (/vms/{vm1}, VM.Migrate)"

  Scenario: A privilege-separated token without ACLs sees no one's tasks, users or pools
    Given "bob" has an API token "bob!sep"
    When I use the API token "bob!sep"
    And I call GET "/cluster/tasks"
    Then the answer is a list of 0 items
    When I call GET "/access/users"
    Then the answer is a list of 0 items
    When I call GET "/pools"
    Then the answer is a list of 0 items
    When I call GET "/storage"
    Then the answer is a list of 0 items

  Scenario: A user lists itself among the users, and nothing of the ACLs it cannot change
    When I act as "bob"
    And I call GET "/access/users"
    Then the answer is a list of 1 item
    And the answer lists "userid" = "{user:bob}"
    When I call GET "/access/acl"
    Then the answer is a list of 0 items
