//! What the dashboard's overview shows of a VM beside its row of
//! `/cluster/resources`: its pending changes, a file lock, and the
//! addresses its guest agent reports.

use serde_json::Value;

use super::guests::Guests;

/// A VM's facts beside its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmExtras<'a> {
    /// The keys set or deleted on the next start, sorted, once each.
    pub pending: Vec<&'a String>,
    /// Whether a file lock is held while the config has no `lock`.
    pub file_lock: bool,
    /// The agent's addresses, when the agent answers (`agent_up`).
    pub ips: Option<Vec<String>>,
}

/// [`VmExtras`] of VM `vmid`; `None` for a container or no guest.
pub fn vm_extras(guests: &Guests, vmid: u32, agent_up: bool) -> Option<VmExtras<'_>> {
    let vm = guests.get(&vmid)?;
    let mut pending: Vec<&String> = vm.pending.keys().chain(vm.pending_delete.keys()).collect();
    pending.sort();
    pending.dedup();
    let ips = agent_up.then(|| {
        let interfaces = match guests.agent(vm.vmid) {
            Some(agent) => agent.interfaces(vm),
            None => super::agent::Guest::default().interfaces(vm),
        };
        agent_addresses(&interfaces)
    });
    Some(VmExtras {
        pending,
        file_lock: vm.lock().is_none() && vm.flock.held(),
        ips,
    })
}

/// The addresses of `network-get-interfaces` (the agent's answer, as
/// qemu-ga gives it), loopback and link-local ones left out.
fn agent_addresses(interfaces: &Value) -> Vec<String> {
    interfaces
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["ip-addresses"].as_array().into_iter().flatten())
        .filter_map(|a| a["ip-address"].as_str())
        .filter(|ip| !ip.starts_with("127.") && *ip != "::1" && !ip.starts_with("fe80:"))
        .map(str::to_string)
        .collect()
}
