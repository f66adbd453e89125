@nodes @scan
Feature: Scanning for storages from a node
  /nodes/{node}/scan asks storage servers what they offer (NFS exports,
  CIFS shares, iSCSI targets, PBS datastores; 8.x also GlusterFS
  volumes) and the node what it has (LVM volume groups and thin pools,
  ZFS pools). On fake-pve the servers are the ones the scenario declares
  under the node's `scan:`; any other server fails as it fails on PVE.

  Scenario: The node's own volume groups and pools
    When I call GET "/nodes/{node}/scan/lvm"
    Then the call succeeds
    When I call GET "/nodes/{node}/scan/zfs"
    Then the call succeeds

  Scenario: A server that cannot be resolved
    When I call GET "/nodes/{node}/scan/nfs"
      | server | nfs.invalid |
    Then PVE answers 500 "unable to resolve address for server 'nfs.invalid'"
    When I call GET "/nodes/{node}/scan/cifs"
      | server | cifs.invalid |
    Then PVE answers 500 "unable to resolve address for server 'cifs.invalid'"
    When I call GET "/nodes/{node}/scan/iscsi"
      | portal | iscsi.invalid |
    Then PVE answers 500 "unable to parse/resolve portal address 'iscsi.invalid'"

  @fake-only
  Scenario: Declared servers answer with what they offer
    Given the cluster is seeded with:
      """
      nodes:
        - name: {node}
          scan:
            nfs:
              192.0.2.50:
                - { path: /export/vm, options: 192.0.2.0/24 }
                - { path: /export/iso }
            cifs:
              192.0.2.51:
                username: backup
                password: secret
                shares: [{ share: backups, description: Backups }]
            iscsi:
              192.0.2.52: [iqn.2003-01.org.linux-iscsi.san:sn.0001]
            pbs:
              192.0.2.53:
                username: root@pam
                password: secret
                datastores: [{ store: main, comment: Main store }]
          disks:
            - { dev: sdb, size: 4T, zpool: tank }
      """
    When I call GET "/nodes/{node}/scan/nfs"
      | server | 192.0.2.50 |
    Then the answer is a list of 2 items
    And the item with "path" = "/export/vm" has "options" = "192.0.2.0/24"
    And the item with "path" = "/export/iso" has "options" = "*"
    When I call GET "/nodes/{node}/scan/nfs"
      | server | 192.0.2.99 |
    Then PVE answers 500 "command '/sbin/showmount --no-headers --exports 192.0.2.99' failed: exit code 1"
    When I call GET "/nodes/{node}/scan/cifs"
      | server | 192.0.2.51 |
    Then PVE answers 500 "session setup failed: NT_STATUS_LOGON_FAILURE"
    When I call GET "/nodes/{node}/scan/cifs"
      | server   | 192.0.2.51 |
      | username | backup     |
      | password | secret     |
    Then the item with "share" = "backups" has "description" = "Backups"
    When I call GET "/nodes/{node}/scan/iscsi"
      | portal | 192.0.2.52 |
    Then the item with "target" = "iqn.2003-01.org.linux-iscsi.san:sn.0001" has "portal" = "192.0.2.52:3260"
    When I call GET "/nodes/{node}/scan/iscsi"
      | portal | 192.0.2.98 |
    Then the answer is a list of 0 items
    When I call GET "/nodes/{node}/scan/pbs"
      | server   | 192.0.2.53 |
      | username | root@pam   |
      | password | wrong      |
    Then PVE answers 500 "error fetching datastores - 401 Unauthorized"
    When I call GET "/nodes/{node}/scan/pbs"
      | server   | 192.0.2.53 |
      | username | root@pam   |
      | password | secret     |
    Then the item with "store" = "main" has "comment" = "Main store"
    When I call GET "/nodes/{node}/scan/zfs"
    Then the answer lists "pool" = "tank"
    When I call GET "/nodes/{node}/disks/list"
    Then the item with "devpath" = "/dev/sdb" has "used" = "ZFS"
