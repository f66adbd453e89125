@backup @prune
Feature: Pruning backups
  prunebackups marks a storage's backups as PVE's retention options
  select them (keep-last, keep-hourly, keep-daily, keep-weekly,
  keep-monthly, keep-yearly, per guest), keeps protected ones, and
  removes the rest in a prunebackups task.

  Background:
    Given I define storage "{storage:dumps}" with:
      | type    | dir                     |
      | path    | /var/tmp/{prefix}-prune |
      | content | backup                  |
    And VM "{vm1}" was created
    And VM "{vm1}" was backed up to storage "{storage:dumps}"
    When the clock moves on 2 seconds
    Given VM "{vm1}" was backed up to storage "{storage:dumps}"

  Scenario: A dry run marks, a prune removes, the newest stays
    When I remember the oldest backup of VM "{vm1}" on storage "{storage:dumps}" as "old"
    And I remember the newest backup of VM "{vm1}" on storage "{storage:dumps}" as "new"
    And I dry-run a prune of storage "{storage:dumps}"
      | prune-backups | keep-last=1 |
      | vmid          | {vm1}       |
    Then the answer is a list of 2 items
    And the item with "volid" = "{var:old}" has "mark" = "remove"
    And the item with "volid" = "{var:new}" has "mark" = "keep"
    And every item has "type" = "qemu"
    When I prune storage "{storage:dumps}"
      | prune-backups | keep-last=1 |
      | vmid          | {vm1}       |
    Then the task ID names node "{node}", type "prunebackups", ID "{vm1}@{storage:dumps}" and user "{me}"
    And the task ends with "OK"
    When I list the backups of VM "{vm1}" on storage "{storage:dumps}"
    Then the answer is a list of 1 item
    And the answer lists "volid" = "{var:new}"

  Scenario: Protected backups are kept whatever the retention
    When I remember the oldest backup of VM "{vm1}" on storage "{storage:dumps}" as "old"
    And I update volume "{var:old}" of storage "{storage:dumps}" with:
      | protected | 1 |
    And I dry-run a prune of storage "{storage:dumps}"
      | prune-backups | keep-last=1 |
    Then the item with "volid" = "{var:old}" has "mark" = "protected"
    When I update volume "{var:old}" of storage "{storage:dumps}" with:
      | protected | 0 |
    Then the call succeeds

  Scenario: Without a retention there is nothing to prune by
    When I dry-run a prune of storage "{storage:dumps}"
    Then PVE answers 500 "no prune-backups options configured for storage '{storage:dumps}'"
