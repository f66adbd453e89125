//! The authorization matrix: every method and path of every release's
//! schema, called by two callers who may do little, compared with what
//! PVE answers them.
//!
//! - `token`: a privilege-separated API token (`nobody@pve!matrix`) of a
//!   user without any ACL entry;
//! - `narrow`: a user (ticket) with `PVEVMUser` on `/vms/100` only.
//!
//! For a route whose schema `permissions` has a `check`, the expected
//! answer is worked out here from the check expression and the two
//! callers' grants (`expect_check`), without fake-pve's evaluator. For a
//! route without one (`user: all`, `user: world`, root@pam only) the
//! handler decides in PVE; [`ROWS`] says for each what PVE's handler
//! answers the two callers, with the source it was read from. The test
//! fails when a release has such a route that the table does not cover.
//!
//! One in-process world per release (plain HTTP, instant tasks) is set up
//! by root@pam and walked once; every mismatch is collected and printed
//! before the test fails, so a destructive call that succeeds where PVE
//! refuses it shows up with its route.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use common::{Auth, Pve, builder, enc, start_with};
use fake_pve::{Latency, PveVersion, Scenario, Tls};
use reqwest::Method;
use serde_json::Value;

const TOKEN_SECRET: &str = "5a1e0f3c-7b2d-4c8e-9f10-2a3b4c5d6e7f";

/// The world both callers act in: VM 100 (granted to `narrow`), VM 102
/// in pool `mx`, container 101, a second user, the default storages.
const SCENARIO: &str = r"
nodes:
  - name: pve
    bridges: [vmbr0]
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, snippets, images] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, content: [images, rootdir] }
users:
  - userid: nobody@pve
    tokens:
      - { tokenid: matrix, secret: 5a1e0f3c-7b2d-4c8e-9f10-2a3b4c5d6e7f, privsep: true }
  - userid: narrow@pve
    password: narrowpass
  - userid: other@pve
    password: otherpass
    groups: [grp]
groups:
  - { groupid: grp, comment: matrix }
pools:
  - { poolid: mx, vms: [102] }
vms:
  - vmid: 100
    name: mine
    config: { scsi0: 'local-lvm:vm-100-disk-0,size=4G', cores: 1, net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' }
    snapshots:
      snapmx: { scsi0: 'local-lvm:vm-100-disk-0,size=4G', cores: 1, snaptime: 1700000000 }
  - vmid: 102
    name: theirs
    config: { scsi0: 'local-lvm:vm-102-disk-0,size=4G', cores: 1 }
containers:
  - vmid: 101
    hostname: ct
    config: { rootfs: 'local-lvm:vm-101-disk-0,size=4G', ostype: debian }
acl:
  - { path: /vms/100, roles: [PVEVMUser], users: [narrow@pve] }
";

/// Who calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// `nobody@pve!matrix`: privilege separation, no ACL.
    Token,
    /// `narrow@pve`: `PVEVMUser` on `/vms/100`.
    Narrow,
}

impl Caller {
    fn name(self) -> &'static str {
        match self {
            Caller::Token => "token",
            Caller::Narrow => "narrow",
        }
    }
}

/// What PVE answers a caller.
#[derive(Debug, Clone, PartialEq)]
enum Want {
    /// 200.
    Ok,
    /// Neither 401 nor 403: the permission checks pass; the handler may
    /// still refuse for another reason (a missing parameter or object).
    Pass,
    /// 403 with this message (without the final newline).
    Deny(String),
    /// This status with a message starting with this text.
    Fail(u16, String),
    /// 200 and a list whose items' `key` are exactly these.
    Exactly(&'static str, Vec<String>),
    /// 200 and a list whose items' `key` are among these.
    Within(&'static str, Vec<String>),
    /// 200 and a list without an item whose `key` is one of these.
    Lacks(&'static str, Vec<String>),
    /// 200 and the same items (by `key`) as root@pam gets.
    AsRoot(&'static str),
}

fn deny(m: &str) -> Want {
    if m.is_empty() {
        Want::Deny("Permission check failed".into())
    } else {
        Want::Deny(format!("Permission check failed{m}"))
    }
}

fn perm(path: &str, privs: &str) -> Want {
    Want::Deny(format!("Permission check failed ({path}, {privs})"))
}

fn fail(status: u16, m: &str) -> Want {
    Want::Fail(status, m.to_string())
}

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

fn empty(key: &'static str) -> Want {
    Want::Exactly(key, Vec::new())
}

fn only(key: &'static str, items: &[&str]) -> Want {
    Want::Exactly(key, texts(items))
}

fn within(key: &'static str, items: &[&str]) -> Want {
    Want::Within(key, texts(items))
}

fn lacks(key: &'static str, items: &[&str]) -> Want {
    Want::Lacks(key, texts(items))
}

fn as_root(key: &'static str) -> Want {
    Want::AsRoot(key)
}

fn ok(_: &World) -> Want {
    Want::Ok
}

fn pass(_: &World) -> Want {
    Want::Pass
}

/// A route without permissions: root@pam only
/// (`RPCEnvironment::check_api2_permissions`).
fn root(_: &World) -> Want {
    deny(" (user != root@pam)")
}

fn sdn_read(_: &World) -> Want {
    perm("/sdn/zones/zmx/vnmx", "SDN.Audit|SDN.Allocate")
}

fn sdn_alloc(_: &World) -> Want {
    perm("/sdn/zones/zmx/vnmx", "SDN.Allocate")
}

/// `check_volume_access` on VM 102's backup in `local`: the storage's
/// Datastore.AllocateSpace is checked before the guest's VM.Backup.
fn alloc_space(_: &World) -> Want {
    perm("/storage/local", "Datastore.AllocateSpace")
}

/// One route without a schema `check`: what PVE's handler answers.
struct Row {
    method: &'static str,
    path: &'static str,
    /// Query or form parameters (`a=1&b=2`); `{name}` is replaced by the
    /// world's object of that name.
    params: &'static str,
    token: fn(&World) -> Want,
    narrow: fn(&World) -> Want,
}

const fn r(
    method: &'static str,
    path: &'static str,
    params: &'static str,
    token: fn(&World) -> Want,
    narrow: fn(&World) -> Want,
) -> Row {
    Row {
        method,
        path,
        params,
        token,
        narrow,
    }
}

/// The objects the paths and parameters refer to.
struct World {
    pve: Pve,
    root: Auth,
    token: Auth,
    narrow: Auth,
    /// Placeholder values by name.
    values: BTreeMap<String, String>,
}

impl World {
    fn v(&self, name: &str) -> &str {
        self.values.get(name).map_or("", String::as_str)
    }
}

/// The privileges of `PVEVMUser` in each release (pve-access-control
/// `AccessControl.pm`, `$privgroups->{VM}` user and audit lists; the
/// `VM.GuestAgent.*` privileges came with 9.0).
fn vm_user_privs(v: PveVersion) -> BTreeSet<&'static str> {
    let mut p: BTreeSet<&str> = [
        "VM.Audit",
        "VM.Backup",
        "VM.Config.CDROM",
        "VM.Config.Cloudinit",
        "VM.Console",
        "VM.PowerMgmt",
    ]
    .into_iter()
    .collect();
    if v.is_v9() {
        p.extend([
            "VM.GuestAgent.Audit",
            "VM.GuestAgent.FileRead",
            "VM.GuestAgent.FileSystemMgmt",
            "VM.GuestAgent.FileWrite",
        ]);
    }
    p
}

/// PVE's `template_replace` and `normalize_path`.
fn template(path: &str, params: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').map_or(rest.len(), |e| start + e);
        let name = &rest[start + 1..end.min(rest.len())];
        out.push_str(params.get(name).map_or("", String::as_str));
        rest = rest.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    let parts: Vec<&str> = out.split('/').filter(|s| !s.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

/// What the two callers hold: nothing for the token, `PVEVMUser` on
/// `/vms/100` (no children there to propagate to) for `narrow`.
fn holds(caller: Caller, v: PveVersion, path: &str, privilege: &str) -> bool {
    caller == Caller::Narrow && path == "/vms/100" && vm_user_privs(v).contains(privilege)
}

/// A check's outcome: passed, refused quietly (inside an `or`), or an
/// error answered as it stands.
enum Eval {
    Yes,
    No,
    Err(Want),
}

fn strs(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// PVE's `exec_api2_perm_check` for the two callers, who hold nothing
/// under `/access`, so every `userid-group` and `perm-modify` test fails
/// for them (their messages are not compared: `None`).
fn eval(
    check: &Value,
    caller: Caller,
    v: PveVersion,
    params: &BTreeMap<String, String>,
    noerr: bool,
) -> Eval {
    let list = check.as_array().cloned().unwrap_or_default();
    let test = list.first().and_then(Value::as_str).unwrap_or_default();
    let refuse = |w: Want| if noerr { Eval::No } else { Eval::Err(w) };
    let user = match caller {
        Caller::Token => "nobody@pve!matrix",
        Caller::Narrow => "narrow@pve",
    };
    match test {
        "and" => {
            for sub in &list[1..] {
                match eval(sub, caller, v, params, false) {
                    Eval::Yes => {}
                    other => return other,
                }
            }
            Eval::Yes
        }
        "or" => {
            for sub in &list[1..] {
                match eval(sub, caller, v, params, true) {
                    Eval::Yes => return Eval::Yes,
                    Eval::Err(w) => return Eval::Err(w),
                    Eval::No => {}
                }
            }
            refuse(deny(""))
        }
        "perm" => {
            let opts: BTreeMap<&str, &Value> = list[3..]
                .chunks(2)
                .filter_map(|c| Some((c.first()?.as_str()?, c.get(1)?)))
                .collect();
            if let Some(p) = opts.get("require_param").and_then(|p| p.as_str())
                && !params.contains_key(p)
            {
                return refuse(deny(""));
            }
            let path = template(list[1].as_str().unwrap_or("/"), params);
            let privs = strs(list.get(2));
            let any = opts
                .get("any")
                .is_some_and(|a| a.as_i64() == Some(1) || a.as_bool() == Some(true));
            if any {
                if privs.iter().any(|p| holds(caller, v, &path, p)) {
                    return Eval::Yes;
                }
                return refuse(perm(&path, &privs.join("|")));
            }
            for p in privs {
                if !holds(caller, v, &path, p) {
                    return refuse(perm(&path, p));
                }
            }
            Eval::Yes
        }
        "userid-param" => {
            let userid = params.get("userid").map_or("", String::as_str);
            if userid.len() < 3 {
                return Eval::Err(Want::Fail(
                    500,
                    format!("user name '{userid}' is too short"),
                ));
            }
            if list.get(1).and_then(Value::as_str) == Some("self") && userid == user {
                return Eval::Yes;
            }
            refuse(Want::Fail(403, String::new()))
        }
        // Both need privileges under /access that neither caller has.
        _ => refuse(Want::Fail(403, String::new())),
    }
}

/// The expected answer of a route with a schema `check`.
fn expect_check(
    check: &Value,
    caller: Caller,
    v: PveVersion,
    params: &BTreeMap<String, String>,
) -> Want {
    match eval(check, caller, v, params, false) {
        Eval::Yes => Want::Pass,
        Eval::No => deny(""),
        Eval::Err(w) => w,
    }
}

/// A path's placeholders filled from the world.
fn fill(
    path: &str,
    w: &World,
    extra: &BTreeMap<String, String>,
) -> (String, BTreeMap<String, String>) {
    let mut params = BTreeMap::new();
    let mut out = Vec::new();
    let kind = if path.contains("/lxc/") { "ct" } else { "vm" };
    for seg in path.split('/') {
        if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            let value = extra.get(name).cloned().unwrap_or_else(|| {
                let key = match name {
                    "vmid" => format!("vmid-{kind}"),
                    "id" if path.contains("replication") => "replication".into(),
                    "id" if path.contains("/tfa/") => "tfa".into(),
                    "name" if path.contains("/acme/") => "acme".into(),
                    _ => name.to_string(),
                };
                w.v(&key).to_string()
            });
            out.push(enc(&value));
            params.insert(name.to_string(), value);
        } else {
            out.push(seg.to_string());
        }
    }
    (out.join("/"), params)
}

fn parse_params(text: &str, w: &World) -> BTreeMap<String, String> {
    let mut text = text.to_string();
    for (k, v) in &w.values {
        text = text.replace(&format!("{{{k}}}"), v);
    }
    // A key given more than once is an array: its values are kept
    // joined by newlines and sent as repeated keys.
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in text.split('&').filter_map(|kv| kv.split_once('=')) {
        out.entry(k.to_string())
            .and_modify(|old| {
                old.push('\n');
                old.push_str(v);
            })
            .or_insert_with(|| v.to_string());
    }
    out
}

fn form(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .flat_map(|(k, v)| v.split('\n').map(move |v| format!("{}={}", enc(k), enc(v))))
        .collect::<Vec<_>>()
        .join("&")
}

/// Calls one route as `caller`; answers status, message and data.
async fn call(
    w: &World,
    method: &str,
    path: &str,
    params: &BTreeMap<String, String>,
    caller: Caller,
) -> (u16, String, Value) {
    let auth = match caller {
        Caller::Token => &w.token,
        Caller::Narrow => &w.narrow,
    };
    call_as(w, auth, method, path, params).await
}

async fn call_as(
    w: &World,
    auth: &Auth,
    method: &str,
    path: &str,
    params: &BTreeMap<String, String>,
) -> (u16, String, Value) {
    let method = Method::from_bytes(method.as_bytes()).expect("method");
    let text = form(params);
    let r = if method == Method::GET || method == Method::DELETE {
        let q = if text.is_empty() {
            String::new()
        } else {
            format!("?{text}")
        };
        w.pve
            .send(method, &format!("/api2/json{path}{q}"), auth, None)
            .await
    } else {
        let body = (!text.is_empty()).then_some(("application/x-www-form-urlencoded", text));
        w.pve
            .send(method, &format!("/api2/json{path}"), auth, body)
            .await
    };
    let j: Value = serde_json::from_str(&r.text).unwrap_or(Value::Null);
    let msg = j["message"]
        .as_str()
        .map_or_else(|| r.reason.clone(), str::to_string);
    let msg = msg.strip_suffix('\n').unwrap_or(&msg).to_string();
    (r.status, msg, j["data"].clone())
}

fn keys(data: &Value, key: &str) -> BTreeSet<String> {
    data.as_array()
        .map(|a| {
            a.iter()
                .map(|i| match &i[key] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether an answer is what PVE gives; the difference otherwise.
/// `root_data` is root@pam's answer on the same call (for `AsRoot`).
fn compare(want: &Want, status: u16, msg: &str, data: &Value, root_data: &Value) -> Option<String> {
    let got = || Some(format!("got {status} {msg:?}"));
    match want {
        Want::Ok if status == 200 => None,
        Want::Pass if status != 401 && status != 403 => None,
        Want::Deny(m) if status == 403 && msg == m => None,
        Want::Fail(s, m) if status == *s && msg.starts_with(m.as_str()) => None,
        Want::Exactly(key, items) if status == 200 => {
            let listed = keys(data, key);
            let expected: BTreeSet<String> = items.iter().cloned().collect();
            (listed != expected).then(|| format!("lists {listed:?}"))
        }
        Want::Within(key, items) if status == 200 => {
            let extra: Vec<String> = keys(data, key)
                .into_iter()
                .filter(|k| !items.contains(k))
                .collect();
            (!extra.is_empty()).then(|| format!("also lists {extra:?}"))
        }
        Want::Lacks(key, items) if status == 200 => {
            let shown: Vec<String> = keys(data, key)
                .into_iter()
                .filter(|k| items.contains(k))
                .collect();
            (!shown.is_empty()).then(|| format!("lists {shown:?}"))
        }
        Want::AsRoot(key) if status == 200 => {
            let (listed, all) = (keys(data, key), keys(root_data, key));
            (listed != all).then(|| format!("lists {listed:?}, root@pam gets {all:?}"))
        }
        _ => got(),
    }
}

/// Sets up the world of one release as root@pam.
async fn world(version: PveVersion) -> World {
    let scenario = Scenario::parse(SCENARIO, "matrix.yaml").expect("scenario");
    let pve = start_with(
        builder()
            .pve_version(version)
            .scenario(scenario)
            .tls(Tls::Off)
            .latency(Latency::instant()),
    )
    .await;
    let root = pve.root().await;
    let narrow = pve.login_as("narrow@pve", "narrowpass").await;
    let token = Auth::Token(format!("PVEAPIToken=nobody@pve!matrix={TOKEN_SECRET}"));
    let mut values: BTreeMap<String, String> = [
        ("node", "pve"),
        ("vmid-vm", "100"),
        ("vmid-ct", "101"),
        ("snapname", "snapmx"),
        ("storage", "local"),
        ("poolid", "mx"),
        ("userid", "other@pve"),
        ("tokenid", "tk"),
        ("groupid", "grp"),
        ("roleid", "PVEVMUser"),
        ("realm", "pve"),
        ("zone", "zmx"),
        ("vnet", "vnmx"),
        ("subnet", "zmx-10.9.0.0-24"),
        ("ipam", "pve"),
        ("controller", "ctl"),
        ("dns", "dns"),
        ("fabric", "fab"),
        ("fabric_id", "fab"),
        ("node_id", "pve"),
        ("iface", "vmbr0"),
        ("service", "pveproxy"),
        ("pos", "0"),
        ("group", "grp"),
        ("name", "mx"),
        ("acme", "default"),
        ("cidr", "10.0.0.1"),
        ("replication", "100-0"),
        ("tfa", "totp0"),
        ("id", "mx"),
        ("sid", "vm:100"),
        ("rule", "r1"),
        ("flag", "noout"),
        ("monid", "pve"),
        ("osdid", "0"),
        ("pci-id-or-mapping", "0000:00:1f.0"),
        ("cputype", "custom-mx"),
        ("url_seq", "10"),
        ("route-map-id", "rmx"),
        ("order", "10"),
        ("code", "OSD_DOWN"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let ok = |r: &common::Resp, what: &str| {
        assert_eq!(r.status, 200, "{what}: {}", r.text);
    };
    // An SDN zone, vnet and subnet, applied.
    ok(
        &pve.post("/cluster/sdn/zones", &root, "zone=zmx&type=simple")
            .await,
        "zone",
    );
    ok(
        &pve.post("/cluster/sdn/vnets", &root, "vnet=vnmx&zone=zmx")
            .await,
        "vnet",
    );
    ok(
        &pve.post(
            "/cluster/sdn/vnets/vnmx/subnets",
            &root,
            "subnet=10.9.0.0/24&type=subnet",
        )
        .await,
        "subnet",
    );
    ok(&pve.put("/cluster/sdn", &root, "").await, "sdn apply");
    // A backup of VM 100 and of VM 102 on `local`.
    for vmid in [100, 102] {
        ok(
            &pve.post(
                "/nodes/pve/vzdump",
                &root,
                &format!("vmid={vmid}&storage=local"),
            )
            .await,
            "vzdump",
        );
        pve.run.clock().advance(60);
    }
    let content = pve
        .get("/nodes/pve/storage/local/content?content=backup", &root)
        .await;
    for item in content.data().as_array().cloned().unwrap_or_default() {
        let volid = item["volid"].as_str().unwrap_or_default().to_string();
        let key = if item["vmid"] == 100 {
            "backup-100"
        } else {
            "backup-102"
        };
        if let Some((_, volname)) = volid.split_once(':') {
            values.insert(format!("{key}-volname"), volname.to_string());
        }
        values.insert(key.into(), volid);
    }
    values.insert(
        "volume".into(),
        values.get("backup-102").cloned().unwrap_or_default(),
    );
    // A task of root@pam, and one of narrow@pve (starting its VM).
    let t = pve
        .post("/nodes/pve/qemu/102/status/start", &root, "")
        .await;
    values.insert(
        "upid".into(),
        t.data().as_str().unwrap_or_default().to_string(),
    );
    let t = pve
        .post("/nodes/pve/qemu/100/status/start", &narrow, "")
        .await;
    values.insert(
        "own-upid".into(),
        t.data().as_str().unwrap_or_default().to_string(),
    );
    pve.run.clock().advance(60);
    World {
        pve,
        root,
        token,
        narrow,
        values,
    }
}

/// Routes fake-pve does not emulate (it answers 501 `... is not
/// emulated by fake-pve` after the schema's checks): what PVE answers is
/// in [`ROWS`] all the same, and the 501 is reported but accepted.
const NOT_EMULATED: &[(&str, &str)] = &[
    // 9.2's custom CPU models, prefix lists and route maps.
    ("GET", "/cluster/qemu/custom-cpu-models"),
    ("GET", "/cluster/sdn/prefix-lists"),
    ("GET", "/cluster/sdn/route-maps"),
    ("GET", "/cluster/sdn/route-maps/entries"),
];

/// Walks every route of one release; answers the mismatches and the
/// not-emulated routes met.
async fn walk(version: PveVersion) -> (Vec<String>, Vec<String>) {
    let w = world(version).await;
    let spec = fake_pve::spec::spec(version);
    let rows: BTreeMap<(&str, &str), &Row> = ROWS.iter().map(|r| ((r.method, r.path), r)).collect();
    let mut problems = Vec::new();
    let mut skipped = Vec::new();
    // Reads first, then changes, deletions at the very end.
    let mut endpoints: Vec<_> = spec.endpoints.iter().collect();
    endpoints.sort_by_key(|e| match e.method.as_str() {
        "GET" => 0,
        "PUT" => 1,
        "POST" => 2,
        _ => 3,
    });
    for e in endpoints {
        let user = e.permissions.get("user").and_then(Value::as_str);
        let check = e.permissions.get("check").filter(|_| user != Some("all"));
        let row = match check {
            Some(_) => None,
            None => match rows.get(&(e.method.as_str(), e.path.as_str())) {
                Some(r) => Some(*r),
                None => {
                    problems.push(format!(
                        "{} {} {}: not in the table (permissions {})",
                        version.release(),
                        e.method,
                        e.path,
                        e.permissions
                    ));
                    continue;
                }
            },
        };
        let extra = row.map(|r| parse_params(r.params, &w)).unwrap_or_default();
        let (path, params) = fill(&e.path, &w, &extra);
        let mut query = extra.clone();
        for k in params.keys() {
            query.remove(k);
        }
        let root_data = if row.is_some_and(|r| {
            [(r.token)(&w), (r.narrow)(&w)]
                .iter()
                .any(|x| matches!(x, Want::AsRoot(_)))
        }) {
            call_as(&w, &w.root, &e.method, &path, &query).await.2
        } else {
            Value::Null
        };
        for caller in [Caller::Token, Caller::Narrow] {
            let want = if caller == Caller::Token && !e.allowtoken && user != Some("world") {
                let uri = template(&e.path, &params);
                Want::Deny(format!(
                    "Permission check failed (URI '{uri}' not available with API token, need proper ticket.\n)"
                ))
            } else if let Some(r) = row {
                match caller {
                    Caller::Token => (r.token)(&w),
                    Caller::Narrow => (r.narrow)(&w),
                }
            } else {
                let check = check.cloned().unwrap_or(Value::Null);
                expect_check(&check, caller, version, &params)
            };
            let (status, msg, data) = call(&w, &e.method, &path, &query, caller).await;
            if std::env::var_os("MATRIX_DUMP").is_some() {
                eprintln!(
                    "DUMP {} {} {} {} {status} {msg:?} {}",
                    version.release(),
                    caller.name(),
                    e.method,
                    e.path,
                    data.to_string().chars().take(300).collect::<String>()
                );
            }
            let Some(diff) = compare(&want, status, &msg, &data, &root_data) else {
                continue;
            };
            let line = format!(
                "{} {} {} as {}: PVE {want:?}, {diff}",
                version.release(),
                e.method,
                path,
                caller.name()
            );
            let route = (e.method.as_str(), e.path.as_str());
            if status == 501 && NOT_EMULATED.contains(&route) {
                skipped.push(line);
            } else {
                problems.push(line);
            }
        }
    }
    for r in ROWS {
        let in_some = PveVersion::ALL.iter().any(|v| {
            fake_pve::spec::spec(*v)
                .endpoint(r.method, r.path)
                .is_some()
        });
        if !in_some {
            problems.push(format!(
                "{} {}: in the table but in no release",
                r.method, r.path
            ));
        }
    }
    (problems, skipped)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_of_every_release() {
    let mut problems = Vec::new();
    for v in PveVersion::ALL {
        let (wrong, skipped) = walk(v).await;
        for s in skipped {
            eprintln!("accepted: {s}");
        }
        problems.extend(wrong);
    }
    problems.sort();
    problems.dedup();
    let mut report = String::new();
    for p in &problems {
        let _ = writeln!(report, "  {p}");
    }
    assert!(
        problems.is_empty(),
        "{} answers differ from PVE's:\n{report}",
        problems.len()
    );
}

/// PVE's answer on every route without a schema `check`. The comment
/// names the handler that decides (repository, file, method name).
const ROWS: &[Row] = &[
    // pve-access-control API2/AccessControl.pm index: subdirectories.
    r("GET", "/access", "", ok, ok),
    // ACL.pm read_acl: only paths with Permissions.Modify (or Sys.Audit on /access).
    r(
        "GET",
        "/access/acl",
        "",
        |_| empty("path"),
        |_| empty("path"),
    ),
    // Domains.pm index: world.
    r("GET", "/access/domains", "", ok, ok),
    // Group.pm index: groups with User.Modify/Sys.Audit/Group.Allocate on them.
    r(
        "GET",
        "/access/groups",
        "",
        |_| empty("groupid"),
        |_| empty("groupid"),
    ),
    // OpenId.pm index, auth_url, login: world or subdirectories.
    r("GET", "/access/openid", "", ok, ok),
    r("POST", "/access/openid/auth-url", "", pass, pass),
    r("POST", "/access/openid/login", "", pass, pass),
    // AccessControl.pm permissions: one's own (or an owned token's).
    r("GET", "/access/permissions", "", ok, ok),
    // Role.pm index, read_role: everyone reads the roles.
    r(
        "GET",
        "/access/roles",
        "",
        |_| as_root("roleid"),
        |_| as_root("roleid"),
    ),
    r("GET", "/access/roles/{roleid}", "", ok, ok),
    // TFA.pm list_tfa: all users only with User.Modify/Sys.Audit on /access/users.
    r(
        "GET",
        "/access/tfa",
        "",
        |_| empty("userid"),
        |_| empty("userid"),
    ),
    // AccessControl.pm get_ticket (world), create_ticket (world), vncticket.
    r("GET", "/access/ticket", "", ok, ok),
    r("POST", "/access/ticket", "", pass, pass),
    r("POST", "/access/vncticket", "", pass, pass),
    // User.pm index: oneself, or members of groups with User.Modify/Sys.Audit.
    r(
        "GET",
        "/access/users",
        "",
        |_| empty("userid"),
        |_| only("userid", &["narrow@pve"]),
    ),
    // pve-manager API2/Cluster.pm index.
    r("GET", "/cluster", "", ok, ok),
    // API2/ACME*.pm: index, account_index, challenge-schema, directories, tos.
    r("GET", "/cluster/acme", "", ok, ok),
    r("GET", "/cluster/acme/account", "", ok, ok),
    r("POST", "/cluster/acme/account", "", root, root),
    r("DELETE", "/cluster/acme/account/{name}", "", root, root),
    r("GET", "/cluster/acme/account/{name}", "", root, root),
    r("PUT", "/cluster/acme/account/{name}", "", root, root),
    r("GET", "/cluster/acme/challenge-schema", "", ok, ok),
    r("GET", "/cluster/acme/directories", "", ok, ok),
    r("GET", "/cluster/acme/tos", "", ok, ok),
    // Cluster.pm backup-info index: root@pam only.
    r("GET", "/cluster/backup-info", "", root, root),
    // API2/Cluster/BulkAction.pm, BulkAction/Guest.pm check_guest_permissions:
    // the privilege on each listed guest.
    r("GET", "/cluster/bulk-action", "", ok, ok),
    r("GET", "/cluster/bulk-action/guest", "", ok, ok),
    r(
        "POST",
        "/cluster/bulk-action/guest/migrate",
        "target=pve&vms=100&vms=102",
        |_| perm("/vms/100", "VM.Migrate"),
        |_| perm("/vms/100", "VM.Migrate"),
    ),
    r(
        "POST",
        "/cluster/bulk-action/guest/shutdown",
        "vms=100&vms=102",
        |_| perm("/vms/100", "VM.PowerMgmt"),
        |_| perm("/vms/102", "VM.PowerMgmt"),
    ),
    r(
        "POST",
        "/cluster/bulk-action/guest/start",
        "vms=100&vms=102",
        |_| perm("/vms/100", "VM.PowerMgmt"),
        |_| perm("/vms/102", "VM.PowerMgmt"),
    ),
    r(
        "POST",
        "/cluster/bulk-action/guest/suspend",
        "vms=100&vms=102",
        |_| perm("/vms/100", "VM.PowerMgmt"),
        |_| perm("/vms/102", "VM.PowerMgmt"),
    ),
    // Ceph.pm cephindex.
    r("GET", "/cluster/ceph", "", ok, ok),
    // pve-cluster API2/ClusterConfig.pm create, join, addnode, delnode: root@pam only.
    r("POST", "/cluster/config", "", root, root),
    r("POST", "/cluster/config/join", "", root, root),
    r("DELETE", "/cluster/config/nodes/{node}", "", root, root),
    r("POST", "/cluster/config/nodes/{node}", "", root, root),
    // pve-firewall API2/Firewall/Cluster.pm index, Groups.pm list_security_groups,
    // Cluster.pm get_macros: everyone.
    r("GET", "/cluster/firewall", "", ok, ok),
    r("GET", "/cluster/firewall/groups", "", ok, ok),
    r("GET", "/cluster/firewall/macros", "", ok, ok),
    // pve-ha-manager API2/HA/Status.pm index.
    r("GET", "/cluster/ha/status", "", ok, ok),
    // API2/Cluster/Jobs.pm index, schedule-analyze.
    r("GET", "/cluster/jobs", "", ok, ok),
    r(
        "GET",
        "/cluster/jobs/schedule-analyze",
        "schedule=daily",
        ok,
        ok,
    ),
    // Cluster.pm log: all entries with Sys.Syslog on /, else one's own.
    r(
        "GET",
        "/cluster/log",
        "",
        |_| within("user", &[]),
        |_| within("user", &["narrow@pve"]),
    ),
    // API2/Cluster/Mapping.pm index; Mapping/{Dir,PCI,USB}.pm index: entries
    // with Mapping.Modify/Use/Audit on /mapping/<type>/<id>.
    r("GET", "/cluster/mapping", "", ok, ok),
    r(
        "GET",
        "/cluster/mapping/dir",
        "",
        |_| empty("id"),
        |_| empty("id"),
    ),
    r(
        "GET",
        "/cluster/mapping/pci",
        "",
        |_| empty("id"),
        |_| empty("id"),
    ),
    r(
        "GET",
        "/cluster/mapping/usb",
        "",
        |_| empty("id"),
        |_| empty("id"),
    ),
    // API2/Cluster/MetricServer.pm index, Notifications.pm index/endpoints index.
    r("GET", "/cluster/metrics", "", ok, ok),
    // Cluster.pm nextid, get_options (user all before its check: filtered options).
    r("GET", "/cluster/nextid", "", ok, ok),
    r("GET", "/cluster/notifications", "", ok, ok),
    r("GET", "/cluster/notifications/endpoints", "", ok, ok),
    r("GET", "/cluster/options", "", ok, ok),
    // ReplicationConfig.pm index (VM.Audit filter), create, update, delete
    // (VM.Replicate on /vms/<guest of the id> before anything else), read
    // (the job must exist first).
    r(
        "GET",
        "/cluster/replication",
        "",
        |_| empty("id"),
        |_| empty("id"),
    ),
    r(
        "POST",
        "/cluster/replication",
        "id=100-0&target=pve2&type=local",
        |_| perm("/vms/100", "VM.Replicate"),
        |_| perm("/vms/100", "VM.Replicate"),
    ),
    r(
        "DELETE",
        "/cluster/replication/{id}",
        "",
        |_| perm("/vms/100", "VM.Replicate"),
        |_| perm("/vms/100", "VM.Replicate"),
    ),
    r(
        "GET",
        "/cluster/replication/{id}",
        "",
        |_| fail(500, "no such replication job '100-0'"),
        |_| fail(500, "no such replication job '100-0'"),
    ),
    r(
        "PUT",
        "/cluster/replication/{id}",
        "",
        |_| perm("/vms/100", "VM.Replicate"),
        |_| perm("/vms/100", "VM.Replicate"),
    ),
    // Cluster.pm resources: guests with VM.Audit, storages with Datastore.Audit,
    // pools with Pool.Audit, SDN with SDN.Audit; every node, its statistics
    // only with Sys.Audit (extract_node_stats).
    r(
        "GET",
        "/cluster/resources",
        "",
        |_| only("id", &["node/pve"]),
        |_| only("id", &["node/pve", "qemu/100"]),
    ),
    // pve-network API2/Network/SDN/{Controllers,Dns,Ipams,Zones,Vnets}.pm index:
    // entries with SDN.Audit or SDN.Allocate on them; Fabrics.pm likewise.
    r(
        "GET",
        "/cluster/sdn/controllers",
        "",
        |_| empty("controller"),
        |_| empty("controller"),
    ),
    r(
        "GET",
        "/cluster/sdn/dns",
        "",
        |_| empty("dns"),
        |_| empty("dns"),
    ),
    // 9.2: the custom CPU models (qemu-server API2/Qemu/CPU.pm) and the
    // SDN prefix lists and route maps list what the caller may see:
    // nothing here.
    r("GET", "/cluster/qemu", "", ok, ok),
    r(
        "GET",
        "/cluster/qemu/custom-cpu-models",
        "",
        |_| empty("cputype"),
        |_| empty("cputype"),
    ),
    r(
        "GET",
        "/cluster/sdn/prefix-lists",
        "",
        |_| empty("id"),
        |_| empty("id"),
    ),
    r(
        "GET",
        "/cluster/sdn/route-maps",
        "",
        |_| empty("id"),
        |_| empty("id"),
    ),
    r(
        "GET",
        "/cluster/sdn/route-maps/entries",
        "",
        |_| empty("route-map-id"),
        |_| empty("route-map-id"),
    ),
    r("GET", "/cluster/sdn/fabrics/all", "", ok, ok),
    r(
        "GET",
        "/cluster/sdn/fabrics/fabric",
        "",
        |_| empty("id"),
        |_| empty("id"),
    ),
    r(
        "GET",
        "/cluster/sdn/fabrics/node",
        "",
        |_| empty("node_id"),
        |_| empty("node_id"),
    ),
    r(
        "GET",
        "/cluster/sdn/ipams",
        "",
        |_| empty("ipam"),
        |_| empty("ipam"),
    ),
    // Ipams.pm ipamindex: only zones with DHCP are listed (none here).
    r(
        "GET",
        "/cluster/sdn/ipams/{ipam}/status",
        "",
        |_| empty("vnet"),
        |_| empty("vnet"),
    ),
    r(
        "GET",
        "/cluster/sdn/vnets",
        "",
        |_| empty("vnet"),
        |_| empty("vnet"),
    ),
    // Vnets.pm read/update/delete: $check_vnet_access on /sdn/zones/<zone>/<vnet>.
    r(
        "DELETE",
        "/cluster/sdn/vnets/{vnet}",
        "",
        sdn_alloc,
        sdn_alloc,
    ),
    r("GET", "/cluster/sdn/vnets/{vnet}", "", sdn_read, sdn_read),
    r("PUT", "/cluster/sdn/vnets/{vnet}", "", sdn_alloc, sdn_alloc),
    // Vnets.pm: the vnet firewall index has no permissions (root@pam only).
    r("GET", "/cluster/sdn/vnets/{vnet}/firewall", "", root, root),
    // pve-firewall API2/Firewall/Vnet.pm get/set_options (check_vnet_access with
    // [SDN.Allocate, SDN.Audit] to read), Rules.pm VnetRules check_privileges_for_method.
    r(
        "GET",
        "/cluster/sdn/vnets/{vnet}/firewall/options",
        "",
        |_| perm("/sdn/zones/zmx/vnmx", "SDN.Allocate|SDN.Audit"),
        |_| perm("/sdn/zones/zmx/vnmx", "SDN.Allocate|SDN.Audit"),
    ),
    r(
        "PUT",
        "/cluster/sdn/vnets/{vnet}/firewall/options",
        "",
        sdn_alloc,
        sdn_alloc,
    ),
    r(
        "GET",
        "/cluster/sdn/vnets/{vnet}/firewall/rules",
        "",
        sdn_read,
        sdn_read,
    ),
    r(
        "POST",
        "/cluster/sdn/vnets/{vnet}/firewall/rules",
        "action=ACCEPT&type=in",
        sdn_alloc,
        sdn_alloc,
    ),
    r(
        "DELETE",
        "/cluster/sdn/vnets/{vnet}/firewall/rules/{pos}",
        "",
        sdn_alloc,
        sdn_alloc,
    ),
    r(
        "GET",
        "/cluster/sdn/vnets/{vnet}/firewall/rules/{pos}",
        "",
        sdn_read,
        sdn_read,
    ),
    r(
        "PUT",
        "/cluster/sdn/vnets/{vnet}/firewall/rules/{pos}",
        "",
        sdn_alloc,
        sdn_alloc,
    ),
    // Subnets.pm index/read (SDN.Audit|SDN.Allocate), create/update/delete (SDN.Allocate).
    r(
        "GET",
        "/cluster/sdn/vnets/{vnet}/subnets",
        "",
        sdn_read,
        sdn_read,
    ),
    r(
        "POST",
        "/cluster/sdn/vnets/{vnet}/subnets",
        "subnet=10.8.0.0/24&type=subnet",
        sdn_alloc,
        sdn_alloc,
    ),
    r(
        "DELETE",
        "/cluster/sdn/vnets/{vnet}/subnets/{subnet}",
        "",
        sdn_alloc,
        sdn_alloc,
    ),
    r(
        "GET",
        "/cluster/sdn/vnets/{vnet}/subnets/{subnet}",
        "",
        sdn_read,
        sdn_read,
    ),
    r(
        "PUT",
        "/cluster/sdn/vnets/{vnet}/subnets/{subnet}",
        "",
        sdn_alloc,
        sdn_alloc,
    ),
    r(
        "GET",
        "/cluster/sdn/zones",
        "",
        |_| empty("zone"),
        |_| empty("zone"),
    ),
    // Cluster.pm tasks: all with Sys.Audit on /, else those whose user is the
    // caller (a token's tasks are split into user and tokenid, so a token
    // sees none).
    r(
        "GET",
        "/cluster/tasks",
        "",
        |_| empty("upid"),
        |w| only("upid", &[w.v("own-upid")]),
    ),
    // Nodes.pm index: every node (statistics only with Sys.Audit).
    r(
        "GET",
        "/nodes",
        "",
        |_| only("node", &["pve"]),
        |_| only("node", &["pve"]),
    ),
    r("GET", "/nodes/{node}", "", ok, ok),
    // Nodes.pm aplinfo, API2/APT.pm index, Capabilities.pm and Qemu/CPU.pm,
    // CPUFlags.pm, Machine.pm: everyone (custom CPU models only with Sys.Audit).
    r("GET", "/nodes/{node}/aplinfo", "", ok, ok),
    r("GET", "/nodes/{node}/apt", "", ok, ok),
    r("GET", "/nodes/{node}/capabilities", "", ok, ok),
    r("GET", "/nodes/{node}/capabilities/qemu", "", ok, ok),
    r("GET", "/nodes/{node}/capabilities/qemu/cpu", "", ok, ok),
    r(
        "GET",
        "/nodes/{node}/capabilities/qemu/cpu-flags",
        "",
        ok,
        ok,
    ),
    r(
        "GET",
        "/nodes/{node}/capabilities/qemu/machines",
        "",
        ok,
        ok,
    ),
    // Ceph.pm index helpers; OSD create/destroy: root@pam only.
    r("GET", "/nodes/{node}/ceph/cfg", "", ok, ok),
    r("POST", "/nodes/{node}/ceph/osd", "", root, root),
    r("DELETE", "/nodes/{node}/ceph/osd/{osdid}", "", root, root),
    r("GET", "/nodes/{node}/ceph/osd/{osdid}", "", ok, ok),
    // Certificates.pm index, info; ACME.pm index.
    r("GET", "/nodes/{node}/certificates", "", ok, ok),
    r("GET", "/nodes/{node}/certificates/acme", "", ok, ok),
    r("GET", "/nodes/{node}/certificates/info", "", ok, ok),
    // pve-storage API2/Disks.pm index; wipe_disk: root@pam only.
    r("GET", "/nodes/{node}/disks", "", ok, ok),
    r("PUT", "/nodes/{node}/disks/wipedisk", "", root, root),
    // Nodes.pm execute: root@pam only.
    r("POST", "/nodes/{node}/execute", "", root, root),
    // pve-firewall API2/Firewall/Host.pm index; Hardware.pm, Hardware/PCI.pm pciindex.
    r("GET", "/nodes/{node}/firewall", "", ok, ok),
    r("GET", "/nodes/{node}/hardware", "", ok, ok),
    r(
        "GET",
        "/nodes/{node}/hardware/pci/{pci-id-or-mapping}",
        "",
        ok,
        ok,
    ),
    // pve-container API2/LXC.pm vmlist: CTs with VM.Audit; create_vm (checked
    // in the handler, see h3's routes); vmdiridx, Status.pm index, firewall
    // index, Snapshot.pm snapshot_cmd_idx: no check; mtunnelwebsocket: the
    // tunnel ticket decides (`x` is none: 401).
    r(
        "GET",
        "/nodes/{node}/lxc",
        "",
        |_| empty("vmid"),
        |_| empty("vmid"),
    ),
    r(
        "POST",
        "/nodes/{node}/lxc",
        "vmid=4243&ostemplate=local:vztmpl/x.tar.zst",
        |_| deny(""),
        |_| deny(""),
    ),
    r("GET", "/nodes/{node}/lxc/{vmid}", "", ok, ok),
    r("GET", "/nodes/{node}/lxc/{vmid}/firewall", "", ok, ok),
    r(
        "GET",
        "/nodes/{node}/lxc/{vmid}/mtunnelwebsocket",
        "ticket=x&socket=/run/x.mtunnel",
        |_| fail(401, "permission denied - invalid PVETUNNEL ticket"),
        |_| fail(401, "permission denied - invalid PVETUNNEL ticket"),
    ),
    r(
        "GET",
        "/nodes/{node}/lxc/{vmid}/snapshot/{snapname}",
        "",
        ok,
        ok,
    ),
    r("GET", "/nodes/{node}/lxc/{vmid}/status", "", ok, ok),
    // Nodes.pm migrateall: VM.Migrate on / or on each listed guest.
    r(
        "POST",
        "/nodes/{node}/migrateall",
        "target=pve2&vms=100,102",
        |_| perm("/vms/100", "VM.Migrate"),
        |_| perm("/vms/100", "VM.Migrate"),
    ),
    // Network.pm index: bridges only with SDN.Audit/SDN.Use on
    // /sdn/zones/localnetwork/<bridge>.
    r(
        "GET",
        "/nodes/{node}/network",
        "",
        |_| lacks("iface", &["vmbr0"]),
        |_| lacks("iface", &["vmbr0"]),
    ),
    // qemu-server API2/Qemu.pm vmlist: VMs with VM.Audit; create_vm: VM.Allocate
    // on /vms/<vmid> (or the pool) first; vmdiridx, Agent.pm index, firewall
    // index, snapshot_cmd_idx, vmcmdidx: no check.
    r(
        "GET",
        "/nodes/{node}/qemu",
        "",
        |_| empty("vmid"),
        |_| only("vmid", &["100"]),
    ),
    r(
        "POST",
        "/nodes/{node}/qemu",
        "vmid=4242&scsi0=local-lvm:1",
        |_| deny(""),
        |_| deny(""),
    ),
    r("GET", "/nodes/{node}/qemu/{vmid}", "", ok, ok),
    r("GET", "/nodes/{node}/qemu/{vmid}/agent", "", ok, ok),
    r("GET", "/nodes/{node}/qemu/{vmid}/firewall", "", ok, ok),
    r(
        "GET",
        "/nodes/{node}/qemu/{vmid}/mtunnelwebsocket",
        "ticket=x&socket=/run/x.mtunnel",
        |_| fail(401, "permission denied - invalid PVETUNNEL ticket"),
        |_| fail(401, "permission denied - invalid PVETUNNEL ticket"),
    ),
    r(
        "GET",
        "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}",
        "",
        ok,
        ok,
    ),
    r("GET", "/nodes/{node}/qemu/{vmid}/status", "", ok, ok),
    // Replication.pm status (VM.Audit filter), index, job_status and
    // read_job_log (the job must exist first), schedule_now (VM.Replicate first).
    r(
        "GET",
        "/nodes/{node}/replication",
        "",
        |_| empty("id"),
        |_| empty("id"),
    ),
    r("GET", "/nodes/{node}/replication/{id}", "", ok, ok),
    r(
        "GET",
        "/nodes/{node}/replication/{id}/log",
        "",
        |_| fail(500, "no such replication job '100-0'"),
        |_| fail(500, "no such replication job '100-0'"),
    ),
    r(
        "POST",
        "/nodes/{node}/replication/{id}/schedule_now",
        "",
        |_| perm("/vms/100", "VM.Replicate"),
        |_| perm("/vms/100", "VM.Replicate"),
    ),
    r(
        "GET",
        "/nodes/{node}/replication/{id}/status",
        "",
        |_| fail(500, "no such replication job '100-0'"),
        |_| fail(500, "no such replication job '100-0'"),
    ),
    // pve-storage API2/Storage/Scan.pm index; pve-network SDN.pm node index.
    r("GET", "/nodes/{node}/scan", "", ok, ok),
    r("GET", "/nodes/{node}/sdn", "", ok, ok),
    // pve-network Nodes/Vnet.pm diridx, mac-vrf: SDN.Audit on the vnet.
    r(
        "GET",
        "/nodes/{node}/sdn/vnets/{vnet}",
        "",
        |_| perm("/sdn/zones/zmx/vnmx", "SDN.Audit"),
        |_| perm("/sdn/zones/zmx/vnmx", "SDN.Audit"),
    ),
    r(
        "GET",
        "/nodes/{node}/sdn/vnets/{vnet}/mac-vrf",
        "",
        |_| perm("/sdn/zones/zmx/vnmx", "SDN.Audit"),
        |_| perm("/sdn/zones/zmx/vnmx", "SDN.Audit"),
    ),
    // Nodes/Zones.pm index: the description says SDN.Audit, the handler lists
    // every zone's status.
    r(
        "GET",
        "/nodes/{node}/sdn/zones",
        "",
        |_| as_root("zone"),
        |_| as_root("zone"),
    ),
    // Nodes.pm startall, stopall, suspendall: VM.PowerMgmt on / or on each
    // listed guest (suspendall also VM.Config.Disk on /).
    r(
        "POST",
        "/nodes/{node}/startall",
        "vms=100,102",
        |_| perm("/vms/100", "VM.PowerMgmt"),
        |_| perm("/vms/102", "VM.PowerMgmt"),
    ),
    r(
        "POST",
        "/nodes/{node}/stopall",
        "vms=100,102",
        |_| perm("/vms/100", "VM.PowerMgmt"),
        |_| perm("/vms/102", "VM.PowerMgmt"),
    ),
    r(
        "POST",
        "/nodes/{node}/suspendall",
        "vms=100,102",
        |_| perm("/vms/100", "VM.PowerMgmt"),
        |_| perm("/vms/102", "VM.PowerMgmt"),
    ),
    // pve-storage API2/Storage/Status.pm index: storages with
    // Datastore.Audit|Datastore.AllocateSpace.
    r(
        "GET",
        "/nodes/{node}/storage",
        "",
        |_| empty("storage"),
        |_| empty("storage"),
    ),
    // Content.pm delete/info/updateattributes: check_volume_access (a backup:
    // Datastore.AllocateSpace on the storage, then VM.Backup on its guest);
    // upload of a volume copy: root@pam only.
    r(
        "DELETE",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "",
        alloc_space,
        alloc_space,
    ),
    r(
        "GET",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "",
        alloc_space,
        alloc_space,
    ),
    r(
        "POST",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "",
        root,
        root,
    ),
    r(
        "PUT",
        "/nodes/{node}/storage/{storage}/content/{volume}",
        "",
        alloc_space,
        alloc_space,
    ),
    // FileRestore.pm list/download: check_volume_access before the storage
    // type is looked at; Status.pm get_import_metadata likewise.
    r(
        "GET",
        "/nodes/{node}/storage/{storage}/file-restore/download",
        "volume={backup-102}&filepath=Lw==",
        alloc_space,
        alloc_space,
    ),
    r(
        "GET",
        "/nodes/{node}/storage/{storage}/file-restore/list",
        "volume={backup-102}&filepath=Lw==",
        alloc_space,
        alloc_space,
    ),
    r(
        "GET",
        "/nodes/{node}/storage/{storage}/import-metadata",
        "volume={backup-102-volname}",
        alloc_space,
        alloc_space,
    ),
    // PruneBackups.pm delete: Datastore.Allocate without vmid.
    r(
        "DELETE",
        "/nodes/{node}/storage/{storage}/prunebackups",
        "",
        |_| perm("/storage/local", "Datastore.Allocate"),
        |_| perm("/storage/local", "Datastore.Allocate"),
    ),
    // Subscription.pm get: everyone (details only with Sys.Audit).
    r("GET", "/nodes/{node}/subscription", "", ok, ok),
    // Tasks.pm node_tasks: Sys.Audit on the node, else one's own (a token's
    // own tasks are its own); stop_task, read_task_log, read_task_status:
    // the owner, else Sys.Modify/Sys.Audit on the node; upid_index: no check.
    r(
        "GET",
        "/nodes/{node}/tasks",
        "",
        |_| empty("upid"),
        |w| only("upid", &[w.v("own-upid")]),
    ),
    r(
        "DELETE",
        "/nodes/{node}/tasks/{upid}",
        "",
        |_| perm("/nodes/pve", "Sys.Modify"),
        |_| perm("/nodes/pve", "Sys.Modify"),
    ),
    r("GET", "/nodes/{node}/tasks/{upid}", "", ok, ok),
    r(
        "GET",
        "/nodes/{node}/tasks/{upid}/log",
        "",
        |_| perm("/nodes/pve", "Sys.Audit"),
        |_| perm("/nodes/pve", "Sys.Audit"),
    ),
    r(
        "GET",
        "/nodes/{node}/tasks/{upid}/status",
        "",
        |_| perm("/nodes/pve", "Sys.Audit"),
        |_| perm("/nodes/pve", "Sys.Audit"),
    ),
    // Nodes.pm version.
    r("GET", "/nodes/{node}/version", "", ok, ok),
    // API2/VZDump.pm vzdump: Datastore.AllocateSpace on the storage before the
    // worker (which checks VM.Backup per guest); defaults: Datastore.Audit or
    // Datastore.AllocateSpace on the storage (default `local`); extractconfig:
    // check_volume_access, then VM.Backup on the guest.
    r(
        "POST",
        "/nodes/{node}/vzdump",
        "vmid=100&storage=local",
        alloc_space,
        alloc_space,
    ),
    r(
        "GET",
        "/nodes/{node}/vzdump/defaults",
        "",
        |_| perm("/storage/local", "Datastore.Audit|Datastore.AllocateSpace"),
        |_| perm("/storage/local", "Datastore.Audit|Datastore.AllocateSpace"),
    ),
    r(
        "GET",
        "/nodes/{node}/vzdump/extractconfig",
        "volume={backup-102}",
        alloc_space,
        alloc_space,
    ),
    // pve-access-control API2/Pool.pm index: pools with Pool.Audit.
    r(
        "GET",
        "/pools",
        "",
        |_| empty("poolid"),
        |_| empty("poolid"),
    ),
    // pve-storage API2/Storage/Config.pm index: Datastore.Audit|AllocateSpace.
    r(
        "GET",
        "/storage",
        "",
        |_| empty("storage"),
        |_| empty("storage"),
    ),
    // pve-manager API2.pm version.
    r("GET", "/version", "", ok, ok),
];
