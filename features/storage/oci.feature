@pve9
Feature: OCI images
  query-oci-repo-tags lists a repository's tags and oci-registry-pull
  copies an image into a storage's templates as an OCI archive (an
  ociregistrypull task), both through skopeo. A container created from
  such an archive takes the image's entrypoint, command and environment.
  fake-pve's registries are emulated: a scenario declares the images they
  hold; a registry nobody declared cannot be reached.

  Background:
    Given I define storage "{storage:scratch}" with:
      | type    | dir                  |
      | path    | /var/tmp/{prefix}    |
      | content | vztmpl,iso           |
    And I define storage "{storage:isos}" with:
      | type    | dir                  |
      | path    | /var/tmp/{prefix}-i  |
      | content | iso                  |

  @fake-only
  Scenario: Pull an image and create a container from it
    Given the registry holds:
      | reference                          | layers | entrypoint           | cmd                             | env                          | volumes            | ostype |
      | registry.example:5000/apps/web:1.0 | ["8K"] | ["/entry.sh"]        | ["nginx", "-g", "daemon off;"]  | ["PORT=80", "MODE=prod"]     | ["/var/cache/web"] | debian |
      | registry.example:5000/apps/web:1.1 |        |                      |                                 |                              |                    |        |
    When I list the tags of OCI repository "registry.example:5000/apps/web"
    Then the tags are "1.0,1.1"
    When I pull OCI image "registry.example:5000/apps/web:1.0" to storage "{storage:scratch}"
    Then the task ID names node "{node}", type "ociregistrypull", ID "web_1.0.tar" and user "{me}"
    And the task ends with "OK"
    When I read the task log
    Then the log contains "Getting image source signatures"
    And the log contains "Writing manifest to image destination"
    When I list the content of storage "{storage:scratch}"
      | content | vztmpl |
    Then the item with "volid" = "{storage:scratch}:vztmpl/web_1.0.tar" has "format" = "tar"
    When I pull OCI image "registry.example:5000/apps/web:1.0" to storage "{storage:scratch}"
    Then PVE answers 500 "refusing to override existing file 'web_1.0.tar'"
    When I create container "{vm1}" from "{storage:scratch}:vztmpl/web_1.0.tar" with:
      | rootfs | {storage}:1                       |
      | net0   | name=eth0,bridge={bridge},ip=dhcp |
    Then the task ends with "OK"
    When I read the task log
    Then the log contains "Detected OCI archive"
    And the log contains "creating base directory for volume at /var/cache/web"
    And the log contains "Auto-Enabling host-managed network for network device net0."
    When I read the config of container "{vm1}"
    Then the answer has "entrypoint" = "/entry.sh nginx -g 'daemon off;'"
    And the answer has "cmode" = "console"
    And the answer has "ostype" = "debian"
    And the answer has "net0" matching "^name=eth0,bridge={bridge},host-managed=1,hwaddr=[0-9A-F:]{17},ip=dhcp,type=veth$"

  @fake-only
  Scenario: A tag the registry lacks fails the pull's task with skopeo's words
    Given the registry holds:
      | reference                          |
      | registry.example:5000/apps/web:1.0 |
    When I pull OCI image "registry.example:5000/apps/web:2.0" to storage "{storage:scratch}"
      | filename | web-two |
    Then the task ID names node "{node}", type "ociregistrypull", ID "web-two.tar" and user "{me}"
    And the task ends with an error matching "command 'skopeo copy docker://registry.example:5000/apps/web:2.0 oci-archive:/var/tmp/.*/template/cache/web-two.tar.tmp.\d+' failed: exit code 1"
    When I read the task log
    Then the log has a line containing "level=fatal msg="
    And the log has a line containing "initializing source docker://registry.example:5000/apps/web:2.0: reading manifest 2.0 in registry.example:5000/apps/web: manifest unknown"

  Scenario: A registry that cannot be reached, and storages that take no templates
    When I list the tags of OCI repository "registry.invalid/none"
    Then PVE answers 500 "command 'skopeo list-tags docker://registry.invalid/none' failed: exit code 1"
    When I pull OCI image "registry.invalid/none:1" to storage "{storage:scratch}"
    Then the task ID names node "{node}", type "ociregistrypull", ID "none_1.tar" and user "{me}"
    And the task ends with an error matching "command 'skopeo copy docker://registry.invalid/none:1 oci-archive:/var/tmp/.*/template/cache/none_1.tar.tmp.\d+' failed: exit code 1"
    When I pull OCI image "registry.invalid/none:1" to storage "{storage:isos}"
    Then PVE answers 500 "storage '{storage:isos}' is not configured for content-type 'vztmpl'"
    When I pull OCI image "registry.invalid/none:1" to storage "{storage}"
    Then PVE answers 500 "can't upload to storage type 'lvmthin', not a file based storage!"
