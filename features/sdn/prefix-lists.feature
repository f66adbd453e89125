@sdn @pve9.2
Feature: SDN prefix lists and route maps
  PVE 9.2 keeps FRR prefix lists (sdn/prefix-lists.cfg) and route maps
  (sdn/route-maps.cfg, one section per route map entry) with the rest of
  the pending SDN configuration. PVE's Rust code (proxmox-ve-config)
  numbers the entries of a prefix list as FRR does, checks their ge/le
  bounds against the prefix and refuses to delete a list a route map
  still matches. Messages from that code may carry the Perl file and
  line on a real PVE, so they are matched by pattern.

  Scenario: A prefix list and its entries
    When I create SDN prefix list "{prefix-list:a}"
      | entries | action=permit,prefix=198.18.70.0/24,le=28,seq=10 |
      | entries | action=deny,prefix=fd18:70::/48,ge=64            |
    Then the answer is null
    When I call GET "/cluster/sdn/prefix-lists/{prefix-list:a}"
    Then the answer has "type" = "prefix-list"
    And the answer has "entries/0" = "action=permit,prefix=198.18.70.0/24,le=28,seq=10"
    And the answer has "entries/1" = "action=deny,prefix=fd18:70::/48,ge=64,seq=15"
    When I call GET "/cluster/sdn/prefix-lists"
    Then the item with "id" = "{prefix-list:a}" has no "entries"
    When I call GET "/cluster/sdn/prefix-lists"
      | verbose | 1 |
    Then the item with "id" = "{prefix-list:a}" has "type" = "prefix-list"
    And every item has "digest"
    When I call POST "/cluster/sdn/prefix-lists/{prefix-list:a}/entries"
      | action | deny            |
      | prefix | 198.18.71.0/24  |
    Then the answer is null
    When I call GET "/cluster/sdn/prefix-lists/{prefix-list:a}/entries"
    Then the answer lists "seq" = "20"
    When I call GET "/cluster/sdn/prefix-lists/{prefix-list:a}/entries/20"
    Then the answer has "prefix" = "198.18.71.0/24"
    When I call PUT "/cluster/sdn/prefix-lists/{prefix-list:a}/entries/20"
      | seq | 5 |
      | ge  | 26 |
    Then the answer is null
    When I call GET "/cluster/sdn/prefix-lists/{prefix-list:a}/entries/5"
    Then the answer has "ge" = "26"
    When I call GET "/cluster/sdn/prefix-lists/{prefix-list:a}/entries/20"
    Then PVE answers 400 "Parameter verification failed."
    When I call DELETE "/cluster/sdn/prefix-lists/{prefix-list:a}/entries/5"
    Then the answer is null
    When I call GET "/cluster/sdn/prefix-lists/{prefix-list:a}/entries"
    Then the answer does not list "seq" = "5"

  Scenario: Entries are checked against their prefix and each other
    Given SDN prefix list "{prefix-list:a}" exists
      | entries | action=permit,prefix=198.18.72.0/24,seq=10 |
    When I call POST "/cluster/sdn/prefix-lists/{prefix-list:a}/entries"
      | action | permit         |
      | prefix | 198.18.72.0/24 |
      | le     | 23             |
    Then PVE answers 500 with a message matching "creating prefix list entry failed: Prefix <= must not be less than 24.*"
    When I call POST "/cluster/sdn/prefix-lists/{prefix-list:a}/entries"
      | action | permit         |
      | prefix | 198.18.72.0/24 |
      | ge     | 28             |
      | le     | 26             |
    Then PVE answers 500 with a message matching "creating prefix list entry failed: Prefix >= \(28\) must not be greater than Prefix <= \(26\).*"
    When I call POST "/cluster/sdn/prefix-lists/{prefix-list:a}/entries"
      | action | deny           |
      | prefix | 198.18.73.0/24 |
      | seq    | 10             |
    Then PVE answers 500 with a message matching "creating prefix list entry failed: entry with sequence number 10 already exists!.*"
    When I create SDN prefix list "{prefix-list:a}"
    Then PVE answers 500 with a message matching "creating prefix list failed: prefix list already exists in configuration: {prefix-list:a}.*"
    When I call POST "/cluster/sdn/prefix-lists"
      | id      | {prefix-list:b}              |
      | entries | action=permit,prefix=198.18.74.0 |
    Then PVE answers 400 "Parameter verification failed."

  @fake-only
  Scenario: The lists and maps the SDN stack generates are reserved
    When I call POST "/cluster/sdn/prefix-lists"
      | id | only_default |
    Then parameter "id" is rejected with "invalid format - prefix list ID 'only_default' is currently reserved and cannot be used"
    When I call POST "/cluster/sdn/route-maps/entries"
      | route-map-id | pve_in |
      | order        | 1      |
      | action       | permit |
    Then parameter "route-map-id" is rejected with "invalid format - route map ID 'pve_in' is currently reserved and cannot be used"

  Scenario: Route map entries match prefix lists and keep them from going
    Given SDN prefix list "{prefix-list:a}" exists
      | entries | action=permit,prefix=198.18.75.0/24 |
    When I create entry 10 of SDN route map "{route-map:a}" with action "permit"
      | match       | key=ip-address-prefix-list,value={prefix-list:a} |
      | set         | key=local-preference,value=+20                   |
      | set         | key=ip-next-hop-unchanged                        |
      | exit-action | key=on-match-goto,value=30                       |
    Then the answer is null
    When I call GET "/cluster/sdn/route-maps/entries/{route-map:a}/entry/10"
    Then the answer has "action" = "permit"
    And the answer has "match/0" = "key=ip-address-prefix-list,value={prefix-list:a}"
    And the answer has "set/1" = "key=ip-next-hop-unchanged"
    And the answer has "exit-action" = "key=on-match-goto,value=30"
    When I call GET "/cluster/sdn/route-maps"
    Then the answer lists "id" = "{route-map:a}"
    When I call GET "/cluster/sdn/route-maps/entries/{route-map:a}"
    Then the item with "order" = "10" has "route-map-id" = "{route-map:a}"
    When I call GET "/cluster/sdn/route-maps/entries"
    Then the answer lists "route-map-id" = "{route-map:a}"
    When I create entry 10 of SDN route map "{route-map:a}" with action "deny"
    Then PVE answers 500 with a message matching "creating route map entry failed: route map entry already exists in configuration: {route-map:a}_10.*"
    When I call DELETE "/cluster/sdn/prefix-lists/{prefix-list:a}"
    Then PVE answers 500 with a message matching "deleting prefix list failed: prefix list {prefix-list:a} is still referenced by route map entry {route-map:a} #10.*"
    When I call PUT "/cluster/sdn/route-maps/entries/{route-map:a}/entry/10"
      | action | deny  |
      | delete | match |
      | delete | set   |
    Then the answer is null
    When I call GET "/cluster/sdn/route-maps/entries/{route-map:a}/entry/10"
    Then the answer has "action" = "deny"
    And the answer has no "match/0"
    When I call DELETE "/cluster/sdn/prefix-lists/{prefix-list:a}"
    Then the answer is null
    When I call DELETE "/cluster/sdn/route-maps/entries/{route-map:a}/entry/10"
    Then the answer is null
    When I call GET "/cluster/sdn/route-maps/entries/{route-map:a}/entry/10"
    Then PVE answers 400 "Parameter verification failed."
    When I call GET "/cluster/sdn/route-maps"
    Then the answer does not list "id" = "{route-map:a}"

  Scenario: A new prefix list and route map are pending until applied
    Given SDN prefix list "{prefix-list:a}" exists
    And entry 5 of SDN route map "{route-map:a}" with action "deny" exists
    When I call GET "/cluster/sdn/prefix-lists"
      | pending | 1 |
    Then the item with "id" = "{prefix-list:a}" has "state" = "new"
    When I call GET "/cluster/sdn/prefix-lists"
      | running | 1 |
    Then the answer does not list "id" = "{prefix-list:a}"
    When I call GET "/cluster/sdn/route-maps"
      | running | 1 |
    Then the answer does not list "id" = "{route-map:a}"
    When I call GET "/cluster/sdn/route-maps/entries/{route-map:a}"
      | running | 1 |
    Then the answer does not list "order" = "5"

  Scenario: The lists show what the caller may audit
    Given SDN prefix list "{prefix-list:a}" exists
    And SDN prefix list "{prefix-list:b}" exists
    And entry 1 of SDN route map "{route-map:a}" with action "permit" exists
    And a user "alice" with password "wonderland"
    And "alice" has the role "PVESDNAdmin" on "/sdn/prefix-lists/{prefix-list:a}"
    And "alice" logs in with password "wonderland"
    When I act as "alice"
    And I call GET "/cluster/sdn/prefix-lists"
    Then the answer lists "id" = "{prefix-list:a}"
    And the answer does not list "id" = "{prefix-list:b}"
    When I call GET "/cluster/sdn/prefix-lists/{prefix-list:b}"
    Then PVE answers 403 "Permission check failed (/sdn/prefix-lists/{prefix-list:b}, SDN.Audit)"
    When I call GET "/cluster/sdn/route-maps"
    Then the answer does not list "id" = "{route-map:a}"
    When I call GET "/cluster/sdn/route-maps/entries/{route-map:a}"
    Then PVE answers 403 "Permission check failed (/sdn/route-maps/{route-map:a}, SDN.Audit|SDN.Allocate)"
