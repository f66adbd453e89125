//! `fake-pve scenario capture`: a running PVE, read through its API
//! (GETs only), as the scenario that recreates it.
//!
//! The scenario's own fields take what they describe (cluster, nodes,
//! storages, guests with their pending changes and snapshots, pools,
//! users, groups, roles, ACLs, realms); the rest (firewall, SDN, HA,
//! backup and replication jobs, network interfaces besides bridges,
//! datacenter options, users' names and keys) becomes `setup` calls run
//! once the world is built. Nothing secret is read: passwords and token
//! secrets are not in any answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::convert::{call, field, items, params, split_list, text, texts, truthy};
use super::{Reader, TwinError, Unread};
use crate::PveVersion;

/// Guests read at once.
const PARALLEL: usize = 16;

/// A capture: the scenario and how it was read.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The release `/version` gave.
    pub release: PveVersion,
    /// The scenario, as a JSON document (see [`Capture::to_yaml`]).
    pub scenario: Value,
    /// GETs sent.
    pub calls: u64,
    /// What could not be read (permissions, absent).
    pub unread: Vec<Unread>,
    /// The paths read.
    pub paths: Vec<String>,
    /// How long it took.
    pub elapsed: Duration,
}

impl Capture {
    /// The scenario as YAML, with a header saying where it comes from.
    pub fn to_yaml(&self, url: &str) -> String {
        let body = serde_yaml::to_string(&self.scenario).unwrap_or_default();
        let mut out = format!(
            "# fake-pve scenario captured from {url} (PVE {}) with {} GETs.\n\
             # Log in to the twin as root@pam with fake-pve's --root-password;\n\
             # other users have no password and tokens new secrets.\n",
            self.release.version(),
            self.calls
        );
        for u in &self.unread {
            out.push_str(&format!("# not read: {} ({})\n", u.path, u.reason));
        }
        out.push_str(&body);
        out
    }

    /// The number of guests captured.
    pub fn guests(&self) -> usize {
        ["vms", "containers"]
            .iter()
            .map(|k| self.scenario[k].as_array().map_or(0, Vec::len))
            .sum()
    }
}

/// Reads the cluster `reader` reaches (`url` for messages).
///
/// # Errors
/// A non-PVE endpoint, another release, or a read that failed for
/// another reason than permissions.
pub async fn capture(reader: Arc<Reader>, url: &str) -> Result<Capture, TwinError> {
    let started = Instant::now();
    let release = reader.release(url).await?;
    let mut s = Map::new();
    let mut setup: Vec<Value> = Vec::new();
    let status = reader.get("/cluster/status").await?;
    let mut nodes: Vec<(u64, String, Value)> = Vec::new();
    for e in items(status.as_ref()) {
        match e["type"].as_str() {
            Some("cluster") => {
                if let Some(name) = field(e, "name") {
                    s.insert("cluster".into(), json!(name));
                }
            }
            Some("node") => {
                let id = e["nodeid"].as_u64().unwrap_or(0);
                nodes.push((id, field(e, "name").unwrap_or_default(), e.clone()));
            }
            _ => {}
        }
    }
    nodes.sort_by_key(|(id, _, _)| *id);
    let listed = reader.get("/nodes").await?;
    if nodes.is_empty() {
        for n in items(listed.as_ref()) {
            nodes.push((0, field(n, "node").unwrap_or_default(), n.clone()));
        }
    }
    let mut node_specs = Vec::new();
    for (_, name, entry) in &nodes {
        let row = items(listed.as_ref())
            .iter()
            .find(|n| n["node"].as_str() == Some(name));
        node_specs.push(node(&reader, name, entry, row, &mut setup).await?);
    }
    s.insert("nodes".into(), Value::Array(node_specs));
    s.insert("storages".into(), storages(&reader, &nodes).await?);
    let (vms, cts, guest_setup) = guests(&reader).await?;
    s.insert("vms".into(), Value::Array(vms));
    s.insert("containers".into(), Value::Array(cts));
    s.insert("pools".into(), pools(&reader).await?);
    access(&reader, &mut s, &mut setup).await?;
    // The cluster's firewall before the guests' (whose rules may name
    // its groups, aliases and IP sets); 8.4's HA groups before the
    // resources in them, 9.x's rules after the resources they name.
    cluster_setup(&reader, &mut setup).await?;
    let mut late = Vec::new();
    ha_setup(
        &reader,
        release,
        if release == PveVersion::V8_4 {
            &mut setup
        } else {
            &mut late
        },
    )
    .await?;
    setup.extend(guest_setup);
    setup.extend(late);
    jobs_setup(&reader, &mut setup).await?;
    for c in &mut setup {
        schema_params(release, c);
    }
    s.insert("setup".into(), Value::Array(setup));
    Ok(Capture {
        release,
        scenario: Value::Object(s),
        calls: reader.calls(),
        unread: reader.unread(),
        paths: reader.read_paths(),
        elapsed: started.elapsed(),
    })
}

/// A node: its size from its status (or the list when it is offline),
/// bridges, DNS, time zone; its other interfaces and firewall as setup.
async fn node(
    reader: &Reader,
    name: &str,
    entry: &Value,
    row: Option<&Value>,
    setup: &mut Vec<Value>,
) -> Result<Value, TwinError> {
    let mut n = Map::new();
    n.insert("name".into(), json!(name));
    let online = entry.get("online").is_none_or(|o| truthy(Some(o)))
        && row.is_none_or(|r| r["status"].as_str() != Some("offline"));
    if !online {
        n.insert("status".into(), json!("offline"));
    }
    if let Some(ip) = field(entry, "ip") {
        n.insert("ip".into(), json!(ip));
    }
    if let Some(fp) = row.and_then(|r| field(r, "ssl_fingerprint")) {
        n.insert("fingerprint".into(), json!(fp));
    }
    if let Some(level) = row.and_then(|r| field(r, "level")) {
        n.insert("level".into(), json!(level));
    }
    let base = format!("/nodes/{name}");
    let status = if online {
        reader.get(&format!("{base}/status")).await?
    } else {
        None
    };
    if let Some(st) = &status {
        if let Some(c) = st["cpuinfo"]["cpus"].as_u64() {
            n.insert("cpus".into(), json!(c));
        }
        if let Some(c) = st["cpuinfo"]["sockets"].as_u64() {
            n.insert("sockets".into(), json!(c));
        }
        if let Some(m) = st["memory"]["total"].as_u64() {
            n.insert("memory".into(), json!(m));
        }
        if let Some(d) = st["rootfs"]["total"].as_u64() {
            n.insert("disk".into(), json!(d));
        }
    } else if let Some(r) = row {
        if let Some(c) = r["maxcpu"].as_u64() {
            n.insert("cpus".into(), json!(c));
        }
        if let Some(m) = r["maxmem"].as_u64() {
            n.insert("memory".into(), json!(m));
        }
    }
    if !online {
        return Ok(Value::Object(n));
    }
    // Network: bridges by name; bonds, VLANs and the rest as calls.
    if let Some(ifaces) = reader.get(&format!("{base}/network")).await? {
        let mut bridges = Vec::new();
        let mut made = false;
        let mut list: Vec<&Value> = items(Some(&ifaces)).iter().collect();
        // Bonds before the VLANs on them.
        list.sort_by_key(|i| (i["type"].as_str() == Some("vlan"), field(i, "iface")));
        for i in list {
            let iface = field(i, "iface").unwrap_or_default();
            match i["type"].as_str() {
                Some("bridge") => {
                    // Its settings over the twin's defaults.
                    let p = params(
                        i,
                        &[
                            "iface", "active", "exists", "priority", "families", "method",
                            "method6", "options", "options6",
                        ],
                    );
                    let mut p = p;
                    for (cidr, covered) in [
                        ("cidr", ["address", "netmask"]),
                        ("cidr6", ["address6", "netmask6"]),
                    ] {
                        if p.contains_key(cidr) {
                            for k in covered {
                                p.remove(k);
                            }
                        }
                    }
                    setup.push(call("PUT", &format!("{base}/network/{iface}"), p));
                    bridges.push(json!(iface));
                    made = true;
                }
                Some("eth" | "alias" | "unknown") | None => {}
                Some(_) => {
                    let p = params(
                        i,
                        &[
                            "active", "exists", "priority", "families", "method", "method6",
                            "options", "options6",
                        ],
                    );
                    setup.push(call("POST", &format!("{base}/network"), p));
                    made = true;
                }
            }
        }
        n.insert("bridges".into(), Value::Array(bridges));
        if made {
            setup.push(call("PUT", &format!("{base}/network"), Default::default()));
        }
    }
    if let Some(dns) = reader.get(&format!("{base}/dns")).await? {
        let d = texts(&dns, &[]);
        if !d.is_empty() {
            n.insert("dns".into(), Value::Object(d));
        }
    }
    if let Some(tz) = reader
        .get(&format!("{base}/time"))
        .await?
        .and_then(|t| field(&t, "timezone"))
    {
        n.insert("timezone".into(), json!(tz));
    }
    firewall(reader, &format!("{base}/firewall"), false, setup).await?;
    Ok(Value::Object(n))
}

/// `storage.cfg`, with the capacity and use a node reports.
async fn storages(reader: &Reader, nodes: &[(u64, String, Value)]) -> Result<Value, TwinError> {
    let Some(cfg) = reader.get("/storage").await? else {
        return Ok(Value::Array(Vec::new()));
    };
    let mut figures: Map<String, Value> = Map::new();
    for (_, name, entry) in nodes {
        if !entry.get("online").is_none_or(|o| truthy(Some(o))) {
            continue;
        }
        if let Some(list) = reader.get(&format!("/nodes/{name}/storage")).await? {
            for st in items(Some(&list)) {
                if let Some(id) = field(st, "storage")
                    && st["total"].as_u64().unwrap_or(0) > 0
                {
                    figures.entry(id).or_insert_with(|| st.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for st in items(Some(&cfg)) {
        let id = field(st, "storage").unwrap_or_default();
        let mut m = Map::new();
        m.insert("id".into(), json!(id));
        m.insert("type".into(), json!(field(st, "type").unwrap_or_default()));
        m.insert("content".into(), json!(split_list(st.get("content"))));
        if st.get("shared").is_some() {
            m.insert("shared".into(), json!(truthy(st.get("shared"))));
        }
        if st.get("nodes").is_some() {
            m.insert("nodes".into(), json!(split_list(st.get("nodes"))));
        }
        if truthy(st.get("disable")) {
            m.insert("disable".into(), json!(true));
        }
        if let Some(f) = figures.get(&id) {
            m.insert("size".into(), f["total"].clone());
            m.insert("used".into(), f["used"].clone());
        }
        for (k, v) in texts(
            st,
            &["storage", "type", "content", "shared", "nodes", "disable"],
        ) {
            m.insert(k, v);
        }
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

type Guests = (Vec<Value>, Vec<Value>, Vec<Value>);

/// The guests `/cluster/resources` lists, read [`PARALLEL`] at a time.
async fn guests(reader: &Arc<Reader>) -> Result<Guests, TwinError> {
    let list = reader.get("/cluster/resources?type=vm").await?;
    let mut rows: Vec<Value> = items(list.as_ref()).to_vec();
    rows.sort_by_key(|r| r["vmid"].as_u64());
    let ha = reader.get("/cluster/ha/resources").await?;
    let (mut vms, mut cts, mut setup) = (Vec::new(), Vec::new(), Vec::new());
    for chunk in rows.chunks(PARALLEL) {
        let mut set = tokio::task::JoinSet::new();
        for (i, row) in chunk.iter().enumerate() {
            let (reader, row) = (Arc::clone(reader), row.clone());
            set.spawn(async move { (i, guest(&reader, &row).await) });
        }
        let mut done: Vec<(usize, Result<_, TwinError>)> = set.join_all().await;
        done.sort_by_key(|(i, _)| *i);
        for (_, r) in done {
            let Some((kind, spec, calls)) = r? else {
                continue;
            };
            setup.extend(calls);
            if kind == "lxc" {
                cts.push(spec);
            } else {
                vms.push(spec);
            }
        }
    }
    for r in items(ha.as_ref()) {
        let p = params(r, &["type", "state-info"]);
        setup.push(call("POST", "/cluster/ha/resources", p));
    }
    Ok((vms, cts, setup))
}

/// One guest: its config, pending changes, snapshots and firewall.
async fn guest(
    reader: &Reader,
    row: &Value,
) -> Result<Option<(String, Value, Vec<Value>)>, TwinError> {
    let (Some(vmid), Some(node)) = (row["vmid"].as_u64(), field(row, "node")) else {
        return Ok(None);
    };
    let kind = field(row, "type").unwrap_or_else(|| "qemu".into());
    let base = format!("/nodes/{node}/{kind}/{vmid}");
    // The config as it is, not with its pending changes applied.
    let Some(config) = reader.get(&format!("{base}/config?current=1")).await? else {
        // Its node does not answer (offline) or the credentials may not
        // read it: what the cluster's list says of it.
        return Ok(Some((
            kind.clone(),
            from_row(vmid, &node, &kind, row),
            Vec::new(),
        )));
    };
    let mut spec = Map::new();
    spec.insert("vmid".into(), json!(vmid));
    spec.insert("node".into(), json!(node));
    let running = matches!(row["status"].as_str(), Some("running" | "paused"));
    spec.insert(
        "status".into(),
        json!(if running { "running" } else { "stopped" }),
    );
    let mut conf = texts(&config, &[]);
    if let Some(p) = reader.get(&format!("{base}/pending")).await? {
        let (mut pending, mut deleted) = (Map::new(), Vec::new());
        for r in items(Some(&p)) {
            let Some(key) = field(r, "key") else { continue };
            if let Some(v) = r.get("pending") {
                pending.insert(key.clone(), json!(text(v)));
            }
            match r["delete"].as_u64() {
                Some(2) => deleted.push(json!(format!("!{key}"))),
                Some(1) => deleted.push(json!(key)),
                _ => {}
            }
        }
        if !pending.is_empty() {
            spec.insert("pending".into(), Value::Object(pending));
        }
        if !deleted.is_empty() {
            spec.insert("pending_delete".into(), Value::Array(deleted));
        }
    }
    if let Some(list) = reader.get(&format!("{base}/snapshot")).await? {
        let mut snaps = Map::new();
        for sn in items(Some(&list)) {
            let Some(name) = field(sn, "name") else {
                continue;
            };
            if name == "current" {
                if let Some(p) = field(sn, "parent") {
                    conf.insert("parent".into(), json!(p));
                }
                continue;
            }
            let mut section = reader
                .get(&format!("{base}/snapshot/{name}/config"))
                .await?
                .map(|c| texts(&c, &[]))
                .unwrap_or_default();
            for k in ["snaptime", "description", "parent", "vmstate"] {
                if let Some(v) = field(sn, k)
                    && !section.contains_key(k)
                    && !(k == "vmstate" && v == "0")
                {
                    section.insert(k.into(), json!(v));
                }
            }
            snaps.insert(name, Value::Object(section));
        }
        if !snaps.is_empty() {
            spec.insert("snapshots".into(), Value::Object(snaps));
        }
    }
    spec.insert("config".into(), Value::Object(conf));
    let mut setup = Vec::new();
    firewall(reader, &format!("{base}/firewall"), true, &mut setup).await?;
    Ok(Some((kind, Value::Object(spec), setup)))
}

/// A guest whose config could not be read, as `/cluster/resources`
/// shows it: its name, tags, template flag, CPUs and memory.
fn from_row(vmid: u64, node: &str, kind: &str, row: &Value) -> Value {
    let mut conf = Map::new();
    if let Some(name) = field(row, "name") {
        let key = if kind == "lxc" { "hostname" } else { "name" };
        conf.insert(key.into(), json!(name));
    }
    if let Some(tags) = field(row, "tags") {
        conf.insert("tags".into(), json!(tags));
    }
    if truthy(row.get("template")) {
        conf.insert("template".into(), json!("1"));
    }
    if let Some(c) = row["maxcpu"].as_u64().filter(|c| *c > 0) {
        conf.insert("cores".into(), json!(c.to_string()));
    }
    if let Some(m) = row["maxmem"].as_u64().filter(|m| *m > 0) {
        conf.insert("memory".into(), json!((m >> 20).to_string()));
    }
    json!({"vmid": vmid, "node": node, "status": "stopped", "config": conf})
}

/// A firewall level's options and rules (and, for the cluster and
/// guests, its aliases and IP sets) as calls.
async fn firewall(
    reader: &Reader,
    base: &str,
    sets: bool,
    setup: &mut Vec<Value>,
) -> Result<(), TwinError> {
    if sets {
        for a in items(reader.get(&format!("{base}/aliases")).await?.as_ref()) {
            setup.push(call(
                "POST",
                &format!("{base}/aliases"),
                params(a, &["ipversion"]),
            ));
        }
        for set in items(reader.get(&format!("{base}/ipset")).await?.as_ref()) {
            let Some(name) = field(set, "name") else {
                continue;
            };
            setup.push(call("POST", &format!("{base}/ipset"), params(set, &[])));
            let entries = reader.get(&format!("{base}/ipset/{name}")).await?;
            for e in items(entries.as_ref()) {
                setup.push(call(
                    "POST",
                    &format!("{base}/ipset/{name}"),
                    params(e, &[]),
                ));
            }
        }
    }
    rules(reader, &format!("{base}/rules"), setup).await?;
    if let Some(o) = reader.get(&format!("{base}/options")).await? {
        let p = params(&o, &[]);
        if !p.is_empty() {
            setup.push(call("PUT", &format!("{base}/options"), p));
        }
    }
    Ok(())
}

/// Firewall rules as POSTs, last first (a new rule goes on top).
async fn rules(reader: &Reader, path: &str, setup: &mut Vec<Value>) -> Result<(), TwinError> {
    let list = reader.get(path).await?;
    for r in items(list.as_ref()).iter().rev() {
        setup.push(call("POST", path, params(r, &["pos", "ipversion"])));
    }
    Ok(())
}

/// Resource pools with their members.
async fn pools(reader: &Reader) -> Result<Value, TwinError> {
    let mut out = Vec::new();
    for p in items(reader.get("/pools").await?.as_ref()) {
        let Some(id) = field(p, "poolid") else {
            continue;
        };
        let mut m = Map::new();
        m.insert("poolid".into(), json!(id));
        if let Some(c) = field(p, "comment") {
            m.insert("comment".into(), json!(c));
        }
        let members = reader.get(&format!("/pools/{id}")).await?;
        let (mut vms, mut storage) = (Vec::new(), Vec::new());
        for mem in items(members.as_ref().and_then(|v| v.get("members"))) {
            match mem["type"].as_str() {
                Some("storage") => storage.extend(field(mem, "storage").map(Value::from)),
                _ => vms.extend(mem["vmid"].as_u64().map(Value::from)),
            }
        }
        m.insert("vms".into(), Value::Array(vms));
        m.insert("storage".into(), Value::Array(storage));
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

/// Users (without passwords), tokens (without secrets), groups, custom
/// roles, ACL entries and realms.
async fn access(
    reader: &Reader,
    s: &mut Map<String, Value>,
    setup: &mut Vec<Value>,
) -> Result<(), TwinError> {
    let mut realms = Vec::new();
    for r in items(reader.get("/access/domains").await?.as_ref()) {
        let Some(realm) = field(r, "realm") else {
            continue;
        };
        let kind = field(r, "type").unwrap_or_default();
        if kind == "pam" || kind == "pve" {
            let p = params(r, &["realm", "type"]);
            if !p.is_empty() {
                setup.push(call("PUT", &format!("/access/domains/{realm}"), p));
            }
            continue;
        }
        let conf = reader.get(&format!("/access/domains/{realm}")).await?;
        let options = conf
            .map(|c| texts(&c, &["realm", "type"]))
            .unwrap_or_default();
        realms.push(json!({"realm": realm, "type": kind, "options": options}));
    }
    s.insert("realms".into(), Value::Array(realms));
    let mut users = Vec::new();
    for u in items(reader.get("/access/users?full=1").await?.as_ref()) {
        let Some(userid) = field(u, "userid") else {
            continue;
        };
        let tokens: Vec<Value> = items(u.get("tokens"))
            .iter()
            .map(|t| {
                let mut m = texts(t, &[]);
                m.insert("privsep".into(), json!(truthy(t.get("privsep"))));
                if let Some(e) = t["expire"].as_i64() {
                    m.insert("expire".into(), json!(e));
                }
                Value::Object(m)
            })
            .collect();
        let extra = params(
            u,
            &[
                "userid",
                "enable",
                "expire",
                "comment",
                "email",
                "tokens",
                "groups",
                "realm-type",
                "tfa-locked-until",
                "totp-locked",
            ],
        );
        if !extra.is_empty() {
            setup.push(call("PUT", &format!("/access/users/{userid}"), extra));
        }
        if userid == "root@pam" {
            if !tokens.is_empty() {
                users.push(json!({"userid": userid, "tokens": tokens}));
            }
            continue;
        }
        let mut m = Map::new();
        m.insert("userid".into(), json!(userid));
        m.insert(
            "enable".into(),
            json!(u.get("enable").is_none_or(|e| truthy(Some(e)))),
        );
        m.insert("expire".into(), json!(u["expire"].as_i64().unwrap_or(0)));
        for k in ["comment", "email"] {
            if let Some(v) = field(u, k) {
                m.insert(k.into(), json!(v));
            }
        }
        m.insert("tokens".into(), Value::Array(tokens));
        m.insert("groups".into(), json!(split_list(u.get("groups"))));
        users.push(Value::Object(m));
    }
    s.insert("users".into(), Value::Array(users));
    let groups: Vec<Value> = items(reader.get("/access/groups").await?.as_ref())
        .iter()
        .map(|g| {
            let mut m = texts(g, &["users"]);
            m.insert("members".into(), json!(split_list(g.get("users"))));
            Value::Object(m)
        })
        .collect();
    s.insert("groups".into(), Value::Array(groups));
    let roles: Vec<Value> = items(reader.get("/access/roles").await?.as_ref())
        .iter()
        .filter(|r| !truthy(r.get("special")))
        .map(|r| json!({"roleid": field(r, "roleid"), "privs": split_list(r.get("privs"))}))
        .collect();
    s.insert("roles".into(), Value::Array(roles));
    let acl: Vec<Value> = items(reader.get("/access/acl").await?.as_ref())
        .iter()
        .filter_map(|a| {
            let who = match a["type"].as_str()? {
                "user" => "users",
                "group" => "groups",
                "token" => "tokens",
                _ => return None,
            };
            Some(json!({
                "path": field(a, "path")?,
                "roles": [field(a, "roleid")?],
                who: [field(a, "ugid")?],
                "propagate": a.get("propagate").is_none_or(|p| truthy(Some(p))),
            }))
        })
        .collect();
    s.insert("acl".into(), Value::Array(acl));
    Ok(())
}

/// The cluster's firewall and SDN as calls.
async fn cluster_setup(reader: &Reader, setup: &mut Vec<Value>) -> Result<(), TwinError> {
    for g in items(reader.get("/cluster/firewall/groups").await?.as_ref()) {
        let Some(name) = field(g, "group") else {
            continue;
        };
        setup.push(call("POST", "/cluster/firewall/groups", params(g, &[])));
        rules(reader, &format!("/cluster/firewall/groups/{name}"), setup).await?;
    }
    firewall(reader, "/cluster/firewall", true, setup).await?;
    // SDN: what is applied, then applied again.
    let mut sdn = false;
    for (list, drop) in [
        ("/cluster/sdn/controllers", &["state", "pending"][..]),
        ("/cluster/sdn/ipams", &["state", "pending"][..]),
        ("/cluster/sdn/dns", &["state", "pending"][..]),
        ("/cluster/sdn/zones", &["state", "pending"][..]),
        ("/cluster/sdn/vnets", &["state", "pending"][..]),
    ] {
        for e in items(reader.get(list).await?.as_ref()) {
            if list.ends_with("ipams") && field(e, "ipam").as_deref() == Some("pve") {
                continue;
            }
            setup.push(call("POST", list, params(e, drop)));
            sdn = true;
            if list.ends_with("vnets")
                && let Some(vnet) = field(e, "vnet")
            {
                let path = format!("/cluster/sdn/vnets/{vnet}/subnets");
                for sub in items(reader.get(&path).await?.as_ref()) {
                    let mut p = params(
                        sub,
                        &[
                            "state", "pending", "cidr", "network", "mask", "vnet", "zone", "id",
                        ],
                    );
                    if let Some(cidr) = field(sub, "cidr") {
                        p.insert("subnet".into(), json!(cidr));
                    }
                    setup.push(call("POST", &path, p));
                }
            }
        }
    }
    if sdn {
        setup.push(call("PUT", "/cluster/sdn", Default::default()));
    }
    Ok(())
}

/// HA groups (8.4) or rules (9.x) as calls.
async fn ha_setup(
    reader: &Reader,
    release: PveVersion,
    setup: &mut Vec<Value>,
) -> Result<(), TwinError> {
    let ha = if release == PveVersion::V8_4 {
        ("/cluster/ha/groups", "group")
    } else {
        ("/cluster/ha/rules", "rule")
    };
    // A group's `type` is only shown; a rule's is its kind.
    let shown: &[&str] = if ha.1 == "group" {
        &["type", "digest"]
    } else {
        &["errors"]
    };
    for g in items(reader.get(ha.0).await?.as_ref()) {
        if field(g, ha.1).is_some() {
            setup.push(call("POST", ha.0, params(g, shown)));
        }
    }
    Ok(())
}

/// Backup and replication jobs and the datacenter options as calls.
async fn jobs_setup(reader: &Reader, setup: &mut Vec<Value>) -> Result<(), TwinError> {
    for j in items(reader.get("/cluster/backup").await?.as_ref()) {
        setup.push(call(
            "POST",
            "/cluster/backup",
            params(j, &["next-run", "type"]),
        ));
    }
    for j in items(reader.get("/cluster/replication").await?.as_ref()) {
        setup.push(call(
            "POST",
            "/cluster/replication",
            params(j, &["jobnum", "guest", "source"]),
        ));
    }
    // One call an option: fake-pve emulates some of them only.
    if let Some(o) = reader.get("/cluster/options").await? {
        for (k, v) in params(&o, &["allowed-tags"]) {
            setup.push(call("PUT", "/cluster/options", [(k, v)].into()));
        }
    }
    Ok(())
}

/// Leaves out of a call the parameters its method does not take in the
/// release's schema (what a read only shows: a rule's `order`, a
/// bridge's `bridge_fd` on 9.x), and those its path names already.
fn schema_params(release: PveVersion, call: &mut Value) {
    let (Some(method), Some(path)) = (call["method"].as_str(), call["path"].as_str()) else {
        return;
    };
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let Some(found) = crate::spec::spec(release).find(method, &segs) else {
        return;
    };
    let props = &found.endpoint.parameters.properties;
    // 9.2's `allOf` groups refuse what none of them knows: their union
    // is the list.
    let open = found.endpoint.parameters.all_of.is_none()
        && matches!(
            found.endpoint.parameters.additional,
            None | Some(Value::Bool(true))
        );
    let in_path: Vec<String> = found.params.iter().map(|(k, _)| k.clone()).collect();
    if let Some(Value::Object(p)) = call.get_mut("params") {
        p.retain(|k, _| {
            !in_path.contains(k)
                && (open
                    || props.contains_key(k)
                    || props.keys().any(|name| {
                        name.strip_suffix("[n]").is_some_and(|stem| {
                            k.strip_prefix(stem).is_some_and(|n| {
                                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                            })
                        })
                    }))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_a_method_does_not_take_are_left_out() {
        let mut c = call(
            "POST",
            "/cluster/ha/rules",
            [
                ("rule".to_string(), json!("home")),
                ("type".to_string(), json!("node-affinity")),
                ("order".to_string(), json!("1")),
            ]
            .into(),
        );
        // 9.1's schema lists the parameters, 9.2's as `allOf` groups.
        let mut c92 = c.clone();
        schema_params(PveVersion::V9_1, &mut c);
        let keys: Vec<&String> = c["params"].as_object().expect("params").keys().collect();
        assert_eq!(keys, ["rule", "type"]);
        schema_params(PveVersion::V9_2, &mut c92);
        let keys: Vec<&String> = c92["params"].as_object().expect("params").keys().collect();
        assert_eq!(keys, ["rule", "type"]);
        let mut c = call(
            "PUT",
            "/nodes/pve/network/vmbr0",
            [
                ("iface".to_string(), json!("vmbr0")),
                ("type".to_string(), json!("bridge")),
                ("comments".to_string(), json!("uplink")),
                ("bridge_fd".to_string(), json!("0")),
            ]
            .into(),
        );
        schema_params(PveVersion::V9_1, &mut c);
        let keys: Vec<&String> = c["params"].as_object().expect("params").keys().collect();
        assert_eq!(keys, ["comments", "type"]);
    }
}
