@firewall
Feature: Firewall configuration
  The firewall of the cluster (cluster.fw), of each node (host.fw) and of
  each guest (<vmid>.fw): options with a digest, rules by position,
  security groups, aliases and IP sets. PVE checks every rule it is given
  and names what is wrong; a new rule goes on top, moving one puts it
  before the rule at the new position. Only configuration: no packet is
  filtered, and the log stays empty.

  Scenario: Rules of a security group: on top, moved, changed, deleted
    Given security group "{fw:web}" exists
      | comment | web servers |
    When I call GET "/cluster/firewall/groups"
    Then the item with "group" = "{fw:web}" has "comment" = "web servers"
    When I call POST "/cluster/firewall/groups/{fw:web}"
      | type   | in     |
      | action | ACCEPT |
      | macro  | HTTP   |
      | enable | 1      |
    Then the call succeeds
    When I call POST "/cluster/firewall/groups/{fw:web}"
      | type   | in     |
      | action | ACCEPT |
      | macro  | https  |
    Then the call succeeds
    When I call POST "/cluster/firewall/groups/{fw:web}"
      | type   | in   |
      | action | DROP |
      | proto  | tcp  |
      | dport  | 8080 |
      | pos    | 2    |
    Then the call succeeds
    When I call GET "/cluster/firewall/groups/{fw:web}"
    Then the items' "pos" are "0, 1, 2"
    And the items' "macro" are "-, HTTPS, HTTP"
    And the items' "enable" are "0, 0, 1"
    And every item has the same digest
    When I call PUT "/cluster/firewall/groups/{fw:web}/0"
      | moveto | 3 |
    Then the call succeeds
    When I call GET "/cluster/firewall/groups/{fw:web}"
    Then the items' "macro" are "HTTPS, HTTP, -"
    When I call PUT "/cluster/firewall/groups/{fw:web}/2"
      | comment | no protocol |
      | delete  | proto       |
    Then parameter "proto" is rejected with "missing property - 'dport' requires this property"
    When I call PUT "/cluster/firewall/groups/{fw:web}/2"
      | comment | alt port |
      | delete  | enable   |
    Then the call succeeds
    When I call GET "/cluster/firewall/groups/{fw:web}/2"
    Then the answer has "comment" = "alt port"
    And the answer has "enable" = "1"
    And the answer has "pos" = "2"
    When I call GET "/cluster/firewall/groups/{fw:web}/3"
    Then PVE answers 500 "no rule at position 3"
    When I call DELETE "/cluster/firewall/groups/{fw:web}"
    Then PVE answers 500 "Security group '{fw:web}' is not empty"
    When I call DELETE "/cluster/firewall/groups/{fw:web}/0"
    Then the call succeeds
    When I call GET "/cluster/firewall/groups/{fw:web}"
    Then the items' "pos" are "0, 1"
    And the items' "macro" are "HTTP, -"

  Scenario: A stale digest is refused
    Given security group "{fw:dig}" exists
    When I call POST "/cluster/firewall/groups/{fw:dig}"
      | type   | out    |
      | action | ACCEPT |
    When I call GET "/cluster/firewall/groups/{fw:dig}"
    And I remember the answer's "0/digest" as "old"
    When I call POST "/cluster/firewall/groups/{fw:dig}"
      | type   | out  |
      | action | DROP |
    Then the call succeeds
    When I call DELETE "/cluster/firewall/groups/{fw:dig}/0"
      | digest | {var:old} |
    Then PVE answers 500 "detected modified configuration - file changed by other user? Try again."

  Scenario: PVE names what is wrong with a rule
    Given security group "{fw:bad}" exists
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type   | in     |
      | action | ACCEPT |
      | macro  | NoSuch |
    Then parameter "macro" is rejected with "unknown macro 'NoSuch'"
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type   | in               |
      | action | ACCEPT           |
      | source | {fw:nosuchalias} |
    Then parameter "source" is rejected with "no such alias '{fw:nosuchalias}'"
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type   | in               |
      | action | ACCEPT           |
      | dest   | +{fw:nosuchset}  |
    Then parameter "dest" is rejected with "no such ipset '{fw:nosuchset}'"
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type   | in          |
      | action | ACCEPT      |
      | source | 10.0.0.0/33 |
    Then parameter "source" is rejected with "invalid format - invalid IP address: Invalid prefix length /33"
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type      | in        |
      | action    | ACCEPT    |
      | proto     | icmp      |
      | icmp-type | neighbor-solicitation |
    Then parameter "icmp-type" is rejected with "invalid icmp-type 'neighbor-solicitation' for proto 'icmp'"
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type   | in     |
      | action | ACCEPT |
      | proto  | tcp    |
      | dport  | 90:80  |
    Then parameter "dport" is rejected with "invalid format - backwards range '90:80' not allowed, did you mean '80:90'?"
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type   | forward |
      | action | REJECT  |
    Then parameter "action" is rejected with "cannot define REJECT rules on forward chain"
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type   | group    |
      | action | {fw:bad} |
    Then parameter "type" is rejected with "invalid rule type 'group' for rule_env 'group'"
    When I call POST "/cluster/firewall/groups/{fw:bad}"
      | type   | in     |
      | action | ACCEPT |
      | macro  | SSH    |
      | proto  | tcp    |
      | dport  | 2222   |
    Then parameter "dport" is rejected with "parameter 'dport' already define in macro (value = '22')"
    When I call GET "/cluster/firewall/groups/{fw:bad}"
    Then the answer is a list of 0 items
    When I call GET "/cluster/firewall/groups/{fw:none}"
    Then PVE answers 500 "no such security group '{fw:none}'"

  Scenario: Renaming a security group, and refusals of its name
    Given security group "{fw:old}" exists
    When I create security group "{fw:old}"
    Then parameter "group" is rejected with "Security group '{fw:old}' already exists"
    When I call POST "/cluster/firewall/groups"
      | group  | {fw:new} |
      | rename | {fw:gone} |
    Then parameter "group" is rejected with "Security group '{fw:gone}' does not exist"
    When I call POST "/cluster/firewall/groups"
      | group   | {fw:new} |
      | rename  | {fw:old} |
      | comment | renamed  |
    Then the call succeeds
    When I call GET "/cluster/firewall/groups"
    Then the item with "group" = "{fw:new}" has "comment" = "renamed"
    And the answer does not list "group" = "{fw:old}"
    When I call DELETE "/cluster/firewall/groups/{fw:new}"
    Then the call succeeds

  Scenario: Aliases and IP sets of the cluster
    Given alias "{fw:lan}" stands for "192.168.10.0/24"
      | comment | office |
    When I create alias "{fw:lan}" for "10.0.0.0/8"
    Then parameter "name" is rejected with "alias '{fw:lan}' already exists"
    When I call GET "/cluster/firewall/aliases/{fw:lan}"
    Then the answer has "cidr" = "192.168.10.0/24"
    And the answer has "comment" = "office"
    And the answer has "ipversion" = "4"
    When I call GET "/cluster/firewall/aliases/{fw:nosuch}"
    Then parameter "name" is rejected with "no such alias"
    Given IP set "{fw:mgmt}" exists
      | comment | management |
    When I create IP set "{fw:mgmt}"
    Then parameter "name" is rejected with "IPSet '{fw:mgmt}' already exists"
    When I call POST "/cluster/firewall/ipset/{fw:mgmt}"
      | cidr | 10.1.2.3/16 |
    Then the call succeeds
    When I call POST "/cluster/firewall/ipset/{fw:mgmt}"
      | cidr    | 10.9.0.7 |
      | nomatch | 1        |
      | comment | printer  |
    Then the call succeeds
    When I call POST "/cluster/firewall/ipset/{fw:mgmt}"
      | cidr | {fw:lan} |
    Then the call succeeds
    When I call POST "/cluster/firewall/ipset/{fw:mgmt}"
      | cidr | 10.1.0.0/16 |
    Then parameter "cidr" is rejected with "address '10.1.0.0/16' already exists"
    When I call POST "/cluster/firewall/ipset/{fw:mgmt}"
      | cidr | {fw:nosuch} |
    Then PVE answers 500 "no such alias '{fw:nosuch}'"
    When I call GET "/cluster/firewall/ipset/{fw:mgmt}"
    Then the items' "cidr" are "10.1.0.0/16, 10.9.0.7, {fw:lan}"
    And the item with "cidr" = "10.9.0.7" has "nomatch" = "1"
    And every item has the same digest
    When I call GET "/cluster/firewall/ipset/{fw:mgmt}/10.1.0.0/16"
    Then the answer has "cidr" = "10.1.0.0/16"
    When I call PUT "/cluster/firewall/ipset/{fw:mgmt}/10.9.0.7"
      | comment | laser printer |
    Then the call succeeds
    When I call GET "/cluster/firewall/ipset/{fw:mgmt}/10.9.0.7"
    Then the answer has "comment" = "laser printer"
    And the answer has no "nomatch"
    When I call GET "/cluster/firewall/refs"
    Then the item with "ref" = "+{fw:mgmt}" has "scope" = "dc"
    And the item with "ref" = "{fw:lan}" has "type" = "alias"
    When I call DELETE "/cluster/firewall/ipset/{fw:mgmt}"
    Then PVE answers 500 "IPSet '{fw:mgmt}' is not empty"
    When I call DELETE "/cluster/firewall/ipset/{fw:mgmt}/10.9.0.7"
    Then the call succeeds
    When I call DELETE "/cluster/firewall/ipset/{fw:mgmt}"
      | force | 1 |
    Then the call succeeds
    When I call GET "/cluster/firewall/ipset/{fw:mgmt}"
    Then PVE answers 500 "no such IPSet '{fw:mgmt}'"

  Scenario: A VM's firewall: options, rules with references, its own aliases and IP sets
    Given VM "{vm1}" was created
    And security group "{fw:vmg}" exists
    And alias "{fw:gw}" stands for "10.0.0.1"
    When I call GET "/nodes/{node}/qemu/{vm1}/firewall/options"
    Then the answer has "digest" = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    When I call PUT "/nodes/{node}/qemu/{vm1}/firewall/options"
      | enable    | 1    |
      | policy_in | DROP |
      | dhcp      | 1    |
    Then the call succeeds
    When I call GET "/nodes/{node}/qemu/{vm1}/firewall/options"
    Then the answer has "enable" = "1"
    And the answer has "policy_in" = "DROP"
    When I call PUT "/nodes/{node}/qemu/{vm1}/firewall/options"
      | delete | dhcp,nosuch |
    Then parameter "delete" is rejected with "no such option 'nosuch'"
    When I call PUT "/nodes/{node}/qemu/{vm1}/firewall/options"
      | delete | dhcp                                     |
      | digest | 0000000000000000000000000000000000000000 |
    Then PVE answers 500 "detected modified configuration - file changed by other user? Try again."
    When I call POST "/nodes/{node}/qemu/{vm1}/firewall/aliases"
      | name | db       |
      | cidr | 10.0.0.9 |
    Then the call succeeds
    When I call POST "/nodes/{node}/qemu/{vm1}/firewall/ipset"
      | name | peers |
    Then the call succeeds
    When I call POST "/nodes/{node}/qemu/{vm1}/firewall/rules"
      | type   | group    |
      | action | {fw:vmg} |
      | iface  | net0     |
      | enable | 1        |
    Then the call succeeds
    When I call POST "/nodes/{node}/qemu/{vm1}/firewall/rules"
      | type   | in       |
      | action | ACCEPT   |
      | source | {fw:gw}  |
      | dest   | db       |
      | proto  | tcp      |
      | dport  | 5432     |
    Then the call succeeds
    When I call POST "/nodes/{node}/qemu/{vm1}/firewall/rules"
      | type   | in     |
      | action | ACCEPT |
      | source | +peers |
      | iface  | eth0   |
    Then parameter "iface" is rejected with "value does not match the regex pattern 'net\d+'"
    When I call POST "/nodes/{node}/qemu/{vm1}/firewall/rules"
      | type   | forward |
      | action | ACCEPT  |
    Then parameter "type" is rejected with "invalid rule type 'forward' for rule_env 'vm'"
    When I call GET "/nodes/{node}/qemu/{vm1}/firewall/rules"
    Then the items' "type" are "in, group"
    And the items' "ipversion" are "4, -"
    When I call GET "/nodes/{node}/qemu/{vm1}/firewall/refs"
      | type | alias |
    Then the item with "name" = "db" has "scope" = "guest"
    And the item with "name" = "{fw:gw}" has "scope" = "dc"
    When I call GET "/nodes/{node}/qemu/{vm1}/firewall/log"
      | limit | 5 |
    Then the answer is a list of 1 item
    And the item with "n" = "1" has "t" = "no content"
    When I call GET "/nodes/{node}/qemu/{vm1}/firewall"
    Then the items' "name" are "rules, aliases, ipset, refs, options"

  Scenario: Destroying a guest removes its firewall configuration
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/firewall/rules"
      | type   | in     |
      | action | ACCEPT |
      | macro  | SSH    |
    Then the call succeeds
    When I destroy VM "{vm1}"
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/qemu/{vm1}/firewall/rules"
    Then the answer is a list of 0 items

  Scenario: Macros and directory indexes
    When I call GET "/cluster/firewall/macros"
    Then the item with "macro" = "SSH" has "descr" = "Secure shell traffic"
    And the item with "macro" = "HTTPS" has "descr" = "Hypertext Transfer Protocol (WWW) over SSL"
    When I call GET "/cluster/firewall"
    Then the items' "name" are "aliases, rules, options, groups, ipset, macros, refs"
    When I call GET "/nodes/{node}/firewall"
    Then the items' "name" are "rules, options, log"

  @destructive
  Scenario: The cluster's own rules and options
    Given security group "{fw:all}" exists
    When I call POST "/cluster/firewall/rules"
      | type    | group     |
      | action  | {fw:all}  |
      | comment | {prefix}  |
    Then the call succeeds
    When I call GET "/cluster/firewall/rules/0"
    Then the answer has "action" = "{fw:all}"
    When I remember the answer's "digest" as "d"
    When I call DELETE "/cluster/firewall/rules/0"
      | digest | {var:d} |
    Then the call succeeds
    When I call GET "/cluster/firewall/options"
    And I remember the answer's "digest" as "o"
    When I call PUT "/cluster/firewall/options"
      | policy_out | ACCEPT  |
      | digest     | {var:o} |
    Then the call succeeds
    When I call GET "/cluster/firewall/options"
    Then the answer has "policy_out" = "ACCEPT"
