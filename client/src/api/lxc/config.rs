//! A container's configuration: create from a template or a backup,
//! read, update (with its pending changes) and destroy.

use std::collections::BTreeMap;

use reqwest::Method;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::{Lxc, ct_path};
use crate::api::qemu::PendingItem;
use crate::api::seg;
use crate::api::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::{ParamValue, Params};

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

impl Lxc<'_> {
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

    and_wait! {
        /// [`Lxc::create_vm`], then waits for the task.
        create_vm_and_wait => create_vm(node: &str, req: &CreateCt);
        /// [`Lxc::destroy_vm`], then waits for the task.
        destroy_vm_and_wait => destroy_vm(node: &str, vmid: u32, purge: bool, force: bool);
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
