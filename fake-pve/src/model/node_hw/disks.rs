//! The disk calls: their checks before the task, the task's log, and
//! what the task does to the node's disks when it ends (pve-storage
//! `API2/Disks.pm`, `API2/Disks/{ZFS,LVM,LVMThin,Directory}.pm`,
//! `Diskmanage.pm`).

use serde::{Deserialize, Serialize};

use super::{MountUnit, NodeHw, Partition, Pv, ThinPool, Vg, Zpool};
use crate::model::{Error, Result};

/// What a disk task does when it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum DiskOp {
    /// `initgpt`: a new GPT on an empty disk.
    InitGpt {
        /// The disk.
        disk: String,
    },
    /// `wipedisk`.
    Wipe {
        /// The disk or partition.
        disk: String,
    },
    /// `POST disks/zfs`.
    ZfsCreate {
        /// Pool name.
        name: String,
        /// The devices.
        devices: Vec<String>,
        /// `single`, `mirror`, `raid10`, `raidz`, ...
        raidlevel: String,
        /// `ashift`.
        ashift: u8,
        /// `compression`.
        compression: String,
        /// `draid-config` as `:<n>d:<n>s`.
        draid: String,
        /// Whether a storage is added.
        add_storage: bool,
    },
    /// `POST disks/lvm`.
    LvmCreate {
        /// Volume group name.
        name: String,
        /// The device.
        device: String,
        /// Whether a storage is added.
        add_storage: bool,
    },
    /// `POST disks/lvmthin`.
    LvmThinCreate {
        /// Volume group and thin pool name.
        name: String,
        /// The device.
        device: String,
        /// Whether a storage is added.
        add_storage: bool,
    },
    /// `POST disks/directory`.
    DirCreate {
        /// Storage name.
        name: String,
        /// The device.
        device: String,
        /// `ext4` or `xfs`.
        filesystem: String,
        /// Whether a storage is added.
        add_storage: bool,
    },
    /// `DELETE disks/zfs/{name}`.
    ZfsRemove {
        /// Pool name.
        name: String,
        /// Whether the storages using it are cleaned up.
        cleanup_config: bool,
        /// Whether its disks are wiped.
        cleanup_disks: bool,
    },
    /// `DELETE disks/lvm/{name}`.
    LvmRemove {
        /// Volume group name.
        name: String,
        /// Whether the storages using it are cleaned up.
        cleanup_config: bool,
        /// Whether its disks are wiped.
        cleanup_disks: bool,
    },
    /// `DELETE disks/lvmthin/{name}`.
    LvmThinRemove {
        /// Volume group.
        vg: String,
        /// Thin pool.
        lv: String,
        /// Whether the storages using it are cleaned up.
        cleanup_config: bool,
        /// Whether its disks are wiped.
        cleanup_disks: bool,
    },
    /// `DELETE disks/directory/{name}`.
    DirRemove {
        /// Storage name.
        name: String,
        /// Whether the storages using it are cleaned up.
        cleanup_config: bool,
        /// Whether its disk is wiped.
        cleanup_disks: bool,
    },
}

impl DiskOp {
    /// The task type and id (`zfscreate`, `tank`).
    pub fn task(&self) -> (&'static str, String) {
        let base = |d: &str| d.rsplit('/').next().unwrap_or(d).to_string();
        match self {
            DiskOp::InitGpt { disk } => ("diskinit", base(disk)),
            DiskOp::Wipe { disk } => ("wipedisk", base(disk)),
            DiskOp::ZfsCreate { name, .. } => ("zfscreate", name.clone()),
            DiskOp::LvmCreate { name, .. } => ("lvmcreate", name.clone()),
            DiskOp::LvmThinCreate { name, .. } => ("lvmthincreate", name.clone()),
            DiskOp::DirCreate { name, .. } => ("dircreate", name.clone()),
            DiskOp::ZfsRemove { name, .. } => ("zfsremove", name.clone()),
            DiskOp::LvmRemove { name, .. } => ("lvmremove", name.clone()),
            DiskOp::LvmThinRemove { vg, lv, .. } => ("lvmthinremove", format!("{vg}-{lv}")),
            DiskOp::DirRemove { name, .. } => ("dirremove", name.clone()),
        }
    }
}

/// Where a device path leads: a whole disk or one of its partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dev {
    /// The disk at this index.
    Disk(usize),
    /// The partition at (disk, partition).
    Part(usize, usize),
}

/// `wipefs`/`dd` lines of a wipe of `devpath`.
fn wipe_lines(devpath: &str, size: u64, parts: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    if !parts.is_empty() {
        lines.push(format!(
            "found child partitions to wipe: {}",
            parts.join(", ")
        ));
    }
    lines.push(format!("wiping block device {devpath}"));
    let mib = (size / (1 << 20)).min(200);
    lines.push(format!("{mib}+0 records in"));
    lines.push(format!("{mib}+0 records out"));
    let bytes = mib << 20;
    lines.push(format!(
        "{bytes} bytes ({} MB, {mib} MiB) copied, 0.412 s, {} MB/s",
        bytes / 1_000_000,
        bytes * 1000 / 412 / 1_000_000
    ));
    lines
}

impl NodeHw {
    /// `verify_blockdev_path`: the disk or partition a path names.
    ///
    /// # Errors
    /// PVE's messages for a path outside `/dev`, one that cannot be
    /// resolved and one that is not a block device.
    pub fn verify_blockdev_path(&self, path: &str) -> Result<(Dev, String)> {
        if path.is_empty() {
            return Err(Error::failed("missing path"));
        }
        let abs = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("/{path}")
        };
        for (i, d) in self.disks.iter().enumerate() {
            if d.devpath == abs || d.by_id_link() == abs {
                return Ok((Dev::Disk(i), d.devpath.clone()));
            }
            for (j, p) in d.partitions.iter().enumerate() {
                if p.devpath == abs || format!("{}-part{}", d.by_id_link(), j + 1) == abs {
                    return Ok((Dev::Part(i, j), p.devpath.clone()));
                }
            }
        }
        let rest = abs.strip_prefix("/dev/");
        // `abs_path` resolves a missing last component, not a missing
        // directory.
        let dir_exists = |r: &str| match r.rsplit_once('/') {
            None => true,
            Some((dir, _)) => {
                [
                    "disk",
                    "disk/by-id",
                    "disk/by-uuid",
                    "disk/by-path",
                    "mapper",
                ]
                .contains(&dir)
                    || self.vgs.iter().any(|v| v.name == dir)
            }
        };
        match rest {
            Some(r) if !dir_exists(r) => Err(Error::failed(format!(
                "failed to get absolute path to {path}"
            ))),
            Some(_) => Err(Error::failed("not a valid block device")),
            None => {
                let parent_exists = abs.matches('/').count() == 1;
                if parent_exists {
                    Err(Error::failed(format!("got unusual device path '{abs}'")))
                } else {
                    Err(Error::failed(format!(
                        "failed to get absolute path to {path}"
                    )))
                }
            }
        }
    }

    fn dev_used(&self, dev: Dev) -> bool {
        match dev {
            Dev::Disk(i) => self.disks[i].is_used(),
            Dev::Part(i, j) => self.disks[i].partitions[j].usage().is_some(),
        }
    }

    /// `assert_disk_unused`.
    fn assert_unused(&self, dev: Dev, devpath: &str) -> Result<()> {
        if self.dev_used(dev) {
            return Err(Error::conflict(format!(
                "device '{devpath}' is already in use"
            )));
        }
        Ok(())
    }

    fn dev_size(&self, dev: Dev) -> u64 {
        match dev {
            Dev::Disk(i) => self.disks[i].size,
            Dev::Part(i, j) => self.disks[i].partitions[j].size,
        }
    }

    /// The checks `initgpt` makes before its task, and the devpath.
    ///
    /// # Errors
    /// A partition, a disk in use, a bad path.
    pub fn check_initgpt(&self, disk: &str) -> Result<String> {
        let (dev, path) = self.verify_blockdev_path(disk)?;
        if matches!(dev, Dev::Part(..)) {
            return Err(Error::failed(format!("{path} is a partition")));
        }
        if self.dev_used(dev) {
            return Err(Error::conflict(format!("disk {path} already in use")));
        }
        Ok(path)
    }

    /// The checks `wipedisk` makes before its task, and the devpath.
    ///
    /// # Errors
    /// A mounted disk or partition, one with a holder, a bad path.
    pub fn check_wipe(&self, disk: &str) -> Result<String> {
        let (dev, path) = self.verify_blockdev_path(disk)?;
        let parts: Vec<&Partition> = match dev {
            Dev::Disk(i) => {
                let d = &self.disks[i];
                if d.mounted {
                    return Err(Error::conflict(format!(
                        "disk/partition '{path}' is mounted"
                    )));
                }
                d.partitions.iter().collect()
            }
            Dev::Part(i, j) => vec![&self.disks[i].partitions[j]],
        };
        if let Some(p) = parts.iter().find(|p| p.mounted) {
            return Err(Error::conflict(format!(
                "disk/partition '{}' is mounted",
                p.devpath
            )));
        }
        if let Dev::Disk(i) = dev
            && self.disks[i].holder
        {
            return Err(Error::conflict(format!(
                "disk/partition '{path}' has a holder"
            )));
        }
        if let Some(p) = parts.iter().find(|p| p.holder) {
            return Err(Error::conflict(format!(
                "disk/partition '{}' has a holder",
                p.devpath
            )));
        }
        Ok(path)
    }

    /// The checks of `POST disks/{lvm,lvmthin,directory}` before the task:
    /// the device resolved and unused. Answers the devpath.
    ///
    /// # Errors
    /// A bad path, a device in use.
    pub fn check_device(&self, device: &str) -> Result<String> {
        let (dev, path) = self.verify_blockdev_path(device)?;
        self.assert_unused(dev, &path)?;
        Ok(path)
    }

    /// The checks `POST disks/directory` makes before its task.
    ///
    /// # Errors
    /// A path already mounted, a mount unit that exists.
    pub fn check_dir(&self, name: &str) -> Result<()> {
        if self.mounts.iter().any(|m| m.name == name) {
            let unit = MountUnit::unitfile(name);
            return Err(Error::exists(format!(
                "a systemd mount unit already exists: {unit}"
            )));
        }
        Ok(())
    }

    /// The checks `POST disks/zfs` makes before its task: the devices,
    /// the pool name and the RAID level's disk count.
    ///
    /// # Errors
    /// PVE's messages.
    pub fn check_zfs(
        &self,
        node: &str,
        name: &str,
        devices: &[String],
        raidlevel: &str,
        draid: Option<(u32, u32)>,
    ) -> Result<Vec<String>> {
        if draid.is_some() && !raidlevel.starts_with("draid") {
            return Err(Error::failed("draid-config set without using dRAID level"));
        }
        let mut paths = Vec::new();
        for d in devices {
            let (dev, path) = self.verify_blockdev_path(d)?;
            self.assert_unused(dev, &path)?;
            paths.push(path);
        }
        if self.zpools.iter().any(|p| p.name == name) {
            return Err(Error::exists(format!(
                "pool '{name}' already exists on node '{node}'"
            )));
        }
        let n = paths.len();
        let min = match raidlevel {
            "mirror" => 2,
            "raid10" | "raidz2" | "draid2" => 4,
            "raidz" | "draid" => 3,
            "raidz3" | "draid3" => 5,
            _ => 1,
        };
        if raidlevel == "raid10" && n % 2 != 0 {
            return Err(Error::failed("raid10 needs an even number of disks"));
        }
        if raidlevel == "single" && n > 1 {
            return Err(Error::failed(
                "please give only one disk for single disk mode",
            ));
        }
        if n < min {
            return Err(Error::failed(format!(
                "{raidlevel} needs at least {min} disks"
            )));
        }
        if raidlevel.starts_with("draid") {
            let (data, spares) = draid.unwrap_or((0, 0));
            let need = min - 2 + data as usize + spares as usize;
            if n < need {
                return Err(Error::failed(format!(
                    "At least {need} disks needed for current dRAID config"
                )));
            }
        }
        Ok(paths)
    }

    /// The log lines a task of `op` writes when it starts.
    pub fn start_lines(&self, op: &DiskOp) -> Vec<String> {
        match op {
            DiskOp::ZfsCreate {
                name,
                devices,
                raidlevel,
                ashift,
                compression,
                draid,
                ..
            } => {
                let links: Vec<String> = devices
                    .iter()
                    .map(|d| match self.verify_blockdev_path(d) {
                        Ok((Dev::Disk(i), _)) => self.disks[i].by_id_link(),
                        _ => d.clone(),
                    })
                    .collect();
                let mut cmd = format!("# /sbin/zpool create -o ashift={ashift} {name}");
                match raidlevel.as_str() {
                    "raid10" => {
                        for pair in links.chunks(2) {
                            cmd.push_str(&format!(" mirror {}", pair.join(" ")));
                        }
                    }
                    "single" => cmd.push_str(&format!(" {}", links.join(" "))),
                    level if level.starts_with("draid") => {
                        cmd.push_str(&format!(" {level}{draid} {}", links.join(" ")));
                    }
                    level => cmd.push_str(&format!(" {level} {}", links.join(" "))),
                }
                vec![
                    cmd,
                    format!("# /sbin/zfs set compression={compression} {name}"),
                    format!(
                        "# systemctl enable zfs-import@{}.service",
                        super::escape_unit(name)
                    ),
                    format!(
                        "Created symlink '/etc/systemd/system/zfs-import.target.wants/zfs-import@{}.service' -> '/usr/lib/systemd/system/zfs-import@.service'.",
                        super::escape_unit(name)
                    ),
                ]
            }
            DiskOp::LvmCreate { name, device, .. } => vec![
                format!("  Physical volume \"{device}\" successfully created."),
                format!("  Volume group \"{name}\" successfully created"),
            ],
            DiskOp::LvmThinCreate { name, device, .. } => vec![
                format!("  Physical volume \"{device}\" successfully created."),
                format!("  Volume group \"{name}\" successfully created"),
                format!(
                    "  Thin pool volume with chunk size 64.00 KiB can address at most <15.88 TiB of data."
                ),
                format!("  Logical volume \"{name}\" created."),
            ],
            DiskOp::DirCreate {
                name,
                device,
                filesystem,
                ..
            } => {
                let part = self.dir_partition(device);
                let mut lines = Vec::new();
                if part != *device {
                    lines.push(format!("# /sbin/sgdisk -n1 -t1:8300 {device}"));
                    lines.push("Creating new GPT entries in memory.".into());
                    lines.push("The operation has completed successfully.".into());
                }
                lines.push(format!("# /sbin/mkfs -t {filesystem} {part}"));
                if filesystem == "ext4" {
                    lines.push(
                        "Creating filesystem with 976754385 4k blocks and 244195328 inodes".into(),
                    );
                    lines.push("Allocating group tables: done".into());
                    lines.push("Writing inode tables: done".into());
                    lines.push("Creating journal (262144 blocks): done".into());
                    lines.push(
                        "Writing superblocks and filesystem accounting information: done".into(),
                    );
                } else {
                    lines.push(format!(
                        "meta-data={part} isize=512    agcount=4, agsize=244188597 blks"
                    ));
                }
                lines.push(format!("# /sbin/blkid {part} -o export"));
                let unit = super::escape_unit(&format!("/mnt/pve/{name}"));
                lines.push(format!("Created symlink '/etc/systemd/system/multi-user.target.wants/{unit}.mount' -> '/etc/systemd/system/{unit}.mount'."));
                lines
            }
            _ => Vec::new(),
        }
    }

    /// The partition a directory storage's file system goes on: the
    /// device itself, or the first partition sgdisk makes on a disk.
    fn dir_partition(&self, device: &str) -> String {
        match self.verify_blockdev_path(device) {
            Ok((Dev::Disk(_), path)) => part_path(&path, 1),
            _ => device.to_string(),
        }
    }

    /// Applies a disk task's change when it ends; answers the lines it
    /// logs, and the size of what was made (for the storage added).
    ///
    /// # Errors
    /// What the worker dies of (the disk taken in the meantime, a volume
    /// group or pool that is missing or exists).
    pub fn apply(&mut self, node: &str, op: &DiskOp) -> Result<(Vec<String>, u64)> {
        match op {
            DiskOp::InitGpt { disk } => {
                let (dev, path) = self.verify_blockdev_path(disk)?;
                if self.dev_used(dev) {
                    return Err(Error::conflict(format!("disk {path} is already in use")));
                }
                if let Dev::Disk(i) = dev {
                    self.disks[i].gpt = true;
                }
                Ok((vec!["The operation has completed successfully.".into()], 0))
            }
            DiskOp::Wipe { disk } => {
                let (dev, path) = self.verify_blockdev_path(disk)?;
                let lines = self.wipe(dev, &path);
                Ok((lines, 0))
            }
            DiskOp::ZfsCreate {
                name,
                devices,
                raidlevel,
                compression,
                ..
            } => {
                let mut devs = Vec::new();
                for d in devices {
                    let (dev, path) = self.verify_blockdev_path(d)?;
                    self.assert_unused(dev, &path)?;
                    devs.push(dev);
                }
                if self.zpools.iter().any(|p| &p.name == name) {
                    return Err(Error::failed(format!(
                        "command '/sbin/zpool create -o ashift=12 {name}' failed: exit code 1"
                    )));
                }
                let sizes: Vec<u64> = devs.iter().map(|d| self.dev_size(*d)).collect();
                let min = sizes.iter().copied().min().unwrap_or(0);
                let n = sizes.len() as u64;
                let raw = match raidlevel.as_str() {
                    "single" => min,
                    "mirror" => min,
                    "raid10" => min * (n / 2),
                    "raidz" | "draid" => min * n.saturating_sub(1),
                    "raidz2" | "draid2" => min * n.saturating_sub(2),
                    _ => min * n.saturating_sub(3),
                };
                let size = raw / 1000 * 969 / (1 << 20) * (1 << 20);
                let mut links = Vec::new();
                for dev in devs {
                    match dev {
                        Dev::Disk(i) => {
                            let d = &mut self.disks[i];
                            links.push(d.by_id_link());
                            d.gpt = true;
                            d.partitions = vec![
                                Partition {
                                    devpath: part_path(&d.devpath, 1),
                                    size: d.size - 8 * (1 << 20) - 2 * (1 << 20),
                                    used: Some("ZFS".into()),
                                    mounted: false,
                                    holder: false,
                                },
                                Partition {
                                    devpath: part_path(&d.devpath, 9),
                                    size: 8 * (1 << 20),
                                    used: Some("ZFS reserved".into()),
                                    mounted: false,
                                    holder: false,
                                },
                            ];
                        }
                        Dev::Part(i, j) => {
                            let p = &mut self.disks[i].partitions[j];
                            links.push(p.devpath.clone());
                            p.used = Some("ZFS".into());
                        }
                    }
                }
                self.zpools.push(Zpool {
                    name: name.clone(),
                    raidlevel: raidlevel.clone(),
                    devices: links,
                    size,
                    compression: compression.clone(),
                });
                let _ = node;
                Ok((Vec::new(), size))
            }
            DiskOp::LvmCreate { name, device, .. } | DiskOp::LvmThinCreate { name, device, .. } => {
                let thin = matches!(op, DiskOp::LvmThinCreate { .. });
                let (dev, path) = self.verify_blockdev_path(device)?;
                self.assert_unused(dev, &path)?;
                if self.vgs.iter().any(|v| &v.name == name) {
                    return Err(Error::exists(format!(
                        "volume group with name '{name}' already exists on node '{node}'"
                    )));
                }
                const EXTENT: u64 = 4 << 20;
                let pv_size = (self.dev_size(dev) - (1 << 20)) / EXTENT * EXTENT;
                let mut vg = Vg {
                    name: name.clone(),
                    pvs: vec![Pv {
                        name: path.clone(),
                        size: pv_size,
                        free: pv_size,
                    }],
                    lvcount: 0,
                };
                let mut made = pv_size;
                if thin {
                    let data_k = pv_size / 1024 - 128;
                    let meta_k = (data_k / 100).clamp(1024 * 1024, 16 * 1024 * 1024);
                    let data_k = data_k - 2 * meta_k;
                    let lv_size = (data_k * 1024).div_ceil(EXTENT) * EXTENT;
                    let meta = (meta_k * 1024).div_ceil(EXTENT) * EXTENT;
                    vg.pvs[0].free = pv_size.saturating_sub(lv_size + 2 * meta);
                    vg.lvcount = 1;
                    self.thinpools.push(ThinPool {
                        vg: name.clone(),
                        lv: name.clone(),
                        lv_size,
                        metadata_size: meta,
                    });
                    made = lv_size;
                }
                self.vgs.push(vg);
                self.mark(dev, Some("LVM"), false, thin);
                Ok((Vec::new(), made))
            }
            DiskOp::DirCreate {
                name,
                device,
                filesystem,
                ..
            } => {
                let (dev, path) = self.verify_blockdev_path(device)?;
                self.assert_unused(dev, &path)?;
                let (i, part, size) = match dev {
                    Dev::Disk(i) => {
                        let d = &mut self.disks[i];
                        let p = Partition {
                            devpath: part_path(&d.devpath, 1),
                            size: d.size - 2 * (1 << 20),
                            used: None,
                            mounted: false,
                            holder: false,
                        };
                        d.gpt = true;
                        d.partitions = vec![p];
                        (i, 0, d.size - 2 * (1 << 20))
                    }
                    Dev::Part(i, j) => (i, j, self.disks[i].partitions[j].size),
                };
                let p = &mut self.disks[i].partitions[part];
                p.used = Some(filesystem.clone());
                p.mounted = true;
                let partition = p.devpath.clone();
                let uuid = fake_uuid(&partition, name);
                self.mounts.push(MountUnit {
                    name: name.clone(),
                    partition,
                    what: format!("/dev/disk/by-uuid/{uuid}"),
                    fstype: filesystem.clone(),
                });
                Ok((Vec::new(), size / 100 * 98))
            }
            DiskOp::ZfsRemove {
                name,
                cleanup_disks,
                ..
            } => {
                let Some(at) = self.zpools.iter().position(|p| &p.name == name) else {
                    let cmd = if *cleanup_disks {
                        format!("zpool list -vHPL {name}")
                    } else {
                        format!("zpool destroy {name}")
                    };
                    return Err(Error::failed(format!(
                        "command '{cmd}' failed: exit code 1"
                    )));
                };
                let pool = self.zpools.remove(at);
                let mut lines = Vec::new();
                for link in &pool.devices {
                    let Ok((dev, _)) = self.verify_blockdev_path(link) else {
                        continue;
                    };
                    let dev = match dev {
                        Dev::Disk(i) => self.disks[i]
                            .partitions
                            .iter()
                            .position(|p| p.used.as_deref() == Some("ZFS"))
                            .map_or(dev, |j| Dev::Part(i, j)),
                        part => part,
                    };
                    if *cleanup_disks {
                        // The usual layout (data and reserved partition):
                        // the whole disk goes.
                        let target = match dev {
                            Dev::Part(i, _)
                                if self.disks[i].partitions.len() == 2
                                    && self.disks[i]
                                        .partitions
                                        .iter()
                                        .any(|p| p.used.as_deref() == Some("ZFS reserved")) =>
                            {
                                Dev::Disk(i)
                            }
                            other => other,
                        };
                        let path = self.path_of(target);
                        lines.extend(self.wipe(target, &path));
                    } else if let Dev::Part(i, j) = dev {
                        self.disks[i].partitions[j].used = Some("zfs_member".into());
                    }
                }
                Ok((lines, 0))
            }
            DiskOp::LvmRemove {
                name,
                cleanup_disks,
                ..
            } => {
                let Some(at) = self.vgs.iter().position(|v| &v.name == name) else {
                    return Err(Error::not_found(format!("no such volume group '{name}'")));
                };
                if self.vgs[at].lvcount > 0 {
                    return Err(Error::failed(format!(
                        "command '/sbin/vgremove -f {name}' failed: exit code 5"
                    )));
                }
                let vg = self.vgs.remove(at);
                let mut lines = vec![format!("  Volume group \"{name}\" successfully removed")];
                if *cleanup_disks {
                    for pv in &vg.pvs {
                        if let Ok((dev, path)) = self.verify_blockdev_path(&pv.name) {
                            lines.extend(self.wipe(dev, &path));
                        }
                    }
                }
                Ok((lines, 0))
            }
            DiskOp::LvmThinRemove {
                vg,
                lv,
                cleanup_disks,
                ..
            } => {
                let Some(at) = self
                    .thinpools
                    .iter()
                    .position(|t| &t.vg == vg && &t.lv == lv)
                else {
                    return Err(Error::not_found(format!("no such thin pool {vg}/{lv}")));
                };
                self.thinpools.remove(at);
                let mut lines = vec![format!("  Logical volume \"{lv}\" successfully removed.")];
                let Some(vi) = self.vgs.iter().position(|v| &v.name == vg) else {
                    return Ok((lines, 0));
                };
                self.vgs[vi].lvcount = self.vgs[vi].lvcount.saturating_sub(1);
                if self.vgs[vi].lvcount == 0 {
                    let pvs: Vec<String> =
                        self.vgs[vi].pvs.iter().map(|p| p.name.clone()).collect();
                    for pv in &pvs {
                        if let Ok((dev, _)) = self.verify_blockdev_path(pv) {
                            self.set_holder(dev, false);
                        }
                    }
                }
                if *cleanup_disks {
                    if self.vgs[vi].lvcount > 0 {
                        return Err(Error::conflict(format!("volume group '{vg}' still in use")));
                    }
                    let removed = self.vgs.remove(vi);
                    for pv in &removed.pvs {
                        if let Ok((dev, path)) = self.verify_blockdev_path(&pv.name) {
                            lines.extend(self.wipe(dev, &path));
                        }
                    }
                }
                Ok((lines, 0))
            }
            DiskOp::DirRemove {
                name,
                cleanup_disks,
                ..
            } => {
                let unit = super::escape_unit(&format!("/mnt/pve/{name}"));
                let Some(at) = self.mounts.iter().position(|m| &m.name == name) else {
                    if *cleanup_disks {
                        return Err(Error::not_found(format!(
                            "unable to open file '/etc/systemd/system/{unit}.mount' - No such file or directory"
                        )));
                    }
                    return Err(Error::failed(format!(
                        "command 'systemctl stop {unit}.mount' failed: exit code 5"
                    )));
                };
                let m = self.mounts.remove(at);
                let mut lines = vec![format!(
                    "Removed '/etc/systemd/system/multi-user.target.wants/{unit}.mount'."
                )];
                if let Ok((dev, path)) = self.verify_blockdev_path(&m.partition) {
                    if let Dev::Part(i, j) = dev {
                        self.disks[i].partitions[j].mounted = false;
                    }
                    if *cleanup_disks {
                        let target = match dev {
                            Dev::Part(i, _) if self.disks[i].partitions.len() == 1 => Dev::Disk(i),
                            other => other,
                        };
                        let tpath = if target == dev {
                            path
                        } else {
                            self.path_of(target)
                        };
                        lines.extend(self.wipe(target, &tpath));
                    }
                }
                Ok((lines, 0))
            }
        }
    }

    fn path_of(&self, dev: Dev) -> String {
        match dev {
            Dev::Disk(i) => self.disks[i].devpath.clone(),
            Dev::Part(i, j) => self.disks[i].partitions[j].devpath.clone(),
        }
    }

    fn mark(&mut self, dev: Dev, used: Option<&str>, mounted: bool, holder: bool) {
        match dev {
            Dev::Disk(i) => {
                let d = &mut self.disks[i];
                d.used = used.map(str::to_string);
                d.mounted = mounted;
                d.holder = holder;
            }
            Dev::Part(i, j) => {
                let p = &mut self.disks[i].partitions[j];
                p.used = used.map(str::to_string);
                p.mounted = mounted;
                p.holder = holder;
            }
        }
    }

    fn set_holder(&mut self, dev: Dev, holder: bool) {
        match dev {
            Dev::Disk(i) => self.disks[i].holder = holder,
            Dev::Part(i, j) => self.disks[i].partitions[j].holder = holder,
        }
    }

    /// `wipe_blockdev`: the device (and a disk's partitions) emptied;
    /// whatever was made on them goes with them.
    fn wipe(&mut self, dev: Dev, path: &str) -> Vec<String> {
        let (size, parts) = match dev {
            Dev::Disk(i) => (
                self.disks[i].size,
                self.disks[i]
                    .partitions
                    .iter()
                    .map(|p| p.devpath.clone())
                    .collect::<Vec<_>>(),
            ),
            Dev::Part(i, j) => (self.disks[i].partitions[j].size, Vec::new()),
        };
        let mut gone: Vec<String> = parts.clone();
        gone.push(path.to_string());
        if let Dev::Disk(i) = dev {
            gone.push(self.disks[i].by_id_link());
        }
        self.vgs
            .retain(|v| !v.pvs.iter().any(|p| gone.contains(&p.name)));
        let vgs: Vec<String> = self.vgs.iter().map(|v| v.name.clone()).collect();
        self.thinpools.retain(|t| vgs.contains(&t.vg));
        self.zpools
            .retain(|z| !z.devices.iter().any(|d| gone.contains(d)));
        self.mounts.retain(|m| !gone.contains(&m.partition));
        match dev {
            Dev::Disk(i) => {
                let d = &mut self.disks[i];
                d.partitions.clear();
                d.gpt = false;
                d.used = None;
                d.mounted = false;
                d.holder = false;
            }
            Dev::Part(..) => self.mark(dev, None, false, false),
        }
        wipe_lines(path, size, &parts)
    }
}

impl NodeHw {
    /// What `cephcreateosd` does to its disk: PVE's `wipe_blockdev`,
    /// then `ceph-volume lvm create`'s volume group `vg` with the OSD's
    /// one logical volume on the whole disk. Answers the wipe's lines.
    ///
    /// # Errors
    /// The path is not one of the node's disks.
    pub fn ceph_osd_create(&mut self, devpath: &str, vg: &str) -> Result<Vec<String>> {
        let (dev, path) = self.verify_blockdev_path(devpath)?;
        let lines = self.wipe(dev, &path);
        let size = match dev {
            Dev::Disk(i) => self.disks[i].size,
            Dev::Part(i, j) => self.disks[i].partitions[j].size,
        };
        self.mark(dev, Some("LVM"), false, true);
        self.vgs.push(Vg {
            name: vg.to_string(),
            pvs: vec![Pv {
                name: path,
                size,
                free: 0,
            }],
            lvcount: 1,
        });
        Ok(lines)
    }
}

/// The path of partition `n` of a disk (`/dev/sdb1`, `/dev/nvme0n1p1`).
pub fn part_path(disk: &str, n: u32) -> String {
    if disk.ends_with(|c: char| c.is_ascii_digit()) {
        format!("{disk}p{n}")
    } else {
        format!("{disk}{n}")
    }
}

/// A file system UUID made from what it was made for.
fn fake_uuid(part: &str, name: &str) -> String {
    use sha2::Digest;
    let h = sha2::Sha256::digest(format!("{part}:{name}").as_bytes());
    let x = hex::encode(&h[..16]);
    format!(
        "{}-{}-{}-{}-{}",
        &x[0..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..32]
    )
}
