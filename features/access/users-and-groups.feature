@access
Feature: Users and groups
  Administrators manage users (realm pve) and the groups that gather them.

  Scenario: Creating, reading, listing and deleting a user
    When I create the user "carol"
      | comment   | Carol from QA |
      | email     | carol@example.com |
      | firstname | Carol         |
    Then the answer is null
    When I read the user "carol"
    Then the answer has "comment" = "Carol from QA"
    And the answer has "email" = "carol@example.com"
    And the answer has "enable" = "1"
    And the answer has "expire" = "0"
    When I list the users
    Then the answer lists "userid" = "{user:carol}"
    When I delete the user "carol"
    Then the answer is null
    When I read the user "carol"
    Then PVE answers 500 "no such user ('{user:carol}')"

  Scenario: A user ID is unique
    Given a user "carol"
    When I create the user "carol"
    Then PVE answers 500 "create user failed: user '{user:carol}' already exists"

  Scenario: A password shorter than eight characters is refused
    When I create the user "carol"
      | password | short |
    Then parameter "password" is rejected with "value must be at least 8 characters long"

  Scenario: A user cannot join a group that does not exist
    When I create the user "carol"
      | groups | {group:nope} |
    Then PVE answers 500 "create user failed: no such group '{group:nope}'"

  Scenario: Updating a user that does not exist
    When I update the user "ghost" with:
      | comment | x |
    Then PVE answers 500 "update user failed: no such user ('{user:ghost}')" to root@pam
    And PVE answers 500 "no such user ('{user:ghost}')" to anyone else

  Scenario: For anyone but root@pam, permission checks meet an unknown user first
    PVE checks permissions on the raw parameters before it validates them
    and runs the call, for everyone but root@pam: `userid-group` dies with
    "no such user", `userid-param` with a malformed user name, and an `or`
    of them fails without a reason.
    Given a user "ann" with password "allrights"
    And "ann" has the role "Administrator" on "/"
    And "ann" logs in with password "allrights"
    When I act as "ann"
    And I read the user "ghost"
    Then PVE answers 500 "no such user ('{user:ghost}')"
    When I update the user "ghost" with:
      | comment | x |
    Then PVE answers 500 "no such user ('{user:ghost}')"
    When I list the API tokens of "ghost"
    Then PVE answers 403 "Permission check failed"
    When I call GET "/access/users/root/token"
    Then PVE answers 500 "value 'root' does not look like a valid user name"
    When I call GET "/access/users/ro"
    Then PVE answers 500 "user name 'ro' is too short"
    When I read the user "ann"
    Then the answer has "enable" = "1"

  Scenario: Groups list their members
    Given a group "ops"
      | comment | Operators |
    And a user "dave" with password "operator1"
    And "dave" is a member of group "ops"
    When I read the group "ops"
    Then the answer has "comment" = "Operators"
    And the answer has "members/0" = "{user:dave}"
    When I list the groups
    Then the item with "groupid" = "{group:ops}" has "comment" = "Operators"
    When I read the user "dave"
    Then the answer has "groups/0" = "{group:ops}"

  Scenario: A group's comment is changed
    Given a group "ops"
    When I call PUT "/access/groups/{group:ops}"
      | comment | Night shift |
    Then the answer is null
    When I read the group "ops"
    Then the answer has "comment" = "Night shift"
    When I call PUT "/access/groups/{group:nope}"
      | comment | x |
    Then PVE answers 500 "update group failed: group '{group:nope}' does not exist"

  Scenario: A group ID is unique, and a missing group is named
    Given a group "ops"
    When I create the group "ops"
    Then PVE answers 500 "create group failed: group '{group:ops}' already exists"
    When I read the group "nope"
    Then PVE answers 500 "group '{group:nope}' does not exist"
    When I delete the group "ops"
    Then the answer is null
    When I delete the group "ops"
    Then PVE answers 500 "delete group failed: group '{group:ops}' does not exist"

  Scenario: A user without privileges may not create users or groups
    Given a user "dave" with password "operator1"
    And "dave" logs in with password "operator1"
    When I act as "dave"
    And I create the user "eve"
    Then PVE answers 403 "Permission check failed (/access/realm/pve, Realm.AllocateUser)"
    When I create the group "devs"
    Then PVE answers 403 "Permission check failed (/access/groups, Group.Allocate)"

  Scenario: A user changes their own password
    Given a user "dave" with password "operator1"
    And "dave" logs in with password "operator1"
    When "dave" changes the password of "dave" to "operator2"
    Then the answer is null
    When "dave" logs in with password "operator2"
    Then the ticket is for "dave"
