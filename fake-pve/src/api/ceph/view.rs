//! The JSON of the Ceph answers: `ceph status` as PVE returns it (with
//! `health detail`, `mon dump` and `mgr dump` in place of the short
//! maps), the daemon lists, `config dump`, the metadata, the crush map's
//! text and the log lines.

use serde_json::{Map, Value, json};

use crate::model::ceph::{Ceph, Daemon, Install, Mon};

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
) -> Value {
    let quorum = ceph.quorum();
    let created = ceph.created_ms().unwrap_or(now * 1000);
    let (_, osd_epoch, _) = ceph.epochs();
    let standby_mds = ceph.mdss().iter().filter(|m| m.running).count();
    json!({
        "fsid": ceph.fsid().unwrap_or_default(),
        "health": health(ceph, 0),
        "election_epoch": 1 + 2 * ceph.mons().len(),
        "quorum": quorum,
        "quorum_names": ceph.quorum_names(),
        "quorum_age": (now - created.div_euclid(1000)).max(0),
        "monmap": mon_dump(ceph, release),
        "osdmap": {
            "epoch": osd_epoch,
            "num_osds": 0,
            "num_up_osds": 0,
            "osd_up_since": 0,
            "num_in_osds": 0,
            "osd_in_since": 0,
            "num_remapped_pgs": 0,
        },
        "pgmap": {
            "pgs_by_state": [],
            "num_pgs": 0,
            "num_pools": 0,
            "num_objects": 0,
            "data_bytes": 0,
            "bytes_used": 0,
            "bytes_avail": 0,
            "bytes_total": 0,
        },
        "fsmap": {
            "epoch": 1,
            "btime": stamp(created),
            "by_rank": [],
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
