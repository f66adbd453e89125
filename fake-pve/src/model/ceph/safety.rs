//! `GET /nodes/{node}/ceph/cmd-safety` (pve-manager `API2/Ceph.pm`):
//! Ceph's `osd ok-to-stop`, `osd safe-to-destroy`, `mon ok-to-stop`,
//! `mon ok-to-rm` and `mds ok-to-stop`, answered from the model: a
//! return code (`0`, `-EBUSY`, `-ENOENT`) and the status message.

use super::Ceph;
use crate::model::{Error, Result};

/// `-EBUSY`.
const EBUSY: i32 = -16;
/// `-ENOENT`.
const ENOENT: i32 = -2;

/// What a safety command answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Safety {
    /// The command's return code.
    pub code: i32,
    /// Its status message (may be empty).
    pub status: String,
}

impl Safety {
    fn new(code: i32, status: impl Into<String>) -> Self {
        Self {
            code,
            status: status.into(),
        }
    }
}

impl Ceph {
    /// The command PVE sends for `service` and `action`.
    ///
    /// # Errors
    /// `Service does not support this action: <service>: <action>`.
    pub fn cmd_safety(&self, service: &str, id: &str, action: &str) -> Result<Safety> {
        match (service, action) {
            ("osd", "stop") => Ok(self.osd_ok_to_stop(id)),
            ("osd", "destroy") => Ok(self.osd_safe_to_destroy(id)),
            ("mon", "stop") => Ok(self.mon_ok_to_stop(id)),
            ("mon", "destroy") => Ok(self.mon_ok_to_rm(id)),
            ("mds", "stop") => Ok(Safety::new(0, "")),
            _ => Err(Error::failed(format!(
                "Service does not support this action: {service}: {action}"
            ))),
        }
    }

    /// The placement groups of the pools whose replicas `osd` holds (all
    /// while it is up and in).
    fn pgs_on(&self, up_and_in: bool) -> u64 {
        if up_and_in {
            self.pools.iter().map(|p| u64::from(p.pg_num)).sum()
        } else {
            0
        }
    }

    fn osd_ok_to_stop(&self, id: &str) -> Safety {
        let Some(osd) = id.parse::<u32>().ok().and_then(|n| self.osd(n)) else {
            return Safety::new(ENOENT, format!("osd.{id} does not exist"));
        };
        let holds = osd.up && osd.is_in;
        let left = self
            .osds
            .iter()
            .filter(|o| o.up && o.is_in && o.id != osd.id)
            .count() as u32;
        let offline: u64 = if holds {
            self.pools
                .iter()
                .filter(|p| left < p.min_size)
                .map(|p| u64::from(p.pg_num))
                .sum()
        } else {
            0
        };
        if offline > 0 {
            return Safety::new(
                EBUSY,
                format!(
                    "unsafe to stop osd(s) at this time ({offline} PGs are or would become offline)"
                ),
            );
        }
        Safety::new(
            0,
            format!(
                "OSD(s) {} are ok to stop without reducing availability or risking data, provided there are no other concurrent failures or interventions.\n{} PGs are likely to be degraded (but remain available) as a result.",
                osd.id,
                self.pgs_on(holds)
            ),
        )
    }

    fn osd_safe_to_destroy(&self, id: &str) -> Safety {
        let Some(osd) = id.parse::<u32>().ok().and_then(|n| self.osd(n)) else {
            return Safety::new(ENOENT, format!("osd.{id} does not exist"));
        };
        let pgs = self.pgs_on(osd.up && osd.is_in);
        if pgs > 0 {
            return Safety::new(
                EBUSY,
                format!(
                    "OSD(s) {} have {pgs} pgs currently mapped to them. ",
                    osd.id
                ),
            );
        }
        Safety::new(
            0,
            format!(
                "OSD(s) {} are safe to destroy without reducing data durability.",
                osd.id
            ),
        )
    }

    fn mon_ok_to_stop(&self, id: &str) -> Safety {
        let quorum = self.quorum_names();
        let alive: Vec<&String> = quorum.iter().filter(|m| *m != id).collect();
        let names = alive
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(",");
        if alive.len() * 2 <= self.mons.len() {
            return Safety::new(
                EBUSY,
                format!(
                    "not enough monitors would be available ({names}) after stopping mons [{id}]"
                ),
            );
        }
        Safety::new(
            0,
            format!("quorum should be preserved ({names}) after stopping [{id}]"),
        )
    }

    fn mon_ok_to_rm(&self, id: &str) -> Safety {
        if !self.mons.iter().any(|m| m.id == id) {
            return Safety::new(0, format!("mon.{id} does not exist"));
        }
        let mons: Vec<&str> = self
            .mons
            .iter()
            .map(|m| m.id.as_str())
            .filter(|m| *m != id)
            .collect();
        let quorum: Vec<String> = self
            .quorum_names()
            .into_iter()
            .filter(|m| m != id)
            .collect();
        if quorum.len() * 2 <= mons.len() || mons.is_empty() {
            return Safety::new(
                EBUSY,
                format!(
                    "removing mon.{id} would break quorum (new quorum {}, new mons {})",
                    quorum.join(","),
                    mons.join(",")
                ),
            );
        }
        Safety::new(
            0,
            format!(
                "safe to remove mon.{id}, new quorum will be ({})",
                quorum.join(",")
            ),
        )
    }
}
