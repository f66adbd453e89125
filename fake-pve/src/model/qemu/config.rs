//! Config updates and their pending changes: the checks made before
//! forking, applying and hot-plugging pending values, and the config views
//! (qemu-server `API2/Qemu.pm` `update_vm_api`, `vmconfig_apply_pending`,
//! `vmconfig_hotplug_pending`).

use super::*;
use crate::model::guests::Guests;
use crate::model::storage::Storages;

impl VmOps<'_> {
    /// Checks of an update that PVE makes before forking
    /// (`load_and_check_config`): digest and lock.
    ///
    /// # Errors
    /// `checksum mismatch (file change by other user?)`, `VM is locked`.
    pub fn check_update(&self, node: &str, vmid: u32, u: &ConfigUpdate) -> Result<()> {
        let vm = self.guests.vm(node, vmid)?;
        if vm.flock.held() {
            return Err(Error::locked(lock_timeout(vmid)));
        }
        if let Some(d) = &u.digest
            && *d != vm.digest()
        {
            return Err(Error::conflict(
                "checksum mismatch (file change by other user?)",
            ));
        }
        if !u.skiplock {
            vm.check_lock()?;
        }
        let mem = u
            .set
            .get("memory")
            .or_else(|| vm.pending.get("memory"))
            .or_else(|| vm.config.get("memory"))
            .and_then(|m| m.split(',').next())
            .and_then(|m| m.trim_start_matches("current=").parse::<u64>().ok())
            .unwrap_or(512);
        if let Some(b) = u.set.get("balloon").and_then(|b| b.parse::<u64>().ok())
            && b > mem
        {
            return Err(Error::failed(
                "balloon value too large (must be smaller than assigned memory)",
            ));
        }
        Ok(())
    }

    /// `update_vm_api`'s work under the config lock: writes the changes as
    /// pending, then applies them (stopped) or hot-plugs what it can
    /// (running).
    ///
    /// # Errors
    /// The checks of [`VmOps::check_update`]; 400 for hotplug problems.
    pub fn update_config(
        &mut self,
        node: &str,
        vmid: u32,
        u: &ConfigUpdate,
        now: i64,
    ) -> std::result::Result<Lines, (Lines, Error)> {
        let mut log = vec![u.log.clone()];
        self.check_update(node, vmid, u)
            .map_err(|e| (log.clone(), e))?;
        let version = self.version;
        let mut set = u.set.clone();
        if let Some(tags) = u.set.get("tags") {
            // `get_unique_tags` with datacenter.cfg's tag style.
            let style = self.datacenter.tag_style(version);
            set.insert("tags".into(), style.unique_tags(tags));
        }
        let mut delete = u.delete.clone();
        let (running, mut warns) = {
            let vm = self.guests.vm(node, vmid).map_err(|e| (log.clone(), e))?;
            let mut warns = Vec::new();
            for k in &u.revert {
                if let Some(v) = vm.config.get(k) {
                    set.insert(k.clone(), v.clone());
                } else if vm.pending.contains_key(k) {
                    delete.push(k.clone());
                }
            }
            for k in &delete {
                if !vm.config.contains_key(k) && !vm.pending.contains_key(k) {
                    warns.push(format!(
                        "cannot delete '{k}' - not set in current configuration!"
                    ));
                }
            }
            (vm.running(), warns)
        };
        log.append(&mut warns);
        // Deletions.
        for k in &delete {
            let Some(vm) = self.guests.get_mut(&vmid) else {
                break;
            };
            let Some(val) = vm.config.get(k).or_else(|| vm.pending.get(k)).cloned() else {
                continue;
            };
            let was_pending = vm.pending.remove(k).is_some();
            let protected = vm.config.get("protection").is_some_and(|p| p == "1");
            if k.starts_with("unused") {
                if protected {
                    return Err((
                        log,
                        Error::conflict(format!(
                            "can't remove unused disk '{val}' - protection mode enabled"
                        )),
                    ));
                }
                vm.config.remove(k);
                if let Some(l) = self.storage.free_volume(&val, node) {
                    log.extend(l);
                }
                continue;
            }
            if k == "tags" {
                vm.config.remove(k);
                continue;
            }
            if is_drive_key(k) {
                if protected {
                    return Err((
                        log,
                        Error::conflict(format!(
                            "can't remove drive '{k}' - protection mode enabled"
                        )),
                    ));
                }
                if was_pending {
                    // A pending drive that never became current: its
                    // volume becomes unused.
                    let file = drive_file(&val).to_string();
                    register_unused(self.guests, self.storage, node, vmid, &file);
                }
                if !self
                    .guests
                    .get(&vmid)
                    .is_some_and(|v| v.config.contains_key(k))
                {
                    continue;
                }
            }
            if let Some(vm) = self.guests.get_mut(&vmid)
                && vm.config.contains_key(k)
            {
                vm.pending_delete.insert(k.clone(), u.force);
            }
        }
        // Additions and changes.
        let mut drives: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in &set {
            if is_drive_key(k) {
                drives.insert(k.clone(), v.clone());
                continue;
            }
            if let Some(vm) = self.guests.get_mut(&vmid) {
                vm.pending.insert(k.clone(), v.clone());
                vm.pending_delete.remove(k);
            }
        }
        if !drives.is_empty() {
            let existing = self
                .guests
                .get(&vmid)
                .map(Vm::effective)
                .unwrap_or_default();
            let (created, _) = self
                .create_disks(vmid, node, &drives, None, &existing, now, &mut log)
                .map_err(|(lines, e)| {
                    let mut l = log.clone();
                    l.extend(lines);
                    (l, Error::failed(e))
                })?;
            for (k, v) in created {
                let old_pending = self
                    .guests
                    .get(&vmid)
                    .and_then(|vm| vm.pending.get(&k).cloned());
                if let Some(old) = old_pending {
                    let file = drive_file(&old).to_string();
                    if file != drive_file(&v) {
                        register_unused(self.guests, self.storage, node, vmid, &file);
                    }
                }
                if let Some(vm) = self.guests.get_mut(&vmid) {
                    vm.pending.insert(k.clone(), v);
                    vm.pending_delete.remove(&k);
                }
            }
        }
        // Drop pending values equal to the current ones.
        if let Some(vm) = self.guests.get_mut(&vmid) {
            let same: Vec<String> = vm
                .pending
                .iter()
                .filter(|(k, v)| vm.config.get(*k) == Some(*v))
                .map(|(k, _)| k.clone())
                .collect();
            for k in same {
                vm.pending.remove(&k);
            }
        }
        if running {
            self.hotplug_pending(vmid, &mut log)
                .map_err(|e| (log.clone(), e))?;
        } else {
            self.apply_pending(vmid, &mut log);
        }
        let _ = version;
        Ok(log)
    }

    /// `vmconfig_apply_pending`: everything pending becomes current.
    pub(in crate::model) fn apply_pending(&mut self, vmid: u32, log: &mut Lines) {
        let Some(vm) = self.guests.get_mut(&vmid) else {
            return;
        };
        let node = vm.node.clone();
        let deletes = std::mem::take(&mut vm.pending_delete);
        let pending = std::mem::take(&mut vm.pending);
        for (k, force) in deletes {
            self.apply_one(vmid, &node, &k, None, force, log);
        }
        for (k, v) in pending {
            self.apply_one(vmid, &node, &k, Some(v), false, log);
        }
    }

    /// Makes one pending change current, turning replaced or removed
    /// volumes into `unusedN` (or freeing them when forced).
    fn apply_one(
        &mut self,
        vmid: u32,
        node: &str,
        key: &str,
        value: Option<String>,
        force: bool,
        log: &mut Lines,
    ) {
        let old = self.guests.get_mut(&vmid).and_then(|vm| {
            let old = vm.config.remove(key);
            if let Some(v) = &value {
                vm.config.insert(key.to_string(), v.clone());
            }
            old
        });
        if let Some(old) = old
            && is_drive_key(key)
        {
            let file = drive_file(&old).to_string();
            if value.as_deref().map(drive_file) != Some(file.as_str()) {
                if drive_is_cdrom(&old)
                    && file.contains("-cloudinit")
                    && let Some(vm) = self.guests.get_mut(&vmid)
                {
                    vm.ci_changes.clear();
                }
                if force || drive_is_cdrom(&old) && file.contains("-cloudinit") {
                    if self
                        .storage
                        .volume(&file, node)
                        .is_some_and(|v| v.vmid == vmid)
                        && let Some(l) = self.storage.free_volume(&file, node)
                    {
                        log.extend(l);
                    }
                } else {
                    register_unused(self.guests, self.storage, node, vmid, &file);
                }
            }
        }
    }

    /// `vmconfig_hotplug_pending`: applies what a running VM can take,
    /// leaves the rest pending.
    fn hotplug_pending(&mut self, vmid: u32, log: &mut Lines) -> Result<()> {
        let Some(vm) = self.guests.get(&vmid) else {
            return Ok(());
        };
        let node = vm.node.clone();
        let features = vm.hotplug();
        let bridges = crate::model::sdn::node_bridges(self.nodes, self.sdn, &node);
        let mut errors = BTreeMap::new();
        let deletes: Vec<(String, bool)> = vm
            .pending_delete
            .iter()
            .map(|(k, f)| (k.clone(), *f))
            .collect();
        let pending: Vec<(String, String)> = vm
            .pending
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let live_ok = |key: &str, old: Option<&String>, new: Option<&String>| -> bool {
            if always_live(key) {
                return true;
            }
            let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
            match base {
                "net" => features.contains("network"),
                "usb" => {
                    features.contains("usb")
                        && vm
                            .config
                            .get("ostype")
                            .is_some_and(|o| o == "l26" || o.starts_with("win1") || o == "win8")
                }
                "scsi" | "virtio" => features.contains("disk"),
                "unused" => true,
                "ide" | "sata" => {
                    // Only a CD-ROM's medium changes live.
                    old.is_some_and(|o| drive_is_cdrom(o)) && new.is_some_and(|n| drive_is_cdrom(n))
                }
                "vcpus" => features.contains("cpu"),
                "memory" => features.contains("memory"),
                "tablet" => features.contains("usb"),
                // Changed live unless CPU or memory hotplug is (or is to
                // be) on.
                "hotplug" => {
                    let cpu_or_memory = |v: Option<&String>| {
                        v.is_some_and(|v| v.contains("cpu") || v.contains("memory"))
                    };
                    !cpu_or_memory(old) && !cpu_or_memory(new)
                }
                "agent" => false,
                _ => false,
            }
        };
        let live_deletes: Vec<(String, bool)> = deletes
            .into_iter()
            .filter(|(k, _)| live_ok(k, vm.config.get(k), None))
            .collect();
        let mut apply = Vec::new();
        for (k, v) in pending {
            let old = vm.config.get(&k);
            if !live_ok(&k, old, Some(&v)) {
                continue;
            }
            // `qemu_cpu_hotplug`: no more vCPUs than the sockets and
            // cores the VM runs with (a pending change of those waits
            // for the next start).
            if k == "vcpus" && v.parse::<u64>().is_ok_and(|n| n > vm.max_vcpus()) {
                errors.insert(
                    k.clone(),
                    "hotplug problem - you can't add more vcpus than maxcpus".to_string(),
                );
                continue;
            }
            if k.starts_with("net")
                && let Some(b) = v.split(',').find_map(|p| p.strip_prefix("bridge="))
                && !bridges.iter().any(|x| x == b)
            {
                errors.insert(
                    k.clone(),
                    format!("hotplug problem - bridge '{b}' does not exist"),
                );
                continue;
            }
            apply.push((k, v));
        }
        for (k, force) in live_deletes {
            let old = self
                .guests
                .get(&vmid)
                .and_then(|vm| vm.config.get(&k).cloned());
            self.guests.record_ci_change(vmid, &k, old.as_deref(), None);
            self.apply_one(vmid, &node, &k, None, force, log);
            if let Some(vm) = self.guests.get_mut(&vmid) {
                vm.pending_delete.remove(&k);
            }
        }
        for (k, v) in apply {
            let old = self.guests.get_mut(&vmid).and_then(|vm| {
                vm.pending.remove(&k);
                vm.config.get(&k).cloned()
            });
            self.guests
                .record_ci_change(vmid, &k, old.as_deref(), Some(&v));
            self.apply_one(vmid, &node, &k, Some(v), false, log);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(errors))
        }
    }
}

/// A VM's config views.
impl Guests {
    /// GET config: the effective config (or the current one), the
    /// cloud-init password hidden, with the digest.
    pub fn config_view(
        &self,
        version: PveVersion,
        node: &str,
        vmid: u32,
        current: bool,
    ) -> Result<ConfigView> {
        let vm = self.vm(node, vmid)?;
        let mut config = if current {
            vm.config.clone()
        } else {
            vm.effective()
        };
        if let Some(p) = config.get_mut("cipassword") {
            *p = HIDDEN.to_string();
        }
        Ok(ConfigView {
            version,
            config,
            digest: vm.digest(),
        })
    }

    /// GET pending: a row per config key (its pending value and deletion
    /// with it), the digest, then the keys only pending.
    pub fn pending_view(
        &self,
        version: PveVersion,
        node: &str,
        vmid: u32,
    ) -> Result<PendingView<'_>> {
        let vm = self.vm(node, vmid)?;
        let mut rows = Vec::new();
        for (k, val) in &vm.config {
            rows.push(PendingRow::Key {
                key: k,
                value: Some(hidden(k, val)),
                pending: vm.pending.get(k).map(|p| hidden(k, p)),
                delete: vm
                    .pending_delete
                    .get(k)
                    .map(|force| if *force { 2 } else { 1 }),
            });
        }
        rows.push(PendingRow::Digest(vm.digest()));
        for (k, p) in &vm.pending {
            if !vm.config.contains_key(k) {
                rows.push(PendingRow::Key {
                    key: k,
                    value: None,
                    pending: Some(hidden(k, p)),
                    delete: None,
                });
            }
        }
        Ok(PendingView { version, rows })
    }
}

/// What GET config shows for the cloud-init password.
const HIDDEN: &str = "**********";

/// A config value as the views show it: the cloud-init password hidden.
fn hidden<'a>(key: &str, value: &'a str) -> &'a str {
    if key == "cipassword" { HIDDEN } else { value }
}

/// GET config: the config's values (typed by the release's schema in the
/// answer) and its digest.
#[derive(Debug)]
pub struct ConfigView {
    /// The release whose schema types the values.
    pub version: PveVersion,
    /// The config shown.
    pub config: BTreeMap<String, String>,
    /// The config's digest.
    pub digest: String,
}

/// GET pending.
#[derive(Debug)]
pub struct PendingView<'a> {
    /// The release whose schema types the values.
    pub version: PveVersion,
    /// The rows, in PVE's order.
    pub rows: Vec<PendingRow<'a>>,
}

/// A row of GET pending.
#[derive(Debug)]
pub enum PendingRow<'a> {
    /// A config key: its value (absent when only pending), its pending
    /// value, and `1` (or `2`, forced) when its deletion is pending.
    Key {
        /// The config key.
        key: &'a str,
        /// Its value.
        value: Option<&'a str>,
        /// Its pending value.
        pending: Option<&'a str>,
        /// `1`, or `2` when forced, when its deletion is pending.
        delete: Option<u8>,
    },
    /// The config's digest.
    Digest(String),
}

/// Keys a running VM takes at once (`vmconfig_hotplug_pending`).
fn always_live(key: &str) -> bool {
    matches!(
        key,
        "name"
            | "description"
            | "onboot"
            | "protection"
            | "tags"
            | "startup"
            | "shares"
            | "hookscript"
            | "lock"
            | "migrate_downtime"
            | "migrate_speed"
            | "vmstatestorage"
            | "cpuunits"
            | "cpulimit"
            | "balloon"
    ) || is_cloudinit_option(key)
}

/// Records a volume of the VM as the next free `unusedN`, unless the
/// config still uses it.
pub(super) fn register_unused(
    guests: &mut Guests,
    storage: &mut Storages,
    node: &str,
    vmid: u32,
    volid: &str,
) {
    if storage.volume(volid, node).is_none_or(|v| v.vmid != vmid) {
        return;
    }
    if volid.contains("-cloudinit") {
        storage.free_volume(volid, node);
        return;
    }
    let Some(vm) = guests.get_mut(&vmid) else {
        return;
    };
    let used = vm.config.iter().chain(vm.pending.iter()).any(|(k, v)| {
        (is_drive_key(k) && drive_file(v) == volid) || (k.starts_with("unused") && v == volid)
    });
    if !used {
        vm.add_unused(volid);
    }
}
