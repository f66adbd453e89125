# The same steps with the right expectations pass.
Feature: Right expectations pass

  Scenario: The right answers pass
    When "root@pam" logs in with password "wrong"
    Then PVE answers 401 "authentication failure"
    When I read the version
    Then the answer has "release" = "9.2"
