//! Who may set which container option (pve-container `LXC.pm`
//! `check_ct_modify_config_perm`): the schema's permission check lets a
//! caller in with any `VM.Config.*` privilege; each option then needs its
//! own, and some are root@pam's alone.

use std::collections::BTreeMap;

use super::schema::{is_indexed_key, is_mount_key, is_storage_volume, mp_volume, new_disk};
use crate::model::access::AuthId;
use crate::model::cluster::Cluster;
use crate::model::{Error, Result};

/// `raise_perm_exc`: 403 `Permission check failed (<what>)`.
fn perm_exc(what: &str) -> Error {
    Error::Forbidden(format!("Permission check failed ({what})"))
}

/// The feature flags of a `features` value that are on, by name.
fn features(value: Option<&String>) -> BTreeMap<String, String> {
    value
        .map(|v| {
            v.split(',')
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

impl Cluster {
    /// `check_ct_modify_config_perm`: each option set (`new`) or deleted
    /// needs its privilege on `/vms/<vmid>`; mount points need room on
    /// their storage; bind mounts, devices, hook scripts and most feature
    /// flags are root@pam's.
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`.
    pub fn check_ct_modify_config_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        old: Option<&BTreeMap<String, String>>,
        new: &BTreeMap<String, String>,
        delete: &[String],
        unprivileged: bool,
    ) -> Result<()> {
        if who.to_string() == "root@pam" {
            return Ok(());
        }
        let vm = format!("/vms/{vmid}");
        let need = |p: &str| self.access.check_perm(who, &vm, &[p]);
        let empty = BTreeMap::new();
        let old = old.unwrap_or(&empty);
        let check = |opt: &str, deleting: bool| -> Result<()> {
            match opt {
                "cores" | "cpuunits" | "cpulimit" => need("VM.Config.CPU"),
                "memory" | "swap" => need("VM.Config.Memory"),
                "nameserver" | "searchdomain" | "hostname" => need("VM.Config.Network"),
                "hookscript" => Err(perm_exc(
                    "changing the hookscript is only allowed for root@pam",
                )),
                "features" => {
                    if !unprivileged {
                        return Err(perm_exc(
                            "changing feature flags for privileged container is only allowed for root@pam",
                        ));
                    }
                    let before = features(old.get(opt));
                    let after = if deleting {
                        BTreeMap::new()
                    } else {
                        features(new.get(opt))
                    };
                    let changed: Vec<&String> = before
                        .keys()
                        .chain(after.keys())
                        .filter(|k| before.get(*k) != after.get(*k))
                        .collect();
                    if changed.iter().any(|k| *k != "nesting") {
                        return Err(perm_exc(
                            "changing feature flags (except nesting) is only allowed for root@pam",
                        ));
                    }
                    if changed.is_empty() {
                        Ok(())
                    } else {
                        need("VM.Allocate")
                    }
                }
                o if is_mount_key(o) => {
                    need("VM.Config.Disk")?;
                    if deleting {
                        return Ok(());
                    }
                    let value = new.get(o).map_or("", String::as_str);
                    let vol = mp_volume(value).unwrap_or_default();
                    if vol.starts_with('/') {
                        return Err(perm_exc(
                            "mount point type bind is only allowed for root@pam",
                        ));
                    }
                    if !is_storage_volume(vol) {
                        // `SIZE` alone: the default storage, checked by
                        // the create call itself.
                        return Ok(());
                    }
                    let sid = new_disk(vol)
                        .map(|(s, _)| s)
                        .unwrap_or_else(|| vol.split(':').next().unwrap_or_default());
                    self.access.check_perm(
                        who,
                        &format!("/storage/{sid}"),
                        &["Datastore.AllocateSpace"],
                    )
                }
                "tags" => {
                    let new_tags = if deleting {
                        Some("")
                    } else {
                        new.get(opt).map(String::as_str)
                    };
                    self.assert_tag_permissions(
                        who,
                        vmid,
                        old.get(opt).map(String::as_str),
                        new_tags,
                    )
                }
                o if is_indexed_key(o, "net") => need("VM.Config.Network"),
                o if is_indexed_key(o, "dev") => Err(perm_exc(
                    "configuring device passthrough is only allowed for root@pam",
                )),
                _ => need("VM.Config.Options"),
            }
        };
        for opt in new.keys() {
            check(opt, false)?;
        }
        for opt in delete {
            check(opt, true)?;
        }
        Ok(())
    }
}
