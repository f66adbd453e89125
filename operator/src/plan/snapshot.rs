//! [`plan_snapshot`]: taking, rolling back and deleting a MachineSnapshot.

use super::Step;
use crate::types::{MachineSnapshotSpec, MachineSnapshotStatus};

/// Plans a MachineSnapshot: `vm` is the machine's `(node, vmid)` when it
/// exists, `existing` the VM's snapshot names.
pub fn plan_snapshot(
    snapname: &str,
    spec: &MachineSnapshotSpec,
    status: &MachineSnapshotStatus,
    vm: Option<(&str, u32)>,
    existing: &[String],
    deleting: bool,
) -> Vec<Step> {
    let Some((node, vmid)) = vm else {
        return Vec::new();
    };
    let present = existing.iter().any(|s| s == snapname);
    let (node, name) = (node.to_string(), snapname.to_string());
    if deleting {
        return if present {
            vec![Step::DeleteSnapshot { node, vmid, name }]
        } else {
            Vec::new()
        };
    }
    if !present {
        return vec![Step::Snapshot {
            node,
            vmid,
            name,
            description: spec.description.clone(),
            vmstate: spec.include_memory,
        }];
    }
    match &spec.rollback_request {
        Some(r) if status.last_rollback.as_ref() != Some(r) => {
            vec![Step::Rollback { node, vmid, name }]
        }
        _ => Vec::new(),
    }
}
