//! `GET /cluster/resources` as a caller sees it (pve-manager
//! `API2/Cluster.pm` `resources`): the rows [`Cluster::resources_view`]
//! lists, kept when the caller may audit them, written straight to JSON.
//!
//! The guests' rows, one per guest, are written from typed rows rather
//! than built as JSON values first: a cluster of 100,000 guests answers
//! in tens of milliseconds. They carry the same keys, in the same order
//! and with the same types, as [`Cluster::vm_resource`] and
//! [`Cluster::ct_resource`] (a unit test holds them to it).

use std::borrow::Cow;

use serde_json::{Number, Value, json};

use super::access::AuthId;
use super::cluster::{Cluster, GuestLoads, add_load};
use super::lxc::Ct;
use super::qemu::Vm;
use super::sdn::cluster::ZoneResource;

/// A guest's row of `/cluster/resources`, in the order of the keys of
/// [`Cluster::vm_resource`] and [`Cluster::ct_resource`].
struct GuestRow<'a> {
    vmid: u32,
    kind: &'static str,
    node: &'a str,
    name: Cow<'a, str>,
    status: &'a str,
    template: u8,
    uptime: i64,
    maxcpu: Number,
    cpu: Number,
    maxmem: u64,
    mem: u64,
    maxdisk: u64,
    disk: u64,
    netin: u64,
    netout: u64,
    diskread: u64,
    diskwrite: u64,
    memhost: Option<u64>,
    lock: Option<&'a str>,
    tags: Option<&'a str>,
    hastate: Option<Option<&'a str>>,
    pool: Option<&'a str>,
}

impl GuestRow<'_> {
    /// The row as JSON, as serde_json writes the same object: the keys
    /// are written as they are (none needs escaping), the texts escaped.
    fn write(&self, out: &mut Vec<u8>) {
        let mut n = itoa::Buffer::new();
        let text = |out: &mut Vec<u8>, s: &str| {
            // Writing to a `Vec` cannot fail.
            let _ = serde_json::to_writer(&mut *out, s);
        };
        out.extend_from_slice(b"{\"id\":\"");
        out.extend_from_slice(self.kind.as_bytes());
        out.push(b'/');
        out.extend_from_slice(n.format(self.vmid).as_bytes());
        out.extend_from_slice(b"\",\"vmid\":");
        out.extend_from_slice(n.format(self.vmid).as_bytes());
        out.extend_from_slice(b",\"type\":\"");
        out.extend_from_slice(self.kind.as_bytes());
        out.extend_from_slice(b"\",\"node\":");
        text(out, self.node);
        out.extend_from_slice(b",\"name\":");
        text(out, &self.name);
        out.extend_from_slice(b",\"status\":");
        text(out, self.status);
        out.extend_from_slice(b",\"template\":");
        out.extend_from_slice(n.format(self.template).as_bytes());
        out.extend_from_slice(b",\"uptime\":");
        out.extend_from_slice(n.format(self.uptime).as_bytes());
        out.extend_from_slice(b",\"maxcpu\":");
        let _ = serde_json::to_writer(&mut *out, &self.maxcpu);
        out.extend_from_slice(b",\"cpu\":");
        let _ = serde_json::to_writer(&mut *out, &self.cpu);
        for (key, value) in [
            (&b",\"maxmem\":"[..], self.maxmem),
            (b",\"mem\":", self.mem),
            (b",\"maxdisk\":", self.maxdisk),
            (b",\"disk\":", self.disk),
            (b",\"netin\":", self.netin),
            (b",\"netout\":", self.netout),
            (b",\"diskread\":", self.diskread),
            (b",\"diskwrite\":", self.diskwrite),
        ] {
            out.extend_from_slice(key);
            out.extend_from_slice(n.format(value).as_bytes());
        }
        if let Some(m) = self.memhost {
            out.extend_from_slice(b",\"memhost\":");
            out.extend_from_slice(n.format(m).as_bytes());
        }
        for (key, value) in [(&b",\"lock\":"[..], self.lock), (b",\"tags\":", self.tags)] {
            if let Some(v) = value {
                out.extend_from_slice(key);
                text(out, v);
            }
        }
        if let Some(h) = &self.hastate {
            out.extend_from_slice(b",\"hastate\":");
            let _ = serde_json::to_writer(&mut *out, h);
        }
        if let Some(p) = self.pool {
            out.extend_from_slice(b",\"pool\":");
            text(out, p);
        }
        out.push(b'}');
    }
}

/// The figures of a node's row that only those with Sys.Audit on the
/// node see (`extract_node_stats` with `exclude_stats`): its uptime,
/// load and usage, and its capacity.
pub const NODE_STATS: &[&str] = &[
    "uptime", "cpu", "mem", "disk", "maxcpu", "maxmem", "maxdisk",
];

/// A node's row without [`NODE_STATS`], as PVE lists a node to a caller
/// who may not audit it.
pub fn exclude_node_stats(row: &mut Value) {
    if let Some(obj) = row.as_object_mut() {
        for key in NODE_STATS {
            obj.remove(*key);
        }
    }
}

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
enum Guest<'a> {
    Vm(&'a Vm),
    Ct(&'a Ct),
}

/// The rows written so far, with the commas between them.
struct Rows<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Rows<'a> {
    /// The first rows of a list, after what `out` holds.
    fn opening(out: &'a mut Vec<u8>) -> Self {
        Self { out, first: true }
    }

    /// Rows that follow others: each starts with its comma.
    fn following(out: &'a mut Vec<u8>) -> Self {
        Self { out, first: false }
    }

    fn put(&mut self, row: &dyn Row) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        row.write_to(self.out);
    }

    /// Rows written by [`Rows::following`], after these.
    fn append(&mut self, following: &[u8]) {
        let Some(rest) = following.strip_prefix(b",") else {
            return;
        };
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.extend_from_slice(rest);
    }
}

/// From how many guests a listing's rows are written on two threads,
/// each a half of them in order (the second half is then copied after
/// the first).
const TWO_WRITERS_FROM: usize = 16_384;

/// Whether the machine has a second processor for a large listing.
fn two_writers() -> bool {
    static TWO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TWO.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}

/// Each node's CPUs by name.
type HostCpus<'a> = std::collections::HashMap<&'a str, u64, foldhash::fast::FixedState>;

impl Cluster {
    /// `GET /cluster/resources` for `who`, optionally only of `kind`:
    /// the `data` member's JSON text.
    pub fn resources_json(&self, kind: Option<&str>, now: i64, who: &AuthId) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_resources(kind, now, who, &mut out);
        out
    }

    /// About how long the listing is: 360 bytes a guest (a row is about
    /// 350), so that it is written without growing (and copying) its
    /// buffer.
    pub fn resources_capacity(&self) -> usize {
        1024 + 360 * (self.guests.len() + self.guests.cts().len())
    }

    /// [`Cluster::resources_json`], written after what `out` holds.
    pub fn write_resources(&self, kind: Option<&str>, now: i64, who: &AuthId, out: &mut Vec<u8>) {
        self.write_resources_split(kind, now, who, out, None);
    }

    /// [`Cluster::write_resources`], the guests' rows written on two
    /// threads or one as `split` says (by default: on two from
    /// [`TWO_WRITERS_FROM`] guests, when the machine has two processors).
    fn write_resources_split(
        &self,
        kind: Option<&str>,
        now: i64,
        who: &AuthId,
        out: &mut Vec<u8>,
        split: Option<bool>,
    ) {
        let want = |k: &str| kind.is_none_or(|t| t == k);
        let access = &self.access;
        // root@pam may audit everything: no path is made for it.
        let root = is_root(who);
        let may = |path: &str, privilege: &str| root || access.has_priv(who, path, privilege);
        out.reserve(self.resources_capacity());
        out.push(b'[');
        let mut rows = Rows::opening(out);
        // Pools first, then guests, nodes, storages and the SDN, as
        // `resources_view` lists them.
        if want("pool") {
            for row in self.pool_resources(now) {
                let id = row["pool"].as_str().unwrap_or_default();
                if may(&format!("/pool/{id}"), "Pool.Audit") {
                    rows.put(&row);
                }
            }
        }
        // The nodes' loads are added up as the guests' rows are written
        // (a second pass over 100,000 guests costs milliseconds).
        let mut loads = None;
        if want("vm") {
            let listed = self.listed_guests();
            let host_cpus: HostCpus<'_> = self
                .nodes
                .iter()
                .map(|n| (n.name.as_str(), u64::from(n.cpus)))
                .collect();
            let two = split.unwrap_or(two_writers() && listed.len() >= TWO_WRITERS_FROM);
            loads = Some(if two {
                self.write_guest_rows_in_two(&listed, &host_cpus, now, who, &mut rows)
            } else {
                self.write_guest_rows(&listed, &host_cpus, now, who, &mut rows)
            });
        }
        if want("node") {
            let loads = loads.unwrap_or_else(|| self.guest_loads());
            for mut row in self.node_resources_with(now, &loads) {
                let node = row["node"].as_str().unwrap_or_default();
                if !may(&format!("/nodes/{node}"), "Sys.Audit") {
                    exclude_node_stats(&mut row);
                }
                rows.put(&row);
            }
        }
        if want("storage") {
            for row in self.storage_resources() {
                let id = row["storage"].as_str().unwrap_or_default();
                if may(&format!("/storage/{id}"), "Datastore.Audit") {
                    rows.put(&row);
                }
            }
        }
        for zone in super::sdn::zone_resources(self.version, &self.nodes, &self.sdn, kind, |_| true) {
            if may(&format!("/sdn/zones/{}", zone.zone()), "SDN.Audit") {
                rows.put(&sdn_row(&zone));
            }
        }
        out.push(b']');
    }

    /// The guests in the listing's order: the VMs, then the containers,
    /// each in the text order of their VMIDs.
    fn listed_guests(&self) -> Vec<Guest<'_>> {
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

    /// [`Cluster::write_guest_rows`] on two threads: the first half here,
    /// the second on a thread of its own, then copied after the first.
    fn write_guest_rows_in_two<'a>(
        &'a self,
        guests: &[Guest<'a>],
        host_cpus: &HostCpus<'_>,
        now: i64,
        who: &AuthId,
        rows: &mut Rows<'_>,
    ) -> GuestLoads<'a> {
        let (first, second) = guests.split_at(guests.len() / 2);
        std::thread::scope(|scope| {
            let later = scope.spawn(|| {
                let mut text = Vec::with_capacity(360 * second.len());
                let loads = self.write_guest_rows(
                    second,
                    host_cpus,
                    now,
                    who,
                    &mut Rows::following(&mut text),
                );
                (text, loads)
            });
            let mut loads = self.write_guest_rows(first, host_cpus, now, who, rows);
            match later.join() {
                Ok((text, more)) => {
                    rows.append(&text);
                    for (node, (mem, running)) in more {
                        add_load(&mut loads, node, mem, running);
                    }
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
            loads
        })
    }

    /// The rows of `guests` that `who` may audit, in order; with the
    /// memory and number of the running ones on each node, whether `who`
    /// may audit them or not ([`Cluster::guest_loads`]).
    fn write_guest_rows<'a>(
        &'a self,
        guests: &[Guest<'a>],
        host_cpus: &HostCpus<'_>,
        now: i64,
        who: &AuthId,
        rows: &mut Rows<'_>,
    ) -> GuestLoads<'a> {
        let access = &self.access;
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
        let cpus_of = |node: &str| host_cpus.get(node).copied().unwrap_or(1);
        let mut loads = self.no_loads();
        let mut load = |node: &str, mem: u64| add_load(&mut loads, node, mem, 1);
        for guest in guests {
            match *guest {
                Guest::Vm(v) => {
                    if !may_vm(v.vmid) {
                        if v.running() {
                            load(&v.node, v.maxmem());
                        }
                        continue;
                    }
                    let mut row = self.vm_row(v, now, cpus_of(&v.node));
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
                    rows.put(&row);
                }
                Guest::Ct(c) => {
                    if !may_vm(c.vmid()) {
                        if c.running() {
                            load(c.node(), c.maxmem());
                        }
                        continue;
                    }
                    let row = self.ct_row(c, now, cpus_of(c.node()));
                    if c.running() {
                        load(c.node(), row.maxmem);
                    }
                    rows.put(&row);
                }
            }
        }
        loads
    }

    fn vm_row<'a>(&'a self, v: &'a Vm, now: i64, host_cpus: u64) -> GuestRow<'a> {
        let f = self.vm_figures(v, now.saturating_mul(1000), host_cpus);
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

    fn ct_row<'a>(&'a self, c: &'a Ct, now: i64, host_cpus: u64) -> GuestRow<'a> {
        let f = self.ct_figures(c, now.saturating_mul(1000), host_cpus);
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
}

/// The row of a running zone: on 8.4 `sdn/<node>/<zone>` (`type=sdn`),
/// on 9.x `network/<node>/zone/<zone>` (`type=network`) with its
/// `zone-type`.
pub(crate) fn sdn_row(r: &ZoneResource) -> Value {
    match r {
        ZoneResource::Sdn { node, zone, status } => json!({
            "id": format!("sdn/{node}/{zone}"),
            "sdn": zone,
            "node": node,
            "type": "sdn",
            "status": status,
        }),
        ZoneResource::LocalNetwork { node } => json!({
            "id": format!("network/{node}/zone/localnetwork"),
            "network": "localnetwork",
            "network-type": "zone",
            "zone-type": "local",
            "node": node,
            "type": "network",
            "status": "ok",
        }),
        ZoneResource::Network {
            node,
            zone,
            zone_type,
        } => json!({
            "id": format!("network/{node}/zone/{zone}"),
            "node": node,
            "network": zone,
            "network-type": "zone",
            "zone-type": zone_type,
            "type": "network",
            "status": "available",
        }),
    }
}

/// A row of either kind, written to the answer.
trait Row {
    fn write_to(&self, out: &mut Vec<u8>);
}

impl Row for Value {
    fn write_to(&self, out: &mut Vec<u8>) {
        // Writing to a `Vec` cannot fail.
        let _ = serde_json::to_writer(out, self);
    }
}

impl Row for GuestRow<'_> {
    fn write_to(&self, out: &mut Vec<u8>) {
        self.write(out);
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::Value;

    use crate::model::PveVersion;
    use crate::model::access::AuthId;
    use crate::model::scenario::Scenario;

    /// Guests of every kind and state: running and stopped VMs and
    /// containers, a template, a lock, tags, a pool, VMIDs whose text
    /// order differs from their numeric one.
    const WORLD: &str = "
nodes:
  - {name: pve1, cpus: 8}
  - {name: pve2, cpus: 4}
pools: [{poolid: web, vms: [1000]}]
users:
  - {userid: alice@pve}
acl:
  - {path: /vms/1000, roles: [PVEAuditor], users: [alice@pve]}
  - {path: /vms/200, roles: [PVEAuditor], users: [alice@pve]}
  - {path: /storage/local, roles: [PVEAuditor], users: [alice@pve]}
  - {path: /nodes/pve1, roles: [PVEAuditor], users: [alice@pve]}
vms:
  - {vmid: 100, node: pve1, name: a, status: running, config: {cores: '16', memory: '2048', tags: 'x;y', scsi0: 'local-lvm:vm-100-disk-0,size=32G'}}
  - {vmid: 1000, node: pve2, status: stopped, config: {vcpus: '2', sockets: '2', cores: '2', lock: backup}}
  - {vmid: 101, node: pve1, name: tpl, status: stopped, config: {template: '1'}}
containers:
  - {vmid: 200, node: pve2, hostname: c1, status: running, config: {cores: '2', rootfs: 'local-lvm:subvol-200-disk-0,size=8G'}}
  - {vmid: 2000, node: pve1, status: stopped, config: {cpulimit: '1.5', tags: t}}
  - {vmid: 201, node: pve1, status: stopped}
";

    /// The world, with VM 100 an HA resource.
    fn world(version: PveVersion) -> crate::model::cluster::Cluster {
        let mut c = Scenario::parse(WORLD, "t")
            .expect("scenario")
            .build(version, "pw", 1_790_000_000)
            .expect("builds");
        let up = crate::model::ha::ResourceUpdate {
            state: Some("started".into()),
            ..Default::default()
        };
        c.ha_mut()
            .create_resource(
                version,
                "vm:100",
                &up,
                |_| Some(crate::model::ha::GuestType::Qemu),
                1_790_000_000,
            )
            .expect("an HA resource");
        c
    }

    #[rstest]
    #[case(PveVersion::V8_4)]
    #[case(PveVersion::V9_1)]
    fn the_written_rows_are_the_listed_ones(#[case] version: PveVersion) {
        let c = world(version);
        let root = AuthId::User("root@pam".into());
        for kind in [
            None,
            Some("vm"),
            Some("node"),
            Some("storage"),
            Some("pool"),
        ] {
            let written = c.resources_json(kind, 1_790_000_100, &root);
            let written: Value = serde_json::from_slice(&written).expect("JSON");
            let listed = Value::Array(c.resources_view(kind, 1_790_000_100));
            // Byte for byte: the same keys in the same order, the same
            // number types.
            assert_eq!(written.to_string(), listed.to_string(), "{kind:?}");
        }
        let vms: Vec<String> = c
            .resources_view(Some("vm"), 1_790_000_100)
            .iter()
            .map(|r| r["id"].as_str().expect("in the test").to_string())
            .collect();
        assert_eq!(
            vms,
            [
                "qemu/100",
                "qemu/1000",
                "qemu/101",
                "lxc/200",
                "lxc/2000",
                "lxc/201"
            ]
        );
    }

    /// The listing written after the envelope's opening is the
    /// listing, and it ends the text.
    #[rstest]
    fn the_listing_is_written_after_what_the_buffer_holds(
        #[values("root@pam", "alice@pve")] user: &str,
    ) {
        let c = world(PveVersion::V9_1);
        let who = AuthId::User(user.into());
        let mut out = b"{\"data\":".to_vec();
        c.write_resources(None, 1_790_000_100, &who, &mut out);
        let alone = c.resources_json(None, 1_790_000_100, &who);
        assert_eq!(out[..8], *b"{\"data\":");
        assert_eq!(
            String::from_utf8_lossy(&out[8..]),
            String::from_utf8_lossy(&alone)
        );
        let rows: Value = serde_json::from_slice(&alone).expect("JSON");
        assert!(rows.as_array().is_some_and(|r| r.len() > 3), "{rows}");
        // A node's load counts every guest running on it, also those
        // the caller may not see.
        let nodes = |rows: &Value| -> Vec<Value> {
            rows.as_array()
                .into_iter()
                .flatten()
                .filter(|r| r["type"] == "node")
                .cloned()
                .collect()
        };
        // Their figures are left out for a caller without Sys.Audit on
        // the node (alice audits pve1 alone).
        let mut listed = Value::Array(c.resources_view(Some("node"), 1_790_000_100));
        for row in listed.as_array_mut().into_iter().flatten() {
            if user != "root@pam" && row["node"] != "pve1" {
                super::exclude_node_stats(row);
            }
        }
        assert_eq!(nodes(&rows), nodes(&listed));
        assert!(nodes(&rows).iter().any(|n| n["mem"].as_u64() > Some(0)));
    }

    /// `extract_node_stats` with `exclude_stats`: a node's figures only
    /// for those who may audit it; its name, status and level for all.
    #[rstest]
    #[case("root@pam", &["pve1", "pve2"])]
    #[case("alice@pve", &["pve1"])]
    #[case("bob@pve", &[])]
    fn node_figures_need_sys_audit(#[case] user: &str, #[case] audited: &[&str]) {
        let c = world(PveVersion::V9_1);
        let who = AuthId::User(user.into());
        let rows: Value =
            serde_json::from_slice(&c.resources_json(Some("node"), 1_790_000_100, &who))
                .expect("JSON");
        let rows = rows.as_array().expect("list");
        assert_eq!(rows.len(), 2);
        for row in rows {
            let node = row["node"].as_str().expect("node");
            assert_eq!(row["status"], "online", "{row}");
            for key in super::NODE_STATS {
                assert_eq!(
                    row.get(*key).is_some(),
                    audited.contains(&node),
                    "{user} {node} {key}: {row}"
                );
            }
        }
    }

    /// The guests' rows written on two threads are the rows one thread
    /// writes, with the same nodes' loads, for root and for a user who
    /// sees only some guests.
    #[rstest]
    fn rows_written_on_two_threads_are_the_rows_of_one(
        #[values("root@pam", "alice@pve")] user: &str,
        #[values(None, Some("vm"))] kind: Option<&str>,
    ) {
        let c = world(PveVersion::V9_1);
        let who = AuthId::User(user.into());
        let written = |split: bool| {
            let mut out = b"{\"data\":".to_vec();
            c.write_resources_split(kind, 1_790_000_100, &who, &mut out, Some(split));
            String::from_utf8(out).expect("UTF-8")
        };
        let (one, two) = (written(false), written(true));
        assert_eq!(two, one);
        let rows: Value = serde_json::from_str(&two[8..]).expect("JSON");
        assert!(rows.as_array().is_some_and(|r| r.len() >= 2), "{rows}");
    }

    /// What another user is shown: the guests and storages it may
    /// audit, a guest's pool only with the pool's audit (as the handler
    /// filtered the listed rows).
    #[rstest]
    fn a_user_sees_what_it_may_audit() {
        let c = world(PveVersion::V9_1);
        let alice = AuthId::User("alice@pve".into());
        let written = c.resources_json(None, 1_790_000_100, &alice);
        let rows: Value = serde_json::from_slice(&written).expect("JSON");
        let ids: Vec<&str> = rows
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|r| r["id"].as_str())
            .collect();
        assert!(
            ids.contains(&"qemu/1000") && ids.contains(&"lxc/200"),
            "{ids:?}"
        );
        assert!(
            !ids.contains(&"qemu/100") && !ids.contains(&"pool/web"),
            "{ids:?}"
        );
        assert!(ids.iter().any(|i| i.starts_with("node/")), "{ids:?}");
        let storages: Vec<&&str> = ids.iter().filter(|i| i.starts_with("storage/")).collect();
        assert!(
            storages.iter().all(|i| i.ends_with("/local")),
            "{storages:?}"
        );
        let vm = rows
            .as_array()
            .and_then(|r| r.iter().find(|r| r["id"] == "qemu/1000"))
            .expect("qemu/1000");
        assert!(vm.get("pool").is_none(), "{vm}");
        // root sees the pool and the HA state.
        let root = AuthId::User("root@pam".into());
        let all: Value =
            serde_json::from_slice(&c.resources_json(None, 1_790_000_100, &root)).expect("JSON");
        let find = |id: &str| {
            all.as_array()
                .and_then(|r| r.iter().find(|r| r["id"] == id))
                .cloned()
                .unwrap_or_default()
        };
        assert_eq!(find("qemu/1000")["pool"], "web");
        assert!(
            find("qemu/100").get("hastate").is_some(),
            "{}",
            find("qemu/100")
        );
    }
}
