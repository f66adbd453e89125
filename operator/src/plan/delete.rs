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

/// Plans the deletion of a Machine's VM.
pub fn plan_delete(policy: DeletionPolicy, vm: Option<&ObservedVm>) -> DeletePlan {
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
    if vm.flag("protection") {
        return DeletePlan {
            blocked: Some(format!(
                "VM {} has protection enabled: not deleting it (turn protection off in PVE, or use deletionPolicy: Orphan)",
                vm.vmid
            )),
            ..DeletePlan::default()
        };
    }
    if vm.lock.is_some() {
        return DeletePlan::default();
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
