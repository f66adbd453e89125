//! `POST .../remote_migrate` (`remote_migrate_vm` of qemu-server and
//! pve-container) and its `qmigrate`/`vzmigrate` task (`QemuMigrate.pm`,
//! `LXC/Migrate.pm`, `AbstractMigrate.pm`, `Tunnel.pm`,
//! `StorageTunnel.pm`).
//!
//! The call reaches the target before it answers: its certificate's
//! fingerprint (`/nodes/localhost/certificates/info`, when none is
//! given), a custom CPU model's definition, and which node answers
//! (`/cluster/status`). The task then opens the tunnel (`mtunnel`, then
//! `mtunnelwebsocket`) and moves the guest through it: a volume at a
//! time (`disk-import` and its stream on a second websocket), the
//! config, and for a running VM the start of its incoming instance, the
//! memory and NBD streams and the resume. The task's log is PVE's, with
//! the tunnel helper's own lines (`tunnel: ...`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::client::RemoteApi;
use super::tunnel::Tunnel;
use super::{TaskLog, durable, render_bytes};
use crate::model::mtunnel::{
    Endpoint, GuestType, LocalVolume, Outgoing, WS_TUNNEL_VERSION, duration, finished_line,
    mapped_lines,
};
use crate::model::qemu::StorageMap;
use crate::model::{AuthId, Error, Result, Worker};
use crate::state::State;

/// A `remote_migrate` call, its parameters read.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) kind: GuestType,
    pub(crate) node: String,
    pub(crate) vmid: u32,
    pub(crate) target_vmid: u32,
    pub(crate) endpoint: Endpoint,
    pub(crate) online: bool,
    pub(crate) restart: bool,
    pub(crate) timeout: u64,
    pub(crate) delete: bool,
    pub(crate) target_storage: String,
    pub(crate) target_bridge: String,
    pub(crate) bwlimit: Option<f64>,
    pub(crate) who: AuthId,
}

/// `parse_idmap` of a map parameter, refused as `remote_migrate_vm`
/// refuses it.
fn idmap(param: &str, what: &str, value: &str) -> Result<StorageMap> {
    StorageMap::parse(value).map_err(|e| {
        Error::invalid(
            param,
            format!("failed to parse {what} map: {}", e.to_string().trim_end()),
        )
    })
}

/// What `remote_migrate_vm` does after its first checks: the calls to
/// the target, the rest of its checks, then the task, whose UPID it
/// answers. The task runs on in the background.
///
/// # Errors
/// PVE's refusals: the target's (`fingerprint '...' not verified,
/// abort!`, `500 Can't connect to ...`, its own answers), the maps',
/// the VM's.
pub(crate) async fn remote_migrate(state: State, req: Request) -> Result<String> {
    let mut fingerprint = req.endpoint.fingerprint.clone();
    let api = RemoteApi::new(&req.endpoint, fingerprint.clone()).map_err(Error::failed)?;
    if fingerprint.is_none() {
        let info = api
            .get("/nodes/localhost/certificates/info")
            .await
            .map_err(Error::failed)?;
        for cert in info.as_array().into_iter().flatten() {
            let file = cert["filename"].as_str().unwrap_or_default();
            if file != "pveproxy-ssl.pem" && file != "pve-ssl.pem" {
                continue;
            }
            if let Some(fp) = cert["fingerprint"].as_str()
                && (fingerprint.is_none() || file == "pveproxy-ssl.pem")
            {
                fingerprint = Some(fp.to_uppercase());
            }
        }
    }
    // The tunnel re-uses the fingerprint found.
    let api = RemoteApi::new(&req.endpoint, fingerprint).map_err(Error::failed)?;
    let mut online = req.online;
    if req.kind == GuestType::Qemu {
        online = state.with(|c| c.remote_migrate_online(req.vmid, req.online))?;
        let custom = state.with(|c| {
            c.remote_custom_cpu(req.vmid)
                .map(|name| (name.clone(), c.custom_cpu_model(&name)))
        });
        if let Some((name, local)) = custom {
            let path = format!(
                "/cluster/qemu/custom-cpu-models/{}",
                super::uri_escape(&format!("custom-{name}"))
            );
            let remote = api.get(&path).await.map_err(|e| {
                Error::failed(format!(
                    "could not validate custom CPU model compatibility: {}",
                    e.trim_end()
                ))
            })?;
            check_cpu_model(
                &format!("custom-{name}"),
                &local.unwrap_or_default(),
                &remote,
            )?;
        }
    }
    let storagemap = idmap("target-storage", "storage", &req.target_storage)?;
    let bridgemap = idmap("target-bridge", "bridge", &req.target_bridge)?;
    if storagemap.identity {
        return Err(Error::failed(
            "remote migration requires explicit storage mapping!",
        ));
    }
    let status = api.get("/cluster/status").await.map_err(Error::failed)?;
    let target_node = status
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["type"] == "node" && (e["local"] == 1 || e["local"] == true))
        .and_then(|e| e["name"].as_str().map(str::to_string))
        .ok_or_else(|| Error::failed("couldn't determine endpoint's node name"))?;
    let out = Outgoing {
        kind: req.kind,
        node: req.node.clone(),
        vmid: req.vmid,
        target_vmid: req.target_vmid,
        target_node,
        host: req.endpoint.host.clone(),
        online,
        restart: req.restart,
        timeout: req.timeout,
        delete: req.delete,
        storagemap,
        bridgemap,
        bwlimit: req.bwlimit,
        who: req.who.clone(),
    };
    let who = req.who.to_string();
    let kind = req.kind.migrate_task();
    let upid = durable(&state, |c, now_ms| {
        let w = Worker::new(kind, &req.vmid.to_string());
        c.start_task(&req.node, w, &who, now_ms, u64::MAX)
    });
    let log = TaskLog::new(state.clone(), upid.clone());
    tokio::spawn(async move {
        let started = log.now_ms();
        let mut m = Migration {
            log: log.clone(),
            state,
            api: Arc::new(api),
            job: out,
            tunnel: None,
            running: false,
            errors: false,
            volume_map: BTreeMap::new(),
            volumes: Vec::new(),
            nbd: Map::new(),
            conf_migrated: false,
            livemigration: false,
        };
        let result = m.migrate().await;
        let secs = (log.now_ms() - started).div_euclid(1000);
        let error = match result {
            Err(e) => {
                log.err(&format!(
                    "migration aborted (duration {}): {}",
                    duration(secs),
                    e
                ));
                Some("migration aborted".to_string())
            }
            Ok(()) if m.errors => {
                log.err(&format!(
                    "migration finished with problems (duration {})",
                    duration(secs)
                ));
                Some("migration problems".to_string())
            }
            Ok(()) => {
                log.info(&finished_line(secs));
                None
            }
        };
        if let Some(t) = m.tunnel.take() {
            t.ws.close().await;
        }
        log.end(kind, &m.job.vmid.to_string(), error);
    });
    Ok(upid)
}

/// `assert_custom_model_compatibility`: the target's definition of a
/// custom CPU model must match this one, flags in any order.
fn check_cpu_model(cputype: &str, local: &BTreeMap<String, String>, remote: &Value) -> Result<()> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(b) => u8::from(*b).to_string(),
        other => other.to_string(),
    };
    let flags = |s: &str| {
        let mut f: Vec<&str> = s.split(';').filter(|x| !x.is_empty()).collect();
        f.sort_unstable();
        f.join(";")
    };
    let lf = flags(local.get("flags").map_or("", String::as_str));
    let rf = flags(&text(&remote["flags"]));
    if lf != rf {
        return Err(Error::failed(format!(
            "CPU {cputype} config mismatch for flags: local={lf},remote={rf}"
        )));
    }
    for key in [
        "guest-phys-bits",
        "hidden",
        "hv-vendor-id",
        "level",
        "phys-bits",
        "reported-model",
    ] {
        let l = local.get(key).cloned().unwrap_or_default();
        let r = text(&remote[key]);
        let r = if r == "0" && l.is_empty() {
            String::new()
        } else {
            r
        };
        if l != r {
            return Err(Error::failed(format!(
                "CPU {cputype} config mismatch for {key}: local={l},remote={r}"
            )));
        }
    }
    Ok(())
}

/// One migration's state (`$self` of `AbstractMigrate`).
struct Migration {
    log: TaskLog,
    state: State,
    api: Arc<RemoteApi>,
    job: Outgoing,
    tunnel: Option<Tunnel>,
    running: bool,
    errors: bool,
    volume_map: BTreeMap<String, String>,
    /// The volumes sent so far (a container's `$self->{volumes}`).
    volumes: Vec<String>,
    /// The NBD drives the target allocated: drive → `disk`'s answer.
    nbd: Map<String, Value>,
    conf_migrated: bool,
    livemigration: bool,
}

impl Migration {
    fn tunnel(&mut self) -> Result<&mut Tunnel, String> {
        self.tunnel
            .as_mut()
            .ok_or_else(|| "no tunnel\n".to_string())
    }

    async fn command(&mut self, cmd: &str, params: Map<String, Value>) -> Result<Value, String> {
        self.tunnel()?.command(cmd, params).await
    }

    /// `AbstractMigrate::migrate`, from `prepare` to `final_cleanup`.
    async fn migrate(&mut self) -> Result<(), String> {
        self.prepare().await?;
        if let Err(e) = self.phase1().await {
            self.log.err(&e);
            if let Err(e2) = self.phase1_cleanup().await {
                self.log.err(&e2);
            }
            if let Err(e2) = self.final_cleanup().await {
                self.log.err(&e2);
            }
            return Err(e);
        }
        if self.running && self.job.kind == GuestType::Qemu {
            let phase2 = self.phase2().await;
            if let Err(e) = &phase2 {
                self.errors = true;
                self.log.err(&format!("online migrate failure - {e}"));
            }
            if let Err(e) = self.phase2_cleanup().await {
                self.log.err(&e);
                self.errors = true;
            }
        }
        if let Err(e) = self.phase3_cleanup().await {
            self.log.err(&e);
            self.errors = true;
        }
        if let Err(e) = self.final_cleanup().await {
            self.log.err(&e);
            self.errors = true;
        }
        Ok(())
    }

    /// `prepare`: the local checks, then the tunnel (`fork_websocket_tunnel`)
    /// and its version; a restart migration shuts the container down.
    async fn prepare(&mut self) -> Result<(), String> {
        let job = self.job.clone();
        let prepared = self.state.with(|c| c.remote_prepare(&job))?;
        self.running = prepared.running;
        for l in &prepared.lines {
            self.log.info(l);
        }
        let kind = job.kind.as_str();
        let url = format!(
            "/nodes/{}/{kind}/{}/mtunnel",
            job.target_node, job.target_vmid
        );
        let res = self
            .api
            .post(
                &url,
                &[
                    ("storages", prepared.storages.join(",")),
                    ("bridges", prepared.bridges.join(",")),
                ],
            )
            .await?;
        self.log.info(&format!(
            "remote: started tunnel worker '{}'",
            res["upid"].as_str().unwrap_or_default()
        ));
        let path = format!(
            "/nodes/{}/{kind}/{}/mtunnelwebsocket",
            job.target_node, job.target_vmid
        );
        let ws_url = format!(
            "{path}?ticket={}&socket={}",
            super::uri_escape(res["ticket"].as_str().unwrap_or_default()),
            super::uri_escape(res["socket"].as_str().unwrap_or_default())
        );
        let ws = self.api.websocket(&ws_url).await.map_err(|e| {
            self.log
                .raw([format!("tunnel: failed to connect: {}", e.trim_end())]);
            format!("can't open tunnel - failed to connect via WS: {e}")
        })?;
        let mut tunnel = Tunnel {
            ws,
            buf: Vec::new(),
            log: self.log.clone(),
            api: self.api.clone(),
            path,
            forwarded: BTreeSet::new(),
            version: 0,
        };
        let version = tunnel
            .command("version", Map::new())
            .await
            .map_err(|e| format!("can't open tunnel - {e}"))?;
        let api = version["api"].as_u64().unwrap_or(0);
        let age = version["age"].as_u64().unwrap_or(0);
        tunnel.version = api;
        self.tunnel = Some(tunnel);
        let min = api.saturating_sub(age);
        self.log
            .info(&format!("local WS tunnel version: {WS_TUNNEL_VERSION}"));
        self.log.info(&format!("remote WS tunnel version: {api}"));
        self.log
            .info(&format!("minimum required WS tunnel version: {min}"));
        if WS_TUNNEL_VERSION < min {
            return Err("Remote tunnel endpoint not compatible, upgrade required\n".into());
        }
        if WS_TUNNEL_VERSION > api {
            return Err("Remote tunnel endpoint too old, upgrade required\n".into());
        }
        match job.kind {
            GuestType::Qemu => self.log.raw(["websocket tunnel started".to_string()]),
            GuestType::Lxc => self.log.info("websocket tunnel started"),
        }
        if job.kind == GuestType::Lxc && job.restart && self.running {
            self.log.info(&format!("shutdown CT {}", job.vmid));
            self.state.with(|c| c.remote_shutdown(job.vmid));
            self.state.changed();
        }
        Ok(())
    }

    /// `get_bwlimit` of a volume: the local limit, lowered by the
    /// target's.
    async fn bwlimit(&mut self, sid: &str, target: &str) -> Result<Option<f64>, String> {
        let mut params = Map::new();
        params.insert("operation".into(), json!("migration"));
        params.insert("storages".into(), json!([target]));
        params.insert("bwlimit".into(), json!(self.job.bwlimit));
        let reply = self.command("bwlimit", params).await?;
        let local = self.state.with(|c| c.remote_bwlimit(&self.job, sid));
        let remote = reply["bwlimit"]
            .as_f64()
            .or_else(|| reply["bwlimit"].as_str().and_then(|s| s.parse().ok()))
            .filter(|v| *v != 0.0);
        Ok(match (local, remote) {
            (Some(l), Some(r)) if r < l => Some(r),
            (None, Some(r)) => Some(r),
            (l, _) => l,
        })
    }

    /// `phase1`: the guest locked, its volumes scanned and sent, its
    /// config sent.
    async fn phase1(&mut self) -> Result<(), String> {
        let job = self.job.clone();
        self.log.info(&format!(
            "starting migration of {} {} to node '{}' ({})",
            job.kind.noun(),
            job.vmid,
            job.target_node,
            job.host
        ));
        self.state.with(|c| c.remote_lock(&job));
        self.state.changed();
        let running = self.running && job.kind == GuestType::Qemu;
        let scan = self.state.with(|c| c.remote_scan(&job, running));
        for (sid, target) in &scan.bwlimits {
            self.bwlimit(sid, target).await?;
        }
        for l in &scan.lines {
            self.log.info(l);
        }
        if let Some(e) = scan.error {
            return Err(format!("{e}\n"));
        }
        let offline: Vec<LocalVolume> =
            scan.volumes.iter().filter(|v| !v.online).cloned().collect();
        let online: Vec<LocalVolume> = scan.volumes.iter().filter(|v| v.online).cloned().collect();
        if job.kind == GuestType::Qemu && !offline.is_empty() {
            self.log.info("copying local disk images");
        }
        for vol in &offline {
            self.volumes.push(vol.volid.clone());
            let new = match self.storage_migrate(vol).await {
                Ok(v) => v,
                Err(e) if job.kind == GuestType::Lxc => {
                    return Err(format!(
                        "storage migration for '{}' to storage '{}' failed - {e}",
                        vol.volid, vol.targetsid
                    ));
                }
                Err(e) => return Err(e),
            };
            self.volume_map.insert(vol.volid.clone(), new.clone());
            self.log
                .info(&format!("volume '{}' is '{new}' on the target", vol.volid));
        }
        let remote = self
            .state
            .with(|c| c.remote_conf(&job, &self.volume_map, &online));
        for l in mapped_lines(&remote.mapped) {
            self.log.info(&l);
        }
        let mut conf = remote.conf;
        for d in remote.nbd {
            let (ds, old, targetsid, format, opts) =
                (d.key, d.volid, d.storage, d.format, d.options);
            self.log.info(&format!(
                "Allocating volume for drive '{ds}' on remote storage '{targetsid}'.."
            ));
            let (iface, index) = split_drive_key(&ds);
            let mut drive = Map::new();
            for (k, v) in &opts {
                let v = if k == "size" {
                    v.parse::<u64>().map_or_else(|_| json!(v), |n| json!(n))
                } else {
                    json!(v)
                };
                drive.insert(k.clone(), v);
            }
            drive.insert("interface".into(), json!(iface));
            drive.insert("index".into(), json!(index));
            let mut params = Map::new();
            params.insert("format".into(), json!(format));
            params.insert("storage".into(), json!(targetsid));
            params.insert("drive".into(), Value::Object(drive));
            let res = self.command("disk", params).await?;
            let volid = res["volid"].as_str().unwrap_or_default().to_string();
            self.log
                .info(&format!("volume '{old}' is '{volid}' on the target"));
            if let Some(d) = res["drivestr"].as_str() {
                conf.insert(ds.clone(), d.to_string());
            }
            self.volume_map.insert(old.clone(), volid);
            self.nbd.insert(ds.clone(), res);
        }
        let text = self.state.with(|c| c.remote_conf_text(&job, &conf));
        let mut params = Map::new();
        params.insert("conf".into(), json!(text));
        params.insert("firewall-config".into(), Value::Null);
        let timeout_cmd = "config";
        self.command(timeout_cmd, params).await?;
        self.conf_migrated = true;
        Ok(())
    }

    /// `PVE::StorageTunnel::storage_migrate`: `disk-import`, the stream
    /// on the import's socket, then `query-disk-import` until the target
    /// says what the volume became.
    async fn storage_migrate(&mut self, vol: &LocalVolume) -> Result<String, String> {
        let job = self.job.clone();
        let export = self.state.with(|c| c.remote_export(&job, vol))?;
        let mut params = Map::new();
        params.insert("format".into(), json!(export.format));
        params.insert("storage".into(), json!(export.storage));
        params.insert(
            "migration_snapshot".into(),
            json!(u8::from(export.migration_snapshot)),
        );
        params.insert(
            "with_snapshots".into(),
            json!(u8::from(export.with_snapshots)),
        );
        params.insert("allow_rename".into(), json!("1"));
        params.insert(
            "export_formats".into(),
            json!(export.export_formats.join(",")),
        );
        params.insert("volname".into(), json!(export.volname));
        if export.migration_snapshot {
            params.insert("snapshot".into(), json!("__migration__"));
        }
        let res = self.command("disk-import", params).await?;
        let remote = res["socket"].as_str().unwrap_or_default().to_string();
        let local = format!("/run/pve/{}.storage", job.vmid);
        let tunnel = self.tunnel()?;
        tunnel.forwarded.insert(local.clone());
        let mut ws = tunnel.connect(&local, &remote).await?;
        // The stream: its size first (`write_common_header`); the
        // volume's content is not emulated.
        let sent = ws.send(&export.size.to_le_bytes()).await;
        ws.close().await;
        self.log.raw([format!(
            "tunnel: done handling forwarded connection from '{local}'"
        )]);
        let send_error = sent.err().map(|e| format!("{e}"));
        let mut new_volid = None;
        for _ in 0..600 {
            let res = self.command("query-disk-import", Map::new()).await?;
            match res["status"].as_str().unwrap_or_default() {
                "pending" => match res["msg"].as_str().filter(|m| !m.is_empty()) {
                    Some(msg) => self.log.info(&format!("disk-import: {msg}")),
                    None => {
                        self.log.info("waiting for disk import to finish..");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                },
                "complete" => {
                    new_volid = res["volid"].as_str().map(str::to_string);
                    break;
                }
                other => {
                    self.log
                        .err(&format!("unknown query-disk-import result: {other}"));
                    break;
                }
            }
        }
        if let Some(e) = send_error {
            return Err(format!("{e}\n"));
        }
        new_volid.ok_or_else(|| "disk import failed - see log above\n".to_string())
    }

    /// `phase2`: a running VM's instance started there, its memory (and
    /// its disks over NBD) moved, as QEMU's migration reports it.
    async fn phase2(&mut self) -> Result<(), String> {
        let job = self.job.clone();
        let vmid = job.vmid;
        let tvmid = job.target_vmid;
        let mut nbd = Map::new();
        for (ds, res) in &self.nbd {
            nbd.insert(ds.clone(), res.clone());
        }
        let storagemap = json!({
            "entries": job.storagemap.entries,
            "default": job.storagemap.default,
        });
        let params = json!({
            "start_params": {
                "statefile": "unix",
                "forcemachine": Value::Null,
                "forcecpu": Value::Null,
                "skiplock": 1,
            },
            "migrate_opts": {
                "spice_ticket": Value::Null,
                "type": "websocket",
                "network": Value::Null,
                "storagemap": storagemap,
                "migratedfrom": job.node,
                "nbd_proto_version": 1,
                "nbd": nbd,
                "remote_node": job.target_node,
            },
        });
        let Value::Object(params) = params else {
            return Err("internal error".into());
        };
        let res = self.command("start", params).await?;
        let addr = res["migrate"]["addr"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if res["migrate"]["proto"] != "unix" {
            return Err("only UNIX sockets are supported for remote migration\n".into());
        }
        let expected = format!("/run/qemu-server/{tvmid}.migrate");
        if addr != expected {
            return Err(format!("unexpected socket address '{addr}'\n"));
        }
        let local_socket = addr.replace(&tvmid.to_string(), &vmid.to_string());
        self.log
            .info(&format!("Setting up tunnel for '{local_socket}'"));
        let mut sockets = vec![(local_socket.clone(), addr.clone())];
        for s in res["migrate"]["unix_sockets"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let Some(remote) = s.as_str() else {
                continue;
            };
            let local = remote.replace(&tvmid.to_string(), &vmid.to_string());
            if sockets.iter().any(|(l, _)| *l == local) {
                continue;
            }
            self.log.info(&format!("Setting up tunnel for '{local}'"));
            sockets.push((local, remote.to_string()));
        }
        for (local, _) in &sockets {
            self.tunnel()?.forwarded.insert(local.clone());
        }
        let migrate_uri = format!("unix:{local_socket}");
        let drives: Vec<(String, String)> = res["drives"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let uri = v["nbd_uri"].as_str().unwrap_or_default().replace(
                            &format!("/run/qemu-server/{tvmid}_"),
                            &format!("/run/qemu-server/{vmid}_"),
                        );
                        (k.clone(), uri)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let sizes = self.state.with(|c| c.remote_drive_sizes(&job));
        if !drives.is_empty() {
            self.log.info("starting storage migration");
            let nbd_socket = sockets
                .iter()
                .find(|(l, _)| l.ends_with("_nbd.migrate"))
                .cloned();
            for (ds, uri) in &drives {
                self.log.info(&format!("{ds}: start migration to {uri}"));
                self.log
                    .raw([format!("drive mirror is starting for drive-{ds}")]);
                if let Some((local, remote)) = &nbd_socket {
                    let mut ws = self.tunnel()?.connect(local, remote).await?;
                    let _ = ws.send(b"NBDMAGIC").await;
                    ws.close().await;
                }
                let size = render_bytes(sizes.get(ds).copied().unwrap_or(0));
                self.log.raw([
                    format!("drive-{ds}: transferred {size} of {size} (100.00%) in 0s, ready"),
                    "all 'mirror' jobs are ready".to_string(),
                ]);
            }
            self.log
                .info("switching mirror jobs to actively synced mode");
            for (ds, _) in &drives {
                self.log.raw([
                    format!("drive-{ds}: switching to actively synced mode"),
                    format!("drive-{ds}: successfully switched to actively synced mode"),
                ]);
            }
        }
        self.log
            .info(&format!("starting online/live migration on {migrate_uri}"));
        self.livemigration = true;
        self.log.info("set migration capabilities");
        let (memory, speed_conf, downtime_conf) = self.state.with(|c| c.remote_live_settings(&job));
        let mut params = Map::new();
        params.insert("operation".into(), json!("migration"));
        params.insert("storages".into(), json!([Value::Null]));
        params.insert("bwlimit".into(), json!(job.bwlimit));
        let reply = self.command("bwlimit", params).await?;
        let bwlimit = reply["bwlimit"]
            .as_f64()
            .or(job.bwlimit)
            .filter(|v| *v > 0.0);
        let speed_conf = speed_conf.map(|s| s * 1024.0);
        let speed = match (bwlimit, speed_conf) {
            (Some(b), Some(s)) => Some(b.min(s)),
            (b, s) => b.or(s),
        };
        if let Some(kib) = speed {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let bytes = (kib * 1024.0) as u64;
            self.log
                .info(&format!("migration speed limit: {}/s", render_bytes(bytes)));
        }
        #[allow(clippy::cast_possible_truncation)]
        let downtime = ((downtime_conf.unwrap_or(0.1) * 1000.0) as i64).min(2_000_000);
        self.log
            .info(&format!("migration downtime limit: {downtime} ms"));
        let cachesize = round_powerof2(memory / 10);
        self.log
            .info(&format!("migration cachesize: {}", render_bytes(cachesize)));
        self.log.info("set migration parameters");
        self.log
            .info(&format!("start migrate command to {migrate_uri}"));
        let mut ws = self.tunnel()?.connect(&local_socket, &addr).await?;
        let _ = ws.send(b"QEVM").await;
        ws.close().await;
        self.log.info(&format!(
            "migration completed, transferred {} VM-state",
            render_bytes(memory)
        ));
        self.log.info("migration status: completed");
        for (ds, _) in &drives {
            self.log.raw([
                format!("drive-{ds}: Completing block job..."),
                format!("drive-{ds}: Completed successfully."),
                format!("drive-{ds}: mirror-job finished"),
            ]);
        }
        self.log.raw([format!(
            "tunnel: done handling forwarded connection from '{local_socket}'"
        )]);
        Ok(())
    }

    /// `phase2_cleanup` after a failed live migration: the instance there
    /// stopped, the volumes there freed (`quit` with `cleanup`).
    async fn phase2_cleanup(&mut self) -> Result<(), String> {
        if !self.errors {
            return Ok(());
        }
        self.log.info("aborting phase 2 - cleanup resources");
        self.log.info("migrate_cancel");
        let job = self.job.clone();
        self.state.with(|c| c.remote_abort(&job, false, 0));
        self.state.changed();
        if let Err(e) = self.command("stop", Map::new()).await {
            self.log.err(&e);
        }
        if let Err(e) = self.finish_tunnel(true).await {
            self.log.err(&e);
        }
        self.livemigration = false;
        Ok(())
    }

    /// `phase3_cleanup` (a VM): the instance there resumed, this one
    /// stopped, the target unlocked, the tunnel closed; with `delete`,
    /// the VM here goes.
    async fn phase3_cleanup(&mut self) -> Result<(), String> {
        if self.job.kind != GuestType::Qemu || self.tunnel.is_none() {
            return Ok(());
        }
        let job = self.job.clone();
        if self.livemigration {
            if !self.nbd.is_empty() {
                self.log
                    .info("stopping NBD storage migration server on target.");
                if let Err(e) = self.command("nbdstop", Map::new()).await {
                    self.log.err(&e);
                    self.errors = true;
                }
            }
            if let Err(e) = self.command("resume", Map::new()).await {
                self.log.err(&e);
                self.errors = true;
            }
        }
        self.state.with(|c| c.remote_stop_local(&job));
        self.state.changed();
        self.command("unlock", Map::new()).await?;
        self.finish_tunnel(false).await?;
        if job.delete {
            let lines = durable(&self.state, |c, _| c.remote_finish(&job));
            self.log.raw(lines);
        }
        Ok(())
    }

    /// `phase1_cleanup`: the guest unlocked here; there, what the
    /// tunnel made is removed (`quit` with `cleanup`).
    async fn phase1_cleanup(&mut self) -> Result<(), String> {
        self.log.info("aborting phase 1 - cleanup resources");
        let job = self.job.clone();
        match job.kind {
            GuestType::Qemu => {
                self.state.with(|c| c.remote_abort(&job, false, 0));
                self.state.changed();
                if let Err(e) = self.finish_tunnel(true).await {
                    self.log.err(&e);
                }
            }
            GuestType::Lxc => {
                for v in self.volumes.clone() {
                    let v = self.volume_map.get(&v).cloned().unwrap_or(v);
                    self.log.err(&format!(
                        "found stale volume copy '{v}' on node '{}'",
                        job.target_node
                    ));
                }
                self.finish_tunnel(true).await?;
            }
        }
        Ok(())
    }

    /// `final_cleanup` (a container): the target unlocked and, after a
    /// restart migration, started; or, when the config did not move, the
    /// container here unlocked and started again.
    async fn final_cleanup(&mut self) -> Result<(), String> {
        if self.job.kind != GuestType::Lxc {
            return Ok(());
        }
        let job = self.job.clone();
        self.log.info("start final cleanup");
        let restart = job.restart && self.running;
        if !self.conf_migrated {
            if restart {
                self.log.info("start container on source node");
            }
            let now_ms = self.log.now_ms();
            durable(&self.state, |c, _| c.remote_abort(&job, restart, now_ms));
            return Ok(());
        }
        if let Err(e) = self.command("unlock", Map::new()).await {
            self.log.err(&format!("Failed to clear migrate lock - {e}"));
        }
        if restart {
            self.log.info("start container on target node");
            self.command("start", Map::new()).await?;
        }
        if job.delete {
            let lines = durable(&self.state, |c, _| c.remote_finish(&job));
            self.log.raw(lines);
        }
        self.finish_tunnel(false).await
    }

    /// `finish_tunnel`: `quit` (with `cleanup`: what the target made goes
    /// too), then the tunnel closed.
    async fn finish_tunnel(&mut self, cleanup: bool) -> Result<(), String> {
        let mut params = Map::new();
        params.insert("cleanup".into(), json!(u8::from(cleanup)));
        let result = match self.tunnel.as_mut() {
            Some(t) => t.command("quit", params).await.map(|_| ()),
            None => Ok(()),
        };
        if let Some(t) = self.tunnel.take() {
            t.ws.close().await;
        }
        result
    }
}

/// `scsi0` → (`scsi`, 0).
fn split_drive_key(key: &str) -> (String, u32) {
    let at = key.find(|c: char| c.is_ascii_digit()).unwrap_or(key.len());
    (key[..at].to_string(), key[at..].parse().unwrap_or(0))
}

/// `round_powerof2` of `QemuMigrate.pm`.
fn round_powerof2(v: u64) -> u64 {
    if v < 2 {
        return 1;
    }
    let bits = 64 - (v - 1).leading_zeros();
    2u64 << (bits - 1)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case(0, 1)]
    #[case(2, 2)]
    #[case(3, 4)]
    #[case(214_748_364, 268_435_456)]
    #[case(268_435_456, 268_435_456)]
    fn powers_of_two_round_up_as_perls_log_does(#[case] v: u64, #[case] want: u64) {
        assert_eq!(round_powerof2(v), want);
    }

    #[rstest]
    #[case("scsi0", ("scsi", 0))]
    #[case("virtio12", ("virtio", 12))]
    fn drive_keys_split(#[case] key: &str, #[case] want: (&str, u32)) {
        assert_eq!(split_drive_key(key), (want.0.to_string(), want.1));
    }

    #[test]
    fn custom_cpu_models_must_match() {
        let local = BTreeMap::from([
            ("flags".to_string(), "+aes;-pcid".to_string()),
            ("reported-model".to_string(), "kvm64".to_string()),
        ]);
        let same = json!({"flags": "-pcid;+aes", "reported-model": "kvm64", "cputype": "custom-x"});
        assert!(check_cpu_model("custom-x", &local, &same).is_ok());
        let other = json!({"flags": "+aes", "reported-model": "kvm64"});
        assert_eq!(
            check_cpu_model("custom-x", &local, &other)
                .expect_err("mismatch")
                .to_string(),
            "CPU custom-x config mismatch for flags: local=+aes;-pcid,remote=+aes"
        );
    }
}
