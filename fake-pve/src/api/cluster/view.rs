//! The cluster-wide reads as JSON: `/cluster/resources` (written straight
//! to its text, the guests' rows without building JSON values first),
//! the node rows of `/cluster/resources` and `/nodes`.

use serde_json::{Value, json};

use crate::model::access::AuthId;
use crate::model::resources::{
    Guest, GuestLoads, GuestRow, HostCpus, NODE_STATS, NodeRow, PoolRow, Resources, StorageRow,
    add_load,
};
use crate::model::sdn::cluster::ZoneResource;

/// A guest's row as JSON, as serde_json writes the same object: the keys
/// are written as they are (none needs escaping), the texts escaped.
fn write_guest(row: &GuestRow<'_>, out: &mut Vec<u8>) {
    let mut n = itoa::Buffer::new();
    let text = |out: &mut Vec<u8>, s: &str| {
        // Writing to a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    };
    out.extend_from_slice(b"{\"id\":\"");
    out.extend_from_slice(row.kind.as_bytes());
    out.push(b'/');
    out.extend_from_slice(n.format(row.vmid).as_bytes());
    out.extend_from_slice(b"\",\"vmid\":");
    out.extend_from_slice(n.format(row.vmid).as_bytes());
    out.extend_from_slice(b",\"type\":\"");
    out.extend_from_slice(row.kind.as_bytes());
    out.extend_from_slice(b"\",\"node\":");
    text(out, row.node);
    out.extend_from_slice(b",\"name\":");
    text(out, &row.name);
    out.extend_from_slice(b",\"status\":");
    text(out, row.status);
    out.extend_from_slice(b",\"template\":");
    out.extend_from_slice(n.format(row.template).as_bytes());
    out.extend_from_slice(b",\"uptime\":");
    out.extend_from_slice(n.format(row.uptime).as_bytes());
    out.extend_from_slice(b",\"maxcpu\":");
    let _ = serde_json::to_writer(&mut *out, &row.maxcpu);
    out.extend_from_slice(b",\"cpu\":");
    let _ = serde_json::to_writer(&mut *out, &row.cpu);
    for (key, value) in [
        (&b",\"maxmem\":"[..], row.maxmem),
        (b",\"mem\":", row.mem),
        (b",\"maxdisk\":", row.maxdisk),
        (b",\"disk\":", row.disk),
        (b",\"netin\":", row.netin),
        (b",\"netout\":", row.netout),
        (b",\"diskread\":", row.diskread),
        (b",\"diskwrite\":", row.diskwrite),
    ] {
        out.extend_from_slice(key);
        out.extend_from_slice(n.format(value).as_bytes());
    }
    if let Some(m) = row.memhost {
        out.extend_from_slice(b",\"memhost\":");
        out.extend_from_slice(n.format(m).as_bytes());
    }
    for (key, value) in [(&b",\"lock\":"[..], row.lock), (b",\"tags\":", row.tags)] {
        if let Some(v) = value {
            out.extend_from_slice(key);
            text(out, v);
        }
    }
    if let Some(h) = &row.hastate {
        out.extend_from_slice(b",\"hastate\":");
        let _ = serde_json::to_writer(&mut *out, h);
    }
    if let Some(p) = row.pool {
        out.extend_from_slice(b",\"pool\":");
        text(out, p);
    }
    out.push(b'}');
}

/// A guest's row as a JSON value.
pub fn guest(row: &GuestRow<'_>) -> Value {
    serde_json::to_value(row).unwrap_or_default()
}

/// A storage's row as a JSON value.
pub fn storage(row: &StorageRow<'_>) -> Value {
    serde_json::to_value(row).unwrap_or_default()
}

/// A pool's row.
pub fn pool(row: &PoolRow<'_>) -> Value {
    let id = row.pool;
    let mut v = json!({ "id": format!("/pool/{id}"), "pool": id, "type": "pool" });
    if let Some(l) = &row.load {
        v["uptime"] = json!(l.uptime);
        v["mem"] = json!(l.mem);
        v["maxmem"] = json!(l.maxmem);
        if l.cpu_first
            && let Some(cpu) = l.cpu
        {
            v["cpu"] = json!(cpu);
        }
        v["maxcpu"] = json!(l.maxcpu);
        if !l.cpu_first
            && let Some(cpu) = l.cpu
        {
            v["cpu"] = json!(cpu);
        }
    }
    v
}

/// A node's row of `/nodes` (with its `ssl_fingerprint`) or, with
/// `resources`, of `/cluster/resources` (with its `cgroup-mode`, its HA
/// state, and its figures only when audited).
pub fn node(row: &NodeRow<'_>, now: i64, resources: bool) -> Value {
    let n = row.node;
    let online = row.online();
    let mut v = json!({
        "id": format!("node/{}", n.name),
        "node": n.name,
        "type": "node",
        "status": if online { "online" } else { "offline" },
        "level": n.level,
        "maxcpu": n.cpus,
        "maxmem": n.memory,
        "maxdisk": n.rootfs,
    });
    let Some(obj) = v.as_object_mut() else {
        return v;
    };
    if resources {
        obj.insert("cgroup-mode".into(), json!(2));
    } else {
        obj.insert("ssl_fingerprint".into(), json!(n.ssl_fingerprint));
    }
    if online {
        obj.insert("uptime".into(), json!(n.uptime(now)));
        obj.insert("cpu".into(), json!(n.cpu_load(row.running)));
        obj.insert("mem".into(), json!(n.mem_used(row.guest_mem)));
        obj.insert("disk".into(), json!(n.rootfs_used()));
    }
    if resources {
        if let Some(state) = row.hastate {
            obj.insert("hastate".into(), json!(state));
        }
        if !row.audited {
            // As PVE's `exclude_stats` removes them (the order of the
            // keys left follows serde_json's removal).
            for key in NODE_STATS {
                obj.remove(*key);
            }
        }
    }
    v
}

/// A running zone's row: on 8.4 `sdn/<node>/<zone>` (`type=sdn`), on
/// 9.x `network/<node>/zone/<zone>` (`type=network`) with its
/// `zone-type`.
pub fn zone(r: &ZoneResource) -> Value {
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

/// Every row of `/cluster/resources`, optionally only of `kind`, as
/// JSON values, all figures shown.
pub fn resources(res: &Resources<'_>, kind: Option<&str>, now: i64) -> Vec<Value> {
    let mut out = Vec::new();
    let want = |k: &str| kind.is_none_or(|t| t == k);
    if want("pool") {
        out.extend(res.pools(now).iter().map(pool));
    }
    let cpus = res.host_cpus();
    if want("vm") {
        out.extend(
            res.listed_guests()
                .into_iter()
                .map(|g| guest(&res.guest_row(g, now, &cpus))),
        );
    }
    if want("node") {
        let loads = res.guest_loads();
        out.extend(res.nodes(&loads, None).iter().map(|n| node(n, now, true)));
    }
    if want("storage") {
        out.extend(res.storages().iter().map(storage));
    }
    let root = AuthId::User("root@pam".into());
    out.extend(res.zones(kind, &root).iter().map(zone));
    out
}

/// `GET /cluster/resources` for `who`, optionally only of `kind`: the
/// `data` member's JSON text.
#[cfg(any(test, feature = "internals"))]
pub fn resources_json(res: &Resources<'_>, kind: Option<&str>, now: i64, who: &AuthId) -> Vec<u8> {
    let mut out = Vec::new();
    write_resources(res, kind, now, who, &mut out);
    out
}

/// [`resources_json`], written after what `out` holds.
pub fn write_resources(
    res: &Resources<'_>,
    kind: Option<&str>,
    now: i64,
    who: &AuthId,
    out: &mut Vec<u8>,
) {
    write_resources_split(res, kind, now, who, out, None);
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

    fn comma(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    fn put(&mut self, row: &impl serde::Serialize) {
        self.comma();
        // Writing to a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *self.out, row);
    }

    fn put_guest(&mut self, row: &GuestRow<'_>) {
        self.comma();
        write_guest(row, self.out);
    }

    /// Rows written by [`Rows::following`], after these.
    fn append(&mut self, following: &[u8]) {
        let Some(rest) = following.strip_prefix(b",") else {
            return;
        };
        self.comma();
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

/// [`write_resources`], the guests' rows written on two threads or one
/// as `split` says (by default: on two from [`TWO_WRITERS_FROM`] guests,
/// when the machine has two processors).
fn write_resources_split(
    res: &Resources<'_>,
    kind: Option<&str>,
    now: i64,
    who: &AuthId,
    out: &mut Vec<u8>,
    split: Option<bool>,
) {
    let want = |k: &str| kind.is_none_or(|t| t == k);
    out.reserve(res.capacity());
    out.push(b'[');
    let mut rows = Rows::opening(out);
    // Pools first, then guests, nodes, storages and the SDN.
    if want("pool") {
        for row in res.pools(now) {
            if res.may(who, &format!("/pool/{}", row.pool), "Pool.Audit") {
                rows.put(&pool(&row));
            }
        }
    }
    // The nodes' loads are added up as the guests' rows are written
    // (a second pass over 100,000 guests costs milliseconds).
    let mut loads = None;
    if want("vm") {
        let listed = res.listed_guests();
        let host_cpus = res.host_cpus();
        let two = split.unwrap_or(two_writers() && listed.len() >= TWO_WRITERS_FROM);
        loads = Some(if two {
            write_guest_rows_in_two(res, &listed, &host_cpus, now, who, &mut rows)
        } else {
            res.guest_rows(&listed, &host_cpus, now, who, |row| rows.put_guest(row))
        });
    }
    if want("node") {
        let loads = loads.unwrap_or_else(|| res.guest_loads());
        for row in res.nodes(&loads, Some(who)) {
            rows.put(&node(&row, now, true));
        }
    }
    if want("storage") {
        for row in res.storages() {
            if res.may(
                who,
                &format!("/storage/{}", row.storage.storage),
                "Datastore.Audit",
            ) {
                rows.put(&row);
            }
        }
    }
    for z in res.zones(kind, who) {
        rows.put(&zone(&z));
    }
    out.push(b']');
}

/// The guests' rows on two threads: the first half here, the second on
/// a thread of its own, then copied after the first.
fn write_guest_rows_in_two<'a>(
    res: &Resources<'a>,
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
            let mut following = Rows::following(&mut text);
            let loads = res.guest_rows(second, host_cpus, now, who, |row| {
                following.put_guest(row);
            });
            (text, loads)
        });
        let mut loads = res.guest_rows(first, host_cpus, now, who, |row| rows.put_guest(row));
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

#[cfg(test)]
mod tests;
