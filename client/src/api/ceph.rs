//! A node's Ceph pools, OSDs and file systems (`/nodes/{node}/ceph/pool`,
//! `/osd`, `/fs`) and the safety check of stopping or destroying a
//! daemon (`/nodes/{node}/ceph/cmd-safety`).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::ceph::PoolSpec;
//!
//! let ceph = client.ceph("pve1");
//! let upid = ceph
//!     .createpool("vm", &PoolSpec { size: Some(3), ..PoolSpec::default() }, true)
//!     .await?;
//! client.tasks().wait(&upid).await?;
//! let pools = ceph.lspools().await?;
//! let safe = ceph.cmd_safety("osd", "0", "stop").await?;
//! # let _ = (pools, safe);
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

/// The Ceph calls of one node; see [`Client::ceph`].
#[derive(Debug, Clone, Copy)]
pub struct Ceph<'a> {
    client: &'a Client,
    node: &'a str,
}

impl Client {
    /// The `/nodes/{node}/ceph` calls of pools, OSDs and file systems.
    pub fn ceph<'a>(&'a self, node: &'a str) -> Ceph<'a> {
        Ceph { client: self, node }
    }
}

/// A pool as `GET /nodes/{node}/ceph/pool` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolEntry {
    /// Ceph's pool id.
    pub pool: u64,
    /// Its name.
    pub pool_name: String,
    /// Replicas.
    pub size: u64,
    /// Replicas needed for writes.
    pub min_size: u64,
    /// Placement groups.
    pub pg_num: u64,
    /// `on`, `off`, `warn`.
    #[serde(default)]
    pub pg_autoscale_mode: Option<String>,
    /// The crush rule's name.
    #[serde(default)]
    pub crush_rule_name: Option<String>,
    /// `replicated`, `erasure`, `unknown`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Anything else (`autoscale_status`, `bytes_used`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The settings of `createpool` and `setpool` (unset ones are not sent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolSpec {
    /// `size`.
    pub size: Option<u32>,
    /// `min_size`.
    pub min_size: Option<u32>,
    /// `pg_num`.
    pub pg_num: Option<u32>,
    /// `pg_num_min`.
    pub pg_num_min: Option<u32>,
    /// `crush_rule`.
    pub crush_rule: Option<String>,
    /// `application` (`rbd`, `cephfs`, `rgw`).
    pub application: Option<String>,
    /// `pg_autoscale_mode`.
    pub pg_autoscale_mode: Option<String>,
    /// `target_size` (`100G`).
    pub target_size: Option<String>,
}

impl PoolSpec {
    fn params(&self, p: Params) -> Params {
        p.opt("size", self.size)
            .opt("min_size", self.min_size)
            .opt("pg_num", self.pg_num)
            .opt("pg_num_min", self.pg_num_min)
            .opt("crush_rule", self.crush_rule.clone())
            .opt("application", self.application.clone())
            .opt("pg_autoscale_mode", self.pg_autoscale_mode.clone())
            .opt("target_size", self.target_size.clone())
    }
}

/// The options of `createosd` beyond the disk (unset ones are not sent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OsdSpec {
    /// `db_dev`: the device of the `block.db`.
    pub db_dev: Option<String>,
    /// `db_dev_size`, GiB.
    pub db_dev_size: Option<f64>,
    /// `wal_dev`: the device of the `block.wal`.
    pub wal_dev: Option<String>,
    /// `wal_dev_size`, GiB.
    pub wal_dev_size: Option<f64>,
    /// `encrypted`.
    pub encrypted: Option<bool>,
    /// `crush-device-class`.
    pub crush_device_class: Option<String>,
    /// `osds-per-device`.
    pub osds_per_device: Option<u32>,
}

impl OsdSpec {
    fn params(&self, p: Params) -> Params {
        p.opt("db_dev", self.db_dev.clone())
            .opt("db_dev_size", self.db_dev_size)
            .opt("wal_dev", self.wal_dev.clone())
            .opt("wal_dev_size", self.wal_dev_size)
            .opt("encrypted", self.encrypted)
            .opt("crush-device-class", self.crush_device_class.clone())
            .opt("osds-per-device", self.osds_per_device)
    }
}

/// `GET /nodes/{node}/ceph/cmd-safety`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Safety {
    /// Whether Ceph says the action is safe.
    #[serde(deserialize_with = "de::bool01")]
    pub safe: bool,
    /// Ceph's message.
    #[serde(default)]
    pub status: Option<String>,
}

/// A CephFS as `GET /nodes/{node}/ceph/fs` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CephFs {
    /// Its name.
    pub name: String,
    /// The metadata pool.
    pub metadata_pool: String,
    /// The first data pool.
    pub data_pool: String,
}

impl Ceph<'_> {
    fn path(&self, rest: &str) -> String {
        format!("/nodes/{}/ceph/{rest}", seg(self.node))
    }

    /// `GET /nodes/{node}/ceph/pool` (`lspools`).
    ///
    /// # Errors
    /// Ceph not initialised or not answering.
    pub async fn lspools(&self) -> Result<Vec<PoolEntry>> {
        self.client
            .call(Method::GET, &self.path("pool"), &Params::new())
            .await
    }

    /// `POST /nodes/{node}/ceph/pool` (`createpool`, task
    /// `cephcreatepool`); `add_storages` adds an `rbd` storage named
    /// after the pool.
    ///
    /// # Errors
    /// Ceph not fully configured; a pool name unfit for a storage ID.
    pub async fn createpool(
        &self,
        name: &str,
        spec: &PoolSpec,
        add_storages: bool,
    ) -> Result<Upid> {
        let params = spec.params(
            Params::new()
                .set("name", name)
                .opt("add_storages", add_storages.then_some(true)),
        );
        self.client
            .call(Method::POST, &self.path("pool"), &params)
            .await
    }

    /// `PUT /nodes/{node}/ceph/pool/{name}` (`setpool`, task
    /// `cephsetpool`).
    ///
    /// # Errors
    /// Ceph not fully configured.
    pub async fn setpool(&self, name: &str, spec: &PoolSpec) -> Result<Upid> {
        let path = self.path(&format!("pool/{}", seg(name)));
        self.client
            .call(Method::PUT, &path, &spec.params(Params::new()))
            .await
    }

    /// `DELETE /nodes/{node}/ceph/pool/{name}` (`destroypool`, task
    /// `cephdestroypool`).
    ///
    /// # Errors
    /// Ceph not initialised.
    pub async fn destroypool(
        &self,
        name: &str,
        force: bool,
        remove_storages: bool,
    ) -> Result<Upid> {
        let path = self.path(&format!("pool/{}", seg(name)));
        let params = Params::new()
            .opt("force", force.then_some(true))
            .opt("remove_storages", remove_storages.then_some(true));
        self.client.call(Method::DELETE, &path, &params).await
    }

    /// `GET /nodes/{node}/ceph/pool/{name}/status` (`getpool`).
    ///
    /// # Errors
    /// `mon_command failed - unrecognized pool '<name>'`.
    pub async fn getpool(&self, name: &str, verbose: bool) -> Result<Value> {
        let path = self.path(&format!("pool/{}/status", seg(name)));
        let params = Params::new().opt("verbose", verbose.then_some(true));
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET /nodes/{node}/ceph/osd` (`index`): the crush tree under
    /// `root` and the OSD map's `flags`.
    ///
    /// # Errors
    /// Ceph not initialised or not answering.
    pub async fn osd_index(&self) -> Result<Value> {
        self.client
            .call(Method::GET, &self.path("osd"), &Params::new())
            .await
    }

    /// `POST /nodes/{node}/ceph/osd` (`createosd`, task `cephcreateosd`)
    /// on the disk `dev`.
    ///
    /// # Errors
    /// `device '<dev>' is already in use`; the binaries missing.
    pub async fn createosd(&self, dev: &str, device_class: Option<&str>) -> Result<Upid> {
        let params = Params::new()
            .set("dev", dev)
            .opt("crush-device-class", device_class);
        self.client
            .call(Method::POST, &self.path("osd"), &params)
            .await
    }

    /// `POST /nodes/{node}/ceph/osd` (`createosd`) with a `block.db`,
    /// a `block.wal` or several OSDs on the disk `dev`.
    ///
    /// # Errors
    /// PVE's checks of the devices (`cannot chose '<dev>' for more than
    /// one type.`, `cannot use 'osds-per-device' parameter with
    /// 'db_dev'`, a device in use).
    pub async fn createosd_with(&self, dev: &str, spec: &OsdSpec) -> Result<Upid> {
        let params = spec.params(Params::new().set("dev", dev));
        self.client
            .call(Method::POST, &self.path("osd"), &params)
            .await
    }

    /// `DELETE /nodes/{node}/ceph/osd/{osdid}` (`destroyosd`, task
    /// `cephdestroyosd`).
    ///
    /// # Errors
    /// `osd is in use (in == 1)`, `osd is still running (up == 1)`.
    pub async fn destroyosd(&self, osdid: u32, cleanup: bool) -> Result<Upid> {
        let path = self.path(&format!("osd/{osdid}"));
        let params = Params::new().opt("cleanup", cleanup.then_some(true));
        self.client.call(Method::DELETE, &path, &params).await
    }

    /// `POST /nodes/{node}/ceph/osd/{osdid}/in` (`in`) or `.../out`
    /// (`out`).
    ///
    /// # Errors
    /// `no such OSD '<id>'`.
    pub async fn set_osd_in(&self, osdid: u32, is_in: bool) -> Result<()> {
        let path = self.path(&format!("osd/{osdid}/{}", if is_in { "in" } else { "out" }));
        let _: Value = self
            .client
            .call(Method::POST, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `POST /nodes/{node}/ceph/osd/{osdid}/scrub` (`scrub`).
    ///
    /// # Errors
    /// `no such OSD '<id>'`; the OSD is not up.
    pub async fn scrub(&self, osdid: u32, deep: bool) -> Result<()> {
        let path = self.path(&format!("osd/{osdid}/scrub"));
        let params = Params::new().opt("deep", deep.then_some(true));
        let _: Value = self.client.call(Method::POST, &path, &params).await?;
        Ok(())
    }

    /// `GET /nodes/{node}/ceph/osd/{osdid}/metadata` (`osddetails`).
    ///
    /// # Errors
    /// `OSD '<id>' does not exists on host '<node>'`.
    pub async fn osddetails(&self, osdid: u32) -> Result<Value> {
        let path = self.path(&format!("osd/{osdid}/metadata"));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/ceph/osd/{osdid}/lv-info` (`osdvolume`).
    ///
    /// # Errors
    /// The OSD is not in `ceph-volume lvm list` on the node.
    pub async fn osdvolume(&self, osdid: u32) -> Result<Value> {
        let path = self.path(&format!("osd/{osdid}/lv-info"));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/ceph/osd/{osdid}/lv-info` (`osdvolume`) of
    /// the `block`, `db` or `wal` volume.
    ///
    /// # Errors
    /// `volume type '<type>' not found for OSD <id>`.
    pub async fn osdvolume_of(&self, osdid: u32, kind: &str) -> Result<Value> {
        let path = self.path(&format!("osd/{osdid}/lv-info"));
        let params = Params::new().set("type", kind);
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET /nodes/{node}/ceph/fs` (`index`).
    ///
    /// # Errors
    /// Ceph not initialised or not answering.
    pub async fn fs_index(&self) -> Result<Vec<CephFs>> {
        self.client
            .call(Method::GET, &self.path("fs"), &Params::new())
            .await
    }

    /// `POST /nodes/{node}/ceph/fs/{name}` (`createfs`, task
    /// `cephfscreate`).
    ///
    /// # Errors
    /// `no running Metadata Server (MDS) found!`, taken pools.
    pub async fn createfs(&self, name: &str, add_storage: bool) -> Result<Upid> {
        let path = self.path(&format!("fs/{}", seg(name)));
        let params = Params::new().opt("add-storage", add_storage.then_some(true));
        self.client.call(Method::POST, &path, &params).await
    }

    /// `GET /nodes/{node}/ceph/cmd-safety` (`cmd_safety`): whether
    /// stopping (`stop`) or destroying (`destroy`) a daemon (`osd`,
    /// `mon`, `mds`) is safe.
    ///
    /// # Errors
    /// `Service does not support this action: ...`.
    pub async fn cmd_safety(&self, service: &str, id: &str, action: &str) -> Result<Safety> {
        let params = Params::new()
            .set("service", service)
            .set("id", id)
            .set("action", action);
        self.client
            .call(Method::GET, &self.path("cmd-safety"), &params)
            .await
    }
}
