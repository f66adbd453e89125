//! Reconciling a MachineSnapshot.

use std::time::Instant;

use tracing::Instrument;

use super::{Operator, World};
use crate::error::{Error, Result};
use crate::plan::{self, Step};
use crate::types::{MachineSnapshotSpec, MachineSnapshotStatus, Object, now_rfc3339};
use crate::validate;

impl Operator {
    /// One reconcile of a MachineSnapshot. Returns the status, whether the
    /// deletion finished, and the error to back off on.
    pub async fn reconcile_snapshot(
        &self,
        world: &World,
        s: &Object<MachineSnapshotSpec>,
        old: &MachineSnapshotStatus,
        deleting: bool,
    ) -> (MachineSnapshotStatus, bool, Option<Error>) {
        let start = Instant::now();
        let mut st = old.clone();
        st.last_updated = Some(now_rfc3339());
        let span = tracing::info_span!("snapshot", snapshot = s.metadata.name.as_str());
        let r = self
            .snapshot_inner(world, s, &mut st, deleting)
            .instrument(span)
            .await;
        self.metrics
            .reconcile_duration("snapshot", start.elapsed().as_secs_f64());
        match r {
            Ok(done) => (st, done, None),
            Err(e) => {
                self.metrics.error(e.error_type().as_str(), "snapshot");
                st.message = Some(e.to_string());
                (st, false, Some(e))
            }
        }
    }

    async fn snapshot_inner(
        &self,
        world: &World,
        s: &Object<MachineSnapshotSpec>,
        st: &mut MachineSnapshotStatus,
        deleting: bool,
    ) -> Result<bool> {
        let errors = validate::validate_snapshot(&s.metadata.name, &s.spec);
        if !errors.is_empty() {
            st.ready = false;
            st.message = Some(
                errors
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            return Ok(deleting);
        }
        let name = validate::snapshot_name(&s.metadata.name, &s.spec);
        st.snapshot_name = Some(name.clone());
        let machine = world.machines.get(&s.spec.machine);
        let target =
            machine.and_then(|(m, ms)| Some((m.spec.cluster.clone(), ms.node.clone()?, ms.vmid?)));
        // The Machine gone (deleted with it): where the snapshot was taken.
        // (A status written before the cluster was recorded: the only
        // cluster, never a guess among several.)
        let recorded = st.cluster.clone().or_else(|| {
            (world.clusters.len() == 1)
                .then(|| world.clusters.keys().next().cloned())
                .flatten()
        });
        let Some((cluster, node, vmid)) =
            target.or_else(|| Some((recorded?, st.node.clone()?, st.vmid?)).filter(|_| deleting))
        else {
            st.ready = false;
            st.message = Some(format!(
                "waiting for machine '{}' to be created",
                s.spec.machine
            ));
            return Ok(deleting);
        };
        st.cluster = Some(cluster.clone());
        st.node = Some(node.clone());
        st.vmid = Some(vmid);
        let pve = self.connect(world, &cluster).await?;
        for _ in 0..4 {
            let names = match pve.snapshot_names(&node, vmid).await {
                Ok(v) => v,
                Err(e) if deleting && e.error_type() == crate::error::ErrorType::NotFound => {
                    return Ok(true);
                }
                Err(e) => return Err(e),
            };
            let steps =
                plan::plan_snapshot(&name, &s.spec, st, Some((&node, vmid)), &names, deleting);
            let Some(step) = steps.first() else {
                st.ready = !deleting;
                st.message = None;
                return Ok(deleting);
            };
            self.execute(&pve, step).await?;
            if matches!(step, Step::Rollback { .. }) {
                st.last_rollback = s.spec.rollback_request.clone();
            }
        }
        Ok(false)
    }
}
