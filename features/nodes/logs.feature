@nodes
Feature: A node's logs, counters, report and statistics
  syslog pages through the journal with start and limit and counts the
  lines in `total`; journal answers mini-journalreader's lines between
  two cursors; netstat lists the running guests' tap devices; report is
  pvereport's text; rrddata the node's statistics series and rrd its
  graph, drawn by rrdtool (its file name and the PNG).

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

  Scenario: The node's graph is drawn from its RRD file
    When I call GET "/nodes/{node}/rrd"
      | timeframe | day        |
      | ds        | cpu,iowait |
      | cf        | MAX        |
    Then the answer has "filename" matching "/var/lib/rrdcached/db/(pve2-node|pve-node-9\.0)/{node}_cpu_iowait\.png"
    And the answer has "image"
    When I call GET "/nodes/{node}/rrd"
      | timeframe | hour         |
      | ds        | cpu,bogomips |
    Then PVE answers 500 with a message matching "RRD error: No DS called 'bogomips' in '/var/lib/rrdcached/db/(pve2-node|pve-node-9\.0)/{node}'"

  @fake-only
  Scenario: A task shows in the syslog
    Given VM "{vm1}" was created
    When I call GET "/nodes/{node}/syslog"
      | limit | 500 |
    Then a line of the answer contains "starting task UPID:{node}:"
    And a line of the answer contains "end task UPID:{node}:"

  @pve9.2
  Scenario: 9.2's journal filters and structured records
    Given VM "{vm1}" was created
    When I call GET "/nodes/{node}/journal"
      | structured  | 1         |
      | service     | pvedaemon |
      | lastentries | 2         |
    Then the answer is a list of 2 items
    And every item has "identifier" = "pvedaemon"
    And every item has "cursor"
    And every item has "timestamp"
    And every item has "message"
    When I call GET "/nodes/{node}/journal"
      | structured  | 1         |
      | unit        | pvedaemon |
      | priority    | 6         |
      | lastentries | 1         |
      | identifiers | 1         |
      | units       | 1         |
    Then the answer is a list of 3 items
    And the answer lists "unit" = "pvedaemon.service"
    When I call GET "/nodes/{node}/journal"
      | priority | 8 |
    Then parameter "priority" is rejected with "value does not match the regex pattern"

  @pve9.1
  Scenario: 9.1's journal knows no filters
    When I call GET "/nodes/{node}/journal"
      | structured | 1 |
    Then parameter "structured" is rejected with "property is not defined in schema and the schema does not allow additional properties"
