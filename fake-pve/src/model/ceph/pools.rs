//! The pools (pve-manager `API2/Ceph/Pool.pm` and `Ceph/Tools.pm`'s
//! `create_pool`, `set_pool`, `destroy_pool`): what the monitors keep of
//! each pool, the refusals of `osd pool set` and `osd pool application
//! enable` as librados hands them to PVE (`mon_command failed - ...`),
//! and the tasks' work, which also adds and removes the `rbd` storages
//! of a pool in `storage.cfg`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Ceph;
use super::erasure::{EcPool, ErasureCoding, profile_name};
use crate::model::storage::Storages;
use crate::model::{Error, Result};

/// The only crush rule a PVE-made cluster has.
pub const REPLICATED_RULE: &str = "replicated_rule";

/// A pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pool {
    /// Ceph's pool id.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Replicas per object.
    pub size: u32,
    /// Replicas needed to accept writes.
    pub min_size: u32,
    /// Placement groups.
    pub pg_num: u32,
    /// The autoscaler's floor, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg_num_min: Option<u32>,
    /// `on`, `off` or `warn`.
    pub pg_autoscale_mode: String,
    /// The applications enabled on it (`rbd`, `cephfs`, `rgw`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applications: Vec<String>,
    /// The autoscaler's target size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_size_bytes: Option<u64>,
    /// The autoscaler's target ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_size_ratio: Option<f64>,
    /// What an erasure-coded pool has besides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ec: Option<EcPool>,
}

impl Pool {
    /// The name of its CRUSH rule.
    pub fn crush_rule(&self) -> &str {
        if self.ec.is_some() {
            &self.name
        } else {
            REPLICATED_RULE
        }
    }

    /// The id of its CRUSH rule.
    pub fn crush_rule_id(&self) -> u32 {
        self.ec.as_ref().map_or(0, |e| e.rule_id)
    }
}

/// A monitor's refusal as `PVE::RADOS` dies with it.
pub(super) fn mon_failed(msg: impl std::fmt::Display) -> Error {
    Error::failed(format!("mon_command failed - {msg}"))
}

/// What `osd pool get` says of a pool it does not know.
fn unrecognized(name: &str) -> Error {
    mon_failed(format_args!("unrecognized pool '{name}'"))
}

/// A setting as Perl prints a number.
fn num_text(v: f64) -> String {
    let s = format!("{v}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// What a pool task is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum PoolOp {
    /// `cephcreatepool`: `osd pool create`, then PVE's `set_pool` of
    /// every setting, then the storage when asked.
    Create {
        /// The pool.
        name: String,
        /// `(setting, value)` as the call gave them, defaults filled in.
        settings: Vec<(String, String)>,
        /// Adds an `rbd` storage named after the pool.
        add_storage: bool,
        /// An erasure-coded data pool `<name>-data` with a replicated
        /// `<name>-metadata` beside it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        erasure: Option<ErasureCoding>,
    },
    /// `cephsetpool`.
    Set {
        /// The pool.
        name: String,
        /// `(setting, value)`.
        settings: Vec<(String, String)>,
    },
    /// `cephdestroypool`.
    Destroy {
        /// The pool.
        name: String,
        /// Destroys it even when a storage holds images on it.
        force: bool,
        /// Removes the storages on it.
        remove_storages: bool,
        /// Removes an erasure-coded pool's profile too.
        #[serde(default = "yes")]
        remove_ecprofile: bool,
    },
}

impl Ceph {
    /// The pools, by id.
    pub fn pools(&self) -> &[Pool] {
        &self.pools
    }

    /// A pool by name.
    pub fn pool(&self, name: &str) -> Option<&Pool> {
        self.pools.iter().find(|p| p.name == name)
    }

    /// A pool by name, or `osd pool get`'s refusal.
    ///
    /// # Errors
    /// `mon_command failed - unrecognized pool '<name>'`.
    pub fn existing_pool(&self, name: &str) -> Result<&Pool> {
        self.pool(name).ok_or_else(|| unrecognized(name))
    }

    /// The `min_size` Ceph gives a pool of `size` replicas
    /// (`osd_pool_default_min_size`, or a majority without it).
    fn default_min_size(&self, size: u32) -> u32 {
        let conf = self
            .conf
            .as_ref()
            .and_then(|c| c.get("global", "osd_pool_default_min_size"))
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0);
        if conf == 0 {
            size - size / 2
        } else {
            conf.min(size)
        }
    }

    /// `osd pool create <name> <pg_num>`; nothing when it exists (Ceph
    /// answers `pool '<name>' already exists` and success).
    pub fn create_pool(&mut self, name: &str, pg_num: u32) {
        if self.pool(name).is_some() {
            return;
        }
        let size = self.pool_default("osd_pool_default_size");
        let id = self.pools.iter().map(|p| p.id).max().unwrap_or(0) + 1;
        let min_size = self.default_min_size(size);
        self.pools.push(Pool {
            id,
            name: name.to_string(),
            size,
            min_size,
            pg_num,
            pg_num_min: None,
            pg_autoscale_mode: "on".into(),
            applications: Vec::new(),
            target_size_bytes: None,
            target_size_ratio: None,
            ec: None,
        });
        self.osd_epoch += 1;
    }

    /// The settings of `osd pool get <name> all` that PVE compares to
    /// what it sets (the autoscaler's options only when set).
    ///
    /// # Errors
    /// The pool is unknown.
    pub fn pool_properties(&self, name: &str) -> Result<BTreeMap<&'static str, String>> {
        let p = self.existing_pool(name)?;
        let mut m = BTreeMap::new();
        m.insert("size", p.size.to_string());
        m.insert("min_size", p.min_size.to_string());
        m.insert("pg_num", p.pg_num.to_string());
        m.insert("pgp_num", p.pg_num.to_string());
        m.insert("crush_rule", p.crush_rule().to_string());
        if let Some(ec) = &p.ec {
            m.insert("erasure_code_profile", ec.profile.clone());
            m.insert("allow_ec_overwrites", ec.overwrites.to_string());
        }
        m.insert("pg_autoscale_mode", p.pg_autoscale_mode.clone());
        if let Some(v) = p.pg_num_min {
            m.insert("pg_num_min", v.to_string());
        }
        if let Some(v) = p.target_size_bytes {
            m.insert("target_size_bytes", v.to_string());
        }
        if let Some(v) = p.target_size_ratio {
            m.insert("target_size_ratio", num_text(v));
        }
        Ok(m)
    }

    /// One `osd pool set` (or `osd pool application enable`), with
    /// Ceph's refusals.
    ///
    /// # Errors
    /// `mon_command failed - <what the monitor says>`.
    pub fn set_pool_setting(&mut self, name: &str, setting: &str, value: &str) -> Result<()> {
        let size_one = self.size_one_allowed();
        let Some(i) = self.pools.iter().position(|p| p.name == name) else {
            return Err(unrecognized(name));
        };
        let int = || -> Result<i64> {
            value.parse::<i64>().map_err(|_| {
                mon_failed(format_args!(
                    "error parsing integer value '{value}': Expected option value to be integer, got '{value}'"
                ))
            })
        };
        let current_size = self.pools[i].size;
        let rules: Vec<String> = self.crush_rules().into_iter().map(|(_, r)| r).collect();
        let ec_k = self.pools[i]
            .ec
            .as_ref()
            .and_then(|e| self.ec_profile(&e.profile))
            .and_then(|p| p.get("k").and_then(|k| k.parse::<i64>().ok()));
        let new_min = match setting {
            "size" => Some(self.default_min_size(u32::try_from(int()?).unwrap_or(0))),
            _ => None,
        };
        let pool = &mut self.pools[i];
        match setting {
            "size" if pool.ec.is_some() => {
                return Err(mon_failed(
                    "can not change the size of an erasure-coded pool",
                ));
            }
            "min_size" if ec_k.is_some() => {
                let n = int()?;
                let k = ec_k.unwrap_or(1);
                if n < k || n > i64::from(current_size) {
                    return Err(mon_failed(format_args!(
                        "pool min_size must be between {k} and size, which is set to {current_size}"
                    )));
                }
                pool.min_size = u32::try_from(n).unwrap_or(1);
            }
            "allow_ec_overwrites" => {
                let on = matches!(value, "true" | "1" | "yes");
                let Some(ec) = pool.ec.as_mut() else {
                    return Err(mon_failed(
                        "ec overwrites can only be enabled for an erasure coded pool",
                    ));
                };
                if !on && ec.overwrites {
                    return Err(mon_failed("ec overwrites cannot be disabled once enabled"));
                }
                ec.overwrites = on;
            }
            "size" => {
                let n = int()?;
                if !(1..=10).contains(&n) {
                    return Err(mon_failed("pool size must be between 1 and 10"));
                }
                if n == 1 && !size_one {
                    return Err(mon_failed(
                        "configuring pool size as 1 is disabled by default.",
                    ));
                }
                pool.size = u32::try_from(n).unwrap_or(1);
                pool.min_size = new_min.unwrap_or(pool.min_size);
            }
            "min_size" => {
                let n = int()?;
                if n < 1 || n > i64::from(current_size) {
                    return Err(mon_failed(format_args!(
                        "pool min_size must be between 1 and size, which is set to {current_size}"
                    )));
                }
                pool.min_size = u32::try_from(n).unwrap_or(1);
            }
            "pg_num" => {
                let n = int()?;
                if n <= 0 {
                    return Err(mon_failed(format_args!("specified pg_num {n} <= 0")));
                }
                pool.pg_num = u32::try_from(n).unwrap_or(1);
            }
            "pg_num_min" => {
                let n = int()?;
                if n > i64::from(pool.pg_num) {
                    return Err(mon_failed(format_args!(
                        "specified pg_num_min {n} > pg_num {}",
                        pool.pg_num
                    )));
                }
                pool.pg_num_min = u32::try_from(n).ok();
            }
            "pg_autoscale_mode" => {
                if !matches!(value, "on" | "off" | "warn") {
                    return Err(mon_failed(format_args!("specified invalid mode {value}")));
                }
                pool.pg_autoscale_mode = value.to_string();
            }
            "crush_rule" => {
                if !rules.iter().any(|r| r == value) {
                    return Err(mon_failed(format_args!(
                        "crush rule {value} does not exist"
                    )));
                }
            }
            "application" => {
                if pool.applications.iter().any(|a| a == value) {
                    return Ok(());
                }
                if !pool.applications.is_empty() {
                    return Err(mon_failed(format_args!(
                        "Are you SURE? Pool '{name}' already has an enabled application; pass --yes-i-really-mean-it to proceed anyway"
                    )));
                }
                pool.applications.push(value.to_string());
            }
            "target_size_bytes" => {
                pool.target_size_bytes = u64::try_from(int()?).ok().filter(|n| *n > 0);
            }
            "target_size_ratio" => {
                let r: f64 = value.parse().map_err(|_| {
                    mon_failed(format_args!("error parsing floating point value '{value}'"))
                })?;
                if r < 0.0 {
                    return Err(mon_failed("target_size_ratio cannot be negative"));
                }
                pool.target_size_ratio = (r > 0.0).then_some(r);
            }
            other => {
                return Err(mon_failed(format_args!("unrecognized variable '{other}'")));
            }
        }
        self.osd_epoch += 1;
        Ok(())
    }

    /// Whether `mon_allow_pool_size_one` is set.
    fn size_one_allowed(&self) -> bool {
        let truthy = |v: &str| matches!(v, "true" | "1" | "yes");
        self.db
            .get("global")
            .or_else(|| self.db.get("mon"))
            .and_then(|m| m.get("mon_allow_pool_size_one"))
            .is_some_and(|v| truthy(v.as_str()))
            || self
                .conf
                .as_ref()
                .and_then(|c| c.get("global", "mon_allow_pool_size_one"))
                .is_some_and(truthy)
    }

    /// PVE's `set_pool`: `size` first (it resets `min_size`), then the
    /// rest sorted; an unchanged setting is skipped, a refused one
    /// printed; those not set make the task fail.
    ///
    /// # Errors
    /// The pool is unknown; `Could not set: <settings>`.
    pub fn set_pool(
        &mut self,
        name: &str,
        settings: &[(String, String)],
        out: &mut Vec<String>,
    ) -> Result<()> {
        let current = self.pool_properties(name)?;
        let mut keys: Vec<&(String, String)> =
            settings.iter().filter(|(k, _)| k != "size").collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(size) = settings.iter().find(|(k, _)| k == "size") {
            keys.insert(0, size);
        }
        let mut missing = Vec::new();
        for (k, v) in keys {
            if current.get(k.as_str()) == Some(v) {
                out.push(format!("skipping '{k}', did not change"));
                continue;
            }
            out.push(format!("pool {name}: applying {k} = {v}"));
            if let Err(e) = self.set_pool_setting(name, k, v) {
                out.push(e.to_string());
                missing.push(k.clone());
            }
        }
        if missing.is_empty() {
            Ok(())
        } else {
            missing.sort();
            Err(Error::failed(format!(
                "Could not set: {}",
                missing.join(", ")
            )))
        }
    }

    /// `osd pool delete <name> <name> --yes-i-really-really-mean-it`.
    ///
    /// # Errors
    /// Pool deletion is disabled (`mon_allow_pool_delete`).
    pub fn destroy_pool(&mut self, name: &str) -> Result<()> {
        let allowed = self
            .conf
            .as_ref()
            .and_then(|c| c.get("global", "mon_allow_pool_delete"))
            .is_some_and(|v| matches!(v, "true" | "1" | "yes"))
            || self
                .db
                .get("mon")
                .and_then(|m| m.get("mon_allow_pool_delete"))
                .is_some_and(|v| v == "true");
        if !allowed {
            return Err(mon_failed(
                "pool deletion is disabled; you must first set the mon_allow_pool_delete config option to true before you can destroy a pool",
            ));
        }
        let before = self.pools.len();
        self.pools.retain(|p| p.name != name);
        if self.pools.len() != before {
            self.osd_epoch += 1;
        }
        Ok(())
    }

    /// A pool as a scenario declares it (no task, no storage).
    ///
    /// # Errors
    /// A refused setting, in Ceph's words.
    pub fn declare_pool(&mut self, name: &str, settings: &[(String, String)]) -> Result<()> {
        if self.pool(name).is_some() {
            return Err(Error::failed(format!("pool '{name}' declared twice")));
        }
        self.create_pool(name, pg_num_of(settings));
        let mut out = Vec::new();
        self.set_pool(name, settings, &mut out)
    }

    /// What a pool task does on `node`, with `storage.cfg` at hand.
    pub(super) fn run_pool(
        &mut self,
        storages: &mut Storages,
        node: &str,
        op: &PoolOp,
        out: &mut Vec<String>,
    ) -> Result<()> {
        match op {
            PoolOp::Create {
                name,
                settings,
                add_storage,
                erasure,
            } => {
                self.rados(node)?;
                let (pool, data) = match erasure {
                    Some(ec) => (
                        format!("{name}-metadata"),
                        Some(self.ec_data_pool(name, ec, settings, out)?),
                    ),
                    None => (name.clone(), None),
                };
                let mut settings = settings.clone();
                if data.is_some() {
                    // the metadata pool should be ok with 32 PGs
                    settings.retain(|(k, _)| k != "pg_num");
                    settings.push(("pg_num".into(), "32".into()));
                }
                self.create_pool(&pool, pg_num_of(&settings));
                self.set_pool(&pool, &settings, out)?;
                if *add_storage {
                    let mut cfg = rbd_storage(&pool);
                    cfg.insert("storage".into(), name.clone());
                    if let Some(d) = data {
                        cfg.insert("data-pool".into(), d);
                    }
                    storages.create(&cfg).map_err(|e| {
                        Error::failed(format!(
                            "adding PVE storage for ceph pool '{name}' failed: {e}"
                        ))
                    })?;
                }
                Ok(())
            }
            PoolOp::Set { name, settings } => {
                self.rados(node)?;
                self.set_pool(name, settings, out)
            }
            PoolOp::Destroy {
                name,
                force,
                remove_storages,
                remove_ecprofile,
            } => {
                let on_pool = storages_of_pool(storages, name);
                if !force {
                    for sid in &on_pool {
                        out.push(format!("checking storage '{sid}' for RBD images.."));
                        let used = storages
                            .find(sid)
                            .is_some_and(|s| storages.volumes().on(s, node).next().is_some());
                        if used {
                            return Err(Error::failed(format!(
                                "ceph pool '{name}' still in use by storage '{sid}'"
                            )));
                        }
                    }
                }
                self.rados(node)?;
                let ec = self.existing_pool(name)?.ec.clone();
                self.destroy_pool(name)?;
                if let Some(ec) = ec {
                    out.push(format!(
                        "found erasure coded profile '{}', destroying its CRUSH rule",
                        ec.profile
                    ));
                    if *remove_ecprofile {
                        out.push(format!("destroying erasure coded profile '{}'", ec.profile));
                        if let Err(e) = self.remove_ec_profile(&ec.profile) {
                            out.push(format!("removing EC profile '{}' failed: {e}", ec.profile));
                        }
                    }
                }
                if *remove_storages {
                    for sid in &on_pool {
                        let external = storages
                            .find(sid)
                            .is_some_and(|s| s.options.contains_key("monhost"));
                        if !external {
                            let _ = storages.remove(sid);
                        }
                    }
                }
                Ok(())
            }
        }
    }
}

fn yes() -> bool {
    true
}

impl Ceph {
    /// The data pool of an erasure-coded create: the profile (made as
    /// `pve_ec_<name>` unless one is named), then `<name>-data` with the
    /// call's settings but `size`, `min_size` and `crush_rule`, and
    /// `allow_ec_overwrites`; answers its name.
    fn ec_data_pool(
        &mut self,
        name: &str,
        ec: &ErasureCoding,
        settings: &[(String, String)],
        out: &mut Vec<String>,
    ) -> Result<String> {
        let profile = match &ec.profile {
            Some(p) => p.clone(),
            None => {
                let p = profile_name(name);
                self.set_ec_profile(&p, ec).map_err(|e| {
                    Error::failed(format!("could not create erasure code profile '{p}': {e}"))
                })?;
                out.push(format!("created new erasure code profile '{p}'"));
                p
            }
        };
        let mut data: Vec<(String, String)> = settings
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "size" | "min_size" | "crush_rule"))
            .cloned()
            .collect();
        data.push(("allow_ec_overwrites".into(), "true".into()));
        let pool = format!("{name}-data");
        self.create_ec_pool(&pool, pg_num_of(&data), &profile)?;
        self.set_pool(&pool, &data, out)?;
        Ok(pool)
    }
}

/// The `rbd` storages on `pool` (PVE's `$get_storages`: its `pool`,
/// `rbd` when none is set, or its `data-pool`), sorted.
pub fn storages_of_pool(storages: &Storages, pool: &str) -> Vec<String> {
    let mut ids: Vec<String> = storages
        .cfg()
        .iter()
        .filter(|s| s.kind == "rbd")
        .filter(|s| {
            s.options.get("pool").map_or("rbd", String::as_str) == pool
                || s.options.get("data-pool").is_some_and(|d| d == pool)
        })
        .map(|s| s.storage.clone())
        .collect();
    ids.sort();
    ids
}

/// The `pg_num` a new pool starts with: the one asked, else Ceph's 128.
fn pg_num_of(settings: &[(String, String)]) -> u32 {
    settings
        .iter()
        .find(|(k, _)| k == "pg_num")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(128)
}

/// The `rbd` storage `add_storages` defines for pool `name` (its ID is
/// the pool's name).
pub fn rbd_storage(name: &str) -> BTreeMap<String, String> {
    [
        ("type", "rbd"),
        ("pool", name),
        ("storage", name),
        ("krbd", "0"),
        ("content", "rootdir,images"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}
