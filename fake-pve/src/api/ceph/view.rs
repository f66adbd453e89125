//! The JSON of the Ceph answers: `ceph status` as PVE returns it (with
//! `health detail`, `mon dump` and `mgr dump` in place of the short
//! maps), the daemon lists, `config dump`, the metadata, the crush map's
//! text and the log lines.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::model::ceph::usage::{OSD_OVERHEAD, PoolStats};
use crate::model::ceph::{Ceph, Daemon, Install, Mon, Osd, Pool};

/// A Ceph time stamp (`2026-11-29T09:30:00.000000+0000`).
pub fn stamp(ms: i64) -> String {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(ms.div_euclid(1000));
    let micros = ms.rem_euclid(1000) * 1000;
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{micros:06}+0000")
}

fn addrvec(ip: &str) -> Value {
    let host = if ip.contains(':') {
        format!("[{ip}]")
    } else {
        ip.to_string()
    };
    json!({ "addrvec": [
        { "type": "v2", "addr": format!("{host}:3300"), "nonce": 0 },
        { "type": "v1", "addr": format!("{host}:6789"), "nonce": 0 },
    ]})
}

fn v1(ip: &str) -> String {
    if ip.contains(':') {
        format!("[{ip}]:6789/0")
    } else {
        format!("{ip}:6789/0")
    }
}

/// `ceph health detail`.
pub fn health(ceph: &Ceph, osds: u32) -> Value {
    let h = ceph.health(osds);
    let mut checks = Map::new();
    for (code, c) in &h.checks {
        checks.insert(
            code.clone(),
            json!({
                "severity": c.severity.name(),
                "summary": { "message": c.summary, "count": c.count },
                "detail": c.detail.iter().map(|d| json!({ "message": d })).collect::<Vec<_>>(),
                "muted": c.muted,
            }),
        );
    }
    let mutes: Vec<Value> = ceph
        .mutes()
        .iter()
        .map(|(code, m)| {
            let raised = h.checks.get(code);
            json!({
                "code": code,
                "sticky": m.sticky,
                "summary": raised.map(|c| c.summary.clone()).unwrap_or_default(),
                "count": raised.map_or(0, |c| c.count),
            })
        })
        .collect();
    json!({ "status": h.status.name(), "checks": checks, "mutes": mutes })
}

/// `ceph mon dump`.
pub fn mon_dump(ceph: &Ceph, release: Option<&Install>) -> Value {
    let created = stamp(ceph.created_ms().unwrap_or_default());
    let (epoch, ..) = ceph.epochs();
    let quorum = ceph.quorum();
    json!({
        "epoch": epoch,
        "fsid": ceph.fsid().unwrap_or_default(),
        "modified": created,
        "created": created,
        "min_mon_release": release.map_or(0, |i| i.release.major()),
        "min_mon_release_name": release.map_or("unknown", |i| i.release.codename()),
        "election_strategy": 1,
        "disallowed_leaders: ": "",
        "stretch_mode": false,
        "tiebreaker_mon": "",
        "removed_ranks: ": "",
        "features": { "persistent": persistent_features(release), "optional": [] },
        "mons": ceph.mons().iter().enumerate().map(|(rank, m)| json!({
            "rank": rank,
            "name": m.id,
            "public_addrs": addrvec(&m.addr),
            "addr": v1(&m.addr),
            "public_addr": v1(&m.addr),
            "priority": 0,
            "weight": 0,
            "crush_location": "{}",
        })).collect::<Vec<_>>(),
        "quorum": quorum,
    })
}

/// The monitor map's persistent features up to a release.
fn persistent_features(release: Option<&Install>) -> Vec<&'static str> {
    let all = [
        "kraken",
        "luminous",
        "mimic",
        "osdmap-prune",
        "nautilus",
        "octopus",
        "pacific",
        "elector-pinging",
        "quincy",
        "reef",
        "squid",
        "tentacle",
    ];
    let upto = release.map_or("", |i| i.release.codename());
    let n = all.iter().position(|r| *r == upto).map_or(0, |i| i + 1);
    all[..n].to_vec()
}

/// `ceph mgr dump`, the parts PVE and its users read.
pub fn mgr_dump(ceph: &Ceph, ip_of: &dyn Fn(&str) -> String) -> Value {
    let (_, _, epoch) = ceph.epochs();
    let active = ceph.active_mgr();
    let standbys: Vec<Value> = ceph
        .mgrs()
        .iter()
        .filter(|m| m.running && Some(*m) != active)
        .map(|m| json!({ "gid": gid(&m.id), "name": m.id, "available_modules": [] }))
        .collect();
    let addr = active.map(|m| ip_of(&m.host)).unwrap_or_default();
    json!({
        "epoch": epoch,
        "flags": 0,
        "active_gid": active.map_or(0, |m| gid(&m.id)),
        "active_name": active.map(|m| m.id.clone()).unwrap_or_default(),
        "active_addrs": if active.is_some() {
            json!({ "addrvec": [
                { "type": "v2", "addr": format!("{addr}:6800"), "nonce": 0 },
                { "type": "v1", "addr": format!("{addr}:6801"), "nonce": 0 },
            ]})
        } else {
            json!({ "addrvec": [] })
        },
        "active_addr": if active.is_some() { format!("{addr}:6801/0") } else { ":/0".into() },
        "available": active.is_some(),
        "standbys": standbys,
        "modules": ["iostat", "nfs", "restful"],
        "services": {},
    })
}

/// A daemon's global id, steady for its name.
fn gid(id: &str) -> u64 {
    14_100 + id.bytes().map(u64::from).sum::<u64>()
}

/// `ceph status` as PVE's `ceph_cluster_status` returns it, at `now`.
pub fn status(
    ceph: &Ceph,
    release: Option<&Install>,
    now: i64,
    ip_of: &dyn Fn(&str) -> String,
    stored: &BTreeMap<String, u64>,
) -> Value {
    let raw = ceph.raw_stats(stored);
    let objects: u64 = ceph
        .pools()
        .iter()
        .map(|p| ceph.pool_stats(p, stored).objects)
        .sum();
    let quorum = ceph.quorum();
    let created = ceph.created_ms().unwrap_or(now * 1000);
    let (_, osd_epoch, _) = ceph.epochs();
    let active_mds = ceph.active_mds();
    let standby_mds = ceph.mdss().iter().filter(|m| m.running).count() - active_mds.len();
    let by_rank: Vec<Value> = active_mds
        .iter()
        .map(|(mds, fs)| {
            let fscid = ceph.filesystems().iter().position(|f| &f.name == fs).unwrap_or(0) + 1;
            json!({ "filesystem_id": fscid, "rank": 0, "name": mds, "status": "up:active", "gid": gid(mds) })
        })
        .collect();
    json!({
        "fsid": ceph.fsid().unwrap_or_default(),
        "health": health(ceph, ceph.osds().len() as u32),
        "election_epoch": 1 + 2 * ceph.mons().len(),
        "quorum": quorum,
        "quorum_names": ceph.quorum_names(),
        "quorum_age": (now - created.div_euclid(1000)).max(0),
        "monmap": mon_dump(ceph, release),
        "osdmap": {
            "epoch": osd_epoch,
            "num_osds": ceph.osds().len(),
            "num_up_osds": ceph.osds().iter().filter(|o| o.up).count(),
            "osd_up_since": ceph.osds().iter().filter(|o| o.up).map(|o| o.created_ms / 1000).max().unwrap_or(0),
            "num_in_osds": ceph.osds().iter().filter(|o| o.is_in).count(),
            "osd_in_since": ceph.osds().iter().filter(|o| o.is_in).map(|o| o.created_ms / 1000).max().unwrap_or(0),
            "num_remapped_pgs": 0,
        },
        "pgmap": {
            "pgs_by_state": [],
            "num_pgs": ceph.pools().iter().map(|p| u64::from(p.pg_num)).sum::<u64>(),
            "num_pools": ceph.pools().len(),
            "num_objects": objects,
            "data_bytes": raw.data,
            "bytes_used": raw.used,
            "bytes_avail": raw.avail,
            "bytes_total": raw.total,
        },
        "fsmap": {
            "epoch": 1,
            "btime": stamp(created),
            "id": ceph.filesystems().len(),
            "up": active_mds.len(),
            "in": active_mds.len(),
            "max": active_mds.len(),
            "by_rank": by_rank,
            "up:standby": standby_mds,
        },
        "mgrmap": mgr_dump(ceph, ip_of),
        "servicemap": {
            "epoch": 1,
            "modified": stamp(created),
            "services": {},
        },
        "progress_events": {},
    })
}

/// The state of a listed daemon.
fn state(running: bool) -> &'static str {
    if running { "running" } else { "stopped" }
}

/// The version members of a daemon on `host`.
fn versions(v: &mut Map<String, Value>, install: Option<&Install>) {
    if let Some(i) = install {
        v.insert("ceph_version".into(), json!(i.version_line()));
        v.insert("ceph_version_short".into(), json!(i.version));
    }
}

/// `GET /nodes/{node}/ceph/mon`: the monitors, with their rank, address
/// and quorum when the cluster answers (`state: unknown` otherwise).
pub fn mons(
    ceph: &Ceph,
    node: &str,
    connected: bool,
    install: &dyn Fn(&str) -> Option<Install>,
) -> Value {
    let quorum = ceph.quorum();
    let mut rows: Vec<(String, Value)> = ceph
        .mons()
        .iter()
        .enumerate()
        .map(|(rank, m): (usize, &Mon)| {
            let mut v = Map::new();
            v.insert("name".into(), json!(m.id));
            v.insert("host".into(), json!(m.host));
            v.insert(
                "addr".into(),
                json!(if connected {
                    v1(&m.addr)
                } else {
                    m.addr.clone()
                }),
            );
            if m.host == node {
                v.insert("service".into(), json!(true));
                v.insert("direxists".into(), json!(true));
            }
            if connected {
                versions(&mut v, install(&m.host).as_ref());
                v.insert("rank".into(), json!(rank));
                let inq = quorum.contains(&rank);
                if inq {
                    v.insert("quorum".into(), json!(1));
                }
                v.insert("state".into(), json!(state(inq)));
            } else {
                v.insert("state".into(), json!("unknown"));
            }
            (m.id.clone(), Value::Object(v))
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    Value::Array(rows.into_iter().map(|(_, v)| v).collect())
}

/// `GET /nodes/{node}/ceph/mgr` and `.../mds`: `active`/`standby` for the
/// managers, `up:standby` or `stopped` for the metadata servers.
pub fn daemons(
    list: &[Daemon],
    node: &str,
    active: Option<&Daemon>,
    mds: bool,
    ip_of: &dyn Fn(&str) -> String,
    install: &dyn Fn(&str) -> Option<Install>,
) -> Value {
    let mut rows: Vec<&Daemon> = list.iter().collect();
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    Value::Array(
        rows.into_iter()
            .map(|d| {
                let mut v = Map::new();
                v.insert("name".into(), json!(d.id));
                v.insert("host".into(), json!(d.host));
                let ip = ip_of(&d.host);
                v.insert(
                    "addr".into(),
                    json!(if mds { ip.clone() } else { format!("{ip}:0/0") }),
                );
                if d.host == node {
                    v.insert("service".into(), json!(true));
                    v.insert("direxists".into(), json!(true));
                }
                let st = match (mds, d.running, active == Some(d)) {
                    (_, false, _) => "stopped",
                    (true, true, _) => "up:standby",
                    (false, true, true) => "active",
                    (false, true, false) => "standby",
                };
                v.insert("state".into(), json!(st));
                if mds {
                    v.insert("standby_replay".into(), json!(0));
                }
                versions(&mut v, install(&d.host).as_ref());
                Value::Object(v)
            })
            .collect(),
    )
}

/// `config dump`.
pub fn config_dump(ceph: &Ceph) -> Value {
    let mut out = Vec::new();
    for (section, keys) in ceph.db() {
        for (name, value) in keys {
            out.push(json!({
                "section": section,
                "name": name,
                "value": value,
                "level": "advanced",
                "can_update_at_runtime": 1,
                "mask": "",
            }));
        }
    }
    Value::Array(out)
}

/// The crush map's text (`crushtool -d`) with no OSDs and the hosts
/// that have none either.
pub fn crush() -> String {
    "# begin crush map\n\
     tunable choose_local_tries 0\n\
     tunable choose_local_fallback_tries 0\n\
     tunable choose_total_tries 50\n\
     tunable chooseleaf_descend_once 1\n\
     tunable chooseleaf_vary_r 1\n\
     tunable chooseleaf_stable 1\n\
     tunable straw_calc_version 1\n\
     tunable allowed_bucket_algs 54\n\
     \n\
     # devices\n\
     \n\
     # types\n\
     type 0 osd\n\
     type 1 host\n\
     type 2 chassis\n\
     type 3 rack\n\
     type 4 row\n\
     type 5 pdu\n\
     type 6 pod\n\
     type 7 room\n\
     type 8 datacenter\n\
     type 9 zone\n\
     type 10 region\n\
     type 11 root\n\
     \n\
     # buckets\n\
     root default {\n\
     \tid -1\t\t# do not change unnecessarily\n\
     \t# weight 0.00000\n\
     \talg straw2\n\
     \thash 0\t# rjenkins1\n\
     }\n\
     \n\
     # rules\n\
     rule replicated_rule {\n\
     \tid 0\n\
     \ttype replicated\n\
     \tstep take default\n\
     \tstep chooseleaf firstn 0 type host\n\
     \tstep emit\n\
     }\n\
     \n\
     # end crush map\n"
        .to_string()
}

/// The log's lines (`dump_logfile`): from `start`, at most `limit`, and
/// how many there are.
pub fn log(ceph: &Ceph, start: usize, limit: usize) -> (u64, Value) {
    if ceph.log().is_empty() {
        return (
            1,
            json!([{ "n": 1, "t": "unable to open file - No such file or directory" }]),
        );
    }
    let lines: Vec<Value> = ceph
        .log()
        .iter()
        .enumerate()
        .skip(start)
        .take(limit)
        .map(|(i, l)| {
            json!({
                "n": i + 1,
                "t": format!(
                    "{} {} ({}) {} : cluster [{}] {}",
                    stamp(l.ms),
                    l.who,
                    if l.who.starts_with("mon.") { "mon.0" } else { "mon" },
                    i + 1,
                    l.level,
                    l.text
                ),
            })
        })
        .collect();
    (ceph.log().len() as u64, Value::Array(lines))
}

/// The autoscaler's suggestion for an empty pool: its floor or 32,
/// rounded up to a power of two.
fn pg_num_final(pool: &Pool) -> u32 {
    pool.pg_num_min.unwrap_or(0).max(32).next_power_of_two()
}

/// A pool's line of `osd pool autoscale-status`.
fn autoscale_status(pool: &Pool) -> Value {
    let final_pgs = pg_num_final(pool);
    json!({
        "pool_id": pool.id,
        "pool_name": pool.name,
        "crush_root_id": -1,
        "pg_autoscale_mode": pool.pg_autoscale_mode,
        "pg_num_target": pool.pg_num,
        "logical_used": 0,
        "target_bytes": pool.target_size_bytes.unwrap_or(0),
        "raw_used_rate": f64::from(pool.size),
        "subtree_capacity": 0,
        "actual_raw_used": 0.0,
        "raw_used": 0.0,
        "actual_capacity_ratio": 0.0,
        "capacity_ratio": 0.0,
        "target_ratio": pool.target_size_ratio.unwrap_or(0.0),
        "effective_target_ratio": pool.target_size_ratio.unwrap_or(0.0),
        "pg_num_ideal": 0,
        "pg_num_final": final_pgs,
        "would_adjust": pool.pg_autoscale_mode != "off" && final_pgs != pool.pg_num,
        "bias": 1.0,
        "bulk": false,
    })
}

/// The enabled applications, as `osd dump` maps them.
fn applications(pool: &Pool) -> Map<String, Value> {
    pool.applications
        .iter()
        .map(|a| (a.clone(), json!({})))
        .collect()
}

/// `GET /nodes/{node}/ceph/pool`: each pool of `osd dump` with its
/// autoscaler line, crush rule name and usage from `df`.
pub fn pools(ceph: &Ceph, stored: &BTreeMap<String, u64>) -> Value {
    Value::Array(
        ceph.pools()
            .iter()
            .map(|p| {
                let st = ceph.pool_stats(p, stored);
                json!({
                    "pool": p.id,
                    "pool_name": p.name,
                    "size": p.size,
                    "min_size": p.min_size,
                    "pg_num": p.pg_num,
                    "crush_rule": p.crush_rule_id(),
                    "crush_rule_name": p.crush_rule(),
                    "pg_autoscale_mode": p.pg_autoscale_mode,
                    "application_metadata": applications(p),
                    "autoscale_status": autoscale_status(p),
                    "pg_num_final": pg_num_final(p),
                    "pg_num_min": p.pg_num_min,
                    "target_size": p.target_size_bytes,
                    "target_size_ratio": p.target_size_ratio,
                    "bytes_used": st.bytes_used,
                    "percent_used": st.percent_used,
                    "type": if p.ec.is_some() { "erasure" } else { "replicated" },
                })
            })
            .collect(),
    )
}

/// `GET /nodes/{node}/ceph/pool/{name}/status`: `osd pool get all` as
/// PVE picks from it; the pool's flags are JSON booleans on 9.2 and
/// Perl's stringified booleans (`"1"`, `"0"`) before; `verbose` adds
/// the statistics of `df`, the autoscaler's line and the applications.
pub fn pool_status(pool: &Pool, verbose: bool, flags_as_bools: bool, st: &PoolStats) -> Value {
    let flag = |on: bool| {
        if flags_as_bools {
            json!(on)
        } else {
            json!(if on { "1" } else { "0" })
        }
    };
    let mut v = json!({
        "id": pool.id,
        "name": pool.name,
        "size": pool.size,
        "min_size": pool.min_size,
        "pg_num": pool.pg_num,
        "pg_num_min": pool.pg_num_min,
        "pgp_num": pool.pg_num,
        "crush_rule": pool.crush_rule(),
        "pg_autoscale_mode": pool.pg_autoscale_mode,
        "noscrub": flag(false),
        "nodeep-scrub": flag(false),
        "nodelete": flag(false),
        "nopgchange": flag(false),
        "nosizechange": flag(false),
        "write_fadvise_dontneed": flag(false),
        "hashpspool": flag(true),
        "use_gmt_hitset": flag(true),
        "fast_read": flag(false),
        "target_size": pool.target_size_bytes,
        "target_size_ratio": pool.target_size_ratio,
    });
    if verbose && let Value::Object(m) = &mut v {
        m.insert("autoscale_status".into(), autoscale_status(pool));
        m.insert(
            "statistics".into(),
            json!({
                "stored": st.stored,
                "objects": st.objects,
                "kb_used": st.kb_used,
                "bytes_used": st.bytes_used,
                "percent_used": st.percent_used,
                "max_avail": st.max_avail,
            }),
        );
        m.insert("application_list".into(), json!(pool.applications.clone()));
    }
    v
}

/// The flags of `osd dump` (those set, then those every cluster since
/// Pacific carries), in Ceph's order.
pub fn osdmap_flags(ceph: &Ceph) -> String {
    const ORDER: &[&str] = &[
        "full",
        "pauserd",
        "pausewr",
        "noup",
        "nodown",
        "noout",
        "noin",
        "nobackfill",
        "norebalance",
        "norecover",
        "noscrub",
        "nodeep-scrub",
        "notieragent",
    ];
    let mut out: Vec<&str> = ORDER
        .iter()
        .copied()
        .filter(|f| ceph.flags().contains(*f))
        .collect();
    out.extend([
        "sortbitwise",
        "recovery_deletes",
        "purged_snapdirs",
        "pglog_hardlimit",
    ]);
    out.join(",")
}

/// An OSD's device-mapper node (`/dev/dm-<n>`).
fn dm_node(osd: &Osd) -> String {
    format!("/dev/dm-{}", osd.id)
}

/// The device-mapper node of an OSD's `block.db` (`wal` false) or
/// `block.wal`: after those of the block volumes.
fn aux_dm_node(osd: &Osd, wal: bool) -> String {
    format!("/dev/dm-{}", 100 + 2 * osd.id + u32::from(wal))
}

/// `GET /nodes/{node}/ceph/osd`: `osd df tree` as PVE nests it (the
/// `default` root, a host bucket per node with OSDs, the OSDs with
/// their state, usage and metadata), and the OSD map's flags.
pub fn osd_tree(ceph: &Ceph, install: &dyn Fn(&str) -> Option<Install>) -> Value {
    let mut hosts: Vec<&str> = ceph.osds().iter().map(|o| o.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let host_nodes: Vec<Value> = hosts
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let osds: Vec<&Osd> = ceph.osds().iter().filter(|o| o.host == *host).collect();
            let version = install(host);
            let children: Vec<Value> = osds
                .iter()
                .map(|o| {
                    let total = o.size / 1024 * 1024;
                    let used = OSD_OVERHEAD;
                    let mut v = json!({
                        "id": o.id,
                        "name": o.name(),
                        "type": "osd",
                        "status": if o.up { "up" } else { "down" },
                        "crush_weight": o.crush_weight(),
                        "reweight": if o.is_in { 1 } else { 0 },
                        "device_class": o.class,
                        "pgs": 0,
                        "in": u8::from(o.is_in),
                        "total_space": total,
                        "bytes_used": used,
                        "percent_used": (used as f64 * 100.0) / total.max(1) as f64,
                        "commit_latency_ms": 0,
                        "apply_latency_ms": 0,
                        "osdtype": "bluestore",
                        "blfsdev": dm_node(o),
                        "dbdev": if o.db.is_some() { aux_dm_node(o, false) } else { dm_node(o) },
                        "waldev": o.wal.as_ref().map(|_| aux_dm_node(o, true)),
                        "host": host,
                        "leaf": 1,
                    });
                    if let (Some(i), Value::Object(m)) = (&version, &mut v) {
                        m.insert("ceph_version".into(), json!(i.version_line()));
                        m.insert("ceph_version_short".into(), json!(i.version));
                    }
                    v
                })
                .collect();
            let weight: f64 = osds.iter().map(|o| o.crush_weight()).sum();
            json!({
                "id": -2 - i as i64,
                "name": host,
                "type": "host",
                "crush_weight": weight,
                "reweight": -1,
                "pgs": 0,
                "children": children,
                "leaf": 0,
                "version": version.map(|i| i.version),
            })
        })
        .collect();
    let weight: f64 = ceph.osds().iter().map(Osd::crush_weight).sum();
    let mut root = json!({
        "id": -1,
        "name": "default",
        "type": "root",
        "crush_weight": weight,
        "reweight": -1,
        "pgs": 0,
        "leaf": 0,
    });
    if !host_nodes.is_empty()
        && let Value::Object(m) = &mut root
    {
        m.insert("children".into(), Value::Array(host_nodes));
    }
    json!({
        "root": { "leaf": 0, "children": [root] },
        "flags": osdmap_flags(ceph),
    })
}

/// `GET /nodes/{node}/ceph/osd/{osdid}/metadata`: on 9.2 `pid` only
/// while the OSD runs, `support_discard` a boolean and `encrypted`;
/// before, `pid` always (`0` when stopped) and `support_discard` `0`/`1`.
pub fn osd_details(osd: &Osd, install: Option<&Install>, ip: &str, v92: bool) -> Value {
    let pid = if osd.up { 2_100 + osd.id } else { 0 };
    let addr = |port: u32| format!("[v2:{ip}:{port}/{pid},v1:{ip}:{}/{pid}]", port + 1);
    let mut o = json!({
        "hostname": osd.host,
        "id": osd.id,
        "mem_usage": if osd.up { 687_865_856u64 } else { 0 },
        "osd_data": format!("/var/lib/ceph/osd/ceph-{}", osd.id),
        "osd_objectstore": "bluestore",
        "version": install.map(|i| format!("{} ({})", i.version, i.release.codename())),
        "front_addr": addr(6802),
        "back_addr": addr(6804),
        "hb_front_addr": addr(6808),
        "hb_back_addr": addr(6806),
    });
    if let Value::Object(m) = &mut o {
        if v92 {
            m.insert("encrypted".into(), json!(u8::from(osd.encrypted)));
            if pid != 0 {
                m.insert("pid".into(), json!(pid));
            }
        } else {
            m.insert("pid".into(), json!(pid));
        }
    }
    let discard_of = |class: &str| {
        let on = class != "hdd";
        if v92 { json!(on) } else { json!(u8::from(on)) }
    };
    let mut devices = vec![json!({
        "dev_node": dm_node(osd),
        "physical_device": osd.devpath.trim_start_matches("/dev/"),
        "size": osd.size,
        "support_discard": discard_of(&osd.class),
        "type": if osd.class == "hdd" { "hdd" } else { "ssd" },
        "device": "block",
    })];
    for (kind, lv) in [("db", &osd.db), ("wal", &osd.wal)] {
        if let Some(l) = lv {
            devices.push(json!({
                "dev_node": aux_dm_node(osd, kind == "wal"),
                "physical_device": l.device.trim_start_matches("/dev/"),
                "size": l.size,
                "support_discard": discard_of(&l.class),
                "type": if l.class == "hdd" { "hdd" } else { "ssd" },
                "device": kind,
            }));
        }
    }
    json!({ "osd": o, "devices": devices })
}

/// `GET /nodes/{node}/ceph/osd/{osdid}/lv-info` of the `block`, `db`
/// or `wal` volume; `None` where the OSD has none of that type.
pub fn osd_volume(osd: &Osd, kind: &str) -> Option<Value> {
    let (vg, lv, size) = match kind {
        "block" => (osd.vg.clone(), osd.lv(), osd.size / (4 << 20) * (4 << 20)),
        "db" => osd
            .db
            .as_ref()
            .map(|l| (l.vg.clone(), l.lv.clone(), l.size))?,
        "wal" => osd
            .wal
            .as_ref()
            .map(|l| (l.vg.clone(), l.lv.clone(), l.size))?,
        _ => return None,
    };
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(osd.created_ms.div_euclid(1000));
    let seed = lv.splitn(3, '-').nth(2).unwrap_or_default().to_string();
    Some(json!({
        "creation_time": format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} +0000"),
        "lv_name": lv,
        "lv_path": format!("/dev/{vg}/{lv}"),
        "lv_size": size,
        "lv_uuid": lv_uuid(&seed),
        "vg_name": vg,
    }))
}

/// An LVM uuid (`xxxxxx-xxxx-xxxx-xxxx-xxxx-xxxx-xxxxxx`) made from an
/// OSD's uuid.
fn lv_uuid(uuid: &str) -> String {
    let alnum: String = uuid
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .chain("LVM0abcdefgh".chars())
        .take(32)
        .collect();
    let parts = [6, 4, 4, 4, 4, 4, 6];
    let mut out = Vec::new();
    let mut at = 0;
    for n in parts {
        out.push(alnum.get(at..at + n).unwrap_or("0000").to_string());
        at += n;
    }
    out.join("-")
}
