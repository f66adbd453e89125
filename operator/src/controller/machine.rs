//! Reconciling a Machine: observe, plan, one step, again.

use std::collections::BTreeSet;
use std::time::Instant;

use tracing::{Instrument, info, warn};

use super::observe::add_placed;
use super::{MAX_STEPS, MachineOutcome, Operator, Placed, World};
use crate::error::{Error, Result};
use crate::plan::{self, Desired, Observed, Step};
use crate::types::{
    Condition, MachineSpec, MachineStatus, Object, Phase, now_rfc3339, set_condition,
};

impl Operator {
    /// Reserves a VMID for a create; false when another reconcile holds it.
    fn reserve(&self, vmid: u32) -> bool {
        self.reserved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(vmid)
    }

    fn release(&self, vmid: u32) {
        self.reserved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&vmid);
    }

    /// One reconcile of a Machine: observe, plan, one step, again, until
    /// PVE matches the spec (or it is deleted, when `deleting`).
    pub async fn reconcile_machine(
        &self,
        world: &World,
        m: &Object<MachineSpec>,
        old: &MachineStatus,
        deleting: bool,
    ) -> MachineOutcome {
        self.reconcile_machine_with_progress(world, m, old, deleting, &|_| {})
            .await
    }

    /// As [`Operator::reconcile_machine`], handing `progress` the status
    /// as it stands each time a step that changed PVE ended (its VMID once
    /// made, the step in its `Ready` condition), while the reconcile goes
    /// on: the caller writes it, so that a reconcile of several steps
    /// shows where it is.
    pub async fn reconcile_machine_with_progress(
        &self,
        world: &World,
        m: &Object<MachineSpec>,
        old: &MachineStatus,
        deleting: bool,
        progress: &(dyn Fn(&MachineStatus) + Send + Sync),
    ) -> MachineOutcome {
        let span = tracing::info_span!("reconcile", machine = m.metadata.name.as_str());
        self.reconcile_machine_in_span(world, m, old, deleting, progress)
            .instrument(span)
            .await
    }

    async fn reconcile_machine_in_span(
        &self,
        world: &World,
        m: &Object<MachineSpec>,
        old: &MachineStatus,
        deleting: bool,
        progress: &(dyn Fn(&MachineStatus) + Send + Sync),
    ) -> MachineOutcome {
        let start = Instant::now();
        let mut status = old.clone();
        let out = self
            .machine_inner(world, m, &mut status, deleting, progress)
            .await;
        let now = now_rfc3339();
        status.last_updated = Some(now.clone());
        let outcome = match out {
            Ok((finalized, wait)) => MachineOutcome {
                status,
                finalized,
                wait,
                error: None,
            },
            Err(e) => {
                let t = e.error_type();
                self.metrics.error(t.as_str(), "machine");
                if t == crate::error::ErrorType::Authentication {
                    self.drop_conn(&m.spec.cluster);
                }
                warn!(machine = m.metadata.name.as_str(), error = %e, error_type = t.as_str(), "reconcile failed");
                let reason = if matches!(&e, Error::Pve(p) if p.status() == Some(595)) {
                    "NodeUnhealthy"
                } else {
                    t.reason()
                };
                set_condition(
                    &mut status.conditions,
                    Condition::new("Ready", false, reason, e.to_string()),
                    &now,
                );
                if let Error::Refused { .. } = &e {
                    set_condition(
                        &mut status.conditions,
                        Condition::new("VMCreated", false, "CreationFailed", e.to_string()),
                        &now,
                    );
                }
                if status.vmid.is_none() && !t.is_retryable() {
                    status.phase = Phase::Error;
                }
                MachineOutcome {
                    status,
                    finalized: false,
                    wait: false,
                    error: Some(e),
                }
            }
        };
        self.metrics
            .reconcile_duration("machine", start.elapsed().as_secs_f64());
        outcome
    }

    async fn machine_inner(
        &self,
        world: &World,
        m: &Object<MachineSpec>,
        status: &mut MachineStatus,
        deleting: bool,
        progress: &(dyn Fn(&MachineStatus) + Send + Sync),
    ) -> Result<(bool, bool)> {
        let mut steps = 0;
        // A step that changed PVE ended: the status so far goes out.
        let mut stepped = |status: &mut MachineStatus, step: &Step, vmid: Option<u32>| {
            steps += 1;
            let now = now_rfc3339();
            let reason = status
                .conditions
                .iter()
                .find(|c| c.kind == "Ready" && c.status == "False")
                .map_or_else(|| "Reconciling".to_string(), |c| c.reason.clone());
            let vm = vmid.map_or_else(|| "the VM".to_string(), |v| format!("VM {v}"));
            set_condition(
                &mut status.conditions,
                Condition::new(
                    "Ready",
                    false,
                    &reason,
                    format!(
                        "step {steps}: {} of {vm} done, reconciling goes on",
                        step.name()
                    ),
                ),
                &now,
            );
            status.last_updated = Some(now);
            progress(status);
        };
        let d = Desired::from_machine(m);
        let now = now_rfc3339();
        if !d.errors.is_empty() && !deleting {
            let p = plan::plan_machine(&d, &Observed::default());
            apply(status, &p, &now);
            return Ok((false, false));
        }
        if deleting && m.spec.deletion_policy == crate::types::DeletionPolicy::Orphan {
            // Nothing to do in PVE: no need to reach it.
            info!(
                vmid = ?status.vmid,
                "orphaning the VM, if any: deletionPolicy is Orphan"
            );
            return Ok((true, false));
        }
        if deleting && !self.knows_cluster(world, &m.spec.cluster) {
            // Nothing can be done in a cluster that is not declared; a
            // finalizer kept for ever would help nobody.
            warn!(
                cluster = m.spec.cluster.as_str(),
                vmid = ?status.vmid,
                "ProxmoxCluster not found: the VM, if any, is left in PVE"
            );
            return Ok((true, false));
        }
        let pve = match self.connect(world, &m.spec.cluster).await {
            Ok(p) => p,
            Err(e) if deleting => return Err(Error::Deleting(Box::new(e))),
            Err(e) => return Err(e),
        };
        let mut extra_used = BTreeSet::new();
        let mut done: Vec<Step> = Vec::new();
        for _ in 0..MAX_STEPS {
            // A machine without a VM is placed alone, seeing the choices
            // made for the others in this pass.
            let mut placing = if status.vmid.is_none() && !deleting {
                Some(self.placing.lock().await)
            } else {
                None
            };
            let mut o = self
                .observe(&pve, world, &d, status.vmid, &extra_used)
                .await?;
            o.last_reboot = status.last_reboot.clone();
            if let Some(placed) = placing.as_mut() {
                add_placed(&mut o, placed, world, &m.spec.cluster, &m.metadata.name);
            }
            if deleting {
                let dp =
                    plan::plan_delete(m.spec.deletion_policy, m.spec.protection, o.vm.as_ref());
                if dp.done {
                    if let Some(vm) = &o.vm {
                        info!(vmid = vm.vmid, "orphaning VM: deletionPolicy is Orphan");
                    }
                    return Ok((true, false));
                }
                if let Some(b) = dp.blocked {
                    set_condition(
                        &mut status.conditions,
                        Condition::new("Ready", false, "DeletionBlocked", b),
                        &now,
                    );
                    return Ok((false, false));
                }
                match dp.steps.first() {
                    Some(s) => {
                        self.execute(&pve, s).await?;
                        stepped(status, s, o.vm.as_ref().map(|v| v.vmid));
                    }
                    None => return Ok((false, true)),
                }
                continue;
            }
            let p = plan::plan_machine(&d, &o);
            if o.vm.is_none() {
                // No VM (any more): forget the VMID, node and addresses,
                // and the conditions that spoke of them (the VMID may
                // belong to another machine by now).
                status.vmid = None;
                status.node = None;
                status.ip_addresses.clear();
                status
                    .conditions
                    .retain(|c| p.conditions.iter().any(|n| n.kind == c.kind));
            }
            apply(status, &p, &now);
            status.console = None;
            if let Some(vm) = &o.vm {
                status.ip_addresses = vm.ip_addresses.clone();
                let api = pve.client.config().api_url();
                let ui = api.strip_suffix("/api2/json").unwrap_or(api);
                status.console = Some(plan::console(ui, &vm.node, vm.vmid, &vm.config));
            }
            let Some(step) = p.steps.first() else {
                return Ok((false, p.wait));
            };
            // A step planned again after it ran changed nothing: stop
            // instead of sending it for ever.
            if done.contains(step) {
                return Err(Error::NoProgress(format!(
                    "{} of VM {} changed nothing and is planned again",
                    step.name(),
                    p.vmid.map_or_else(|| "-".to_string(), |v| v.to_string())
                )));
            }
            if let (Some(placed), Some(node)) = (placing.as_mut(), p.node.as_ref())
                && let Step::Create { vmid, .. } | Step::Clone { vmid, .. } = step
            {
                placed.insert(
                    (m.spec.cluster.clone(), m.metadata.name.clone()),
                    Placed {
                        node: node.clone(),
                        labels: m.metadata.labels.clone(),
                        memory: d.memory_mib * plan::MIB,
                        vmid: *vmid,
                    },
                );
            }
            drop(placing);
            match step {
                Step::Create { vmid, auto, .. } | Step::Clone { vmid, auto, .. } => {
                    if !self.reserve(*vmid) {
                        extra_used.insert(*vmid);
                        continue;
                    }
                    let r = self.execute(&pve, step).await;
                    self.release(*vmid);
                    match r {
                        Err(e) if *auto && e.is_already_exists() => {
                            info!(vmid = *vmid, "VMID taken meanwhile; choosing another");
                            extra_used.insert(*vmid);
                            continue;
                        }
                        // PVE answered no (500 with its reason): the
                        // same request would get the same answer.
                        Err(Error::Pve(source))
                            if source.status() == Some(500)
                                && source.category() == pve_client::Category::Server =>
                        {
                            return Err(Error::Refused {
                                step: step.name(),
                                source,
                            });
                        }
                        Err(e) => return Err(e),
                        Ok(()) => {
                            status.vmid = Some(*vmid);
                            status.node = p.node.clone();
                            // A new VM needs no reboot.
                            status.last_reboot = m.spec.reboot_request.clone();
                            stepped(status, step, Some(*vmid));
                        }
                    }
                }
                s => {
                    self.execute(&pve, s).await?;
                    // A start boots afresh: it counts as the reboot.
                    if let Step::Reboot { .. } | Step::Start { .. } = s {
                        status.last_reboot = m.spec.reboot_request.clone();
                    }
                    stepped(status, s, p.vmid);
                    done.push(s.clone());
                }
            }
        }
        Ok((false, true))
    }
}

/// Writes a plan's phase, placement and conditions into a status.
pub(super) fn apply(status: &mut MachineStatus, p: &plan::Plan, now: &str) {
    status.phase = p.phase;
    if p.vmid.is_some()
        && !p
            .steps
            .iter()
            .any(|s| matches!(s, Step::Create { .. } | Step::Clone { .. }))
    {
        status.vmid = p.vmid;
        status.node = p.node.clone();
    }
    for c in &p.conditions {
        set_condition(&mut status.conditions, c.clone(), now);
    }
    // A name that is PVE's as given says nothing (any more).
    if !p.conditions.iter().any(|c| c.kind == plan::NAME_CONDITION) {
        status.conditions.retain(|c| c.kind != plan::NAME_CONDITION);
    }
}
