//! Resource pools: the `pool:` lines of `user.cfg` with their guests and
//! storages (pve-manager `API2/Pool.pm`; pve-access-control
//! `AccessControl.pm` `verify_poolname`, `add_vm_to_pool`,
//! `remove_vm_access`, `remove_storage_access`).
//!
//! A VMID belongs to at most one pool; membership is kept by VMID alone,
//! whatever the guest's type, as PVE keeps it. A pool named `a/b` is
//! nested in `a` (at most three levels). Pools live in
//! [`Access`](super::access::Access), as they live in `user.cfg`, because
//! the roles a user holds on `/pool/<pool>` apply to its members
//! (`RPCEnvironment::compute_api_permission`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::access::{Access, AuthId};
use super::{Error, Result};

/// One pool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pool {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    vms: BTreeSet<u32>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    storage: BTreeSet<String>,
}

impl Pool {
    /// The comment, if one is set.
    pub fn comment(&self) -> Option<&str> {
        self.comment.as_deref()
    }

    /// The member guests by VMID.
    pub fn vms(&self) -> &BTreeSet<u32> {
        &self.vms
    }

    /// The member storages.
    pub fn storage(&self) -> &BTreeSet<String> {
        &self.storage
    }
}

/// Every pool by id, as `user.cfg` keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Pools {
    pools: BTreeMap<String, Pool>,
}

/// What `PUT /pools` asks for.
#[derive(Debug, Clone, Default)]
pub struct PoolUpdate {
    /// `comment` (an empty one removes it).
    pub comment: Option<String>,
    /// `vms`: guests to add or remove.
    pub vms: Vec<u32>,
    /// `storage`: storages to add or remove.
    pub storage: Vec<String>,
    /// `allow-move`: take guests from their current pool.
    pub allow_move: bool,
    /// `delete`: remove the members instead of adding them.
    pub delete: bool,
}

/// PVE's `verify_poolname`.
///
/// # Errors
/// `pool name 'x' nested too deeply (max levels = 3)`, `pool name 'x'
/// contains invalid characters`.
pub fn verify_poolname(poolid: &str) -> Result<()> {
    let parts: Vec<&str> = poolid.split('/').collect();
    if parts.len() > 3 {
        return Err(Error::failed(format!(
            "pool name '{poolid}' nested too deeply (max levels = 3)"
        )));
    }
    let ok = parts.iter().all(|p| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    });
    if !ok {
        return Err(Error::failed(format!(
            "pool name '{poolid}' contains invalid characters"
        )));
    }
    Ok(())
}

impl Pools {
    /// Whether there is no pool.
    pub fn is_empty(&self) -> bool {
        self.pools.is_empty()
    }

    /// The pool `poolid`.
    pub fn get(&self, poolid: &str) -> Option<&Pool> {
        self.pools.get(poolid)
    }

    /// The pools, sorted by id.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Pool)> {
        self.pools.iter()
    }

    /// The pool a guest belongs to.
    pub fn pool_of(&self, vmid: u32) -> Option<&str> {
        self.pools
            .iter()
            .find(|(_, p)| p.vms.contains(&vmid))
            .map(|(id, _)| id.as_str())
    }

    /// The pools whose members include `path` (`/vms/<vmid>` or
    /// `/storage/<sid>`).
    pub fn pools_of_path(&self, path: &str) -> Vec<&str> {
        let vm = path
            .strip_prefix("/vms/")
            .and_then(|v| v.parse::<u32>().ok());
        let sid = path.strip_prefix("/storage/");
        self.pools
            .iter()
            .filter(|(_, p)| {
                vm.is_some_and(|v| p.vms.contains(&v)) || sid.is_some_and(|s| p.storage.contains(s))
            })
            .map(|(id, _)| id.as_str())
            .collect()
    }

    /// `POST /pools`: a new, empty pool.
    ///
    /// # Errors
    /// `create pool failed: pool 'x' already exists`, `... parent 'a' of
    /// pool 'a/b' does not exist`, `... pool name must start with a
    /// letter`.
    pub fn create(&mut self, poolid: &str, comment: Option<String>) -> Result<()> {
        let wrap = |m: String| Error::failed(format!("create pool failed: {m}"));
        verify_poolname(poolid)?;
        if self.pools.contains_key(poolid) {
            return Err(Error::exists(format!(
                "create pool failed: pool '{poolid}' already exists"
            )));
        }
        let leaf = match poolid.rsplit_once('/') {
            Some((parent, leaf)) => {
                if !self.pools.contains_key(parent) {
                    return Err(wrap(format!(
                        "parent '{parent}' of pool '{poolid}' does not exist"
                    )));
                }
                leaf
            }
            None => poolid,
        };
        if !leaf.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Err(wrap("pool name must start with a letter".into()));
        }
        let pool = Pool {
            comment: comment.filter(|c| !c.is_empty()),
            ..Pool::default()
        };
        self.pools.insert(poolid.to_string(), pool);
        Ok(())
    }

    /// A pool as the cluster a node joined has it (its comment and
    /// storages), in place of one of that id.
    pub fn insert_synced(&mut self, poolid: &str, comment: Option<String>, storage: &[String]) {
        let pool = Pool {
            comment,
            vms: BTreeSet::new(),
            storage: storage.iter().cloned().collect(),
        };
        self.pools.insert(poolid.to_string(), pool);
    }

    /// `add_vm_to_pool`: a new guest joins `poolid` (nothing happens when
    /// the pool is gone).
    pub fn add_vm(&mut self, vmid: u32, poolid: &str) {
        if self.pools.contains_key(poolid) {
            self.remove_vm(vmid);
            if let Some(p) = self.pools.get_mut(poolid) {
                p.vms.insert(vmid);
            }
        }
    }

    /// Removes a guest from its pool (`remove_vm_access`).
    pub fn remove_vm(&mut self, vmid: u32) {
        for p in self.pools.values_mut() {
            p.vms.remove(&vmid);
        }
    }

    /// Removes a storage from every pool (`remove_storage_access`).
    pub fn remove_storage(&mut self, sid: &str) {
        for p in self.pools.values_mut() {
            p.storage.remove(sid);
        }
    }

    /// `DELETE /pools`: removes an empty pool. Members that no longer
    /// exist do not count (`vm_exists`, `storage_exists` say which do).
    ///
    /// # Errors
    /// `delete pool failed: pool 'x' does not exist`, `... pool 'x' is
    /// not empty (contains pool 'x/y')`, `(contains VM 100)`, `(contains
    /// storage 's')`.
    pub fn delete(
        &mut self,
        poolid: &str,
        vm_exists: impl Fn(u32) -> bool,
        storage_exists: impl Fn(&str) -> bool,
    ) -> Result<()> {
        let wrap = |m: String| Error::failed(format!("delete pool failed: {m}"));
        let Some(pool) = self.pools.get(poolid) else {
            return Err(Error::not_found(format!(
                "delete pool failed: pool '{poolid}' does not exist"
            )));
        };
        let prefix = format!("{poolid}/");
        if let Some(sub) = self.pools.keys().find(|k| k.starts_with(&prefix)) {
            return Err(wrap(format!(
                "pool '{poolid}' is not empty (contains pool '{sub}')"
            )));
        }
        if let Some(v) = pool.vms.iter().find(|v| vm_exists(**v)) {
            return Err(wrap(format!(
                "pool '{poolid}' is not empty (contains VM {v})"
            )));
        }
        if let Some(s) = pool.storage.iter().find(|s| storage_exists(s)) {
            return Err(wrap(format!(
                "pool '{poolid}' is not empty (contains storage '{s}')"
            )));
        }
        self.pools.remove(poolid);
        Ok(())
    }
}

impl Access {
    /// The pools.
    pub fn pools(&self) -> &Pools {
        &self.pools
    }

    /// The pools, to add a new guest or forget a storage.
    pub fn pools_mut(&mut self) -> &mut Pools {
        &mut self.pools
    }

    /// `check_pool_exist`.
    ///
    /// # Errors
    /// 403 `Permission check failed (pool 'x' does not exist)`.
    pub fn check_pool_exist(&self, poolid: &str) -> Result<()> {
        if self.pools.get(poolid).is_some() {
            Ok(())
        } else {
            Err(Error::Forbidden(format!(
                "Permission check failed (pool '{poolid}' does not exist)"
            )))
        }
    }

    /// `PUT /pools`: the comment and members of a pool, all or nothing.
    /// `who` needs the right to modify permissions on every member it
    /// adds or removes, and `Pool.Allocate` on the pool a guest is moved
    /// from.
    ///
    /// # Errors
    /// Wrapped in `update pools failed: `: `pool 'x' does not exist`, `VM
    /// N is not a pool member`, `VM N is already a pool member`, `VM N
    /// belongs already to pool 'y' and 'allow-move' is not set`, `Storage
    /// 's' is (not|already) a pool member`, a failed permission check.
    pub fn update_pool(&mut self, who: &AuthId, poolid: &str, up: &PoolUpdate) -> Result<()> {
        let wrap = |e: Error| Error::failed(format!("update pools failed: {}", e.message()));
        let mut pools = self.pools.clone();
        let Some(mut pool) = pools.pools.get(poolid).cloned() else {
            return Err(Error::not_found(format!(
                "update pools failed: pool '{poolid}' does not exist"
            )));
        };
        if let Some(c) = &up.comment {
            pool.comment = (!c.is_empty()).then(|| c.clone());
        }
        for vmid in &up.vms {
            self.check_perm_modify(who, &format!("/vms/{vmid}"))
                .map_err(wrap)?;
            if up.delete {
                if !pool.vms.remove(vmid) {
                    return Err(wrap(Error::failed(format!(
                        "VM {vmid} is not a pool member"
                    ))));
                }
                continue;
            }
            if pool.vms.contains(vmid) {
                return Err(wrap(Error::failed(format!(
                    "VM {vmid} is already a pool member"
                ))));
            }
            let other = pools
                .pools
                .iter()
                .find(|(id, p)| *id != poolid && p.vms.contains(vmid))
                .map(|(id, _)| id.clone());
            if let Some(other) = other {
                if !up.allow_move {
                    return Err(wrap(Error::failed(format!(
                        "VM {vmid} belongs already to pool '{other}' and 'allow-move' is not set"
                    ))));
                }
                self.check_perm(who, &format!("/pool/{other}"), &["Pool.Allocate"])
                    .map_err(wrap)?;
                if let Some(p) = pools.pools.get_mut(&other) {
                    p.vms.remove(vmid);
                }
            }
            pool.vms.insert(*vmid);
        }
        for sid in &up.storage {
            self.check_perm_modify(who, &format!("/storage/{sid}"))
                .map_err(wrap)?;
            if up.delete {
                if !pool.storage.remove(sid) {
                    return Err(wrap(Error::failed(format!(
                        "Storage '{sid}' is not a pool member"
                    ))));
                }
            } else if !pool.storage.insert(sid.clone()) {
                return Err(wrap(Error::failed(format!(
                    "Storage '{sid}' is already a pool member"
                ))));
            }
        }
        pools.pools.insert(poolid.to_string(), pool);
        self.pools = pools;
        Ok(())
    }

    /// `DELETE /pools`: removes an empty pool and its ACL entries
    /// (`delete_pool_acl`).
    ///
    /// # Errors
    /// As [`Pools::delete`].
    pub fn delete_pool(
        &mut self,
        poolid: &str,
        vm_exists: impl Fn(u32) -> bool,
        storage_exists: impl Fn(&str) -> bool,
    ) -> Result<()> {
        self.pools.delete(poolid, vm_exists, storage_exists)?;
        let path = format!("/pool/{poolid}");
        let sub = format!("{path}/");
        self.acl.retain(|p, _| *p != path && !p.starts_with(&sub));
        Ok(())
    }

    /// `remove_vm_access`: a destroyed guest leaves its pool and its ACL
    /// entries go.
    pub fn remove_vm_access(&mut self, vmid: u32) {
        self.acl.remove(&format!("/vms/{vmid}"));
        self.pools.remove_vm(vmid);
    }

    /// `remove_storage_access`: a removed storage leaves every pool and
    /// its ACL entries go.
    pub fn remove_storage_access(&mut self, sid: &str) {
        self.acl.remove(&format!("/storage/{sid}"));
        self.pools.remove_storage(sid);
    }
}
