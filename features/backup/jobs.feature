@backup @jobs
Feature: Backup jobs
  /cluster/backup keeps vzdump jobs with a schedule in PVE's calendar
  event format and answers when each runs next; fake-pve runs them when
  its clock passes their schedule.

  Scenario: Make, read, change and remove a job
    Given VM "{vm1}" was created
    When I create backup job "{job:nightly}" with:
      | schedule | mon..fri 21:30  |
      | vmid     | {vm1}           |
      | storage  | local           |
      | comment  | nightly         |
      | enabled  | 0               |
    Then the call succeeds
    When I read backup job "{job:nightly}"
    Then the answer has "schedule" = "mon..fri 21:30"
    And the answer has "vmid" = "{vm1}"
    And the answer has "type" = "vzdump"
    And the answer has "enabled" = "0"
    When I call GET "/cluster/backup"
    Then the item with "id" = "{job:nightly}" has "comment" = "nightly"
    And the item with "id" = "{job:nightly}" has "next-run"
    When I list the volumes backup job "{job:nightly}" includes
    Then the call succeeds
    When I update backup job "{job:nightly}" with:
      | schedule | sat 02:00 |
      | delete   | comment   |
    Then the call succeeds
    When I read backup job "{job:nightly}"
    Then the answer has "schedule" = "sat 02:00"
    And the answer has no "comment"
    When I update backup job "{job:nightly}" with:
      | delete | bogus |
    Then parameter "delete" is rejected with "unknown option 'bogus'"
    When I delete backup job "{job:nightly}"
    Then the call succeeds
    When I read backup job "{job:nightly}"
    Then parameter "id" is rejected with "No such job '{job:nightly}'"

  Scenario: A job needs a schedule and guests
    When I create backup job "{job:bad}" with:
      | vmid | {vm1} |
    Then parameter "schedule" is rejected with "neither 'starttime' nor 'schedule' were set"
    When I create backup job "{job:bad}" with:
      | schedule | daily |
    Then parameter "vmid" is rejected with "property is missing"

  @fake-only
  Scenario: A job runs when the clock passes its schedule
    Given VM "{vm1}" was created
    When I create backup job "{job:hourly}" with:
      | schedule | hourly |
      | vmid     | {vm1}  |
      | storage  | local  |
    Then the call succeeds
    When 3600 seconds pass
    And I list the tasks of node "{node}"
      | typefilter | vzdump |
    Then the answer is a list of 1 item
    And every item has "user" = "root@pam"
    When I list the backups of VM "{vm1}" on storage "local"
    Then the answer is a list of 1 item
    When I call GET "/cluster/backup-info/not-backed-up"
    Then the answer does not list "vmid" = "{vm1}"

  Scenario: The next runs of a schedule
    When I call GET "/cluster/jobs/schedule-analyze"
      | schedule   | *:0/15     |
      | starttime  | 1790000000 |
      | iterations | 3          |
    Then the answer is a list of 3 items
    And the item with "timestamp" = "1790000100" has "utc" = "Mon Sep 21 14:15:00 2026"
    And the item with "timestamp" = "1790001900" has "utc" = "Mon Sep 21 14:45:00 2026"
    When I call GET "/cluster/jobs/schedule-analyze"
      | schedule  | 2020-01-01 |
      | starttime | 1790000000 |
    Then the answer is a list of 0 items
    When I call GET "/cluster/jobs/schedule-analyze"
      | schedule   | daily |
      | iterations | 101   |
    Then parameter "iterations" is rejected with "value must have a maximum value of 100"
    When I call GET "/cluster/jobs/schedule-analyze"
      | schedule | 25:00 |
    Then parameter "schedule" is rejected with "invalid calendar event '25:00' - unable to parse calendar event"
