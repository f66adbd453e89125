//! A node's disks (`/nodes/{node}/disks`), hardware
//! (`/nodes/{node}/hardware`), QEMU capabilities
//! (`/nodes/{node}/capabilities/qemu`), packages (`/nodes/{node}/apt`)
//! and storage scans (`/nodes/{node}/scan`).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::node_hw::ZfsCreate;
//!
//! let unused = client.disks().list("pve", Some("unused")).await?;
//! let upid = client
//!     .disks()
//!     .zfs_create("pve", &ZfsCreate::new("tank", "mirror", &["/dev/sdb", "/dev/sdc"]).add_storage(true))
//!     .await?;
//! # let _ = (unused, upid);
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The `/nodes/{node}/disks` calls; see [`Client::disks`].
#[derive(Debug, Clone, Copy)]
pub struct Disks<'a> {
    client: &'a Client,
}

/// The `/nodes/{node}/hardware` and `/nodes/{node}/capabilities` calls;
/// see [`Client::hardware`].
#[derive(Debug, Clone, Copy)]
pub struct Hardware<'a> {
    client: &'a Client,
}

/// The `/nodes/{node}/apt` calls; see [`Client::apt`].
#[derive(Debug, Clone, Copy)]
pub struct Apt<'a> {
    client: &'a Client,
}

/// The `/nodes/{node}/scan` calls; see [`Client::scan`].
#[derive(Debug, Clone, Copy)]
pub struct Scan<'a> {
    client: &'a Client,
}

impl Client {
    /// A node's disks, volume groups, thin pools, ZFS pools and
    /// directory storages.
    pub fn disks(&self) -> Disks<'_> {
        Disks { client: self }
    }

    /// A node's PCI and USB devices and its QEMU's capabilities.
    pub fn hardware(&self) -> Hardware<'_> {
        Hardware { client: self }
    }

    /// A node's packages and updates.
    pub fn apt(&self) -> Apt<'_> {
        Apt { client: self }
    }

    /// What a node finds on storage servers and its own disks.
    pub fn scan(&self) -> Scan<'_> {
        Scan { client: self }
    }
}

/// A disk (or partition) as `GET /nodes/{node}/disks/list` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disk {
    /// `/dev/sdb`.
    pub devpath: String,
    /// Bytes.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub size: u64,
    /// What holds it (`LVM`, `ZFS`, `ext4`, `partitions`, ...).
    #[serde(default)]
    pub used: Option<String>,
    /// `hdd`, `ssd`, `nvme`, `usb`, `partition`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// SMART health.
    #[serde(default)]
    pub health: Option<String>,
    /// Percent of life left, or `N/A`.
    #[serde(default)]
    pub wearout: Option<Value>,
    /// Whether it has a GPT.
    #[serde(default, deserialize_with = "de::bool01")]
    pub gpt: bool,
    /// The disk of a partition.
    #[serde(default)]
    pub parent: Option<String>,
    /// Anything else (`model`, `serial`, `wwn`, `vendor`, `rpm`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `POST /nodes/{node}/disks/zfs`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZfsCreate {
    /// Pool name.
    pub name: String,
    /// `single`, `mirror`, `raid10`, `raidz`, `raidz2`, `raidz3`, `draid*`.
    pub raidlevel: String,
    /// The devices.
    pub devices: Vec<String>,
    /// `ashift` (default 12).
    pub ashift: Option<u8>,
    /// `compression` (default `on`).
    pub compression: Option<String>,
    /// `add_storage`.
    pub add_storage: Option<bool>,
}

impl ZfsCreate {
    /// A pool `name` of `raidlevel` over `devices`.
    pub fn new(name: &str, raidlevel: &str, devices: &[&str]) -> Self {
        Self {
            name: name.into(),
            raidlevel: raidlevel.into(),
            devices: devices.iter().map(|d| (*d).to_string()).collect(),
            ..Self::default()
        }
    }

    /// Adds a `zfspool` storage of the pool.
    #[must_use]
    pub fn add_storage(mut self, on: bool) -> Self {
        self.add_storage = Some(on);
        self
    }

    /// Sets `compression`.
    #[must_use]
    pub fn compression(mut self, c: &str) -> Self {
        self.compression = Some(c.into());
        self
    }
}

/// The flags of a removal of a pool, volume group or directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleanup {
    /// `cleanup-config`: the storages using it leave the node.
    pub config: bool,
    /// `cleanup-disks`: its disks are wiped.
    pub disks: bool,
}

impl Cleanup {
    fn params(self) -> Params {
        Params::new()
            .opt("cleanup-config", self.config.then_some(true))
            .opt("cleanup-disks", self.disks.then_some(true))
    }
}

impl Disks<'_> {
    async fn task(&self, method: Method, path: &str, params: &Params) -> Result<Upid> {
        self.client.call(method, path, params).await
    }

    /// `GET /nodes/{node}/disks/list` (`type`: `unused` or
    /// `journal_disks`).
    pub async fn list(&self, node: &str, kind: Option<&str>) -> Result<Vec<Disk>> {
        let path = format!("/nodes/{}/disks/list", seg(node));
        let params = Params::new().opt("type", kind);
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET /nodes/{node}/disks/smart`.
    pub async fn smart(&self, node: &str, disk: &str, healthonly: bool) -> Result<Value> {
        let path = format!("/nodes/{}/disks/smart", seg(node));
        let params = Params::new()
            .set("disk", disk)
            .opt("healthonly", healthonly.then_some(true));
        self.client.call(Method::GET, &path, &params).await
    }

    /// `POST /nodes/{node}/disks/initgpt` (task `diskinit`).
    pub async fn initgpt(&self, node: &str, disk: &str) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/initgpt", seg(node));
        self.task(Method::POST, &path, &Params::new().set("disk", disk))
            .await
    }

    /// `PUT /nodes/{node}/disks/wipedisk` (task `wipedisk`; root@pam).
    pub async fn wipe_disk(&self, node: &str, disk: &str) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/wipedisk", seg(node));
        self.task(Method::PUT, &path, &Params::new().set("disk", disk))
            .await
    }

    /// `GET /nodes/{node}/disks/zfs`.
    pub async fn zfs_index(&self, node: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/disks/zfs", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/disks/zfs/{name}` (`detail`).
    pub async fn zfs_detail(&self, node: &str, name: &str) -> Result<Value> {
        let path = format!("/nodes/{}/disks/zfs/{}", seg(node), seg(name));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /nodes/{node}/disks/zfs` (task `zfscreate`).
    pub async fn zfs_create(&self, node: &str, req: &ZfsCreate) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/zfs", seg(node));
        let params = Params::new()
            .set("name", req.name.as_str())
            .set("raidlevel", req.raidlevel.as_str())
            .set("devices", req.devices.join(","))
            .opt("ashift", req.ashift.map(u64::from))
            .opt("compression", req.compression.as_deref())
            .opt("add_storage", req.add_storage);
        self.task(Method::POST, &path, &params).await
    }

    /// `DELETE /nodes/{node}/disks/zfs/{name}` (task `zfsremove`).
    pub async fn zfs_delete(&self, node: &str, name: &str, cleanup: Cleanup) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/zfs/{}", seg(node), seg(name));
        self.task(Method::DELETE, &path, &cleanup.params()).await
    }

    /// `GET /nodes/{node}/disks/lvm`: the volume groups as a tree.
    pub async fn lvm_index(&self, node: &str) -> Result<Value> {
        let path = format!("/nodes/{}/disks/lvm", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /nodes/{node}/disks/lvm` (task `lvmcreate`).
    pub async fn lvm_create(
        &self,
        node: &str,
        name: &str,
        device: &str,
        add_storage: bool,
    ) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/lvm", seg(node));
        let params = Params::new()
            .set("name", name)
            .set("device", device)
            .opt("add_storage", add_storage.then_some(true));
        self.task(Method::POST, &path, &params).await
    }

    /// `DELETE /nodes/{node}/disks/lvm/{name}` (task `lvmremove`).
    pub async fn lvm_delete(&self, node: &str, name: &str, cleanup: Cleanup) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/lvm/{}", seg(node), seg(name));
        self.task(Method::DELETE, &path, &cleanup.params()).await
    }

    /// `GET /nodes/{node}/disks/lvmthin`.
    pub async fn lvmthin_index(&self, node: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/disks/lvmthin", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /nodes/{node}/disks/lvmthin` (task `lvmthincreate`).
    pub async fn lvmthin_create(
        &self,
        node: &str,
        name: &str,
        device: &str,
        add_storage: bool,
    ) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/lvmthin", seg(node));
        let params = Params::new()
            .set("name", name)
            .set("device", device)
            .opt("add_storage", add_storage.then_some(true));
        self.task(Method::POST, &path, &params).await
    }

    /// `DELETE /nodes/{node}/disks/lvmthin/{name}` (task `lvmthinremove`).
    pub async fn lvmthin_delete(
        &self,
        node: &str,
        vg: &str,
        name: &str,
        cleanup: Cleanup,
    ) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/lvmthin/{}", seg(node), seg(name));
        let params = cleanup.params().set("volume-group", vg);
        self.task(Method::DELETE, &path, &params).await
    }

    /// `GET /nodes/{node}/disks/directory`: the mount units.
    pub async fn directory_index(&self, node: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/disks/directory", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /nodes/{node}/disks/directory` (task `dircreate`).
    pub async fn directory_create(
        &self,
        node: &str,
        name: &str,
        device: &str,
        filesystem: Option<&str>,
        add_storage: bool,
    ) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/directory", seg(node));
        let params = Params::new()
            .set("name", name)
            .set("device", device)
            .opt("filesystem", filesystem)
            .opt("add_storage", add_storage.then_some(true));
        self.task(Method::POST, &path, &params).await
    }

    /// `DELETE /nodes/{node}/disks/directory/{name}` (task `dirremove`).
    pub async fn directory_delete(&self, node: &str, name: &str, cleanup: Cleanup) -> Result<Upid> {
        let path = format!("/nodes/{}/disks/directory/{}", seg(node), seg(name));
        self.task(Method::DELETE, &path, &cleanup.params()).await
    }
}

impl Hardware<'_> {
    /// `GET /nodes/{node}/hardware/pci` (`pci_scan`); `blacklist` is
    /// `pci-class-blacklist` (PVE's default `05;06;0b`).
    pub async fn pci_scan(&self, node: &str, blacklist: Option<&str>) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/hardware/pci", seg(node));
        let params = Params::new().opt("pci-class-blacklist", blacklist);
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET /nodes/{node}/hardware/pci/{id}/mdev` (`mdevscan`).
    pub async fn mdevscan(&self, node: &str, id: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/hardware/pci/{}/mdev", seg(node), seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/hardware/usb` (`usbscan`).
    pub async fn usbscan(&self, node: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/hardware/usb", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/capabilities/qemu/cpu`: the CPU models.
    pub async fn cpu_models(&self, node: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/capabilities/qemu/cpu", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/capabilities/qemu/machines` (`types`).
    pub async fn types(&self, node: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/capabilities/qemu/machines", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }
}

impl Apt<'_> {
    /// `GET /nodes/{node}/apt/update` (`list_updates`).
    pub async fn list_updates(&self, node: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/apt/update", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /nodes/{node}/apt/update` (`update_database`, task
    /// `aptupdate`).
    pub async fn update_database(&self, node: &str) -> Result<Upid> {
        let path = format!("/nodes/{}/apt/update", seg(node));
        self.client.call(Method::POST, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/apt/versions`.
    pub async fn versions(&self, node: &str) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/apt/versions", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/apt/changelog`.
    pub async fn changelog(&self, node: &str, name: &str, version: Option<&str>) -> Result<String> {
        let path = format!("/nodes/{}/apt/changelog", seg(node));
        let params = Params::new().set("name", name).opt("version", version);
        self.client.call(Method::GET, &path, &params).await
    }
}

impl Scan<'_> {
    async fn get(&self, node: &str, what: &str, params: &Params) -> Result<Vec<Value>> {
        let path = format!("/nodes/{}/scan/{what}", seg(node));
        self.client.call(Method::GET, &path, params).await
    }

    /// `GET /nodes/{node}/scan/nfs`.
    pub async fn nfsscan(&self, node: &str, server: &str) -> Result<Vec<Value>> {
        self.get(node, "nfs", &Params::new().set("server", server))
            .await
    }

    /// `GET /nodes/{node}/scan/cifs`.
    pub async fn cifsscan(
        &self,
        node: &str,
        server: &str,
        login: Option<(&str, &str)>,
    ) -> Result<Vec<Value>> {
        let params = Params::new()
            .set("server", server)
            .opt("username", login.map(|l| l.0))
            .opt("password", login.map(|l| l.1));
        self.get(node, "cifs", &params).await
    }

    /// `GET /nodes/{node}/scan/iscsi`.
    pub async fn iscsiscan(&self, node: &str, portal: &str) -> Result<Vec<Value>> {
        self.get(node, "iscsi", &Params::new().set("portal", portal))
            .await
    }

    /// `GET /nodes/{node}/scan/pbs`.
    pub async fn pbsscan(
        &self,
        node: &str,
        server: &str,
        username: &str,
        password: &str,
    ) -> Result<Vec<Value>> {
        let params = Params::new()
            .set("server", server)
            .set("username", username)
            .set("password", password);
        self.get(node, "pbs", &params).await
    }

    /// `GET /nodes/{node}/scan/lvm`.
    pub async fn lvmscan(&self, node: &str) -> Result<Vec<Value>> {
        self.get(node, "lvm", &Params::new()).await
    }

    /// `GET /nodes/{node}/scan/lvmthin`.
    pub async fn lvmthinscan(&self, node: &str, vg: &str) -> Result<Vec<Value>> {
        self.get(node, "lvmthin", &Params::new().set("vg", vg))
            .await
    }

    /// `GET /nodes/{node}/scan/zfs`.
    pub async fn zfsscan(&self, node: &str) -> Result<Vec<Value>> {
        self.get(node, "zfs", &Params::new()).await
    }
}
