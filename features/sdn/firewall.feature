@sdn
Feature: The firewall of an SDN VNet
  An applied VNet has a firewall of its own (sdn/firewall/<vnet>.fw):
  options (enable, the forward policy and its log level) and rules, which
  are forward rules or security groups, checked as every firewall rule
  is. PVE reads the VNet from the running configuration and checks
  SDN.Audit or SDN.Allocate on /sdn/zones/<zone>/<vnet>. Applying
  reaches every pending change of the cluster: the scenarios that apply
  are tagged @destructive and run alone.

  Scenario: A VNet not applied yet has no firewall
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
    Then PVE answers 500 with a message matching "^invalid vnet specified"
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/options"
    Then PVE answers 500 with a message matching "^invalid vnet specified"

  @destructive @serial
  Scenario: Forward rules and options of an applied VNet
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
    And the SDN configuration was applied
    Then the task ends with "OK"
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall"
    Then the items' "name" are "rules, options"
    When I call POST "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
      | type   | in     |
      | action | ACCEPT |
    Then parameter "type" is rejected with "invalid rule type 'in' for rule_env 'vnet'"
    When I call POST "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
      | type   | forward |
      | action | REJECT  |
    Then parameter "action" is rejected with "cannot define REJECT rules on forward chain"
    When I call POST "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
      | type   | forward |
      | action | ACCEPT  |
      | iface  | net0    |
    Then parameter "type" is rejected with "parameter -i not allowed for this rule type"
    When I call POST "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
      | type   | forward |
      | action | ACCEPT  |
      | macro  | ssh     |
      | enable | 1       |
    Then the call succeeds
    When I call POST "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
      | type   | forward |
      | action | DROP    |
      | proto  | tcp     |
      | dport  | 25      |
    Then the call succeeds
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
    Then the items' "pos" are "0, 1"
    And the items' "macro" are "-, SSH"
    And the items' "enable" are "0, 1"
    And every item has the same digest
    When I call PUT "/cluster/sdn/vnets/{vnet:a}/firewall/rules/0"
      | moveto | 2 |
    Then the call succeeds
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/rules/1"
    Then the answer has "dport" = "25"
    And the answer has "type" = "forward"
    When I call PUT "/cluster/sdn/vnets/{vnet:a}/firewall/rules/1"
      | comment | no mail |
      | enable  | 1       |
    Then the call succeeds
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/rules/1"
    Then the answer has "comment" = "no mail"
    And the answer has "enable" = "1"
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/rules/2"
    Then PVE answers 500 "no rule at position 2"
    When I call PUT "/cluster/sdn/vnets/{vnet:a}/firewall/options"
      | enable         | 1    |
      | policy_forward | DROP |
    Then the call succeeds
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/options"
    Then the answer has "enable" = "1"
    And the answer has "policy_forward" = "DROP"
    And the answer has "digest"
    When I call PUT "/cluster/sdn/vnets/{vnet:a}/firewall/options"
      | delete | policy_in |
    Then parameter "delete" is rejected with "no such option 'policy_in'"
    When I call PUT "/cluster/sdn/vnets/{vnet:a}/firewall/options"
      | delete | enable,policy_forward |
    Then the call succeeds
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/options"
    Then the answer has no "enable"
    When I call DELETE "/cluster/sdn/vnets/{vnet:a}/firewall/rules/0"
    Then the call succeeds
    When I call DELETE "/cluster/sdn/vnets/{vnet:a}/firewall/rules/0"
    Then the call succeeds
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
    Then the answer is a list of 0 items

  @destructive @serial
  Scenario: A VNet's firewall needs SDN privileges on the VNet
    Given SDN zone "{zone:s}" of type "simple" exists
    And VNet "{vnet:a}" in zone "{zone:s}" exists
    And the SDN configuration was applied
    Then the task ends with "OK"
    Given a user "bob" with password "builder1"
    And "bob" has the role "PVEAuditor" on "/sdn/zones/{zone:s}"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
    Then the answer is a list of 0 items
    When I call GET "/cluster/sdn/vnets/{vnet:a}/firewall/options"
    Then the call succeeds
    When I call POST "/cluster/sdn/vnets/{vnet:a}/firewall/rules"
      | type   | forward |
      | action | ACCEPT  |
    Then PVE answers 403 "Permission check failed (/sdn/zones/{zone:s}/{vnet:a}, SDN.Allocate)"
    When I call PUT "/cluster/sdn/vnets/{vnet:a}/firewall/options"
      | enable | 1 |
    Then PVE answers 403 "Permission check failed (/sdn/zones/{zone:s}/{vnet:a}, SDN.Allocate)"
