//! CephFS (pve-manager `API2/Ceph/FS.pm`): file systems on a data and a
//! metadata pool, each served by a running metadata server that turns
//! active for it; `cephfscreate` makes both pools and, with
//! `add-storage`, a `cephfs` storage; `cephdestroyfs` removes the file
//! system and, when asked, its storages and pools.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Ceph;
use crate::model::storage::Storages;
use crate::model::{Error, Result};

/// A file system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CephFs {
    /// Its name.
    pub name: String,
    /// The metadata pool.
    pub metadata_pool: String,
    /// The data pools.
    pub data_pools: Vec<String>,
}

/// A file system task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum FsOp {
    /// `cephfscreate`.
    Create {
        /// The name.
        name: String,
        /// The data pool's placement groups.
        pg_num: u32,
        /// Adds a `cephfs` storage named after it.
        add_storage: bool,
    },
    /// `cephdestroyfs`.
    Destroy {
        /// The name.
        name: String,
        /// Removes its storages (which must be disabled).
        remove_storages: bool,
        /// Removes its pools.
        remove_pools: bool,
    },
}

impl Ceph {
    /// The file systems, in creation order (`fs ls`).
    pub fn filesystems(&self) -> &[CephFs] {
        &self.filesystems
    }

    /// A pool's id.
    pub fn pool_id(&self, name: &str) -> Option<u32> {
        self.pool(name).map(|p| p.id)
    }

    /// Which metadata server is active for which file system: the
    /// running ones by id, one for each file system in order.
    pub fn active_mds(&self) -> BTreeMap<String, String> {
        let mut running: Vec<&str> = self
            .mdss
            .iter()
            .filter(|m| m.running)
            .map(|m| m.id.as_str())
            .collect();
        running.sort_unstable();
        self.filesystems
            .iter()
            .zip(running)
            .map(|(fs, mds)| (mds.to_string(), fs.name.clone()))
            .collect()
    }

    /// `createfs` up to the fork.
    ///
    /// # Errors
    /// PVE's refusals in its order (the storage ID is checked by the
    /// caller).
    pub fn prepare_create_fs(&self, node: &str, name: &str) -> Result<()> {
        self.check_configured(node)?;
        self.rados(node)?;
        let (data, meta) = (format!("{name}_data"), format!("{name}_metadata"));
        if self.pool(&data).is_some() || self.pool(&meta).is_some() {
            return Err(Error::failed(format!(
                "ceph pools '{data}' and/or '{meta}' already exist"
            )));
        }
        if self.filesystems.iter().any(|f| f.name == name) {
            return Err(Error::failed(format!("ceph fs '{name}' already exists")));
        }
        let running: Vec<_> = self.mdss.iter().filter(|m| m.running).collect();
        if running.is_empty() {
            return Err(Error::failed("no running Metadata Server (MDS) found!"));
        }
        if running.len() <= self.filesystems.len() {
            return Err(Error::failed("no standby Metadata Server (MDS) found!"));
        }
        Ok(())
    }

    /// A file system as a scenario declares it, with its pools.
    ///
    /// # Errors
    /// Its pools or name are taken.
    pub fn declare_fs(&mut self, name: &str, pg_num: u32) -> Result<()> {
        let mut out = Vec::new();
        self.make_fs(name, pg_num, &mut out)
    }

    fn make_fs(&mut self, name: &str, pg_num: u32, out: &mut Vec<String>) -> Result<()> {
        let (data, meta) = (format!("{name}_data"), format!("{name}_metadata"));
        if self.filesystems.iter().any(|f| f.name == name) {
            return Err(Error::failed(format!("ceph fs '{name}' already exists")));
        }
        let settings = |pg: u32| {
            vec![
                ("application".to_string(), "cephfs".to_string()),
                ("pg_num".to_string(), pg.to_string()),
            ]
        };
        out.push(format!("creating data pool '{data}'..."));
        self.create_pool(&data, pg_num);
        self.set_pool(&data, &settings(pg_num), out)?;
        let meta_pg = if pg_num >= 32 { pg_num / 4 } else { 8 };
        out.push(format!("creating metadata pool '{meta}'..."));
        self.create_pool(&meta, meta_pg);
        self.set_pool(&meta, &settings(meta_pg), out)?;
        out.push(format!("configuring new CephFS '{name}'"));
        self.filesystems.push(CephFs {
            name: name.to_string(),
            metadata_pool: meta,
            data_pools: vec![data],
        });
        Ok(())
    }

    /// What a file system task does on `node`.
    pub(super) fn run_fs(
        &mut self,
        storages: &mut Storages,
        node: &str,
        op: &FsOp,
        out: &mut Vec<String>,
    ) -> Result<()> {
        self.rados(node)?;
        match op {
            FsOp::Create {
                name,
                pg_num,
                add_storage,
            } => {
                self.make_fs(name, *pg_num, out)?;
                out.push(format!("Successfully create CephFS '{name}'"));
                if *add_storage {
                    out.push(format!("Adding '{name}' to storage configuration..."));
                    let p: BTreeMap<String, String> = [
                        ("type", "cephfs"),
                        ("storage", name.as_str()),
                        ("content", "backup,iso,vztmpl"),
                        ("fs-name", name.as_str()),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                    storages.create(&p).map_err(|e| {
                        Error::failed(format!(
                            "adding storage for CephFS '{name}' failed, check log and add manually!\n{e}\n"
                        ))
                    })?;
                }
                Ok(())
            }
            FsOp::Destroy {
                name,
                remove_storages,
                remove_pools,
            } => {
                let Some(i) = self.filesystems.iter().position(|f| &f.name == name) else {
                    return Err(Error::failed(format!("no such cephfs '{name}'")));
                };
                if *remove_storages {
                    let is_default = i == 0;
                    let mut ids: Vec<String> = storages
                        .cfg()
                        .iter()
                        .filter(|s| s.kind == "cephfs")
                        .filter(|s| match s.options.get("fs-name") {
                            Some(f) => f == name,
                            None => is_default,
                        })
                        .map(|s| s.storage.clone())
                        .collect();
                    ids.sort();
                    if let Some(on) = ids
                        .iter()
                        .find(|id| storages.find(id).is_some_and(|s| !s.disable))
                    {
                        return Err(Error::failed(format!(
                            "storage '{on}' is not disabled, make sure to disable and unmount the storage first"
                        )));
                    }
                    for id in ids {
                        if storages
                            .find(&id)
                            .is_some_and(|s| !s.options.contains_key("monhost"))
                        {
                            let _ = storages.remove(&id);
                        }
                    }
                }
                let fs = self.filesystems.remove(i);
                if *remove_pools {
                    out.push(format!("removing metadata pool '{}'", fs.metadata_pool));
                    if let Err(e) = self.destroy_pool(&fs.metadata_pool) {
                        out.push(e.to_string());
                    }
                    for pool in &fs.data_pools {
                        out.push(format!("removing data pool '{pool}'"));
                        if let Err(e) = self.destroy_pool(pool) {
                            out.push(e.to_string());
                        }
                    }
                }
                Ok(())
            }
        }
    }
}
