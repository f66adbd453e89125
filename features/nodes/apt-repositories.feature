@nodes
Feature: A node's APT repositories
  apt/repositories lists the files under /etc/apt with their
  repositories, a common digest, each repository's origin and the
  standard Proxmox repositories with their status, as proxmox-apt reads
  them. A change names a repository by its file and index; both changes
  and additions check the digest first.

  Scenario: The repositories and the standard ones
    When I call GET "/nodes/{node}/apt/repositories"
    Then the call succeeds
    And the answer has "digest"
    And the answer has "files/0/path"
    And the answer has "files/0/repositories/0/Types"
    And the answer has "standard-repos/0/handle"
    And the answer has "standard-repos/1/name"

  Scenario: What proxmox-apt refuses
    When I call POST "/nodes/{node}/apt/repositories"
      | path   | /etc/apt/sources.list.d/conformance-none.list                    |
      | index  | 0                                                                |
      | digest | 0000000000000000000000000000000000000000000000000000000000000000 |
    Then PVE answers 500 "detected modified configuration - file changed by other user? Try again."
    When I call POST "/nodes/{node}/apt/repositories"
      | path  | /etc/apt/sources.list.d/conformance-none.list |
      | index | 0                                             |
    Then PVE answers 500 "invalid path - /etc/apt/sources.list.d/conformance-none.list"
    When I call PUT "/nodes/{node}/apt/repositories"
      | handle | conformance |
    Then PVE answers 500 with a message matching "unknown variant `conformance`, expected one of `enterprise`, `no-subscription`, `test`"

  @destructive
  Scenario: A repository is disabled and enabled again under the digest
    When I call GET "/nodes/{node}/apt/repositories"
    And I remember the answer's "digest" as "digest"
    And I remember the answer's "files/0/path" as "file"
    And I call POST "/nodes/{node}/apt/repositories"
      | path    | {var:file}   |
      | index   | 0            |
      | enabled | 0            |
      | digest  | {var:digest} |
    Then the call succeeds
    When I call GET "/nodes/{node}/apt/repositories"
    Then the answer has "files/0/repositories/0/Enabled" matching "0|false"
    And the answer's "digest" differs from "digest"
    When I call POST "/nodes/{node}/apt/repositories"
      | path    | {var:file}   |
      | index   | 0            |
      | enabled | 1            |
      | digest  | {var:digest} |
    Then PVE answers 500 "detected modified configuration - file changed by other user? Try again."
    When I call POST "/nodes/{node}/apt/repositories"
      | path    | {var:file} |
      | index   | 0          |
      | enabled | 1          |
    Then the call succeeds
    When I call GET "/nodes/{node}/apt/repositories"
    Then the answer has "files/0/repositories/0/Enabled" matching "1|true"

  @fake-only @pve9
  Scenario: A fresh 9.1 install has trixie's deb822 sources
    When I call GET "/nodes/{node}/apt/repositories"
    Then the answer has "files/1/path" = "/etc/apt/sources.list.d/debian.sources"
    And the answer has "files/1/file-type" = "sources"
    And the answer has "files/1/repositories/0/Suites/1" = "trixie-updates"
    And the answer has "standard-repos/0/handle" = "enterprise"
    And the answer has "standard-repos/0/status" = "true"
    And the answer has "standard-repos/4/handle" = "ceph-squid-no-subscription"
    And the answer has no "standard-repos/4/status"
    When I call PUT "/nodes/{node}/apt/repositories"
      | handle | no-subscription |
    Then the call succeeds
    When I call GET "/nodes/{node}/apt/repositories"
    Then the answer has "files/2/path" = "/etc/apt/sources.list.d/proxmox.sources"
    And the answer has "files/2/repositories/0/Components/0" = "pve-no-subscription"

  @fake-only @pve8
  Scenario: A fresh 8.4 install has bookworm's one-line lists
    When I call GET "/nodes/{node}/apt/repositories"
    Then the answer has "files/0/path" = "/etc/apt/sources.list"
    And the answer has "files/0/repositories/2/Comment" matching " security updates\s"
    And the answer has "standard-repos/3/handle" = "ceph-quincy-enterprise"
    And the answer has "standard-repos/3/status" = "true"
    When I call PUT "/nodes/{node}/apt/repositories"
      | handle | test |
    Then the call succeeds
    When I call GET "/nodes/{node}/apt/repositories"
    Then the answer has "files/0/repositories/3/Components/0" = "pvetest"
