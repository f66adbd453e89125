@transport
Feature: Forms as clients send them
  pveproxy reads a form (a body or a query string) as pve-http-server's
  decode_urlencoded does: a key given twice is a list of its values.
  Before the parameters are checked, PVE's handler joins such a list
  with commas where the parameter is a string of a list format
  (pve-storage-content-list, pve-vmid-list), and refuses it where the
  parameter is a plain string. proxmoxer, and so Ansible's
  proxmox_storage and proxmox_pool_member, send lists this way.

  # storage.cfg has one digest for every storage: no other scenario may
  # change the file meanwhile.
  @serial
  Scenario: A storage's content given as a repeated key
    When I send the form POST "/storage" with:
      | storage | {storage:form}         |
      | type    | dir                    |
      | path    | /var/tmp/{prefix}-form |
      | content | iso                    |
      | content | vztmpl                 |
      | disable | 1                      |
    Then the call succeeds
    When I read storage "{storage:form}"
    Then the answer has "content" = "iso,vztmpl"
    When I remove storage "{storage:form}"
    Then the call succeeds

  Scenario: A pool's guests given as a repeated key
    Given VM "{vm1}" was created
    And VM "{vm2}" was created
    When I create pool "{pool:form}"
    Then the call succeeds
    When I send the form PUT "/pools/{pool:form}" with:
      | vms | {vm1} |
      | vms | {vm2} |
    Then the call succeeds
    When I read pool "{pool:form}"
    Then the pool's members are "qemu/{vm1},qemu/{vm2}"
    When I send the form PUT "/pools/{pool:form}" with:
      | comment | one |
      | comment | two |
    Then parameter "comment" is rejected with "type check ('string') failed - got ARRAY"
    When I send the form PUT "/pools/{pool:form}" with:
      | vms    | {vm1} |
      | vms    | {vm2} |
      | delete | 1     |
    Then the call succeeds
    When I delete pool "{pool:form}"
    Then the call succeeds
