# Deliberately wrong expectations: the runner must report each scenario
# as failed (tests/tests/vacuity.rs checks that it does).
Feature: Wrong expectations fail

  Scenario: A wrong error message fails
    When "root@pam" logs in with password "wrong"
    Then PVE answers 401 "authentication succeeded"

  Scenario: A wrong field value fails
    When I read the version
    Then the answer has "release" = "7.0"

  Scenario: A wrong type of answer fails
    When I list the nodes
    Then the answer is "pve"

  Scenario: An undefined step fails
    When I read the version
    Then the version is blessed by the moon
