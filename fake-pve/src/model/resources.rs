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
use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Number, Value};

use super::access::AuthId;
use super::cluster::Cluster;
use super::lxc::Ct;
use super::qemu::Vm;

/// A guest's row of `/cluster/resources`, in the order of the keys of
/// [`Cluster::vm_resource`] and [`Cluster::ct_resource`].
#[derive(Serialize)]
struct GuestRow<'a> {
    id: String,
    vmid: u32,
    #[serde(rename = "type")]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    memhost: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lock: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hastate: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pool: Option<&'a str>,
}

/// A VMID as text, as a key that sorts as the text does (PVE lists the
/// guests in the string order of their VMIDs: `1000` before `101`).
fn text_order(vmid: u32) -> [u8; 10] {
    let mut key = [0u8; 10];
    let mut n = itoa::Buffer::new();
    let digits = n.format(vmid).as_bytes();
    key[..digits.len()].copy_from_slice(digits);
    key
}

fn float(x: f64) -> Number {
    Number::from_f64(x).unwrap_or_else(|| Number::from(0))
}

impl Cluster {
    /// `GET /cluster/resources` for `who`, optionally only of `kind`:
    /// the `data` member's JSON text.
    pub fn resources_json(&self, kind: Option<&str>, now: i64, who: &AuthId) -> Vec<u8> {
        let want = |k: &str| kind.is_none_or(|t| t == k);
        let access = &self.access;
        let may = |path: &str, privilege: &str| access.has_priv(who, path, privilege);
        let mut out = Vec::with_capacity(256);
        out.push(b'[');
        let mut first = true;
        let mut put = |out: &mut Vec<u8>, row: &dyn erased::Row| {
            if !first {
                out.push(b',');
            }
            first = false;
            row.write(out);
        };
        // Pools first, then guests, nodes, storages and the SDN, as
        // `resources_view` lists them.
        if want("pool") {
            for row in self.pool_resources(now) {
                let id = row["pool"].as_str().unwrap_or_default();
                if may(&format!("/pool/{id}"), "Pool.Audit") {
                    put(&mut out, &row);
                }
            }
        }
        if want("vm") {
            let host_cpus: HashMap<&str, u64> = self
                .nodes
                .iter()
                .map(|n| (n.name.as_str(), u64::from(n.cpus)))
                .collect();
            let cpus_of = |node: &str| host_cpus.get(node).copied().unwrap_or(1);
            let mut vms: Vec<&Vm> = self.guests.values().collect();
            vms.sort_by_cached_key(|v| text_order(v.vmid));
            for v in vms {
                if !may(&format!("/vms/{}", v.vmid), "VM.Audit") {
                    continue;
                }
                let mut row = self.vm_row(v, now, cpus_of(&v.node));
                // A guest's pool is shown to those who may audit the pool.
                if row
                    .pool
                    .is_some_and(|p| !may(&format!("/pool/{p}"), "Pool.Audit"))
                {
                    row.pool = None;
                }
                put(&mut out, &row);
            }
            let mut cts: Vec<&Ct> = self.guests.cts().values().collect();
            cts.sort_by_cached_key(|c| text_order(c.vmid()));
            for c in cts {
                if may(&format!("/vms/{}", c.vmid()), "VM.Audit") {
                    put(&mut out, &self.ct_row(c, now, cpus_of(c.node())));
                }
            }
        }
        if want("node") {
            for row in self.node_resources(now) {
                put(&mut out, &row);
            }
        }
        if want("storage") {
            for row in self.storage_resources() {
                let id = row["storage"].as_str().unwrap_or_default();
                if may(&format!("/storage/{id}"), "Datastore.Audit") {
                    put(&mut out, &row);
                }
            }
        }
        for row in self.sdn_resources(kind, |_| true) {
            let zone = match row["type"].as_str().unwrap_or_default() {
                "network" => row["network"].as_str(),
                _ => row["sdn"].as_str(),
            };
            if may(
                &format!("/sdn/zones/{}", zone.unwrap_or_default()),
                "SDN.Audit",
            ) {
                put(&mut out, &row);
            }
        }
        out.push(b']');
        out
    }

    fn vm_row<'a>(&'a self, v: &'a Vm, now: i64, host_cpus: u64) -> GuestRow<'a> {
        let f = self.vm_figures(v, now.saturating_mul(1000), host_cpus);
        GuestRow {
            id: format!("qemu/{}", v.vmid),
            vmid: v.vmid,
            kind: "qemu",
            node: &v.node,
            name: f.name,
            status: v
                .qmpstatus
                .map_or(v.status.as_str(), super::qemu::QmpStatus::as_str),
            template: u8::from(v.template()),
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
            lock: v.config.get("lock").map(String::as_str),
            tags: v.config.get("tags").map(String::as_str),
            hastate: self.ha.hastate(v.vmid, super::ha::GuestType::Qemu),
            pool: self.access.pools().pool_of(v.vmid),
        }
    }

    fn ct_row<'a>(&'a self, c: &'a Ct, now: i64, host_cpus: u64) -> GuestRow<'a> {
        let f = self.ct_figures(c, now.saturating_mul(1000), host_cpus);
        GuestRow {
            id: format!("lxc/{}", c.vmid()),
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
            hastate: self.ha.hastate(c.vmid(), super::ha::GuestType::Lxc),
            pool: None,
        }
    }
}

/// Rows of either kind, written the same way.
mod erased {
    pub trait Row {
        fn write(&self, out: &mut Vec<u8>);
    }

    impl<T: serde::Serialize> Row for T {
        fn write(&self, out: &mut Vec<u8>) {
            // Writing to a `Vec` cannot fail.
            let _ = serde_json::to_writer(out, self);
        }
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
vms:
  - {vmid: 100, node: pve1, name: a, status: running, config: {cores: '16', memory: '2048', tags: 'x;y', scsi0: 'local-lvm:vm-100-disk-0,size=32G'}}
  - {vmid: 1000, node: pve2, status: stopped, config: {vcpus: '2', sockets: '2', cores: '2', lock: backup}}
  - {vmid: 101, node: pve1, name: tpl, status: stopped, config: {template: '1'}}
containers:
  - {vmid: 200, node: pve2, hostname: c1, status: running, config: {cores: '2', rootfs: 'local-lvm:subvol-200-disk-0,size=8G'}}
  - {vmid: 2000, node: pve1, status: stopped, config: {cpulimit: '1.5', tags: t}}
  - {vmid: 201, node: pve1, status: stopped}
";

    #[rstest]
    #[case(PveVersion::V8_4)]
    #[case(PveVersion::V9_1)]
    fn the_written_rows_are_the_listed_ones(#[case] version: PveVersion) {
        let c = Scenario::parse(WORLD, "t")
            .expect("scenario")
            .build(version, "pw", 1_790_000_000)
            .expect("builds");
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
}
