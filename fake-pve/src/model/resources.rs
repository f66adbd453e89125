//! `GET /cluster/resources` (pve-manager `API2/Cluster.pm` `resources`):
//! the rows of the pools, guests, nodes, storages and running zones, in
//! the order PVE lists them, kept when the caller may audit them.
//!
//! The rows are typed and borrow from the cluster: a cluster of 100,000
//! guests is listed in tens of milliseconds. `api/cluster/view.rs`
//! writes them as JSON.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Number;

use super::PveVersion;
use super::access::{Access, AuthId};
use super::cluster::Storage;
use super::guests::Guests;
use super::ha::Ha;
use super::lxc::Ct;
use super::nodes::{Node, NodeStatus, Nodes};
use super::qemu::Vm;
use super::sdn::Sdn;
use super::sdn::cluster::ZoneResource;
use super::storage::Storages;

/// Per node, the memory of its running guests and how many run
/// ([`Resources::guest_loads`]), looked up by a fast hash.
pub(crate) type GuestLoads<'a> =
    std::collections::HashMap<&'a str, (u64, usize), foldhash::fast::FixedState>;

/// Adds `running` guests of `mem` bytes to `node`'s load (a node the
/// cluster does not have is left out).
pub(crate) fn add_load(loads: &mut GuestLoads<'_>, node: &str, mem: u64, running: usize) {
    if let Some((m, k)) = loads.get_mut(node) {
        *m += mem;
        *k += running;
    }
}

/// The areas the cluster-wide listing reads, borrowed at once.
#[derive(Clone, Copy)]
pub struct Resources<'a> {
    /// The release the cluster impersonates.
    pub version: PveVersion,
    /// The members.
    pub nodes: &'a Nodes,
    /// The guests.
    pub guests: &'a Guests,
    /// The storages and their volumes.
    pub storage: &'a Storages,
    /// Pools and permissions.
    pub access: &'a Access,
    /// The HA states.
    pub ha: &'a Ha,
    /// The running zones.
    pub sdn: &'a Sdn,
}

/// A guest's row of `/cluster/resources` (`extract_vm_stats`), its
/// fields in the order of the row's keys.
pub struct GuestRow<'a> {
    /// The VMID.
    pub vmid: u32,
    /// `qemu` or `lxc`.
    pub kind: &'static str,
    /// The guest's node.
    pub node: &'a str,
    /// Its name.
    pub name: Cow<'a, str>,
    /// Its status (a VM's QMP status where it has one).
    pub status: &'a str,
    /// 1 for a template.
    pub template: u8,
    /// Seconds.
    pub uptime: i64,
    /// CPUs.
    pub maxcpu: Number,
    /// CPU load.
    pub cpu: Number,
    /// Memory in bytes.
    pub maxmem: u64,
    /// Memory in use.
    pub mem: u64,
    /// Disk size.
    pub maxdisk: u64,
    /// Disk in use.
    pub disk: u64,
    /// Bytes received.
    pub netin: u64,
    /// Bytes sent.
    pub netout: u64,
    /// Bytes read.
    pub diskread: u64,
    /// Bytes written.
    pub diskwrite: u64,
    /// A VM's memory on the host (9.x).
    pub memhost: Option<u64>,
    /// The config's `lock`.
    pub lock: Option<&'a str>,
    /// The config's `tags`.
    pub tags: Option<&'a str>,
    /// The HA state of an HA resource.
    pub hastate: Option<Option<&'a str>>,
    /// A VM's pool.
    pub pool: Option<&'a str>,
}

/// A node's row (`extract_node_stats`), with its figures.
pub struct NodeRow<'a> {
    /// The member.
    pub node: &'a Node,
    /// Memory of the running guests on it.
    pub guest_mem: u64,
    /// How many guests run on it.
    pub running: usize,
    /// Its HA state, when the HA manager knows it.
    pub hastate: Option<&'a str>,
    /// Whether the caller sees its figures ([`NODE_STATS`]).
    pub audited: bool,
}

/// A storage's row for one node (`extract_storage_stats`).
pub struct StorageRow<'a> {
    /// The storage.
    pub storage: &'a Storage,
    /// The node.
    pub node: &'a Node,
    /// Bytes in use on the node.
    pub disk: u64,
}

/// A pool's row, with the summed load of its running guests.
pub struct PoolRow<'a> {
    /// The pool.
    pub pool: &'a str,
    /// The load, once a guest of the pool runs.
    pub load: Option<PoolLoad>,
}

/// A pool's running guests added up as PVE adds them.
pub struct PoolLoad {
    /// The longest uptime.
    pub uptime: u64,
    /// Memory in use.
    pub mem: u64,
    /// Memory.
    pub maxmem: u64,
    /// The CPU load weighted by the guests' CPUs.
    pub cpu: Option<f64>,
    /// Whether `cpu` came with the first running guest (its key then
    /// comes before `maxcpu`'s).
    pub cpu_first: bool,
    /// The CPUs (whole ones).
    pub maxcpu: u64,
}

/// The figures of a node's row that only those with Sys.Audit on the
/// node see (`extract_node_stats` with `exclude_stats`): its uptime,
/// load and usage, and its capacity.
pub const NODE_STATS: &[&str] = &[
    "uptime", "cpu", "mem", "disk", "maxcpu", "maxmem", "maxdisk",
];

/// A VMID as text, as a key that sorts as the text does (PVE lists the
/// guests in the string order of their VMIDs: `1000` before `101`).
pub(super) fn text_order(vmid: u32) -> [u8; 10] {
    let mut key = [0u8; 10];
    let mut n = itoa::Buffer::new();
    let digits = n.format(vmid).as_bytes();
    key[..digits.len()].copy_from_slice(digits);
    key
}

/// [`text_order`] as one number, which compares as the text does.
fn text_key(vmid: u32) -> u128 {
    let mut key = [0u8; 16];
    key[..10].copy_from_slice(&text_order(vmid));
    u128::from_be_bytes(key)
}

/// root@pam, who may audit everything.
fn is_root(who: &AuthId) -> bool {
    matches!(who, AuthId::User(u) if u == "root@pam")
}

fn float(x: f64) -> Number {
    Number::from_f64(x).unwrap_or_else(|| Number::from(0))
}

/// A guest of the listing, VM or container.
#[derive(Clone, Copy)]
pub enum Guest<'a> {
    /// A VM.
    Vm(&'a Vm),
    /// A container.
    Ct(&'a Ct),
}

/// Each node's CPUs by name.
pub type HostCpus<'a> = std::collections::HashMap<&'a str, u64, foldhash::fast::FixedState>;

/// Memory of the running guests on `node`, and how many run.
pub fn guest_load(nodes: &Nodes, guests: &Guests, node: &str) -> (u64, usize) {
    let r = Resources::loads_of(nodes, guests);
    r.get(node).copied().unwrap_or((0, 0))
}

impl<'a> Resources<'a> {
    /// About how long the listing is: 360 bytes a guest (a row is about
    /// 350), so that it is written without growing (and copying) its
    /// buffer.
    pub fn capacity(&self) -> usize {
        1024 + 360 * (self.guests.len() + self.guests.cts().len())
    }

    /// Whether `who` holds `privilege` on `path` (root@pam always).
    pub fn may(&self, who: &AuthId, path: &str, privilege: &str) -> bool {
        is_root(who) || self.access.has_priv(who, path, privilege)
    }

    /// The `type=pool` rows, with the summed load of their running
    /// guests as PVE adds it up.
    pub fn pools(&self, now: i64) -> Vec<PoolRow<'a>> {
        let cpus = self.host_cpus();
        let mut rows = Vec::new();
        for (id, pool) in self.access.pools().iter() {
            let mut load: Option<PoolLoad> = None;
            for vmid in pool.vms() {
                // VMs and containers alike (the cluster's VM list).
                let guest = match (self.guests.get(vmid), self.guests.ct_by_id(*vmid)) {
                    (Some(v), _) => Guest::Vm(v),
                    (None, Some(ct)) => Guest::Ct(ct),
                    (None, None) => continue,
                };
                let e = self.guest_row(guest, now, &cpus);
                let uptime = u64::try_from(e.uptime).unwrap_or(0);
                if uptime == 0 {
                    continue;
                }
                let (cpu, max) = (
                    e.cpu.as_f64().unwrap_or(0.0),
                    e.maxcpu.as_f64().unwrap_or(0.0),
                );
                let first = load.is_none();
                let l = load.get_or_insert(PoolLoad {
                    uptime,
                    mem: 0,
                    maxmem: 0,
                    cpu: None,
                    cpu_first: false,
                    maxcpu: 0,
                });
                let (pcpu, pmax) = (l.cpu.unwrap_or(0.0), l.maxcpu as f64);
                l.uptime = l.uptime.max(uptime);
                l.mem += e.mem;
                l.maxmem += e.maxmem;
                if pmax + max > 0.0 {
                    l.cpu = Some((pcpu * pmax + cpu * max) / (pmax + max));
                    if first {
                        l.cpu_first = true;
                    }
                }
                l.maxcpu += e.maxcpu.as_u64().unwrap_or(0);
            }
            rows.push(PoolRow { pool: id, load });
        }
        rows
    }

    /// The guests in the listing's order: the VMs, then the containers,
    /// each in the text order of their VMIDs.
    pub fn listed_guests(&self) -> Vec<Guest<'a>> {
        // The maps list the VMIDs in numeric order: a run of each length
        // (3 digits, then 4, ...), each run in text order already. A
        // stable sort finds the runs and merges them.
        let mut vms: Vec<(u128, &Vm)> = self
            .guests
            .values()
            .map(|v| (text_key(v.vmid), v))
            .collect();
        vms.sort_by_key(|(key, _)| *key);
        let mut cts: Vec<(u128, &Ct)> = self
            .guests
            .cts()
            .values()
            .map(|c| (text_key(c.vmid()), c))
            .collect();
        cts.sort_by_key(|(key, _)| *key);
        vms.into_iter()
            .map(|(_, v)| Guest::Vm(v))
            .chain(cts.into_iter().map(|(_, c)| Guest::Ct(c)))
            .collect()
    }

    /// Each node's CPUs.
    pub fn host_cpus(&self) -> HostCpus<'a> {
        self.nodes
            .iter()
            .map(|n| (n.name.as_str(), u64::from(n.cpus)))
            .collect()
    }

    /// The rows of `guests` that `who` may audit, in order, each given to
    /// `emit`; answers the memory and number of the running ones on each
    /// node, whether `who` may audit them or not
    /// ([`Resources::guest_loads`]).
    pub fn guest_rows(
        &self,
        guests: &[Guest<'a>],
        host_cpus: &HostCpus<'_>,
        now: i64,
        who: &AuthId,
        mut emit: impl FnMut(&GuestRow<'a>),
    ) -> GuestLoads<'a> {
        let access = self.access;
        let root = is_root(who);
        let mut path = String::new();
        let mut may_vm = |vmid: u32| {
            if root {
                return true;
            }
            path.clear();
            path.push_str("/vms/");
            path.push_str(itoa::Buffer::new().format(vmid));
            access.has_priv(who, &path, "VM.Audit")
        };
        let mut loads = self.no_loads();
        let mut load = |node: &'a str, mem: u64| add_load(&mut loads, node, mem, 1);
        for guest in guests {
            match *guest {
                Guest::Vm(v) => {
                    if !may_vm(v.vmid) {
                        if v.running() {
                            load(&v.node, v.maxmem());
                        }
                        continue;
                    }
                    let mut row = self.guest_row(*guest, now, host_cpus);
                    if v.running() {
                        load(&v.node, row.maxmem);
                    }
                    // A guest's pool is shown to those who may audit the
                    // pool.
                    if row.pool.is_some_and(|p| {
                        !root && !access.has_priv(who, &format!("/pool/{p}"), "Pool.Audit")
                    }) {
                        row.pool = None;
                    }
                    emit(&row);
                }
                Guest::Ct(c) => {
                    if !may_vm(c.vmid()) {
                        if c.running() {
                            load(c.node(), c.maxmem());
                        }
                        continue;
                    }
                    let row = self.guest_row(*guest, now, host_cpus);
                    if c.running() {
                        load(c.node(), row.maxmem);
                    }
                    emit(&row);
                }
            }
        }
        loads
    }

    /// A guest's row, on its node of `host_cpus`.
    pub fn guest_row(&self, guest: Guest<'a>, now: i64, host_cpus: &HostCpus<'_>) -> GuestRow<'a> {
        let cpus_of = |node: &str| host_cpus.get(node).copied().unwrap_or(1);
        match guest {
            Guest::Vm(v) => self.vm_row(v, now, cpus_of(&v.node)),
            Guest::Ct(c) => self.ct_row(c, now, cpus_of(c.node())),
        }
    }

    fn vm_row(&self, v: &'a Vm, now: i64, host_cpus: u64) -> GuestRow<'a> {
        let f = super::qemu::vm_figures(self.storage, v, now.saturating_mul(1000), host_cpus);
        GuestRow {
            vmid: v.vmid,
            kind: "qemu",
            node: &v.node,
            name: f.name,
            status: v
                .qmpstatus
                .map_or(v.status.as_str(), super::qemu::QmpStatus::as_str),
            template: u8::from(f.template),
            uptime: f.uptime,
            maxcpu: Number::from(f.cpus),
            cpu: f.cpu,
            maxmem: f.maxmem,
            mem: f.mem,
            maxdisk: f.maxdisk,
            disk: 0,
            netin: f.netin,
            netout: f.netout,
            diskread: 0,
            diskwrite: 0,
            memhost: self.version.is_v9().then_some(f.mem),
            lock: f.lock,
            tags: f.tags,
            hastate: self
                .ha
                .may_have_hastate()
                .then(|| self.ha.hastate(v.vmid, super::ha::GuestType::Qemu))
                .flatten(),
            pool: self.access.pools().pool_of(v.vmid),
        }
    }

    fn ct_row(&self, c: &'a Ct, now: i64, host_cpus: u64) -> GuestRow<'a> {
        let f = super::lxc::ct_figures(c, now.saturating_mul(1000), host_cpus);
        GuestRow {
            vmid: c.vmid(),
            kind: "lxc",
            node: c.node(),
            name: Cow::Owned(f.name),
            status: c.status().as_str(),
            template: u8::from(c.template()),
            uptime: f.uptime,
            maxcpu: f.cpus,
            cpu: float(f.cpu),
            maxmem: f.maxmem,
            mem: f.mem,
            maxdisk: f.maxdisk,
            disk: f.disk,
            netin: f.netin,
            netout: f.netout,
            diskread: f.diskread,
            diskwrite: f.diskwrite,
            memhost: None,
            lock: c.config().get("lock").map(String::as_str),
            tags: c.config().get("tags").map(String::as_str),
            hastate: self
                .ha
                .may_have_hastate()
                .then(|| self.ha.hastate(c.vmid(), super::ha::GuestType::Lxc))
                .flatten(),
            pool: None,
        }
    }

    /// Every node's running guests in one pass over the guests.
    pub fn guest_loads(&self) -> GuestLoads<'a> {
        Self::loads_of(self.nodes, self.guests)
    }

    fn loads_of<'b>(nodes: &'b Nodes, guests: &'b Guests) -> GuestLoads<'b> {
        let mut loads = no_loads(nodes);
        let running_vms = guests.values().filter(|v| v.running());
        let running_cts = guests.cts().values().filter(|c| c.running());
        let running = running_vms
            .map(|v| (v.node.as_str(), v.maxmem()))
            .chain(running_cts.map(|c| (c.node(), c.maxmem())));
        for (node, mem) in running {
            add_load(&mut loads, node, mem, 1);
        }
        loads
    }

    /// Every node's load before any guest is counted.
    fn no_loads(&self) -> GuestLoads<'a> {
        no_loads(self.nodes)
    }

    /// The `type=node` rows, with the guests' `loads`; the figures of
    /// each for `who` when it may audit the node (for all without `who`).
    pub fn nodes(&self, loads: &GuestLoads<'_>, who: Option<&AuthId>) -> Vec<NodeRow<'a>> {
        self.nodes
            .iter()
            .map(|n| {
                let (guest_mem, running) = loads.get(n.name.as_str()).copied().unwrap_or((0, 0));
                NodeRow {
                    node: n,
                    guest_mem,
                    running,
                    hastate: self.ha.node_hastate(&n.name),
                    audited: who
                        .is_none_or(|w| self.may(w, &format!("/nodes/{}", n.name), "Sys.Audit")),
                }
            })
            .collect()
    }

    /// The `type=storage` rows: each storage on each node it is active
    /// on.
    pub fn storages(&self) -> Vec<StorageRow<'a>> {
        let mut out = Vec::new();
        for n in self.nodes {
            for s in self.storage.cfg().iter().filter(|s| s.active_on(&n.name)) {
                out.push(self.storage_row(s, n));
            }
        }
        out
    }

    /// A storage's row for one node.
    pub fn storage_row(&self, s: &'a Storage, n: &'a Node) -> StorageRow<'a> {
        StorageRow {
            storage: s,
            node: n,
            disk: self.storage.used(s, &n.name),
        }
    }

    /// The running zones' rows of `kind`, those `who` may audit.
    pub fn zones(&self, kind: Option<&str>, who: &AuthId) -> Vec<ZoneResource> {
        super::sdn::zone_resources(self.version, self.nodes, self.sdn, kind, |_| true)
            .into_iter()
            .filter(|z| self.may(who, &format!("/sdn/zones/{}", z.zone()), "SDN.Audit"))
            .collect()
    }
}

/// Every node's load before any guest is counted.
fn no_loads(nodes: &Nodes) -> GuestLoads<'_> {
    nodes.iter().map(|n| (n.name.as_str(), (0, 0))).collect()
}

impl NodeRow<'_> {
    /// Whether the node is online.
    pub fn online(&self) -> bool {
        self.node.status == NodeStatus::Online
    }
}

/// The `id` of a guest's row, written without a copy.
struct GuestId<'r>(&'r str, u32);

impl Serialize for GuestId<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{}/{}", self.0, self.1))
    }
}

impl Serialize for GuestRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &GuestId(self.kind, self.vmid))?;
        m.serialize_entry("vmid", &self.vmid)?;
        m.serialize_entry("type", self.kind)?;
        m.serialize_entry("node", self.node)?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("status", self.status)?;
        m.serialize_entry("template", &self.template)?;
        m.serialize_entry("uptime", &self.uptime)?;
        m.serialize_entry("maxcpu", &self.maxcpu)?;
        m.serialize_entry("cpu", &self.cpu)?;
        m.serialize_entry("maxmem", &self.maxmem)?;
        m.serialize_entry("mem", &self.mem)?;
        m.serialize_entry("maxdisk", &self.maxdisk)?;
        m.serialize_entry("disk", &self.disk)?;
        m.serialize_entry("netin", &self.netin)?;
        m.serialize_entry("netout", &self.netout)?;
        m.serialize_entry("diskread", &self.diskread)?;
        m.serialize_entry("diskwrite", &self.diskwrite)?;
        if let Some(x) = self.memhost {
            m.serialize_entry("memhost", &x)?;
        }
        if let Some(x) = self.lock {
            m.serialize_entry("lock", x)?;
        }
        if let Some(x) = self.tags {
            m.serialize_entry("tags", x)?;
        }
        if let Some(x) = &self.hastate {
            m.serialize_entry("hastate", x)?;
        }
        if let Some(x) = self.pool {
            m.serialize_entry("pool", x)?;
        }
        m.end()
    }
}

/// The `id` of a storage's row.
struct StorageId<'r>(&'r str, &'r str);

impl Serialize for StorageId<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("storage/{}/{}", self.0, self.1))
    }
}

impl Serialize for StorageRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (st, n) = (self.storage, self.node);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &StorageId(&n.name, &st.storage))?;
        m.serialize_entry("storage", &st.storage)?;
        m.serialize_entry("node", &n.name)?;
        m.serialize_entry("type", "storage")?;
        m.serialize_entry("plugintype", &st.kind)?;
        let status = if n.status == NodeStatus::Online {
            "available"
        } else {
            "unknown"
        };
        m.serialize_entry("status", status)?;
        m.serialize_entry("shared", &u8::from(st.shared))?;
        m.serialize_entry("content", &st.content.join(","))?;
        m.serialize_entry("maxdisk", &st.total)?;
        m.serialize_entry("disk", &self.disk)?;
        m.end()
    }
}
