//! A guest's volumes as both kinds handle them when a disk moves, is
//! reassigned or rolled back (pve-guest-common `AbstractConfig.pm`:
//! `add_unused_volume`, `is_volume_in_use_by_snapshots`; the digest a
//! change expects). Where the kinds differ is said by [`VolumeKeys`]:
//! which config keys hold a volume.

use super::{Guest, Kind};
use crate::model::{Error, Result};

/// What PVE answers when a change names a digest the config no longer
/// has.
pub const MODIFIED: &str =
    "detected modified configuration - file changed by other user? Try again.";

/// Which config keys hold a storage volume.
pub trait VolumeKeys: Kind {
    /// The volume `key: value` holds, if it is a volume key (a VM's
    /// disk, not a CD-ROM; a container's root or mount point).
    fn volume_of<'v>(key: &str, value: &'v str) -> Option<&'v str>;
}

/// The highest `unusedN` a config may hold, plus one.
const MAX_UNUSED: u32 = 256;

impl<K: Kind> Guest<K> {
    /// The digest check of a change (`digest` given and not the
    /// config's).
    ///
    /// # Errors
    /// `detected modified configuration - ...`.
    pub(in crate::model) fn check_digest(&self, digest: Option<&str>) -> Result<()> {
        match digest {
            Some(d) if d != self.digest() => Err(Error::conflict(MODIFIED)),
            _ => Ok(()),
        }
    }

    /// `add_unused_volume`: the lowest free `unusedN` gets `volid`,
    /// unless an `unusedN` already names it; answers the key it took.
    pub(in crate::model) fn add_unused(&mut self, volid: &str) -> Option<String> {
        let keys = (0..MAX_UNUSED).map(|n| format!("unused{n}"));
        if keys
            .clone()
            .any(|k| self.config.get(&k).is_some_and(|v| v == volid))
        {
            return None;
        }
        let key = keys.into_iter().find(|k| !self.config.contains_key(k))?;
        self.config.insert(key.clone(), volid.to_string());
        Some(key)
    }
}

impl<K: VolumeKeys> Guest<K> {
    /// `is_volume_in_use_by_snapshots`.
    pub(in crate::model) fn volume_in_snapshots(&self, volid: &str) -> bool {
        self.snapshots
            .values()
            .any(|s| s.iter().any(|(k, v)| K::volume_of(k, v) == Some(volid)))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rstest::rstest;

    use super::*;
    use crate::model::guest::tests::conf;
    use crate::model::lxc::Ct;
    use crate::model::qemu::{Vm, VmStatus};

    #[rstest]
    #[case::first_free(&[("unused0", "a"), ("unused2", "c")], "b", Some("unused1"))]
    #[case::no_duplicate(&[("unused0", "a"), ("unused3", "b")], "b", None)]
    #[case::empty(&[], "b", Some("unused0"))]
    fn an_unused_volume_takes_the_lowest_free_slot_once(
        #[case] pairs: &[(&str, &str)],
        #[case] volid: &str,
        #[case] key: Option<&str>,
    ) {
        let mut ct = Ct::new(200, "pve", conf(pairs));
        assert_eq!(ct.add_unused(volid).as_deref(), key);
        let named = ct.config.values().filter(|v| *v == volid).count();
        assert_eq!(named, 1, "the volume is named exactly once");
    }

    #[rstest]
    fn a_digest_that_is_not_the_configs_is_refused() {
        let vm = Vm::new(100, "pve", VmStatus::Stopped, conf(&[("cores", "1")]));
        assert!(vm.check_digest(None).is_ok());
        assert!(vm.check_digest(Some(&vm.digest())).is_ok());
        assert_eq!(
            vm.check_digest(Some("0")).expect_err("changed").to_string(),
            MODIFIED
        );
    }

    #[rstest]
    #[case::vm_disk(true, "scsi0", "local-lvm:vm-100-disk-0,size=1G", true)]
    #[case::vm_cdrom(true, "ide2", "local-lvm:vm-100-disk-0,media=cdrom", false)]
    #[case::ct_mount_point(false, "mp0", "local-lvm:vm-100-disk-0,mp=/x", true)]
    #[case::ct_unused_is_no_mount(false, "unused0", "local-lvm:vm-100-disk-0", false)]
    fn a_snapshot_holds_the_volumes_of_its_volume_keys(
        #[case] vm: bool,
        #[case] key: &str,
        #[case] value: &str,
        #[case] held: bool,
    ) {
        let volid = "local-lvm:vm-100-disk-0";
        let snap = conf(&[(key, value)]);
        let found = if vm {
            let mut g = Vm::new(100, "pve", VmStatus::Stopped, BTreeMap::new());
            g.snapshots.insert("s".into(), snap);
            g.volume_in_snapshots(volid)
        } else {
            let mut g = Ct::new(100, "pve", BTreeMap::new());
            g.snapshots.insert("s".into(), snap);
            g.volume_in_snapshots(volid)
        };
        assert_eq!(found, held);
    }
}
