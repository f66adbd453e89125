@storage @content
Feature: A storage's content
  .../storage/{storage}/content lists a storage's volumes with PVE's
  fields and filters; POST allocates a disk image by name under PVE's
  naming rules; single volumes are read, annotated (backups only) and
  deleted as imgdel tasks. download-url fetches ISO images and
  templates in a task; upload sends them from the client.

  Background:
    Given I define storage "{storage:scratch}" with:
      | type    | dir               |
      | path    | /var/tmp/{prefix} |
      | content | images,iso        |

  Scenario: Allocate images and list them with filters
    When I allocate "vm-{vm1}-disk-0.raw" for VM "{vm1}" on storage "{storage:scratch}"
      | size | 1M |
    Then the answer is "{storage:scratch}:{vm1}/vm-{vm1}-disk-0.raw"
    When I allocate "vm-{vm1}-disk-1.qcow2" for VM "{vm1}" on storage "{storage:scratch}"
      | size | 2M |
    Then the answer is "{storage:scratch}:{vm1}/vm-{vm1}-disk-1.qcow2"
    When I allocate "vm-{vm2}-disk-0.raw" for VM "{vm2}" on storage "{storage:scratch}"
      | size | 1M |
    Then the call succeeds
    When I list the content of storage "{storage:scratch}"
    Then the answer is a list of 3 items
    And the item with "volid" = "{storage:scratch}:{vm1}/vm-{vm1}-disk-0.raw" has "format" = "raw"
    And the item with "volid" = "{storage:scratch}:{vm1}/vm-{vm1}-disk-0.raw" has "size" = "1048576"
    And the item with "volid" = "{storage:scratch}:{vm1}/vm-{vm1}-disk-0.raw" has "content" = "images"
    And the item with "volid" = "{storage:scratch}:{vm1}/vm-{vm1}-disk-1.qcow2" has "format" = "qcow2"
    And every item has "vmid"
    When I list the content of storage "{storage:scratch}"
      | vmid | {vm1} |
    Then the answer is a list of 2 items
    And every item has "vmid" = "{vm1}"
    When I list the content of storage "{storage:scratch}"
      | content | iso |
    Then the answer is a list of 0 items
    When I list the content of storage "{storage:scratch}"
      | content | images |
    Then the answer is a list of 3 items

  Scenario: Allocations PVE refuses
    When I allocate "disk" for VM "{vm1}" on storage "{storage:scratch}"
      | size | 1M |
    Then PVE answers 500 "unable to parse volume filename 'disk'"
    When I allocate "vm-{vm1}-disk-0.raw" for VM "{vm1}" on storage "{storage:scratch}"
      | size   | 1M    |
      | format | qcow2 |
    Then parameter "format" is rejected with "different storage formats (qcow2 != raw)"
    When I allocate "vm-{vm1}-disk-0.raw" for VM "{vm1}" on storage "{storage:scratch}"
      | size | 1M |
    Then the call succeeds
    When I allocate "vm-{vm1}-disk-0.raw" for VM "{vm1}" on storage "{storage:scratch}"
      | size | 1M |
    Then PVE answers 500 "disk image '/var/tmp/{prefix}/images/{vm1}/vm-{vm1}-disk-0.raw' already exists"
    When I list the content of storage "nosuchstore"
    Then PVE answers 500 "storage 'nosuchstore' does not exist"

  Scenario: Read a volume, refuse notes on an image, delete it
    When I allocate "vm-{vm1}-disk-0.raw" for VM "{vm1}" on storage "{storage:scratch}"
      | size | 1M |
    Then the call succeeds
    When I read volume "{vm1}/vm-{vm1}-disk-0.raw" of storage "{storage:scratch}"
    Then the answer has "path" = "/var/tmp/{prefix}/images/{vm1}/vm-{vm1}-disk-0.raw"
    And the answer has "size" = "1048576"
    And the answer has "format" = "raw"
    And the answer has no "notes"
    When I read volume "{storage:scratch}:{vm1}/vm-{vm1}-disk-0.raw" of storage "{storage:scratch}"
    Then the answer has "format" = "raw"
    When I update volume "{vm1}/vm-{vm1}-disk-0.raw" of storage "{storage:scratch}" with:
      | notes | my disk |
    Then PVE answers 500 "only backups can have notes"
    When I update volume "{vm1}/vm-{vm1}-disk-0.raw" of storage "{storage:scratch}" with:
      | protected | 1 |
    Then PVE answers 500 "only backups support attribute 'protected'"
    When I delete volume "{vm1}/vm-{vm1}-disk-0.raw" of storage "{storage:scratch}"
    Then the task ID names node "{node}", type "imgdel", ID "{vm1}@{storage:scratch}" and user "{me}"
    And the task ends with "OK"
    When I list the content of storage "{storage:scratch}"
    Then the answer is a list of 0 items

  @fake-only
  Scenario: Download an ISO image and ask a URL's metadata
    Given the internet serves:
      | url                               | size      | checksum | checksum-algorithm | mimetype                    |
      | https://example.com/debian-12.iso | 658505728 | abc123   | sha256             | application/x-iso9660-image |
    When I query the metadata of URL "https://example.com/debian-12.iso"
    Then the answer has "filename" = "debian-12.iso"
    And the answer has "size" = "658505728"
    And the answer has "mimetype" = "application/x-iso9660-image"
    When I query the metadata of URL "https://example.com/nothing.iso"
    Then PVE answers 500 "invalid server response: '404 Not Found'"
    When I download "https://example.com/debian-12.iso" as iso "debian.iso" to storage "{storage:scratch}"
      | checksum           | abc123 |
      | checksum-algorithm | sha256 |
    Then the task ID names node "{node}", type "download", ID "debian.iso" and user "{me}"
    And the task ends with "OK"
    When I list the content of storage "{storage:scratch}"
      | content | iso |
    Then the item with "volid" = "{storage:scratch}:iso/debian.iso" has "size" = "658505728"
    When I download "https://example.com/debian-12.iso" as iso "debian.iso" to storage "{storage:scratch}"
    Then the task ends with "refusing to override existing file '/var/tmp/{prefix}/template/iso/debian.iso'"
    When I download "https://example.com/debian-12.iso" as iso "bad.iso" to storage "{storage:scratch}"
      | checksum           | ffff   |
      | checksum-algorithm | sha256 |
    Then the task ends with "checksum mismatch: got 'abc123' != expect 'ffff'"
    When I download "https://example.com/debian-12.iso" as iso "a.iso" to storage "{storage}"
    Then PVE answers 500 "can't upload to storage type 'lvmthin', not a file based storage!"

  @fake-only
  Scenario: A downloaded image appears when its task ends, a deleted one goes then
    Given the internet serves:
      | url                               | size      |
      | https://example.com/debian-12.iso | 658505728 |
    And download tasks take 3 seconds
    When I download "https://example.com/debian-12.iso" as iso "debian.iso" to storage "{storage:scratch}"
    Then the task is still running
    When I list the content of storage "{storage:scratch}"
      | content | iso |
    Then the answer does not list "volid" = "{storage:scratch}:iso/debian.iso"
    When 3 seconds pass
    Then the task ends with "OK"
    When I list the content of storage "{storage:scratch}"
      | content | iso |
    Then the answer lists "volid" = "{storage:scratch}:iso/debian.iso"
    Given imgdel tasks take 3 seconds
    When I delete volume "iso/debian.iso" of storage "{storage:scratch}"
    Then the task is still running
    When I list the content of storage "{storage:scratch}"
      | content | iso |
    Then the answer lists "volid" = "{storage:scratch}:iso/debian.iso"
    When 3 seconds pass
    Then the task ends with "OK"
    When I list the content of storage "{storage:scratch}"
      | content | iso |
    Then the answer does not list "volid" = "{storage:scratch}:iso/debian.iso"

  Scenario: Upload an ISO image, checked against its checksum
    When I upload "hello" as iso "hello world.iso" to storage "{storage:scratch}"
      | checksum           | 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 |
      | checksum-algorithm | sha256                                                           |
    Then the task ID names node "{node}", type "imgcopy", ID "" and user "{me}"
    And the task ends with "OK"
    When I list the content of storage "{storage:scratch}"
      | content | iso |
    Then the item with "volid" = "{storage:scratch}:iso/hello_world.iso" has "size" = "5"
    When I upload "hello" as iso "bad.iso" to storage "{storage:scratch}"
      | checksum           | 00  |
      | checksum-algorithm | md5 |
    Then the task ends with "checksum mismatch: got '5d41402abc4b2a76b9719d911017c592' != expect '00'"
    When I upload "hello" as iso "notes.txt" to storage "{storage:scratch}"
    Then parameter "filename" is rejected with "wrong file extension"
    When I upload "hello" as iso "a.iso" to storage "{storage}"
    Then PVE answers 500 "can't upload to storage type 'lvmthin'"

  @fake-only @pve9.2
  Scenario: 9.2 lists an inactive qcow2 image on LVM by its logical volume's size
    Given I define storage "{storage:thick}" with:
      | type                     | lvm    |
      | vgname                   | pve    |
      | content                  | images |
      | snapshot-as-volume-chain | 1      |
    When I allocate "vm-{vm1}-disk-0.qcow2" for VM "{vm1}" on storage "{storage:thick}"
      | size | 1G |
    Then the answer is "{storage:thick}:vm-{vm1}-disk-0.qcow2"
    When I list the content of storage "{storage:thick}"
    Then the item with "volid" = "{storage:thick}:vm-{vm1}-disk-0.qcow2" has "approximate-size" = "1077936128"
    And the item with "volid" = "{storage:thick}:vm-{vm1}-disk-0.qcow2" has no "size"
    And the item with "volid" = "{storage:thick}:vm-{vm1}-disk-0.qcow2" has "format" = "qcow2"
