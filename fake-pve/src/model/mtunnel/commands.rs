//! The tunnel worker's commands that change the guest coming in: its
//! config, its disks (allocated for NBD, or imported from a stream), and
//! its start (qemu-server and pve-container `mtunnel`, pve-guest-common
//! `StorageTunnel.pm`, pve-storage `volume_import_start`).

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Map, Value, json};

use super::GuestType;
use super::parse_config_text;
use super::target::{Command, Import, check_storage_access_migrate, text, truthy};
use crate::model::access::AuthId;
use crate::model::cluster::Cluster;
use crate::model::lxc::LxcOp;
use crate::model::qemu::{QemuOp, QmpStatus};
use crate::model::storage::{VolumeKind, path_based};
use crate::model::{Error, Result};

/// The image formats a storage type keeps (`get_formats`'s `valid`).
pub(super) fn valid_formats(storage_type: &str) -> &'static [&'static str] {
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

impl Cluster {
    /// `config`: the source's config, adapted to this cluster, written
    /// as `update_vm_api` (a VM) or `update_pct_config` (a container)
    /// writes it, checked for the session's user; then locked `migrate`.
    pub(super) fn mtunnel_config(
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
    pub(super) fn mtunnel_disk(
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
    pub(super) fn mtunnel_disk_import(
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
    pub(super) fn mtunnel_query_import(
        &mut self,
        socket: &str,
        log: &mut Vec<String>,
    ) -> Result<Value> {
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
    pub(super) fn mtunnel_start(
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
pub(super) fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}
