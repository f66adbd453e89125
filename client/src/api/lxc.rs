//! `/nodes/{node}/lxc`: containers, their configuration and pending
//! changes, power state, snapshots, templates and clones, volumes,
//! migration, and the appliance index (`/nodes/{node}/aplinfo`) their
//! OS templates come from.
//!
//! Calls that run a task answer its [`Upid`]; each has an `*_and_wait`
//! variant that waits with [`crate::api::tasks::Tasks::wait`] and answers
//! the final [`TaskStatus`] (a task that fails is an
//! [`Error::TaskFailed`](crate::Error::TaskFailed) with PVE's exit status,
//! such as `CT 100 already running`).
//!
//! ```
//! use pve_client::api::lxc::{CreateCt, UpdateCt};
//!
//! let create = CreateCt::new(200, "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst")
//!     .hostname("web-1")
//!     .memory(1024)
//!     .rootfs("local-lvm:8")
//!     .net(0, "name=eth0,bridge=vmbr0,ip=dhcp")
//!     .password("s3cret-pw");
//! assert_eq!(create.settings()["rootfs"], "local-lvm:8");
//! let update = UpdateCt::new().cores(2).delete("swap").digest("0123abcd");
//! # let _ = update;
//! ```

use std::collections::BTreeMap;

use reqwest::Method;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::qemu::{Feature, PendingItem, SnapshotListItem, VmFeature};
use super::seg;
use super::tasks::{TaskStatus, Upid};
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::{ParamValue, Params};

/// The `/nodes/{node}/lxc` area; see [`Client::lxc`].
#[derive(Debug, Clone, Copy)]
pub struct Lxc<'a> {
    client: &'a Client,
}

impl Client {
    /// The container calls.
    pub fn lxc(&self) -> Lxc<'_> {
        Lxc { client: self }
    }
}

/// A container's entry in `GET /nodes/{node}/lxc` (`vmlist`), and what
/// `GET .../status/current` (`vm_status`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtStatus {
    /// The VM ID.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub vmid: u64,
    /// `running` or `stopped`.
    pub status: String,
    /// The host name (`CT<vmid>` when none is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The config lock (`backup`, `create`, `snapshot`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// Whether it is a template.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub template: Option<bool>,
    /// Tags, `;`-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<String>,
    /// CPUs (`cores`, else `cpulimit`, else the host's).
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpus: Option<f64>,
    /// Memory in use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub mem: Option<u64>,
    /// Memory, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxmem: Option<u64>,
    /// Swap, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxswap: Option<u64>,
    /// Root file system size, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxdisk: Option<u64>,
    /// Seconds since start.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub uptime: Option<u64>,
    /// The init process ID, while running.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub pid: Option<u64>,
    /// Anything else PVE sent (`type`, `netin`, `diskread`, `ha`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CtStatus {
    /// Whether the container runs.
    pub fn is_running(&self) -> bool {
        self.status == "running"
    }
}

/// A container configuration (`GET .../config`, `vm_config`; also a
/// snapshot's): the usual keys typed, every key in [`CtConfig::raw`] as
/// PVE sent it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CtConfig {
    /// The SHA-1 of the config file, for optimistic updates.
    pub digest: Option<String>,
    /// The host name.
    pub hostname: Option<String>,
    /// Memory in MiB.
    pub memory: Option<u64>,
    /// Swap in MiB.
    pub swap: Option<u64>,
    /// Cores.
    pub cores: Option<u32>,
    /// The OS type PVE detected (`debian`, `alpine`, ...).
    pub ostype: Option<String>,
    /// `amd64`, `arm64`, ...
    pub arch: Option<String>,
    /// The root file system (`local-lvm:vm-100-disk-0,size=8G`).
    pub rootfs: Option<String>,
    /// Whether it is unprivileged.
    pub unprivileged: bool,
    /// Whether it is a template.
    pub template: bool,
    /// The config lock.
    pub lock: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Network devices, `net[n]`, by `n` (`name=eth0,bridge=vmbr0,...`).
    pub nets: BTreeMap<u32, String>,
    /// Mount points, `mp[n]`, by `n`.
    pub mounts: BTreeMap<u32, String>,
    /// Every key as PVE sent it (the typed ones too).
    pub raw: Map<String, Value>,
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "1" } else { "0" }.into()),
        _ => None,
    }
}

fn indexed(key: &str, prefix: &str) -> Option<u32> {
    let n = key.strip_prefix(prefix)?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

impl CtConfig {
    /// Reads PVE's JSON object; never fails on a value it cannot type.
    pub fn from_map(map: Map<String, Value>) -> Self {
        let mut c = Self::default();
        for (k, v) in &map {
            let t = text(v);
            match k.as_str() {
                "digest" => c.digest = t,
                "hostname" => c.hostname = t,
                "memory" => c.memory = t.and_then(|s| s.parse().ok()),
                "swap" => c.swap = t.and_then(|s| s.parse().ok()),
                "cores" => c.cores = t.and_then(|s| s.parse().ok()),
                "ostype" => c.ostype = t,
                "arch" => c.arch = t,
                "rootfs" => c.rootfs = t,
                "unprivileged" => c.unprivileged = t.as_deref() == Some("1"),
                "template" => c.template = t.as_deref() == Some("1"),
                "lock" => c.lock = t,
                "tags" => {
                    c.tags = t
                        .unwrap_or_default()
                        .split([';', ',', ' '])
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect();
                }
                _ => {
                    if let (Some(n), Some(t)) = (indexed(k, "net"), t.clone()) {
                        c.nets.insert(n, t);
                    } else if let (Some(n), Some(t)) = (indexed(k, "mp"), t) {
                        c.mounts.insert(n, t);
                    }
                }
            }
        }
        c.raw = map;
        c
    }

    /// A key as text, as PVE sent it.
    pub fn get(&self, key: &str) -> Option<String> {
        self.raw.get(key).and_then(text)
    }
}

impl<'de> Deserialize<'de> for CtConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Map::deserialize(d).map(Self::from_map)
    }
}

/// Config keys of a create or an update, as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CtSettings(BTreeMap<String, String>);

impl std::ops::Index<&str> for CtSettings {
    type Output = String;
    fn index(&self, key: &str) -> &String {
        &self.0[key]
    }
}

macro_rules! settings_setters {
    () => {
        /// Sets any key.
        #[must_use]
        pub fn set(mut self, key: impl Into<String>, value: impl ParamValue) -> Self {
            self.settings.0.insert(key.into(), value.to_param());
            self
        }

        /// `hostname`.
        #[must_use]
        pub fn hostname(self, name: &str) -> Self {
            self.set("hostname", name)
        }

        /// `memory` in MiB.
        #[must_use]
        pub fn memory(self, mib: u64) -> Self {
            self.set("memory", mib)
        }

        /// `swap` in MiB.
        #[must_use]
        pub fn swap(self, mib: u64) -> Self {
            self.set("swap", mib)
        }

        /// `cores`.
        #[must_use]
        pub fn cores(self, n: u32) -> Self {
            self.set("cores", n)
        }

        /// `rootfs`: `STORAGE:GiB` for a new volume, or a volume.
        #[must_use]
        pub fn rootfs(self, value: &str) -> Self {
            self.set("rootfs", value)
        }

        /// `mp[n]`: `STORAGE:GiB,mp=/path` for a new volume.
        #[must_use]
        pub fn mount(self, n: u32, value: &str) -> Self {
            self.set(format!("mp{n}"), value)
        }

        /// `net[n]`: `name=eth0,bridge=vmbr0,ip=dhcp`.
        #[must_use]
        pub fn net(self, n: u32, value: &str) -> Self {
            self.set(format!("net{n}"), value)
        }

        /// `tags`.
        #[must_use]
        pub fn tags(self, tags: &[&str]) -> Self {
            self.set("tags", tags.join(";"))
        }

        /// `onboot`.
        #[must_use]
        pub fn onboot(self, yes: bool) -> Self {
            self.set("onboot", yes)
        }

        /// `features` (`nesting=1,keyctl=1`).
        #[must_use]
        pub fn features(self, features: &str) -> Self {
            self.set("features", features)
        }

        /// The keys set so far.
        pub fn settings(&self) -> &CtSettings {
            &self.settings
        }
    };
}

/// The request of `create_vm`: a container from an OS template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateCt {
    vmid: u32,
    ostemplate: String,
    settings: CtSettings,
    storage: Option<String>,
    password: Option<String>,
    ssh_public_keys: Option<String>,
    unprivileged: Option<bool>,
    start: Option<bool>,
    pool: Option<String>,
    restore: Option<bool>,
    force: Option<bool>,
    unique: Option<bool>,
}

impl CreateCt {
    /// A container `vmid` restored from the backup volume `archive`
    /// (`local:backup/vzdump-lxc-...`): the task is a `vzrestore`.
    pub fn restore(vmid: u32, archive: &str) -> Self {
        Self {
            restore: Some(true),
            ..Self::new(vmid, archive)
        }
    }

    /// Adds it to a resource pool.
    #[must_use]
    pub fn pool(mut self, pool: &str) -> Self {
        self.pool = Some(pool.to_string());
        self
    }

    /// With [`CreateCt::restore`]: overwrites an existing, stopped
    /// container.
    #[must_use]
    pub fn force(mut self, yes: bool) -> Self {
        self.force = Some(yes);
        self
    }

    /// With [`CreateCt::restore`]: new MAC addresses.
    #[must_use]
    pub fn unique(mut self, yes: bool) -> Self {
        self.unique = Some(yes);
        self
    }

    /// A container `vmid` from the template volume `ostemplate`.
    pub fn new(vmid: u32, ostemplate: &str) -> Self {
        Self {
            vmid,
            ostemplate: ostemplate.to_string(),
            ..Self::default()
        }
    }

    settings_setters!();

    /// The default storage (`local` when not given).
    #[must_use]
    pub fn storage(mut self, storage: &str) -> Self {
        self.storage = Some(storage.to_string());
        self
    }

    /// root's password inside the container (never shown back).
    #[must_use]
    pub fn password(mut self, pw: &str) -> Self {
        self.password = Some(pw.to_string());
        self
    }

    /// root's authorized SSH keys, one a line.
    #[must_use]
    pub fn ssh_public_keys(mut self, keys: &str) -> Self {
        self.ssh_public_keys = Some(keys.to_string());
        self
    }

    /// `unprivileged` (the default since PVE 9.0).
    #[must_use]
    pub fn unprivileged(mut self, yes: bool) -> Self {
        self.unprivileged = Some(yes);
        self
    }

    /// Start it when the create task ends.
    #[must_use]
    pub fn start(mut self, yes: bool) -> Self {
        self.start = Some(yes);
        self
    }

    fn params(&self) -> Params {
        let mut p = Params::new()
            .set("vmid", self.vmid)
            .set("ostemplate", self.ostemplate.as_str())
            .opt("storage", self.storage.as_deref())
            .opt("password", self.password.as_deref())
            .opt("ssh-public-keys", self.ssh_public_keys.as_deref())
            .opt("unprivileged", self.unprivileged)
            .opt("start", self.start)
            .opt("pool", self.pool.as_deref())
            .opt("restore", self.restore)
            .opt("force", self.force)
            .opt("unique", self.unique);
        for (k, v) in &self.settings.0 {
            p.push(k.clone(), v.as_str());
        }
        p
    }
}

/// The request of `update_vm`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateCt {
    settings: CtSettings,
    delete: Vec<String>,
    revert: Vec<String>,
    digest: Option<String>,
}

impl UpdateCt {
    /// An empty update.
    pub fn new() -> Self {
        Self::default()
    }

    settings_setters!();

    /// Deletes `key` (pending on a running container where PVE keeps it).
    #[must_use]
    pub fn delete(mut self, key: &str) -> Self {
        self.delete.push(key.to_string());
        self
    }

    /// Drops the pending change of `key`.
    #[must_use]
    pub fn revert(mut self, key: &str) -> Self {
        self.revert.push(key.to_string());
        self
    }

    /// Refuses the update when the config changed since this digest.
    #[must_use]
    pub fn digest(mut self, digest: impl Into<String>) -> Self {
        self.digest = Some(digest.into());
        self
    }

    fn params(&self) -> Params {
        let mut p = Params::new().opt("digest", self.digest.as_deref());
        if !self.delete.is_empty() {
            p = p.set("delete", self.delete.join(","));
        }
        if !self.revert.is_empty() {
            p = p.set("revert", self.revert.join(","));
        }
        for (k, v) in &self.settings.0 {
            p.push(k.clone(), v.as_str());
        }
        p
    }
}

/// The request of `clone_vm`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloneCt {
    /// The new VMID.
    pub newid: u32,
    /// Full copy (default: unless the source is a template).
    pub full: Option<bool>,
    /// The host name of the clone.
    pub hostname: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// The storage of a full copy.
    pub storage: Option<String>,
    /// Clone from this snapshot.
    pub snapname: Option<String>,
    /// Move the clone to this node (shared storage only).
    pub target: Option<String>,
}

impl CloneCt {
    fn params(&self) -> Params {
        Params::new()
            .set("newid", self.newid)
            .opt("full", self.full)
            .opt("hostname", self.hostname.as_deref())
            .opt("description", self.description.as_deref())
            .opt("storage", self.storage.as_deref())
            .opt("snapname", self.snapname.as_deref())
            .opt("target", self.target.as_deref())
    }
}

/// One interface of `GET .../interfaces` (`ip`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtInterface {
    /// The name inside the container (`eth0`).
    pub name: String,
    /// The MAC address.
    #[serde(rename = "hardware-address", default)]
    pub hardware_address: String,
    /// The first IPv4 address with its prefix (`10.0.0.2/24`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inet: Option<String>,
    /// The first IPv6 address with its prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inet6: Option<String>,
    /// Every address.
    #[serde(rename = "ip-addresses", default)]
    pub ip_addresses: Vec<Value>,
}

/// One appliance of `GET /nodes/{node}/aplinfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Appliance {
    /// The file name to download (`debian-12-standard_12.7-1_amd64.tar.zst`).
    pub template: String,
    /// `lxc`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The OS.
    #[serde(default)]
    pub os: String,
    /// A one-line description.
    #[serde(default)]
    pub headline: String,
    /// Anything else PVE sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn ct_path(node: &str, vmid: u32, tail: &str) -> String {
    format!("/nodes/{}/lxc/{vmid}{tail}", seg(node))
}

fn snap_path(node: &str, vmid: u32, snap: &str, tail: &str) -> String {
    ct_path(node, vmid, &format!("/snapshot/{}{tail}", seg(snap)))
}

/// The generated `*_and_wait` variants of task-returning calls.
macro_rules! and_wait {
    ($(#[$doc:meta] $wait:ident => $call:ident($($arg:ident: $t:ty),*);)*) => {$(
        #[$doc]
        ///
        /// # Errors
        /// As the call, and [`crate::api::tasks::Tasks::wait`]: a failed
        /// task is an [`Error::TaskFailed`](crate::Error::TaskFailed)
        /// with PVE's exit status.
        pub async fn $wait(&self, $($arg: $t),*) -> Result<TaskStatus> {
            let upid = self.$call($($arg),*).await?;
            self.client.tasks().wait(&upid).await
        }
    )*};
}

impl Lxc<'_> {
    async fn task(&self, method: Method, path: &str, params: &Params) -> Result<Upid> {
        self.client.call(method, path, params).await
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str, params: &Params) -> Result<T> {
        self.client.call(Method::GET, path, params).await
    }

    /// `GET /nodes/{node}/lxc` (`vmlist`): the containers the caller may
    /// audit.
    ///
    /// # Errors
    /// As any call.
    pub async fn vmlist(&self, node: &str) -> Result<Vec<CtStatus>> {
        self.get(&format!("/nodes/{}/lxc", seg(node)), &Params::new())
            .await
    }

    /// `POST /nodes/{node}/lxc` (`create_vm`): a `vzcreate` task.
    ///
    /// # Errors
    /// `CT 100 already exists on node 'pve'`; `storage 'local' does not
    /// support container directories`; in the task, `unable to create CT
    /// 100 - can't find file '...'` for a missing template.
    pub async fn create_vm(&self, node: &str, req: &CreateCt) -> Result<Upid> {
        let path = format!("/nodes/{}/lxc", seg(node));
        self.task(Method::POST, &path, &req.params()).await
    }

    /// `GET .../config` (`vm_config`): pending values applied unless
    /// `current`.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for an unknown container
    /// (`Configuration file 'nodes/pve/lxc/999.conf' does not exist`).
    pub async fn vm_config(&self, node: &str, vmid: u32, current: bool) -> Result<CtConfig> {
        let params = Params::new().opt("current", current.then_some(true));
        self.get(&ct_path(node, vmid, "/config"), &params).await
    }

    /// `PUT .../config` (`update_vm`): applies at once on a stopped
    /// container; a running one takes what it can and keeps the rest
    /// pending.
    ///
    /// # Errors
    /// `detected modified configuration - file changed by other user? Try
    /// again.` for a stale digest; `CT is locked (...)`.
    pub async fn update_vm(&self, node: &str, vmid: u32, req: &UpdateCt) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::PUT, &ct_path(node, vmid, "/config"), &req.params())
            .await?;
        Ok(())
    }

    /// `GET .../pending` (`vm_pending`).
    ///
    /// # Errors
    /// As [`Lxc::vm_config`].
    pub async fn vm_pending(&self, node: &str, vmid: u32) -> Result<Vec<PendingItem>> {
        self.get(&ct_path(node, vmid, "/pending"), &Params::new())
            .await
    }

    /// `GET .../status/current` (`vm_status`).
    ///
    /// # Errors
    /// As [`Lxc::vm_config`].
    pub async fn vm_status(&self, node: &str, vmid: u32) -> Result<CtStatus> {
        self.get(&ct_path(node, vmid, "/status/current"), &Params::new())
            .await
    }

    /// `POST .../status/start` (`vm_start`): a `vzstart` task.
    ///
    /// # Errors
    /// `CT 100 already running`.
    pub async fn vm_start(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/start"),
            &Params::new(),
        )
        .await
    }

    /// `POST .../status/stop` (`vm_stop`): a `vzstop` task (hard stop).
    ///
    /// # Errors
    /// `CT 100 not running`.
    pub async fn vm_stop(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/stop"),
            &Params::new(),
        )
        .await
    }

    /// `POST .../status/shutdown` (`vm_shutdown`): a `vzshutdown` task;
    /// `force_stop` kills it when it does not stop within `timeout`.
    ///
    /// # Errors
    /// `CT 100 not running`.
    pub async fn vm_shutdown(
        &self,
        node: &str,
        vmid: u32,
        timeout: Option<u32>,
        force_stop: bool,
    ) -> Result<Upid> {
        let params = Params::new()
            .opt("timeout", timeout)
            .opt("forceStop", force_stop.then_some(true));
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/shutdown"),
            &params,
        )
        .await
    }

    /// `POST .../status/reboot` (`vm_reboot`): a `vzreboot` task.
    ///
    /// # Errors
    /// `VM 100 not running` (PVE's words) for a stopped container.
    pub async fn vm_reboot(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/reboot"),
            &Params::new(),
        )
        .await
    }

    /// `POST .../status/suspend` (`vm_suspend`): a `vzsuspend` task.
    ///
    /// # Errors
    /// `CT 100 not running`.
    pub async fn vm_suspend(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/suspend"),
            &Params::new(),
        )
        .await
    }

    /// `POST .../status/resume` (`vm_resume`): a `vzresume` task.
    ///
    /// # Errors
    /// `CT 100 already running`.
    pub async fn vm_resume(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/resume"),
            &Params::new(),
        )
        .await
    }

    /// `DELETE /nodes/{node}/lxc/{vmid}` (`destroy_vm`): a `vzdestroy`
    /// task.
    ///
    /// # Errors
    /// `can't remove CT 100 - protection mode enabled`; `unable to
    /// destroy CT 100 - container is running` without `force`.
    pub async fn destroy_vm(
        &self,
        node: &str,
        vmid: u32,
        purge: bool,
        force: bool,
    ) -> Result<Upid> {
        let params = Params::new()
            .opt("purge", purge.then_some(true))
            .opt("force", force.then_some(true));
        self.task(Method::DELETE, &ct_path(node, vmid, ""), &params)
            .await
    }

    /// `POST .../clone` (`clone_vm`): a `vzclone` task.
    ///
    /// # Errors
    /// `parameter 'storage' not allowed for linked clones`; `Full clone
    /// of a running container is only possible from a snapshot`.
    pub async fn clone_vm(&self, node: &str, vmid: u32, req: &CloneCt) -> Result<Upid> {
        self.task(Method::POST, &ct_path(node, vmid, "/clone"), &req.params())
            .await
    }

    /// `POST .../template` (`template`): PVE forks a `vztemplate` task
    /// but answers null; the config says `template: 1` once it ends.
    ///
    /// # Errors
    /// `you can't convert a CT to template if the CT is running`.
    pub async fn template(&self, node: &str, vmid: u32) -> Result<()> {
        let _: Value = self
            .client
            .call(
                Method::POST,
                &ct_path(node, vmid, "/template"),
                &Params::new(),
            )
            .await?;
        Ok(())
    }

    /// `GET .../snapshot` (`list`): the snapshots, then `current`.
    ///
    /// # Errors
    /// As [`Lxc::vm_config`].
    pub async fn list(&self, node: &str, vmid: u32) -> Result<Vec<SnapshotListItem>> {
        self.get(&ct_path(node, vmid, "/snapshot"), &Params::new())
            .await
    }

    /// `POST .../snapshot` (`snapshot`): a `vzsnapshot` task.
    ///
    /// # Errors
    /// `snapshot name 'x' already used` (in the task).
    pub async fn snapshot(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
        description: Option<&str>,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("snapname", snapname)
            .opt("description", description);
        self.task(Method::POST, &ct_path(node, vmid, "/snapshot"), &params)
            .await
    }

    /// `GET .../snapshot/{snapname}/config` (`get_snapshot_config`).
    ///
    /// # Errors
    /// `snapshot 'x' does not exist`.
    pub async fn get_snapshot_config(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
    ) -> Result<CtConfig> {
        self.get(&snap_path(node, vmid, snapname, "/config"), &Params::new())
            .await
    }

    /// `POST .../snapshot/{snapname}/rollback` (`rollback`): a
    /// `vzrollback` task.
    ///
    /// # Errors
    /// `snapshot 'x' does not exist` (in the task).
    pub async fn rollback(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
        start: bool,
    ) -> Result<Upid> {
        let params = Params::new().opt("start", start.then_some(true));
        self.task(
            Method::POST,
            &snap_path(node, vmid, snapname, "/rollback"),
            &params,
        )
        .await
    }

    /// `DELETE .../snapshot/{snapname}` (`delsnapshot`): a
    /// `vzdelsnapshot` task.
    ///
    /// # Errors
    /// `snapshot 'x' does not exist` (in the task).
    pub async fn delsnapshot(&self, node: &str, vmid: u32, snapname: &str) -> Result<Upid> {
        self.task(
            Method::DELETE,
            &snap_path(node, vmid, snapname, ""),
            &Params::new(),
        )
        .await
    }

    /// `PUT .../resize` (`resize_vm`): a `resize` task; `size` is `+N`
    /// or absolute (`10G`).
    ///
    /// # Errors
    /// `unable to shrink disk size`; `disk is already at specified size`.
    pub async fn resize_vm(&self, node: &str, vmid: u32, disk: &str, size: &str) -> Result<Upid> {
        let params = Params::new().set("disk", disk).set("size", size);
        self.task(Method::PUT, &ct_path(node, vmid, "/resize"), &params)
            .await
    }

    /// `POST .../move_volume` (`move_volume`) to another storage: a
    /// `move_volume` task; the source stays as `unusedN` unless `delete`.
    ///
    /// # Errors
    /// `cannot move volumes of a running container`.
    pub async fn move_volume(
        &self,
        node: &str,
        vmid: u32,
        volume: &str,
        storage: &str,
        delete: bool,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("volume", volume)
            .set("storage", storage)
            .opt("delete", delete.then_some(true));
        self.task(Method::POST, &ct_path(node, vmid, "/move_volume"), &params)
            .await
    }

    /// `POST .../move_volume` (`move_volume`) with `target-vmid`: the
    /// volume goes to another container of the node (as `target_volume`,
    /// default the same key); a `move_volume` task.
    ///
    /// # Errors
    /// `Cannot move to/from 'rootfs'`, `Target volume key 'mp0' is
    /// already in use for container '301'`, ...
    pub async fn move_volume_to_ct(
        &self,
        node: &str,
        vmid: u32,
        volume: &str,
        target_vmid: u32,
        target_volume: Option<&str>,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("volume", volume)
            .set("target-vmid", target_vmid)
            .opt("target-volume", target_volume);
        self.task(Method::POST, &ct_path(node, vmid, "/move_volume"), &params)
            .await
    }

    /// `POST .../migrate` (`migrate_vm`): a `vzmigrate` task; `restart`
    /// shuts a running container down and starts it on the target.
    ///
    /// # Errors
    /// `can't migrate running container without --online or --restart`.
    pub async fn migrate_vm(
        &self,
        node: &str,
        vmid: u32,
        target: &str,
        restart: bool,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("target", target)
            .opt("restart", restart.then_some(true));
        self.task(Method::POST, &ct_path(node, vmid, "/migrate"), &params)
            .await
    }

    /// `GET .../feature` (`vm_feature`).
    ///
    /// # Errors
    /// `snapshot 'x' does not exist`.
    pub async fn vm_feature(
        &self,
        node: &str,
        vmid: u32,
        feature: Feature,
        snapname: Option<&str>,
    ) -> Result<VmFeature> {
        let params = Params::new()
            .set("feature", feature.as_str())
            .opt("snapname", snapname);
        self.get(&ct_path(node, vmid, "/feature"), &params).await
    }

    /// `GET .../interfaces` (`ip`): the addresses inside a running
    /// container; `None` when it is stopped.
    ///
    /// # Errors
    /// As [`Lxc::vm_config`].
    pub async fn ip(&self, node: &str, vmid: u32) -> Result<Option<Vec<CtInterface>>> {
        self.get(&ct_path(node, vmid, "/interfaces"), &Params::new())
            .await
    }

    /// `GET /nodes/{node}/aplinfo` (`aplinfo`): the appliance index.
    ///
    /// # Errors
    /// As any call.
    pub async fn aplinfo(&self, node: &str) -> Result<Vec<Appliance>> {
        self.get(&format!("/nodes/{}/aplinfo", seg(node)), &Params::new())
            .await
    }

    /// `POST /nodes/{node}/aplinfo` (`apl_download`): a `download` task
    /// that stores `template` in `storage`'s `vztmpl` content.
    ///
    /// # Errors
    /// `template: no such template`.
    pub async fn apl_download(&self, node: &str, storage: &str, template: &str) -> Result<Upid> {
        let params = Params::new()
            .set("storage", storage)
            .set("template", template);
        self.task(
            Method::POST,
            &format!("/nodes/{}/aplinfo", seg(node)),
            &params,
        )
        .await
    }

    and_wait! {
        /// [`Lxc::create_vm`], then waits for the task.
        create_vm_and_wait => create_vm(node: &str, req: &CreateCt);
        /// [`Lxc::vm_start`], then waits for the task.
        vm_start_and_wait => vm_start(node: &str, vmid: u32);
        /// [`Lxc::vm_stop`], then waits for the task.
        vm_stop_and_wait => vm_stop(node: &str, vmid: u32);
        /// [`Lxc::vm_shutdown`], then waits for the task.
        vm_shutdown_and_wait => vm_shutdown(node: &str, vmid: u32, timeout: Option<u32>, force_stop: bool);
        /// [`Lxc::vm_reboot`], then waits for the task.
        vm_reboot_and_wait => vm_reboot(node: &str, vmid: u32);
        /// [`Lxc::vm_suspend`], then waits for the task.
        vm_suspend_and_wait => vm_suspend(node: &str, vmid: u32);
        /// [`Lxc::vm_resume`], then waits for the task.
        vm_resume_and_wait => vm_resume(node: &str, vmid: u32);
        /// [`Lxc::destroy_vm`], then waits for the task.
        destroy_vm_and_wait => destroy_vm(node: &str, vmid: u32, purge: bool, force: bool);
        /// [`Lxc::clone_vm`], then waits for the task.
        clone_vm_and_wait => clone_vm(node: &str, vmid: u32, req: &CloneCt);
        /// [`Lxc::snapshot`], then waits for the task.
        snapshot_and_wait => snapshot(node: &str, vmid: u32, snapname: &str, description: Option<&str>);
        /// [`Lxc::rollback`], then waits for the task.
        rollback_and_wait => rollback(node: &str, vmid: u32, snapname: &str, start: bool);
        /// [`Lxc::delsnapshot`], then waits for the task.
        delsnapshot_and_wait => delsnapshot(node: &str, vmid: u32, snapname: &str);
        /// [`Lxc::resize_vm`], then waits for the task.
        resize_vm_and_wait => resize_vm(node: &str, vmid: u32, disk: &str, size: &str);
        /// [`Lxc::move_volume`], then waits for the task.
        move_volume_and_wait => move_volume(node: &str, vmid: u32, volume: &str, storage: &str, delete: bool);
        /// [`Lxc::migrate_vm`], then waits for the task.
        migrate_vm_and_wait => migrate_vm(node: &str, vmid: u32, target: &str, restart: bool);
        /// [`Lxc::apl_download`], then waits for the task.
        apl_download_and_wait => apl_download(node: &str, storage: &str, template: &str);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_reads_typed_and_raw() {
        let c: CtConfig = serde_json::from_value(serde_json::json!({
            "hostname": "web", "memory": 1024, "cores": 2, "unprivileged": 1,
            "net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,type=veth",
            "mp0": "local-lvm:vm-100-disk-1,mp=/data,size=2G",
            "tags": "a;b", "digest": "abc", "features": "nesting=1"
        }))
        .expect("config");
        assert_eq!(c.hostname.as_deref(), Some("web"));
        assert_eq!(c.memory, Some(1024));
        assert!(c.unprivileged && !c.template);
        assert_eq!(
            c.nets[&0],
            "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,type=veth"
        );
        assert_eq!(c.mounts[&0], "local-lvm:vm-100-disk-1,mp=/data,size=2G");
        assert_eq!(c.tags, vec!["a", "b"]);
        assert_eq!(c.get("features").as_deref(), Some("nesting=1"));
    }

    #[test]
    fn requests_carry_their_keys() {
        let create = CreateCt::new(200, "local:vztmpl/x.tar.zst")
            .rootfs("local-lvm:8")
            .password("pw-12345")
            .start(true);
        let p = create.params();
        let get = |k: &str| {
            p.pairs()
                .iter()
                .find(|(x, _)| x == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("ostemplate").as_deref(), Some("local:vztmpl/x.tar.zst"));
        assert_eq!(get("rootfs").as_deref(), Some("local-lvm:8"));
        assert_eq!(get("start").as_deref(), Some("1"));
        let u = UpdateCt::new()
            .cores(2)
            .delete("swap")
            .delete("mp0")
            .params();
        assert!(
            u.pairs()
                .contains(&("delete".to_string(), "swap,mp0".to_string()))
        );
    }
}
