//! Snapshots, as pve-guest-common's `AbstractConfig.pm` takes, lists,
//! rolls back and deletes them for both guest kinds
//! (`snapshot_create`, `snapshot_rollback`, `snapshot_delete`,
//! `__snapshot_copy_config`, `__snapshot_apply_config`). What differs
//! between a VM and a container (the names each reserves, which keys
//! hold volumes, what a list shows) is said by [`SnapshotKind`]; the
//! tasks that run these steps stay with each kind.

use std::collections::BTreeMap;

use super::{Guest, Kind};
use crate::model::PveVersion;
use crate::model::guests::Guests;
use crate::model::storage::Storages;
use crate::model::storage::ops::Feature;
use crate::model::{Error, Result};

/// What taking, rolling back and deleting a snapshot reads and changes:
/// the guests, and the storages that hold their volumes (and a VM's
/// saved state). The steps of each kind are its methods
/// (`qemu::snapshot`, `lxc::snapshot`).
pub struct Snapshots<'a> {
    /// The guests.
    pub(in crate::model) guests: &'a mut Guests,
    /// The storages.
    pub(in crate::model) storage: &'a mut Storages,
    /// The release (feature checks, the running machine).
    pub(in crate::model) version: PveVersion,
}

/// Where a guest kind's snapshots differ.
pub trait SnapshotKind: Kind {
    /// The name a reserved snapshot name is refused as (`current`, and
    /// QEMU's `pending` in any case, LXC's `vzdump`), if `name` is one.
    fn reserved_snapshot_name(name: &str) -> Option<&str>;

    /// Keys `__snapshot_copy_config` leaves out beside the shared ones
    /// (`snapstate`, `snaptime`, `vmstate`, `lock`, `digest`,
    /// `description`).
    fn not_copied(key: &str) -> bool;

    /// The storage volumes a snapshot of `conf` covers, by config key
    /// (a VM's disks, a container's mount points), in PVE's order.
    fn snapshot_volumes(conf: &BTreeMap<String, String>) -> Vec<(String, String)>;

    /// Whether a list item says `vmstate` (QEMU's do).
    const LISTS_VMSTATE: bool;

    /// Whether an empty `parent` is listed (LXC's list shows any
    /// defined parent, QEMU's a true one).
    const LISTS_EMPTY_PARENT: bool;

    /// Keys a rollback drops from the config it restores (QEMU's
    /// running machine and CPU).
    const DROPPED_ON_ROLLBACK: &'static [&'static str] = &[];
}

/// One snapshot of `GET .../snapshot`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotItem<'a> {
    /// Its name.
    pub name: &'a str,
    /// When it was taken (0 when unknown).
    pub snaptime: i64,
    /// Whether it holds the VM's RAM (`None`: the kind does not say).
    pub vmstate: Option<bool>,
    /// Its description (empty when none).
    pub description: &'a str,
    /// The snapshot it was taken after.
    pub parent: Option<&'a str>,
    /// `prepare` or `delete` while a task works on it.
    pub snapstate: Option<&'a str>,
}

/// The `current` entry that ends the list: where the guest is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentItem<'a> {
    /// The config's digest.
    pub digest: String,
    /// Whether the guest runs.
    pub running: bool,
    /// The snapshot the current state was taken after.
    pub parent: Option<&'a str>,
}

/// `GET .../snapshot`: every snapshot by name, then `current`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotList<'a> {
    /// The snapshots, by name.
    pub snapshots: Vec<SnapshotItem<'a>>,
    /// Where the guest is now.
    pub current: CurrentItem<'a>,
}

/// The shared keys `__snapshot_copy_config` leaves out.
fn never_copied(key: &str) -> bool {
    matches!(
        key,
        "snapstate" | "snaptime" | "vmstate" | "lock" | "digest" | "description"
    )
}

/// Whether `__snapshot_copy_config` copies `key` for guests of kind `K`.
pub(in crate::model) fn copied<K: SnapshotKind>(key: &str) -> bool {
    !never_copied(key) && !K::not_copied(key)
}

/// `snapshot_create`'s refusal of a reserved name.
///
/// # Errors
/// `unable to use snapshot name '<name>' (reserved name)`.
pub fn check_name<K: SnapshotKind>(name: &str) -> Result<()> {
    match K::reserved_snapshot_name(name) {
        Some(r) => Err(Error::failed(format!(
            "unable to use snapshot name '{r}' (reserved name)"
        ))),
        None => Ok(()),
    }
}

/// The name of a volume's logical volume (`vm-100-disk-0` of
/// `local-lvm:vm-100-disk-0`).
pub(in crate::model) fn lv_name(volid: &str) -> &str {
    let name = volid.split_once(':').map_or(volid, |(_, n)| n);
    name.rsplit('/').next().unwrap_or(name)
}

/// The logical volume behind `volid` when its storage is LVM-thin (the
/// only kind whose snapshot steps print lines of their own).
pub(in crate::model) fn thin_lv<'v>(storage: &Storages, volid: &'v str) -> Option<&'v str> {
    let (sid, _) = volid.split_once(':')?;
    (storage.find(sid)?.kind == "lvmthin").then(|| lv_name(volid))
}

/// Whether a volume among `volumes` lacks the snapshot feature
/// (`snapshot feature is not available`).
pub(in crate::model) fn feature_missing(
    storage: &Storages,
    volumes: &[(String, String)],
    v9: bool,
) -> bool {
    volumes
        .iter()
        .any(|(_, v)| !storage.volume_has_feature(Feature::Snapshot, v, false, v9))
}

impl<K: SnapshotKind> Guest<K> {
    /// `snapshot_create`'s checks on the guest, as the task's failure:
    /// a template, a lock, a name already used.
    pub(in crate::model) fn snapshot_refusal(&self, name: &str) -> Option<String> {
        if self.template() {
            return Some("you can't take a snapshot if it's a template".into());
        }
        if let Err(e) = self.check_lock() {
            return Some(e.to_string());
        }
        if self.snapshots.contains_key(name) {
            return Some(format!("snapshot name '{name}' already used"));
        }
        None
    }

    /// The volumes a snapshot of the current config covers.
    pub(in crate::model) fn snapshot_volumes(&self) -> Vec<(String, String)> {
        K::snapshot_volumes(&self.config)
    }

    /// `__snapshot_copy_config` of the current config.
    pub(in crate::model) fn snapshot_copy(&self) -> BTreeMap<String, String> {
        self.config
            .iter()
            .filter(|(k, _)| copied::<K>(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The prepare step of `snapshot_create`: `snap` becomes the section
    /// `name` in state `prepare`, and the config takes the `snapshot`
    /// lock.
    pub(in crate::model) fn begin_snapshot(
        &mut self,
        name: &str,
        mut snap: BTreeMap<String, String>,
        description: Option<String>,
        now: i64,
    ) {
        snap.insert("snapstate".into(), "prepare".into());
        snap.insert("snaptime".into(), now.to_string());
        if let Some(d) = description.filter(|d| !d.is_empty()) {
            snap.insert("description".into(), d);
        }
        self.config.insert("lock".into(), "snapshot".into());
        self.snapshots.insert(name.to_string(), snap);
    }

    /// `__snapshot_commit`.
    ///
    /// # Errors
    /// `missing snapshot lock`, `snapshot '<name>' does not exist`.
    pub(in crate::model) fn commit_snapshot(
        &mut self,
        name: &str,
    ) -> std::result::Result<(), String> {
        crate::model::guests::commit_snapshot(&mut self.config, &mut self.snapshots, name)
            .map_err(|e| e.to_string())
    }

    /// Undoes a snapshot whose task failed or was stopped; answers the
    /// section removed.
    pub(in crate::model) fn abort_snapshot(
        &mut self,
        name: &str,
    ) -> Option<BTreeMap<String, String>> {
        crate::model::guests::abort_snapshot(&mut self.config, &mut self.snapshots, name)
    }

    /// A snapshot's section.
    ///
    /// # Errors
    /// `snapshot '<name>' does not exist`.
    pub fn snapshot(&self, name: &str) -> Result<&BTreeMap<String, String>> {
        self.snapshots
            .get(name)
            .ok_or_else(|| Error::not_found(format!("snapshot '{name}' does not exist")))
    }

    /// A snapshot's section, to change.
    ///
    /// # Errors
    /// `snapshot '<name>' does not exist`.
    pub(in crate::model) fn snapshot_mut(
        &mut self,
        name: &str,
    ) -> Result<&mut BTreeMap<String, String>> {
        self.snapshots
            .get_mut(name)
            .ok_or_else(|| Error::not_found(format!("snapshot '{name}' does not exist")))
    }

    /// `GET .../snapshot`.
    pub fn snapshot_list(&self) -> SnapshotList<'_> {
        let snapshots = self
            .snapshots
            .iter()
            .map(|(name, s)| SnapshotItem {
                name,
                snaptime: s
                    .get("snaptime")
                    .and_then(|t| t.parse::<i64>().ok())
                    .unwrap_or(0),
                vmstate: K::LISTS_VMSTATE
                    .then(|| s.get("vmstate").is_some_and(|v| !v.is_empty() && v != "0")),
                description: s.get("description").map_or("", String::as_str),
                parent: listed_parent::<K>(s),
                snapstate: s.get("snapstate").map(String::as_str),
            })
            .collect();
        SnapshotList {
            snapshots,
            current: CurrentItem {
                digest: self.digest(),
                running: self.running(),
                parent: listed_parent::<K>(&self.config),
            },
        }
    }

    /// `__snapshot_apply_config`: the config a rollback to `snap`
    /// restores (the current description and unused volumes kept, the
    /// snapshot's keys copied, `parent` set to it).
    pub(in crate::model) fn rollback_config(
        &self,
        name: &str,
        snap: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let mut conf: BTreeMap<String, String> = self
            .config
            .iter()
            .filter(|(k, _)| is_unused_key(k) || *k == "description")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, v) in snap {
            if copied::<K>(k) {
                conf.insert(k.clone(), v.clone());
            }
        }
        conf.insert("parent".into(), name.to_string());
        for k in K::DROPPED_ON_ROLLBACK {
            conf.remove(*k);
        }
        conf
    }

    /// The end of `snapshot_delete`: the section goes, and whatever
    /// named it as parent (the config, other snapshots) names its parent
    /// instead. Answers the section removed.
    pub(in crate::model) fn remove_snapshot(
        &mut self,
        name: &str,
    ) -> Option<BTreeMap<String, String>> {
        let snap = self.snapshots.remove(name)?;
        let parent = snap.get("parent").filter(|p| !p.is_empty()).cloned();
        let relink = |c: &mut BTreeMap<String, String>| {
            if c.get("parent").is_some_and(|p| p == name) {
                match &parent {
                    Some(p) => c.insert("parent".into(), p.clone()),
                    None => c.remove("parent"),
                };
            }
        };
        relink(&mut self.config);
        for s in self.snapshots.values_mut() {
            relink(s);
        }
        Some(snap)
    }
}

/// The `parent` a list shows for a section.
fn listed_parent<K: SnapshotKind>(c: &BTreeMap<String, String>) -> Option<&str> {
    c.get("parent")
        .map(String::as_str)
        .filter(|p| K::LISTS_EMPTY_PARENT || !p.is_empty())
}

/// `unusedN`.
fn is_unused_key(k: &str) -> bool {
    k.strip_prefix("unused")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::model::guest::tests::conf;
    use crate::model::lxc::{Ct, Lxc};
    use crate::model::qemu::{Qemu, Vm, VmStatus};

    #[rstest]
    #[case::vm_current("current", Some("current"))]
    #[case::vm_pending_any_case("PenDing", Some("pending"))]
    #[case::vm_vzdump_is_free("vzdump", None)]
    fn a_vm_reserves_current_and_pending(#[case] name: &str, #[case] reserved: Option<&str>) {
        assert_eq!(Qemu::reserved_snapshot_name(name), reserved);
        assert_eq!(check_name::<Qemu>(name).is_err(), reserved.is_some());
    }

    #[rstest]
    #[case::ct_current("current", true)]
    #[case::ct_vzdump("vzdump", true)]
    #[case::ct_pending_is_free("pending", false)]
    fn a_container_reserves_current_and_vzdump(#[case] name: &str, #[case] reserved: bool) {
        let r = check_name::<Lxc>(name);
        assert_eq!(r.is_err(), reserved);
        if reserved {
            assert_eq!(
                r.expect_err("reserved").to_string(),
                format!("unable to use snapshot name '{name}' (reserved name)")
            );
        }
    }

    #[rstest]
    fn taking_a_snapshot_copies_the_config_and_locks_it() {
        let mut vm = Vm::new(
            100,
            "pve",
            VmStatus::Stopped,
            conf(&[
                ("cores", "2"),
                ("unused0", "local:x"),
                ("description", "d"),
                ("digest", "x"),
            ]),
        );
        assert_eq!(vm.snapshot_refusal("s1"), None);
        let copy = vm.snapshot_copy();
        assert_eq!(copy, conf(&[("cores", "2")]));
        vm.begin_snapshot("s1", copy, Some(String::new()), 7);
        assert_eq!(vm.lock(), Some("snapshot"));
        assert_eq!(
            vm.snapshot("s1").expect("s1"),
            &conf(&[("cores", "2"), ("snapstate", "prepare"), ("snaptime", "7")])
        );
        assert_eq!(
            vm.snapshot_refusal("s2").as_deref(),
            Some("VM is locked (snapshot)")
        );
        vm.commit_snapshot("s1").expect("commit");
        assert_eq!(vm.config.get("parent").map(String::as_str), Some("s1"));
        assert_eq!(
            vm.snapshot_refusal("s1").as_deref(),
            Some("snapshot name 's1' already used")
        );
    }

    #[rstest]
    fn a_template_takes_no_snapshot() {
        let ct = Ct::new(200, "pve", conf(&[("template", "1")]));
        assert_eq!(
            ct.snapshot_refusal("s").as_deref(),
            Some("you can't take a snapshot if it's a template")
        );
    }

    #[rstest]
    fn an_aborted_snapshot_leaves_nothing() {
        let mut ct = Ct::new(200, "pve", conf(&[("memory", "512")]));
        let copy = ct.snapshot_copy();
        ct.begin_snapshot("s", copy, None, 1);
        assert!(ct.abort_snapshot("s").is_some());
        assert!(ct.snapshots.is_empty());
        assert_eq!(ct.lock(), None);
    }

    #[rstest]
    fn deleting_a_snapshot_relinks_its_children_to_its_parent() {
        let mut ct = Ct::new(200, "pve", conf(&[("parent", "b")]));
        ct.snapshots.insert("a".into(), conf(&[("parent", "")]));
        ct.snapshots.insert("b".into(), conf(&[("parent", "a")]));
        ct.snapshots.insert("c".into(), conf(&[("parent", "b")]));
        assert!(ct.remove_snapshot("b").is_some());
        assert_eq!(ct.config.get("parent").map(String::as_str), Some("a"));
        assert_eq!(
            ct.snapshots["c"].get("parent").map(String::as_str),
            Some("a")
        );
        assert!(ct.remove_snapshot("a").is_some(), "its parent is empty");
        assert_eq!(ct.config.get("parent"), None);
        assert_eq!(ct.snapshots["c"].get("parent"), None);
        assert!(ct.remove_snapshot("a").is_none());
    }

    #[rstest]
    fn a_rollback_keeps_the_description_and_unused_volumes() {
        let mut vm = Vm::new(
            100,
            "pve",
            VmStatus::Running,
            conf(&[
                ("cores", "8"),
                ("description", "now"),
                ("unused0", "local:u"),
            ]),
        );
        let snap = conf(&[
            ("cores", "2"),
            ("snaptime", "1"),
            ("vmstate", "local:state"),
            ("runningmachine", "pc"),
            ("description", "then"),
        ]);
        vm.snapshots.insert("s".into(), snap.clone());
        assert_eq!(
            vm.rollback_config("s", &snap),
            conf(&[
                ("cores", "2"),
                ("description", "now"),
                ("parent", "s"),
                ("unused0", "local:u"),
            ])
        );
    }

    #[rstest]
    #[case::vm_hides_an_empty_parent(false)]
    #[case::ct_shows_it(true)]
    fn a_list_ends_with_current(#[case] container: bool) {
        let mut c = conf(&[("parent", "")]);
        c.insert("memory".into(), "512".into());
        let s = conf(&[("snaptime", "5"), ("parent", ""), ("snapstate", "delete")]);
        let (items, current, digest) = if container {
            let mut ct = Ct::new(200, "pve", c);
            ct.snapshots.insert("s".into(), s);
            let l = ct.snapshot_list();
            (
                format!("{:?}", l.snapshots),
                format!("{:?}", l.current.parent),
                (l.current.digest.clone(), ct.digest()),
            )
        } else {
            let mut vm = Vm::new(100, "pve", VmStatus::Running, c);
            vm.snapshots.insert("s".into(), s);
            let l = vm.snapshot_list();
            assert!(l.current.running);
            (
                format!("{:?}", l.snapshots),
                format!("{:?}", l.current.parent),
                (l.current.digest.clone(), vm.digest()),
            )
        };
        assert_eq!(digest.0, digest.1);
        let parent = if container { "Some(\"\")" } else { "None" };
        let vmstate = if container { "None" } else { "Some(false)" };
        assert_eq!(
            items,
            format!(
                "[SnapshotItem {{ name: \"s\", snaptime: 5, vmstate: {vmstate}, description: \"\", parent: {parent}, snapstate: Some(\"delete\") }}]"
            )
        );
        assert_eq!(current, parent);
    }
}
