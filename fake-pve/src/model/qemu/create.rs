//! Creating a VM: the synchronous checks, the config with `lock: create`, and
//! the `qmcreate` task's effect that allocates the disks (qemu-server
//! `API2/Qemu.pm` `create_vm`, `create_disks`).

use super::*;

impl VmOps<'_> {
    /// The synchronous part of `create_vm`: refuses what PVE refuses
    /// before forking, then creates the config with `lock: create` and
    /// answers the task's worker.
    ///
    /// # Errors
    /// An existing VMID, unknown storages, storages without `images`.
    pub fn create_vm(&mut self, mut req: CreateRequest, rq: &mut Context) -> Result<Worker> {
        let vmid = req.vmid;
        if let Some((kind, node)) = self.guests.holder(vmid) {
            return Err(Error::exists(format!(
                "unable to create VM {vmid} - {kind} {vmid} already exists on node '{node}'"
            )));
        }
        if let Some(cd) = req.config.remove("cdrom") {
            req.config
                .insert("ide2".into(), format!("{cd},media=cdrom"));
        }
        self.check_storage_access(&req.config, req.storage.as_deref())?;
        // `import-from` needs `<storage>:0` (qemu-server API2/Qemu.pm,
        // check_drive_param).
        for (k, v) in &req.config {
            if is_drive_key(k) && v.split(',').any(|p| p.starts_with("import-from=")) {
                let file = v.split(',').next().unwrap_or_default();
                if new_disk(file).is_none_or(|(_, size)| size != 0.0) {
                    return Err(Error::invalid(
                        k.clone(),
                        "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>",
                    ));
                }
            }
        }
        let version = self.version;
        for (k, v) in &mut req.config {
            if !is_drive_key(k) {
                *v = canonical_new(version, k, v, rq)?;
            }
        }
        if let Some(tags) = req.config.get_mut("tags") {
            // `get_unique_tags` with datacenter.cfg's tag style.
            *tags = self.datacenter.tag_style(version).unique_tags(tags);
        }
        // The identities the VM gets when its task ends, drawn now so
        // that a replay of this request gives the same ones.
        let ids = CreateIds {
            smbios_uuid: uuid(rq),
            vmgenid: uuid(rq),
        };
        let mut lock = BTreeMap::new();
        lock.insert("lock".to_string(), "create".to_string());
        self.guests
            .insert(vmid, Vm::new(vmid, &req.node, VmStatus::Stopped, lock));
        Ok(
            Worker::new("qmcreate", &vmid.to_string()).effect(TaskEffect::Qemu {
                vmid,
                op: QemuOp::Create {
                    config: req.config,
                    storage: req.storage,
                    start: req.start,
                    ids,
                    pool: req.pool,
                },
            }),
        )
    }

    /// `check_storage_access`: new disks need an existing storage with
    /// `images` content.
    fn check_storage_access(
        &self,
        conf: &BTreeMap<String, String>,
        default_storage: Option<&str>,
    ) -> Result<()> {
        for (k, v) in conf {
            if !is_drive_key(k) || drive_is_cdrom(v) {
                continue;
            }
            let file = drive_file(v);
            if cloudinit_storage(file).is_some() {
                continue;
            }
            if let Some((sid, _)) = new_disk(file) {
                let Some(sid) = sid.or(default_storage) else {
                    return Err(Error::failed(
                        "no storage ID specified (and no default storage)",
                    ));
                };
                let s = self.storage.existing(sid)?;
                if !s.content.iter().any(|c| c == "images") {
                    return Err(Error::invalid(
                        "storage",
                        format!("storage '{sid}' does not support vm images"),
                    ));
                }
            } else if let Some((sid, _)) = parse_volid(file) {
                self.storage.existing(sid)?;
            }
        }
        Ok(())
    }

    /// Allocates the new disks among `drives`, as `create_disks` does;
    /// answers the printed drives and the allocated volids.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::model) fn create_disks(
        &mut self,
        vmid: u32,
        node: &str,
        drives: &BTreeMap<String, String>,
        default_storage: Option<&str>,
        existing: &BTreeMap<String, String>,
        now: i64,
        log: &mut Lines,
    ) -> std::result::Result<Created, (Lines, String)> {
        let version = self.version;
        let mut keys: Vec<&String> = drives.keys().filter(|k| is_drive_key(k)).collect();
        keys.sort_by_key(|k| drive_order(k));
        let mut out = BTreeMap::new();
        let mut vols = Vec::new();
        for key in keys {
            let value = &drives[key];
            let file = drive_file(value).to_string();
            let result: Result<String> = (|| {
                if file == "none" || file == "cdrom" || file.is_empty() {
                    return Ok(drive_with(version, key, value, &[], &["size"]));
                }
                if let Some(sid) = cloudinit_storage(&file) {
                    let sid = sid.or(default_storage).ok_or_else(|| {
                        Error::failed("no storage ID specified (and no default storage)")
                    })?;
                    if let Some(other) = existing
                        .iter()
                        .chain(out.iter())
                        .find(|(k, v)| *k != key && is_drive_key(k) && v.contains("-cloudinit"))
                    {
                        return Err(Error::exists(format!(
                            "{key} - cloud-init drive is already attached at '{}'",
                            other.0
                        )));
                    }
                    let fmt = if path_based(&self.storage.existing(sid)?.kind) {
                        Some("qcow2")
                    } else {
                        None
                    };
                    let (volid, lines) = self.storage.alloc_volume(
                        sid,
                        node,
                        vmid,
                        &VolumeKind::CloudInit,
                        fmt,
                        4 << 20,
                        now,
                    )?;
                    vols.push(volid.clone());
                    log.extend(lines);
                    let printed = drive_with(
                        version,
                        key,
                        value,
                        &[("file", &volid), ("media", "cdrom")],
                        &["format", "size"],
                    );
                    log.push(format!("{key}: successfully created disk '{printed}'"));
                    return Ok(printed);
                }
                if let Some((sid, gib)) = new_disk(&file) {
                    let sid = sid.or(default_storage).ok_or_else(|| {
                        Error::failed("no storage ID specified (and no default storage)")
                    })?;
                    let s = self.storage.existing(sid)?;
                    let is_path = path_based(&s.kind);
                    let size = match key.as_str() {
                        "efidisk0" => {
                            let small = value.contains("efitype=2m");
                            match (is_path, small) {
                                (true, true) => 128 << 10,
                                (true, false) => 540_672,
                                (false, _) => 4 << 20,
                            }
                        }
                        "tpmstate0" => 4 << 20,
                        _ => (gib * f64::from(1u32 << 30)) as u64,
                    };
                    // `import-from`: the new volume takes the source's size
                    // and content (`import_from_volid` in API2/Qemu.pm).
                    let import = value
                        .split(',')
                        .find_map(|p| p.strip_prefix("import-from="))
                        .map(str::to_string);
                    let size = match &import {
                        None => size,
                        Some(src) => {
                            if src.contains("cloudinit") {
                                return Err(Error::failed(format!(
                                    "cannot import from '{src}' - cannot import from cloudinit disk"
                                )));
                            }
                            self.storage
                                .volume(src, node)
                                .map(|v| v.size)
                                .or_else(|| self.storage.ova_disk_size(src, node))
                                .ok_or_else(|| {
                                    Error::failed(format!(
                                        "cannot import from '{src}' - could not get size of {src}"
                                    ))
                                })?
                        }
                    };
                    let fmt = value
                        .split(',')
                        .find_map(|p| p.strip_prefix("format="))
                        .map(str::to_string);
                    let (volid, lines) = self.storage.alloc_volume(
                        sid,
                        node,
                        vmid,
                        &VolumeKind::Disk,
                        fmt.as_deref(),
                        size,
                        now,
                    )?;
                    vols.push(volid.clone());
                    log.extend(lines);
                    if import.is_some() {
                        let total = qemu_clone_bytes(size);
                        log.push(format!("transferred 0.0 B of {total} (0.00%)"));
                        log.push(format!("transferred {total} of {total} (100.00%)"));
                    }
                    let size_text = propstring::format_size(&size.to_string());
                    let printed = drive_with(
                        version,
                        key,
                        value,
                        &[("file", &volid), ("size", &size_text)],
                        &["format", "import-from"],
                    );
                    log.push(format!("{key}: successfully created disk '{printed}'"));
                    return Ok(printed);
                }
                // An existing volume or path: kept, with its size if known.
                let size = self.storage.volume(&file, node).map(|v| v.size);
                Ok(match size {
                    Some(sz) if !drive_is_cdrom(value) => drive_with(
                        version,
                        key,
                        value,
                        &[("size", &propstring::format_size(&sz.to_string()))],
                        &[],
                    ),
                    _ => canonical(version, key, value)?,
                })
            })();
            match result {
                Ok(printed) => {
                    out.insert(key.clone(), printed);
                }
                Err(e) => {
                    let mut freed = Vec::new();
                    for v in &vols {
                        if let Some(lines) = self.storage.free_volume(v, node) {
                            freed.extend(lines);
                        }
                    }
                    return Err((freed, e.to_string()));
                }
            }
        }
        Ok((out, vols))
    }

    pub(in crate::model) fn finish_create(
        &mut self,
        vmid: u32,
        node: &str,
        job: CreateJob,
        now: i64,
    ) -> EffectResult {
        let CreateJob {
            config,
            storage,
            start,
            ids,
            pool,
        } = job;
        let storage = storage.as_deref();
        let emsg = format!("unable to create VM {vmid} -");
        let version = self.version;
        let mut log = Vec::new();
        let created = self.create_disks(
            vmid,
            node,
            &config,
            storage,
            &BTreeMap::new(),
            now,
            &mut log,
        );
        let (drives, _) = match created {
            Ok(d) => d,
            Err((freed, e)) => {
                log.extend(freed);
                self.guests.remove(&vmid);
                return Err((log, format!("{emsg} {e}")));
            }
        };
        let ids = ids.or_drawn(vmid, now);
        let mut conf = config;
        conf.extend(drives);
        conf.insert(
            "meta".into(),
            format!("creation-qemu={},ctime={now}", qemu_version(version)),
        );
        if !conf.contains_key("boot") {
            conf.insert("boot".into(), default_boot(&conf));
        }
        if !conf.contains_key("smbios1") {
            conf.insert("smbios1".into(), format!("uuid={}", ids.smbios_uuid));
        }
        if conf.get("vmgenid").is_none_or(|v| v == "1")
            && conf.get("arch").is_none_or(|a| a != "aarch64")
        {
            conf.insert("vmgenid".into(), ids.vmgenid);
        }
        if !conf.contains_key("machine") && is_windows(conf.get("ostype")) {
            let m = format!("pc-i440fx-{}", machine_version(version));
            log.push(format!(
                "pinning machine type to '{m}' for Windows guest OS"
            ));
            conf.insert("machine".into(), m);
        }
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config = conf;
        }
        if let Some(pool) = pool {
            self.access.pools_mut().add_vm(vmid, &pool);
        }
        if start.is_some() {
            log.push("Execute autostart".into());
        }
        Ok(log)
    }
}
