//! Who may create, restore, clone or reconfigure a VM with which options
//! (qemu-server `API2/Qemu.pm`: `create_vm`'s own checks,
//! `check_vm_modify_config_perm`, `check_storage_access`,
//! `check_storage_access_clone`, the `check_*_perm` of serial ports, USB,
//! PCI, RNG and virtiofs devices, `check_cpu_model_access`, and
//! `QemuServer::check_bridge_access` / `check_mapping_access`).
//!
//! The schema lets everyone into `create_vm` (`user: all`) and anyone
//! with one `VM.Config.*` privilege into `update_vm`; these checks decide.
//! root@pam skips those PVE short-circuits for it and holds every
//! privilege for the others; root's tokens are checked like anyone.

use std::collections::BTreeMap;

use super::schema::{cloudinit_storage, drive_file, drive_is_cdrom, is_drive_key, new_disk};
use crate::model::access::AuthId;
use crate::model::guest_perm::Perms;
use crate::model::guest_perm::{
    check_net_bridge_access, check_volume_access, is_root_pam, perm_denied, prop_value,
};
use crate::model::storage::content::vtype;
use crate::model::storage::parse_volid;
use crate::model::{Error, Result};

/// What a config option needs, as `check_vm_modify_config_perm` sorts
/// the options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionPriv {
    /// Checked elsewhere, by value (drives, serial, USB, PCI, virtiofs,
    /// unused volumes, tags).
    Elsewhere,
    /// Every privilege listed, on the VM (or its pool).
    All(&'static [&'static str]),
    /// One of the privileges listed.
    Any(&'static [&'static str]),
    /// `VM.Config.Options`, and for `startup` Sys.Modify on `/` too.
    Options,
    /// root@pam's alone: `only root can set '<opt>' config`.
    RootOnly,
}

const CPU_OPTIONS: &[&str] = &[
    "cores",
    "cpu",
    "runningcpu",
    "cpulimit",
    "cpuunits",
    "numa",
    "smp",
    "sockets",
    "vcpus",
];
const MEMORY_OPTIONS: &[&str] = &["memory", "balloon", "shares", "allow-ksm"];
const HWTYPE_OPTIONS: &[&str] = &[
    "acpi",
    "hotplug",
    "kvm",
    "machine",
    "runningmachine",
    "scsihw",
    "smbios1",
    "tablet",
    "vga",
    "watchdog",
    "audio0",
    "rng0",
];
const GENERAL_OPTIONS: &[&str] = &[
    "agent",
    "autostart",
    "bios",
    "description",
    "keyboard",
    "localtime",
    "migrate_downtime",
    "migrate_speed",
    "name",
    "onboot",
    "ostype",
    "protection",
    "reboot",
    "startdate",
    "startup",
    "tdf",
    "template",
];
const DISK_OPTIONS: &[&str] = &["boot", "bootdisk", "vmstatestorage"];
const CLOUDINIT_OPTIONS: &[&str] = &[
    "cicustom",
    "cipassword",
    "citype",
    "ciuser",
    "ciupgrade",
    "nameserver",
    "searchdomain",
    "sshkeys",
];

/// Whether `key` is `<base><n>`.
fn indexed(key: &str, base: &str) -> bool {
    key.strip_prefix(base)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The privilege class of a config option.
pub fn option_priv(opt: &str) -> OptionPriv {
    if is_drive_key(opt)
        || opt == "cdrom"
        || opt == "tags"
        || ["unused", "serial", "usb", "hostpci", "virtiofs"]
            .iter()
            .any(|b| indexed(opt, b))
    {
        return OptionPriv::Elsewhere;
    }
    if CPU_OPTIONS.contains(&opt) || indexed(opt, "numa") {
        OptionPriv::All(&["VM.Config.CPU"])
    } else if MEMORY_OPTIONS.contains(&opt) {
        OptionPriv::All(&["VM.Config.Memory"])
    } else if HWTYPE_OPTIONS.contains(&opt) {
        OptionPriv::All(&["VM.Config.HWType"])
    } else if GENERAL_OPTIONS.contains(&opt) {
        OptionPriv::Options
    } else if opt == "freeze" {
        OptionPriv::All(&["VM.PowerMgmt"])
    } else if DISK_OPTIONS.contains(&opt) {
        OptionPriv::All(&["VM.Config.Disk"])
    } else if indexed(opt, "net") || opt == "running-nets-host-mtu" {
        OptionPriv::All(&["VM.Config.Network"])
    } else if CLOUDINIT_OPTIONS.contains(&opt) || indexed(opt, "ipconfig") {
        OptionPriv::Any(&["VM.Config.Cloudinit", "VM.Config.Network"])
    } else if opt == "vmstate" {
        OptionPriv::All(&["VM.Config.Disk", "VM.PowerMgmt"])
    } else {
        OptionPriv::RootOnly
    }
}

/// `$NEW_DISK_RE` of qemu-server: `[STORAGE:]SIZE`, the storage if named.
fn qemu_new_disk(file: &str) -> Option<Option<&str>> {
    new_disk(file).map(|(sid, _)| sid)
}

/// The options of a `create_vm` call that decide its permission checks.
#[derive(Debug, Clone)]
pub struct CreatePerm<'a> {
    /// The new VM's id.
    pub vmid: u32,
    /// The node it is made on.
    pub node: &'a str,
    /// The config options given (without `node`, `vmid`, `archive` ...);
    /// `cdrom` may still be there.
    pub config: &'a BTreeMap<String, String>,
    /// `storage`: the default storage.
    pub storage: Option<&'a str>,
    /// `pool`.
    pub pool: Option<&'a str>,
    /// `start`.
    pub start: bool,
    /// `ha-managed`.
    pub ha_managed: bool,
    /// `archive`: a restore.
    pub archive: Option<&'a str>,
    /// `force`: a restore over an existing VM.
    pub force: bool,
    /// `import-working-storage`.
    pub extraction_storage: Option<&'a str>,
}

impl Perms<'_> {
    /// `create_vm`'s permission checks, in PVE's order: the pool exists,
    /// Datastore.AllocateSpace on the default storage, Sys.Console for
    /// `ha-managed`, VM.PowerMgmt for `start`, VM.Allocate on the VM or
    /// the pool (or, to restore over an existing VM with `force`,
    /// VM.Backup on it), access to the archive, then each option's own
    /// checks ([`Perms::check_vm_config_params`]).
    ///
    /// # Errors
    /// 403 `Permission check failed (...)` or `Permission check failed`,
    /// the root-only refusals of the options.
    pub fn check_create_vm_perm(&self, who: &AuthId, req: &CreatePerm<'_>) -> Result<()> {
        if let Some(pool) = req.pool {
            self.access.check_pool_exist(pool)?;
        }
        if let Some(s) = req.storage {
            self.access
                .check_perm(who, &format!("/storage/{s}"), &["Datastore.AllocateSpace"])?;
        }
        if req.ha_managed {
            self.access.check_perm(who, "/", &["Sys.Console"])?;
        }
        if req.start {
            self.access
                .check_vm_perm(who, req.vmid, req.pool, &["VM.PowerMgmt"], false)?;
        }
        let vm_path = format!("/vms/{}", req.vmid);
        let exists_here = self
            .guests
            .get(&req.vmid)
            .is_some_and(|v| v.node == req.node);
        let allowed = self.access.has_priv(who, &vm_path, "VM.Allocate")
            || req.pool.filter(|p| !p.is_empty()).is_some_and(|p| {
                self.access
                    .has_priv(who, &format!("/pool/{p}"), "VM.Allocate")
            })
            || (req.archive.is_some()
                && req.force
                && exists_here
                && self.access.has_priv(who, &vm_path, "VM.Backup"));
        if !allowed {
            return Err(perm_denied());
        }
        if let Some(archive) = req.archive {
            if let Some(k) = req.config.keys().find(|k| is_drive_key(k)) {
                return Err(Error::invalid(
                    k.clone(),
                    "option conflicts with option 'archive'",
                ));
            }
            if archive != "-" {
                check_volume_access(
                    self.access,
                    self.storage,
                    who,
                    Some(req.vmid),
                    archive,
                    Some("backup"),
                )?;
            }
        }
        if req.config.is_empty() {
            return Ok(());
        }
        let mut conf = req.config.clone();
        if let Some(cd) = conf.remove("cdrom") {
            let value = if cd.contains("media=") {
                cd
            } else {
                format!("{cd},media=cdrom")
            };
            conf.insert("ide2".into(), value);
        }
        self.check_qemu_storage_access(who, req.vmid, &conf, req.storage, req.extraction_storage)?;
        let keys: Vec<&str> = conf.keys().map(String::as_str).collect();
        self.check_vm_modify_config_perm(who, req.vmid, req.pool, &keys)?;
        self.check_vm_device_perms(who, req.vmid, req.pool, &conf)?;
        self.check_qemu_bridge_access(who, &conf)?;
        self.check_cpu_model_access(who, &conf, None)
    }

    /// `check_vm_modify_config_perm`: each option's privilege on the VM
    /// (or the pool); options without a class are root@pam's.
    ///
    /// # Errors
    /// 403 `Permission check failed (/vms/<vmid>, <privilege>)`; 500
    /// `only root can set '<opt>' config`.
    pub fn check_vm_modify_config_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        pool: Option<&str>,
        keys: &[&str],
    ) -> Result<()> {
        if is_root_pam(who) {
            return Ok(());
        }
        for opt in keys {
            match option_priv(opt) {
                OptionPriv::Elsewhere => {}
                OptionPriv::All(p) => self.access.check_vm_perm(who, vmid, pool, p, false)?,
                OptionPriv::Any(p) => self.access.check_vm_perm(who, vmid, pool, p, true)?,
                OptionPriv::Options => {
                    self.access
                        .check_vm_perm(who, vmid, pool, &["VM.Config.Options"], false)?;
                    if *opt == "startup" {
                        self.access.check_perm(who, "/", &["Sys.Modify"])?;
                    }
                }
                OptionPriv::RootOnly => {
                    return Err(Error::failed(format!("only root can set '{opt}' config")));
                }
            }
        }
        Ok(())
    }

    /// The checks of a new VM's devices, by value: serial ports
    /// (`socket` needs VM.Config.HWType, a host device is root@pam's),
    /// USB, PCI, RNG and virtiofs devices (mappings need Mapping.Use).
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`; 500 `only root can set ...`;
    /// 400 for a PCI device's `romfile`.
    pub fn check_vm_device_perms(
        &self,
        who: &AuthId,
        vmid: u32,
        pool: Option<&str>,
        conf: &BTreeMap<String, String>,
    ) -> Result<()> {
        if is_root_pam(who) {
            return Ok(());
        }
        for (opt, value) in conf {
            if indexed(opt, "serial") {
                if value == "socket" {
                    self.access
                        .check_vm_perm(who, vmid, pool, &["VM.Config.HWType"], false)?;
                } else {
                    return Err(Error::failed(format!(
                        "only root can set '{opt}' config for real devices"
                    )));
                }
            }
        }
        for (opt, value) in conf {
            if indexed(opt, "usb") {
                self.check_usb_perm(who, vmid, pool, opt, value)?;
            }
        }
        for (opt, value) in conf {
            if indexed(opt, "hostpci") {
                self.check_hostpci_perm(who, vmid, pool, opt, value)?;
            }
        }
        if let Some(rng) = conf.get("rng0") {
            self.check_rng_perm(who, vmid, pool, rng)?;
        }
        for (opt, value) in conf {
            if indexed(opt, "virtiofs") {
                self.check_dir_perm(who, vmid, pool, value)?;
            }
        }
        Ok(())
    }

    /// `check_usb_perm`: VM.Config.HWType; a host device other than
    /// `spice` is root@pam's, a mapping needs Mapping.Use on it.
    ///
    /// # Errors
    /// 403; 500 `only root can set '<opt>' config for real devices`,
    /// `either 'host' or 'mapping' must be set.`.
    pub fn check_usb_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        pool: Option<&str>,
        opt: &str,
        value: &str,
    ) -> Result<()> {
        if is_root_pam(who) {
            return Ok(());
        }
        self.access
            .check_vm_perm(who, vmid, pool, &["VM.Config.HWType"], false)?;
        if let Some(host) = prop_value(value, "host").or_else(|| default_key(value)) {
            if host.eq_ignore_ascii_case("spice") {
                return Ok(());
            }
            return Err(Error::failed(format!(
                "only root can set '{opt}' config for real devices"
            )));
        }
        match prop_value(value, "mapping") {
            Some(m) => self
                .access
                .check_perm(who, &format!("/mapping/usb/{m}"), &["Mapping.Use"]),
            None => Err(Error::failed("either 'host' or 'mapping' must be set.")),
        }
    }

    /// `check_hostpci_perm`: only mapped devices, with Mapping.Use on the
    /// mapping and VM.Config.HWType; `romfile` is root@pam's.
    ///
    /// # Errors
    /// 403; 500 `only root can set '<opt>' config for non-mapped
    /// devices`; 400 `only root@pam can set 'romfile' option`.
    pub fn check_hostpci_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        pool: Option<&str>,
        opt: &str,
        value: &str,
    ) -> Result<()> {
        if is_root_pam(who) {
            return Ok(());
        }
        if prop_value(value, "host")
            .or_else(|| default_key(value))
            .is_some()
        {
            return Err(Error::failed(format!(
                "only root can set '{opt}' config for non-mapped devices"
            )));
        }
        let Some(m) = prop_value(value, "mapping") else {
            return Err(Error::failed("either 'host' or 'mapping' must be set."));
        };
        self.access
            .check_perm(who, &format!("/mapping/pci/{m}"), &["Mapping.Use"])?;
        self.access
            .check_vm_perm(who, vmid, pool, &["VM.Config.HWType"], false)?;
        if prop_value(value, "romfile").is_some() {
            return Err(Error::invalid(
                opt,
                "only root@pam can set 'romfile' option",
            ));
        }
        Ok(())
    }

    /// `check_rng_perm`: VM.Config.HWType, and Mapping.Use on
    /// `/mapping/hwrng` for the host's hardware RNG.
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`.
    pub fn check_rng_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        pool: Option<&str>,
        value: &str,
    ) -> Result<()> {
        if is_root_pam(who) {
            return Ok(());
        }
        self.access
            .check_vm_perm(who, vmid, pool, &["VM.Config.HWType"], false)?;
        let source = prop_value(value, "source").or_else(|| default_key(value));
        if source == Some("/dev/hwrng") {
            self.access
                .check_perm(who, "/mapping/hwrng", &["Mapping.Use"])?;
        }
        Ok(())
    }

    /// `check_dir_perm`: VM.Config.Disk and Mapping.Use on the directory
    /// mapping.
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`.
    pub fn check_dir_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        pool: Option<&str>,
        value: &str,
    ) -> Result<()> {
        if is_root_pam(who) {
            return Ok(());
        }
        self.access
            .check_vm_perm(who, vmid, pool, &["VM.Config.Disk"], false)?;
        let dirid = prop_value(value, "dirid")
            .or_else(|| default_key(value))
            .unwrap_or_default();
        self.access
            .check_perm(who, &format!("/mapping/dir/{dirid}"), &["Mapping.Use"])
    }

    /// `QemuServer::check_bridge_access`: SDN.Use on each network
    /// device's bridge (or its VLANs).
    ///
    /// # Errors
    /// 403 `Permission check failed (/sdn/zones/..., SDN.Use)`.
    pub fn check_qemu_bridge_access(
        &self,
        who: &AuthId,
        conf: &BTreeMap<String, String>,
    ) -> Result<()> {
        for (opt, value) in conf {
            if indexed(opt, "net") {
                check_net_bridge_access(self.access, self.sdn, who, value)?;
            }
        }
        Ok(())
    }

    /// `check_cpu_model_access`: a custom CPU model (`custom-<name>`)
    /// needs Mapping.Use on `/mapping/cpu/<name>` (9.2; Sys.Audit on
    /// `/nodes` before), unless an update keeps the model the VM has.
    ///
    /// # Errors
    /// 403 `Permission check failed (/mapping/cpu/<name>, Mapping.Use)`.
    pub fn check_cpu_model_access(
        &self,
        who: &AuthId,
        new: &BTreeMap<String, String>,
        existing: Option<&BTreeMap<String, String>>,
    ) -> Result<()> {
        let Some(cpu) = new.get("cpu") else {
            return Ok(());
        };
        let cputype = prop_value(cpu, "cputype").or_else(|| default_key(cpu));
        let Some(cputype) = cputype.filter(|c| !c.is_empty()) else {
            return Ok(());
        };
        if let Some(old) = existing.and_then(|c| c.get("cpu")) {
            let old_type = prop_value(old, "cputype").or_else(|| default_key(old));
            if old_type == Some(cputype) {
                return Ok(());
            }
        }
        if let Some(name) = cputype.strip_prefix("custom-") {
            if self.version == crate::model::PveVersion::V9_2 {
                self.access
                    .check_perm(who, &format!("/mapping/cpu/{name}"), &["Mapping.Use"])?;
            } else {
                // Before 9.2 (qemu-server 9.2.4): whoever may read
                // cpu-models.conf may use its models.
                self.access.check_perm(who, "/nodes", &["Sys.Audit"])?;
            }
        }
        Ok(())
    }

    /// `check_storage_access`: Sys.Console for the host's CD-ROM drive,
    /// Datastore.AllocateSpace where a disk is made (the default storage
    /// for a size alone), access to each existing volume (which must be
    /// an image or an ISO), to an `import-from` source (VM.Clone on the
    /// guest that owns it), to each `unused` volume; AllocateSpace on
    /// `vmstatestorage`.
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`; 500 `no storage ID specified
    /// (and no default storage)`, `Only root can pass arbitrary
    /// filesystem paths.`; 400 `content type needs to be 'images' or
    /// 'iso'`, `storage '<id>' does not support vm images`.
    pub fn check_qemu_storage_access(
        &self,
        who: &AuthId,
        vmid: u32,
        conf: &BTreeMap<String, String>,
        default_storage: Option<&str>,
        extraction_storage: Option<&str>,
    ) -> Result<()> {
        for (opt, value) in conf.iter().filter(|(k, _)| is_drive_key(k)) {
            let file = drive_file(value);
            let cdrom = drive_is_cdrom(value);
            if file.is_empty() || file == "none" || cloudinit_storage(file).is_some() {
                // nothing to check
            } else if cdrom && file == "cdrom" {
                self.access.check_perm(who, "/", &["Sys.Console"])?;
            } else if let Some(sid) = qemu_new_disk(file).filter(|_| !cdrom) {
                let Some(sid) = sid.or(default_storage) else {
                    return Err(Error::failed(
                        "no storage ID specified (and no default storage)",
                    ));
                };
                self.access.check_perm(
                    who,
                    &format!("/storage/{sid}"),
                    &["Datastore.AllocateSpace"],
                )?;
                let s = self.storage.existing(sid)?;
                if !s.content.iter().any(|c| c == "images") {
                    return Err(Error::invalid(
                        "storage",
                        format!("storage '{sid}' does not support vm images"),
                    ));
                }
            } else {
                check_volume_access(self.access, self.storage, who, Some(vmid), file, None)?;
                if let Some((_, name)) = parse_volid(file) {
                    let vt = vtype(name);
                    if vt != "images" && vt != "iso" {
                        return Err(Error::invalid(
                            opt.clone(),
                            "content type needs to be 'images' or 'iso'",
                        ));
                    }
                }
            }
            if let Some(src) = prop_value(value, "import-from") {
                self.check_import_source(who, vmid, opt, src, extraction_storage)?;
            }
        }
        for (opt, value) in conf.iter().filter(|(k, _)| indexed(k, "unused")) {
            let volid = drive_file(value);
            if volid.is_empty() {
                return Err(Error::invalid(
                    opt.clone(),
                    "value does not have a volid set",
                ));
            }
            if parse_volid(volid).is_none() {
                return Err(Error::invalid(
                    opt.clone(),
                    format!("not a valid volid: {volid}"),
                ));
            }
            check_volume_access(
                self.access,
                self.storage,
                who,
                Some(vmid),
                volid,
                Some("images"),
            )?;
        }
        if let Some(s) = conf.get("vmstatestorage") {
            self.access
                .check_perm(who, &format!("/storage/{s}"), &["Datastore.AllocateSpace"])?;
        }
        Ok(())
    }

    /// The `import-from` part of `check_storage_access`: a source image
    /// of a guest needs VM.Clone on it, any other source access to it;
    /// an archive to extract needs room on the working storage.
    fn check_import_source(
        &self,
        who: &AuthId,
        vmid: u32,
        opt: &str,
        src: &str,
        extraction_storage: Option<&str>,
    ) -> Result<()> {
        let mut owner = None;
        if let Some((sid, name)) = parse_volid(src) {
            self.storage.existing(sid)?;
            let vt = vtype(name);
            if vt != "images" && vt != "import" {
                return Err(Error::invalid(
                    opt,
                    format!("{src} has wrong type '{vt}' - needs to be 'images' or 'import'"),
                ));
            }
            // `needs_extraction`: a disk inside an OVA archive.
            let archive = vt == "import"
                && crate::model::storage::import::parse_volname(name)
                    .is_ok_and(|(_, f)| f.starts_with("ova+"));
            if archive {
                let work = extraction_storage.unwrap_or(sid);
                self.access.check_perm(
                    who,
                    &format!("/storage/{work}"),
                    &["Datastore.AllocateSpace"],
                )?;
            }
            owner = crate::model::guest_perm::volname_owner(name).filter(|_| vt == "images");
        }
        match owner {
            Some(o) => self
                .access
                .check_perm(who, &format!("/vms/{o}"), &["VM.Clone"]),
            None => check_volume_access(self.access, self.storage, who, Some(vmid), src, None),
        }
    }

    /// The checks `update_vm` makes before it locks the config: each
    /// option deleted or set by its class, then storage and bridge
    /// access of the new values, the CPU model (against the current
    /// config).
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`, the root-only refusals.
    pub fn check_update_vm_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        current: &BTreeMap<String, String>,
        set: &BTreeMap<String, String>,
        delete: &[String],
        extraction_storage: Option<&str>,
    ) -> Result<()> {
        let deleted: Vec<&str> = delete.iter().map(String::as_str).collect();
        self.check_vm_modify_config_perm(who, vmid, None, &deleted)?;
        let keys: Vec<&str> = set.keys().map(String::as_str).collect();
        self.check_vm_modify_config_perm(who, vmid, None, &keys)?;
        self.check_qemu_storage_access(who, vmid, set, None, extraction_storage)?;
        self.check_qemu_bridge_access(who, set)?;
        self.check_cpu_model_access(who, set, Some(current))
    }

    /// The checks `update_vm` makes while it applies the change, each
    /// option against the current config: drives (a CD-ROM needs
    /// VM.Config.CDROM, a cloud-init drive VM.Config.Cloudinit and
    /// VM.Config.CDROM, a disk VM.Config.Disk, for the old value and the
    /// new), unused volumes, serial, USB, PCI, RNG and virtiofs devices
    /// (old and new values), and the bridges of network devices replaced
    /// or removed.
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`, the root-only refusals.
    pub fn check_update_vm_values_perm(
        &self,
        who: &AuthId,
        vmid: u32,
        current: &BTreeMap<String, String>,
        set: &BTreeMap<String, String>,
        delete: &[String],
    ) -> Result<()> {
        for opt in delete {
            let Some(val) = current.get(opt) else {
                continue;
            };
            if indexed(opt, "unused") {
                self.access
                    .check_vm_perm(who, vmid, None, &["VM.Config.Disk"], false)?;
            } else if is_drive_key(opt) {
                self.check_drive_perms(who, vmid, val)?;
            } else if indexed(opt, "serial") {
                if val == "socket" {
                    self.access
                        .check_vm_perm(who, vmid, None, &["VM.Config.HWType"], false)?;
                } else if !is_root_pam(who) {
                    return Err(Error::failed(format!(
                        "only root can delete '{opt}' config for real devices"
                    )));
                }
            } else if indexed(opt, "usb") {
                self.check_usb_perm(who, vmid, None, opt, val)?;
            } else if indexed(opt, "hostpci") {
                self.check_hostpci_perm(who, vmid, None, opt, val)?;
            } else if indexed(opt, "rng") {
                self.check_rng_perm(who, vmid, None, val)?;
            } else if indexed(opt, "virtiofs") {
                self.check_dir_perm(who, vmid, None, val)?;
            } else if indexed(opt, "net") {
                check_net_bridge_access(self.access, self.sdn, who, val)?;
            }
        }
        for (opt, new) in set {
            let old = current.get(opt);
            if is_drive_key(opt) {
                if let Some(old) = old {
                    self.check_drive_perms(who, vmid, old)?;
                }
                self.check_drive_perms(who, vmid, new)?;
            } else if indexed(opt, "serial") {
                let socket = old.is_none_or(|o| o == "socket") && new == "socket";
                if socket {
                    self.access
                        .check_vm_perm(who, vmid, None, &["VM.Config.HWType"], false)?;
                } else if !is_root_pam(who) {
                    return Err(Error::failed(format!(
                        "only root can modify '{opt}' config for real devices"
                    )));
                }
            } else if indexed(opt, "usb") {
                if let Some(old) = old {
                    self.check_usb_perm(who, vmid, None, opt, old)?;
                }
                self.check_usb_perm(who, vmid, None, opt, new)?;
            } else if indexed(opt, "hostpci") {
                if let Some(old) = old {
                    self.check_hostpci_perm(who, vmid, None, opt, old)?;
                }
                self.check_hostpci_perm(who, vmid, None, opt, new)?;
            } else if indexed(opt, "rng") {
                if let Some(old) = old {
                    self.check_rng_perm(who, vmid, None, old)?;
                }
                self.check_rng_perm(who, vmid, None, new)?;
            } else if indexed(opt, "virtiofs") {
                if let Some(old) = old {
                    self.check_dir_perm(who, vmid, None, old)?;
                }
                self.check_dir_perm(who, vmid, None, new)?;
            } else if indexed(opt, "net")
                && let Some(old) = old
            {
                check_net_bridge_access(self.access, self.sdn, who, old)?;
            }
        }
        Ok(())
    }

    /// The update's `check_drive_perms` of one drive value.
    fn check_drive_perms(&self, who: &AuthId, vmid: u32, value: &str) -> Result<()> {
        let privs: &[&str] = if cloudinit_storage(drive_file(value)).is_some() {
            &["VM.Config.Cloudinit", "VM.Config.CDROM"]
        } else if drive_is_cdrom(value) {
            &["VM.Config.CDROM"]
        } else {
            &["VM.Config.Disk"]
        };
        self.access.check_vm_perm(who, vmid, None, privs, false)
    }

    /// `check_storage_access_clone`, `check_mapping_access`,
    /// `check_bridge_access` and `check_cpu_model_access` of the config
    /// cloned: Sys.Console for the host's CD-ROM drive, AllocateSpace on
    /// each disk's storage (or on the target `storage`) and on
    /// `vmstatestorage`, Mapping.Use on the mapped devices, SDN.Use on
    /// the bridges, the custom CPU model. Answers whether every volume
    /// is on shared storage.
    ///
    /// # Errors
    /// 403 `Permission check failed (...)`, the root-only refusals of
    /// host devices; the storage's `storage '<id>' does not exist`.
    pub fn check_clone_vm_perm(
        &self,
        who: &AuthId,
        oldconf: &BTreeMap<String, String>,
        storage: Option<&str>,
    ) -> Result<bool> {
        let mut shared = true;
        for (_, value) in oldconf.iter().filter(|(k, _)| is_drive_key(k)) {
            let file = drive_file(value);
            if file.is_empty() || file == "none" {
                continue;
            }
            if drive_is_cdrom(value) && file == "cdrom" {
                self.access.check_perm(who, "/", &["Sys.Console"])?;
                continue;
            }
            let Some((sid, _)) = parse_volid(file) else {
                continue;
            };
            if !self.storage.existing(sid)?.shared {
                shared = false;
            }
            if !drive_is_cdrom(value) {
                let check = storage.unwrap_or(sid);
                self.access.check_perm(
                    who,
                    &format!("/storage/{check}"),
                    &["Datastore.AllocateSpace"],
                )?;
            }
        }
        if let Some(s) = oldconf.get("vmstatestorage") {
            self.access
                .check_perm(who, &format!("/storage/{s}"), &["Datastore.AllocateSpace"])?;
        }
        self.check_mapping_access(who, oldconf)?;
        self.check_qemu_bridge_access(who, oldconf)?;
        self.check_cpu_model_access(who, oldconf, None)?;
        Ok(shared)
    }

    /// `QemuServer::check_mapping_access`: the devices of a config that
    /// name a host device are root@pam's, mapped ones need Mapping.Use.
    ///
    /// # Errors
    /// 403; 500 `only root can set '<opt>' config for real devices` /
    /// `... for non-mapped devices`.
    pub fn check_mapping_access(
        &self,
        who: &AuthId,
        conf: &BTreeMap<String, String>,
    ) -> Result<()> {
        if is_root_pam(who) {
            return Ok(());
        }
        let use_mapping = |path: String| self.access.check_perm(who, &path, &["Mapping.Use"]);
        for (opt, value) in conf {
            if indexed(opt, "usb") {
                if let Some(host) = prop_value(value, "host").or_else(|| default_key(value)) {
                    if !host.eq_ignore_ascii_case("spice") {
                        return Err(Error::failed(format!(
                            "only root can set '{opt}' config for real devices"
                        )));
                    }
                } else if let Some(m) = prop_value(value, "mapping") {
                    use_mapping(format!("/mapping/usb/{m}"))?;
                } else {
                    return Err(Error::failed("either 'host' or 'mapping' must be set."));
                }
            } else if indexed(opt, "hostpci") {
                if prop_value(value, "host")
                    .or_else(|| default_key(value))
                    .is_some()
                {
                    return Err(Error::failed(format!(
                        "only root can set '{opt}' config for non-mapped devices"
                    )));
                } else if let Some(m) = prop_value(value, "mapping") {
                    use_mapping(format!("/mapping/pci/{m}"))?;
                } else {
                    return Err(Error::failed("either 'host' or 'mapping' must be set."));
                }
            } else if indexed(opt, "rng") {
                let source = prop_value(value, "source").or_else(|| default_key(value));
                if source == Some("/dev/hwrng") {
                    use_mapping("/mapping/hwrng".into())?;
                }
            } else if indexed(opt, "virtiofs") {
                let dirid = prop_value(value, "dirid")
                    .or_else(|| default_key(value))
                    .unwrap_or_default();
                use_mapping(format!("/mapping/dir/{dirid}"))?;
            }
        }
        Ok(())
    }
}

/// The value of a property string's default key (its first part without
/// `=`), as `host` of `usb0: spice` or `cputype` of `cpu: host`.
fn default_key(value: &str) -> Option<&str> {
    value
        .split(',')
        .next()
        .filter(|p| !p.contains('=') && !p.is_empty())
}
