@access
Feature: Authentication realms and their sync
  Besides pam and pve, PVE authenticates against LDAP servers, Active
  Directories and OpenID Connect providers. A realm keeps the options of
  its type; LDAP and AD realms are synced from their directory by a task,
  on demand or by a realm sync job on a schedule.

  Scenario: An LDAP realm is created, read, changed and deleted
    When I create the realm "{realm:corp}" of type "ldap"
      | server1   | ldap.example.com  |
      | base_dn   | dc=example,dc=com |
      | user_attr | uid               |
      | comment   | Corporate LDAP    |
    Then the answer is null
    When I list the realms
    Then the item with "realm" = "{realm:corp}" has "type" = "ldap"
    And the item with "realm" = "{realm:corp}" has "comment" = "Corporate LDAP"
    And the item with "realm" = "pam" has "type" = "pam"
    When I read the realm "{realm:corp}"
    Then the answer has "server1" = "ldap.example.com"
    And the answer has "base_dn" = "dc=example,dc=com"
    And the answer has "type" = "ldap"
    And the answer has "digest"
    When I update the realm "{realm:corp}" with:
      | port   | 636     |
      | delete | comment |
    Then the answer is null
    When I read the realm "{realm:corp}"
    Then the answer has "port" = "636"
    And the answer has no "comment"
    When I update the realm "{realm:corp}" with:
      | domain | example.com |
    Then PVE answers 500 "update auth server failed: unexpected property 'domain'"
    When I delete the realm "{realm:corp}"
    Then the answer is null
    When I read the realm "{realm:corp}"
    Then PVE answers 500 "domain '{realm:corp}' does not exist"
    When I delete the realm "{realm:corp}"
    Then PVE answers 500 "delete auth server failed: authentication domain '{realm:corp}' does not exist"

  Scenario: A realm's type decides which options it needs and takes
    When I create the realm "{realm:corp}" of type "ldap"
      | server1   | ldap.example.com |
      | user_attr | uid              |
    Then PVE answers 500 "add auth server failed: missing value for required option 'base_dn'"
    When I create the realm "{realm:ad}" of type "ad"
      | server1    | dc.example.com         |
      | domain     | example.com            |
      | issuer-url | https://id.example.com |
    Then PVE answers 500 "add auth server failed: unexpected property 'issuer-url'"
    When I create the realm "{realm:corp}" of type "pve"
    Then PVE answers 500 "add auth server failed: unable to create builtin type 'pve'"
    When I create the realm "{realm:sso}" of type "openid"
      | issuer-url       | https://id.example.com |
      | client-id        | pve                    |
      | username-claim   | email                  |
      | check-connection | 1                      |
    Then PVE answers 500 "add auth server failed: 'check-connection' parameter can only be set for realms of type 'ldap' or 'ad'"
    When I create the realm "{realm:sso}" of type "openid"
      | issuer-url     | https://id.example.com |
      | client-id      | pve                    |
      | username-claim | email                  |
    Then the answer is null
    When I update the realm "{realm:sso}" with:
      | username-claim | sub |
    Then parameter "username-claim" is rejected with "property is not defined in schema and the schema does not allow additional properties"
    When I create the realm "{realm:sso}" of type "openid"
      | issuer-url | https://id.example.com |
      | client-id  | pve                    |
    Then PVE answers 500 "add auth server failed: domain '{realm:sso}' already exists"

  Scenario: A realm sync job keeps its schedule and options
    Given an LDAP realm "{realm:corp}"
    When I create the realm sync job "{job:nightly}"
      | realm           | {realm:corp} |
      | schedule        | monthly      |
      | scope           | users        |
      | remove-vanished | acl;entry    |
      | enabled         | 1            |
    Then the answer is null
    When I read the realm sync job "{job:nightly}"
    Then the answer has "schedule" = "monthly"
    And the answer has "realm" = "{realm:corp}"
    And the answer has "type" = "realm-sync"
    When I list the realm sync jobs
    Then the item with "id" = "{job:nightly}" has "scope" = "users"
    And the item with "id" = "{job:nightly}" has "remove-vanished" = "acl;entry"
    When I update the realm sync job "{job:nightly}" with:
      | schedule | weekly |
      | enabled  | 0      |
    Then the answer is null
    When I read the realm sync job "{job:nightly}"
    Then the answer has "schedule" = "weekly"
    When I update the realm sync job "{job:nightly}" with:
      | schedule | weekly |
      | delete   | scope  |
    Then PVE answers 500 "unable to delete required option 'scope'"
    When I create the realm sync job "{job:nightly}"
      | realm    | {realm:corp} |
      | schedule | daily        |
      | scope    | users        |
    Then PVE answers 500 "Job '{job:nightly}' already exists"
    When I create the realm sync job "{job:other}"
      | realm    | {realm:nowhere} |
      | schedule | daily           |
      | scope    | users           |
    Then PVE answers 500 "400 Parameter verification failed.\nrealm: No such realm '{realm:nowhere}'"
    When I delete the realm sync job "{job:nightly}"
    Then the answer is null
    When I read the realm sync job "{job:nightly}"
    Then parameter "id" is rejected with "No such job '{job:nightly}'"

  @fake-only
  Scenario: pam and pve cannot be deleted, and one realm is the default
    When I create the realm "corp" of type "ldap"
      | server1   | ldap.example.com  |
      | base_dn   | dc=example,dc=com |
      | user_attr | uid               |
      | default   | 1                 |
    Then the answer is null
    When I list the realms
    Then the item with "realm" = "corp" has "default" = "1"
    When I update the realm "pve" with:
      | default | 1 |
    And I list the realms
    Then the item with "realm" = "pve" has "default" = "1"
    And the item with "realm" = "corp" has no "default"
    When I delete the realm "pve"
    Then the answer is null
    When I list the realms
    Then the item with "realm" = "pve" has "comment" = "Proxmox VE authentication server"
    And the item with "realm" = "pve" has no "default"
    When I create the realm "pam" of type "ldap"
      | server1   | ldap.example.com  |
      | base_dn   | dc=example,dc=com |
      | user_attr | uid               |
    Then PVE answers 500 "add auth server failed: domain 'pam' already exists"

  @fake-only
  Scenario: Syncing an LDAP realm adds the directory's users and groups
    Given the cluster is seeded with:
      """
      realms:
        - realm: corp
          type: ldap
          options: { server1: ldap.example.com, base_dn: "dc=example,dc=com", user_attr: uid }
          directory:
            users:
              alice: { password: wonderland, email: alice@example.com, firstname: Alice }
              bob: { password: builder1 }
            groups:
              devs: [alice, bob]
      """
    When I sync the realm "corp"
    Then parameter "scope" is rejected with "Not passed as parameter and not defined in realm default sync options."
    When I sync the realm "pve"
      | scope | users |
    Then PVE answers 500 "Cannot sync realm type 'pve'! Only LDAP/AD realms can be synced."
    When I sync the realm "corp"
      | scope   | both |
      | dry-run | 1    |
    Then the task ends with "OK"
    And the task ID names node "{node}", type "auth-realm-sync-test", ID "corp" and user "{me}"
    When I read the task log
    Then the log contains "(dry test run) starting sync for realm corp"
    And the log contains "NOTE: Dry test run, changes were NOT written to the configuration."
    When I call GET "/access/users/alice@corp"
    Then PVE answers 500 "no such user ('alice@corp')"
    When I sync the realm "corp"
      | scope      | both |
      | enable-new | 1    |
    Then the task ends with "OK"
    And the task ID names node "{node}", type "auth-realm-sync", ID "corp" and user "{me}"
    When I read the task log
    Then the log contains "syncing users (remove-vanished opts: none)"
    And the log contains "adding user 'alice@corp'"
    And the log contains "adding group 'devs-corp'"
    And the log contains "successfully updated users and groups configuration"
    When I call GET "/access/users/alice@corp"
    Then the answer has "email" = "alice@example.com"
    And the answer has "firstname" = "Alice"
    When I call GET "/access/groups/devs-corp"
    Then the answer has "members/0" = "alice@corp"
    And the answer has "members/1" = "bob@corp"
    When I list the users
    Then the item with "userid" = "alice@corp" has "realm-type" = "ldap"
    When "alice@corp" logs in with password "wonderland"
    Then the login is complete
    When "bob@corp" logs in with password "wonderland"
    Then PVE answers 401 "authentication failure"

  @fake-only
  Scenario: A sync removes what vanished from the directory
    Given the cluster is seeded with:
      """
      realms:
        - realm: corp
          type: ldap
          options: { server1: ldap.example.com, base_dn: "dc=example,dc=com", user_attr: uid, sync-defaults-options: "scope=users,remove-vanished=entry;acl" }
          directory:
            users:
              alice: { password: wonderland }
      users:
        - { userid: gone@corp }
      acl:
        - { path: /vms, roles: [PVEAuditor], users: [gone@corp] }
      """
    When I sync the realm "corp"
    Then the task ends with "OK"
    When I read the task log
    Then the log contains "syncing users (remove-vanished opts: entry;acl)"
    And the log contains "remove user 'gone@corp'"
    And the log contains "purge users 'gone@corp' ACL entries"
    When I call GET "/access/users/gone@corp"
    Then PVE answers 500 "no such user ('gone@corp')"
    When I read the ACL
    Then the answer does not list "ugid" = "gone@corp"

  @fake-only
  Scenario: A realm sync job runs when the emulated clock reaches its schedule
    Given the cluster is seeded with:
      """
      realms:
        - realm: corp
          type: ldap
          options: { server1: ldap.example.com, base_dn: "dc=example,dc=com", user_attr: uid }
          directory:
            users:
              alice: { password: wonderland }
      """
    When I create the realm sync job "corp-hourly"
      | realm           | corp   |
      | schedule        | hourly |
      | scope           | users  |
      | remove-vanished | none   |
      | enabled         | 1      |
    Then the answer is null
    When 3600 seconds pass
    And I list the tasks of node "{node}"
    Then the item with "type" = "auth-realm-sync" has "user" = "root@pam"
    When I call GET "/access/users/alice@corp"
    Then the answer has "enable" = "1"
    When I list the realm sync jobs
    Then every item has "last-run"
