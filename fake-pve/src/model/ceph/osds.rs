//! The OSDs (pve-manager `API2/Ceph/OSD.pm`): each on a whole disk of
//! its node, made by `ceph-volume lvm create` in a `ceph-<uuid>` volume
//! group, `up` while its service runs and `in` while it takes data; the
//! checks of `destroyosd`, `in`, `out` and `scrub` with PVE's and Ceph's
//! messages; the worker lines of `cephcreateosd` and `cephdestroyosd`.

use serde::{Deserialize, Serialize};

use super::Ceph;
use crate::model::node_hw::NodeHw;
use crate::model::{Error, Result};

/// An OSD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Osd {
    /// Its id (`osd.<id>`).
    pub id: u32,
    /// The node it runs on.
    pub host: String,
    /// Its data disk (`/dev/sdb`).
    pub devpath: String,
    /// The disk's size, bytes.
    pub size: u64,
    /// Its crush device class (`hdd`, `ssd`, `nvme`).
    pub class: String,
    /// Whether its service runs.
    pub up: bool,
    /// Whether it takes data.
    #[serde(rename = "in")]
    pub is_in: bool,
    /// `--dmcrypt`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub encrypted: bool,
    /// Its own uuid (`osd_fsid`), also the LV's name tail.
    pub uuid: String,
    /// Its volume group (`ceph-<uuid>`).
    pub vg: String,
    /// When it was made, epoch milliseconds.
    #[serde(default)]
    pub created_ms: i64,
    /// Its `block.db` on another device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db: Option<OsdLv>,
    /// Its `block.wal` on another device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal: Option<OsdLv>,
}

/// A `block.db` or `block.wal` logical volume of an OSD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OsdLv {
    /// The device its volume group is on (`/dev/sdc`).
    pub device: String,
    /// Its volume group (`ceph-<uuid>`).
    pub vg: String,
    /// Its name (`osd-db-<uuid>`).
    pub lv: String,
    /// Bytes.
    pub size: u64,
    /// The device's kind (`hdd`, `ssd`, `nvme`).
    pub class: String,
}

/// The `block.db` or `block.wal` a `cephcreateosd` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewLv {
    /// The device (`/dev/sdc`).
    pub dev: String,
    /// The size given (`db_dev_size`, `wal_dev_size`), bytes.
    pub size: Option<u64>,
    /// The uuids drawn for a new volume group and the volume.
    pub vg_uuid: String,
    /// The volume's uuid.
    pub lv_uuid: String,
}

/// What `ceph-volume lvm list` knows of a device: the OSDs whose block
/// volume is on it and how many `db` and `wal` volumes it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VolumeInfo {
    /// The OSDs with their block there, in the order `lvs` lists them.
    pub osdids: Vec<u32>,
    /// Whether one of them is encrypted.
    pub encrypted: bool,
    /// `block.db` volumes.
    pub db: u32,
    /// `block.wal` volumes.
    pub wal: u32,
}

impl Osd {
    /// `osd.<id>`.
    pub fn name(&self) -> String {
        format!("osd.{}", self.id)
    }

    /// Its logical volume (`osd-block-<uuid>`).
    pub fn lv(&self) -> String {
        format!("osd-block-{}", self.uuid)
    }

    /// Its crush weight: the size in TiB.
    pub fn crush_weight(&self) -> f64 {
        let tib = self.size as f64 / (1u64 << 40) as f64;
        (tib * 100_000.0).round() / 100_000.0
    }
}

/// A `cephcreateosd` as the call asked it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewOsd {
    /// The disk.
    pub devpath: String,
    /// Its size.
    pub size: u64,
    /// The device class given, else the disk's.
    pub class: String,
    /// `encrypted`.
    pub encrypted: bool,
    /// The uuids drawn for the OSD and its volume group.
    pub uuid: String,
    /// The volume group's uuid.
    pub vg_uuid: String,
    /// `db_dev` and `db_dev_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db: Option<NewLv>,
    /// `wal_dev` and `wal_dev_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal: Option<NewLv>,
    /// `osds-per-device` (`ceph-volume lvm batch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_device: Option<u32>,
    /// The uuids of the OSDs a batch makes beyond the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_uuids: Vec<String>,
    /// `crush-device-class` as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_given: Option<String>,
}

impl Ceph {
    /// The OSDs, by id.
    pub fn osds(&self) -> &[Osd] {
        &self.osds
    }

    /// An OSD by id.
    pub fn osd(&self, id: u32) -> Option<&Osd> {
        self.osds.iter().find(|o| o.id == id)
    }

    /// The OSD on a node's disk.
    pub fn osd_on(&self, node: &str, devpath: &str) -> Option<&Osd> {
        self.osds
            .iter()
            .find(|o| o.host == node && o.devpath == devpath)
    }

    /// `$get_osd_status` of one OSD (`osd dump`).
    ///
    /// # Errors
    /// `no such OSD '<id>'`.
    pub fn osd_status(&self, id: &str) -> Result<&Osd> {
        id.parse::<u32>()
            .ok()
            .and_then(|n| self.osd(n))
            .ok_or_else(|| Error::failed(format!("no such OSD '{id}'")))
    }

    /// `osd in` or `osd out`.
    ///
    /// # Errors
    /// `no such OSD '<id>'`.
    pub fn set_osd_in(&mut self, id: &str, is_in: bool) -> Result<()> {
        let n = self.osd_status(id)?.id;
        if let Some(o) = self.osds.iter_mut().find(|o| o.id == n)
            && o.is_in != is_in
        {
            o.is_in = is_in;
            self.osd_epoch += 1;
        }
        Ok(())
    }

    /// `osd scrub` / `osd deep-scrub`: the OSD must be up.
    ///
    /// # Errors
    /// `no such OSD`; `mon_command failed - osd.<id> is not up`.
    pub fn scrub_osd(&self, id: &str) -> Result<()> {
        let o = self.osd_status(id)?;
        if !o.up {
            return Err(Error::failed(format!(
                "mon_command failed - osd.{} is not up",
                o.id
            )));
        }
        Ok(())
    }

    /// `destroyosd` up to the fork: the OSD is under the node's host in
    /// the crush map, out and down.
    ///
    /// # Errors
    /// PVE's refusals in its order; `at_line` is where pve-manager's
    /// `die` without a newline stands.
    pub fn prepare_destroy_osd(&self, node: &str, id: &str, at_line: u32) -> Result<u32> {
        let mine = id
            .parse::<u32>()
            .ok()
            .and_then(|n| self.osd(n))
            .is_some_and(|o| o.host == node);
        if !mine {
            return Err(Error::failed(format!(
                "OSD osd.{id} does not belong to node {node}! at /usr/share/perl5/PVE/API2/Ceph/OSD.pm line {at_line}."
            )));
        }
        let o = self.osd_status(id)?;
        if o.is_in {
            return Err(Error::failed("osd is in use (in == 1)"));
        }
        if o.up {
            return Err(Error::failed("osd is still running (up == 1)"));
        }
        Ok(o.id)
    }

    /// The id `osd create` gives: the lowest free one.
    pub fn next_osd_id(&self) -> u32 {
        (0..).find(|n| self.osd(*n).is_none()).unwrap_or_default()
    }

    /// `ceph-volume lvm create` on `node`: the OSD, up and in, and the
    /// lines it prints.
    pub fn create_osd(&mut self, node: &str, new: &NewOsd, ms: i64, out: &mut Vec<String>) -> u32 {
        self.create_osd_with(node, new, None, None, ms, out)
    }

    /// `ceph-volume lvm create --block.db ... --block.wal ...`: the OSD
    /// with the logical volumes PVE made for it.
    pub fn create_osd_with(
        &mut self,
        node: &str,
        new: &NewOsd,
        db: Option<OsdLv>,
        wal: Option<OsdLv>,
        ms: i64,
        out: &mut Vec<String>,
    ) -> u32 {
        let id = self.next_osd_id();
        let vg = format!("ceph-{}", new.vg_uuid);
        let lv = format!("osd-block-{}", new.uuid);
        out.push("Running command: /bin/ceph-authtool --gen-print-key".into());
        out.push(osd_new_line(&new.uuid));
        out.extend(vgcreate_lines(&vg, &new.devpath));
        out.push(format!(
            "Running command: lvcreate --yes -l 100%FREE -n {lv} {vg}"
        ));
        out.push(format!(" stdout: Logical volume \"{lv}\" created."));
        for (kind, aux) in [("db", &db), ("wal", &wal)] {
            if let Some(a) = aux {
                out.push(format!(
                    "Running command: /bin/chown -h ceph:ceph /dev/{}/{}",
                    a.vg, a.lv
                ));
                out.push(format!(
                    "Running command: /bin/ln -snf /dev/{}/{} /var/lib/ceph/osd/ceph-{id}/block.{kind}",
                    a.vg, a.lv
                ));
            }
        }
        activate_lines(id, out);
        out.push(format!(
            "--> ceph-volume lvm create successful for: {}",
            new.devpath
        ));
        self.push_osd(Osd {
            id,
            host: node.to_string(),
            devpath: new.devpath.clone(),
            size: new.size,
            class: new.class.clone(),
            up: true,
            is_in: true,
            encrypted: new.encrypted,
            uuid: new.uuid.clone(),
            vg,
            created_ms: ms,
            db,
            wal,
        });
        id
    }

    /// `ceph-volume lvm batch --osds-per-device <n>`: `n` OSDs of
    /// `lv_size` bytes each in the volume group of `new.devpath`.
    pub fn create_osd_batch(
        &mut self,
        node: &str,
        new: &NewOsd,
        lv_size: u64,
        ms: i64,
        out: &mut Vec<String>,
    ) -> Vec<u32> {
        let n = new.per_device.unwrap_or(1).max(1);
        let vg = format!("ceph-{}", new.vg_uuid);
        out.push("--> passed data devices: 1 physical, 0 LVM".into());
        out.push(format!("--> relative data size: {}", relative(n)));
        let uuids = std::iter::once(new.uuid.clone()).chain(new.more_uuids.iter().cloned());
        let mut ids = Vec::new();
        for (k, uuid) in uuids.take(n as usize).enumerate() {
            let id = self.next_osd_id();
            let lv = format!("osd-block-{uuid}");
            out.push("Running command: /bin/ceph-authtool --gen-print-key".into());
            out.push(osd_new_line(&uuid));
            if k == 0 {
                out.extend(vgcreate_lines(&vg, &new.devpath));
            }
            out.push(format!(
                "Running command: lvcreate --yes -l {} -n {lv} {vg}",
                lv_size / (4 << 20)
            ));
            out.push(format!(" stdout: Logical volume \"{lv}\" created."));
            activate_lines(id, out);
            out.push(format!(
                "--> ceph-volume lvm create successful for: {vg}/{lv}"
            ));
            self.push_osd(Osd {
                id,
                host: node.to_string(),
                devpath: new.devpath.clone(),
                size: lv_size,
                class: new.class.clone(),
                up: true,
                is_in: true,
                encrypted: new.encrypted,
                uuid,
                vg: vg.clone(),
                created_ms: ms,
                db: None,
                wal: None,
            });
            ids.push(id);
        }
        ids
    }

    fn push_osd(&mut self, osd: Osd) {
        self.osds.push(osd);
        self.osds.sort_by_key(|o| o.id);
        self.osd_epoch += 1;
    }

    /// What `ceph-volume lvm list` (through `lvs`' tags) tells
    /// `get_disks` of `devpath` on `node`.
    pub fn volume_info(&self, node: &str, devpath: &str) -> Option<VolumeInfo> {
        let mut info = VolumeInfo::default();
        let mut blocks: Vec<&Osd> = self
            .osds
            .iter()
            .filter(|o| o.host == node && o.devpath == devpath)
            .collect();
        blocks.sort_by_key(|o| o.lv());
        info.osdids = blocks.iter().map(|o| o.id).collect();
        info.encrypted = blocks.iter().any(|o| o.encrypted);
        for o in self.osds.iter().filter(|o| o.host == node) {
            info.db += u32::from(o.db.as_ref().is_some_and(|l| l.device == devpath));
            info.wal += u32::from(o.wal.as_ref().is_some_and(|l| l.device == devpath));
        }
        (info != VolumeInfo::default()).then_some(info)
    }

    /// The work of `cephdestroyosd` up to `ceph-volume lvm zap`: the
    /// lines it prints, the OSD gone. Answers the OSD that was (see
    /// [`zap`] for its volumes).
    ///
    /// # Errors
    /// The OSD is gone already.
    pub fn destroy_osd(&mut self, id: u32, out: &mut Vec<String>) -> Result<Osd> {
        let Some(i) = self.osds.iter().position(|o| o.id == id) else {
            return Err(Error::failed(format!("no such OSD '{id}'")));
        };
        let osd = self.osds.remove(i);
        let s = osd.name();
        out.push(format!("destroy OSD {s}"));
        out.push(format!("Remove {s} from the CRUSH map"));
        out.push(format!("Remove the {s} authentication key."));
        out.push(format!("Remove OSD {s}"));
        out.push(format!(
            "Remove {s} mclock max capacity iops settings from config"
        ));
        if let Some(db) = self.db.get_mut(&s) {
            db.remove("osd_mclock_max_capacity_iops_ssd");
            db.remove("osd_mclock_max_capacity_iops_hdd");
            if db.is_empty() {
                self.db.remove(&s);
            }
        }
        self.osd_epoch += 1;
        Ok(osd)
    }

    /// `systemctl start|stop ceph-osd@<id>` (or all of a node's).
    pub(super) fn run_osds(&mut self, node: &str, id: Option<&str>, running: bool) {
        for o in self.osds.iter_mut().filter(|o| o.host == node) {
            if id.is_none_or(|want| want == o.id.to_string()) && o.up != running {
                o.up = running;
                self.osd_epoch += 1;
            }
        }
    }

    /// An OSD as a scenario declares it.
    ///
    /// # Errors
    /// The disk already holds one.
    pub fn declare_osd(
        &mut self,
        node: &str,
        new: &NewOsd,
        up: bool,
        is_in: bool,
        ms: i64,
    ) -> std::result::Result<u32, String> {
        if self.osd_on(node, &new.devpath).is_some() {
            return Err(format!("{} on {node} holds an OSD already", new.devpath));
        }
        let mut out = Vec::new();
        let id = self.create_osd(node, new, ms, &mut out);
        if let Some(o) = self.osds.iter_mut().find(|o| o.id == id) {
            o.up = up;
            o.is_in = is_in;
        }
        Ok(id)
    }
}

/// `ceph osd new <uuid>` as `ceph-volume` runs it.
fn osd_new_line(uuid: &str) -> String {
    format!(
        "Running command: /bin/ceph --cluster ceph --name client.bootstrap-osd --keyring /var/lib/ceph/bootstrap-osd/ceph.keyring -i - osd new {uuid}"
    )
}

/// The end of `ceph-volume lvm activate`.
fn activate_lines(id: u32, out: &mut Vec<String>) {
    out.push(format!(
        "Running command: /bin/systemctl enable --runtime ceph-osd@{id}"
    ));
    out.push(format!(
        "Running command: /bin/systemctl start ceph-osd@{id}"
    ));
    out.push(format!(
        "--> ceph-volume lvm activate successful for osd ID: {id}"
    ));
}

/// `batch`'s relative data size of `n` OSDs per device, as Python
/// prints the float.
fn relative(n: u32) -> String {
    let f = 1.0 / f64::from(n);
    let s = format!("{f}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

/// `ceph-volume lvm zap --osd-id <id> [--destroy]` of a destroyed OSD's
/// logical volumes on `hw`: each wiped; with `destroy` each removed, the
/// last of a volume group taking the group and freeing its device.
pub fn zap(osd: &Osd, destroy: bool, hw: &mut NodeHw, out: &mut Vec<String>) {
    let mut lvs = vec![(osd.vg.clone(), osd.lv(), osd.size)];
    lvs.extend(osd.db.iter().map(|l| (l.vg.clone(), l.lv.clone(), l.size)));
    lvs.extend(osd.wal.iter().map(|l| (l.vg.clone(), l.lv.clone(), l.size)));
    for (vg, lv, size) in lvs {
        out.push(format!("--> Zapping: /dev/{vg}/{lv}"));
        if !destroy {
            continue;
        }
        let left = hw
            .vgs()
            .iter()
            .find(|v| v.name == vg)
            .map_or(0, |v| v.lvcount);
        if left <= 1 {
            out.push(format!(
                "--> Only 1 LV left in VG, will proceed to destroy volume group {vg}"
            ));
        } else {
            out.push("--> More than 1 LV left in VG, will proceed to destroy LV only".into());
            out.push(format!(
                "--> Removing LV because --destroy was given: /dev/{vg}/{lv}"
            ));
        }
        hw.ceph_lv_zap(&vg, size);
    }
    out.push(format!("--> Zapping successful for OSD: {}", osd.id));
}

/// `$test_disk_requirements` of `cephcreateosd`: the OSD's device
/// unused; a `block.db`/`block.wal` device unused, with LVM on it, or
/// GPT-partitioned.
///
/// # Errors
/// PVE's messages.
pub fn disk_requirements(hw: &NodeHw, new: &NewOsd) -> Result<()> {
    let info = hw
        .osd_device_info(&new.devpath)
        .map_err(|_| Error::failed(format!("unable to get device info for '{}'", new.devpath)))?;
    if info.used.is_some() {
        return Err(Error::failed(format!(
            "device '{}' is already in use",
            new.devpath
        )));
    }
    for (kind, lv) in [("db_dev", &new.db), ("wal_dev", &new.wal)] {
        let Some(lv) = lv else { continue };
        let info = hw.osd_device_info(&lv.dev).map_err(|_| {
            Error::failed(format!(
                "unable to get device info for '{}' for type {kind}",
                lv.dev
            ))
        })?;
        match info.used.as_deref() {
            None | Some("LVM") => {}
            Some("partitions") if !info.gpt => {
                return Err(Error::failed(format!(
                    "device '{}' is not GPT partitioned",
                    lv.dev
                )));
            }
            Some("partitions") => {}
            Some(_) => {
                return Err(Error::failed(format!(
                    "device '{}' is already in use and has no LVM on it",
                    lv.dev
                )));
            }
        }
    }
    Ok(())
}

/// A size from the config (`bluestore_block_db_size`) as PVE takes it:
/// digits only.
fn config_size(v: &str) -> Result<u64> {
    v.parse::<u64>()
        .ok()
        .filter(|_| v.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| Error::failed(format!("invalid size '{v}'")))
}

impl Ceph {
    /// `get_db_wal_sizes`: `bluestore_block_{db,wal}_size` from the
    /// config database (`osd`, then `global`), else `ceph.conf` (`[osd]`,
    /// then `[global]`).
    pub fn db_wal_size(&self, kind: &str) -> Option<String> {
        let key = format!("bluestore_block_{kind}_size");
        let from_db = ["osd", "global"]
            .iter()
            .find_map(|who| self.db.get(*who).and_then(|m| m.get(&key)).cloned());
        from_db.filter(|v| !v.is_empty() && v != "0").or_else(|| {
            let conf = self.conf.as_ref()?;
            ["osd", "global"]
                .iter()
                .find_map(|s| conf.get(s, &key).map(str::to_string))
        })
    }

    /// The worker of `cephcreateosd` on `node`: the requirements checked
    /// again, the `block.db` and `block.wal` volumes made, the device
    /// wiped, then `ceph-volume lvm create` (or `lvm batch` for several
    /// OSDs per device). Answers the OSDs made.
    ///
    /// # Errors
    /// What the worker dies of.
    pub fn run_create_osd(
        &mut self,
        hw: &mut NodeHw,
        node: &str,
        new: &NewOsd,
        ms: i64,
        out: &mut Vec<String>,
    ) -> Result<Vec<u32>> {
        self.rados(node)?;
        disk_requirements(hw, new)?;
        out.push(format!("create OSD on {} (bluestore)", new.devpath));
        let mut made = [None, None];
        for (k, (kind, lv, share)) in [("db", &new.db, 10), ("wal", &new.wal, 100)]
            .into_iter()
            .enumerate()
        {
            let Some(lv) = lv else { continue };
            let size = match lv.size {
                Some(s) => s,
                None => match self.db_wal_size(kind) {
                    Some(v) => config_size(&v)?,
                    None => new.size / share,
                },
            };
            out.push(format!("creating block.{kind} on '{}'", lv.dev));
            let info = hw.osd_device_info(&lv.dev)?;
            if info.used.as_deref() == Some("partitions") {
                return Err(Error::NotImplemented(format!(
                    "a block.{kind} partition appended to '{}' is not emulated by fake-pve",
                    info.devpath
                )));
            }
            let m = hw.ceph_lv_create(
                &info.devpath,
                size,
                &format!("osd-{kind}"),
                &lv.vg_uuid,
                &lv.lv_uuid,
                out,
            )?;
            out.push(format!("using '{}/{}' for block.{kind}", m.vg, m.lv));
            made[k] = Some(OsdLv {
                device: info.devpath,
                vg: m.vg,
                lv: m.lv,
                size: m.size,
                class: info.kind.as_str().to_string(),
            });
        }
        let vg = format!("ceph-{}", new.vg_uuid);
        let partition = hw.osd_device_info(&new.devpath)?.partition;
        if let Some(n) = new.per_device {
            out.extend(hw.ceph_osd_create(&new.devpath, &vg)?);
            if partition {
                out.push("The operation has completed successfully.".into());
                let mut cmd = String::from("ceph-volume lvm batch");
                if let Some(c) = &new.class_given {
                    cmd.push_str(&format!(" --crush-device-class {c}"));
                }
                if new.encrypted {
                    cmd.push_str(" --dmcrypt");
                }
                cmd.push_str(&format!(
                    " --osds-per-device {n} --yes --no-auto -- {}",
                    new.devpath
                ));
                out.push(format!(
                    "ceph-volume lvm batch: error: {} is a partition, please pass LVs or raw block devices",
                    new.devpath
                ));
                hw.ceph_lv_zap(&vg, 0);
                return Err(Error::failed(format!(
                    "command '{cmd}' failed: exit code 2"
                )));
            }
            let lv_size = hw.ceph_batch_split(&vg, n);
            return Ok(self.create_osd_batch(node, new, lv_size, ms, out));
        }
        out.extend(hw.ceph_osd_create(&new.devpath, &vg)?);
        if partition {
            out.push("The operation has completed successfully.".into());
        }
        let [db, wal] = made;
        Ok(vec![self.create_osd_with(node, new, db, wal, ms, out)])
    }
}

/// What `ceph-volume` logs making a volume group on a whole device.
fn vgcreate_lines(vg: &str, dev: &str) -> [String; 3] {
    [
        format!("Running command: vgcreate --force --yes {vg} {dev}"),
        format!(" stdout: Physical volume \"{dev}\" successfully created."),
        format!(" stdout: Volume group \"{vg}\" successfully created"),
    ]
}
