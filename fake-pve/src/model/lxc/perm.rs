//! Who may set which container option (pve-container `LXC.pm`
//! `check_ct_modify_config_perm`): the schema's permission check lets a
//! caller in with any `VM.Config.*` privilege; each option then needs its
//! own, and some are root@pam's alone.

use std::collections::BTreeMap;

use super::schema::{is_indexed_key, is_mount_key, is_storage_volume, mp_volume, new_disk};
use crate::model::Result;
use crate::model::access::AuthId;
use crate::model::access::tags::assert_tag_permissions;
use crate::model::guest_perm::Perms;
use crate::model::guest_perm::{check_net_bridge_access, check_volume_access, perm_exc};

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

impl Perms<'_> {
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
        self.check_ct_config_perm_in_pool(who, vmid, None, old, new, delete, unprivileged)
    }

    /// [`Perms::check_ct_modify_config_perm`] of a container made in
    /// `pool`: each privilege held on the pool will do as well as on the
    /// container (`check_vm_perm`).
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`; 500 `Only root can pass
    /// arbitrary filesystem paths.` for a mount point's volume given
    /// without a storage.
    #[allow(clippy::too_many_arguments)]
    pub fn check_ct_config_perm_in_pool(
        &self,
        who: &AuthId,
        vmid: u32,
        pool: Option<&str>,
        old: Option<&BTreeMap<String, String>>,
        new: &BTreeMap<String, String>,
        delete: &[String],
        unprivileged: bool,
    ) -> Result<()> {
        if crate::model::guest_perm::is_root_pam(who) {
            return Ok(());
        }
        let need = |p: &str| self.access.check_vm_perm(who, vmid, pool, &[p], false);
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
                        // `classify_mountpoint`: a device under /dev, a
                        // bind mount otherwise.
                        let kind = if vol.starts_with("/dev/") {
                            "device"
                        } else {
                            "bind"
                        };
                        return Err(perm_exc(&format!(
                            "mount point type {kind} is only allowed for root@pam"
                        )));
                    }
                    match new_disk(vol).filter(|_| is_storage_volume(vol)) {
                        Some((sid, _)) => self.access.check_perm(
                            who,
                            &format!("/storage/{sid}"),
                            &["Datastore.AllocateSpace"],
                        ),
                        // An existing volume (or a size alone, which is no
                        // volume ID): `check_volume_access` as `rootdir`.
                        None => check_volume_access(
                            self.access,
                            self.storage,
                            who,
                            Some(vmid),
                            vol,
                            Some("rootdir"),
                        ),
                    }
                }
                "tags" => {
                    let new_tags = if deleting {
                        Some("")
                    } else {
                        new.get(opt).map(String::as_str)
                    };
                    assert_tag_permissions(
                        self.access,
                        self.guests,
                        who,
                        vmid,
                        old.get(opt).map(String::as_str),
                        new_tags,
                    )
                }
                o if is_indexed_key(o, "net") => {
                    need("VM.Config.Network")?;
                    if let Some(v) = old.get(o) {
                        check_net_bridge_access(self.access, self.sdn, who, v)?;
                    }
                    match new.get(o) {
                        Some(v) if !deleting => {
                            check_net_bridge_access(self.access, self.sdn, who, v)
                        }
                        _ => Ok(()),
                    }
                }
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

impl Perms<'_> {
    /// The checks `clone_vm` of a container makes on the config cloned
    /// (its snapshot's with `snapname`): Datastore.AllocateSpace on the
    /// storage of each volume mount point (the target `storage` if
    /// given), SDN.Use on each network device's bridge.
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`.
    pub fn check_ct_clone_perm(
        &self,
        who: &AuthId,
        conf: &BTreeMap<String, String>,
        storage: Option<&str>,
    ) -> Result<()> {
        for (opt, value) in conf {
            if is_mount_key(opt) {
                let vol = mp_volume(value).unwrap_or_default();
                if !is_storage_volume(vol) {
                    continue;
                }
                let sid = storage.unwrap_or_else(|| vol.split(':').next().unwrap_or_default());
                self.access.check_perm(
                    who,
                    &format!("/storage/{sid}"),
                    &["Datastore.AllocateSpace"],
                )?;
            } else if is_indexed_key(opt, "net") {
                check_net_bridge_access(self.access, self.sdn, who, value)?;
            }
        }
        Ok(())
    }
}
