//! A container's power state: the checks the status calls make before
//! forking, and the start the tasks end with (pve-container
//! `API2/LXC/Status.pm`, `LXC.pm` `vm_start`, `vm_stop`), and `vzdestroy`'s
//! early checks (`API2/LXC.pm` `destroy_vm`).

use super::CtOps;
use super::{LxcOp, lxc_worker};
use crate::model::guests::Guests;
use crate::model::qemu::EffectResult;
use crate::model::tasks::Worker;
use crate::model::{Error, Result};

/// A power call of `/nodes/{node}/lxc/{vmid}/status/...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerCall {
    /// `start`.
    Start {
        /// Skip the lock check (root only).
        skiplock: bool,
    },
    /// `stop`.
    Stop {
        /// Skip the lock check (root only).
        skiplock: bool,
    },
    /// `shutdown`.
    Shutdown {
        /// Seconds to wait.
        timeout: u64,
        /// Kill it when it does not stop in time.
        force_stop: bool,
    },
    /// `reboot`.
    Reboot,
    /// `suspend`.
    Suspend,
    /// `resume`.
    Resume,
}

impl Guests {
    /// The checks a status call makes before forking, and its worker.
    ///
    /// # Errors
    /// A missing container; `CT N already running`, `CT N not running`
    /// (and `VM N not running` for a reboot, as PVE words it).
    pub fn ct_power(&self, node: &str, vmid: u32, call: PowerCall) -> Result<Worker> {
        let ct = self.ct(node, vmid)?;
        let running = ct.running();
        let not_running = || Error::conflict(format!("CT {vmid} not running"));
        let already = || Error::conflict(format!("CT {vmid} already running"));
        Ok(match call {
            PowerCall::Start { skiplock } => {
                if running {
                    return Err(already());
                }
                lxc_worker("vzstart", vmid, LxcOp::Start { skiplock })
            }
            PowerCall::Stop { skiplock } => {
                if !running {
                    return Err(not_running());
                }
                lxc_worker("vzstop", vmid, LxcOp::Stop { skiplock })
            }
            PowerCall::Shutdown {
                timeout,
                force_stop,
            } => {
                if !running {
                    return Err(not_running());
                }
                lxc_worker(
                    "vzshutdown",
                    vmid,
                    LxcOp::Shutdown {
                        timeout,
                        force_stop,
                    },
                )
            }
            PowerCall::Reboot => {
                if !running {
                    return Err(Error::conflict(format!("VM {vmid} not running")));
                }
                lxc_worker("vzreboot", vmid, LxcOp::Reboot)
            }
            PowerCall::Suspend => {
                if !running {
                    return Err(not_running());
                }
                lxc_worker("vzsuspend", vmid, LxcOp::Suspend)
            }
            PowerCall::Resume => {
                if running {
                    return Err(already());
                }
                lxc_worker("vzresume", vmid, LxcOp::Resume)
            }
        })
    }

    /// `destroy_vm`'s early checks, and the `vzdestroy` worker.
    ///
    /// # Errors
    /// A missing container; protection; a lock; a running container
    /// without `force`.
    pub fn destroy_ct(
        &self,
        node: &str,
        vmid: u32,
        purge: bool,
        unreferenced: bool,
        force: bool,
    ) -> Result<Worker> {
        let ct = self.ct(node, vmid)?;
        ct.check_protection(&format!("can't remove CT {vmid}"))?;
        ct.check_lock()?;
        if ct.running() && !force {
            return Err(Error::conflict(format!(
                "unable to destroy CT {vmid} - container is running"
            )));
        }
        Ok(lxc_worker(
            "vzdestroy",
            vmid,
            LxcOp::Destroy {
                purge,
                unreferenced,
                force,
            },
        ))
    }
}

impl CtOps<'_> {
    /// `vm_start`: refusals, bridges, pending changes, then running.
    pub(in crate::model) fn ct_power_on(
        &mut self,
        vmid: u32,
        skiplock: bool,
        end_ms: i64,
    ) -> EffectResult {
        let now = end_ms.div_euclid(1000);
        let Some(ct) = self.guests.ct_by_id(vmid) else {
            return Err((
                vec![],
                super::config_missing(self.nodes.local(), vmid).to_string(),
            ));
        };
        if ct.template() {
            return Err((vec![], "you can't start a CT if it's a template".into()));
        }
        if !skiplock {
            ct.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        if ct.running() {
            return Err((vec![], format!("CT {vmid} already running")));
        }
        let bridges = crate::model::sdn::node_bridges(self.nodes, self.sdn, &ct.node);
        for (k, v) in ct.effective() {
            if !super::schema::is_indexed_key(&k, "net") {
                continue;
            }
            if let Some(b) = v.split(',').find_map(|p| p.strip_prefix("bridge="))
                && !bridges.iter().any(|x| x == b)
            {
                return Err((
                    vec![format!("bridge '{b}' does not exist")],
                    format!("startup for container '{vmid}' failed"),
                ));
            }
        }
        let mut lines = Vec::new();
        self.apply_ct_pending(vmid, &mut lines, now);
        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
            ct.set_running(end_ms);
        }
        Ok(lines)
    }
}
