@storage @import
Feature: Guests to import from an OVA archive
  A file storage with `import` content holds OVA archives. Their OVF
  manifest tells .../storage/{storage}/import-metadata how to create the
  guest: its name, CPUs, memory, OS type and firmware, each disk on the
  bus its controller gives, and its NICs, with PVE's warnings. A disk
  inside the archive is then imported with import-from.

  Background:
    Given I define storage "{storage:scratch}" with:
      | type    | dir               |
      | path    | /var/tmp/{prefix} |
      | content | import,images     |

  Scenario: An uploaded OVA answers the guest its manifest describes
    When I upload an OVA "appliance.ova" to storage "{storage:scratch}" with the manifest:
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1" xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData" xmlns:vmw="http://www.vmware.com/schema/ovf">
        <References><File ovf:href="appliance-disk1.vmdk" ovf:id="file1"/></References>
        <DiskSection><Disk ovf:capacity="1" ovf:capacityAllocationUnits="byte * 2^20" ovf:diskId="vmdisk1" ovf:fileRef="file1"/></DiskSection>
        <VirtualSystem ovf:id="appliance">
          <Name>My Appliance</Name>
          <OperatingSystemSection ovf:id="96"/>
          <VirtualHardwareSection>
            <Item><rasd:InstanceID>1</rasd:InstanceID><rasd:ResourceType>3</rasd:ResourceType><rasd:VirtualQuantity>2</rasd:VirtualQuantity></Item>
            <Item><rasd:InstanceID>2</rasd:InstanceID><rasd:ResourceType>4</rasd:ResourceType><rasd:VirtualQuantity>512</rasd:VirtualQuantity></Item>
            <Item><rasd:InstanceID>3</rasd:InstanceID><rasd:ResourceType>6</rasd:ResourceType></Item>
            <Item><rasd:AddressOnParent>0</rasd:AddressOnParent><rasd:HostResource>ovf:/disk/vmdisk1</rasd:HostResource><rasd:InstanceID>4</rasd:InstanceID><rasd:Parent>3</rasd:Parent><rasd:ResourceType>17</rasd:ResourceType></Item>
            <Item><rasd:InstanceID>5</rasd:InstanceID><rasd:ResourceSubType>E1000e</rasd:ResourceSubType><rasd:ResourceType>10</rasd:ResourceType></Item>
            <vmw:Config vmw:key="firmware" vmw:value="efi"/>
          </VirtualHardwareSection>
        </VirtualSystem>
      </Envelope>
      """
    Then the task ends with "OK"
    When I read the import metadata of "import/appliance.ova" on storage "{storage:scratch}"
    Then the answer has "type" = "vm"
    And the answer has "source" = "import/appliance.ova"
    And the answer has "create-args/name" = "My-Appliance"
    And the answer has "create-args/cores" = "2"
    And the answer has "create-args/memory" = "512"
    And the answer has "create-args/ostype" = "l26"
    And the answer has "create-args/bios" = "ovmf"
    And the answer has "create-args/boot" = "order=scsi0"
    And the answer has "disks/scsi0/volid" = "{storage:scratch}:import/appliance.ova/appliance-disk1.vmdk"
    And the answer has "disks/scsi0/size" = "1048576"
    And the answer has "disks/efidisk0" = "1"
    And the answer has "net/net0/model" = "e1000e"
    And the answer has "warnings/0/type" = "ova-needs-extracting"
    And the answer has "warnings/1/type" = "efi-state-lost"
    And the answer has "warnings/1/key" = "bios"

  Scenario: What has no import metadata is refused as PVE refuses it
    When I read the import metadata of "import/missing.ova" on storage "{storage:scratch}"
    Then PVE answers 500 "command 'tar -xO --wildcards --occurrence=1 -f /var/tmp/{prefix}/import/missing.ova '*.ovf'' failed: exit code 2"
    When I read the import metadata of "import/disk.qcow2" on storage "{storage:scratch}"
    Then PVE answers 500 "invalid format"
    When I read the import metadata of "images/x.iso" on storage "{storage:scratch}"
    Then PVE answers 500 "unable to parse directory volume name 'images/x.iso'"
    When I read the import metadata of "vm-{vm1}-disk-0" on storage "{storage}"
    Then PVE answers 500 "storage does not support the importer API"
