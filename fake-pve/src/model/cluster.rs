//! The whole emulated cluster: members, storages, guests, users and tasks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::access::Access;
use super::faults::Faults;
use super::guests::Guests;
use super::network::Networks;
use super::nodes::{Node, Nodes};
pub use super::qemu::Vm;
use super::storage::{Storages, Volumes};
use super::tasks::{Spawn, Task, TaskEffect, Tasks, Worker};
use super::{PveVersion, Result};

/// The lowest VMID `/cluster/nextid` hands out.
pub const NEXTID_LOWER: u32 = 100;
/// One past the highest VMID `/cluster/nextid` hands out.
pub const NEXTID_UPPER: u32 = 1_000_000;

/// A storage definition of `storage.cfg`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Storage {
    /// Storage id (`local-lvm`).
    pub storage: String,
    /// Plugin type: `dir`, `lvmthin`, `lvm`, `zfspool`, `nfs`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// Content types (`images`, `rootdir`, `iso`, ...), in order.
    pub content: Vec<String>,
    /// Whether every node sees the same storage.
    pub shared: bool,
    /// Nodes it is restricted to; `None` for all.
    pub nodes: Option<Vec<String>>,
    /// Disabled storages are configured but not active.
    pub disable: bool,
    /// Capacity in bytes.
    pub total: u64,
    /// Bytes in use before any volume the emulator allocates.
    pub used: u64,
    /// Other options (`path`, `thinpool`, `vgname`, `server`, `export`...).
    pub options: BTreeMap<String, String>,
}

impl Storage {
    /// Whether the storage is configured for `node` and enabled.
    pub fn active_on(&self, node: &str) -> bool {
        !self.disable
            && self
                .nodes
                .as_ref()
                .is_none_or(|n| n.iter().any(|x| x == node))
    }
}

/// One emulated cluster (or standalone node): the areas of PVE it is
/// made of, joined.
///
/// Each area keeps its state private and owns its operations. An
/// operation that spans areas is a function of the area it is about that
/// takes explicit borrows of the areas it needs; the areas are fields
/// visible to the crate so that a caller can borrow several at once
/// (`ha::round(&mut c.ha, &c.nodes, &c.guests, ..)`).
/// `Cluster` itself keeps the joining: building it from a saved world,
/// saving it, the task clock and applying what a task does when it ends.
///
/// A saved world (state documents, snapshots of a data directory) keeps
/// it in the shape of [`ClusterDoc`].
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The release the cluster impersonates.
    pub(crate) version: PveVersion,
    /// The members: the cluster's name, the local node, every node.
    pub(crate) nodes: Nodes,
    /// `storage.cfg` and the volumes.
    pub(crate) storage: Storages,
    /// Users and tokens.
    pub(crate) access: Access,
    /// Every guest, with what is kept per guest.
    pub(crate) guests: Guests,
    /// Every task, with its lookups.
    pub(crate) tasks: Tasks,
    /// Fault rules in force (`/_fake/faults`, a scenario's `faults:`).
    pub(crate) faults: Faults,
    /// Network configuration per node (`/etc/network/interfaces`).
    pub(crate) network: Networks,
    /// Backup archives and backup jobs.
    pub(crate) backups: super::backup::Backups,
    /// The Proxmox Backup Servers storages reach, and their snapshots.
    pub(crate) pbs: super::pbs::Pbs,
    /// `datacenter.cfg`'s options.
    pub(crate) datacenter: super::datacenter::Datacenter,
    /// SDN configuration (pending and running) and the PVE IPAM.
    pub(crate) sdn: super::sdn::Sdn,
    /// `cluster.fw`, `host.fw` and the guests' `<vmid>.fw`.
    pub(crate) firewall: super::firewall::Firewall,
    /// HA resources, groups, rules and the manager's state.
    pub(crate) ha: super::ha::Ha,
    /// Each node's disks, devices, updates, scan servers, certificate.
    pub(crate) hardware: super::node_hw::Hardware,
    /// Storage replication: `replication.cfg`, the state, the job logs.
    pub(crate) replication: super::replication::Replication,
    /// `status.cfg`'s metric servers.
    pub(crate) metrics: super::metrics::Metrics,
    /// The cluster log's own entries (logins); not part of a saved
    /// world.
    pub(crate) clusterlog: super::clusterlog::ClusterLog,
    /// The console proxies waiting for their connection; not part of a
    /// saved world (their tasks end with the process).
    pub(crate) consoles: super::console::Consoles,
    /// The remote migrations coming in (`mtunnel` workers); not part of a
    /// saved world (a tunnel ends with its connection).
    pub(crate) tunnels: super::mtunnel::Tunnels,
    /// What `POST /cluster/config` wrote into `corosync.conf`.
    pub(crate) corosync: super::corosync::Corosync,
    /// Each node's own files (config, DNS, hosts, time zone), services,
    /// subscription and journal.
    pub(crate) node_services: super::node_services::NodeServices,
    /// `virtual-guest/cpu-models.conf`: the custom CPU models.
    pub(crate) cpu_models: super::qemu::cpu_models::CpuModels,
    /// Ceph: packages, `ceph.conf`, daemons, flags.
    pub(crate) ceph: super::ceph::Ceph,
    /// ACME accounts and challenge plugins (`/etc/pve/priv/acme/`).
    pub(crate) acme: super::acme::Acme,
    /// The certificate the local node's pveproxy serves from its next
    /// restart, set when a task restarted it (`Some(None)`: its own
    /// again); taken by the listener. Not part of a saved world.
    pub(crate) pveproxy_restart: Option<Option<super::node_hw::CustomCert>>,
    /// `notifications.cfg`: targets and matchers, and the outbox.
    pub(crate) notifications: super::notify::Notifications,
    /// `mapping/{pci,usb,dir}.cfg`: the resource mappings.
    pub(crate) mappings: super::mapping::Mappings,
}

/// A [`Cluster`] as a saved world keeps it: every area's state as plain
/// data, in the layout state documents have always had.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterDoc {
    /// The release the cluster impersonates.
    pub version: PveVersion,
    /// The cluster name; `None` for a standalone node.
    pub name: Option<String>,
    /// The node clients connect to.
    pub local_node: String,
    /// Members, in `nodelist` order.
    pub nodes: Vec<Node>,
    /// `storage.cfg`.
    pub storages: Vec<Storage>,
    /// Guests by VMID.
    pub vms: BTreeMap<u32, Vm>,
    /// Users and tokens.
    pub(super) access: Access,
    /// Volumes allocated on the storages.
    #[serde(default)]
    pub volumes: Volumes,
    /// Every task, oldest first.
    pub tasks: Vec<Task>,
    /// The next worker pid.
    pub next_pid: u32,
    /// Fault rules in force.
    #[serde(default)]
    pub(super) faults: Faults,
    /// Network configuration per node.
    #[serde(default)]
    pub network: BTreeMap<String, super::network::NodeNetwork>,
    /// Guest-agent state per VM.
    #[serde(default)]
    pub guests: BTreeMap<u32, super::agent::Guest>,
    /// LXC containers by VMID.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cts: BTreeMap<u32, super::lxc::Ct>,
    /// Backup archives and backup jobs.
    #[serde(default, skip_serializing_if = "super::backup::Backups::is_empty")]
    pub backups: super::backup::Backups,
    /// The Proxmox Backup Servers and their snapshots.
    #[serde(default, skip_serializing_if = "super::pbs::Pbs::is_empty")]
    pub pbs: super::pbs::Pbs,
    /// `datacenter.cfg`'s options.
    #[serde(
        default,
        skip_serializing_if = "super::datacenter::Datacenter::is_empty"
    )]
    pub datacenter: super::datacenter::Datacenter,
    /// SDN configuration (pending and running) and the PVE IPAM.
    #[serde(default, skip_serializing_if = "super::sdn::Sdn::is_empty")]
    pub sdn: super::sdn::Sdn,
    /// The firewall configuration.
    #[serde(default, skip_serializing_if = "super::firewall::Firewall::is_empty")]
    pub firewall: super::firewall::Firewall,
    /// HA resources, groups, rules and the manager's state.
    #[serde(default, skip_serializing_if = "super::ha::Ha::is_empty")]
    pub ha: super::ha::Ha,
    /// Each node's disks, devices, updates, scan servers, certificate.
    #[serde(default, skip_serializing_if = "super::node_hw::Hardware::is_empty")]
    pub hardware: super::node_hw::Hardware,
    /// Storage replication jobs, their state and logs.
    #[serde(
        default,
        skip_serializing_if = "super::replication::Replication::is_empty"
    )]
    pub replication: super::replication::Replication,
    /// The metric servers.
    #[serde(default, skip_serializing_if = "super::metrics::Metrics::is_empty")]
    pub metrics: super::metrics::Metrics,
    /// What `POST /cluster/config` wrote into `corosync.conf`.
    #[serde(default, skip_serializing_if = "super::corosync::Corosync::is_empty")]
    pub corosync: super::corosync::Corosync,
    /// Each node's own files, services, subscription and journal, for
    /// the nodes where they differ from a fresh install's.
    #[serde(
        default,
        skip_serializing_if = "super::node_services::NodeServices::is_empty"
    )]
    pub node_services: super::node_services::NodeServices,
    /// The custom CPU models.
    #[serde(
        default,
        skip_serializing_if = "super::qemu::cpu_models::CpuModels::is_empty"
    )]
    pub cpu_models: super::qemu::cpu_models::CpuModels,
    /// Ceph.
    #[serde(default, skip_serializing_if = "super::ceph::Ceph::is_empty")]
    pub ceph: super::ceph::Ceph,
    /// ACME accounts and challenge plugins.
    #[serde(default, skip_serializing_if = "super::acme::Acme::is_empty")]
    pub acme: super::acme::Acme,
    /// The notification targets and matchers (not the outbox).
    #[serde(
        default,
        skip_serializing_if = "super::notify::Notifications::is_empty"
    )]
    pub notifications: super::notify::Notifications,
    /// The resource mappings.
    #[serde(default, skip_serializing_if = "super::mapping::Mappings::is_empty")]
    pub mappings: super::mapping::Mappings,
}

/// [`ClusterDoc`] by reference, so that saving a world copies nothing.
#[derive(Serialize)]
struct ClusterDocRef<'a> {
    version: PveVersion,
    name: Option<&'a String>,
    local_node: &'a str,
    nodes: &'a [Node],
    storages: &'a [Storage],
    vms: &'a BTreeMap<u32, Vm>,
    access: &'a Access,
    volumes: &'a Volumes,
    tasks: &'a super::chunked::Chunked<Task>,
    next_pid: u32,
    faults: &'a Faults,
    network: &'a BTreeMap<String, super::network::NodeNetwork>,
    guests: &'a BTreeMap<u32, super::agent::Guest>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    cts: &'a BTreeMap<u32, super::lxc::Ct>,
    #[serde(skip_serializing_if = "super::backup::Backups::is_empty")]
    backups: &'a super::backup::Backups,
    #[serde(skip_serializing_if = "super::pbs::Pbs::is_empty")]
    pbs: &'a super::pbs::Pbs,
    #[serde(skip_serializing_if = "super::datacenter::Datacenter::is_empty")]
    datacenter: &'a super::datacenter::Datacenter,
    #[serde(skip_serializing_if = "super::sdn::Sdn::is_empty")]
    sdn: &'a super::sdn::Sdn,
    #[serde(skip_serializing_if = "super::firewall::Firewall::is_empty")]
    firewall: &'a super::firewall::Firewall,
    #[serde(skip_serializing_if = "super::ha::Ha::is_empty")]
    ha: &'a super::ha::Ha,
    #[serde(skip_serializing_if = "super::node_hw::Hardware::is_empty")]
    hardware: &'a super::node_hw::Hardware,
    #[serde(skip_serializing_if = "super::replication::Replication::is_empty")]
    replication: &'a super::replication::Replication,
    #[serde(skip_serializing_if = "super::metrics::Metrics::is_empty")]
    metrics: &'a super::metrics::Metrics,
    #[serde(skip_serializing_if = "super::corosync::Corosync::is_empty")]
    corosync: &'a super::corosync::Corosync,
    #[serde(skip_serializing_if = "super::node_services::NodeServices::is_empty")]
    node_services: &'a super::node_services::NodeServices,
    #[serde(skip_serializing_if = "super::qemu::cpu_models::CpuModels::is_empty")]
    cpu_models: &'a super::qemu::cpu_models::CpuModels,
    #[serde(skip_serializing_if = "super::ceph::Ceph::is_empty")]
    ceph: &'a super::ceph::Ceph,
    #[serde(skip_serializing_if = "super::acme::Acme::is_empty")]
    acme: &'a super::acme::Acme,
    #[serde(skip_serializing_if = "super::notify::Notifications::is_empty")]
    notifications: &'a super::notify::Notifications,
    #[serde(skip_serializing_if = "super::mapping::Mappings::is_empty")]
    mappings: &'a super::mapping::Mappings,
}

impl Serialize for Cluster {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let (tasks, next_pid) = self.tasks.parts();
        let (vms, guests) = self.guests.parts();
        ClusterDocRef {
            version: self.version,
            name: self.nodes.cluster_name(),
            local_node: self.nodes.local(),
            nodes: self.nodes.members(),
            storages: self.storage.cfg(),
            vms,
            access: &self.access,
            volumes: self.storage.volumes(),
            tasks,
            next_pid,
            faults: &self.faults,
            network: self.network.parts(),
            guests,
            cts: self.guests.cts(),
            backups: &self.backups,
            pbs: &self.pbs,
            datacenter: &self.datacenter,
            sdn: &self.sdn,
            firewall: &self.firewall,
            ha: &self.ha,
            hardware: &self.hardware,
            replication: &self.replication,
            metrics: &self.metrics,
            corosync: &self.corosync,
            node_services: &self.node_services,
            cpu_models: &self.cpu_models,
            ceph: &self.ceph,
            acme: &self.acme,
            notifications: &self.notifications,
            mappings: &self.mappings,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Cluster {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        ClusterDoc::deserialize(d).map(Cluster::from)
    }
}

impl From<ClusterDoc> for Cluster {
    fn from(d: ClusterDoc) -> Self {
        Self {
            version: d.version,
            nodes: Nodes::new(d.name, d.local_node, d.nodes),
            storage: Storages::new(d.storages, d.volumes),
            access: d.access,
            guests: Guests::with_containers(d.vms, d.cts, d.guests),
            tasks: Tasks::new(d.tasks, d.next_pid),
            faults: d.faults,
            network: Networks::new(d.network),
            backups: d.backups,
            pbs: d.pbs,
            datacenter: d.datacenter,
            sdn: d.sdn,
            firewall: d.firewall,
            ha: d.ha,
            hardware: d.hardware,
            replication: d.replication,
            metrics: d.metrics,
            // pmxcfs keeps its log in memory: a saved world starts
            // without the logins (the journal does not replay them).
            clusterlog: Default::default(),
            consoles: Default::default(),
            tunnels: Default::default(),
            corosync: d.corosync,
            node_services: d.node_services,
            cpu_models: d.cpu_models,
            ceph: d.ceph,
            acme: d.acme,
            pveproxy_restart: None,
            notifications: d.notifications,
            mappings: d.mappings,
        }
    }
}

/// A node's directories: the system's, its mount units', the paths of
/// the storages active on it.
pub(crate) fn node_fs(
    hardware: &super::node_hw::Hardware,
    storages: &[Storage],
    node: &str,
) -> super::mapping::check::NodeFs {
    let paths = storages
        .iter()
        .filter(|s| s.active_on(node))
        .filter_map(|s| s.options.get("path").cloned());
    super::mapping::check::NodeFs::of(&hardware.node(node), paths)
}

impl Cluster {
    /// The members.
    pub fn nodes(&self) -> &Nodes {
        &self.nodes
    }

    /// The members, to change a node's own settings.
    pub fn nodes_mut(&mut self) -> &mut Nodes {
        &mut self.nodes
    }

    /// `datacenter.cfg`'s options.
    pub fn datacenter(&self) -> &super::datacenter::Datacenter {
        &self.datacenter
    }

    /// `datacenter.cfg`'s options, to change them.
    pub fn datacenter_mut(&mut self) -> &mut super::datacenter::Datacenter {
        &mut self.datacenter
    }

    /// The tasks.
    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// The network configuration of every node.
    pub fn networks(&self) -> &Networks {
        &self.network
    }

    /// The release the cluster impersonates.
    pub fn version(&self) -> PveVersion {
        self.version
    }

    /// Users, groups, roles, ACLs, tokens and realms.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// Users, groups, roles, ACLs, tokens and realms, to change them.
    pub fn access_mut(&mut self) -> &mut Access {
        &mut self.access
    }

    /// The fault rules in force.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The fault rules in force, to change them.
    pub fn faults_mut(&mut self) -> &mut Faults {
        &mut self.faults
    }

    /// The firewall configuration.
    pub fn firewall(&self) -> &super::firewall::Firewall {
        &self.firewall
    }

    /// The firewall configuration, to change it.
    pub fn firewall_mut(&mut self) -> &mut super::firewall::Firewall {
        &mut self.firewall
    }

    /// The storages and their volumes.
    pub fn storages(&self) -> &Storages {
        &self.storage
    }

    /// The storages and their volumes, to change.
    pub fn storages_mut(&mut self) -> &mut Storages {
        &mut self.storage
    }

    /// The custom CPU models (`cpu-models.conf`).
    pub fn cpu_models(&self) -> &super::qemu::cpu_models::CpuModels {
        &self.cpu_models
    }

    /// Ceph.
    pub fn ceph(&self) -> &super::ceph::Ceph {
        &self.ceph
    }

    /// Ceph, to change it.
    pub fn ceph_mut(&mut self) -> &mut super::ceph::Ceph {
        &mut self.ceph
    }

    /// The custom CPU models, to change.
    pub fn cpu_models_mut(&mut self) -> &mut super::qemu::cpu_models::CpuModels {
        &mut self.cpu_models
    }

    /// ACME accounts and challenge plugins.
    pub fn acme(&self) -> &super::acme::Acme {
        &self.acme
    }

    /// ACME accounts and challenge plugins, to change.
    pub fn acme_mut(&mut self) -> &mut super::acme::Acme {
        &mut self.acme
    }

    /// The certificate pveproxy serves since a task restarted it, once
    /// (`Some(None)`: the node's own).
    pub fn take_pveproxy_restart(&mut self) -> Option<Option<super::node_hw::CustomCert>> {
        self.pveproxy_restart.take()
    }

    /// The notification targets and matchers, and the outbox.
    pub fn notifications(&self) -> &super::notify::Notifications {
        &self.notifications
    }

    /// The notification targets and matchers, to change.
    pub fn notifications_mut(&mut self) -> &mut super::notify::Notifications {
        &mut self.notifications
    }

    /// The resource mappings.
    pub fn mappings(&self) -> &super::mapping::Mappings {
        &self.mappings
    }

    /// The resource mappings, to change them.
    pub fn mappings_mut(&mut self) -> &mut super::mapping::Mappings {
        &mut self.mappings
    }

    /// What a node's mapped devices and directories are checked
    /// against: its devices, and its directories (the system's, its
    /// mount units', its storages' paths).
    pub fn node_fs(&self, node: &str) -> super::mapping::check::NodeFs {
        node_fs(&self.hardware, self.storage.cfg(), node)
    }

    /// Every node's hardware.
    pub fn hardware(&self) -> &super::node_hw::Hardware {
        &self.hardware
    }

    /// Every node's hardware, to change.
    pub fn hardware_mut(&mut self) -> &mut super::node_hw::Hardware {
        &mut self.hardware
    }

    /// The guests.
    pub fn guests(&self) -> &Guests {
        &self.guests
    }

    /// The areas a VM's operations read and change.
    pub fn vm_ops(&mut self) -> super::qemu::VmOps<'_> {
        super::qemu::VmOps {
            next_pid: self.tasks.next_pid(),
            guests: &mut self.guests,
            storage: &mut self.storage,
            access: &mut self.access,
            sdn: &mut self.sdn,
            firewall: &mut self.firewall,
            nodes: &self.nodes,
            network: &self.network,
            datacenter: &self.datacenter,
            mappings: &self.mappings,
            hardware: &self.hardware,
            version: self.version,
        }
    }

    /// What a VM's status reads beside the VM.
    pub fn vm_status_reader(&self) -> super::qemu::VmStatusReader<'_> {
        super::qemu::VmStatusReader {
            nodes: &self.nodes,
            storage: &self.storage,
            ha: &self.ha,
            version: self.version,
        }
    }

    /// The areas a container's operations read and change.
    pub fn ct_ops(&mut self) -> super::lxc::CtOps<'_> {
        super::lxc::CtOps {
            guests: &mut self.guests,
            storage: &mut self.storage,
            access: &mut self.access,
            sdn: &self.sdn,
            firewall: &mut self.firewall,
            nodes: &self.nodes,
            backups: &self.backups,
            pbs: &self.pbs,
            version: self.version,
        }
    }

    /// The backups kept: archives and jobs.
    pub fn backups(&self) -> &super::backup::Backups {
        &self.backups
    }

    /// The areas a backup's steps read and change.
    pub fn backup_ops(&mut self) -> super::backup::BackupOps<'_> {
        super::backup::BackupOps {
            guests: &mut self.guests,
            storage: &mut self.storage,
            backups: &mut self.backups,
            pbs: &mut self.pbs,
            access: &mut self.access,
            sdn: &self.sdn,
            nodes: &self.nodes,
            datacenter: &self.datacenter,
            version: self.version,
        }
    }

    /// What the backup answers read.
    pub fn backup_reader(&self) -> super::backup::BackupReader<'_> {
        super::backup::BackupReader {
            guests: &self.guests,
            storage: &self.storage,
            backups: &self.backups,
            pbs: &self.pbs,
            access: &self.access,
        }
    }

    /// The replication configuration and state.
    pub fn replication(&self) -> &super::replication::Replication {
        &self.replication
    }

    /// The areas a replication reads and changes.
    pub fn replication_ops(&mut self) -> super::replication::ReplicationOps<'_> {
        super::replication::ReplicationOps {
            replication: &mut self.replication,
            guests: &self.guests,
            storage: &self.storage,
            nodes: &self.nodes,
        }
    }

    /// What the replication answers read.
    pub fn replication_reader(&self) -> super::replication::ReplicationReader<'_> {
        super::replication::ReplicationReader {
            replication: &self.replication,
            guests: &self.guests,
            storage: &self.storage,
            nodes: &self.nodes,
        }
    }

    /// The areas a guest's permission checks read.
    pub fn perms(&self) -> super::guest_perm::Perms<'_> {
        super::guest_perm::Perms::of(
            &self.access,
            &self.storage,
            &self.sdn,
            &self.guests,
            self.version,
        )
    }

    /// The areas a snapshot step reads and changes.
    pub fn snapshots(&mut self) -> super::guest::snapshot::Snapshots<'_> {
        super::guest::snapshot::Snapshots {
            guests: &mut self.guests,
            storage: &mut self.storage,
            version: self.version,
        }
    }

    /// The SDN configuration.
    pub fn sdn(&self) -> &super::sdn::Sdn {
        &self.sdn
    }

    /// The SDN configuration, to change.
    pub fn sdn_mut(&mut self) -> &mut super::sdn::Sdn {
        &mut self.sdn
    }

    /// The HA configuration and manager.
    pub fn ha(&self) -> &super::ha::Ha {
        &self.ha
    }

    /// The HA configuration and manager, to change.
    pub fn ha_mut(&mut self) -> &mut super::ha::Ha {
        &mut self.ha
    }

    /// The areas `/cluster/resources` reads, borrowed at once.
    pub fn resources(&self) -> super::resources::Resources<'_> {
        super::resources::Resources {
            version: self.version,
            nodes: &self.nodes,
            guests: &self.guests,
            storage: &self.storage,
            access: &self.access,
            ha: &self.ha,
            sdn: &self.sdn,
        }
    }

    /// Starts a task on `node` for `user` and returns its UPID. A zero
    /// `duration_ms` ends it at once.
    pub fn start_task(
        &mut self,
        node: &str,
        worker: Worker,
        user: &str,
        now_ms: i64,
        duration_ms: u64,
    ) -> String {
        let upid = self.spawn_task(node, worker, user, now_ms, duration_ms);
        self.advance(now_ms);
        upid
    }

    /// Records a running task without ending any; used by task effects
    /// that start a follow-up task (a create with `start=1`, a reboot).
    pub(crate) fn spawn_task(
        &mut self,
        node: &str,
        worker: Worker,
        user: &str,
        now_ms: i64,
        duration_ms: u64,
    ) -> String {
        let now = now_ms.div_euclid(1000);
        let boot = self
            .nodes
            .iter()
            .find(|n| n.name == node)
            .map_or(now, |n| n.boot_time);
        let mut worker = worker;
        let fault = self.faults.on_task(&worker.kind, user);
        if let Some((_, error)) = &fault {
            worker.outcome = Err(super::tasks::TaskFailure(error.clone()));
        }
        let at = Spawn {
            node,
            boot,
            user,
            now_ms,
            duration_ms,
        };
        let upid = self.tasks.spawn(at, worker);
        self.node_services.log_task_start(
            &self.nodes,
            self.version,
            &self.tasks,
            self.tasks.len() - 1,
        );
        if let Some((rule, _)) = fault {
            tracing::warn!(rule, task = %upid, "injected task fault");
        }
        upid
    }

    /// Gives the running task `upid` a new plan: `worker` at `until_ms`
    /// (a console's task held while its connection lasts, then ended
    /// when it closes). The tasks due by `now_ms` then end.
    ///
    /// # Errors
    /// As [`Tasks::get`].
    pub fn replan_task(
        &mut self,
        upid: &str,
        until_ms: i64,
        worker: Worker,
        now_ms: i64,
    ) -> super::Result<()> {
        self.tasks.replan(upid, until_ms, worker)?;
        self.advance(now_ms);
        Ok(())
    }

    /// Adds lines to the log of a running task (a worker whose log grows
    /// as it goes, as a migration's); answers whether it still runs.
    pub fn append_task_log(&mut self, upid: &str, lines: Vec<String>) -> bool {
        self.tasks.append(upid, lines)
    }

    /// Ends every task whose time has come, in the order they end, and
    /// applies what they do.
    pub fn advance(&mut self, now_ms: i64) {
        // The HA manager's rounds interleave with the tasks: what ends
        // before a round is seen by it.
        while let Some(at_ms) = self.ha.due_round(now_ms) {
            self.advance_tasks(at_ms);
            self.ha_round(at_ms);
        }
        self.advance_tasks(now_ms);
    }

    /// Runs an HA manager round at `at_ms` and starts the LRMs' tasks.
    fn ha_round(&mut self, at_ms: i64) {
        use super::ha::LrmJob;
        let now = at_ms.div_euclid(1000);
        let tasks = super::ha::round(&mut self.ha, &self.nodes, &self.guests, self.version, at_ms);
        for t in tasks {
            let worker = match t.job {
                LrmJob::Worker(w) => Ok(*w),
                LrmJob::MigrateVm { target, online } => {
                    self.vm_ops().migrate_vm(super::qemu::MigrateRequest {
                        node: t.node.clone(),
                        vmid: t.vmid,
                        target,
                        online,
                        with_local_disks: false,
                        targetstorage: None,
                        who: super::access::AuthId::User("root@pam".into()),
                        options: Default::default(),
                        now,
                    })
                }
                LrmJob::MigrateCt { target, restart } => self.ct_ops().migrate_ct(
                    &t.node,
                    t.vmid,
                    super::lxc::CtMigrateJob {
                        target,
                        restart,
                        timeout: 180,
                        online: false,
                        target_storage: None,
                    },
                ),
            };
            match worker {
                Ok(w) => {
                    self.spawn_task(
                        &t.node,
                        w,
                        "root@pam",
                        at_ms,
                        super::ha::manager::LRM_TASK_MS,
                    );
                }
                Err(_) => self.ha.lrm_failed(&t.sid),
            }
        }
    }

    /// Ends every task due by `now_ms` (see [`Cluster::advance`]).
    fn advance_tasks(&mut self, now_ms: i64) {
        self.run_due_boots(now_ms);
        self.run_due_jobs(now_ms);
        for failure in self.replication_ops().run_replication(now_ms) {
            self.notify_replication(&failure);
        }
        // pvescheduler's realm syncs: root@pam's tasks on the local node.
        for (worker, at_ms) in self.access.due_realm_syncs(now_ms) {
            let node = self.nodes.local().to_string();
            self.spawn_task(&node, worker, "root@pam", at_ms, 0);
        }
        while let Some((i, until_ms)) = self.tasks.next_due(now_ms) {
            let Some(task) = self.tasks.at(i) else {
                break;
            };
            let succeeds = task.worker.as_ref().is_none_or(|w| w.outcome.is_ok());
            let fault = task
                .worker
                .as_ref()
                .and_then(|w| w.outcome.as_ref().err().map(|f| f.0.clone()));
            // What the task does happens once: it is taken, not copied.
            let effect = self.tasks.take_effect(i);
            // A backup notifies at its end (`VZDump::send_notification`).
            let backup = match &effect {
                TaskEffect::Backup(super::backup::BackupOp::Dump(job)) => {
                    Some((job.node.clone(), job.notice.clone()))
                }
                _ => None,
            };
            let outcome = if succeeds {
                self.apply(effect, until_ms)
            } else {
                self.abort(&effect);
                Ok(Vec::new())
            };
            let end = until_ms.div_euclid(1000);
            if let Some((node, notice)) = backup {
                let (lines, error) = match &outcome {
                    Ok(lines) => (lines.as_slice(), fault.as_deref()),
                    Err((lines, e)) => (lines.as_slice(), Some(e.as_str())),
                };
                self.notify_backup(&node, &notice, error, lines, end);
            }
            match outcome {
                Ok(lines) => self.tasks.finish(i, end, lines, None),
                Err((lines, e)) => self.tasks.finish(i, end, lines, Some(e)),
            }
            self.node_services
                .log_task_end(&self.nodes, self.version, &self.tasks, i);
        }
    }

    /// Ends every running task as a node crash does (`unexpected status`
    /// at `now`, epoch seconds), without its effect; answers how many.
    pub fn interrupt_running(&mut self, now: i64) -> usize {
        self.tasks.interrupt_running(now)
    }

    /// `DELETE .../tasks/{upid}`: a running task is interrupted and ends
    /// with an error; a stopped one is left as it is.
    ///
    /// # Errors
    /// As [`Tasks::get`].
    pub fn stop_task(&mut self, upid: &str, now: i64) -> Result<()> {
        if let Some(effect) = self.tasks.interrupt(upid, now)? {
            self.abort(&effect);
            let at = self.tasks.iter().position(|t| t.upid_str == upid);
            if let Some(i) = at {
                self.node_services
                    .log_task_end(&self.nodes, self.version, &self.tasks, i);
            }
        }
        Ok(())
    }

    /// `GET /nodes/{node}/storage/{storage}/content`: the storage's
    /// content, a container's volumes as `rootdir`.
    ///
    /// # Errors
    /// As [`Storages::content_list`].
    pub fn content_list(
        &self,
        sid: &str,
        node: &str,
        content: Option<&str>,
        vmid: Option<u32>,
    ) -> Result<Vec<super::storage::content::ContentItem>> {
        if let Some(s) = self.storage.find(sid).filter(|s| s.kind == "pbs") {
            self.storage.usable_storage(sid, node)?;
            return self.pbs.content_list(s, content, vmid);
        }
        let is_ct = |id: u32| self.guests.ct_by_id(id).is_some();
        let mut items = self
            .storage
            .content_list(sid, node, content, vmid, &is_ct)?;
        // 9.2 (pve-storage's LVM `list_images`): a qcow2 volume whose
        // logical volume is not active shows the volume's size as
        // `approximate-size`. A guest's volumes are active while it runs.
        let lvm = self.storage.find(sid).is_some_and(|s| s.kind == "lvm");
        if self.version == PveVersion::V9_2 && lvm {
            let running = |id: u32| {
                self.guests.get(&id).is_some_and(|g| g.running())
                    || self.guests.ct_by_id(id).is_some_and(|c| c.running())
            };
            for item in &mut items {
                if let super::storage::content::ContentItem::Image(i) = item
                    && i.format == "qcow2"
                    && !running(i.vmid)
                    && let Some(size) = i.size.take()
                {
                    i.approximate_size = Some(super::storage::lvm_qcow2_lv_size(size));
                }
            }
        }
        Ok(items)
    }

    /// Applies what a finished storage task does (see
    /// [`Storages::apply_volume_change`]); a dropped backup takes its
    /// archive's content along.
    pub(super) fn apply_volume_change(&mut self, node: &str, change: super::tasks::VolumeChange) {
        match change {
            super::tasks::VolumeChange::Drop { storage, name } => {
                self.backup_ops().drop_volume(&storage, node, &name);
            }
            put => self.storage.apply_volume_change(node, put),
        }
    }
}
