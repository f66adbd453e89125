//! [`plan_delete`]: what deleting a Machine's VM takes.

use super::{ObservedVm, Step};
use crate::types::DeletionPolicy;

/// What deleting a Machine takes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeletePlan {
    /// Steps, in order.
    pub steps: Vec<Step>,
    /// Nothing left to do: drop the finalizer.
    pub done: bool,
    /// Why it cannot go on (protection).
    pub blocked: Option<String>,
}

/// Plans the deletion of a Machine's VM. `protection` is the Machine's
/// own: PVE's protection blocks the deletion while the Machine asks for
/// it; one it does not ask for (`protection: false`, set in the same edit
/// as the deletion) is lifted first, as any reconcile would lift it.
pub fn plan_delete(
    policy: DeletionPolicy,
    protection: bool,
    vm: Option<&ObservedVm>,
) -> DeletePlan {
    let Some(vm) = vm else {
        return DeletePlan {
            done: true,
            ..DeletePlan::default()
        };
    };
    if policy == DeletionPolicy::Orphan {
        return DeletePlan {
            done: true,
            ..DeletePlan::default()
        };
    }
    if vm.flag("protection") && protection {
        return DeletePlan {
            blocked: Some(format!(
                "VM {} has protection enabled and the Machine asks for it: not deleting it (set protection: false, or use deletionPolicy: Orphan)",
                vm.vmid
            )),
            ..DeletePlan::default()
        };
    }
    if vm.lock.is_some() {
        return DeletePlan::default();
    }
    if vm.flag("protection") {
        return DeletePlan {
            steps: vec![Step::Configure {
                node: vm.node.clone(),
                vmid: vm.vmid,
                set: Vec::new(),
                delete: vec!["protection".into()],
            }],
            ..DeletePlan::default()
        };
    }
    let mut steps = Vec::new();
    if vm.running {
        steps.push(Step::Stop {
            node: vm.node.clone(),
            vmid: vm.vmid,
        });
    }
    steps.push(Step::Destroy {
        node: vm.node.clone(),
        vmid: vm.vmid,
    });
    DeletePlan {
        steps,
        ..DeletePlan::default()
    }
}
