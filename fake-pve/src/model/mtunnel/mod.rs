//! Remote migration: a guest moved to another cluster over a websocket
//! tunnel (qemu-server `API2/Qemu.pm` `remote_migrate_vm`, `mtunnel`,
//! `mtunnelwebsocket`, `QemuMigrate.pm`; pve-container `API2/LXC.pm`,
//! `LXC/Migrate.pm`; pve-guest-common `Tunnel.pm`, `StorageTunnel.pm`,
//! `AbstractMigrate.pm`; pve-storage `volume_import_start`).
//!
//! The model's two halves of it:
//!
//! - the **target** ([`target`]): `mtunnel` creates the guest's empty
//!   config locked `create` and starts the `qmtunnel`/`vzmtunnel` worker,
//!   a [`Session`] that answers the tunnel's JSON commands (`version`,
//!   `bwlimit`, `disk-import`, `query-disk-import`, `disk`, `config`,
//!   `start`, `resume`, `ticket`, `unlock`, `quit`, ...) and takes the
//!   data sent over the sockets it hands out;
//! - the **source** ([`source`]): what the migration task reads and
//!   changes of the local guest (the checks, the scan of its volumes, the
//!   config sent, what it leaves behind).
//!
//! The network between the two (HTTPS with a pinned fingerprint, the
//! websockets) is the wire's (`crate::remote`).

mod commands;
mod source;
mod target;

use std::collections::BTreeMap;

// Some are named outside the crate only (fake-pve's own tests).
#[cfg_attr(not(feature = "internals"), allow(unused_imports))]
pub use source::{
    LocalVolume, NbdDrive, Outgoing, Prepared, RemoteConf, Scan, VolumeExport, duration,
    finished_line, mapped_lines,
};
#[cfg_attr(not(feature = "internals"), allow(unused_imports))]
pub use target::{Command, Connection, OpenRequest, Reply, Session, Tunnels};

use super::access::AuthId;
use super::{Error, Result};

/// The tunnel protocol's version (`$WS_TUNNEL_VERSION` of
/// `QemuMigrate.pm` and `LXC/Migrate.pm`): what `version` answers, with
/// age 0.
pub const WS_TUNNEL_VERSION: u64 = 2;

/// How long the tunnel worker waits for its connection, milliseconds
/// (`run_with_timeout(300, ...accept())`).
pub const ACCEPT_TIMEOUT_MS: u64 = 300_000;

/// Which kind of guest moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GuestType {
    /// A VM (`/nodes/{node}/qemu/...`).
    Qemu,
    /// A container (`/nodes/{node}/lxc/...`).
    Lxc,
}

impl GuestType {
    /// `qemu` or `lxc`, as the API's paths name them.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Qemu => "qemu",
            Self::Lxc => "lxc",
        }
    }

    /// `VM` or `CT`.
    pub fn noun(self) -> &'static str {
        match self {
            Self::Qemu => "VM",
            Self::Lxc => "CT",
        }
    }

    /// The target's worker: `qmtunnel` or `vzmtunnel`.
    pub fn tunnel_task(self) -> &'static str {
        match self {
            Self::Qemu => "qmtunnel",
            Self::Lxc => "vzmtunnel",
        }
    }

    /// The source's worker: `qmigrate` or `vzmigrate`.
    pub fn migrate_task(self) -> &'static str {
        match self {
            Self::Qemu => "qmigrate",
            Self::Lxc => "vzmigrate",
        }
    }

    /// The socket the tunnel worker listens on.
    pub fn control_socket(self, vmid: u32) -> String {
        match self {
            Self::Qemu => format!("/run/qemu-server/{vmid}.mtunnel"),
            Self::Lxc => format!("/run/pve/ct-{vmid}.mtunnel"),
        }
    }

    /// The socket a disk import listens on (`disk-import`'s `unix`).
    pub fn storage_socket(self, vmid: u32) -> String {
        match self {
            Self::Qemu => format!("/run/qemu-server/{vmid}.storage"),
            Self::Lxc => format!("/run/pve/ct-{vmid}.storage"),
        }
    }

    /// The content a volume of this kind needs on a storage.
    fn content(self) -> &'static str {
        match self {
            Self::Qemu => "images",
            Self::Lxc => "rootdir",
        }
    }
}

/// A `proxmox-remote` property string: where the target cluster's API
/// is and how to log in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `host`.
    pub host: String,
    /// `port` (8006 when not given).
    pub port: u16,
    /// `apitoken`: the whole token, `PVEAPIToken=user@realm!name=secret`.
    pub apitoken: String,
    /// `fingerprint`: the SHA-256 fingerprint of the target's
    /// certificate, upper-cased as `cached_fingerprints` keeps it.
    pub fingerprint: Option<String>,
}

impl Endpoint {
    /// Parses a `proxmox-remote` value (the schema has checked its form).
    ///
    /// # Errors
    /// A missing `host` or `apitoken`, a port out of range.
    pub fn parse(value: &str) -> Result<Self> {
        let mut host = None;
        let mut port = None;
        let mut apitoken = None;
        let mut fingerprint = None;
        for part in value.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or(("", part));
            match k {
                "host" => host = Some(v.to_string()),
                "port" => {
                    port = Some(v.parse::<u16>().map_err(|_| {
                        Error::invalid("target-endpoint", format!("invalid port '{v}'"))
                    })?);
                }
                "apitoken" => apitoken = Some(v.to_string()),
                "fingerprint" => fingerprint = Some(v.to_uppercase()),
                other => {
                    return Err(Error::invalid(
                        "target-endpoint",
                        format!("invalid format - unknown key '{other}'"),
                    ));
                }
            }
        }
        let missing = |k: &str| {
            Error::invalid(
                "target-endpoint",
                format!("invalid format - property '{k}' is missing"),
            )
        };
        Ok(Self {
            host: host.ok_or_else(|| missing("host"))?,
            port: port.unwrap_or(8006),
            apitoken: apitoken.ok_or_else(|| missing("apitoken"))?,
            fingerprint,
        })
    }

    /// The `Authorization` header of the API calls: the token as given
    /// when it names its scheme (`PVEAPIToken=...`), else with
    /// `PVEAPIToken=` in front (`PVE::APIClient::LWP`).
    pub fn authorization(&self) -> String {
        let t = &self.apitoken;
        let named = {
            let word = t
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(t.len());
            word > 0 && t[word..].starts_with(['=', ' '])
        };
        if named {
            t.clone()
        } else {
            format!("PVEAPIToken={t}")
        }
    }
}

/// `PVE::Storage::get_bandwidth_limit`: the limit (KiB/s) of an
/// `operation` over `storages` for `who`, `requested` asked for (an
/// override). A storage's `bwlimit` takes precedence over
/// `datacenter.cfg`'s; who may change a limit (Datastore.Allocate on
/// the storage, Sys.Modify on `/` for the datacenter's) is not held to
/// it.
pub(crate) fn bandwidth_limit(
    storage: &super::storage::Storages,
    datacenter: &super::datacenter::Datacenter,
    access: &super::access::Access,
    who: Option<&AuthId>,
    operation: &str,
    storages: &[String],
    requested: Option<f64>,
) -> Option<f64> {
    let mut limit = requested;
    let mut use_global = false;
    let apply = |bwlimit: Option<&str>, limit: &mut Option<f64>, use_global: &mut bool| {
        let found = bwlimit.and_then(|text| {
            let parts: BTreeMap<&str, &str> =
                text.split(',').filter_map(|p| p.split_once('=')).collect();
            parts
                .get(operation)
                .or_else(|| parts.get("default"))
                .and_then(|v| v.parse::<f64>().ok())
        });
        match found {
            Some(l) => {
                if limit.is_none_or(|o| o == 0.0 || l < o) {
                    *limit = Some(l);
                }
            }
            None => *use_global = true,
        }
    };
    let who = requested.and(who);
    if !storages.is_empty() {
        if who.is_some_and(|w| access.has_priv(w, "/storage", "Datastore.Allocate")) {
            return limit;
        }
        let mut done: Vec<&String> = Vec::new();
        for sid in storages {
            if done.contains(&sid) {
                continue;
            }
            done.push(sid);
            let may_change = who.is_some_and(|w| {
                access.has_priv(w, &format!("/storage/{sid}"), "Datastore.Allocate")
            });
            if !may_change {
                let bw = storage.find(sid).and_then(|s| s.options.get("bwlimit"));
                apply(bw.map(String::as_str), &mut limit, &mut use_global);
            }
        }
        if !use_global {
            return limit;
        }
    }
    if who.is_none_or(|w| !access.has_priv(w, "/", "Sys.Modify")) {
        apply(datacenter.get("bwlimit"), &mut limit, &mut use_global);
    }
    limit
}

/// An error as Perl prints a `PVE::Exception` (`stringify`): the HTTP
/// code in front of those raised with one, a parameter error's
/// parameters one per line after it; always ending with a newline.
pub fn exception_text(e: &Error) -> String {
    let mut out = match e {
        Error::Forbidden(m) => format!("403 {m}"),
        Error::Unauthorized(m) => format!("401 {m}"),
        Error::BadRequest(m) => format!("400 {m}"),
        Error::HttpNotFound(m) => format!("404 {m}"),
        Error::Invalid(errors) => {
            let mut s = "400 Parameter verification failed.\n".to_string();
            for (k, v) in errors {
                s.push_str(&format!("{k}: {}\n", v.trim_end()));
            }
            return s;
        }
        other => other.to_string(),
    };
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The main section of a guest config file as `write_vm_config` and
/// `write_pct_config` write it: the description from its `#` lines, then
/// `key: value` lines, up to the first `[section]`.
pub fn parse_config_text(text: &str) -> BTreeMap<String, String> {
    let mut conf = BTreeMap::new();
    let mut description: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with('[') {
            break;
        }
        if let Some(d) = line.strip_prefix('#') {
            description.push(super::percent_decoded(d).into_owned());
            continue;
        }
        if let Some((k, v)) = line.split_once(':') {
            let k = k.trim();
            if !k.is_empty() {
                conf.insert(k.to_string(), v.trim().to_string());
            }
        }
    }
    if !description.is_empty() {
        conf.insert("description".into(), description.join("\n"));
    }
    conf
}

/// A config's volumes named by a key PVE moves with it: a VM's drives
/// and unused disks, a container's mount points and unused volumes.
fn is_volume_key(kind: GuestType, key: &str) -> bool {
    match kind {
        GuestType::Qemu => key.starts_with("unused") || super::qemu::is_drive_key(key),
        GuestType::Lxc => super::lxc::schema::is_volume_key(key),
    }
}

/// The volume a config value names (a drive's `file`, a mount point's
/// volume, an unused volume).
fn volume_of(kind: GuestType, key: &str, value: &str) -> Option<String> {
    if key.starts_with("unused") {
        return Some(value.to_string());
    }
    match kind {
        GuestType::Qemu => Some(super::qemu::drive_file(value).to_string()),
        GuestType::Lxc => super::lxc::schema::mp_volume(value).map(str::to_string),
    }
    .filter(|v| !v.is_empty())
}

/// A config value with its volume replaced by `new`.
fn with_volume(value: &str, old: &str, new: &str) -> String {
    if value == old {
        return new.to_string();
    }
    if let Some(rest) = value.strip_prefix(old)
        && rest.starts_with(',')
    {
        return format!("{new}{rest}");
    }
    value
        .split(',')
        .map(|p| match p.split_once('=') {
            Some((k, v)) if v == old && (k == "file" || k == "volume") => format!("{k}={new}"),
            _ => p.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `map_bridges`: each NIC's bridge by the map; answers the NICs whose
/// bridge changes as `(nic, from, to)`, in NIC order.
fn map_bridges(
    conf: &mut BTreeMap<String, String>,
    map: &super::qemu::StorageMap,
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (k, v) in conf.iter_mut() {
        let is_nic = k
            .strip_prefix("net")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
        if !is_nic {
            continue;
        }
        let Some(from) = v
            .split(',')
            .find_map(|p| p.strip_prefix("bridge="))
            .map(str::to_string)
        else {
            continue;
        };
        let to = map.target(&from).to_string();
        *v = v
            .split(',')
            .map(|p| {
                if p.starts_with("bridge=") {
                    format!("bridge={to}")
                } else {
                    p.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        out.push((k.clone(), from, to));
    }
    out
}
