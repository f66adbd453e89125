@fake-only @serial
Feature: Load: the documented latency table
  The VirtRigaud provider publishes per-operation latency targets it
  measured against a fake PVE server. With the documented latency profile
  fake-pve takes those times (in emulated time, here sped up), and goose
  measures each operation as automation sees it: from the call until its
  task is seen stopped. With the instant profile the same load shows what
  fake-pve itself costs.

  Each runs alone (@serial), so that other scenarios do not share its
  machine. The short ones run in CI; those tagged @load run the full table
  on demand: cargo test -p conformance --test features -- --tags @load

  Scenario: A short load measures every operation at the documented latencies
    Given fake-pve with the documented latency profile
    And emulated time runs 5 times faster than real time
    When 7 users run every operation for 4 seconds
    Then every operation was measured and none failed
    And the p50 of create_vm is within 50 % of 2.3 s
    And the p50 of vm_start is within 50 % of 800 ms

  Scenario: What fake-pve itself costs, with tasks that end at once
    Given fake-pve with the instant latency profile
    When 7 users run every operation for 2 seconds
    Then every operation was measured and none failed
    And the p95 of create_vm is under 2 s
    And the p95 of vm_status is under 1 s

  @load
  Scenario: The documented table, each row within 10 %
    Given fake-pve with the documented latency profile
    And emulated time runs 5 times faster than real time
    When 14 users run every operation for 60 seconds
    Then every operation was measured and none failed
    And every operation is within 10 % of its documented p50 and p95

  @load
  Scenario: Operators running the whole VM lifecycle
    Given fake-pve with the documented latency profile
    And emulated time runs 5 times faster than real time
    When 10 users run the VM lifecycle for 60 seconds
    Then every operation was measured and none failed
    And the p50 of create_vm is within 10 % of 2.3 s
    And the p95 of create_vm is within 10 % of 4.1 s
    And the p95 of vm_start is within 10 % of 1.2 s
