//! Where a new VM goes: its VMID and its node.

use std::collections::BTreeSet;

use super::{Desired, MIB, Observed, VMID_RANGE};
use crate::validate;

/// Why no node can take a new VM.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// The cluster has no nodes at all.
    #[error("the cluster lists no nodes")]
    NoNodes,
    /// Every node is ruled out: why, node by node (`name: reason`).
    #[error("no node fits: {}", .0.join("; "))]
    NoNodeFits(Vec<String>),
}

/// The lowest free VMID of the operator's range.
pub fn assign_vmid(used: &BTreeSet<u32>) -> Option<u32> {
    VMID_RANGE.clone().find(|v| !used.contains(v))
}

/// Chooses a node for a new VM: online, allowed, matching the selector,
/// with the bridges, under `maxVMs`/`maxVMsPerNode`, with the memory
/// (plus `minFreeMemory`) free, and away from anti-affine peers; the one
/// with the most memory left wins, then the fewest guests, then the name.
///
/// # Errors
/// Why no node fits, node by node.
pub fn select_node(d: &Desired, o: &Observed) -> Result<String, PlacementError> {
    let need = d.memory_mib * MIB;
    let placement = d.spec.placement.clone().unwrap_or_default();
    let min_free = placement
        .min_free_memory
        .as_ref()
        .map(|q| validate::parse_memory(q).unwrap_or(0))
        .unwrap_or(0);
    let mut reasons = Vec::new();
    let mut best: Option<(u64, u32, &str)> = None;
    for n in &o.nodes {
        let why = if !n.online {
            Some("offline".to_string())
        } else if !o.allowed_nodes.is_empty() && !o.allowed_nodes.contains(&n.name) {
            Some("not allowed by the cluster".into())
        } else if !placement.nodes.is_empty() && !placement.nodes.contains(&n.name) {
            Some("not in the placement's nodes".into())
        } else if !placement
            .node_selector
            .iter()
            .all(|(k, v)| n.labels.get(k) == Some(v))
        {
            Some("does not match the node selector".into())
        } else if let Some(b) = n.bridges.as_ref().and_then(|bs| {
            d.spec
                .networks
                .iter()
                .find(|x| !bs.contains(&x.bridge))
                .map(|x| x.bridge.clone())
        }) {
            Some(format!("has no bridge '{b}'"))
        } else if let Some(max) = [n.max_vms, placement.max_vms_per_node]
            .into_iter()
            .flatten()
            .min()
            .filter(|m| n.vm_count >= *m)
        {
            Some(format!("has {} VMs, the limit is {max}", n.vm_count))
        } else if n.maxmem.saturating_sub(n.allocated_mem) < need + min_free {
            Some(format!(
                "insufficient resources: {} MiB free, {} MiB requested{}",
                n.maxmem.saturating_sub(n.allocated_mem) / MIB,
                d.memory_mib,
                if min_free > 0 {
                    format!(" plus {} MiB to keep free", min_free / MIB)
                } else {
                    String::new()
                }
            ))
        } else {
            placement
                .anti_affinity
                .iter()
                .find_map(|k| {
                    let mine = d.labels.get(k)?;
                    o.peers.iter().find(|p| {
                        p.machine != d.machine && p.node == n.name && p.labels.get(k) == Some(mine)
                    })
                })
                .or_else(|| {
                    placement.anti_affinity_terms.iter().find_map(|t| {
                        let covers = |v: Option<&String>| {
                            v.is_some_and(|v| t.values.is_empty() || t.values.contains(v))
                        };
                        let mine = d.labels.get(&t.key);
                        if !covers(mine) {
                            return None;
                        }
                        o.peers.iter().find(|p| {
                            p.machine != d.machine
                                && p.node == n.name
                                && covers(p.labels.get(&t.key))
                        })
                    })
                })
                .map(|p| format!("holds '{}' (anti-affinity)", p.machine))
        };
        match why {
            Some(w) => reasons.push(format!("{}: {w}", n.name)),
            None => {
                let free = n.maxmem - n.allocated_mem - need;
                let better = match best {
                    None => true,
                    Some((bf, bc, bn)) => {
                        (
                            free,
                            std::cmp::Reverse(n.vm_count),
                            std::cmp::Reverse(n.name.as_str()),
                        ) > (bf, std::cmp::Reverse(bc), std::cmp::Reverse(bn))
                    }
                };
                if better {
                    best = Some((free, n.vm_count, n.name.as_str()));
                }
            }
        }
    }
    match best {
        Some((_, _, n)) => Ok(n.to_string()),
        None if o.nodes.is_empty() => Err(PlacementError::NoNodes),
        None => Err(PlacementError::NoNodeFits(reasons)),
    }
}
