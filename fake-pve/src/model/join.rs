//! Joining a cluster: `POST /cluster/config/join` (pve-cluster
//! `PVE/API2/ClusterConfig.pm` `join`, a `clusterjoin` worker running
//! `PVE::Cluster::Setup::join`).
//!
//! The model's part, in the order the worker reaches it: the checks of
//! `assert_joinable` and the lines they print; the join API version the
//! cluster must have; the arguments sent to the cluster's `addnode`;
//! the lines of `finish_join`; and what the joining node is once the
//! cluster answered: the member of the cluster the returned
//! `corosync.conf` describes, with the shared configuration pmxcfs would
//! bring over (read from the cluster's API, see [`SharedConfig`]).
//! On the cluster's side, the new member coming up ([`node_joined`]).
//!
//! The HTTPS conversation with the cluster is the wire's (`crate::join`),
//! which holds the task open while it talks and ends it through
//! [`Cluster::finish_join`] (journaled, so that a data directory keeps
//! the join).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::access::{Group, Token, User, shadow};
use super::acl::AclNode;
use super::cluster::{Cluster, Storage};
use super::corosync::{self, Corosync, CorosyncConf, Link};
use super::nodes::{Node, NodeStatus, Nodes};
use super::tasks::Worker;
use super::{Context, Error, Result};

/// The task type of a join.
pub const TASK: &str = "clusterjoin";

/// The join API version this node speaks (`JOIN_API_VERSION`).
pub const JOIN_API_VERSION: i64 = corosync::JOIN_API_VERSION as i64;

/// What `lock_file` says when another join holds `/var/lock/pvecm.lock`
/// for the 10 seconds it waits.
pub const LOCKED: &str = "can't lock file '/var/lock/pvecm.lock' - got timeout";

/// What a join refused by [`joinable_report`] ends with.
pub const NOT_JOINABLE: &str = "Check if node may join a cluster failed!";

/// What a join ends with when the cluster refused the new node.
pub const ABORTED: &str = "Cluster join aborted!";

/// The parameters of `POST /cluster/config/join` but the password.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinParams {
    /// `hostname`: a member of the cluster (`host`, or fake-pve's
    /// `host:port` when its API is not on 8006).
    pub hostname: String,
    /// `fingerprint`: the SHA-256 fingerprint of its certificate.
    pub fingerprint: String,
    /// `nodeid`.
    pub nodeid: Option<u32>,
    /// `votes`.
    pub votes: Option<u64>,
    /// `force`, when given (a given `0` is passed on too).
    pub force: Option<bool>,
    /// `linkN` by number.
    pub links: BTreeMap<u32, Link>,
}

/// A join for the wire to carry out: its task, the local node and what
/// the call was given. The password lives in memory only: never in a
/// saved world or the journal.
pub struct JoinJob {
    /// The `clusterjoin` task, held open until the join ends.
    pub upid: String,
    /// The joining node (the local node).
    pub node: String,
    /// Its address (`remote_node_ip`), the fallback link.
    pub local_ip: String,
    /// The parameters.
    pub params: JoinParams,
    /// `password`: root@pam's on the cluster.
    pub password: String,
}

impl fmt::Debug for JoinJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinJob")
            .field("upid", &self.upid)
            .field("node", &self.node)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

/// The addresses `get_local_ip_from_cidr` finds on the local node: its
/// own, those its network configuration gives its interfaces, loopback's.
fn local_ips(c: &Cluster) -> BTreeSet<IpAddr> {
    let local = c.nodes.local();
    let mut texts = vec!["127.0.0.1".to_string(), "::1".to_string()];
    if let Some(n) = c.nodes.get(local) {
        texts.push(n.ip.clone());
    }
    if let Some(net) = c.network.get(local) {
        for conf in net.current.values() {
            for key in ["address", "address6", "cidr", "cidr6"] {
                if let Some(v) = conf.get(key).and_then(|v| v.as_str()) {
                    texts.push(v.split('/').next().unwrap_or_default().to_string());
                }
            }
        }
    }
    texts.iter().filter_map(|t| t.parse().ok()).collect()
}

/// `assert_joinable`'s findings on the local node, in its order: a
/// member of a cluster has corosync's key, `corosync.conf` and a
/// running corosync; any guest is one too many; and each link's address
/// must be one of the node's (its own address always is). Each ends as
/// PVE ends it (the address checks with a newline of their own).
pub fn joinable_errors(c: &Cluster, links: &BTreeMap<u32, Link>) -> Vec<String> {
    let mut errors = Vec::new();
    let member = c.nodes.cluster_name().is_some();
    if member {
        errors.push("authentication key '/etc/corosync/authkey' already exists".into());
        errors.push("cluster config '/etc/pve/corosync.conf' already exists".into());
    }
    if !c.guests.all_ids().is_empty() {
        errors.push("this host already contains virtual guests".into());
    }
    if member {
        errors.push("corosync is already running, is this node already in a cluster?!".into());
    }
    let ips = local_ips(c);
    for (n, l) in links {
        let logid = format!("link{n}");
        let ip = match l.address.parse::<IpAddr>() {
            Ok(ip) => ip,
            Err(_) if l.address == c.nodes.local() => continue,
            Err(_) => {
                let host = &l.address;
                errors.push(format!(
                    "{logid}: cannot use '{host}': hostname lookup '{host}' failed - failed to get address info for: {host}: Name or service not known\n\n"
                ));
                continue;
            }
        };
        if !ips.contains(&ip) {
            errors.push(format!(
                "{logid}: cannot use IP '{}', not found on local node!\n",
                l.address
            ));
        }
    }
    errors
}

/// Text as lines, the newline that ends it not starting another.
fn lines_of(text: &str) -> Vec<String> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.split('\n').map(str::to_string).collect()
}

/// What `assert_joinable` prints of its findings, and the error the join
/// ends with unless `force` lets it go on.
pub fn joinable_report(errors: &[String], force: bool) -> (Vec<String>, Option<String>) {
    if errors.is_empty() {
        return (Vec::new(), None);
    }
    let mut text = String::from("detected the following error(s):\n");
    for e in errors {
        text.push_str(&format!("* {e}\n"));
    }
    let mut lines = lines_of(&text);
    if !force {
        return (lines, Some(NOT_JOINABLE.into()));
    }
    lines.extend(lines_of(
        "\nWARNING : detected error but forced to continue!\n\n",
    ));
    (lines, None)
}

/// `assert_we_can_join_cluster_version`: the cluster's join API version
/// (0 when it answers none) must be at least one below this node's.
///
/// # Errors
/// `error: incompatible join API version on cluster (v), ...` (with
/// PVE's missing space).
pub fn check_cluster_version(version: i64) -> Result<()> {
    let min = JOIN_API_VERSION - 1;
    if version >= min {
        return Ok(());
    }
    Err(Error::failed(format!(
        "error: incompatible join API version on cluster ({version}), local node has {JOIN_API_VERSION} and supports >= {min}. Make sureall cluster nodes are up-to-date."
    )))
}

/// `print_corosync_link`: the address, then its priority.
fn print_link(l: &Link) -> String {
    match l.priority {
        Some(p) => format!("{},priority={p}", l.address),
        None => l.address.clone(),
    }
}

/// The arguments of the `addnode` call to the cluster (API version
/// `apiver`): `force`, `nodeid`, `votes` and the links as given; without
/// links the local address (`link0` for a cluster of API version 0,
/// `new_node_ip` otherwise, with the line that says so); `apiversion`.
pub fn addnode_args(
    p: &JoinParams,
    local_ip: &str,
    apiver: i64,
) -> (Vec<(String, String)>, Option<String>) {
    let mut args = Vec::new();
    if let Some(f) = p.force {
        args.push(("force".into(), u8::from(f).to_string()));
    }
    if let Some(n) = p.nodeid.filter(|n| *n != 0) {
        args.push(("nodeid".into(), n.to_string()));
    }
    if let Some(v) = p.votes {
        args.push(("votes".into(), v.to_string()));
    }
    for (n, l) in &p.links {
        args.push((format!("link{n}"), print_link(l)));
    }
    let mut line = None;
    if p.links.is_empty() {
        let key = if apiver == 0 { "link0" } else { "new_node_ip" };
        args.push((key.into(), local_ip.to_string()));
        line = Some(format!(
            "No cluster network links passed explicitly, fallback to local node IP '{local_ip}'"
        ));
    }
    if apiver >= 1 {
        args.push(("apiversion".into(), JOIN_API_VERSION.to_string()));
    }
    (args, line)
}

/// What `finish_join` prints before pmxcfs syncs: the service stopped
/// and the node's own configuration database backed up (at `now`).
pub fn finish_lines_before_sync(now: i64) -> Vec<String> {
    vec![
        "stopping pve-cluster service".into(),
        format!("backup old database to '/var/lib/pve-cluster/backup/config-{now}.sql.gz'"),
    ]
}

/// What `finish_join` prints once pmxcfs is back with the cluster's
/// files: quorum, the node's files and certificate, the SSH keys, the
/// services restarted.
pub fn finish_lines_after_sync(node: &str) -> Vec<String> {
    vec![
        "waiting for quorum...OK".into(),
        "(re)generate node files".into(),
        "generate new node certificate".into(),
        "merge authorized SSH keys".into(),
        "generated new node certificate, restart pveproxy and pvedaemon services".into(),
        format!("successfully added node '{node}' to cluster."),
    ]
}

/// A member of the cluster as the cluster reports it (`/cluster/status`
/// and `/nodes`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberFacts {
    /// The node.
    pub name: String,
    /// Whether it is online.
    pub online: bool,
    /// Its address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// Its certificate's fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_fingerprint: Option<String>,
    /// Its CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// Its memory in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// Its uptime in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime: Option<i64>,
    /// Its subscription level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
}

/// A value as text: strings as they are, numbers written out, booleans
/// as 0/1.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(u8::from(*b).to_string()),
        _ => None,
    }
}

/// A value as a number, given as one or as text.
fn number(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.parse().ok(),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// A flag, given as 0/1, a boolean or text.
fn flag(v: &Value) -> bool {
    number(v).is_some_and(|n| n != 0)
}

/// The items of an answer that is a list.
fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// A comma-separated list.
fn split(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().filter_map(text).collect(),
        other => text(other)
            .map(|t| {
                t.split([',', ';', ' '])
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The members as the cluster's `/cluster/status` and `/nodes` report
/// them.
pub fn member_facts(status: &Value, nodes: &Value) -> Vec<MemberFacts> {
    let mut out = Vec::new();
    for e in items(status).iter().filter(|e| e["type"] == "node") {
        let Some(name) = e["name"].as_str() else {
            continue;
        };
        let row = items(nodes).iter().find(|n| n["node"] == name);
        let field = |k: &str| row.map(|r| &r[k]);
        out.push(MemberFacts {
            name: name.to_string(),
            online: flag(&e["online"]),
            ip: text(&e["ip"]),
            ssl_fingerprint: field("ssl_fingerprint").and_then(text),
            cpus: field("maxcpu")
                .and_then(number)
                .and_then(|n| u32::try_from(n).ok()),
            memory: field("maxmem")
                .and_then(number)
                .and_then(|n| u64::try_from(n).ok()),
            uptime: field("uptime").and_then(number),
            level: text(&e["level"]).filter(|l| !l.is_empty()),
        });
    }
    out
}

/// A resource pool as the cluster has it: its comment and storages (its
/// guests are the cluster's other nodes', which this world does not
/// hold).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncedPool {
    /// The pool.
    pub poolid: String,
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Its member storages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<String>,
}

/// The cluster's answers the shared configuration is read from, as its
/// API gave them.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// `GET /storage`.
    pub storage: Value,
    /// `GET /access/users?full=1`.
    pub users: Value,
    /// `GET /access/groups`.
    pub groups: Value,
    /// `GET /access/roles`.
    pub roles: Value,
    /// `GET /access/acl`.
    pub acl: Value,
    /// Each pool of `GET /pools` as `GET /pools/{poolid}` answers it,
    /// with its `poolid`.
    pub pools: Vec<Value>,
    /// `GET /cluster/options`.
    pub options: Value,
}

/// What pmxcfs brings over from the cluster that this emulation syncs:
/// `storage.cfg`, `user.cfg` (users and their tokens, groups, custom
/// roles, ACLs, pools) and `datacenter.cfg`. Passwords (`priv/shadow.cfg`)
/// and token secrets (`priv/token.cfg`) are in no answer: they are not.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SharedConfig {
    /// `storage.cfg`, in order.
    pub storages: Vec<Storage>,
    /// The users, without passwords; their tokens without secrets.
    pub users: Vec<User>,
    /// The groups.
    pub groups: BTreeMap<String, Group>,
    /// The custom roles.
    pub roles: BTreeMap<String, BTreeSet<String>>,
    /// The ACLs by path.
    pub acl: BTreeMap<String, AclNode>,
    /// The pools.
    pub pools: Vec<SyncedPool>,
    /// `datacenter.cfg`'s options as they are written.
    pub datacenter: BTreeMap<String, String>,
}

/// Keys of `GET /storage` that are not options.
const STORAGE_KEYS: &[&str] = &[
    "storage", "type", "content", "shared", "nodes", "disable", "digest",
];

/// A property string of `GET /cluster/options`' parsed options, written
/// again (`k=v` pairs, lists joined with `;`).
fn property_string(v: &serde_json::Map<String, Value>) -> String {
    v.iter()
        .filter_map(|(k, v)| {
            let value = match v {
                Value::Array(a) => a.iter().filter_map(text).collect::<Vec<_>>().join(";"),
                other => text(other)?,
            };
            Some(format!("{k}={value}"))
        })
        .collect::<Vec<_>>()
        .join(",")
}

impl SharedConfig {
    /// The shared configuration the cluster's answers give.
    pub fn from_answers(a: &Answers) -> Self {
        let mut out = Self::default();
        for s in items(&a.storage) {
            let (Some(id), Some(kind)) = (s["storage"].as_str(), s["type"].as_str()) else {
                continue;
            };
            let content = match s["content"].as_str() {
                None | Some("none") => Vec::new(),
                Some(_) => split(&s["content"]),
            };
            let options = s
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| !STORAGE_KEYS.contains(&k.as_str()))
                .filter_map(|(k, v)| Some((k.clone(), text(v)?)))
                .collect();
            let nodes = s.get("nodes").map(split).filter(|n| !n.is_empty());
            out.storages.push(Storage {
                storage: id.to_string(),
                kind: kind.to_string(),
                content,
                shared: flag(&s["shared"]),
                nodes,
                disable: flag(&s["disable"]),
                total: 100 << 30,
                used: 0,
                options,
            });
        }
        for u in items(&a.users) {
            let Some(userid) = u["userid"].as_str() else {
                continue;
            };
            let mut user = User::new(userid);
            user.enable = u.get("enable").is_none_or(flag);
            user.expire = number(&u["expire"]).unwrap_or(0);
            for (k, field) in [
                ("comment", &mut user.comment),
                ("email", &mut user.email),
                ("firstname", &mut user.firstname),
                ("lastname", &mut user.lastname),
            ] {
                *field = text(&u[k]).filter(|t| !t.is_empty());
            }
            for t in items(&u["tokens"]) {
                let Some(tokenid) = t["tokenid"].as_str() else {
                    continue;
                };
                let token = Token {
                    tokenid: tokenid.to_string(),
                    secret: String::new(),
                    privsep: t.get("privsep").is_none_or(flag),
                    expire: number(&t["expire"]).unwrap_or(0),
                    comment: text(&t["comment"]).filter(|c| !c.is_empty()),
                };
                user.tokens.insert(tokenid.to_string(), token);
            }
            out.users.push(user);
        }
        for g in items(&a.groups) {
            let Some(id) = g["groupid"].as_str() else {
                continue;
            };
            let group = Group {
                comment: text(&g["comment"]).filter(|c| !c.is_empty()),
                members: split(&g["users"]).into_iter().collect(),
            };
            out.groups.insert(id.to_string(), group);
        }
        for r in items(&a.roles).iter().filter(|r| !flag(&r["special"])) {
            if let Some(id) = r["roleid"].as_str() {
                out.roles
                    .insert(id.to_string(), split(&r["privs"]).into_iter().collect());
            }
        }
        for e in items(&a.acl) {
            let (Some(path), Some(kind), Some(ugid), Some(role)) = (
                e["path"].as_str(),
                e["type"].as_str(),
                e["ugid"].as_str(),
                e["roleid"].as_str(),
            ) else {
                continue;
            };
            let node = out.acl.entry(path.to_string()).or_default();
            let subjects = match kind {
                "user" => &mut node.users,
                "group" => &mut node.groups,
                "token" => &mut node.tokens,
                _ => continue,
            };
            subjects
                .entry(ugid.to_string())
                .or_default()
                .insert(role.to_string(), flag(&e["propagate"]));
        }
        for p in &a.pools {
            let Some(poolid) = p["poolid"].as_str() else {
                continue;
            };
            let storage = items(&p["members"])
                .iter()
                .filter(|m| m["type"] == "storage")
                .filter_map(|m| m["storage"].as_str().map(str::to_string))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            out.pools.push(SyncedPool {
                poolid: poolid.to_string(),
                comment: text(&p["comment"]).filter(|c| !c.is_empty()),
                storage,
            });
        }
        out.pools.sort_by(|a, b| a.poolid.cmp(&b.poolid));
        for (k, v) in a.options.as_object().into_iter().flatten() {
            let value = match (k.as_str(), v) {
                ("allowed-tags", _) => continue,
                ("description", Value::String(d)) => d.trim_end_matches('\n').to_string(),
                (_, Value::Object(o)) => property_string(o),
                (_, Value::Array(a)) => a.iter().filter_map(text).collect::<Vec<_>>().join(";"),
                (_, other) => match text(other) {
                    Some(t) => t,
                    None => continue,
                },
            };
            if !value.is_empty() {
                out.datacenter.insert(k.clone(), value);
            }
        }
        out
    }
}

/// What the cluster answered and this node read of it: enough to be a
/// member.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Membership {
    /// `corosync.conf` as `addnode` answered it.
    pub corosync_conf: String,
    /// The members as the cluster reported them.
    pub members: Vec<MemberFacts>,
    /// The shared configuration.
    pub shared: SharedConfig,
}

/// The end of a join as its worker reached it: the task's whole log,
/// and either the error it ends with or the membership it leaves. The
/// journal keeps it (no secret is in it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finished {
    /// The task.
    pub upid: String,
    /// Its log, every line.
    pub lines: Vec<String>,
    /// The error it ends with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the node is once joined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membership: Option<Box<Membership>>,
}

/// Checks a `corosync.conf` the cluster answered: it parses and lists
/// `node`.
///
/// # Errors
/// `parse_conf`'s messages; `invalid corosync.conf` without `node`.
pub fn check_conf(text: &str, node: &str) -> Result<CorosyncConf> {
    let conf = corosync::parse_conf(text)?;
    if !conf.nodes.iter().any(|n| n.name == node) {
        return Err(Error::failed("invalid corosync.conf"));
    }
    Ok(conf)
}

/// What a node that joined a cluster through its own fake-pve tells the
/// cluster of itself when it comes up (`POST /_fake/nodes/{node}/joined`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinedFacts {
    /// The fingerprint of the certificate it serves.
    #[serde(default)]
    pub ssl_fingerprint: Option<String>,
    /// Its CPUs.
    #[serde(default)]
    pub cpus: Option<u32>,
    /// Its memory in bytes.
    #[serde(default)]
    pub memory: Option<u64>,
    /// Its uptime in seconds.
    #[serde(default)]
    pub uptime: Option<i64>,
}

/// The member `name` came up after it joined (at `now`): online, as
/// corosync sees it, with the facts it gave.
///
/// # Errors
/// `no such cluster node 'x'` for a name that is no member.
pub fn node_joined(nodes: &mut Nodes, name: &str, facts: &JoinedFacts, now: i64) -> Result<()> {
    let n = nodes
        .get_mut(name)
        .ok_or_else(|| Error::failed(format!("no such cluster node '{name}'")))?;
    n.status = NodeStatus::Online;
    n.back_at_ms = None;
    if let Some(fp) = &facts.ssl_fingerprint {
        fp.clone_into(&mut n.ssl_fingerprint);
    }
    if let Some(c) = facts.cpus {
        n.cpus = c;
    }
    if let Some(m) = facts.memory {
        n.memory = m;
    }
    if let Some(u) = facts.uptime {
        n.boot_time = now - u.max(0);
    }
    Ok(())
}

impl Cluster {
    /// Ends the join task of `f` as its worker reached the end: its log
    /// becomes `f`'s lines, and it ends with `f`'s error or, once the
    /// node is a member ([`Cluster::join_cluster`]), OK. A task that no
    /// longer runs (the world was replaced meanwhile) is left alone.
    pub fn finish_join(&mut self, f: &Finished, rq: &mut Context) {
        let now_ms = rq.now_ms();
        if !self
            .tasks
            .get(&f.upid)
            .is_ok_and(super::tasks::Task::running)
        {
            return;
        }
        let mut error = f.error.clone();
        if error.is_none()
            && let Some(m) = &f.membership
            && let Err(e) = self.join_cluster(m, rq)
        {
            error = Some(e.message().to_string());
        }
        let _ = self.tasks.set_log(&f.upid, f.lines.clone());
        let mut w = Worker::new(TASK, "");
        if let Some(e) = error {
            w = w.fail(e);
        }
        let _ = self.replan_task(&f.upid, now_ms, w, now_ms);
    }

    /// What `finish_join` leaves: the local node is a member of the
    /// cluster `m`'s `corosync.conf` describes, the other members as the
    /// cluster reported them; its own configuration database is gone
    /// (its guests' configs with it, as on PVE) and the shared
    /// configuration is the cluster's. What is not synced stays as it
    /// was.
    ///
    /// # Errors
    /// An answered `corosync.conf` that does not parse or lacks the local
    /// node.
    pub fn join_cluster(&mut self, m: &Membership, rq: &mut Context) -> Result<()> {
        let now = rq.now();
        let local = self.nodes.local().to_string();
        let conf = check_conf(&m.corosync_conf, &local)?;
        let mut listed = conf.nodes.clone();
        listed.sort_by_key(|n| n.nodeid);
        let mut members = Vec::new();
        for n in &listed {
            if n.name == local {
                let Some(mut me) = self.nodes.get(&local).cloned() else {
                    continue;
                };
                me.nodeid = n.nodeid;
                me.status = NodeStatus::Online;
                members.push(me);
                continue;
            }
            let facts = m.members.iter().find(|f| f.name == n.name);
            let ip = facts
                .and_then(|f| f.ip.clone())
                .or_else(|| n.links.values().next().cloned())
                .unwrap_or_default();
            let mut node = Node::joining(&n.name, n.nodeid, &ip, now);
            if let Some(f) = facts {
                node.status = if f.online {
                    NodeStatus::Online
                } else {
                    NodeStatus::Offline
                };
                if let Some(fp) = &f.ssl_fingerprint {
                    node.ssl_fingerprint.clone_from(fp);
                }
                if let Some(c) = f.cpus {
                    node.cpus = c;
                }
                if let Some(mem) = f.memory {
                    node.memory = mem;
                }
                if let Some(u) = f.uptime.filter(|_| f.online) {
                    node.boot_time = now - u.max(0);
                }
                if let Some(l) = &f.level {
                    node.level.clone_from(l);
                }
            }
            members.push(node);
        }
        let first = members.first().map(|n| n.name.clone()).unwrap_or_default();
        self.nodes = Nodes::new(Some(conf.cluster_name.clone()), local, members);
        self.corosync = Corosync::from_conf(&conf, &first);
        self.drop_guests();
        self.take_shared(&m.shared, rq);
        Ok(())
    }

    /// The guests' configs go with the node's configuration database
    /// (their volumes stay on the storages, as their disks do): each
    /// guest, its firewall, agent, HA resource and replication jobs.
    fn drop_guests(&mut self) {
        for vmid in self.guests.all_ids() {
            self.guests.remove(&vmid);
            self.guests.remove_ct(vmid);
            self.guests.forget_agent(vmid);
            self.firewall.remove_guest(vmid);
            self.ha.forget_guest(vmid);
            self.replication.remove_guest(vmid);
        }
    }

    /// The cluster's shared configuration in place of the node's own:
    /// `storage.cfg` (a storage the node had keeps its capacity),
    /// `user.cfg` and `datacenter.cfg`. A `pam` user keeps the node's own
    /// password (PAM is the node's); others have none, and tokens get a
    /// secret nobody knows (`priv/` is not read).
    fn take_shared(&mut self, shared: &SharedConfig, rq: &mut Context) {
        let version = self.version;
        let storages: Vec<Storage> = shared
            .storages
            .iter()
            .map(|s| {
                let mut s = s.clone();
                if let Some(old) = self.storage.find(&s.storage) {
                    s.total = old.total;
                    s.used = old.used;
                }
                s
            })
            .collect();
        self.storage.replace_cfg(storages);
        let old = std::mem::take(&mut self.access.users);
        for u in &shared.users {
            let mut user = u.clone();
            user.password = None;
            if user.userid.ends_with("@pam") {
                user.password = old.get(&user.userid).and_then(|o| o.password.clone());
            }
            for t in user.tokens.values_mut() {
                t.secret = shadow::token_digest(&rq.secret_uuid());
            }
            self.access.users.insert(user.userid.clone(), user);
        }
        if let Some(root) = old.get("root@pam")
            && !self.access.users.contains_key("root@pam")
        {
            self.access.users.insert("root@pam".into(), root.clone());
        }
        self.access.groups.clone_from(&shared.groups);
        self.access.roles.clone_from(&shared.roles);
        self.access.acl.clone_from(&shared.acl);
        let pools = self.access.pools_mut();
        *pools = super::pools::Pools::default();
        for p in &shared.pools {
            pools.insert_synced(&p.poolid, p.comment.clone(), &p.storage);
        }
        let mut dc = super::datacenter::Datacenter::default();
        if dc.set(version, &shared.datacenter, &[]).is_err() {
            // What one option refuses does not keep the others out.
            for (k, v) in &shared.datacenter {
                let one = BTreeMap::from([(k.clone(), v.clone())]);
                let _ = dc.set(version, &one, &[]);
            }
        }
        self.datacenter = dc;
        let rules = self.datacenter.tag_access(version);
        self.access.set_tag_access(rules);
    }
}
