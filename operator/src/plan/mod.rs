//! `plan(desired, observed) -> steps`: pure functions, no I/O. The
//! executor observes PVE, calls these, carries out the steps one at a
//! time and plans again, so every decision here is unit-tested without a
//! server.

/// The tag every VM the operator made carries.
pub const MARK_TAG: &str = "pve-operator";

/// The operator's VMID range.
pub const VMID_RANGE: std::ops::RangeInclusive<u32> = 10_000..=99_999;

/// Bytes in a MiB.
pub const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The description that marks a VM as made by this operator for one
/// Machine: a restarted operator finds and adopts it by this line.
pub fn ownership_mark(cluster: &str, machine: &str) -> String {
    format!("managed-by=pve-operator machine={cluster}/{machine}")
}

/// Whether a VM's description carries the mark of `cluster`/`machine`.
pub fn has_mark(description: Option<&str>, cluster: &str, machine: &str) -> bool {
    let mark = ownership_mark(cluster, machine);
    description.is_some_and(|d| d.lines().any(|l| l.trim() == mark))
}

mod agent;
mod delete;
mod desired;
mod machine;
mod observed;
mod placement;
mod snapshot;
mod step;

pub use agent::agent_ips;
pub use delete::{DeletePlan, plan_delete};
pub use desired::{Desired, console};
pub use machine::{NAME_CONDITION, plan_machine};
pub use observed::{NodeInfo, Observed, ObservedVm, Peer, SourceState, thick_refusal};
pub use placement::{PlacementError, assign_vmid, select_node};
pub use snapshot::plan_snapshot;
pub use step::{Plan, Step};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

#[cfg(test)]
mod console_tests;
