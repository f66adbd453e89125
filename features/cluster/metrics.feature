@cluster @metrics
Feature: External metric servers
  /cluster/metrics/server keeps the Graphite, InfluxDB and (9.x)
  OpenTelemetry servers pvestatd sends its figures to, in `status.cfg`:
  each type with its own options, checked as PVE checks a section of it.
  The servers made here are disabled, so that no connection is tried.

  Scenario: Make, read, change and remove a server
    When I call POST "/cluster/metrics/server/{prefix}g"
      | type    | graphite   |
      | server  | 192.0.2.10 |
      | port    | 2003       |
      | proto   | udp        |
      | disable | 1          |
    Then the call succeeds
    When I call GET "/cluster/metrics/server"
    Then the item with "id" = "{prefix}g" has "type" = "graphite"
    And the item with "id" = "{prefix}g" has "port" = "2003"
    And the item with "id" = "{prefix}g" has "disable" = "1"
    When I call GET "/cluster/metrics/server/{prefix}g"
    Then the answer has "server" = "192.0.2.10"
    And the answer has "proto" = "udp"
    When I call PUT "/cluster/metrics/server/{prefix}g"
      | server | 192.0.2.10 |
      | port   | 2004       |
      | path   | lab        |
      | delete | proto      |
    Then the call succeeds
    When I call GET "/cluster/metrics/server/{prefix}g"
    Then the answer has "path" = "lab"
    And the answer has "port" = "2004"
    And the answer has no "proto"
    When I call PUT "/cluster/metrics/server/{prefix}g"
      | server | 192.0.2.10 |
      | port   | 2004       |
      | delete | server     |
    Then PVE answers 500 "unable to delete required option 'server'"
    When I call PUT "/cluster/metrics/server/{prefix}g"
      | server | 192.0.2.10 |
      | port   | 2004       |
      | bucket | b          |
    Then PVE answers 500 "unexpected property 'bucket'"
    When I call POST "/cluster/metrics/server/{prefix}g"
      | type    | graphite   |
      | server  | 192.0.2.11 |
      | port    | 2003       |
      | disable | 1          |
    Then PVE answers 500 "Metric server '{prefix}g' already exists"
    When I call DELETE "/cluster/metrics/server/{prefix}g"
    Then the call succeeds
    When I call GET "/cluster/metrics/server/{prefix}g"
    Then PVE answers 500 "status server entry '{prefix}g' does not exist"
    When I call DELETE "/cluster/metrics/server/{prefix}g"
    Then PVE answers 500 "unknown section type ''"

  Scenario: An InfluxDB server keeps its token to itself
    When I call POST "/cluster/metrics/server/{prefix}i"
      | type          | influxdb           |
      | server        | influx.example.com |
      | port          | 8086               |
      | influxdbproto | https              |
      | organization  | lab                |
      | bucket        | pve                |
      | token         | s3cret             |
      | disable       | 1                  |
    Then the call succeeds
    When I call GET "/cluster/metrics/server/{prefix}i"
    Then the answer has "bucket" = "pve"
    And the answer has "influxdbproto" = "https"
    And the answer has no "token"
    When I call DELETE "/cluster/metrics/server/{prefix}i"
    Then the call succeeds

  Scenario: Each type takes its own options
    When I call POST "/cluster/metrics/server/{prefix}x"
      | type    | influxdb   |
      | server  | 192.0.2.10 |
      | port    | 8089       |
      | proto   | tcp        |
      | disable | 1          |
    Then PVE answers 500 "unexpected property 'proto'"
    When I call GET "/cluster/metrics/server"
    Then the answer does not list "id" = "{prefix}x"

  @pve9
  Scenario: 9.x sends to OpenTelemetry collectors too
    When I call POST "/cluster/metrics/server/{prefix}o"
      | type          | opentelemetry  |
      | server        | otel.example   |
      | port          | 4318           |
      | otel-protocol | http           |
      | disable       | 1              |
    Then the call succeeds
    When I call GET "/cluster/metrics/server/{prefix}o"
    Then the answer has "otel-protocol" = "http"
    When I call DELETE "/cluster/metrics/server/{prefix}o"
    Then the call succeeds

  Scenario: Reading needs Sys.Audit on /
    Given a user "bob" with password "builder1"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call GET "/cluster/metrics/server"
    Then PVE answers 403 "Permission check failed (/, Sys.Audit)"

  Scenario: The metrics pvestatd keeps are exported
    When I call GET "/cluster/metrics/export"
      | local-only | 1 |
    Then the answer has "data/0/timestamp"
    And the answer has "data/0/id" matching "node/{node}|qemu/[0-9]+|lxc/[0-9]+|storage/{node}/.+"
    And the answer has "data/0/type" matching "gauge|derive"
    When I call GET "/cluster/metrics/export"
      | local-only | 1 |
      | history    | 1 |
    Then the answer has "data/0/metric"

  @pve9
  Scenario: Only the nodes a list names, all of them members
    When I call GET "/cluster/metrics/export"
      | node-list | {node},conformance-nowhere |
    Then PVE answers 500 "Requested node-list contains unknown nodes - conformance-nowhere"
