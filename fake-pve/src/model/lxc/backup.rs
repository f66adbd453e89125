//! What a backup needs of a container: the mount points it includes or
//! leaves out, and the `backup` lock (pve-container `LXC/Config.pm`
//! `get_backup_volumes`, `mountpoint_backup_enabled`; `VZDump/LXC.pm`
//! `lock_vm`, `unlock_vm`).

use std::collections::BTreeMap;

use super::schema::{is_mount_key, mp_volume};
use crate::model::guests::Guests;
use crate::model::{Error, Result};

/// A mount point as `get_backup_volumes` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupVolume {
    /// `rootfs` or `mpN`.
    pub key: String,
    /// The path in the container (`/` for `rootfs`).
    pub mp: String,
    /// The volume (`local-lvm:vm-200-disk-0`, a host path, a device).
    pub volume: String,
    /// `volume`, `bind` or `device`.
    pub kind: &'static str,
    /// Whether the backup includes it.
    pub included: bool,
    /// Why: `rootfs`, `enabled`, `disabled`, `not a volume`.
    pub reason: &'static str,
}

/// The mount point type of a volume: a storage volume, a device
/// (`/dev/...`) or a bind mount of a host path.
fn mount_kind(volume: &str) -> &'static str {
    if volume.starts_with("/dev/") {
        "device"
    } else if volume.starts_with('/') {
        "bind"
    } else {
        "volume"
    }
}

/// `get_backup_volumes`: `rootfs`, then the mount points in index order.
pub fn backup_volumes(conf: &BTreeMap<String, String>) -> Vec<BackupVolume> {
    let mut keys: Vec<&String> = conf.keys().filter(|k| is_mount_key(k)).collect();
    keys.sort_by_key(|k| {
        (
            k.as_str() != "rootfs",
            k.trim_start_matches("mp").parse::<u32>().unwrap_or(0),
        )
    });
    let mut out = Vec::new();
    for key in keys {
        let value = &conf[key];
        let Some(volume) = mp_volume(value).filter(|v| !v.is_empty()) else {
            continue;
        };
        let mp = if key == "rootfs" {
            "/".to_string()
        } else {
            match value.split(',').find_map(|p| p.strip_prefix("mp=")) {
                Some(p) => p.to_string(),
                None => continue,
            }
        };
        let kind = mount_kind(volume);
        let backup = value.split(',').any(|p| p == "backup=1");
        let (included, reason) = if key == "rootfs" {
            (true, "rootfs")
        } else if kind != "volume" {
            (false, "not a volume")
        } else if backup {
            (true, "enabled")
        } else {
            (false, "disabled")
        };
        out.push(BackupVolume {
            key: key.clone(),
            mp,
            volume: volume.to_string(),
            kind,
            included,
            reason,
        });
    }
    out
}

impl Guests {
    /// `set_lock`: the container must hold no lock; it takes `lock`.
    ///
    /// # Errors
    /// `CT is locked (<lock>)`, a missing container.
    pub(crate) fn lock_ct(&mut self, vmid: u32, lock: &str) -> Result<()> {
        let ct = self
            .ct_by_id_mut(vmid)
            .ok_or_else(|| Error::not_found(format!("unable to find VM '{vmid}'")))?;
        ct.check_lock()?;
        ct.config.insert("lock".into(), lock.to_string());
        Ok(())
    }

    /// `remove_lock`: drops `lock` if the container holds it.
    pub(crate) fn unlock_ct(&mut self, vmid: u32, lock: &str) {
        if let Some(ct) = self.ct_by_id_mut(vmid)
            && ct.lock() == Some(lock)
        {
            ct.config.remove("lock");
        }
    }

    /// A container a `stop` mode backup stopped runs again from `now_ms`.
    pub(crate) fn ct_started_again(&mut self, vmid: u32, now_ms: i64) {
        if let Some(ct) = self.ct_by_id_mut(vmid)
            && ct.running()
        {
            ct.set_running(now_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_volumes_follow_pves_rules() {
        let conf: BTreeMap<String, String> = [
            ("rootfs", "local-lvm:vm-200-disk-0,size=8G"),
            ("mp10", "local-lvm:vm-200-disk-3,mp=/z,backup=1,size=1G"),
            ("mp2", "local-lvm:vm-200-disk-1,mp=/data,size=2G"),
            ("mp1", "/srv/share,mp=/share"),
            ("hostname", "web"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let v = backup_volumes(&conf);
        let got: Vec<(&str, &str, &str, bool, &str)> = v
            .iter()
            .map(|b| (b.key.as_str(), b.mp.as_str(), b.kind, b.included, b.reason))
            .collect();
        assert_eq!(
            got,
            vec![
                ("rootfs", "/", "volume", true, "rootfs"),
                ("mp1", "/share", "bind", false, "not a volume"),
                ("mp2", "/data", "volume", false, "disabled"),
                ("mp10", "/z", "volume", true, "enabled"),
            ]
        );
    }
}
