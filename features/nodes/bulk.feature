@nodes
Feature: Bulk actions on guests
  A node's `suspendall` and `migrateall`, and on 9.x the cluster's bulk
  actions (`/cluster/bulk-action/guest/start`, `shutdown`, `suspend`,
  `migrate`), run one task whose log says what happened to each guest;
  the guests' own tasks are the API calls that task makes as the caller.

  @pve9
  Scenario: A bulk start starts the listed guests and skips running ones
    Given VM "{vm1}" was created
    And VM "{vm2}" was created
    When I start the guests "{vm1},{vm2}" in bulk
    Then the task ID names node "{node}", type "bulk-start", ID "" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log reads:
      """
      Starting guests: {vm1}, {vm2}
      Starting VM {vm1}
      Starting VM {vm2}
      TASK OK
      """
    When I start the guests "{vm1}" in bulk
    Then the task ends with "WARNINGS: 1"
    When I read the task log
    Then the log reads:
      """
      Starting guests: {vm1}
      WARN: Skipping VM {vm1}, already running.
      TASK WARNINGS: 1
      """
    When I shutdown the guests "{vm1},{vm2}" in bulk
      | timeout | 30 |
    Then the task ends with "OK"
    When I read the task log
    Then the log reads:
      """
      Shutting down guests: {vm1}, {vm2}
      Shutting down VM {vm1} (Timeout = 30 seconds)
      Shutting down VM {vm2} (Timeout = 30 seconds)
      TASK OK
      """

  @pve9
  Scenario: Bulk actions on listed guests need the privilege on each
    Given a user "bob" with password "builder1"
    And "bob" has the role "PVEVMUser" on "/vms/{vm1}"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call POST "/cluster/bulk-action/guest/migrate"
      | vms    | {vm1} |
      | target | {node} |
    Then PVE answers 403 "Permission check failed (/vms/{vm1}, VM.Migrate)"

  @fake-only
  Scenario: migrateall needs max_workers, from the call or datacenter.cfg
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: pve1 }
        - { name: pve2 }
      storages:
        - { id: nfs, type: nfs, server: 192.0.2.99, export: /export, path: /mnt/pve/nfs }
      vms:
        - { vmid: {vm1}, node: pve2, config: { scsi0: 'nfs:{vm1}/vm-{vm1}-disk-0.qcow2,size=1G' } }
      """
    When I migrate the guests of node "pve2" to "pve1"
    Then PVE answers 500 "either 'max-workers' parameter or max_workers in datacenter.cfg must be set!"
    When I call PUT "/cluster/options"
      | max_workers | 2 |
    Then the call succeeds
    When I migrate the guests of node "pve2" to "pve1"
    Then the task ends with "OK"
    When I read the task log
    Then the log reads:
      """
      Check VM {vm1}: precondition check passed
      Migrating VM {vm1}
      All jobs finished, used 1 workers in total.
      TASK OK
      """
