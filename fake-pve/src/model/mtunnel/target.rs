//! The target side of a remote migration: `POST .../mtunnel` and the
//! `qmtunnel`/`vzmtunnel` worker that answers the tunnel's commands
//! (qemu-server `API2/Qemu.pm` `mtunnel`, pve-container `API2/LXC.pm`
//! `mtunnel`, pve-guest-common `StorageTunnel.pm`).
//!
//! The worker listens on its control socket for 300 seconds; the
//! migration's source connects to it through `mtunnelwebsocket` and
//! sends one JSON object per line, `{"cmd": ..., params}`; each gets one
//! line back, `{"success": true, ...}` or `{"success": false, "msg":
//! ...}`. The worker logs `received command '<cmd>'` and what the
//! command prints. Before each command the guest's config must still
//! carry the lock the session expects (`create` until `config`, then
//! `migrate` until `unlock`). The other sockets a session hands out (a
//! disk import's, an incoming VM's migration and NBD sockets) are only
//! reached with a ticket from its `ticket` command.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value, json};

use super::{GuestType, WS_TUNNEL_VERSION, exception_text, parse_config_text};
use crate::model::access::AuthId;
use crate::model::cluster::Cluster;
use crate::model::lxc::{Ct, LxcOp};
use crate::model::qemu::{EffectResult, QemuOp, QmpStatus, Vm, VmStatus};
use crate::model::storage::{VolumeKind, path_based};
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{Error, Result};

/// The open tunnels of this cluster, by their control socket; not part
/// of a saved world (a tunnel ends with its connection).
#[derive(Debug, Clone, Default)]
pub struct Tunnels {
    sessions: BTreeMap<String, Session>,
}

impl Tunnels {
    /// The session whose control socket, or one of whose data sockets,
    /// is `socket`.
    pub fn of_socket(&self, socket: &str) -> Option<&Session> {
        self.sessions
            .get(socket)
            .or_else(|| self.sessions.values().find(|s| s.sockets.contains(socket)))
    }

    fn of_socket_mut(&mut self, socket: &str) -> Option<&mut Session> {
        if self.sessions.contains_key(socket) {
            return self.sessions.get_mut(socket);
        }
        self.sessions
            .values_mut()
            .find(|s| s.sockets.contains(socket))
    }

    /// How many are open.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// One `mtunnel` worker and what it keeps (`$state` of the handler).
#[derive(Debug, Clone)]
pub struct Session {
    /// What kind of guest comes in.
    pub kind: GuestType,
    /// The guest's VMID here.
    pub vmid: u32,
    /// The node it comes to (the local one).
    pub node: String,
    /// Who opened it: tickets are theirs, checks are made for them.
    pub user: String,
    /// The worker's task.
    pub upid: String,
    /// The control socket.
    pub socket: String,
    /// The lock the config must carry (`create`, `migrate`, none after
    /// `unlock`).
    lock: Option<String>,
    /// Whether the control socket took its connection.
    connected: bool,
    /// `quit` was handled: every further command is refused.
    exit: bool,
    /// The data sockets tickets are handed out for.
    sockets: BTreeSet<String>,
    /// The data sockets connected now.
    open: BTreeSet<String>,
    /// What `quit` with `cleanup` removes.
    cleanup_volumes: BTreeSet<String>,
    /// Whether `config` wrote the guest's firewall file.
    cleanup_fw: bool,
    /// The running disk import.
    import: Option<Import>,
    /// The NBD volumes `disk` allocated: volid → drive string.
    nbd: BTreeMap<String, String>,
}

impl Session {
    /// Whether the worker quit (`exit-mode`).
    pub fn exiting(&self) -> bool {
        self.exit
    }

    /// Whether the control socket took its connection.
    pub fn connected(&self) -> bool {
        self.connected
    }

    /// The data sockets a ticket may be had for.
    pub fn sockets(&self) -> impl Iterator<Item = &String> {
        self.sockets.iter()
    }
}

/// A disk import (`pvesm import ... unix://<socket>`): waits for the
/// stream on its socket, then prints what the import prints.
#[derive(Debug, Clone)]
struct Import {
    socket: String,
    storage: String,
    /// The volume name asked for, as the storage names it.
    name: String,
    /// The image format (`raw`, `qcow2`, `subvol`).
    format: String,
    allow_rename: bool,
    /// The lines it printed and `query-disk-import` has not read yet.
    output: VecDeque<String>,
    /// Whether the stream arrived (and the import ended).
    ended: bool,
}

/// What connected to a session's socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connection {
    /// The control socket: commands follow.
    Control,
    /// A data socket (a disk import's stream, a VM's migration or NBD
    /// stream).
    Data,
}

/// The answer to one command line: the line to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// `{"success": ..., ...}`.
    pub json: Value,
}

/// A command as the worker reads it.
pub type Command = Map<String, Value>;

/// A parameter's JSON type in a command's schema.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ty {
    Str,
    Bool,
    Int,
    Obj,
    Arr,
}

/// A command's parameters (`$cmd_desc`): name, type, whether required.
fn command_schema(kind: GuestType, cmd: &str) -> Option<&'static [(&'static str, Ty, bool)]> {
    use Ty::{Arr, Bool, Int, Obj, Str};
    let qemu = kind == GuestType::Qemu;
    Some(match cmd {
        "config" => &[("conf", Str, true), ("firewall-config", Str, false)],
        "disk" if qemu => &[
            ("format", Str, true),
            ("storage", Str, true),
            ("drive", Obj, true),
        ],
        "start" if qemu => &[("start_params", Obj, true), ("migrate_opts", Obj, true)],
        "ticket" => &[("path", Str, true)],
        "quit" => &[("cleanup", Bool, false)],
        "disk-import" => &[
            ("volname", Str, true),
            ("format", Str, true),
            ("export_formats", Str, true),
            ("storage", Str, true),
            ("snapshot", Str, false),
            ("migration_snapshot", Bool, false),
            ("with_snapshots", Bool, false),
            ("allow_rename", Bool, false),
        ],
        "query-disk-import" => &[],
        "bwlimit" => &[
            ("storages", Arr, true),
            ("bwlimit", Int, false),
            ("operation", Str, false),
        ],
        _ => return None,
    })
}

/// `PVE::JSONSchema::validate` of a command's parameters: the
/// `Parameter verification failed.` of what is missing, of the wrong
/// type or (a VM's commands, whose schema allows nothing else) unknown.
fn validate(kind: GuestType, cmd: &str, params: &Command) -> Result<()> {
    let Some(schema) = command_schema(kind, cmd) else {
        return Ok(());
    };
    let mut errors = BTreeMap::new();
    for (name, ty, required) in schema {
        match params.get(*name) {
            None | Some(Value::Null) => {
                if *required {
                    errors.insert(
                        (*name).to_string(),
                        "property is missing and it is not optional".to_string(),
                    );
                }
            }
            Some(v) => {
                let ok = match ty {
                    Ty::Str => v.is_string() || v.is_number(),
                    Ty::Bool => truthy(Some(v)).is_some(),
                    Ty::Int => {
                        v.is_i64()
                            || v.is_u64()
                            || v.as_str().is_some_and(|s| s.parse::<i64>().is_ok())
                    }
                    Ty::Obj => v.is_object(),
                    Ty::Arr => v.is_array(),
                };
                if !ok {
                    let want = match ty {
                        Ty::Str => "string",
                        Ty::Bool => "boolean",
                        Ty::Int => "integer",
                        Ty::Obj => "object",
                        Ty::Arr => "array",
                    };
                    errors.insert((*name).to_string(), format!("type check ('{want}') failed"));
                }
            }
        }
    }
    if kind == GuestType::Qemu {
        for k in params.keys() {
            if !schema.iter().any(|(n, ..)| n == k) {
                errors.insert(
                    k.clone(),
                    "property is not defined in schema and the schema does not allow additional properties"
                        .to_string(),
                );
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(errors))
    }
}

/// A boolean as Perl reads it from JSON: `true`/`false`, numbers,
/// `"1"`/`"0"`/`""`.
fn truthy(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => Some(n.as_f64().is_some_and(|f| f != 0.0)),
        Value::String(s) => match s.as_str() {
            "" | "0" => Some(false),
            "1" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

fn text(params: &Command, key: &str) -> String {
    match params.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// The image formats a storage type keeps (`get_formats`'s `valid`).
fn valid_formats(storage_type: &str) -> &'static [&'static str] {
    match storage_type {
        "dir" | "nfs" | "cifs" | "glusterfs" | "cephfs" => &["raw", "qcow2", "vmdk", "subvol"],
        "btrfs" | "zfspool" => &["raw", "subvol"],
        _ => &["raw"],
    }
}

/// The transport formats a storage type takes a volume of `format` in
/// (`volume_import_formats`, the same as `volume_export_formats`).
pub(super) fn transfer_formats(
    storage_type: &str,
    format: &str,
    with_snapshots: bool,
) -> Vec<&'static str> {
    let plain = |out: &mut Vec<&'static str>| {
        if with_snapshots {
            match format {
                "qcow2" => out.push("qcow2+size"),
                "vmdk" => out.push("vmdk+size"),
                _ => {}
            }
        } else if format == "subvol" {
            out.push("tar+size");
        } else {
            out.push("raw+size");
        }
    };
    let mut out = Vec::new();
    match storage_type {
        "zfspool" => {
            out.push("zfs");
            if !with_snapshots && format == "raw" {
                out.push("raw+size");
            }
        }
        "btrfs" => {
            out.push("btrfs");
            plain(&mut out);
        }
        k if path_based(k) => plain(&mut out),
        _ => {
            if !with_snapshots {
                out.push("raw+size");
            }
        }
    }
    out
}

/// `$check_storage_access_migrate` of a target storage.
fn check_storage_access_migrate(
    c: &Cluster,
    kind: GuestType,
    who: &AuthId,
    sid: &str,
    node: &str,
) -> Result<()> {
    c.storage.usable_storage(sid, node)?;
    c.access.check_perm(
        who,
        &format!("/storage/{sid}"),
        &["Datastore.AllocateSpace"],
    )?;
    let s = c.storage.existing(sid)?;
    if !s.content.iter().any(|x| x == kind.content()) {
        return Err(Error::failed(match kind {
            GuestType::Qemu => format!("storage '{sid}' does not support vm images"),
            GuestType::Lxc => format!("storage '{sid}' does not support CT rootdirs"),
        }));
    }
    Ok(())
}

/// What `POST .../mtunnel` asks for.
#[derive(Debug, Clone)]
pub struct OpenRequest {
    /// The guest type of the path.
    pub kind: GuestType,
    /// The local node.
    pub node: String,
    /// The VMID the guest gets here.
    pub vmid: u32,
    /// Who asks.
    pub who: AuthId,
    /// `storages`: checked for the caller now.
    pub storages: Vec<String>,
    /// `bridges`: each must exist on the node.
    pub bridges: Vec<String>,
    /// Now, epoch milliseconds.
    pub now_ms: i64,
}

impl Cluster {
    /// `POST .../mtunnel`: the storages and bridges checked, an empty
    /// config locked `create`, and the tunnel worker, which waits for its
    /// connection. Answers the worker's UPID and its socket.
    ///
    /// # Errors
    /// The storages' refusals (`storage 'x' does not exist`, `Permission
    /// check failed (/storage/x, Datastore.AllocateSpace)`, `storage 'x'
    /// does not support vm images`), `bridge 'x' does not exist`, no
    /// quorum, and `vmid: unable to create empty VM config - VM N already
    /// exists on node 'x'`.
    pub fn mtunnel_open(&mut self, req: OpenRequest) -> Result<(String, String)> {
        let OpenRequest {
            kind,
            node,
            vmid,
            who,
            storages,
            bridges,
            now_ms,
        } = req;
        for sid in &storages {
            check_storage_access_migrate(self, kind, &who, sid, &node)?;
        }
        let known = crate::model::sdn::node_bridges(&self.nodes, &self.sdn, &node);
        for b in &bridges {
            if !known.iter().any(|k| k == b) {
                return Err(Error::failed(format!("bridge '{b}' does not exist")));
            }
        }
        if !self.nodes.quorate() {
            return Err(Error::failed("cluster not ready - no quorum?"));
        }
        if let Some((what, on)) = self.guests.holder(vmid) {
            return Err(Error::invalid(
                "vmid",
                format!(
                    "unable to create empty {} config - {what} {vmid} already exists on node '{on}'",
                    kind.noun()
                ),
            ));
        }
        let conf = BTreeMap::from([("lock".to_string(), "create".to_string())]);
        match kind {
            GuestType::Qemu => {
                self.guests
                    .insert(vmid, Vm::new(vmid, &node, VmStatus::Stopped, conf));
            }
            GuestType::Lxc => {
                self.guests.insert_ct(Ct::new(vmid, &node, conf));
            }
        }
        let socket = kind.control_socket(vmid);
        let worker = Worker::new(kind.tunnel_task(), &vmid.to_string())
            .log("mtunnel started")
            .effect(TaskEffect::Mtunnel {
                socket: socket.clone(),
            });
        let upid = self.spawn_task(
            &node,
            worker,
            &who.to_string(),
            now_ms,
            super::ACCEPT_TIMEOUT_MS,
        );
        self.tunnels.sessions.insert(
            socket.clone(),
            Session {
                kind,
                vmid,
                node,
                user: who.to_string(),
                upid: upid.clone(),
                socket: socket.clone(),
                lock: Some("create".into()),
                connected: false,
                exit: false,
                sockets: BTreeSet::new(),
                open: BTreeSet::new(),
                cleanup_volumes: BTreeSet::new(),
                cleanup_fw: false,
                import: None,
                nbd: BTreeMap::new(),
            },
        );
        self.advance(now_ms);
        Ok((upid, socket))
    }

    /// The open tunnels.
    pub fn tunnels(&self) -> &Tunnels {
        &self.tunnels
    }

    /// A connection to `socket` through `mtunnelwebsocket`: the control
    /// socket takes one (its worker then runs while it lasts), a data
    /// socket one at a time. `None`: nothing listens there (any more), and
    /// the connection is closed.
    pub fn mtunnel_connect(&mut self, socket: &str, now_ms: i64) -> Option<Connection> {
        let s = self.tunnels.of_socket_mut(socket)?;
        if s.socket == socket {
            if s.connected {
                return None;
            }
            s.connected = true;
            let upid = s.upid.clone();
            let (kind, id) = (s.kind.tunnel_task(), s.vmid.to_string());
            self.replan_task(&upid, i64::MAX, Worker::new(kind, &id), now_ms)
                .ok()?;
            return Some(Connection::Control);
        }
        if !s.open.insert(socket.to_string()) {
            return None;
        }
        Some(Connection::Data)
    }

    /// A data socket's stream ended, with `data` its bytes: a disk
    /// import takes them (a `raw+size`-like stream starts with the
    /// volume's size, eight bytes little-endian; its content is not
    /// kept); a VM's migration streams are read and dropped.
    pub fn mtunnel_data(&mut self, socket: &str, data: &[u8], now_ms: i64) {
        let now = now_ms.div_euclid(1000);
        let Some(s) = self.tunnels.of_socket_mut(socket) else {
            return;
        };
        s.open.remove(socket);
        let Some(import) = s.import.as_mut().filter(|i| i.socket == socket && !i.ended) else {
            return;
        };
        import.ended = true;
        let import = import.clone();
        let (vmid, node) = (s.vmid, s.node.clone());
        let size = data
            .get(..8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes);
        let result = match size {
            None => Err("import: no size found in export header, aborting.".to_string()),
            Some(size) => self
                .storage
                .import_volume(
                    &import.storage,
                    &node,
                    vmid,
                    &import.name,
                    &import.format,
                    size,
                    import.allow_rename,
                    now,
                )
                .map_err(|e| e.to_string()),
        };
        let Some(s) = self.tunnels.of_socket_mut(socket) else {
            return;
        };
        let Some(i) = s.import.as_mut() else {
            return;
        };
        match result {
            Ok((volid, lines)) => {
                i.output.extend(lines);
                i.output
                    .push_back(format!("successfully imported '{volid}'"));
            }
            Err(e) => i.output.push_back(e),
        }
    }

    /// A connection to `socket` ended. The control socket's end ends the
    /// worker: `mtunnel exited` after `quit`, else `mtunnel exited
    /// unexpectedly` (the guest is left as it is, locked).
    pub fn mtunnel_closed(&mut self, socket: &str, now_ms: i64) {
        let Some(s) = self.tunnels.of_socket_mut(socket) else {
            return;
        };
        if s.socket != socket {
            s.open.remove(socket);
            return;
        }
        let Some(s) = self.tunnels.sessions.remove(socket) else {
            return;
        };
        let mut w = Worker::new(s.kind.tunnel_task(), &s.vmid.to_string());
        if s.exit {
            w = w.log("mtunnel exited");
        } else {
            w = w.fail("mtunnel exited unexpectedly");
        }
        let _ = self.replan_task(&s.upid, now_ms, w, now_ms);
    }

    /// The tunnel worker's 300 seconds are up and nobody connected: its
    /// socket and the empty config go.
    pub(in crate::model) fn mtunnel_timeout(&mut self, socket: &str) -> EffectResult {
        let Some(s) = self.tunnels.sessions.get(socket) else {
            return Ok(Vec::new());
        };
        if s.connected {
            return Ok(Vec::new());
        }
        let s = match self.tunnels.sessions.remove(socket) {
            Some(s) => s,
            None => return Ok(Vec::new()),
        };
        let lines = vec![
            "Failed to accept tunnel connection - got timeout".to_string(),
            String::new(),
            "Removing tunnel socket..".to_string(),
            "Removing temporary VM config..".to_string(),
        ];
        self.remove_incoming(s.kind, s.vmid);
        Err((lines, "Exiting mtunnel".into()))
    }

    /// The config made for an incoming guest goes (`destroy_vm` with
    /// `skiplock`, `destroy_config`): it holds no volume of its own yet.
    fn remove_incoming(&mut self, kind: GuestType, vmid: u32) {
        match kind {
            GuestType::Qemu => {
                self.guests.remove(&vmid);
                self.access.remove_vm_access(vmid);
            }
            GuestType::Lxc => {
                self.guests.remove_ct(vmid);
            }
        }
        self.firewall.remove_guest(vmid);
    }

    /// One line the control socket read: its reply. The worker logs
    /// `received command '<cmd>'` and what the command prints.
    /// `sign` makes the tunnel ticket of a user for a socket (the keys
    /// are the wire's).
    pub fn mtunnel_command(
        &mut self,
        socket: &str,
        line: &str,
        now_ms: i64,
        sign: &dyn Fn(&str, &str) -> String,
    ) -> Reply {
        let fail = |msg: String| Reply {
            json: json!({"success": false, "msg": msg}),
        };
        let Some(s) = self.tunnels.sessions.get(socket) else {
            return fail("tunnel is in exit-mode, processing command not possible".into());
        };
        let upid = s.upid.clone();
        let user = s.user.clone();
        let mut params: Command = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                return fail(format!(
                    "failed to parse command - hash- or arrayref expected (not a simple scalar, use allow_nonref to allow this), got {other}\n"
                ));
            }
            Err(e) => return fail(format!("failed to parse command - {e}\n")),
        };
        let Some(cmd) = params.remove("cmd") else {
            return fail("'cmd' missing".into());
        };
        let cmd = match cmd {
            Value::String(c) => c,
            other => other.to_string(),
        };
        if s.exit {
            return fail(format!(
                "tunnel is in exit-mode, processing '{cmd}' cmd not possible"
            ));
        }
        let kind = s.kind;
        let known = matches!(
            cmd.as_str(),
            "version"
                | "config"
                | "bwlimit"
                | "disk-import"
                | "query-disk-import"
                | "start"
                | "stop"
                | "ticket"
                | "quit"
                | "unlock"
        ) || (kind == GuestType::Qemu
            && matches!(cmd.as_str(), "disk" | "fstrim" | "nbdstop" | "resume"));
        if !known {
            return fail(format!("unknown command '{cmd}' given"));
        }
        let mut log = vec![format!("received command '{cmd}'")];
        let result = validate(kind, &cmd, &params)
            .and_then(|()| {
                if command_schema(kind, &cmd).is_none() {
                    params.clear();
                }
                self.mtunnel_locked(socket)
            })
            .and_then(|()| self.mtunnel_handle(socket, &cmd, &params, now_ms, &mut log))
            .map(|mut v| {
                if cmd == "ticket"
                    && let Some(path) = v.get("path").and_then(Value::as_str).map(str::to_string)
                {
                    v = json!({ "ticket": sign(&user, &path) });
                }
                v
            });
        self.tasks.append(&upid, log);
        match result {
            Ok(mut v) => {
                if !v.is_object() {
                    v = json!({});
                }
                if let Some(m) = v.as_object_mut() {
                    m.insert("success".into(), Value::Bool(true));
                }
                Reply { json: v }
            }
            Err(e) => fail(format!(
                "failed to handle '{cmd}' command - {}",
                exception_text(&e)
            )),
        }
    }

    /// `$run_locked`'s check: the guest's config is still there and
    /// carries the lock the session expects.
    fn mtunnel_locked(&self, socket: &str) -> Result<()> {
        let Some(s) = self.tunnels.sessions.get(socket) else {
            return Ok(());
        };
        let lock = match s.kind {
            GuestType::Qemu => self.guests.vm(&s.node, s.vmid)?.lock().map(str::to_string),
            GuestType::Lxc => self.guests.ct(&s.node, s.vmid)?.lock().map(str::to_string),
        };
        if let Some(want) = &s.lock
            && lock.as_deref() != Some(want)
        {
            return Err(Error::failed(
                "Encountered wrong lock - aborting mtunnel command handling.",
            ));
        }
        Ok(())
    }

    fn set_guest_lock(&mut self, kind: GuestType, vmid: u32, lock: Option<&str>) {
        let conf = match kind {
            GuestType::Qemu => self.guests.get_mut(&vmid).map(|v| &mut v.config),
            GuestType::Lxc => self.guests.ct_by_id_mut(vmid).map(|c| &mut c.config),
        };
        if let Some(conf) = conf {
            match lock {
                Some(l) => {
                    conf.insert("lock".into(), l.into());
                }
                None => {
                    conf.remove("lock");
                }
            }
        }
    }

    /// One command's handler: what goes into the reply beside `success`.
    fn mtunnel_handle(
        &mut self,
        socket: &str,
        cmd: &str,
        params: &Command,
        now_ms: i64,
        log: &mut Vec<String>,
    ) -> Result<Value> {
        let Some(s) = self.tunnels.sessions.get(socket).cloned() else {
            return Err(Error::failed("no such tunnel"));
        };
        let who = AuthId::parse(&s.user).ok_or_else(|| Error::failed("invalid user"))?;
        let (kind, vmid, node) = (s.kind, s.vmid, s.node.clone());
        let now = now_ms.div_euclid(1000);
        match cmd {
            "version" => Ok(json!({"api": WS_TUNNEL_VERSION, "age": 0})),
            "bwlimit" => {
                let storages: Vec<String> = params
                    .get("storages")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let op = params
                    .get("operation")
                    .and_then(Value::as_str)
                    .unwrap_or("migration");
                let requested = params.get("bwlimit").and_then(|v| {
                    v.as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                });
                let limit = super::bandwidth_limit(
                    &self.storage,
                    &self.datacenter,
                    &self.access,
                    Some(&who),
                    op,
                    &storages,
                    requested,
                );
                Ok(json!({ "bwlimit": limit.map(number) }))
            }
            "config" => self.mtunnel_config(socket, kind, vmid, &who, params),
            "disk" => self.mtunnel_disk(socket, vmid, &node, &who, params, now),
            "disk-import" => self.mtunnel_disk_import(socket, kind, vmid, &node, &who, params, log),
            "query-disk-import" => self.mtunnel_query_import(socket, log),
            "start" => self.mtunnel_start(socket, kind, vmid, params, now_ms, log),
            "fstrim" | "nbdstop" => Ok(json!({})),
            "stop" => {
                match kind {
                    GuestType::Qemu => {
                        if let Some(vm) = self.guests.get_mut(&vmid) {
                            crate::model::qemu::power_off(vm);
                        }
                    }
                    GuestType::Lxc => {
                        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
                            ct.set_stopped();
                        }
                    }
                }
                Ok(json!({}))
            }
            "resume" => {
                let vm = self
                    .guests
                    .get_mut(&vmid)
                    .filter(|v| v.running())
                    .ok_or_else(|| Error::failed(format!("VM {vmid} not running")))?;
                vm.qmpstatus = None;
                Ok(json!({}))
            }
            "unlock" => {
                self.set_guest_lock(kind, vmid, None);
                if let Some(s) = self.tunnels.sessions.get_mut(socket) {
                    s.lock = None;
                }
                Ok(json!({}))
            }
            "ticket" => {
                let path = text(params, "path");
                if !s.sockets.contains(&path) {
                    return Err(Error::failed(format!(
                        "Not allowed to generate ticket for unknown socket '{path}'"
                    )));
                }
                // Signed by the caller, which holds the keys.
                Ok(json!({ "path": path }))
            }
            "quit" => {
                if truthy(params.get("cleanup")).unwrap_or(false) {
                    if s.cleanup_fw {
                        self.firewall.remove_guest(vmid);
                    }
                    for volid in &s.cleanup_volumes {
                        log.push(format!("freeing volume '{volid}' as part of cleanup"));
                        self.storage.free_volume(volid, &node);
                    }
                    match kind {
                        GuestType::Qemu => {
                            if let Some(vm) = self.guests.get_mut(&vmid) {
                                crate::model::qemu::power_off(vm);
                            }
                            let _ = self.vm_ops().destroy(&node, vmid, true, false, false);
                        }
                        GuestType::Lxc => {
                            if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
                                ct.set_stopped();
                                ct.config.remove("lock");
                            }
                            let _ = self
                                .ct_ops()
                                .finish_ct_destroy(&node, vmid, false, false, true);
                        }
                    }
                }
                log.push("switching to exit-mode, waiting for client to disconnect".into());
                if let Some(s) = self.tunnels.sessions.get_mut(socket) {
                    s.exit = true;
                }
                Ok(json!({}))
            }
            other => Err(Error::failed(format!("unknown command '{other}' given"))),
        }
    }

    /// `config`: the source's config, adapted to this cluster, written
    /// as `update_vm_api` (a VM) or `update_pct_config` (a container)
    /// writes it, checked for the session's user; then locked `migrate`.
    fn mtunnel_config(
        &mut self,
        socket: &str,
        kind: GuestType,
        vmid: u32,
        who: &AuthId,
        params: &Command,
    ) -> Result<Value> {
        let mut conf = parse_config_text(&text(params, "conf"));
        for k in ["lock", "digest", "parent", "snapstate", "snaptime"] {
            conf.remove(k);
        }
        let has_fw = params
            .get("firewall-config")
            .is_some_and(|v| v.as_str().is_some_and(|t| !t.is_empty()));
        let written = match kind {
            GuestType::Qemu => {
                let vmgenid = conf.remove("vmgenid");
                let meta = conf.remove("meta");
                let mut set = BTreeMap::new();
                for (k, v) in &conf {
                    if !crate::model::qemu::option_exists(self.version, k) {
                        return Err(Error::invalid(
                            k.clone(),
                            "property is not defined in schema and the schema does not allow additional properties",
                        ));
                    }
                    set.insert(
                        k.clone(),
                        crate::model::qemu::canonical(self.version, k, v)?,
                    );
                }
                let current = BTreeMap::new();
                {
                    let ops = self.vm_ops();
                    let perms = ops.perms();
                    perms.check_update_vm_perm(who, vmid, &current, &set, &[], None)?;
                    perms.check_update_vm_values_perm(who, vmid, &current, &set, &[])?;
                }
                for (_, v) in set
                    .iter()
                    .filter(|(k, _)| crate::model::qemu::is_drive_key(k))
                {
                    let file = crate::model::qemu::drive_file(v);
                    if let Some((sid, _)) = crate::model::storage::parse_volid(file)
                        && !file.starts_with('/')
                    {
                        self.storage.existing(sid)?;
                    }
                }
                set.extend(vmgenid.map(|v| ("vmgenid".to_string(), v)));
                set.extend(meta.map(|v| ("meta".to_string(), v)));
                set.insert("lock".into(), "migrate".into());
                let vm = self
                    .guests
                    .get_mut(&vmid)
                    .ok_or_else(|| crate::model::qemu::config_missing("", vmid))?;
                vm.config = set;
                true
            }
            GuestType::Lxc => {
                let unprivileged = conf.remove("unprivileged").is_some_and(|v| v == "1");
                let arch = conf.remove("arch");
                conf.retain(|k, _| !k.starts_with("lxc"));
                if !unprivileged {
                    self.access.check_perm(who, "/", &["Sys.Modify"])?;
                }
                crate::model::guest_perm::Perms::of(
                    &self.access,
                    &self.storage,
                    &self.sdn,
                    &self.guests,
                    self.version,
                )
                .check_ct_modify_config_perm(
                    who,
                    vmid,
                    None,
                    &conf,
                    &[],
                    unprivileged,
                )?;
                let mut set = BTreeMap::new();
                for (k, v) in &conf {
                    if !crate::model::lxc::schema::option_exists(self.version, k) {
                        return Err(Error::invalid(
                            k.clone(),
                            "property is not defined in schema and the schema does not allow additional properties",
                        ));
                    }
                    set.insert(
                        k.clone(),
                        crate::model::lxc::schema::canonical(self.version, k, v, None)?,
                    );
                }
                if unprivileged {
                    set.insert("unprivileged".into(), "1".into());
                }
                if let Some(a) = arch {
                    set.insert("arch".into(), a);
                }
                set.insert("lock".into(), "migrate".into());
                let ct = self
                    .guests
                    .ct_by_id_mut(vmid)
                    .ok_or_else(|| crate::model::lxc::config_missing("", vmid))?;
                ct.config = set;
                true
            }
        };
        if written && let Some(s) = self.tunnels.sessions.get_mut(socket) {
            s.lock = Some("migrate".into());
            if has_fw {
                s.cleanup_fw = true;
            }
        }
        Ok(json!({}))
    }

    /// `disk`: a VM's disk that comes over NBD, allocated here as
    /// `vm_migrate_alloc_nbd_disks` does; answers its volid and drive
    /// string.
    fn mtunnel_disk(
        &mut self,
        socket: &str,
        vmid: u32,
        node: &str,
        who: &AuthId,
        params: &Command,
        now: i64,
    ) -> Result<Value> {
        let storage = text(params, "storage");
        let format = text(params, "format");
        check_storage_access_migrate(self, GuestType::Qemu, who, &storage, node)?;
        let mut drive = params
            .get("drive")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for k in ["file", "volume", "format"] {
            drive.remove(k);
        }
        let interface = drive
            .remove("interface")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let index = drive.remove("index").map(|v| match v {
            Value::String(s) => s,
            other => other.to_string(),
        });
        let key = format!("{interface}{}", index.unwrap_or_default());
        let size = match drive.get("size") {
            Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
            Some(Value::String(s)) => crate::model::size::parse_size(s).unwrap_or(0),
            _ => 0,
        };
        let s = self.storage.existing(&storage)?.clone();
        let fmt = if path_based(&s.kind) {
            if valid_formats(&s.kind).contains(&format.as_str()) {
                format.clone()
            } else {
                s.options
                    .get("format")
                    .cloned()
                    .unwrap_or_else(|| "raw".into())
            }
        } else {
            "raw".to_string()
        };
        let (volid, _) = self.storage.alloc_volume(
            &storage,
            node,
            vmid,
            &VolumeKind::Disk,
            Some(&fmt),
            size,
            now,
        )?;
        let mut parts: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in &drive {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Null => continue,
                other => other.to_string(),
            };
            parts.insert(k.clone(), v);
        }
        parts.insert("size".into(), size.to_string());
        parts.insert("format".into(), fmt);
        parts.insert("file".into(), volid.clone());
        let drivestr = print_drive(self.version, &key, &parts, &volid);
        if let Some(sess) = self.tunnels.sessions.get_mut(socket) {
            sess.cleanup_volumes.insert(volid.clone());
            sess.nbd.insert(volid.clone(), drivestr.clone());
        }
        Ok(json!({ "volid": volid, "drivestr": drivestr }))
    }

    /// `disk-import`: `volume_import_start` of the volume asked for,
    /// listening on the session's storage socket; answers the socket
    /// and the transport format agreed.
    #[allow(clippy::too_many_arguments)]
    fn mtunnel_disk_import(
        &mut self,
        socket: &str,
        kind: GuestType,
        vmid: u32,
        node: &str,
        who: &AuthId,
        params: &Command,
        log: &mut Vec<String>,
    ) -> Result<Value> {
        let storage = text(params, "storage");
        check_storage_access_migrate(self, kind, who, &storage, node)?;
        if let Some(s) = self.tunnels.sessions.get(socket)
            && s.import.is_some()
        {
            let pid = 4000 + vmid % 1000;
            return Err(Error::failed(format!(
                "disk import already running as PID '{pid}'"
            )));
        }
        let s = self.storage.existing(&storage)?.clone();
        let format = text(params, "format");
        if !valid_formats(&s.kind).contains(&format.as_str()) {
            return Err(Error::failed(format!(
                "unsupported format '{format}' for storage type {}",
                s.kind
            )));
        }
        let volname = text(params, "volname");
        let bare = volname
            .strip_suffix(&format!(".{format}"))
            .unwrap_or(&volname);
        let name = if path_based(&s.kind) {
            format!("{vmid}/{bare}.{format}")
        } else {
            bare.to_string()
        };
        let with_snapshots = truthy(params.get("with_snapshots")).unwrap_or(false);
        let import = transfer_formats(&s.kind, &format, with_snapshots);
        let export = text(params, "export_formats");
        let Some(transport) = export
            .split([',', ';', ' '])
            .find(|f| import.contains(f))
            .map(str::to_string)
        else {
            return Err(Error::failed(format!(
                "no matching import/export format found for storage '{storage}'"
            )));
        };
        let unix = kind.storage_socket(vmid);
        log.push("ready".into());
        log.push(String::new());
        if let Some(sess) = self.tunnels.sessions.get_mut(socket) {
            sess.sockets.insert(unix.clone());
            sess.import = Some(Import {
                socket: unix.clone(),
                storage,
                name,
                format,
                allow_rename: truthy(params.get("allow_rename")).unwrap_or(false),
                output: VecDeque::new(),
                ended: false,
            });
        }
        Ok(json!({ "socket": unix, "format": transport }))
    }

    /// `query-disk-import`: the import's next line of output; `complete`
    /// with the new volume once it printed `successfully imported`.
    fn mtunnel_query_import(&mut self, socket: &str, log: &mut Vec<String>) -> Result<Value> {
        let sess = self
            .tunnels
            .sessions
            .get_mut(socket)
            .ok_or_else(|| Error::failed("no disk import running"))?;
        let Some(import) = sess.import.as_mut() else {
            return Err(Error::failed("no disk import running"));
        };
        let Some(line) = import.output.pop_front() else {
            if import.ended {
                // The import ended without saying it succeeded.
                let unix = import.socket.clone();
                sess.sockets.remove(&unix);
                sess.import = None;
                return Ok(json!({"status": "error", "msg": "import process failed\n"}));
            }
            return Ok(json!({"status": "pending", "msg": Value::Null}));
        };
        log.push(format!("disk-import: {line}"));
        log.push(String::new());
        if let Some(volid) = line
            .strip_prefix("successfully imported '")
            .and_then(|r| r.strip_suffix('\''))
        {
            let volid = volid.to_string();
            let unix = import.socket.clone();
            sess.sockets.remove(&unix);
            sess.import = None;
            sess.cleanup_volumes.insert(volid.clone());
            return Ok(json!({"status": "complete", "volid": volid}));
        }
        if import.ended && import.output.is_empty() && !line.starts_with("  ") {
            // Its last line, and no success: the import failed.
            let unix = import.socket.clone();
            sess.sockets.remove(&unix);
            sess.import = None;
            return Ok(json!({"status": "error", "msg": format!("{line}\n")}));
        }
        Ok(json!({"status": "pending", "msg": format!("{line}\n")}))
    }

    /// `start`: a VM started to take an incoming migration (its NBD
    /// disks checked against those `disk` allocated), or a container
    /// started after a restart migration.
    fn mtunnel_start(
        &mut self,
        socket: &str,
        kind: GuestType,
        vmid: u32,
        params: &Command,
        now_ms: i64,
        log: &mut Vec<String>,
    ) -> Result<Value> {
        if kind == GuestType::Lxc {
            self.apply_lxc(vmid, LxcOp::Start { skiplock: true }, now_ms)
                .map_err(|(_, e)| Error::failed(e))?;
            return Ok(json!({}));
        }
        let known = self
            .tunnels
            .sessions
            .get(socket)
            .map(|s| s.nbd.clone())
            .unwrap_or_default();
        let nbd = params
            .get("migrate_opts")
            .and_then(|m| m.get("nbd"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (ds, drive) in &nbd {
            let volid = drive
                .get("volid")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::failed(format!("No volid set for NBD volume '{ds}'")))?;
            let drivestr = drive
                .get("drivestr")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Error::failed(format!("No drivestr set for NBD volume '{ds}:{volid}'"))
                })?;
            if let Some(obj) = drive.as_object() {
                for k in obj.keys() {
                    if !matches!(k.as_str(), "volid" | "drivestr" | "success") {
                        return Err(Error::failed(format!(
                            "Unknown NBD volume key for '{ds}:{volid}': '{k}'"
                        )));
                    }
                }
            }
            let expected = known
                .get(volid)
                .ok_or_else(|| Error::failed(format!("Unknown NBD volume '{ds}:{volid}'")))?;
            if drivestr != expected {
                return Err(Error::failed(format!(
                    "NBD mismatch for '{ds}': '{drivestr}' vs' {expected}"
                )));
            }
        }
        self.apply_qemu(vmid, QemuOp::Start { skiplock: true }, now_ms)
            .map_err(|(_, e)| Error::failed(e))?;
        if let Some(vm) = self.guests.get_mut(&vmid) {
            // QEMU waits for the incoming state (`-incoming`), paused.
            vm.qmpstatus = Some(QmpStatus::Paused);
        }
        let migrate_socket = format!("/run/qemu-server/{vmid}.migrate");
        let uri = format!("unix:{migrate_socket}");
        log.push(format!("migration listens on {uri}"));
        let mut migrate = json!({"proto": "unix", "addr": migrate_socket, "uri": uri});
        let mut drives = Map::new();
        let mut sockets = vec![migrate_socket];
        if !nbd.is_empty() {
            let nbd_socket = format!("/run/qemu-server/{vmid}_nbd.migrate");
            migrate["unix_sockets"] = json!([nbd_socket]);
            for (ds, drive) in &nbd {
                let drivestr = drive.get("drivestr").and_then(Value::as_str).unwrap_or("");
                let volid = drive.get("volid").and_then(Value::as_str).unwrap_or("");
                let nbd_uri = format!("nbd:unix:{nbd_socket}:exportname=drive-{ds}");
                log.push(format!(
                    "storage migration listens on {nbd_uri} volume:{drivestr}"
                ));
                drives.insert(
                    ds.clone(),
                    json!({"drivestr": drivestr, "volid": volid, "nbd_uri": nbd_uri}),
                );
            }
            sockets.push(nbd_socket);
        }
        if let Some(s) = self.tunnels.sessions.get_mut(socket) {
            s.sockets.extend(sockets);
        }
        Ok(json!({ "migrate": migrate, "drives": drives }))
    }
}

/// A drive's property string for config key `key`, printed as
/// `print_drive` prints it (sizes as `4G`).
fn print_drive(
    version: crate::model::PveVersion,
    key: &str,
    parts: &BTreeMap<String, String>,
    volid: &str,
) -> String {
    let mut rest: Vec<String> = Vec::new();
    for (k, v) in parts {
        if k == "file" {
            continue;
        }
        let v = if k == "size" {
            crate::spec::propstring::format_size(v)
        } else {
            v.clone()
        };
        rest.push(format!("{k}={v}"));
    }
    let raw = if rest.is_empty() {
        volid.to_string()
    } else {
        format!("{volid},{}", rest.join(","))
    };
    crate::model::qemu::canonical(version, key, &raw).unwrap_or(raw)
}

/// A bandwidth limit as JSON: a whole number when it is one.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}
