//! What PVE holds for a Machine: its VM, the nodes, the clone source.

use std::collections::{BTreeMap, BTreeSet};

use pve_client::api::cluster::ClusterResource;

use super::cluster::node_entries;
use super::{Operator, Placed, Pve, World};
use crate::error::Result;
use crate::plan::{self, Desired, NodeInfo, Observed, ObservedVm, Peer, SourceState, has_mark};
use crate::validate::{self, ImageRef};

impl Operator {
    /// Finds the Machine's VM by its ownership mark: the VMID in its
    /// status first, then every VM of its name.
    async fn find_vm(
        &self,
        pve: &Pve,
        res: &[ClusterResource],
        cluster: &str,
        d: &Desired,
        hint: Option<u32>,
    ) -> Result<Option<ObservedVm>> {
        let mut candidates: Vec<&ClusterResource> = Vec::new();
        for r in res.iter().filter(|r| r.kind == "qemu") {
            let by_hint = hint.is_some() && r.vmid.map(|v| v as u32) == hint;
            if by_hint || r.name.as_deref() == Some(d.vm_name.as_str()) {
                candidates.push(r);
            }
        }
        candidates.sort_by_key(|r| (r.vmid.map(|v| v as u32) != hint, r.vmid));
        for r in candidates {
            let (Some(node), Some(vmid)) = (r.node.clone(), r.vmid) else {
                continue;
            };
            let vmid = vmid as u32;
            let super::pve::VmState {
                config,
                pending,
                in_force,
            } = match pve.vm_state(&node, vmid).await {
                Ok(c) => c,
                Err(e) if e.error_type() == crate::error::ErrorType::NotFound => continue,
                Err(e) => return Err(e),
            };
            // The mark, or the VM this Machine's status names still
            // carrying its name (its description was edited behind our
            // back: drift to undo, not a stranger).
            let by_hint = hint == Some(vmid) && config.get("name") == Some(&d.vm_name);
            if !by_hint
                && !has_mark(
                    config.get("description").map(String::as_str),
                    cluster,
                    &d.machine,
                )
            {
                continue;
            }
            // A paused VM is a running one (its resource status may say
            // `paused`).
            let running = matches!(r.status.as_deref(), Some("running" | "paused"));
            let lock = config
                .get("lock")
                .cloned()
                .or_else(|| r.lock.clone().filter(|l| !l.is_empty()));
            // Paused (suspended) VMs count as running in the resources.
            let paused = r.status.as_deref() == Some("paused")
                || (running && pve.paused(&node, vmid).await?);
            let mut vm = ObservedVm {
                vmid,
                node: node.clone(),
                running,
                paused,
                config,
                pending,
                in_force,
                lock,
                ip_addresses: Vec::new(),
                volume_sizes: BTreeMap::new(),
            };
            // Disks whose config says less than the spec: the volume may
            // be larger already (a rollback restores the config's size,
            // not the volume's).
            for (key, bytes, _) in &d.disks {
                let Some(disk) = vm
                    .config
                    .get(key)
                    .and_then(|v| pve_client::propstring::Disk::parse_as(key, v).ok())
                else {
                    continue;
                };
                let recorded = disk
                    .size
                    .as_deref()
                    .and_then(validate::parse_size_text)
                    .unwrap_or(0);
                let Some((storage, _)) = disk.file.split_once(':') else {
                    continue;
                };
                if recorded >= *bytes {
                    continue;
                }
                if let Ok(info) = pve.volume_info(&node, storage, &disk.file).await {
                    vm.volume_sizes.insert(key.clone(), info.size);
                }
            }
            if running
                && vm
                    .config
                    .get("agent")
                    .is_some_and(|a| a.starts_with('1') || a.contains("enabled=1"))
            {
                // Graceful: no agent, no addresses.
                if let Ok(ips) = pve.agent_ips(&node, vmid).await {
                    vm.ip_addresses = ips;
                }
            }
            return Ok(Some(vm));
        }
        Ok(None)
    }

    pub(super) async fn observe(
        &self,
        pve: &Pve,
        world: &World,
        d: &Desired,
        hint: Option<u32>,
        extra_used: &BTreeSet<u32>,
    ) -> Result<Observed> {
        let cluster = d.spec.cluster.clone();
        let res = pve.resources().await?;
        let vm = self.find_vm(pve, &res, &cluster, d, hint).await?;
        let cspec = world
            .clusters
            .get(&cluster)
            .map(|c| c.spec.clone())
            .unwrap_or_default();
        let mut nodes = Vec::new();
        for e in node_entries(&res) {
            let pn = world
                .nodes
                .iter()
                .find(|n| n.spec.cluster == cluster && n.spec.node_name == e.name);
            let allocated: u64 = res
                .iter()
                .filter(|r| r.kind == "qemu" && r.node.as_deref() == Some(e.name.as_str()))
                .filter_map(|r| r.maxmem)
                .sum();
            nodes.push(NodeInfo {
                name: e.name.clone(),
                online: e.ready,
                maxmem: e.resources.memory.total,
                allocated_mem: allocated,
                maxcpu: e.resources.cpu.total,
                vm_count: e.vm_count,
                bridges: None,
                labels: pn.map(|p| p.metadata.labels.clone()).unwrap_or_default(),
                max_vms: pn.and_then(|p| p.spec.max_vms),
            });
        }
        let mut unusable_bridges = Vec::new();
        if vm.is_none() {
            for n in nodes.iter_mut().filter(|n| n.online) {
                if let Ok(list) = pve.bridges(&n.name).await {
                    n.bridges = Some(list);
                }
            }
            // PVE hides the bridges the caller may not use: one that no
            // node lists is first a question of privileges.
            for b in d.spec.networks.iter().map(|n| &n.bridge) {
                let listed = nodes
                    .iter()
                    .any(|n| n.bridges.as_ref().is_some_and(|l| l.contains(b)));
                if !listed && !unusable_bridges.contains(b) && !pve.may_use_bridge(b).await? {
                    unusable_bridges.push(b.clone());
                }
            }
        }
        // Disks that must be thick: their storages' types (and options,
        // where the caller may read them), before the VM is made.
        let mut provisioning_refused = Vec::new();
        if vm.is_none() {
            let online = nodes.iter().find(|n| n.online).map(|n| n.name.clone());
            for (key, _, disk) in d
                .disks
                .iter()
                .filter(|(_, _, s)| s.provisioning.as_deref() == Some("thick"))
            {
                let Some(node) = &online else { break };
                let kind = pve.storage_type(node, &disk.storage).await?;
                let options = pve.storage_options(&disk.storage).await;
                if let Some(m) =
                    crate::plan::thick_refusal(key, &disk.storage, &kind, options.as_ref())
                {
                    provisioning_refused.push(m);
                }
            }
        }
        let mut used: BTreeSet<u32> = res
            .iter()
            .filter_map(|r| r.vmid.map(|v| v as u32))
            .collect();
        used.extend(
            self.reserved
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter(),
        );
        used.extend(extra_used);
        let source = match d.spec.source.as_ref() {
            None => SourceState::None,
            Some(s) => {
                if let Some(t) = &s.template {
                    find_source(&res, t, !s.linked)
                } else if let Some(i) = &s.image {
                    match world.images.get(i) {
                        Some((_, st)) if st.ready => match (st.node.clone(), st.vmid) {
                            (Some(node), Some(vmid)) => SourceState::Found { node, vmid },
                            _ => SourceState::Missing(format!("MachineImage '{i}' is not ready")),
                        },
                        Some(_) => SourceState::Missing(format!("MachineImage '{i}' is not ready")),
                        None => SourceState::Missing(format!("MachineImage '{i}' not found")),
                    }
                } else {
                    SourceState::None
                }
            }
        };
        let peers = world
            .machines
            .values()
            .filter(|(m, st)| m.spec.cluster == cluster && st.node.is_some())
            .map(|(m, st)| Peer {
                machine: m.metadata.name.clone(),
                labels: m.metadata.labels.clone(),
                node: st.node.clone().unwrap_or_default(),
            })
            .collect();
        Ok(Observed {
            cluster,
            vm,
            nodes,
            used_vmids: used,
            peers,
            source,
            allowed_nodes: cspec.nodes,
            allowed_storages: cspec.storages,
            allowed_bridges: cspec.bridges,
            unusable_bridges,
            last_reboot: None,
            provisioning_refused,
        })
    }
}

/// A clone's source by VMID or name: a template, or for a full clone
/// (`any`) any VM (templates first when names repeat).
pub(super) fn find_source(res: &[ClusterResource], t: &str, any: bool) -> SourceState {
    let qemu = |r: &&ClusterResource| r.kind == "qemu";
    let found = match validate::parse_image(t) {
        Ok(ImageRef::Vmid(v)) => res
            .iter()
            .filter(qemu)
            .find(|r| r.vmid == Some(u64::from(v))),
        Ok(ImageRef::Name(n)) => {
            let named = |r: &&ClusterResource| r.name.as_deref() == Some(&n);
            res.iter()
                .filter(qemu)
                .filter(named)
                .find(|r| r.template == Some(true))
                .or_else(|| res.iter().filter(qemu).find(named))
        }
        _ => None,
    };
    match found {
        Some(r) if r.template == Some(true) || any => SourceState::Found {
            node: r.node.clone().unwrap_or_default(),
            vmid: r.vmid.unwrap_or_default() as u32,
        },
        Some(r) => SourceState::Missing(format!(
            "VM {} is not a template: a linked clone needs one (a full clone, linked: false, copies any VM)",
            r.vmid.unwrap_or_default()
        )),
        None => SourceState::Missing(format!("template '{t}' not found")),
    }
}

/// Adds to what is observed the machines placed in this pass that the
/// world does not show yet: as peers (anti-affinity), and on their node's
/// figures while their VM is not in the cluster's resources yet.
pub(super) fn add_placed(
    o: &mut Observed,
    placed: &mut BTreeMap<(String, String), Placed>,
    world: &World,
    cluster: &str,
    me: &str,
) {
    // Choices the world shows now (or of machines gone) are done with.
    placed.retain(|(_, name), _| {
        world
            .machines
            .get(name)
            .is_some_and(|(_, st)| st.node.is_none())
    });
    for ((c, name), p) in placed.iter() {
        if c != cluster || name == me {
            continue;
        }
        if !o.peers.iter().any(|x| &x.machine == name) {
            o.peers.push(plan::Peer {
                machine: name.clone(),
                labels: p.labels.clone(),
                node: p.node.clone(),
            });
        }
        if !o.used_vmids.contains(&p.vmid)
            && let Some(n) = o.nodes.iter_mut().find(|n| n.name == p.node)
        {
            n.allocated_mem += p.memory;
            n.vm_count += 1;
        }
    }
}
