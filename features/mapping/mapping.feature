@cluster @mapping
Feature: Resource mappings
  /cluster/mapping/{pci,usb,dir} give a PCI device, a USB device or a
  directory one cluster-wide name, with an entry per node ("map", one
  property string a node) saying which device or path stands for it
  there. The lists show the mappings the user holds a Mapping.*
  privilege on; with "check-node" they check each entry naming that node
  against its devices. A VM names a mapping as "hostpciN: mapping=",
  "usbN: mapping=" or "virtiofsN: dirid=": its start needs a valid entry
  for the VM's node, and a migration a node with an entry.

  Scenario: Make, read, change and remove a PCI mapping
    When I create pci mapping "{prefix}gpu" with:
      | map         | node={node},path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2 |
      | mdev        | 1                                                                               |
      | description | the T4                                                                          |
    Then the call succeeds
    When I create pci mapping "{prefix}gpu" with:
      | map | node={node},path=0000:65:00.0,id=10de:1eb8 |
    Then PVE answers 500 "create hardware mapping failed: pci ID '{prefix}gpu' already defined"
    When I call GET "/cluster/mapping/pci/{prefix}gpu"
    Then the answer has "type" = "pci"
    And the answer has "mdev" = "1"
    And the answer has "description" = "the T4"
    And the answer has "map/0" = "node={node},path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2"
    And the answer has "digest" matching "[0-9a-f]{40}"
    When I call GET "/cluster/mapping/pci"
    Then the item with "id" = "{prefix}gpu" has "description" = "the T4"
    And the item with "id" = "{prefix}gpu" has no "checks"
    When I call PUT "/cluster/mapping/pci/{prefix}gpu"
      | description | the first T4 |
    Then PVE answers 500 "update hardware mapping failed: missing value for required option 'map'"
    When I call PUT "/cluster/mapping/pci/{prefix}gpu"
      | map    | node={node},path=0000:65:00.0,id=10de:1eb8 |
      | delete | map                                        |
    Then PVE answers 500 "update hardware mapping failed: unable to delete required option 'map'"
    When I call PUT "/cluster/mapping/pci/{prefix}gpu"
      | map    | node={node},path=0000:65:00.0,id=10de:1eb8 |
      | map    | node=pve2,path=0000:01:00.0,id=10de:1eb8   |
      | delete | description,mdev                           |
    Then the call succeeds
    When I call GET "/cluster/mapping/pci/{prefix}gpu"
    Then the answer has no "description"
    And the answer has no "mdev"
    And the answer has "map/1" = "node=pve2,path=0000:01:00.0,id=10de:1eb8"
    When I call PUT "/cluster/mapping/pci/{prefix}nosuch"
      | map | node={node},path=0000:65:00.0,id=10de:1eb8 |
    Then PVE answers 500 "update hardware mapping failed: pci ID '{prefix}nosuch' does not exist"
    When I call DELETE "/cluster/mapping/pci/{prefix}gpu"
    Then the call succeeds
    When I call GET "/cluster/mapping/pci/{prefix}gpu"
    Then PVE answers 500 "mapping '{prefix}gpu' not found"
    When I call DELETE "/cluster/mapping/pci/{prefix}gpu"
    Then the call succeeds

  Scenario: A directory mapping names each node once, and a local directory
    When I create dir mapping "{prefix}share" with:
      | map | node={node},path=/nonexistent/{prefix} |
    Then PVE answers 500 "Path /nonexistent/{prefix} does not exist"
    When I create dir mapping "{prefix}share" with:
      | map | node=pve2,path=/a |
      | map | node=pve2,path=/b |
    Then PVE answers 500 "Node 'pve2' is specified 2 times."
    When I create dir mapping "{prefix}share" with:
      | map | node={node},path=/tmp |
    Then the call succeeds
    When I call GET "/cluster/mapping/dir/{prefix}share"
    Then the answer has "type" = "dir"
    And the answer has "map/0" = "node={node},path=/tmp"

  Scenario: A user sees the mappings he holds a Mapping privilege on
    Given usb mapping "{prefix}stick" was created with:
      | map | node={node},id=0781:5583 |
    And usb mapping "{prefix}mouse" was created with:
      | map | node={node},id=0557:2419 |
    And a user "bob" with password "builder1"
    And "bob" has the role "PVEMappingUser" on "/mapping/usb/{prefix}stick"
    And "bob" logs in with password "builder1"
    When I act as "bob"
    And I call GET "/cluster/mapping/usb"
    Then the answer lists "id" = "{prefix}stick"
    And the answer does not list "id" = "{prefix}mouse"
    When I call GET "/cluster/mapping/usb/{prefix}mouse"
    Then PVE answers 403 "Permission check failed"
    When I call DELETE "/cluster/mapping/usb/{prefix}stick"
    Then PVE answers 403 "Permission check failed (/mapping/usb, Mapping.Modify)"

  @fake-only
  Scenario: check-node compares the node's entries with its devices
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node} }
        - { name: pve2, ip: 10.0.0.2 }
      mappings:
        pci:
          gpu:
            mdev: true
            map:
              - node={node},path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2
              - node=pve2,path=0000:65:00.0,id=10de:1eb9,iommugroup=30,subsystem-id=10de:12a2
        usb:
          stick: { map: ['node={node},id=0781:5583,path=2-1'] }
      """
    When I call GET "/cluster/mapping/pci"
      | check-node | {node} |
    Then the answer has "0/checks" = "[]"
    When I call GET "/cluster/mapping/pci"
      | check-node | pve2 |
    Then the answer has "0/checks/0/severity" = "error"
    And the answer has "0/checks/0/message" matching "Invalid configuration: 'id' does not match for 'gpu' \(10de:1eb8 != 10de:1eb9\)\s*"
    When I call GET "/cluster/mapping/usb"
      | check-node | pve2 |
    Then the answer has "0/errors/0/severity" = "warning"
    And the answer has "0/errors/0/message" = "No mapping for node pve2."
    When I call GET "/nodes/{node}/hardware/pci/gpu/mdev"
    Then the answer has "0/type" = "nvidia-222"
    When I call GET "/nodes/pve2/hardware/pci/stick/mdev"
    Then the answer is a list of 0 items
    When I call GET "/cluster/mapping/usb"
      | check-node | nosuchnode |
    Then PVE answers 500 "hostname lookup 'nosuchnode' failed - failed to get address info for: nosuchnode: Name or service not known"

  @fake-only
  Scenario: A VM with a mapped device starts and migrates only where the mapping is
    Given the cluster is seeded with:
      """
      nodes:
        - { name: {node} }
        - { name: pve2, ip: 10.0.0.2 }
      mappings:
        pci:
          gpu:
            mdev: true
            map: ['node={node},path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2']
          elsewhere:
            map: ['node=pve2,path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2']
      """
    And VM "{vm1}" was created with:
      | memory   | 128          |
      | hostpci0 | mapping=gpu  |
    And VM "{vm2}" was created with:
      | memory   | 128              |
      | hostpci0 | mapping=elsewhere |
    When I read the migration preconditions of VM "{vm1}"
    Then the answer has "mapped-resources/0" = "hostpci0"
    And the answer has "mapped-resource-info/hostpci0/name" = "gpu"
    And the answer has "local_resources" = "[]"
    And the answer has "allowed_nodes" = "[]"
    And the answer has "not_allowed_nodes/pve2/unavailable-resources/0" = "hostpci0"
    When I migrate VM "{vm1}" to node "pve2"
    Then the task ends with "migration aborted"
    When I call GET "/nodes/{node}/tasks/{upid}/log"
    Then a log line ends with "can't migrate to 'pve2': missing mapped devices hostpci0"
    When I start the task POST "/nodes/{node}/qemu/{vm2}/status/start"
    Then the task ends with "PCI device mapping not found for 'elsewhere'"
    When I start the task POST "/nodes/{node}/qemu/{vm1}/status/start"
    Then the task ends with "OK"
    When I read the migration preconditions of VM "{vm1}"
    Then the answer has "local_resources/0" = "hostpci0"
    When I call PUT "/cluster/mapping/pci/gpu"
      | map  | node={node},path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2 |
      | map  | node=pve2,path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2   |
      | mdev | 1                                                                               |
    Then the call succeeds
    When I migrate VM "{vm1}" to node "pve2"
      | online | 1 |
    Then the task ends with "migration aborted"
    When I call GET "/nodes/{node}/tasks/{upid}/log"
    Then a log line ends with "can't live migrate running VM which uses following mapped devices: hostpci0:gpu"
