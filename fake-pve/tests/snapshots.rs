//! Snapshots of the answer of every GET endpoint fake-pve has behaviour
//! for, in both releases, so that a change of shape shows in review.
//!
//! The requests go through `api::handle` in-process, without a socket,
//! against one rich world built from a scenario and then through the API
//! itself (VMs made, started, snapshotted and reconfigured; a network
//! change left pending; users and tokens added; tasks finished and one
//! still running). The world is deterministic: the clock is manual, the
//! random draws of each request come from the run's seed stream
//! (`Settings::random_seed`, see `fake_pve::model::Context`), and the
//! tasks last what the latency profile below says.
//!
//! Every answer is also checked against its endpoint's `returns` schema,
//! so that a snapshot never freezes a wrong shape.
//!
//! Update the snapshots with `INSTA_UPDATE=always cargo test -p fake-pve
//! --test snapshots` and review the `.snap` files before committing them.

mod common;

use std::cell::Cell;
use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;

use bytes::Bytes;
use fake_pve::api::{self, Request, Router};
use fake_pve::coverage::{Level, level};
use fake_pve::latency::Latency;
use fake_pve::state::Settings;
use fake_pve::{Clock, PveVersion, Scenario, State};
use http::{HeaderMap, HeaderValue, Method};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use common::{T0, enc};

/// The world: three nodes (one offline), storages of five types, users,
/// a group, a custom role, ACLs, API tokens, a running VM with the guest
/// agent up and a snapshot, a stopped VM on the second node and a
/// template.
const SCENARIO: &str = r#"
cluster: lab
nodes:
  - { name: pve1, cpus: 32, sockets: 2, memory: 256G, disk: 200G, ip: 192.0.2.11, level: c, bridges: [vmbr0, vmbr1] }
  - name: pve2
    cpus: 16
    memory: 128G
    ip: 192.0.2.12
    storages:
      - { id: fast, type: zfspool, pool: rpool, content: [images, rootdir], size: 2T, used: 500G }
    disks:
      - { dev: sdb, size: 2T, type: ssd, wearout: 97, zpool: rpool }
      - { dev: sdc, size: 2T, type: ssd, wearout: 95, zpool: rpool }
      - { dev: sdd, size: 8T, vg: bulk, thinpool: bulk }
      - { dev: nvme0n1, size: 1T }
    updates:
      - { package: pve-manager, version: 9.1.6 }
      - { package: qemu-server, version: 9.1.5 }
    scan:
      nfs: { 198.51.100.5: [{ path: /export/iso, options: 192.0.2.0/24 }, { path: /gluster }] }
      cifs: { 198.51.100.6: { shares: [{ share: media, description: Media }] } }
      iscsi: { 198.51.100.7: [iqn.2003-01.org.linux-iscsi.san:sn.0001] }
      pbs: { backup.example.com: { username: root@pam, password: pbs-secret, datastores: [{ store: main, comment: Main }] } }
  - { name: pve3, status: offline, ip: 192.0.2.13 }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, snippets, import, images], size: 100G }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, content: [images, rootdir], size: 1T, used: 100G }
  - { id: ceph-vm, type: rbd, pool: vm-pool, content: [images, rootdir], size: 20T, used: 3T }
  - { id: nfs-iso, type: nfs, server: 198.51.100.5, export: /export/iso, path: /mnt/pve/nfs-iso, content: [iso, vztmpl], size: 4T, used: 1T }
  - { id: backups, type: pbs, server: backup.example.com, datastore: main, content: [backup], size: 50T, encryption-key: "ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89" }
pbs:
  - name: backup.example.com
    datastores:
      main:
        namespaces: [lab]
        snapshots:
          - backup-type: ct
            backup-id: "200"
            backup-time: 1789988400
            files:
              - { filename: catalog.pcat1.didx, size: 57344, crypt-mode: none }
              - { filename: client.log.blob, size: 2048, crypt-mode: none }
              - { filename: index.json.blob, size: 540, crypt-mode: none }
              - { filename: pct.conf.blob, size: 372, crypt-mode: none }
              - { filename: root.pxar.didx, size: 1073741824, crypt-mode: none }
            notes: "web-ct nightly\nkept for a week"
            protected: true
            verification: { state: ok, upid: "UPID:backup:000002C8:00A3B5C0:000000C8:6A6ED330:verify:main\\x3act-200-6A6ED330:root@pam:" }
            owner: root@pam
            archive:
              guest: lxc
              vmid: 200
              config: { hostname: web-ct, memory: "1024", cores: "2", ostype: debian, arch: amd64, rootfs: "local-lvm:vm-200-disk-0,size=8G", net0: "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:02:00,ip=dhcp,type=veth" }
              disks: [{ key: rootfs, volid: "local-lvm:vm-200-disk-0", size: 8589934592, format: raw }]
          - backup-type: vm
            backup-id: "102"
            backup-time: 1789988400
            files:
              - { filename: client.log.blob, size: 2048, crypt-mode: none }
              - { filename: drive-scsi0.img.fidx, size: 34359738368, crypt-mode: encrypt }
              - { filename: index.json.blob, size: 540, crypt-mode: none }
              - { filename: qemu-server.conf.blob, size: 412, crypt-mode: encrypt }
            fingerprint: "ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89"
            owner: root@pam
            archive:
              guest: qemu
              vmid: 102
              config: { name: web, memory: "2048", scsi0: "local-lvm:vm-102-disk-0,size=32G" }
              disks: [{ key: scsi0, volid: "local-lvm:vm-102-disk-0", size: 34359738368, format: raw }]
downloads:
  - { url: https://example.com/gone.iso, fail: "download failed: command 'wget --progress=dot:giga -O /var/lib/vz/template/iso/gone.iso.tmp_dwnl https://example.com/gone.iso' failed: exit code 8" }
  - url: https://example.com/debian-12.iso
    size: 658505728
    checksum: 4f2a6c4e1b0b2ad3a3bd1d0fa46c1e1b9ad5b57d83c3bd6aa5ae8c0d6e0a3b1f
    checksum-algorithm: sha256
    mimetype: application/x-iso9660-image
  - url: https://example.com/appliance.ova
    size: 1073741824
    # the manifest of the archive (see `World::ova_appliance`)
    ovf: |
      <?xml version="1.0" encoding="UTF-8"?>
      <Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1" xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData" xmlns:vmw="http://www.vmware.com/schema/ovf">
        <References><File ovf:href="appliance-disk1.vmdk" ovf:id="file1" ovf:size="1073000000"/></References>
        <DiskSection><Disk ovf:capacity="20" ovf:capacityAllocationUnits="byte * 2^30" ovf:diskId="vmdisk1" ovf:fileRef="file1"/></DiskSection>
        <VirtualSystem ovf:id="appliance">
          <Name>Appliance 1</Name>
          <OperatingSystemSection ovf:id="101"/>
          <VirtualHardwareSection>
            <Item><rasd:InstanceID>1</rasd:InstanceID><rasd:ResourceType>3</rasd:ResourceType><rasd:VirtualQuantity>4</rasd:VirtualQuantity></Item>
            <Item><rasd:InstanceID>2</rasd:InstanceID><rasd:ResourceType>4</rasd:ResourceType><rasd:VirtualQuantity>4096</rasd:VirtualQuantity></Item>
            <Item><rasd:InstanceID>3</rasd:InstanceID><rasd:ResourceType>6</rasd:ResourceType></Item>
            <Item><rasd:AddressOnParent>0</rasd:AddressOnParent><rasd:HostResource>ovf:/disk/vmdisk1</rasd:HostResource><rasd:InstanceID>4</rasd:InstanceID><rasd:Parent>3</rasd:Parent><rasd:ResourceType>17</rasd:ResourceType></Item>
            <Item><rasd:InstanceID>5</rasd:InstanceID><rasd:ResourceSubType>E1000e</rasd:ResourceSubType><rasd:ResourceType>10</rasd:ResourceType></Item>
            <vmw:Config vmw:key="firmware" vmw:value="efi"/>
          </VirtualHardwareSection>
        </VirtualSystem>
      </Envelope>
oci_images:
  - { reference: "alpine:3.22", cmd: [/bin/sh], ostype: alpine }
  - { reference: "alpine:3.21", ostype: alpine }
users:
  - userid: ci@pve
    password: ci-password
    comment: CI pipelines
    email: ci@example.com
    groups: [ops]
    tokens:
      - { tokenid: runner, secret: 7d1c4a52-0e2b-4b8f-9a61-3f5e8d2c9b10, privsep: true, comment: pipeline runner }
  - { userid: alice@pve, password: alice-password, expire: 1800000000, comment: Alice }
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 2b9e6f31-8c47-4d0a-b5e2-91c3f7a8d604, privsep: false }
groups:
  - { groupid: ops, comment: Operators }
roles:
  - { roleid: Starter, privs: [VM.PowerMgmt, VM.Audit] }
acl:
  - { path: /vms, roles: [Starter], groups: [ops] }
  - { path: /nodes, roles: [PVEAuditor], tokens: ['ci@pve!runner'], propagate: false }
  - { path: /storage/local, roles: [PVEDatastoreUser], users: [alice@pve] }
vms:
  - vmid: 100
    node: pve1
    name: gateway
    status: running
    config:
      agent: 1
      cores: 2
      memory: 2048
      onboot: 1
      ostype: l26
      tags: infra;prod
      net0: 'virtio=BC:24:11:AA:BB:CC,bridge=vmbr0'
      scsi0: 'local-lvm:vm-100-disk-0,size=32G'
  - vmid: 101
    node: pve2
    name: build-agent
    config: { cores: 8, memory: 16384, scsi0: 'fast:vm-101-disk-0,size=64G' }
  - vmid: 9000
    node: pve1
    name: debian-12-template
    # created half an hour before the clock's start: its rrddata has no
    # values for the points before
    config: { cores: 2, memory: 2048, template: 1, scsi0: 'local-lvm:base-9000-disk-0,size=8G', meta: 'creation-qemu=9.2.0,ctime=1789998200' }
ceph:
  release: squid
  nodes: [pve1, pve2]
  network: 192.0.2.0/24
  mons: [pve1, pve2]
  mgrs: [pve1, pve2]
  mdss: [pve1]
  flags: [noout]
  osds:
    - { node: pve1, disk: /dev/sdc }
    - { node: pve2, disk: /dev/nvme0n1, up: false, in: false }
  pools: [vm-pool]
  filesystems: [cephfs]
cpu_models:
  custom-fast: { reported-model: Skylake-Server, flags: +aes;+avx2, hidden: false }
  quiet: { reported-model: EPYC-Genoa, hv-vendor-id: AuthenticAMD, phys-bits: host, level: 30 }
mappings:
  pci:
    gpu:
      description: the T4s
      mdev: true
      map:
        - node=pve1,path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2
        - node=pve2,path=0000:65:00.0,id=10de:1eb9,iommugroup=30,subsystem-id=10de:12a2
  usb:
    stick: { map: ['node=pve1,id=0781:5583,path=2-1'] }
  dir:
    share: { description: ISO share, map: ['node=pve1,path=/srv', 'node=pve2,path=/nowhere'] }
guests:
  100:
    hostname: gateway
    osinfo: { id: debian, name: Debian GNU/Linux, version-id: '12' }
    timezone: { zone: CET, offset: 3600 }
    users: [{ user: alice, login-time: 1790000000.5 }]
    files: { /etc/motd: "hello\n" }
"#;

/// One snapshot: its name, the schema path it covers and the request
/// path (with query). `{create}`, `{failed}`, `{clone}` and `{running}`
/// stand for the UPIDs of a finished task, a failed one and two running
/// ones, `{pid}` for the PID of an agent `exec`: known once the world is
/// built.
struct Case {
    name: &'static str,
    template: &'static str,
    path: &'static str,
    /// The one release the case is for (`None`: each whose schema has
    /// the endpoint).
    only: Option<PveVersion>,
}

const fn case(name: &'static str, template: &'static str, path: &'static str) -> Case {
    Case {
        name,
        template,
        path,
        only: None,
    }
}

/// A case of one release only (an endpoint the other release refuses).
const fn case_of(
    version: PveVersion,
    name: &'static str,
    template: &'static str,
    path: &'static str,
) -> Case {
    Case {
        name,
        template,
        path,
        only: Some(version),
    }
}

const CASES: &[Case] = &[
    case("get_root", "/", "/"),
    case("get_version", "/version", "/version"),
    // cluster: QEMU (9.2)
    case("get_cluster_qemu", "/cluster/qemu", "/cluster/qemu"),
    case(
        "get_cluster_qemu_cpu_flags",
        "/cluster/qemu/cpu-flags",
        "/cluster/qemu/cpu-flags",
    ),
    case(
        "get_cluster_qemu_custom_cpu_models",
        "/cluster/qemu/custom-cpu-models",
        "/cluster/qemu/custom-cpu-models",
    ),
    case(
        "get_cluster_qemu_custom_cpu_models_cputype",
        "/cluster/qemu/custom-cpu-models/{cputype}",
        "/cluster/qemu/custom-cpu-models/custom-quiet",
    ),
    // Ceph
    case(
        "get_cluster_ceph_status",
        "/cluster/ceph/status",
        "/cluster/ceph/status",
    ),
    // Before 9.2 the schema describes this answer wrongly (members
    // named `{id}` and `{node}`; the monitors' `host`, `service` and
    // `direxists` with swapped types): 9.2 corrected it.
    case_of(
        PveVersion::V9_2,
        "get_cluster_ceph_metadata",
        "/cluster/ceph/metadata",
        "/cluster/ceph/metadata",
    ),
    case(
        "get_cluster_ceph_flags",
        "/cluster/ceph/flags",
        "/cluster/ceph/flags",
    ),
    case(
        "get_cluster_ceph_flags_flag",
        "/cluster/ceph/flags/{flag}",
        "/cluster/ceph/flags/noout",
    ),
    case(
        "get_cluster_ceph_health_mute",
        "/cluster/ceph/health-mute",
        "/cluster/ceph/health-mute",
    ),
    case(
        "get_nodes_node_ceph_releases",
        "/nodes/{node}/ceph/releases",
        "/nodes/pve1/ceph/releases",
    ),
    case(
        "get_nodes_node_ceph_status",
        "/nodes/{node}/ceph/status",
        "/nodes/pve1/ceph/status",
    ),
    case(
        "get_nodes_node_ceph_crush",
        "/nodes/{node}/ceph/crush",
        "/nodes/pve1/ceph/crush",
    ),
    case(
        "get_nodes_node_ceph_log",
        "/nodes/{node}/ceph/log",
        "/nodes/pve1/ceph/log",
    ),
    case(
        "get_nodes_node_ceph_rules",
        "/nodes/{node}/ceph/rules",
        "/nodes/pve1/ceph/rules",
    ),
    case(
        "get_nodes_node_ceph_cfg_raw",
        "/nodes/{node}/ceph/cfg/raw",
        "/nodes/pve1/ceph/cfg/raw",
    ),
    case(
        "get_nodes_node_ceph_cfg_db",
        "/nodes/{node}/ceph/cfg/db",
        "/nodes/pve1/ceph/cfg/db",
    ),
    case(
        "get_nodes_node_ceph_cfg_value",
        "/nodes/{node}/ceph/cfg/value",
        "/nodes/pve1/ceph/cfg/value?config-keys=global:public_network;mon:auth_allow_insecure_global_id_reclaim;global:osd-pool-default-size",
    ),
    // Before 9.2 the schema describes this answer wrongly (members
    // named `{id}` and `{node}`; the monitors' `host`, `service` and
    // `direxists` with swapped types): 9.2 corrected it.
    case_of(
        PveVersion::V9_2,
        "get_nodes_node_ceph_mon",
        "/nodes/{node}/ceph/mon",
        "/nodes/pve1/ceph/mon",
    ),
    case(
        "get_nodes_node_ceph_mgr",
        "/nodes/{node}/ceph/mgr",
        "/nodes/pve1/ceph/mgr",
    ),
    case(
        "get_nodes_node_ceph_mds",
        "/nodes/{node}/ceph/mds",
        "/nodes/pve1/ceph/mds",
    ),
    case(
        "get_nodes_node_ceph_pool",
        "/nodes/{node}/ceph/pool",
        "/nodes/pve1/ceph/pool",
    ),
    case(
        "get_nodes_node_ceph_pool_name_status",
        "/nodes/{node}/ceph/pool/{name}/status",
        "/nodes/pve1/ceph/pool/vm-pool/status?verbose=1",
    ),
    case(
        "get_nodes_node_ceph_osd",
        "/nodes/{node}/ceph/osd",
        "/nodes/pve1/ceph/osd",
    ),
    // Before 9.2 the schema names a device's disk `devices`; the code
    // of 8.4 and 9.1 answers `physical_device`, as 9.2's schema says.
    case_of(
        PveVersion::V9_2,
        "get_nodes_node_ceph_osd_osdid_metadata",
        "/nodes/{node}/ceph/osd/{osdid}/metadata",
        "/nodes/pve1/ceph/osd/0/metadata",
    ),
    case(
        "get_nodes_node_ceph_osd_osdid_lv_info",
        "/nodes/{node}/ceph/osd/{osdid}/lv-info",
        "/nodes/pve1/ceph/osd/0/lv-info",
    ),
    case(
        "get_nodes_node_ceph_fs",
        "/nodes/{node}/ceph/fs",
        "/nodes/pve1/ceph/fs",
    ),
    case(
        "get_nodes_node_ceph_cmd_safety",
        "/nodes/{node}/ceph/cmd-safety",
        "/nodes/pve1/ceph/cmd-safety?service=osd&id=0&action=stop",
    ),
    // cluster: notifications
    case(
        "get_cluster_notifications_matcher_fields",
        "/cluster/notifications/matcher-fields",
        "/cluster/notifications/matcher-fields",
    ),
    case(
        "get_cluster_notifications_matcher_field_values",
        "/cluster/notifications/matcher-field-values",
        "/cluster/notifications/matcher-field-values",
    ),
    case(
        "get_cluster_notifications_targets",
        "/cluster/notifications/targets",
        "/cluster/notifications/targets",
    ),
    case(
        "get_cluster_notifications_matchers",
        "/cluster/notifications/matchers",
        "/cluster/notifications/matchers",
    ),
    case(
        "get_cluster_notifications_matchers_name",
        "/cluster/notifications/matchers/{name}",
        "/cluster/notifications/matchers/backup-failures",
    ),
    case(
        "get_cluster_notifications_endpoints_gotify",
        "/cluster/notifications/endpoints/gotify",
        "/cluster/notifications/endpoints/gotify",
    ),
    case(
        "get_cluster_notifications_endpoints_gotify_name",
        "/cluster/notifications/endpoints/gotify/{name}",
        "/cluster/notifications/endpoints/gotify/phone",
    ),
    case(
        "get_cluster_notifications_endpoints_sendmail",
        "/cluster/notifications/endpoints/sendmail",
        "/cluster/notifications/endpoints/sendmail",
    ),
    case(
        "get_cluster_notifications_endpoints_sendmail_name",
        "/cluster/notifications/endpoints/sendmail/{name}",
        "/cluster/notifications/endpoints/sendmail/mail-to-root",
    ),
    case(
        "get_cluster_notifications_endpoints_smtp",
        "/cluster/notifications/endpoints/smtp",
        "/cluster/notifications/endpoints/smtp",
    ),
    case(
        "get_cluster_notifications_endpoints_smtp_name",
        "/cluster/notifications/endpoints/smtp/{name}",
        "/cluster/notifications/endpoints/smtp/relay",
    ),
    case(
        "get_cluster_notifications_endpoints_webhook",
        "/cluster/notifications/endpoints/webhook",
        "/cluster/notifications/endpoints/webhook",
    ),
    case(
        "get_cluster_notifications_endpoints_webhook_name",
        "/cluster/notifications/endpoints/webhook/{name}",
        "/cluster/notifications/endpoints/webhook/chat",
    ),
    // resource mappings
    case(
        "get_cluster_mapping_pci",
        "/cluster/mapping/pci",
        "/cluster/mapping/pci",
    ),
    case(
        "get_cluster_mapping_pci_check_node",
        "/cluster/mapping/pci",
        "/cluster/mapping/pci?check-node=pve2",
    ),
    case(
        "get_cluster_mapping_pci_id",
        "/cluster/mapping/pci/{id}",
        "/cluster/mapping/pci/gpu",
    ),
    case(
        "get_cluster_mapping_usb_check_node",
        "/cluster/mapping/usb",
        "/cluster/mapping/usb?check-node=pve2",
    ),
    case(
        "get_cluster_mapping_usb_id",
        "/cluster/mapping/usb/{id}",
        "/cluster/mapping/usb/stick",
    ),
    case(
        "get_cluster_mapping_dir_check_node",
        "/cluster/mapping/dir",
        "/cluster/mapping/dir?check-node=pve2",
    ),
    case(
        "get_cluster_mapping_dir_id",
        "/cluster/mapping/dir/{id}",
        "/cluster/mapping/dir/share",
    ),
    // access
    case("get_access_domains", "/access/domains", "/access/domains"),
    case("get_access_ticket", "/access/ticket", "/access/ticket"),
    case("get_access_users", "/access/users", "/access/users"),
    case(
        "get_access_users_full",
        "/access/users",
        "/access/users?full=1",
    ),
    case(
        "get_access_users_userid",
        "/access/users/{userid}",
        "/access/users/ci@pve",
    ),
    case("get_access_groups", "/access/groups", "/access/groups"),
    case(
        "get_access_groups_groupid",
        "/access/groups/{groupid}",
        "/access/groups/ops",
    ),
    case("get_access_roles", "/access/roles", "/access/roles"),
    case(
        "get_access_roles_roleid",
        "/access/roles/{roleid}",
        "/access/roles/Starter",
    ),
    case(
        "get_access_roles_roleid_builtin",
        "/access/roles/{roleid}",
        "/access/roles/PVEAuditor",
    ),
    case("get_access_acl", "/access/acl", "/access/acl"),
    case(
        "get_access_permissions",
        "/access/permissions",
        "/access/permissions?userid=ci@pve",
    ),
    case(
        "get_access_permissions_path",
        "/access/permissions",
        "/access/permissions?userid=alice@pve&path=/storage/local",
    ),
    case(
        "get_access_users_userid_token",
        "/access/users/{userid}/token",
        "/access/users/ci@pve/token",
    ),
    case(
        "get_access_users_userid_token_tokenid",
        "/access/users/{userid}/token/{tokenid}",
        "/access/users/ci@pve/token/deploy",
    ),
    // access: realms, realm sync jobs and second factors
    case(
        "get_access_domains_realm_ldap",
        "/access/domains/{realm}",
        "/access/domains/corp",
    ),
    case(
        "get_access_domains_realm_pam",
        "/access/domains/{realm}",
        "/access/domains/pam",
    ),
    case(
        "get_cluster_jobs_realm_sync",
        "/cluster/jobs/realm-sync",
        "/cluster/jobs/realm-sync",
    ),
    case(
        "get_cluster_jobs_realm_sync_id",
        "/cluster/jobs/realm-sync/{id}",
        "/cluster/jobs/realm-sync/corp-nightly",
    ),
    case(
        "get_cluster_jobs_schedule_analyze",
        "/cluster/jobs/schedule-analyze",
        "/cluster/jobs/schedule-analyze?schedule=mon..fri%2021:30&iterations=3",
    ),
    case("get_access_tfa", "/access/tfa", "/access/tfa"),
    case(
        "get_access_tfa_userid",
        "/access/tfa/{userid}",
        "/access/tfa/alice@pve",
    ),
    case(
        "get_access_tfa_userid_id",
        "/access/tfa/{userid}/{id}",
        "/access/tfa/alice@pve/{tfa}",
    ),
    case(
        "get_access_users_userid_tfa",
        "/access/users/{userid}/tfa",
        "/access/users/alice@pve/tfa",
    ),
    // cluster
    case("get_cluster_status", "/cluster/status", "/cluster/status"),
    case(
        "get_cluster_resources",
        "/cluster/resources",
        "/cluster/resources",
    ),
    case(
        "get_cluster_resources_type_vm",
        "/cluster/resources",
        "/cluster/resources?type=vm",
    ),
    case(
        "get_cluster_resources_type_storage",
        "/cluster/resources",
        "/cluster/resources?type=storage",
    ),
    case(
        "get_cluster_resources_type_node",
        "/cluster/resources",
        "/cluster/resources?type=node",
    ),
    case("get_cluster_nextid", "/cluster/nextid", "/cluster/nextid"),
    case(
        "get_cluster_options",
        "/cluster/options",
        "/cluster/options",
    ),
    // nodes
    case("get_nodes", "/nodes", "/nodes"),
    case("get_nodes_node", "/nodes/{node}", "/nodes/pve1"),
    case(
        "get_nodes_node_status",
        "/nodes/{node}/status",
        "/nodes/pve1/status",
    ),
    case(
        "get_nodes_node_status_other_node",
        "/nodes/{node}/status",
        "/nodes/pve2/status",
    ),
    case(
        "get_nodes_node_version",
        "/nodes/{node}/version",
        "/nodes/pve1/version",
    ),
    case(
        "get_nodes_node_network",
        "/nodes/{node}/network",
        "/nodes/pve1/network",
    ),
    case(
        "get_nodes_node_network_type_bridge",
        "/nodes/{node}/network",
        "/nodes/pve1/network?type=bridge",
    ),
    case(
        "get_nodes_node_network_iface",
        "/nodes/{node}/network/{iface}",
        "/nodes/pve1/network/vmbr0",
    ),
    case(
        "get_nodes_node_network_iface_changed",
        "/nodes/{node}/network/{iface}",
        "/nodes/pve1/network/eno2",
    ),
    case(
        "get_nodes_node_network_iface_pending",
        "/nodes/{node}/network/{iface}",
        "/nodes/pve1/network/vmbr5",
    ),
    // tasks
    case(
        "get_nodes_node_tasks",
        "/nodes/{node}/tasks",
        "/nodes/pve1/tasks",
    ),
    case(
        "get_nodes_node_tasks_running",
        "/nodes/{node}/tasks",
        "/nodes/pve2/tasks?source=active",
    ),
    case(
        "get_nodes_node_tasks_upid",
        "/nodes/{node}/tasks/{upid}",
        "/nodes/pve1/tasks/{create}",
    ),
    case(
        "get_nodes_node_tasks_upid_status",
        "/nodes/{node}/tasks/{upid}/status",
        "/nodes/pve1/tasks/{create}/status",
    ),
    case(
        "get_nodes_node_tasks_upid_status_running",
        "/nodes/{node}/tasks/{upid}/status",
        "/nodes/pve2/tasks/{running}/status",
    ),
    case(
        "get_nodes_node_tasks_upid_log",
        "/nodes/{node}/tasks/{upid}/log",
        "/nodes/pve1/tasks/{create}/log",
    ),
    case(
        "get_nodes_node_tasks_upid_status_failed",
        "/nodes/{node}/tasks/{upid}/status",
        "/nodes/pve1/tasks/{failed}/status",
    ),
    case(
        "get_nodes_node_tasks_upid_log_failed",
        "/nodes/{node}/tasks/{upid}/log",
        "/nodes/pve1/tasks/{failed}/log",
    ),
    case(
        "get_nodes_node_tasks_upid_status_by_token",
        "/nodes/{node}/tasks/{upid}/status",
        "/nodes/pve1/tasks/{clone}/status",
    ),
    case(
        "get_nodes_node_tasks_upid_log_running_clone",
        "/nodes/{node}/tasks/{upid}/log",
        "/nodes/pve1/tasks/{clone}/log",
    ),
    case(
        "get_nodes_node_tasks_errors",
        "/nodes/{node}/tasks",
        "/nodes/pve1/tasks?errors=1",
    ),
    case(
        "get_nodes_node_tasks_upid_log_running",
        "/nodes/{node}/tasks/{upid}/log",
        "/nodes/pve2/tasks/{running}/log",
    ),
    // qemu
    case(
        "get_nodes_node_qemu",
        "/nodes/{node}/qemu",
        "/nodes/pve1/qemu",
    ),
    case(
        "get_nodes_node_qemu_full",
        "/nodes/{node}/qemu",
        "/nodes/pve1/qemu?full=1",
    ),
    case(
        "get_nodes_node_qemu_vmid_config",
        "/nodes/{node}/qemu/{vmid}/config",
        "/nodes/pve1/qemu/100/config",
    ),
    case(
        "get_nodes_node_qemu_vmid_config_current",
        "/nodes/{node}/qemu/{vmid}/config",
        "/nodes/pve1/qemu/100/config?current=1",
    ),
    case(
        "get_nodes_node_qemu_vmid_config_cloudinit",
        "/nodes/{node}/qemu/{vmid}/config",
        "/nodes/pve1/qemu/102/config",
    ),
    case(
        "get_nodes_node_qemu_vmid_config_template",
        "/nodes/{node}/qemu/{vmid}/config",
        "/nodes/pve1/qemu/9000/config",
    ),
    case(
        "get_nodes_node_qemu_vmid_pending",
        "/nodes/{node}/qemu/{vmid}/pending",
        "/nodes/pve1/qemu/100/pending",
    ),
    case(
        "get_nodes_node_qemu_vmid_status_current",
        "/nodes/{node}/qemu/{vmid}/status/current",
        "/nodes/pve1/qemu/100/status/current",
    ),
    case(
        "get_nodes_node_qemu_vmid_status_current_stopped",
        "/nodes/{node}/qemu/{vmid}/status/current",
        "/nodes/pve2/qemu/101/status/current",
    ),
    case(
        "get_nodes_node_qemu_vmid_status_current_template",
        "/nodes/{node}/qemu/{vmid}/status/current",
        "/nodes/pve1/qemu/9000/status/current",
    ),
    case(
        "get_nodes_node_qemu_vmid_status_current_cloning",
        "/nodes/{node}/qemu/{vmid}/status/current",
        "/nodes/pve1/qemu/103/status/current",
    ),
    case(
        "get_nodes_node_qemu_vmid_config_other_node",
        "/nodes/{node}/qemu/{vmid}/config",
        "/nodes/pve2/qemu/101/config",
    ),
    case(
        "get_nodes_node_qemu_vmid_migrate",
        "/nodes/{node}/qemu/{vmid}/migrate",
        "/nodes/pve2/qemu/101/migrate?target=pve1",
    ),
    case(
        "get_nodes_node_qemu_vmid_feature",
        "/nodes/{node}/qemu/{vmid}/feature",
        "/nodes/pve1/qemu/100/feature?feature=snapshot",
    ),
    case(
        "get_nodes_node_qemu_vmid_rrddata",
        "/nodes/{node}/qemu/{vmid}/rrddata",
        "/nodes/pve1/qemu/100/rrddata?timeframe=hour",
    ),
    case(
        "get_nodes_node_qemu_vmid_rrddata_stopped",
        "/nodes/{node}/qemu/{vmid}/rrddata",
        "/nodes/pve2/qemu/101/rrddata?timeframe=hour",
    ),
    case(
        "get_nodes_node_qemu_vmid_rrddata_new",
        "/nodes/{node}/qemu/{vmid}/rrddata",
        "/nodes/pve1/qemu/9000/rrddata?timeframe=hour",
    ),
    case(
        "get_nodes_node_qemu_vmid_rrd",
        "/nodes/{node}/qemu/{vmid}/rrd",
        "/nodes/pve1/qemu/100/rrd?timeframe=hour&ds=cpu",
    ),
    case(
        "get_nodes_node_qemu_vmid_cloudinit",
        "/nodes/{node}/qemu/{vmid}/cloudinit",
        "/nodes/pve1/qemu/102/cloudinit",
    ),
    case(
        "get_nodes_node_qemu_vmid_snapshot",
        "/nodes/{node}/qemu/{vmid}/snapshot",
        "/nodes/pve1/qemu/100/snapshot",
    ),
    case(
        "get_nodes_node_qemu_vmid_cloudinit_dump_user",
        "/nodes/{node}/qemu/{vmid}/cloudinit/dump",
        "/nodes/pve1/qemu/102/cloudinit/dump?type=user",
    ),
    case(
        "get_nodes_node_qemu_vmid_cloudinit_dump_network",
        "/nodes/{node}/qemu/{vmid}/cloudinit/dump",
        "/nodes/pve1/qemu/102/cloudinit/dump?type=network",
    ),
    case(
        "get_nodes_node_qemu_vmid_snapshot_snapname_config",
        "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/config",
        "/nodes/pve1/qemu/100/snapshot/before-upgrade/config",
    ),
    // containers
    case("get_nodes_node_lxc", "/nodes/{node}/lxc", "/nodes/pve1/lxc"),
    case(
        "get_nodes_node_lxc_vmid",
        "/nodes/{node}/lxc/{vmid}",
        "/nodes/pve1/lxc/200",
    ),
    case(
        "get_nodes_node_lxc_vmid_config",
        "/nodes/{node}/lxc/{vmid}/config",
        "/nodes/pve1/lxc/200/config",
    ),
    case(
        "get_nodes_node_lxc_vmid_pending",
        "/nodes/{node}/lxc/{vmid}/pending",
        "/nodes/pve1/lxc/200/pending",
    ),
    case(
        "get_nodes_node_lxc_vmid_status_current",
        "/nodes/{node}/lxc/{vmid}/status/current",
        "/nodes/pve1/lxc/200/status/current",
    ),
    case(
        "get_nodes_node_lxc_vmid_snapshot",
        "/nodes/{node}/lxc/{vmid}/snapshot",
        "/nodes/pve1/lxc/200/snapshot",
    ),
    case(
        "get_nodes_node_lxc_vmid_snapshot_snapname_config",
        "/nodes/{node}/lxc/{vmid}/snapshot/{snapname}/config",
        "/nodes/pve1/lxc/200/snapshot/first/config",
    ),
    case(
        "get_nodes_node_lxc_vmid_interfaces",
        "/nodes/{node}/lxc/{vmid}/interfaces",
        "/nodes/pve1/lxc/200/interfaces",
    ),
    case(
        "get_nodes_node_lxc_vmid_feature",
        "/nodes/{node}/lxc/{vmid}/feature",
        "/nodes/pve1/lxc/200/feature?feature=snapshot",
    ),
    case(
        "get_nodes_node_lxc_vmid_migrate",
        "/nodes/{node}/lxc/{vmid}/migrate",
        "/nodes/pve1/lxc/200/migrate",
    ),
    case(
        "get_nodes_node_lxc_vmid_rrddata",
        "/nodes/{node}/lxc/{vmid}/rrddata",
        "/nodes/pve1/lxc/200/rrddata?timeframe=hour",
    ),
    case(
        "get_nodes_node_lxc_vmid_rrd",
        "/nodes/{node}/lxc/{vmid}/rrd",
        "/nodes/pve1/lxc/200/rrd?timeframe=hour&ds=cpu",
    ),
    case(
        "get_nodes_node_aplinfo",
        "/nodes/{node}/aplinfo",
        "/nodes/pve1/aplinfo",
    ),
    // the guest agent
    case(
        "get_nodes_node_qemu_vmid_agent_info",
        "/nodes/{node}/qemu/{vmid}/agent/info",
        "/nodes/pve1/qemu/100/agent/info",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_time",
        "/nodes/{node}/qemu/{vmid}/agent/get-time",
        "/nodes/pve1/qemu/100/agent/get-time",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_vcpus",
        "/nodes/{node}/qemu/{vmid}/agent/get-vcpus",
        "/nodes/pve1/qemu/100/agent/get-vcpus",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_fsinfo",
        "/nodes/{node}/qemu/{vmid}/agent/get-fsinfo",
        "/nodes/pve1/qemu/100/agent/get-fsinfo",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_osinfo",
        "/nodes/{node}/qemu/{vmid}/agent/get-osinfo",
        "/nodes/pve1/qemu/100/agent/get-osinfo",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_users",
        "/nodes/{node}/qemu/{vmid}/agent/get-users",
        "/nodes/pve1/qemu/100/agent/get-users",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_timezone",
        "/nodes/{node}/qemu/{vmid}/agent/get-timezone",
        "/nodes/pve1/qemu/100/agent/get-timezone",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_host_name",
        "/nodes/{node}/qemu/{vmid}/agent/get-host-name",
        "/nodes/pve1/qemu/100/agent/get-host-name",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_memory_block_info",
        "/nodes/{node}/qemu/{vmid}/agent/get-memory-block-info",
        "/nodes/pve1/qemu/100/agent/get-memory-block-info",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_get_memory_blocks",
        "/nodes/{node}/qemu/{vmid}/agent/get-memory-blocks",
        "/nodes/pve1/qemu/100/agent/get-memory-blocks",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_network_get_interfaces",
        "/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces",
        "/nodes/pve1/qemu/100/agent/network-get-interfaces",
    ),
    case(
        "get_nodes_node_qemu_vmid_vncwebsocket",
        "/nodes/{node}/qemu/{vmid}/vncwebsocket",
        "/nodes/pve1/qemu/100/vncwebsocket?port=5901&vncticket={vnc_vm}",
    ),
    case(
        "get_nodes_node_lxc_vmid_vncwebsocket",
        "/nodes/{node}/lxc/{vmid}/vncwebsocket",
        "/nodes/pve1/lxc/200/vncwebsocket?port=5902&vncticket={vnc_ct}",
    ),
    case(
        "get_nodes_node_vncwebsocket",
        "/nodes/{node}/vncwebsocket",
        "/nodes/pve2/vncwebsocket?port=5900&vncticket={vnc_node}",
    ),
    case(
        "get_nodes_node_qemu_vmid_mtunnelwebsocket",
        "/nodes/{node}/qemu/{vmid}/mtunnelwebsocket",
        "/nodes/localhost/qemu/100/mtunnelwebsocket?socket=%2Frun%2Fqemu-server%2F100.mtunnel&ticket={tunnel_vm}",
    ),
    case(
        "get_nodes_node_lxc_vmid_mtunnelwebsocket",
        "/nodes/{node}/lxc/{vmid}/mtunnelwebsocket",
        "/nodes/localhost/lxc/200/mtunnelwebsocket?socket=%2Frun%2Fpve%2Fct-200.mtunnel&ticket={tunnel_ct}",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_exec_status",
        "/nodes/{node}/qemu/{vmid}/agent/exec-status",
        "/nodes/pve1/qemu/100/agent/exec-status?pid={pid}",
    ),
    case(
        "get_nodes_node_qemu_vmid_agent_file_read",
        "/nodes/{node}/qemu/{vmid}/agent/file-read",
        "/nodes/pve1/qemu/100/agent/file-read?file=/etc/motd",
    ),
    // backups
    case(
        "get_nodes_node_vzdump_defaults",
        "/nodes/{node}/vzdump/defaults",
        "/nodes/pve1/vzdump/defaults",
    ),
    case(
        "get_nodes_node_vzdump_extractconfig",
        "/nodes/{node}/vzdump/extractconfig",
        "/nodes/pve1/vzdump/extractconfig?volume={backup}",
    ),
    case(
        "get_nodes_node_vzdump_extractconfig_lxc",
        "/nodes/{node}/vzdump/extractconfig",
        "/nodes/pve1/vzdump/extractconfig?volume={ctbackup}",
    ),
    case(
        "get_nodes_node_storage_storage_content_backup_lxc",
        "/nodes/{node}/storage/{storage}/content",
        "/nodes/pve1/storage/local/content?content=backup&vmid=200",
    ),
    case(
        "get_nodes_node_storage_storage_content_volume_backup_lxc",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "/nodes/pve1/storage/local/content/{ctbackup}",
    ),
    case(
        "get_nodes_node_storage_storage_content_pbs",
        "/nodes/{node}/storage/{storage}/content",
        "/nodes/pve1/storage/backups/content",
    ),
    case(
        "get_nodes_node_storage_storage_content_volume_pbs",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "/nodes/pve1/storage/backups/content/backups:backup/ct/200/2026-09-21T11:00:00Z",
    ),
    case(
        "get_nodes_node_storage_storage_file_restore_list",
        "/nodes/{node}/storage/{storage}/file-restore/list",
        "/nodes/pve1/storage/backups/file-restore/list?volume=backups:backup/ct/200/2026-09-21T11:00:00Z&filepath=/",
    ),
    case(
        "get_nodes_node_storage_storage_file_restore_list_dir",
        "/nodes/{node}/storage/{storage}/file-restore/list",
        "/nodes/pve1/storage/backups/file-restore/list?volume=backups:backup/ct/200/2026-09-21T11:00:00Z&filepath=cm9vdC5weGFyLmRpZHgvZXRj",
    ),
    case(
        "get_nodes_node_storage_storage_file_restore_list_vm",
        "/nodes/{node}/storage/{storage}/file-restore/list",
        "/nodes/pve1/storage/backups/file-restore/list?volume=vm/102/2026-09-21T11:00:00Z&filepath=ZHJpdmUtc2NzaTAuaW1nLmZpZHgvcGFydA%3D%3D",
    ),
    case(
        "get_nodes_node_storage_storage_import_metadata",
        "/nodes/{node}/storage/{storage}/import-metadata",
        "/nodes/pve2/storage/local/import-metadata?volume=import/appliance.ova",
    ),
    case(
        "get_nodes_node_storage_storage_prunebackups",
        "/nodes/{node}/storage/{storage}/prunebackups",
        "/nodes/pve1/storage/local/prunebackups?prune-backups=keep-last%3D1",
    ),
    case(
        "get_nodes_node_storage_storage_content_backup",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "/nodes/pve1/storage/local/content/{backup}",
    ),
    case("get_cluster_backup", "/cluster/backup", "/cluster/backup"),
    case(
        "get_cluster_backup_id",
        "/cluster/backup/{id}",
        "/cluster/backup/{job}",
    ),
    case(
        "get_cluster_backup_id_included_volumes",
        "/cluster/backup/{id}/included_volumes",
        "/cluster/backup/{job}/included_volumes",
    ),
    case(
        "get_cluster_backup_info",
        "/cluster/backup-info",
        "/cluster/backup-info",
    ),
    case(
        "get_cluster_backup_info_not_backed_up",
        "/cluster/backup-info/not-backed-up",
        "/cluster/backup-info/not-backed-up",
    ),
    // firewall
    case(
        "get_cluster_firewall",
        "/cluster/firewall",
        "/cluster/firewall",
    ),
    case(
        "get_cluster_firewall_options",
        "/cluster/firewall/options",
        "/cluster/firewall/options",
    ),
    case(
        "get_cluster_firewall_rules",
        "/cluster/firewall/rules",
        "/cluster/firewall/rules",
    ),
    case(
        "get_cluster_firewall_rules_pos",
        "/cluster/firewall/rules/{pos}",
        "/cluster/firewall/rules/0",
    ),
    case(
        "get_cluster_firewall_groups",
        "/cluster/firewall/groups",
        "/cluster/firewall/groups",
    ),
    case(
        "get_cluster_firewall_groups_group",
        "/cluster/firewall/groups/{group}",
        "/cluster/firewall/groups/web",
    ),
    case(
        "get_cluster_firewall_groups_group_pos",
        "/cluster/firewall/groups/{group}/{pos}",
        "/cluster/firewall/groups/web/0",
    ),
    case(
        "get_cluster_firewall_aliases",
        "/cluster/firewall/aliases",
        "/cluster/firewall/aliases",
    ),
    case(
        "get_cluster_firewall_aliases_name",
        "/cluster/firewall/aliases/{name}",
        "/cluster/firewall/aliases/lan",
    ),
    case(
        "get_cluster_firewall_ipset",
        "/cluster/firewall/ipset",
        "/cluster/firewall/ipset",
    ),
    case(
        "get_cluster_firewall_ipset_name",
        "/cluster/firewall/ipset/{name}",
        "/cluster/firewall/ipset/mgmt",
    ),
    case(
        "get_cluster_firewall_ipset_name_cidr",
        "/cluster/firewall/ipset/{name}/{cidr}",
        "/cluster/firewall/ipset/mgmt/10.0.0.0/24",
    ),
    case(
        "get_cluster_firewall_macros",
        "/cluster/firewall/macros",
        "/cluster/firewall/macros",
    ),
    case(
        "get_cluster_firewall_refs",
        "/cluster/firewall/refs",
        "/cluster/firewall/refs",
    ),
    case(
        "get_cluster_firewall_refs_alias",
        "/cluster/firewall/refs",
        "/cluster/firewall/refs?type=alias",
    ),
    case(
        "get_nodes_node_firewall",
        "/nodes/{node}/firewall",
        "/nodes/pve1/firewall",
    ),
    case(
        "get_nodes_node_firewall_options",
        "/nodes/{node}/firewall/options",
        "/nodes/pve1/firewall/options",
    ),
    case(
        "get_nodes_node_firewall_rules",
        "/nodes/{node}/firewall/rules",
        "/nodes/pve1/firewall/rules",
    ),
    case(
        "get_nodes_node_firewall_rules_pos",
        "/nodes/{node}/firewall/rules/{pos}",
        "/nodes/pve1/firewall/rules/0",
    ),
    case(
        "get_nodes_node_firewall_log",
        "/nodes/{node}/firewall/log",
        "/nodes/pve1/firewall/log?limit=10",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall",
        "/nodes/{node}/qemu/{vmid}/firewall",
        "/nodes/pve1/qemu/100/firewall",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_options",
        "/nodes/{node}/qemu/{vmid}/firewall/options",
        "/nodes/pve1/qemu/100/firewall/options",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_rules",
        "/nodes/{node}/qemu/{vmid}/firewall/rules",
        "/nodes/pve1/qemu/100/firewall/rules",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_rules_pos",
        "/nodes/{node}/qemu/{vmid}/firewall/rules/{pos}",
        "/nodes/pve1/qemu/100/firewall/rules/0",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_aliases",
        "/nodes/{node}/qemu/{vmid}/firewall/aliases",
        "/nodes/pve1/qemu/100/firewall/aliases",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_aliases_name",
        "/nodes/{node}/qemu/{vmid}/firewall/aliases/{name}",
        "/nodes/pve1/qemu/100/firewall/aliases/db",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_ipset",
        "/nodes/{node}/qemu/{vmid}/firewall/ipset",
        "/nodes/pve1/qemu/100/firewall/ipset",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_ipset_name",
        "/nodes/{node}/qemu/{vmid}/firewall/ipset/{name}",
        "/nodes/pve1/qemu/100/firewall/ipset/allowed",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_ipset_name_cidr",
        "/nodes/{node}/qemu/{vmid}/firewall/ipset/{name}/{cidr}",
        "/nodes/pve1/qemu/100/firewall/ipset/allowed/192.168.1.0/24",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_refs",
        "/nodes/{node}/qemu/{vmid}/firewall/refs",
        "/nodes/pve1/qemu/100/firewall/refs",
    ),
    case(
        "get_nodes_node_qemu_vmid_firewall_log",
        "/nodes/{node}/qemu/{vmid}/firewall/log",
        "/nodes/pve1/qemu/100/firewall/log?start=5&since=1790000000",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall",
        "/nodes/{node}/lxc/{vmid}/firewall",
        "/nodes/pve1/lxc/200/firewall",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_options",
        "/nodes/{node}/lxc/{vmid}/firewall/options",
        "/nodes/pve1/lxc/200/firewall/options",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_rules",
        "/nodes/{node}/lxc/{vmid}/firewall/rules",
        "/nodes/pve1/lxc/200/firewall/rules",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_rules_pos",
        "/nodes/{node}/lxc/{vmid}/firewall/rules/{pos}",
        "/nodes/pve1/lxc/200/firewall/rules/0",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_aliases",
        "/nodes/{node}/lxc/{vmid}/firewall/aliases",
        "/nodes/pve1/lxc/200/firewall/aliases",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_aliases_name",
        "/nodes/{node}/lxc/{vmid}/firewall/aliases/{name}",
        "/nodes/pve1/lxc/200/firewall/aliases/dns",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_ipset",
        "/nodes/{node}/lxc/{vmid}/firewall/ipset",
        "/nodes/pve1/lxc/200/firewall/ipset",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_ipset_name",
        "/nodes/{node}/lxc/{vmid}/firewall/ipset/{name}",
        "/nodes/pve1/lxc/200/firewall/ipset/allowed",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_ipset_name_cidr",
        "/nodes/{node}/lxc/{vmid}/firewall/ipset/{name}/{cidr}",
        "/nodes/pve1/lxc/200/firewall/ipset/allowed/192.168.1.0/24",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_refs",
        "/nodes/{node}/lxc/{vmid}/firewall/refs",
        "/nodes/pve1/lxc/200/firewall/refs",
    ),
    case(
        "get_nodes_node_lxc_vmid_firewall_log",
        "/nodes/{node}/lxc/{vmid}/firewall/log",
        "/nodes/pve1/lxc/200/firewall/log?start=5&since=1790000000",
    ),
    // pools
    case("get_pools", "/pools", "/pools"),
    case("get_pools_poolid_param", "/pools", "/pools?poolid=prod"),
    case("get_pools_poolid", "/pools/{poolid}", "/pools/prod"),
    case(
        "get_pools_poolid_type_storage",
        "/pools/{poolid}",
        "/pools/prod?type=storage",
    ),
    // sdn
    case("get_cluster_sdn", "/cluster/sdn", "/cluster/sdn"),
    case(
        "get_cluster_sdn_zones",
        "/cluster/sdn/zones",
        "/cluster/sdn/zones",
    ),
    case(
        "get_cluster_sdn_zones_pending",
        "/cluster/sdn/zones",
        "/cluster/sdn/zones?pending=1",
    ),
    case(
        "get_cluster_sdn_zones_running",
        "/cluster/sdn/zones",
        "/cluster/sdn/zones?running=1",
    ),
    case(
        "get_cluster_sdn_zones_zone",
        "/cluster/sdn/zones/{zone}",
        "/cluster/sdn/zones/lab",
    ),
    case(
        "get_cluster_sdn_zones_zone_pending",
        "/cluster/sdn/zones/{zone}",
        "/cluster/sdn/zones/lab?pending=1",
    ),
    case(
        "get_cluster_sdn_vnets",
        "/cluster/sdn/vnets",
        "/cluster/sdn/vnets",
    ),
    case(
        "get_cluster_sdn_vnets_pending",
        "/cluster/sdn/vnets",
        "/cluster/sdn/vnets?pending=1",
    ),
    case(
        "get_cluster_sdn_vnets_vnet",
        "/cluster/sdn/vnets/{vnet}",
        "/cluster/sdn/vnets/labnet",
    ),
    case(
        "get_cluster_sdn_vnets_vnet_subnets",
        "/cluster/sdn/vnets/{vnet}/subnets",
        "/cluster/sdn/vnets/labnet/subnets",
    ),
    case(
        "get_cluster_sdn_vnets_vnet_subnets_subnet",
        "/cluster/sdn/vnets/{vnet}/subnets/{subnet}",
        "/cluster/sdn/vnets/labnet/subnets/lab-10.10.0.0-24",
    ),
    case(
        "get_cluster_sdn_controllers",
        "/cluster/sdn/controllers",
        "/cluster/sdn/controllers",
    ),
    case(
        "get_cluster_sdn_controllers_controller",
        "/cluster/sdn/controllers/{controller}",
        "/cluster/sdn/controllers/evpnctl",
    ),
    case_of(
        PveVersion::V9_2,
        "get_cluster_sdn_controllers_pending",
        "/cluster/sdn/controllers",
        "/cluster/sdn/controllers?pending=1",
    ),
    case_of(
        PveVersion::V9_2,
        "get_cluster_sdn_controllers_controller_bgp_mode",
        "/cluster/sdn/controllers/{controller}",
        "/cluster/sdn/controllers/evpnsec",
    ),
    case(
        "get_cluster_sdn_ipams",
        "/cluster/sdn/ipams",
        "/cluster/sdn/ipams",
    ),
    case(
        "get_cluster_sdn_ipams_ipam",
        "/cluster/sdn/ipams/{ipam}",
        "/cluster/sdn/ipams/netbox",
    ),
    case(
        "get_cluster_sdn_ipams_ipam_status",
        "/cluster/sdn/ipams/{ipam}/status",
        "/cluster/sdn/ipams/pve/status",
    ),
    case(
        "get_cluster_sdn_dns",
        "/cluster/sdn/dns",
        "/cluster/sdn/dns",
    ),
    case(
        "get_cluster_sdn_dns_dns",
        "/cluster/sdn/dns/{dns}",
        "/cluster/sdn/dns/pdns",
    ),
    // sdn fabrics (9.x)
    case(
        "get_cluster_sdn_fabrics",
        "/cluster/sdn/fabrics",
        "/cluster/sdn/fabrics",
    ),
    case(
        "get_cluster_sdn_fabrics_all",
        "/cluster/sdn/fabrics/all",
        "/cluster/sdn/fabrics/all",
    ),
    case(
        "get_cluster_sdn_fabrics_all_pending",
        "/cluster/sdn/fabrics/all",
        "/cluster/sdn/fabrics/all?pending=1",
    ),
    case(
        "get_cluster_sdn_fabrics_fabric",
        "/cluster/sdn/fabrics/fabric",
        "/cluster/sdn/fabrics/fabric",
    ),
    case(
        "get_cluster_sdn_fabrics_fabric_running",
        "/cluster/sdn/fabrics/fabric",
        "/cluster/sdn/fabrics/fabric?running=1",
    ),
    case(
        "get_cluster_sdn_fabrics_fabric_id",
        "/cluster/sdn/fabrics/fabric/{id}",
        "/cluster/sdn/fabrics/fabric/os1",
    ),
    case(
        "get_cluster_sdn_fabrics_node",
        "/cluster/sdn/fabrics/node",
        "/cluster/sdn/fabrics/node",
    ),
    case(
        "get_cluster_sdn_fabrics_node_fabric_id",
        "/cluster/sdn/fabrics/node/{fabric_id}",
        "/cluster/sdn/fabrics/node/of1",
    ),
    case(
        "get_cluster_sdn_fabrics_node_fabric_id_pending",
        "/cluster/sdn/fabrics/node/{fabric_id}",
        "/cluster/sdn/fabrics/node/of1?pending=1",
    ),
    case(
        "get_cluster_sdn_fabrics_node_fabric_id_node_id",
        "/cluster/sdn/fabrics/node/{fabric_id}/{node_id}",
        "/cluster/sdn/fabrics/node/of1/pve1",
    ),
    case_of(
        PveVersion::V9_2,
        "get_cluster_sdn_fabrics_fabric_id_wireguard",
        "/cluster/sdn/fabrics/fabric/{id}",
        "/cluster/sdn/fabrics/fabric/wg1",
    ),
    case_of(
        PveVersion::V9_2,
        "get_cluster_sdn_fabrics_node_fabric_id_wireguard",
        "/cluster/sdn/fabrics/node/{fabric_id}",
        "/cluster/sdn/fabrics/node/wg1",
    ),
    // sdn prefix lists and route maps (9.2)
    case(
        "get_cluster_sdn_prefix_lists",
        "/cluster/sdn/prefix-lists",
        "/cluster/sdn/prefix-lists",
    ),
    case(
        "get_cluster_sdn_prefix_lists_verbose",
        "/cluster/sdn/prefix-lists",
        "/cluster/sdn/prefix-lists?verbose=1",
    ),
    case(
        "get_cluster_sdn_prefix_lists_pending",
        "/cluster/sdn/prefix-lists",
        "/cluster/sdn/prefix-lists?pending=1&verbose=1",
    ),
    case(
        "get_cluster_sdn_prefix_lists_pending_ids",
        "/cluster/sdn/prefix-lists",
        "/cluster/sdn/prefix-lists?pending=1",
    ),
    case(
        "get_cluster_sdn_prefix_lists_running",
        "/cluster/sdn/prefix-lists",
        "/cluster/sdn/prefix-lists?running=1&verbose=1",
    ),
    case(
        "get_cluster_sdn_prefix_lists_id",
        "/cluster/sdn/prefix-lists/{id}",
        "/cluster/sdn/prefix-lists/plin",
    ),
    case(
        "get_cluster_sdn_prefix_lists_id_entries",
        "/cluster/sdn/prefix-lists/{id}/entries",
        "/cluster/sdn/prefix-lists/plin/entries",
    ),
    case(
        "get_cluster_sdn_prefix_lists_id_entries_url_seq",
        "/cluster/sdn/prefix-lists/{id}/entries/{url_seq}",
        "/cluster/sdn/prefix-lists/plin/entries/10",
    ),
    case(
        "get_cluster_sdn_route_maps",
        "/cluster/sdn/route-maps",
        "/cluster/sdn/route-maps",
    ),
    case(
        "get_cluster_sdn_route_maps_running",
        "/cluster/sdn/route-maps",
        "/cluster/sdn/route-maps?running=1",
    ),
    case(
        "get_cluster_sdn_route_maps_entries",
        "/cluster/sdn/route-maps/entries",
        "/cluster/sdn/route-maps/entries",
    ),
    case(
        "get_cluster_sdn_route_maps_entries_pending",
        "/cluster/sdn/route-maps/entries",
        "/cluster/sdn/route-maps/entries?pending=1",
    ),
    case(
        "get_cluster_sdn_route_maps_entries_route_map_id",
        "/cluster/sdn/route-maps/entries/{route-map-id}",
        "/cluster/sdn/route-maps/entries/rmout",
    ),
    case(
        "get_cluster_sdn_route_maps_entries_route_map_id_running",
        "/cluster/sdn/route-maps/entries/{route-map-id}",
        "/cluster/sdn/route-maps/entries/rmout?running=1",
    ),
    case(
        "get_cluster_sdn_route_maps_entries_route_map_id_entry_order",
        "/cluster/sdn/route-maps/entries/{route-map-id}/entry/{order}",
        "/cluster/sdn/route-maps/entries/rmout/entry/10",
    ),
    case(
        "get_nodes_node_network_any_bridge",
        "/nodes/{node}/network",
        "/nodes/pve1/network?type=any_bridge",
    ),
    // high availability
    case(
        "get_cluster_ha_resources",
        "/cluster/ha/resources",
        "/cluster/ha/resources",
    ),
    case(
        "get_cluster_ha_resources_type_ct",
        "/cluster/ha/resources",
        "/cluster/ha/resources?type=ct",
    ),
    case(
        "get_cluster_ha_resources_sid",
        "/cluster/ha/resources/{sid}",
        "/cluster/ha/resources/vm:100",
    ),
    case_of(
        PveVersion::V8_4,
        "get_cluster_ha_groups",
        "/cluster/ha/groups",
        "/cluster/ha/groups",
    ),
    case_of(
        PveVersion::V8_4,
        "get_cluster_ha_groups_group",
        "/cluster/ha/groups/{group}",
        "/cluster/ha/groups/prefer",
    ),
    case(
        "get_cluster_ha_rules",
        "/cluster/ha/rules",
        "/cluster/ha/rules",
    ),
    case(
        "get_cluster_ha_rules_rule",
        "/cluster/ha/rules/{rule}",
        "/cluster/ha/rules/prefer-pve1",
    ),
    case(
        "get_cluster_ha_status_current",
        "/cluster/ha/status/current",
        "/cluster/ha/status/current",
    ),
    case(
        "get_cluster_ha_status_manager_status",
        "/cluster/ha/status/manager_status",
        "/cluster/ha/status/manager_status",
    ),
    // storage
    case("get_storage", "/storage", "/storage"),
    case(
        "get_storage_storage",
        "/storage/{storage}",
        "/storage/local-lvm",
    ),
    case(
        "get_storage_storage_pbs",
        "/storage/{storage}",
        "/storage/backups",
    ),
    case(
        "get_nodes_node_storage",
        "/nodes/{node}/storage",
        "/nodes/pve1/storage",
    ),
    case(
        "get_nodes_node_storage_content_iso",
        "/nodes/{node}/storage",
        "/nodes/pve1/storage?content=iso",
    ),
    case(
        "get_nodes_node_storage_storage_identity",
        "/nodes/{node}/storage/{storage}/identity",
        "/nodes/pve1/storage/backups/identity",
    ),
    case(
        "get_nodes_node_storage_storage_status",
        "/nodes/{node}/storage/{storage}/status",
        "/nodes/pve1/storage/local-lvm/status",
    ),
    case(
        "get_nodes_node_storage_storage_rrddata",
        "/nodes/{node}/storage/{storage}/rrddata",
        "/nodes/pve1/storage/local-lvm/rrddata?timeframe=hour",
    ),
    case(
        "get_nodes_node_storage_storage_rrd",
        "/nodes/{node}/storage/{storage}/rrd",
        "/nodes/pve1/storage/local-lvm/rrd?timeframe=hour&ds=used",
    ),
    case(
        "get_nodes_node_storage_storage_content",
        "/nodes/{node}/storage/{storage}/content",
        "/nodes/pve1/storage/local/content",
    ),
    case(
        "get_nodes_node_storage_storage_content_images",
        "/nodes/{node}/storage/{storage}/content",
        "/nodes/pve1/storage/local-lvm/content",
    ),
    case(
        "get_nodes_node_storage_storage_content_volume",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "/nodes/pve1/storage/local/content/local:iso/debian-12.iso",
    ),
    case(
        "get_nodes_node_storage_storage_content_volume_image",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "/nodes/pve1/storage/local-lvm/content/local-lvm:vm-102-disk-0",
    ),
    case(
        "get_nodes_node_query_url_metadata",
        "/nodes/{node}/query-url-metadata",
        "/nodes/pve1/query-url-metadata?url=https://example.com/debian-12.iso",
    ),
    case(
        "get_nodes_node_query_oci_repo_tags",
        "/nodes/{node}/query-oci-repo-tags",
        "/nodes/pve1/query-oci-repo-tags?reference=docker.io/library/alpine",
    ), // SDN: a VNet's firewall, a node's view of the applied zones and VNets
    case(
        "get_cluster_sdn_vnets_vnet_firewall_options",
        "/cluster/sdn/vnets/{vnet}/firewall/options",
        "/cluster/sdn/vnets/labnet/firewall/options",
    ),
    case(
        "get_cluster_sdn_vnets_vnet_firewall_rules",
        "/cluster/sdn/vnets/{vnet}/firewall/rules",
        "/cluster/sdn/vnets/labnet/firewall/rules",
    ),
    case(
        "get_cluster_sdn_vnets_vnet_firewall_rules_pos",
        "/cluster/sdn/vnets/{vnet}/firewall/rules/{pos}",
        "/cluster/sdn/vnets/labnet/firewall/rules/1",
    ),
    case(
        "get_nodes_node_sdn_zones",
        "/nodes/{node}/sdn/zones",
        "/nodes/pve1/sdn/zones",
    ),
    case(
        "get_nodes_node_sdn_zones_zone_content",
        "/nodes/{node}/sdn/zones/{zone}/content",
        "/nodes/pve1/sdn/zones/lab/content",
    ),
    case(
        "get_nodes_node_sdn_vnets_vnet",
        "/nodes/{node}/sdn/vnets/{vnet}",
        "/nodes/pve1/sdn/vnets/labnet",
    ),
    case(
        "get_nodes_node_sdn_zones_zone_bridges",
        "/nodes/{node}/sdn/zones/{zone}/bridges",
        "/nodes/pve1/sdn/zones/lab/bridges",
    ),
    case(
        "get_nodes_node_sdn_zones_zone_bridges_localnetwork",
        "/nodes/{node}/sdn/zones/{zone}/bridges",
        "/nodes/pve1/sdn/zones/localnetwork/bridges",
    ),
    // a node's views of an applied fabric (9.x), as FRR reports them
    case(
        "get_nodes_node_sdn_fabrics_fabric",
        "/nodes/{node}/sdn/fabrics/{fabric}",
        "/nodes/pve1/sdn/fabrics/of1",
    ),
    case(
        "get_nodes_node_sdn_fabrics_fabric_interfaces",
        "/nodes/{node}/sdn/fabrics/{fabric}/interfaces",
        "/nodes/pve1/sdn/fabrics/of1/interfaces",
    ),
    case(
        "get_nodes_node_sdn_fabrics_fabric_interfaces_ospf",
        "/nodes/{node}/sdn/fabrics/{fabric}/interfaces",
        "/nodes/pve1/sdn/fabrics/os1/interfaces",
    ),
    case(
        "get_nodes_node_sdn_fabrics_fabric_neighbors",
        "/nodes/{node}/sdn/fabrics/{fabric}/neighbors",
        "/nodes/pve1/sdn/fabrics/of1/neighbors",
    ),
    case(
        "get_nodes_node_sdn_fabrics_fabric_routes",
        "/nodes/{node}/sdn/fabrics/{fabric}/routes",
        "/nodes/pve1/sdn/fabrics/of1/routes",
    ),
    case(
        "get_cluster_sdn_dry_run",
        "/cluster/sdn/dry-run",
        "/cluster/sdn/dry-run?node=pve1",
    ),
    case(
        "get_nodes_node_sdn_zones_zone_ip_vrf",
        "/nodes/{node}/sdn/zones/{zone}/ip-vrf",
        "/nodes/pve2/sdn/zones/evpn1/ip-vrf",
    ),
    case(
        "get_nodes_node_sdn_vnets_vnet_mac_vrf",
        "/nodes/{node}/sdn/vnets/{vnet}/mac-vrf",
        "/nodes/pve1/sdn/vnets/evnet/mac-vrf",
    ),
    // a node's disks, hardware, capabilities, packages and scans
    case(
        "get_nodes_node_disks_list",
        "/nodes/{node}/disks/list",
        "/nodes/pve2/disks/list",
    ),
    case(
        "get_nodes_node_disks_list_partitions",
        "/nodes/{node}/disks/list",
        "/nodes/pve2/disks/list?include-partitions=1&skipsmart=1",
    ),
    case(
        "get_nodes_node_disks_smart_ata",
        "/nodes/{node}/disks/smart",
        "/nodes/pve2/disks/smart?disk=/dev/sdb",
    ),
    case(
        "get_nodes_node_disks_smart_nvme",
        "/nodes/{node}/disks/smart",
        "/nodes/pve2/disks/smart?disk=/dev/nvme0n1",
    ),
    case(
        "get_nodes_node_disks_zfs",
        "/nodes/{node}/disks/zfs",
        "/nodes/pve2/disks/zfs",
    ),
    case(
        "get_nodes_node_disks_zfs_name",
        "/nodes/{node}/disks/zfs/{name}",
        "/nodes/pve2/disks/zfs/rpool",
    ),
    case(
        "get_nodes_node_disks_lvm",
        "/nodes/{node}/disks/lvm",
        "/nodes/pve2/disks/lvm",
    ),
    case(
        "get_nodes_node_disks_lvmthin",
        "/nodes/{node}/disks/lvmthin",
        "/nodes/pve2/disks/lvmthin",
    ),
    case(
        "get_nodes_node_disks_directory",
        "/nodes/{node}/disks/directory",
        "/nodes/pve2/disks/directory",
    ),
    case(
        "get_nodes_node_capabilities_qemu_cpu",
        "/nodes/{node}/capabilities/qemu/cpu",
        "/nodes/pve1/capabilities/qemu/cpu",
    ),
    case(
        "get_nodes_node_capabilities_qemu_cpu_flags",
        "/nodes/{node}/capabilities/qemu/cpu-flags",
        "/nodes/pve1/capabilities/qemu/cpu-flags",
    ),
    case(
        "get_nodes_node_capabilities_qemu_machines",
        "/nodes/{node}/capabilities/qemu/machines",
        "/nodes/pve1/capabilities/qemu/machines",
    ),
    case(
        "get_nodes_node_capabilities_qemu_migration",
        "/nodes/{node}/capabilities/qemu/migration",
        "/nodes/pve1/capabilities/qemu/migration",
    ),
    case(
        "get_nodes_node_hardware_pci",
        "/nodes/{node}/hardware/pci",
        "/nodes/pve1/hardware/pci",
    ),
    case(
        "get_nodes_node_hardware_pci_mdev",
        "/nodes/{node}/hardware/pci/{pci-id-or-mapping}/mdev",
        "/nodes/pve1/hardware/pci/0000:65:00.0/mdev",
    ),
    case(
        "get_nodes_node_hardware_usb",
        "/nodes/{node}/hardware/usb",
        "/nodes/pve1/hardware/usb",
    ),
    case(
        "get_nodes_node_apt_update",
        "/nodes/{node}/apt/update",
        "/nodes/pve2/apt/update",
    ),
    case(
        "get_nodes_node_apt_versions",
        "/nodes/{node}/apt/versions",
        "/nodes/pve1/apt/versions",
    ),
    case(
        "get_nodes_node_apt_changelog",
        "/nodes/{node}/apt/changelog",
        "/nodes/pve2/apt/changelog?name=pve-manager",
    ),
    case(
        "get_nodes_node_scan_nfs",
        "/nodes/{node}/scan/nfs",
        "/nodes/pve2/scan/nfs?server=198.51.100.5",
    ),
    case(
        "get_nodes_node_scan_glusterfs",
        "/nodes/{node}/scan/glusterfs",
        "/nodes/pve2/scan/glusterfs?server=198.51.100.5",
    ),
    case(
        "get_nodes_node_scan_cifs",
        "/nodes/{node}/scan/cifs",
        "/nodes/pve2/scan/cifs?server=198.51.100.6",
    ),
    case(
        "get_nodes_node_scan_iscsi",
        "/nodes/{node}/scan/iscsi",
        "/nodes/pve2/scan/iscsi?portal=198.51.100.7",
    ),
    case(
        "get_nodes_node_scan_pbs",
        "/nodes/{node}/scan/pbs",
        "/nodes/pve2/scan/pbs?server=backup.example.com&username=root@pam&password=pbs-secret",
    ),
    case(
        "get_nodes_node_scan_lvm",
        "/nodes/{node}/scan/lvm",
        "/nodes/pve2/scan/lvm",
    ),
    case(
        "get_nodes_node_scan_lvmthin",
        "/nodes/{node}/scan/lvmthin",
        "/nodes/pve2/scan/lvmthin?vg=bulk",
    ),
    case(
        "get_nodes_node_scan_zfs",
        "/nodes/{node}/scan/zfs",
        "/nodes/pve2/scan/zfs",
    ),
    case(
        "get_nodes_node_certificates_info",
        "/nodes/{node}/certificates/info",
        "/nodes/pve1/certificates/info",
    ),
    // ACME: the account and plugin World::acme makes
    case(
        "get_cluster_acme_account",
        "/cluster/acme/account",
        "/cluster/acme/account",
    ),
    case(
        "get_cluster_acme_account_name",
        "/cluster/acme/account/{name}",
        "/cluster/acme/account/default",
    ),
    case(
        "get_cluster_acme_challenge_schema",
        "/cluster/acme/challenge-schema",
        "/cluster/acme/challenge-schema",
    ),
    case(
        "get_cluster_acme_directories",
        "/cluster/acme/directories",
        "/cluster/acme/directories",
    ),
    case(
        "get_cluster_acme_meta",
        "/cluster/acme/meta",
        "/cluster/acme/meta?directory=https%3A%2F%2Facme-staging-v02.api.letsencrypt.org%2Fdirectory",
    ),
    case(
        "get_cluster_acme_plugins",
        "/cluster/acme/plugins",
        "/cluster/acme/plugins",
    ),
    case(
        "get_cluster_acme_plugins_id",
        "/cluster/acme/plugins/{id}",
        "/cluster/acme/plugins/cf1",
    ),
    case(
        "get_cluster_acme_tos",
        "/cluster/acme/tos",
        "/cluster/acme/tos",
    ),
    // cluster services: replication, metric servers, tasks, log, corosync
    case(
        "get_cluster_replication",
        "/cluster/replication",
        "/cluster/replication",
    ),
    case(
        "get_cluster_replication_id",
        "/cluster/replication/{id}",
        "/cluster/replication/101-0",
    ),
    case(
        "get_nodes_node_replication",
        "/nodes/{node}/replication",
        "/nodes/pve2/replication",
    ),
    case(
        "get_nodes_node_replication_id",
        "/nodes/{node}/replication/{id}",
        "/nodes/pve2/replication/101-0",
    ),
    case(
        "get_nodes_node_replication_id_status",
        "/nodes/{node}/replication/{id}/status",
        "/nodes/pve2/replication/101-0/status",
    ),
    case(
        "get_nodes_node_replication_id_log",
        "/nodes/{node}/replication/{id}/log",
        "/nodes/pve2/replication/101-0/log",
    ),
    case(
        "get_cluster_metrics_server",
        "/cluster/metrics/server",
        "/cluster/metrics/server",
    ),
    case(
        "get_cluster_metrics_server_id",
        "/cluster/metrics/server/{id}",
        "/cluster/metrics/server/influx",
    ),
    case("get_cluster_tasks", "/cluster/tasks", "/cluster/tasks"),
    case("get_cluster_log", "/cluster/log", "/cluster/log?max=20"),
    case(
        "get_cluster_config_nodes",
        "/cluster/config/nodes",
        "/cluster/config/nodes",
    ),
    case(
        "get_cluster_config_totem",
        "/cluster/config/totem",
        "/cluster/config/totem",
    ),
    case(
        "get_cluster_config_join",
        "/cluster/config/join",
        "/cluster/config/join?node=pve2",
    ),
    case(
        "get_cluster_config_qdevice",
        "/cluster/config/qdevice",
        "/cluster/config/qdevice",
    ),
    case(
        "get_cluster_config_apiversion",
        "/cluster/config/apiversion",
        "/cluster/config/apiversion",
    ), // a node's own settings, services, subscription and logs
    case(
        "get_nodes_node_config",
        "/nodes/{node}/config",
        "/nodes/pve1/config",
    ),
    case("get_nodes_node_dns", "/nodes/{node}/dns", "/nodes/pve1/dns"),
    case(
        "get_nodes_node_hosts",
        "/nodes/{node}/hosts",
        "/nodes/pve1/hosts",
    ),
    case(
        "get_nodes_node_time",
        "/nodes/{node}/time",
        "/nodes/pve1/time",
    ),
    case(
        "get_nodes_node_services",
        "/nodes/{node}/services",
        "/nodes/pve1/services",
    ),
    case(
        "get_nodes_node_services_service",
        "/nodes/{node}/services/{service}",
        "/nodes/pve1/services/pveproxy",
    ),
    case(
        "get_nodes_node_services_service_state",
        "/nodes/{node}/services/{service}/state",
        "/nodes/pve1/services/corosync/state",
    ),
    case(
        "get_nodes_node_subscription",
        "/nodes/{node}/subscription",
        "/nodes/pve1/subscription",
    ),
    case(
        "get_nodes_node_subscription_none",
        "/nodes/{node}/subscription",
        "/nodes/pve2/subscription",
    ),
    case(
        "get_nodes_node_syslog",
        "/nodes/{node}/syslog",
        "/nodes/pve1/syslog?limit=20",
    ),
    case(
        "get_nodes_node_syslog_service",
        "/nodes/{node}/syslog",
        "/nodes/pve1/syslog?service=pveproxy",
    ),
    case(
        "get_nodes_node_journal",
        "/nodes/{node}/journal",
        "/nodes/pve1/journal?lastentries=5",
    ),
    case(
        "get_nodes_node_netstat",
        "/nodes/{node}/netstat",
        "/nodes/pve1/netstat",
    ),
    case(
        "get_nodes_node_report",
        "/nodes/{node}/report",
        "/nodes/pve1/report",
    ),
    case(
        "get_nodes_node_rrddata",
        "/nodes/{node}/rrddata",
        "/nodes/pve1/rrddata?timeframe=hour",
    ),
    case(
        "get_nodes_node_rrd",
        "/nodes/{node}/rrd",
        "/nodes/pve1/rrd?timeframe=day&ds=cpu,iowait",
    ),
    case(
        "get_nodes_node_apt_repositories",
        "/nodes/{node}/apt/repositories",
        "/nodes/pve1/apt/repositories",
    ),
    case(
        "get_cluster_metrics_export",
        "/cluster/metrics/export",
        "/cluster/metrics/export",
    ),
    // Last: a download starts a `pbs-download` task, which the task
    // lists and logs above would show.
    case(
        "get_nodes_node_storage_storage_file_restore_download",
        "/nodes/{node}/storage/{storage}/file-restore/download",
        "/nodes/pve1/storage/backups/file-restore/download?volume=backups:backup/ct/200/2026-09-21T11:00:00Z&filepath=cm9vdC5weGFyLmRpZHgvZXRjL2hvc3Rz",
    ),
];

/// A fake-pve, in-process, with a root@pam ticket.
struct World {
    state: State,
    router: Router,
    rt: tokio::runtime::Runtime,
    ticket: String,
    csrf: String,
    /// An API token to send instead of the ticket.
    token: Cell<Option<&'static str>>,
}

/// Percent-encodes each segment of a path, keeping its query as it is
/// (with only the characters a URL cannot hold escaped).
fn encode(path: &str) -> (String, Option<String>) {
    let (p, q) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    let p = p.split('/').map(enc).collect::<Vec<_>>().join("/");
    let q = q.map(|q| {
        q.replace('@', "%40")
            .replace('/', "%2F")
            .replace(':', "%3A")
    });
    (p, q)
}

impl World {
    fn new(version: PveVersion) -> Self {
        let scenario = Scenario::parse(SCENARIO, "snapshots.yaml").expect("valid scenario");
        let settings = Settings {
            version,
            root_password: "password".into(),
            auth_failure_delay: std::time::Duration::ZERO,
            fingerprint: Some(
                "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99"
                    .into(),
            ),
            proxy_pem: None,
            pki: Default::default(),
            served: None,
            random_seed: 0x5eed_f00d,
        };
        // Tasks end at once, but for startall and qmclone, which stay
        // running (the world is built in less than an hour).
        let mut latency = Latency::instant();
        latency.set_task_ms("startall", 3_600_000);
        latency.set_task_ms("qmclone", 3_600_000);
        let state =
            State::new(scenario, settings, Clock::manual(T0), latency).expect("a valid world");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        let mut w = Self {
            state,
            router: Router::default(),
            rt,
            ticket: String::new(),
            csrf: String::new(),
            token: Cell::new(None),
        };
        let login = w.call(
            Method::POST,
            "/access/ticket",
            "username=root@pam&password=password",
        );
        w.ticket = login["data"]["ticket"].as_str().expect("a ticket").into();
        w.csrf = login["data"]["CSRFPreventionToken"]
            .as_str()
            .expect("a CSRF token")
            .into();
        w
    }

    /// Sends one request; answers its status and JSON body.
    fn send(&self, method: Method, path: &str, form: &str) -> (u16, Value) {
        let (p, query) = encode(path);
        let mut headers = HeaderMap::new();
        if let Some(token) = self.token.get() {
            headers.insert(http::header::AUTHORIZATION, HeaderValue::from_static(token));
        } else if !self.ticket.is_empty() {
            let cookie = format!("PVEAuthCookie={}", self.ticket);
            headers.insert("Cookie", HeaderValue::from_str(&cookie).expect("cookie"));
            if method != Method::GET {
                headers.insert(
                    "CSRFPreventionToken",
                    HeaderValue::from_str(&self.csrf).expect("csrf"),
                );
            }
        }
        if !form.is_empty() {
            headers.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            );
        }
        let req = Request {
            method,
            path: format!("/api2/json{p}"),
            query,
            headers,
            body: Bytes::from(form.to_string()),
            upload: None,
        };
        // The model's random draws (MAC addresses, UUIDs) come from the
        // run's seed stream (`Settings::random_seed`), so they repeat.
        let resp = self
            .rt
            .block_on(async { api::handle(&self.state, &self.router, req).await });
        let status = resp.status().as_u16();
        let resp_is_download = resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|t| t == "application/octet-stream");
        let body = self
            .rt
            .block_on(resp.into_body().collect())
            .expect("a body")
            .to_bytes();
        // A download (file-restore) is the file's bytes: kept as text.
        if resp_is_download {
            return (status, json!({ "data": String::from_utf8_lossy(&body) }));
        }
        let json = serde_json::from_slice(&body)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {body:?}"));
        (status, json)
    }

    /// A request that must succeed; answers its body.
    fn call(&self, method: Method, path: &str, form: &str) -> Value {
        let (status, json) = self.send(method.clone(), path, form);
        assert_eq!(status, 200, "{method} {path} {form}: {json}");
        json
    }

    /// A task-starting request; answers its UPID.
    fn task(&self, method: Method, path: &str, form: &str) -> String {
        let j = self.call(method, path, form);
        j["data"].as_str().expect("a UPID").to_string()
    }

    fn advance(&self, secs: i64) {
        self.state.clock().advance(secs);
    }

    /// Makes the world richer through the API; answers the values the
    /// cases' placeholders stand for.
    fn build(&self) -> Vec<(&'static str, String)> {
        let (post, put) = (Method::POST, Method::PUT);
        self.advance(60);
        // A VM with cloud-init, made through the API.
        let create = self.task(
            post.clone(),
            "/nodes/pve1/qemu",
            "vmid=102&name=web&cores=2&memory=1024&agent=1&ostype=l26&tags=prod%3Bweb\
             &scsi0=local-lvm%3A8&ide2=local-lvm%3Acloudinit&net0=virtio%2Cbridge%3Dvmbr0\
             &ciuser=admin&ipconfig0=ip%3D10.1.2.3%2F24%2Cgw%3D10.1.2.1&nameserver=10.1.2.1\
             &description=a%20web%20server",
        );
        self.advance(60);
        // A snapshot of the running VM, then pending changes on it.
        self.task(
            post.clone(),
            "/nodes/pve1/qemu/100/snapshot",
            "snapname=before-upgrade&description=before%20the%20upgrade",
        );
        self.advance(60);
        self.call(
            put.clone(),
            "/nodes/pve1/qemu/100/config",
            "cores=4&delete=onboot&description=edge%20router",
        );
        // Cloud-init changes that the drive does not hold yet.
        self.call(
            put.clone(),
            "/nodes/pve1/qemu/102/config",
            "ciuser=ops&sshkeys=ssh-ed25519%2520AAAAC3NzaC1lZDI1NTE5AAAAIGx%2520ops%2540lab",
        );
        self.advance(60);
        // An ISO downloaded, a disk allocated.
        self.task(
            post.clone(),
            "/nodes/pve1/storage/local/download-url",
            "url=https%3A%2F%2Fexample.com%2Fdebian-12.iso&content=iso&filename=debian-12.iso",
        );
        self.call(
            post.clone(),
            "/nodes/pve1/storage/local-lvm/content",
            "vmid=9000&filename=vm-9000-disk-1&size=4G",
        );
        self.advance(60);
        // The agent runs a command.
        let exec = self.call(
            post.clone(),
            "/nodes/pve1/qemu/100/agent/exec",
            "command=cat&command=%2Fetc%2Fmotd",
        );
        let pid = exec["data"]["pid"].to_string();
        self.advance(60);
        // A network change left pending.
        self.call(
            post.clone(),
            "/nodes/pve1/network",
            "iface=vmbr5&type=bridge&bridge_ports=eno2&autostart=1&cidr=10.10.0.1%2F16&comments=lab",
        );
        // Users, a group member and a token.
        self.call(
            post.clone(),
            "/access/users",
            "userid=bob@pve&comment=Bob&groups=ops&email=bob%40example.com",
        );
        self.call(
            post.clone(),
            "/access/users/ci@pve/token/deploy",
            "comment=deployments&expire=1900000000&privsep=1",
        );
        // A change to an existing interface, pending too.
        self.call(
            put,
            "/nodes/pve1/network/eno2",
            "type=eth&mtu=9000&comments=storage%20network",
        );
        // A pool with a guest and a storage, and one nested in it.
        self.call(post.clone(), "/pools", "poolid=prod&comment=Production");
        self.call(post.clone(), "/pools", "poolid=prod%2Fweb");
        self.call(Method::PUT, "/pools", "poolid=prod&vms=100&storage=local");
        // A backup of the running VM with notes, and a backup job.
        self.task(
            post.clone(),
            "/nodes/pve1/vzdump",
            "vmid=100&storage=local&compress=zstd&mode=snapshot&notes-template=%7B%7Bguestname%7D%7D",
        );
        let listing = self.call(
            Method::GET,
            "/nodes/pve1/storage/local/content?content=backup",
            "",
        );
        let backup = listing["data"][0]["volid"]
            .as_str()
            .expect("a backup")
            .to_string();
        self.call(
            post.clone(),
            "/cluster/backup",
            "schedule=sat%2002%3A00&vmid=100&storage=local&comment=weekly&prune-backups=keep-last%3D3",
        );
        let jobs = self.call(Method::GET, "/cluster/backup", "");
        let job = jobs["data"][0]["id"].as_str().expect("a job").to_string();
        // HA: the running VM and the stopped one as resources (8.4: the
        // first in a group); the manager takes them up at its rounds.
        let v9 = self.state.settings().version.is_v9();
        if !v9 {
            self.call(
                post.clone(),
                "/cluster/ha/groups",
                "group=prefer&nodes=pve1%3A2%2Cpve2&nofailback=1&comment=pve1%20first",
            );
        }
        let group = if v9 { "" } else { "&group=prefer" };
        self.call(
            post.clone(),
            "/cluster/ha/resources",
            &format!("sid=vm%3A100&state=started&max_restart=2&comment=edge{group}"),
        );
        self.call(
            post.clone(),
            "/cluster/ha/resources",
            "sid=101&state=stopped",
        );
        // Replication of the VM on pve2's ZFS pool to pve1, made in the
        // model so that the run's random draws stay as they were; its
        // first run comes at the next minute.
        self.services_early();
        // A download that fails.
        let failed = self.task(
            post.clone(),
            "/nodes/pve1/storage/local/download-url",
            "url=https%3A%2F%2Fexample.com%2Fgone.iso&content=iso&filename=gone.iso",
        );
        self.advance(60);
        if self.state.settings().version.is_v9() {
            self.call(
                post.clone(),
                "/cluster/ha/rules",
                "rule=prefer-pve1&type=node-affinity&resources=vm%3A100&nodes=pve1%3A2%2Cpve2",
            );
            self.call(
                post.clone(),
                "/cluster/ha/rules",
                "rule=apart&type=resource-affinity&resources=vm%3A100%2Cvm%3A101&affinity=negative&comment=spread",
            );
        }
        // A container from a template of the appliance index, started,
        // snapshotted, with a change left pending (all instant: the clock
        // stays where the other answers expect it).
        self.task(
            post.clone(),
            "/nodes/pve1/aplinfo",
            "storage=local&template=debian-12-standard_12.7-1_amd64.tar.zst",
        );
        self.task(
            post.clone(),
            "/nodes/pve1/lxc",
            "vmid=200&ostemplate=local%3Avztmpl%2Fdebian-12-standard_12.7-1_amd64.tar.zst\
             &hostname=web-ct&rootfs=local-lvm%3A8&cores=2&memory=1024&tags=ct\
             &net0=name%3Deth0%2Cbridge%3Dvmbr0%2Cip%3Ddhcp&password=secret-pw&start=1",
        );
        self.task(
            post.clone(),
            "/nodes/pve1/lxc/200/snapshot",
            "snapname=first&description=fresh",
        );
        self.call(
            Method::PUT,
            "/nodes/pve1/lxc/200/config",
            "nameserver=192.0.2.53&onboot=1",
        );
        // A backup of the running container, with notes.
        self.task(
            post.clone(),
            "/nodes/pve1/vzdump",
            "vmid=200&storage=local&compress=zstd&mode=snapshot&notes-template=%7B%7Bguestname%7D%7D",
        );
        let listing = self.call(
            Method::GET,
            "/nodes/pve1/storage/local/content?content=backup&vmid=200",
            "",
        );
        let ctbackup = listing["data"][0]["volid"]
            .as_str()
            .expect("a container backup")
            .to_string();
        // Tasks still running at the end: a full clone of the template
        // that an API token started, and a startall with nothing to start.
        self.token.set(Some(
            "PVEAPIToken=root@pam!automation=2b9e6f31-8c47-4d0a-b5e2-91c3f7a8d604",
        ));
        let clone = self.task(
            post.clone(),
            "/nodes/pve1/qemu/9000/clone",
            "newid=103&name=from-template&full=1&storage=local-lvm",
        );
        self.token.set(None);
        let running = self.task(post.clone(), "/nodes/pve2/startall", "");
        // Firewall: cluster aliases, an IP set, a security group, rules
        // that use them, options; a node's and a VM's own.
        for (path, form) in [
            (
                "/cluster/firewall/aliases",
                "name=lan&cidr=192.168.0.0%2F16&comment=office",
            ),
            ("/cluster/firewall/ipset", "name=mgmt&comment=management"),
            ("/cluster/firewall/ipset/mgmt", "cidr=10.0.0.9%2F24"),
            (
                "/cluster/firewall/ipset/mgmt",
                "cidr=10.0.1.5&nomatch=1&comment=printer",
            ),
            (
                "/cluster/firewall/groups",
                "group=web&comment=web%20servers",
            ),
            (
                "/cluster/firewall/groups/web",
                "type=in&action=ACCEPT&macro=https&enable=1",
            ),
            ("/cluster/firewall/rules", "type=group&action=web&enable=1"),
            (
                "/cluster/firewall/rules",
                "type=in&action=ACCEPT&macro=SSH&source=%2Bmgmt&enable=1&comment=admins",
            ),
            (
                "/nodes/pve1/firewall/rules",
                "type=in&action=ACCEPT&proto=tcp&dport=8006&source=lan&comment=web%20ui&enable=1",
            ),
            (
                "/nodes/pve1/qemu/100/firewall/aliases",
                "name=db&cidr=10.0.0.9",
            ),
            ("/nodes/pve1/qemu/100/firewall/ipset", "name=allowed"),
            (
                "/nodes/pve1/qemu/100/firewall/ipset/allowed",
                "cidr=192.168.1.0%2F24",
            ),
            (
                "/nodes/pve1/qemu/100/firewall/rules",
                "type=in&action=ACCEPT&proto=icmp&icmp-type=echo-request&enable=1",
            ),
            (
                "/nodes/pve1/qemu/100/firewall/rules",
                "type=group&action=web&iface=net0&enable=1",
            ),
        ] {
            self.call(post.clone(), path, form);
        }
        for (path, form) in [
            ("/cluster/firewall/options", "enable=1&policy_in=DROP"),
            (
                "/nodes/pve1/firewall/options",
                "enable=1&log_level_in=info&nf_conntrack_max=131072",
            ),
            (
                "/nodes/pve1/qemu/100/firewall/options",
                "enable=1&dhcp=1&policy_in=DROP",
            ),
        ] {
            self.call(Method::PUT, path, form);
        }
        for (path, form) in [
            (
                "/nodes/pve1/lxc/200/firewall/aliases",
                "name=dns&cidr=fd00%3A%3A53%2F128&comment=resolver",
            ),
            (
                "/nodes/pve1/lxc/200/firewall/ipset",
                "name=allowed&comment=peers",
            ),
            (
                "/nodes/pve1/lxc/200/firewall/ipset/allowed",
                "cidr=192.168.1.0%2F24",
            ),
            (
                "/nodes/pve1/lxc/200/firewall/rules",
                "type=out&action=DROP&proto=udp&dport=53&dest=10.0.0.0%2F8",
            ),
        ] {
            self.call(post.clone(), path, form);
        }
        self.advance(5);
        self.sdn();
        self.services();
        self.sdn_firewall();
        let tfa = self.realms_and_tfa();
        // VNC tickets as the proxy calls make them (signed with the
        // server's key, good for 40 seconds: the GETs follow at once).
        // PVE 8.4's name no port.
        let v9 = self.state.settings().version.is_v9();
        let vnc = |path: &str, port: u16| {
            let secret = if v9 {
                format!("root@pam:{path}:{port}")
            } else {
                format!("root@pam:{path}")
            };
            enc(&self
                .state
                .keys()
                .short_ticket("PVEVNC", &secret, self.state.clock().now()))
        };
        // Notification targets of every kind and a matcher.
        self.call(
            post.clone(),
            "/cluster/notifications/endpoints/gotify",
            "name=phone&server=http%3A%2F%2F127.0.0.1%3A8008&token=secret-token&comment=on%20call",
        );
        self.call(
            post.clone(),
            "/cluster/notifications/endpoints/smtp",
            "name=relay&server=mail.example.com&mode=starttls&username=pve&password=hunter22\
             &mailto=ops%40example.com&from-address=pve%40example.com",
        );
        self.call(
            post.clone(),
            "/cluster/notifications/endpoints/webhook",
            "name=chat&url=http%3A%2F%2F127.0.0.1%3A9000%2Fhook&method=post\
             &header=name%3DContent-Type%2Cvalue%3DYXBwbGljYXRpb24vanNvbg%3D%3D\
             &body=eyJ0ZXh0IjogInt7IHRpdGxlIH19In0%3D&secret=name%3Dtoken%2Cvalue%3DczNjcjN0",
        );
        self.call(
            post.clone(),
            "/cluster/notifications/matchers",
            "name=backup-failures&match-field=exact%3Atype%3Dvzdump&match-severity=error\
             &target=chat&target=phone&mode=all&comment=failed%20backups",
        );
        self.acme();
        self.sdn_9_2();
        self.ova_appliance();
        let tunnel = |socket: &str| {
            enc(&self.state.keys().short_ticket(
                "PVETUNNEL",
                &format!("root@pam:/socket{socket}"),
                self.state.clock().now(),
            ))
        };
        vec![
            ("{tunnel_vm}", tunnel("/run/qemu-server/100.mtunnel")),
            ("{tunnel_ct}", tunnel("/run/pve/ct-200.mtunnel")),
            ("{vnc_vm}", vnc("/vms/100", 5901)),
            ("{vnc_ct}", vnc("/vms/200", 5902)),
            ("{vnc_node}", vnc("/nodes/pve2", 5900)),
            ("{tfa}", tfa),
            ("{create}", create),
            ("{failed}", failed),
            ("{clone}", clone),
            ("{running}", running),
            ("{pid}", pid),
            ("{backup}", backup),
            ("{ctbackup}", ctbackup),
            ("{job}", job),
        ]
    }
}

impl World {
    /// An OVA appliance on `local` of pve2, put in the model as a
    /// finished download leaves it (no task, an empty file: the task
    /// lists and the storages' usage stay as they are). Its manifest is
    /// the one the table of known URLs gives.
    fn ova_appliance(&self) {
        use fake_pve::model::storage::import::OvaContent;
        use fake_pve::model::tasks::VolumeChange;
        let scenario = Scenario::parse(SCENARIO, "snapshots.yaml").expect("valid scenario");
        let ovf = scenario
            .downloads
            .iter()
            .find_map(|k| k.ovf.clone())
            .expect("an OVA among the known URLs");
        let now = self.state.clock().now();
        self.state
            .with(|c| {
                let volume = fake_pve::model::storage::Volume {
                    storage: "local".into(),
                    name: "import/appliance.ova".into(),
                    size: 0,
                    format: "ova".into(),
                    vmid: 0,
                    ctime: now,
                };
                c.storages_mut().apply_volume_change(
                    "pve2",
                    VolumeChange::Put {
                        volume,
                        oci: None,
                        ova: Some(Box::new(OvaContent::from_manifest("appliance", &ovf))),
                    },
                );
                Ok::<_, fake_pve::model::Error>(())
            })
            .expect("the appliance is stored");
    }

    /// SDN: a simple zone with the PVE IPAM and DHCP, its VNet with a
    /// subnet, an evpn controller and zone, a netbox IPAM and a PowerDNS
    /// server, applied (in the model: no task, so that the task lists stay
    /// as they are) with a guest's address in the IPAM; then a change and a
    /// new VNet left pending.
    fn sdn(&self) {
        let post = Method::POST;
        self.call(
            post.clone(),
            "/cluster/sdn/zones",
            "zone=lab&type=simple&ipam=pve&dhcp=dnsmasq&mtu=1450",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/vnets",
            "vnet=labnet&zone=lab&alias=lab%20net",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/vnets/labnet/subnets",
            "subnet=10.10.0.0%2F24&type=subnet&gateway=10.10.0.1&snat=1\
             &dhcp-range=start-address%3D10.10.0.100%2Cend-address%3D10.10.0.149\
             &dhcp-range=start-address%3D10.10.0.200%2Cend-address%3D10.10.0.209",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/controllers",
            "controller=evpnctl&type=evpn&asn=65000&peers=10.0.0.1%2C10.0.0.2",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/zones",
            "zone=evpn1&type=evpn&controller=evpnctl&vrf-vxlan=10000&exitnodes=pve1",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/vnets",
            "vnet=evnet&zone=evpn1&tag=20000",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/ipams",
            "ipam=netbox&type=netbox&url=https%3A%2F%2Fnetbox.example.com%2Fapi&token=secret",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/dns",
            "dns=pdns&type=powerdns&url=https%3A%2F%2Fdns.example.com%2Fapi&key=secret&ttl=3600",
        );
        self.sdn_fabrics();
        self.sdn_wireguard();
        self.sdn_routing();
        let now = self.state.clock().now();
        self.state
            .with(|c| {
                c.sdn_mut().commit(None, true)?;
                c.sdn_mut().mark_applied(now);
                Ok::<_, fake_pve::model::Error>(())
            })
            .expect("the SDN configuration applies");
        self.call(
            post.clone(),
            "/cluster/sdn/vnets/labnet/ips",
            "zone=lab&ip=10.10.0.50&mac=BC%3A24%3A11%3A00%3A00%3A50",
        );
        self.call(
            Method::PUT,
            "/cluster/sdn/zones/lab",
            "mtu=1400&delete=dhcp",
        );
        self.call(post, "/cluster/sdn/vnets", "vnet=newnet&zone=lab");
        self.sdn_fabrics_changed();
        self.sdn_routing_changed();
    }
}

impl World {
    /// Realms: an LDAP realm (the default) with sync defaults and its
    /// nightly sync job, an OpenID realm; second factors: alice's TOTP
    /// key (with the value of the world's clock) and recovery keys.
    /// Answers the TOTP entry's id.
    fn realms_and_tfa(&self) -> String {
        let post = Method::POST;
        self.call(
            post.clone(),
            "/access/domains",
            "realm=corp&type=ldap&server1=ldap.example.com&base_dn=dc%3Dexample%2Cdc%3Dcom\
             &user_attr=uid&default=1&comment=Corporate%20LDAP&port=389\
             &sync-defaults-options=scope%3Dboth%2Cfull%3D1",
        );
        self.call(
            post.clone(),
            "/access/domains",
            "realm=sso&type=openid&issuer-url=https%3A%2F%2Fid.example.com&client-id=pve\
             &username-claim=email&autocreate=1",
        );
        self.call(
            post.clone(),
            "/cluster/jobs/realm-sync/corp-nightly",
            "realm=corp&schedule=02%3A30&scope=users&enable-new=0&enabled=1\
             &remove-vanished=acl%3Bentry&comment=nightly",
        );
        let uri = "otpauth://totp/pve:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&period=30&digits=6&algorithm=SHA1";
        let totp = fake_pve::model::access::tfa::Totp::parse(uri).expect("uri");
        let now = self.state.clock().now();
        let value = totp.value(totp.counter(now));
        let form = format!(
            "type=totp&description=phone&totp={}&value={value}",
            enc(uri)
        );
        let added = self.call(post.clone(), "/access/tfa/alice@pve", &form);
        self.call(post, "/access/tfa/alice@pve", "type=recovery");
        added["data"]["id"].as_str().expect("an id").to_string()
    }
}

/// The releases fake-pve impersonates.
const PVE_RELEASES: [PveVersion; 3] = PveVersion::ALL;

fn release(v: PveVersion) -> &'static str {
    match v {
        PveVersion::V8_4 => "pve8.4",
        PveVersion::V9_1 => "pve9.1",
        PveVersion::V9_2 => "pve9.2",
    }
}

/// Checks `data` against the `returns` schema of `GET template`.
fn fits(version: PveVersion, template: &str, data: &Value) -> Result<(), String> {
    if template == "/" {
        // The API root is not in the schema.
        return Ok(());
    }
    let e = fake_pve::spec::spec(version)
        .endpoint("GET", template)
        .ok_or_else(|| format!("GET {template}: not in the schema"))?;
    let problems = fake_pve::spec::returns::check(&e.returns, data);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "GET {template}: the answer does not fit the schema: {problems:?}\n{data}"
        ))
    }
}

fn snapshots(version: PveVersion) {
    let world = World::new(version);
    let values = world.build();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(release(version));
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    let mut problems = Vec::new();
    settings.bind(|| {
        for c in CASES {
            if c.template != "/"
                && fake_pve::spec::spec(version)
                    .endpoint("GET", c.template)
                    .is_none()
            {
                continue;
            }
            if c.only.is_some_and(|v| v != version) {
                continue;
            }
            let mut path = c.path.to_string();
            for (k, v) in &values {
                path = path.replace(k, v);
            }
            let (status, mut body) = world.send(Method::GET, &path, "");
            if status != 200 {
                problems.push(format!("GET {path}: status {status}: {body}"));
                continue;
            }
            if let Err(e) = fits(version, c.template, &body["data"]) {
                problems.push(e);
            }
            // Little is redacted: no GET answer holds a ticket, a CSRF token
            // or a token secret; every time comes from the manual clock and
            // every random draw (MAC addresses, UUIDs) from the run's seed
            // stream, so that the answers repeat from run to run. The
            // certificates' keys are not drawn from it: their PEM text,
            // fingerprints and the CA's unique name are redacted.
            redact_certificates(&mut body["data"]);
            redact_member_fingerprints(&mut body["data"]);
            // An ACME account's key is made once per process.
            if let Some(key) = body["data"].pointer_mut("/account/key") {
                *key = json!("[jwk]");
            }
            // Compare every case, not only up to the first mismatch: insta
            // prints each diff as it panics, and the names come at the end.
            let compared = std::panic::catch_unwind(AssertUnwindSafe(|| {
                insta::assert_json_snapshot!(c.name, body);
            }));
            if compared.is_err() {
                problems.push(format!(
                    "{}: the answer differs from its snapshot, or has none",
                    c.name
                ));
            }
        }
    });
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The fingerprints of the members' own certificates in `/nodes` and
/// the join information (their keys differ from run to run; the local
/// node's is the fixed one the test serves). They must still be
/// fingerprints: 32 upper-case hex pairs.
fn redact_member_fingerprints(data: &mut Value) {
    let items = match data.get_mut("nodelist") {
        Some(list) => list.as_array_mut(),
        None => data.as_array_mut(),
    };
    for item in items.into_iter().flatten() {
        for key in ["ssl_fingerprint", "pve_fp"] {
            let Some(fp) = item.get(key).and_then(Value::as_str) else {
                continue;
            };
            if fp.starts_with("AA:BB:CC:") {
                continue;
            }
            let pairs: Vec<&str> = fp.split(':').collect();
            assert!(
                pairs.len() == 32
                    && pairs.iter().all(|p| p.len() == 2
                        && p.chars()
                            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())),
                "not a fingerprint: {fp}"
            );
            item[key] = json!("[fingerprint]");
        }
    }
}

/// The parts of `certificates/info` that differ from run to run: the PEM
/// text, the fingerprint and the unique `OU=` of the cluster CA's name.
fn redact_certificates(data: &mut Value) {
    let Some(items) = data.as_array_mut() else {
        return;
    };
    for item in items {
        if item.get("pem").is_none() || item.get("public-key-bits").is_none() {
            continue;
        }
        item["pem"] = json!("[pem]");
        item["fingerprint"] = json!("[fingerprint]");
        for key in ["subject", "issuer"] {
            if let Some(name) = item[key].as_str() {
                let redacted = name
                    .split('/')
                    .map(|part| {
                        if part.starts_with("OU=") && part != "OU=PVE Cluster Node" {
                            "OU=[uuid]"
                        } else {
                            part
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("/");
                item[key] = json!(redacted);
            }
        }
    }
}

#[test]
fn the_answers_of_pve_9_2() {
    snapshots(PveVersion::V9_2);
}

#[test]
fn the_answers_of_pve_9_1() {
    snapshots(PveVersion::V9_1);
}

#[test]
fn the_answers_of_pve_8_4() {
    snapshots(PveVersion::V8_4);
}

/// Every GET with behaviour, in either release, has a snapshot above.
#[test]
fn every_modelled_get_has_a_snapshot() {
    let router = Router::default();
    let covered: BTreeSet<&str> = CASES.iter().map(|c| c.template).collect();
    let mut missing = BTreeSet::new();
    for version in PVE_RELEASES {
        for e in &fake_pve::spec::spec(version).endpoints {
            if e.method == "GET"
                && level(&router, e) == Level::Behaviour
                && !covered.contains(e.path.as_str())
            {
                missing.insert(e.path.clone());
            }
        }
    }
    if router.handler(&Method::GET, "/").is_some() && !covered.contains("/") {
        missing.insert("/".into());
    }
    assert!(
        missing.is_empty(),
        "modelled GETs without a snapshot in CASES:\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
    // And no case names a path without behaviour (a snapshot of a
    // fallback answer, or a typo).
    let stale: Vec<&str> = covered
        .into_iter()
        .filter(|t| {
            router.handler(&Method::GET, t).is_none()
                || (*t != "/"
                    && PVE_RELEASES
                        .iter()
                        .all(|v| fake_pve::spec::spec(*v).endpoint("GET", t).is_none()))
        })
        .collect();
    assert!(
        stale.is_empty(),
        "cases of paths without behaviour: {stale:?}"
    );
    let mut names = BTreeSet::new();
    for c in CASES {
        assert!(names.insert(c.name), "two cases named {}", c.name);
    }
}

/// The check each answer goes through does refuse a wrong shape.
#[test]
fn the_schema_check_refuses_a_wrong_shape() {
    for v in PVE_RELEASES {
        assert!(fits(v, "/version", &json!({ "version": ["9"] })).is_err());
        assert!(fits(v, "/nodes", &json!("pve1")).is_err());
        assert!(fits(v, "/nodes/{node}/qemu", &json!([{ "vmid": "x" }])).is_err());
        assert!(
            fits(
                v,
                "/nodes/{node}/qemu",
                &json!([{ "vmid": 100, "status": "running" }])
            )
            .is_ok()
        );
    }
}

impl World {
    /// 9.x SDN fabrics, applied with the rest: an OpenFabric fabric
    /// (dual stack) with two nodes, an OSPF fabric with one of them.
    fn sdn_fabrics(&self) {
        if !self.state.settings().version.is_v9() {
            return;
        }
        let post = Method::POST;
        self.call(
            post.clone(),
            "/cluster/sdn/fabrics/fabric",
            "id=of1&protocol=openfabric&ip_prefix=10.100.0.0%2F24\
             &ip6_prefix=fd00%3A100%3A%3A%2F64&hello_interval=3",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/fabrics/node/of1",
            "node_id=pve1&protocol=openfabric&ip=10.100.0.1&ip6=fd00%3A100%3A%3A1\
             &interfaces=name%3Dens19&interfaces=hello_multiplier%3D4%2Cname%3Dens20",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/fabrics/node/of1",
            "node_id=pve2&protocol=openfabric&ip=10.100.0.2&ip6=fd00%3A100%3A%3A2\
             &interfaces=name%3Dens19",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/fabrics/fabric",
            "id=os1&protocol=ospf&area=0&ip_prefix=10.200.0.0%2F24",
        );
        self.call(
            post,
            "/cluster/sdn/fabrics/node/os1",
            "node_id=pve1&protocol=ospf&ip=10.200.0.1\
             &interfaces=name%3Dens21%2Cip%3D10.200.1.1%2F31",
        );
    }

    /// 9.2's WireGuard fabric, applied with the rest: an external node,
    /// an internal node whose interface peers with it. Made through the
    /// model, with random draws of its own (the interface's key), so that
    /// the requests' seeds stay as they were.
    fn sdn_wireguard(&self) {
        if self.state.settings().version != PveVersion::V9_2 {
            return;
        }
        let form = |pairs: &[(&str, &str)]| -> std::collections::BTreeMap<String, Value> {
            let mut m = std::collections::BTreeMap::new();
            for (k, v) in pairs {
                m.insert((*k).to_string(), json!(v));
            }
            m
        };
        let mut rq = fake_pve::model::Context::new(T0 * 1000, 92);
        self.state
            .with(|c| {
                let sdn = c.sdn_mut();
                sdn.add_fabric(&form(&[
                    ("id", "wg1"),
                    ("protocol", "wireguard"),
                    ("ip_prefix", "10.150.0.0/24"),
                    ("persistent_keepalive", "25"),
                ]))?;
                sdn.add_fabric_node(
                    &form(&[
                        ("fabric_id", "wg1"),
                        ("node_id", "ext1"),
                        ("protocol", "wireguard"),
                        ("role", "external"),
                        ("ip", "10.150.0.9"),
                        ("public_key", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="),
                        ("endpoint", "198.51.100.9:51820"),
                        ("allowed_ips", "10.160.0.0/16"),
                    ]),
                    &mut rq,
                )?;
                sdn.add_fabric_node(
                    &form(&[
                        ("fabric_id", "wg1"),
                        ("node_id", "pve1"),
                        ("protocol", "wireguard"),
                        ("role", "internal"),
                        ("ip", "10.150.0.1"),
                        ("endpoint", "192.0.2.11"),
                        ("interfaces", "name=wg0,listen_port=51820,ip=10.151.0.1/24"),
                        ("peers", "type=external,node=ext1,iface=wg0"),
                    ]),
                    &mut rq,
                )
            })
            .expect("the WireGuard fabric");
    }

    /// Fabric changes left pending after the apply.
    fn sdn_fabrics_changed(&self) {
        if !self.state.settings().version.is_v9() {
            return;
        }
        self.call(
            Method::PUT,
            "/cluster/sdn/fabrics/fabric/of1",
            "protocol=openfabric&csnp_interval=10&delete=hello_interval",
        );
        self.call(
            Method::PUT,
            "/cluster/sdn/fabrics/node/of1/pve2",
            "protocol=openfabric&ip=10.100.0.12",
        );
    }
}

impl World {
    /// 9.2 prefix lists and route maps, applied with the rest: a list
    /// of two entries (one numbered by the model), a route map of two
    /// entries matching it, the OpenFabric fabric filtering with it.
    fn sdn_routing(&self) {
        if self.state.settings().version != PveVersion::V9_2 {
            return;
        }
        let post = Method::POST;
        self.call(
            post.clone(),
            "/cluster/sdn/prefix-lists",
            "id=plin&entries=action%3Dpermit%2Cprefix%3D10.0.0.0%2F8%2Cle%3D24%2Cseq%3D10\
             &entries=action%3Ddeny%2Cprefix%3Dfd00%3A%3A%2F48%2Cge%3D64",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/route-maps/entries",
            "route-map-id=rmout&order=10&action=permit\
             &match=key%3Dip-address-prefix-list%2Cvalue%3Dplin\
             &set=key%3Dlocal-preference%2Cvalue%3D%2B20&set=key%3Dip-next-hop-unchanged\
             &exit-action=key%3Don-match-goto%2Cvalue%3D30",
        );
        self.call(
            post,
            "/cluster/sdn/route-maps/entries",
            "route-map-id=rmout&order=20&action=deny&call=rmother",
        );
        self.call(
            Method::PUT,
            "/cluster/sdn/fabrics/fabric/of1",
            "protocol=openfabric&route_filter=plin",
        );
    }

    /// 9.2's evpn and bgp controllers, an evpn zone's secondary
    /// controller and a change of the WireGuard fabric's external node,
    /// all left pending. Made last, so that the random draws of the
    /// other answers stay as they were.
    fn sdn_9_2(&self) {
        if self.state.settings().version != PveVersion::V9_2 {
            return;
        }
        let post = Method::POST;
        self.call(
            post.clone(),
            "/cluster/sdn/controllers",
            "controller=evpnsec&type=evpn&asn=65000&peers=10.0.0.3&nodes=pve2%2Cpve1\
             &peer-group-name=EDGE&bgp-mode=internal&route-map-in=rmout&route-map-out=rmout",
        );
        self.call(
            post.clone(),
            "/cluster/sdn/controllers",
            "controller=bgppve1&type=bgp&asn=65000&node=pve1&peers=10.0.0.9&route-map-out=rmout",
        );
        self.call(
            Method::PUT,
            "/cluster/sdn/zones/evpn1",
            "secondary-controllers=evpnsec",
        );
        self.call(
            Method::PUT,
            "/cluster/sdn/fabrics/node/wg1/ext1",
            "protocol=wireguard&endpoint=wg.example.com%3A51821&allowed_ips=10.161.0.0%2F16",
        );
    }

    /// Prefix list and route map changes left pending after the apply
    /// (a new route map entry of the pending view has its members only
    /// under `pending`, against PVE's own return schema, so the model's
    /// tests show it).
    fn sdn_routing_changed(&self) {
        if self.state.settings().version != PveVersion::V9_2 {
            return;
        }
        self.call(
            Method::POST,
            "/cluster/sdn/prefix-lists/plin/entries",
            "action=deny&prefix=192.0.2.0%2F24",
        );
        self.call(Method::POST, "/cluster/sdn/prefix-lists", "id=plnew");
        self.call(
            Method::PUT,
            "/cluster/sdn/route-maps/entries/rmout/entry/20",
            "action=permit&delete=call&match=key%3Dvni%2Cvalue%3D5000",
        );
    }
}

/// The cluster services' part of the world.
impl World {
    /// A replication job of VM 101 (on pve2's ZFS pool) to pve1.
    fn services_early(&self) {
        let up = fake_pve::model::replication::JobUpdate {
            target: Some("pve1".into()),
            schedule: Some("*/30".into()),
            rate: Some(50.0),
            comment: Some("build agent".into()),
            ..Default::default()
        };
        let now = self.state.clock().now();
        self.state
            .with(|c| {
                c.replication_ops()
                    .create_replication_job("101-0", &up, now)
            })
            .expect("replication job");
    }

    /// Metric servers, made last so that the other answers' random draws
    /// stay as they were.
    fn services(&self) {
        let post = Method::POST;
        self.call(
            post.clone(),
            "/cluster/metrics/server/graphite",
            "type=graphite&server=192.0.2.20&port=2003&proto=tcp&path=pve",
        );
        self.call(
            post,
            "/cluster/metrics/server/influx",
            "type=influxdb&server=influx.example.com&port=8086&influxdbproto=https\
             &organization=lab&bucket=pve&token=secret&disable=1",
        );
    }
}

impl World {
    /// ACME: an account registered with the staging directory (its task
    /// ends at once in this world) and a DNS plugin.
    fn acme(&self) {
        self.task(
            Method::POST,
            "/cluster/acme/account",
            "name=default&contact=admin%40example.com\
             &directory=https%3A%2F%2Facme-staging-v02.api.letsencrypt.org%2Fdirectory\
             &tos_url=https%3A%2F%2Fletsencrypt.org%2Fdocuments%2FLE-SA-v1.5-February-24-2025.pdf",
        );
        // CF_Token=tok / CF_Account_ID=acct
        self.call(
            Method::POST,
            "/cluster/acme/plugins",
            "id=cf1&type=dns&api=cf&validation-delay=10\
             &data=Q0ZfVG9rZW49dG9rCkNGX0FjY291bnRfSUQ9YWNjdA%3D%3D",
        );
    }
}

impl World {
    /// A firewall on the applied VNet `labnet`: options, a forward rule
    /// with a macro and the cluster alias, and a security group rule.
    fn sdn_firewall(&self) {
        let base = "/cluster/sdn/vnets/labnet/firewall";
        self.call(
            Method::PUT,
            &format!("{base}/options"),
            "enable=1&policy_forward=DROP&log_level_forward=info",
        );
        for form in [
            "type=forward&action=ACCEPT&macro=ssh&source=10.10.0.0%2F24&enable=1&comment=admins",
            "type=forward&action=DROP&proto=tcp&dport=25&log=warning",
            "type=group&action=web&enable=1",
        ] {
            self.call(Method::POST, &format!("{base}/rules"), form);
        }
    }
}

/// A node's own settings and services after they were changed through
/// the API: options, DNS, hosts, time zone, a service stopped and one
/// that refused to stop, a subscription key set; and the refusals.
fn node_services_after_changes(version: PveVersion) {
    let world = World::new(version);
    let (post, put) = (Method::POST, Method::PUT);
    world.advance(60);
    world.call(
        put.clone(),
        "/nodes/pve2/config",
        "description=rack%204&wakeonlan=mac%3DBC%3A24%3A11%3A00%3A00%3A02&startall-onboot-delay=10",
    );
    world.call(
        put.clone(),
        "/nodes/pve2/dns",
        "search=lab.example&dns1=192.0.2.53&dns2=2001%3Adb8%3A%3A53",
    );
    world.call(
        post.clone(),
        "/nodes/pve2/hosts",
        "data=127.0.0.1%20localhost%0A192.0.2.12%20pve2.lab.example%20pve2%0A",
    );
    world.call(put.clone(), "/nodes/pve2/time", "timezone=Europe%2FVienna");
    world.task(post.clone(), "/nodes/pve2/services/pvestatd/stop", "");
    world.task(post.clone(), "/nodes/pve2/services/pveproxy/stop", "");
    world.call(
        put.clone(),
        "/nodes/pve2/subscription",
        "key=pve1b-0123456789",
    );
    world.advance(60);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(release(version));
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for (name, path) in [
            ("node_services_config", "/nodes/pve2/config"),
            ("node_services_dns", "/nodes/pve2/dns"),
            ("node_services_hosts", "/nodes/pve2/hosts"),
            ("node_services_time", "/nodes/pve2/time"),
            (
                "node_services_pvestatd",
                "/nodes/pve2/services/pvestatd/state",
            ),
            ("node_services_subscription", "/nodes/pve2/subscription"),
            (
                "node_services_wakeonlan_target",
                "/nodes/pve2/config?property=wakeonlan",
            ),
            ("node_services_syslog", "/nodes/pve2/syslog?limit=100"),
        ] {
            let (status, body) = world.send(Method::GET, path, "");
            assert_eq!(status, 200, "GET {path}: {body}");
            insta::assert_json_snapshot!(name, body);
        }
        for (name, method, path, form) in [
            (
                "node_services_refuse_hosts",
                post.clone(),
                "/nodes/pve2/hosts",
                "data=300.0.0.1%20x",
            ),
            (
                "node_services_refuse_timezone",
                put.clone(),
                "/nodes/pve2/time",
                "timezone=Mars%2FBase",
            ),
            (
                "node_services_refuse_key",
                put.clone(),
                "/nodes/pve2/subscription",
                "key=pve9x-12",
            ),
            (
                "node_services_refuse_wakeonlan_local",
                post.clone(),
                "/nodes/pve1/wakeonlan",
                "",
            ),
            (
                "node_services_refuse_service",
                Method::GET,
                "/nodes/pve2/services/nginx/state",
                "",
            ),
            (
                "node_services_refuse_digest",
                put.clone(),
                "/nodes/pve2/config",
                "delete=wakeonlan&digest=0123",
            ),
        ] {
            let (status, body) = world.send(method, path, form);
            insta::assert_json_snapshot!(name, json!({ "status": status, "body": body }));
        }
        let (status, body) = world.send(post.clone(), "/nodes/pve2/wakeonlan", "");
        assert_eq!(status, 200, "{body}");
        insta::assert_json_snapshot!("node_services_wakeonlan", body);
    });
}

#[test]
fn node_services_after_changes_9_2() {
    node_services_after_changes(PveVersion::V9_2);
}

#[test]
fn node_services_after_changes_9_1() {
    node_services_after_changes(PveVersion::V9_1);
}

#[test]
fn node_services_after_changes_8_4() {
    node_services_after_changes(PveVersion::V8_4);
}

/// The PVE IPAM of a zone with DHCP once a guest on its VNet started: the
/// gateway's entry and the guest's, with its VMID and name (an integer
/// VMID since PVE 9, the IPAM database's string before).
fn sdn_ipam_of_a_guest(version: PveVersion) {
    let world = World::new(version);
    let post = Method::POST;
    world.call(
        post.clone(),
        "/cluster/sdn/zones",
        "zone=dhcpz&type=simple&ipam=pve&dhcp=dnsmasq",
    );
    world.call(
        post.clone(),
        "/cluster/sdn/vnets",
        "vnet=dhcpnet&zone=dhcpz",
    );
    world.call(
        post.clone(),
        "/cluster/sdn/vnets/dhcpnet/subnets",
        "subnet=10.20.0.0%2F24&type=subnet&gateway=10.20.0.1\
         &dhcp-range=start-address%3D10.20.0.100%2Cend-address%3D10.20.0.149",
    );
    world
        .state
        .with(|c| c.sdn_mut().commit(None, true))
        .expect("the SDN configuration applies");
    world.task(
        post.clone(),
        "/nodes/pve1/qemu",
        "vmid=310&name=dhcp-guest&memory=512\
         &net0=virtio%3DBC%3A24%3A11%3A00%3A03%3A10%2Cbridge%3Ddhcpnet",
    );
    world.task(post, "/nodes/pve1/qemu/310/status/start", "");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(release(version));
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings.bind(|| {
        let (status, body) = world.send(Method::GET, "/cluster/sdn/ipams/pve/status", "");
        assert_eq!(status, 200, "{body}");
        assert!(
            fits(version, "/cluster/sdn/ipams/{ipam}/status", &body["data"]).is_ok(),
            "{body}"
        );
        insta::assert_json_snapshot!("sdn_ipam_status_guest", body);
    });
}

#[test]
fn sdn_ipam_of_a_guest_9_2() {
    sdn_ipam_of_a_guest(PveVersion::V9_2);
}

#[test]
fn sdn_ipam_of_a_guest_9_1() {
    sdn_ipam_of_a_guest(PveVersion::V9_1);
}

#[test]
fn sdn_ipam_of_a_guest_8_4() {
    sdn_ipam_of_a_guest(PveVersion::V8_4);
}

/// A node's APT sources after the enterprise repository was disabled and
/// the no-subscription one added, and the refusals of both calls and of
/// the node's graph.
fn apt_repositories_after_changes(version: PveVersion) {
    let world = World::new(version);
    let (post, put) = (Method::POST, Method::PUT);
    let enterprise = if version.is_v9() {
        "%2Fetc%2Fapt%2Fsources.list.d%2Fpve-enterprise.sources"
    } else {
        "%2Fetc%2Fapt%2Fsources.list.d%2Fpve-enterprise.list"
    };
    let (status, body) = world.send(Method::GET, "/nodes/pve2/apt/repositories", "");
    assert_eq!(status, 200, "{body}");
    let digest = body["data"]["digest"].as_str().expect("digest").to_string();
    world.call(
        post.clone(),
        "/nodes/pve2/apt/repositories",
        &format!("path={enterprise}&index=0&enabled=0&digest={digest}"),
    );
    world.call(
        put.clone(),
        "/nodes/pve2/apt/repositories",
        "handle=no-subscription",
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(release(version));
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings.bind(|| {
        let (status, body) = world.send(Method::GET, "/nodes/pve2/apt/repositories", "");
        assert_eq!(status, 200, "{body}");
        insta::assert_json_snapshot!("apt_repositories_changed", body);
        for (name, method, path, form) in [
            (
                "apt_repositories_refuse_digest",
                post.clone(),
                "/nodes/pve2/apt/repositories".to_string(),
                format!("path={enterprise}&index=0&enabled=1&digest={digest}"),
            ),
            (
                "apt_repositories_refuse_index",
                post.clone(),
                "/nodes/pve2/apt/repositories".to_string(),
                format!("path={enterprise}&index=7&enabled=1"),
            ),
            (
                "apt_repositories_refuse_path",
                post.clone(),
                "/nodes/pve2/apt/repositories".to_string(),
                "path=%2Fetc%2Fapt%2Fsources.list.d%2Fx.list&index=0".to_string(),
            ),
            (
                "apt_repositories_refuse_handle",
                put.clone(),
                "/nodes/pve2/apt/repositories".to_string(),
                "handle=ceph-nautilus-test".to_string(),
            ),
            (
                "node_rrd_refuse_ds",
                Method::GET,
                "/nodes/pve2/rrd?timeframe=hour&ds=cpu,bogomips".to_string(),
                String::new(),
            ),
            (
                "node_rrd_refuse_colours",
                Method::GET,
                "/nodes/pve2/rrd?timeframe=hour&ds=cpu,iowait,loadavg".to_string(),
                String::new(),
            ),
            (
                "metrics_export_refuse_nodes",
                Method::GET,
                "/cluster/metrics/export?node-list=pve1,nowhere".to_string(),
                String::new(),
            ),
        ] {
            if name == "metrics_export_refuse_nodes" && version == PveVersion::V8_4 {
                continue;
            }
            let (status, body) = world.send(method, &path, &form);
            insta::assert_json_snapshot!(name, json!({ "status": status, "body": body }));
        }
    });
}

#[test]
fn apt_repositories_after_changes_9_2() {
    apt_repositories_after_changes(PveVersion::V9_2);
}

#[test]
fn apt_repositories_after_changes_9_1() {
    apt_repositories_after_changes(PveVersion::V9_1);
}

#[test]
fn apt_repositories_after_changes_8_4() {
    apt_repositories_after_changes(PveVersion::V8_4);
}

/// `/cluster/resources` as a caller without Sys.Audit on the nodes (the
/// privilege-separated `ci@pve!runner`, whose PVEAuditor on `/nodes`
/// does not propagate): each node with its name, status and level, no
/// figures (`extract_node_stats` with `exclude_stats`).
fn cluster_resources_without_node_audit(version: PveVersion) {
    let world = World::new(version);
    world.token.set(Some(
        "PVEAPIToken=ci@pve!runner=7d1c4a52-0e2b-4b8f-9a61-3f5e8d2c9b10",
    ));
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(release(version));
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings.bind(|| {
        let (status, body) = world.send(Method::GET, "/cluster/resources?type=node", "");
        assert_eq!(status, 200, "{body}");
        assert!(
            fits(version, "/cluster/resources", &body["data"]).is_ok(),
            "{body}"
        );
        let rows = body["data"].as_array().expect("a list");
        assert!(!rows.is_empty(), "{body}");
        assert!(rows.iter().all(|r| r.get("maxmem").is_none()), "{body}");
        insta::assert_json_snapshot!("cluster_resources_nodes_without_sys_audit", body);
    });
}

#[test]
fn cluster_resources_without_node_audit_9_2() {
    cluster_resources_without_node_audit(PveVersion::V9_2);
}

#[test]
fn cluster_resources_without_node_audit_9_1() {
    cluster_resources_without_node_audit(PveVersion::V9_1);
}

#[test]
fn cluster_resources_without_node_audit_8_4() {
    cluster_resources_without_node_audit(PveVersion::V8_4);
}

/// A Ceph OSD made with its `block.db` on another disk:
/// the task's log, the disks as the node lists them, the OSD's metadata,
/// its volumes and the OSD tree; and the refusals of the checks.
fn ceph_osd_devices_after_creation(version: PveVersion) {
    let world = World::new(version);
    let post = Method::POST;
    world.advance(60);
    let with_db = world.task(
        post.clone(),
        "/nodes/pve1/ceph/osd",
        "dev=%2Fdev%2Fsdb&db_dev=%2Fdev%2Fnvme0n1&db_dev_size=16",
    );
    world.advance(60);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(release(version));
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings.bind(|| {
        let log = format!("/nodes/pve1/tasks/{with_db}/log?limit=100");
        for (name, path) in [
            ("ceph_osd_db_task_log", log.as_str()),
            ("ceph_osd_db_disks", "/nodes/pve1/disks/list"),
            ("ceph_osd_db_metadata", "/nodes/pve1/ceph/osd/2/metadata"),
            (
                "ceph_osd_db_lv_info",
                "/nodes/pve1/ceph/osd/2/lv-info?type=db",
            ),
            ("ceph_osd_db_tree", "/nodes/pve1/ceph/osd"),
        ] {
            let (status, body) = world.send(Method::GET, path, "");
            assert_eq!(status, 200, "GET {path}: {body}");
            insta::assert_json_snapshot!(name, body);
        }
        for (name, method, path, form) in [
            (
                "ceph_osd_refuse_per_device_with_db",
                post.clone(),
                "/nodes/pve1/ceph/osd",
                "dev=%2Fdev%2Fsdb&db_dev=%2Fdev%2Fnvme0n1&osds-per-device=2",
            ),
            (
                "ceph_osd_refuse_twice_the_device",
                post.clone(),
                "/nodes/pve1/ceph/osd",
                "dev=%2Fdev%2Fsdc&db_dev=%2Fdev%2Fsdc",
            ),
            (
                "ceph_osd_refuse_dev_in_use",
                post.clone(),
                "/nodes/pve1/ceph/osd",
                "dev=%2Fdev%2Fsdb",
            ),
            (
                "ceph_osd_refuse_no_wal",
                Method::GET,
                "/nodes/pve1/ceph/osd/2/lv-info?type=wal",
                "",
            ),
        ] {
            let (status, body) = world.send(method, path, form);
            insta::assert_json_snapshot!(name, json!({ "status": status, "body": body }));
        }
    });
}

#[test]
fn ceph_osd_devices_after_creation_9_2() {
    ceph_osd_devices_after_creation(PveVersion::V9_2);
}
