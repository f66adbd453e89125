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

use super::{GuestType, WS_TUNNEL_VERSION, exception_text};
use crate::model::access::AuthId;
use crate::model::cluster::Cluster;
use crate::model::lxc::Ct;
use crate::model::qemu::{EffectResult, Vm, VmStatus};
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{Error, Result};

/// The open tunnels of this cluster, by their control socket; not part
/// of a saved world (a tunnel ends with its connection).
#[derive(Debug, Clone, Default)]
pub struct Tunnels {
    pub(super) sessions: BTreeMap<String, Session>,
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
    pub(super) lock: Option<String>,
    /// Whether the control socket took its connection.
    pub(super) connected: bool,
    /// `quit` was handled: every further command is refused.
    pub(super) exit: bool,
    /// The data sockets tickets are handed out for.
    pub(super) sockets: BTreeSet<String>,
    /// The data sockets connected now.
    pub(super) open: BTreeSet<String>,
    /// What `quit` with `cleanup` removes.
    pub(super) cleanup_volumes: BTreeSet<String>,
    /// Whether `config` wrote the guest's firewall file.
    pub(super) cleanup_fw: bool,
    /// The running disk import.
    pub(super) import: Option<Import>,
    /// The NBD volumes `disk` allocated: volid → drive string.
    pub(super) nbd: BTreeMap<String, String>,
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
pub(super) struct Import {
    pub(super) socket: String,
    pub(super) storage: String,
    /// The volume name asked for, as the storage names it.
    pub(super) name: String,
    /// The image format (`raw`, `qcow2`, `subvol`).
    pub(super) format: String,
    pub(super) allow_rename: bool,
    /// The lines it printed and `query-disk-import` has not read yet.
    pub(super) output: VecDeque<String>,
    /// Whether the stream arrived (and the import ended).
    pub(super) ended: bool,
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
pub(super) fn truthy(v: Option<&Value>) -> Option<bool> {
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

pub(super) fn text(params: &Command, key: &str) -> String {
    match params.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// `$check_storage_access_migrate` of a target storage.
pub(super) fn check_storage_access_migrate(
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
                Ok(json!({ "bwlimit": limit.map(super::commands::number) }))
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
}
