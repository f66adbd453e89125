//! The OSDs (pve-manager `API2/Ceph/OSD.pm`): each on a whole disk of
//! its node, made by `ceph-volume lvm create` in a `ceph-<uuid>` volume
//! group, `up` while its service runs and `in` while it takes data; the
//! checks of `destroyosd`, `in`, `out` and `scrub` with PVE's and Ceph's
//! messages; the worker lines of `cephcreateosd` and `cephdestroyosd`.

use serde::{Deserialize, Serialize};

use super::Ceph;
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        let id = self.next_osd_id();
        let vg = format!("ceph-{}", new.vg_uuid);
        let lv = format!("osd-block-{}", new.uuid);
        out.push("Running command: /bin/ceph-authtool --gen-print-key".into());
        out.push(format!(
            "Running command: /bin/ceph --cluster ceph --name client.bootstrap-osd --keyring /var/lib/ceph/bootstrap-osd/ceph.keyring -i - osd new {}",
            new.uuid
        ));
        out.push(format!(
            "Running command: vgcreate --force --yes {vg} {}",
            new.devpath
        ));
        out.push(format!(
            " stdout: Physical volume \"{}\" successfully created.",
            new.devpath
        ));
        out.push(format!(
            " stdout: Volume group \"{vg}\" successfully created"
        ));
        out.push(format!(
            "Running command: lvcreate --yes -l 100%FREE -n {lv} {vg}"
        ));
        out.push(format!(" stdout: Logical volume \"{lv}\" created."));
        out.push(format!(
            "Running command: /bin/systemctl enable --runtime ceph-osd@{id}"
        ));
        out.push(format!(
            "Running command: /bin/systemctl start ceph-osd@{id}"
        ));
        out.push(format!(
            "--> ceph-volume lvm activate successful for osd ID: {id}"
        ));
        out.push(format!(
            "--> ceph-volume lvm create successful for: {}",
            new.devpath
        ));
        self.osds.push(Osd {
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
        });
        self.osds.sort_by_key(|o| o.id);
        self.osd_epoch += 1;
        id
    }

    /// The work of `cephdestroyosd`: the lines it prints, the OSD gone.
    /// Answers the OSD that was.
    ///
    /// # Errors
    /// The OSD is gone already.
    pub fn destroy_osd(&mut self, id: u32, cleanup: bool, out: &mut Vec<String>) -> Result<Osd> {
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
        out.push(format!("--> Zapping: /dev/{}/{}", osd.vg, osd.lv()));
        if cleanup {
            out.push(format!(
                "--> Only 1 LV left in VG, will proceed to destroy volume group {}",
                osd.vg
            ));
            out.push(format!("--> Zapping successful for OSD: {id}"));
        } else {
            out.push(format!("--> Zapping successful for OSD: {id}"));
        }
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
