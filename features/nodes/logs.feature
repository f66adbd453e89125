@nodes
Feature: A node's logs, counters, report and statistics
  syslog pages through the journal with start and limit and counts the
  lines in `total`; journal answers mini-journalreader's lines between
  two cursors; netstat lists the running guests' tap devices; report is
  pvereport's text; rrddata the node's statistics series.

  Scenario: The syslog pages with start and limit
    When I call GET "/nodes/{node}/syslog"
      | start | 1 |
      | limit | 3 |
    Then the answer is a list of 3 items
    And every item has "n"
    And every item has "t"

  Scenario: The journal's last entries come between two cursors
    When I call GET "/nodes/{node}/journal"
      | lastentries | 3 |
    Then the answer is a list of 5 items

  Scenario: A running VM's tap counters
    Given VM "{vm1}" was created with:
      | memory | 128                    |
      | net0   | virtio,bridge={bridge} |
    When I start VM "{vm1}"
    Then the task succeeds
    When I call GET "/nodes/{node}/netstat"
    Then the item with "vmid" = "{vm1}" has "dev" = "net0"

  Scenario: The report and the statistics
    When I call GET "/nodes/{node}/report"
    Then the text answer contains "==== general system info ===="
    When I call GET "/nodes/{node}/rrddata"
      | timeframe | hour |
    Then every item has "time"

  @fake-only
  Scenario: A task shows in the syslog
    Given VM "{vm1}" was created
    When I call GET "/nodes/{node}/syslog"
      | limit | 500 |
    Then a line of the answer contains "starting task UPID:{node}:"
    And a line of the answer contains "end task UPID:{node}:"
