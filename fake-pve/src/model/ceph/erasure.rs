//! Erasure-coded pools (pve-manager `API2/Ceph/Pool.pm`'s
//! `erasure-coding`, `Ceph/Tools.pm`'s `create_ecprofile`,
//! `destroy_ecprofile`, `get_ecprofile_name`): the profiles the
//! monitors keep, a data pool coded over `k + m` chunks with its own
//! CRUSH rule, and the refusals of `osd pool set` on such a pool.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Ceph;
use super::pools::{Pool, mon_failed};
use crate::model::{Error, Result};

/// What `erasure-coding` asks: `k`, `m`, `failure-domain`,
/// `device-class`, or an existing `profile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErasureCoding {
    /// Data chunks.
    pub k: u32,
    /// Coding chunks.
    pub m: u32,
    /// The CRUSH failure domain (default `host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// The CRUSH device class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_class: Option<String>,
    /// An existing profile to use instead of a new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

impl ErasureCoding {
    /// Parses the property string as `$ec_format` does.
    ///
    /// # Errors
    /// 400 `erasure-coding`: a missing or bad `k`/`m`, an unknown key.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |m: String| Error::invalid("erasure-coding", m);
        let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
        for part in text.split(',').filter(|p| !p.is_empty()) {
            let Some((k, v)) = part.split_once('=') else {
                return Err(bad(
                    "invalid format - value without key, but schema does not define a default key"
                        .to_string(),
                ));
            };
            if !matches!(k, "k" | "m" | "failure-domain" | "device-class" | "profile") {
                return Err(bad(format!("invalid format - unexpected property '{k}'")));
            }
            fields.insert(k, v);
        }
        let int = |key: &str, min: u32| -> Result<u32> {
            let v = fields
                .get(key)
                .ok_or_else(|| bad(format!("invalid format - property '{key}' is missing")))?;
            let n: u32 = v.parse().map_err(|_| {
                bad(format!(
                    "invalid format - {key}: type check ('integer') failed - got '{v}'"
                ))
            })?;
            if n < min {
                return Err(bad(format!(
                    "invalid format - {key}: value must have a minimum value of {min}"
                )));
            }
            Ok(n)
        };
        Ok(Self {
            k: int("k", 2)?,
            m: int("m", 1)?,
            failure_domain: fields.get("failure-domain").map(|s| (*s).to_string()),
            device_class: fields.get("device-class").map(|s| (*s).to_string()),
            profile: fields.get("profile").map(|s| (*s).to_string()),
        })
    }
}

/// `get_ecprofile_name`: the profile PVE makes for pool `name`.
pub fn profile_name(name: &str) -> String {
    format!("pve_ec_{name}")
}

/// What an erasure-coded pool keeps besides a replicated one's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EcPool {
    /// Its profile.
    pub profile: String,
    /// The id of the CRUSH rule Ceph made for it (named after the pool).
    pub rule_id: u32,
    /// `allow_ec_overwrites` (RBD needs it).
    #[serde(default)]
    pub overwrites: bool,
}

impl Ceph {
    /// An erasure-code profile (`osd erasure-code-profile get`); Ceph's
    /// own `default` always exists.
    pub fn ec_profile(&self, name: &str) -> Option<BTreeMap<String, String>> {
        if let Some(p) = self.ec_profiles.get(name) {
            return Some(p.clone());
        }
        (name == "default").then(|| {
            [
                ("k", "2"),
                ("m", "2"),
                ("plugin", "jerasure"),
                ("technique", "reed_sol_van"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
        })
    }

    /// `create_ecprofile`: `osd erasure-code-profile set`.
    ///
    /// # Errors
    /// A profile of that name with other settings (Ceph will not
    /// override it).
    pub fn set_ec_profile(&mut self, name: &str, ec: &ErasureCoding) -> Result<()> {
        let mut profile: BTreeMap<String, String> = BTreeMap::new();
        profile.insert(
            "crush-failure-domain".into(),
            ec.failure_domain.clone().unwrap_or_else(|| "host".into()),
        );
        profile.insert("k".into(), ec.k.to_string());
        profile.insert("m".into(), ec.m.to_string());
        if let Some(c) = &ec.device_class {
            profile.insert("crush-device-class".into(), c.clone());
        }
        profile.insert("plugin".into(), "jerasure".into());
        profile.insert("technique".into(), "reed_sol_van".into());
        match self.ec_profile(name) {
            Some(old) if old != profile => Err(mon_failed(format_args!(
                "will not override erasure code profile {name} because the existing profile {} is different from the proposed profile {}",
                show(&old),
                show(&profile)
            ))),
            _ => {
                self.ec_profiles.insert(name.to_string(), profile);
                Ok(())
            }
        }
    }

    /// `destroy_ecprofile`: `osd erasure-code-profile rm`.
    ///
    /// # Errors
    /// The profile is used by a pool.
    pub fn remove_ec_profile(&mut self, name: &str) -> Result<()> {
        if let Some(p) = self
            .pools
            .iter()
            .find(|p| p.ec.as_ref().is_some_and(|e| e.profile == name))
        {
            return Err(mon_failed(format_args!("{name}: pool {} uses it", p.name)));
        }
        self.ec_profiles.remove(name);
        Ok(())
    }

    /// `osd pool create <name> <pg_num> erasure <profile>`: `k + m`
    /// chunks, `min_size` `k + 1` (`k` when `m` is 1), and a CRUSH rule
    /// named after the pool.
    ///
    /// # Errors
    /// The profile does not exist.
    pub fn create_ec_pool(&mut self, name: &str, pg_num: u32, profile: &str) -> Result<()> {
        if self.pool(name).is_some() {
            return Ok(());
        }
        let p = self.ec_profile(profile).ok_or_else(|| {
            mon_failed(format_args!(
                "specified erasure code profile {profile} does not exist"
            ))
        })?;
        let num = |k: &str| p.get(k).and_then(|v| v.parse::<u32>().ok()).unwrap_or(2);
        let (k, m) = (num("k"), num("m"));
        let id = self.pools.iter().map(|p| p.id).max().unwrap_or(0) + 1;
        let rule_id = self
            .pools
            .iter()
            .filter_map(|p| p.ec.as_ref().map(|e| e.rule_id))
            .max()
            .unwrap_or(0)
            + 1;
        self.pools.push(Pool {
            id,
            name: name.to_string(),
            size: k + m,
            min_size: k + 1.min(m.saturating_sub(1)),
            pg_num,
            pg_num_min: None,
            pg_autoscale_mode: "on".into(),
            applications: Vec::new(),
            target_size_bytes: None,
            target_size_ratio: None,
            ec: Some(EcPool {
                profile: profile.to_string(),
                rule_id,
                overwrites: false,
            }),
        });
        self.osd_epoch += 1;
        Ok(())
    }

    /// The CRUSH rules: `replicated_rule` (id 0), then each
    /// erasure-coded pool's, by id.
    pub fn crush_rules(&self) -> Vec<(u32, String)> {
        let mut rules = vec![(0, super::pools::REPLICATED_RULE.to_string())];
        let mut ec: Vec<(u32, String)> = self
            .pools
            .iter()
            .filter_map(|p| p.ec.as_ref().map(|e| (e.rule_id, p.name.clone())))
            .collect();
        ec.sort();
        rules.extend(ec);
        rules
    }
}

/// A profile as Ceph prints it in its refusal (`{k=2,m=1,...}`).
fn show(p: &BTreeMap<String, String>) -> String {
    let items: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", items.join(","))
}
