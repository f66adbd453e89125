//! The guest core: one VMID space for every guest, and what PVE keeps
//! per guest beside its configuration (the guest agent's state).
//!
//! A guest's record ([`Vm`]: node, power state, config with pending
//! changes and digest, snapshots, locks) lives here and nowhere else, so
//! that a VMID names one guest and removing a guest removes all that
//! belongs to it.

use std::collections::BTreeMap;

use super::agent::Guest as Agent;
use super::lxc::Ct;
use super::qemu::Vm;

/// Every guest of the cluster by VMID, and the guest agents' state.
#[derive(Debug, Clone, Default)]
pub struct Guests {
    vms: BTreeMap<u32, Vm>,
    agents: BTreeMap<u32, Agent>,
    /// LXC containers, in the same VMID space as the VMs.
    cts: BTreeMap<u32, Ct>,
    /// Every VMID from the lowest `nextid` gives up to this one (not
    /// included) is taken: where [`Guests::nextid`] starts looking, so
    /// that it does not walk every guest.
    free_from: u32,
}

impl Guests {
    /// The guests of a saved world. Agent state of a VMID without a guest
    /// is dropped.
    pub fn new(vms: BTreeMap<u32, Vm>, mut agents: BTreeMap<u32, Agent>) -> Self {
        agents.retain(|vmid, _| vms.contains_key(vmid));
        let mut g = Self {
            vms,
            agents,
            cts: BTreeMap::new(),
            free_from: 0,
        };
        g.taken(super::cluster::NEXTID_LOWER);
        g
    }

    /// `vmid` was taken: when it was the lowest free one, the next free
    /// one is found (each VMID is passed once over the guests' life).
    fn taken(&mut self, vmid: u32) {
        let mut id = self.free_from.max(super::cluster::NEXTID_LOWER);
        if vmid != id {
            return;
        }
        while id < super::cluster::NEXTID_UPPER && self.contains_key(&id) {
            id += 1;
        }
        self.free_from = id;
    }

    /// `vmid` is free again.
    fn freed(&mut self, vmid: u32) {
        if vmid < self.free_from {
            self.free_from = vmid;
        }
    }

    /// The guests and the agents' state, as a saved world keeps them.
    pub fn parts(&self) -> (&BTreeMap<u32, Vm>, &BTreeMap<u32, Agent>) {
        (&self.vms, &self.agents)
    }

    /// The guest `vmid`.
    pub fn get(&self, vmid: &u32) -> Option<&Vm> {
        self.vms.get(vmid)
    }

    /// The guest `vmid`, to change.
    pub fn get_mut(&mut self, vmid: &u32) -> Option<&mut Vm> {
        self.vms.get_mut(vmid)
    }

    /// Whether `vmid` is taken (by a VM or a container).
    pub fn contains_key(&self, vmid: &u32) -> bool {
        self.vms.contains_key(vmid) || self.cts.contains_key(vmid)
    }

    /// How many guests there are.
    pub fn len(&self) -> usize {
        self.vms.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.vms.is_empty()
    }

    /// The guests by VMID.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Vm> {
        self.vms.values()
    }

    /// The guests by VMID, to change.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Vm> {
        self.vms.values_mut()
    }

    /// The VMIDs in use, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &u32> {
        self.vms.keys()
    }

    /// `(vmid, guest)` pairs in VMID order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&u32, &Vm)> {
        self.vms.iter()
    }

    /// Registers a guest under `vmid`, replacing one there (whose agent
    /// state goes with it).
    pub fn insert(&mut self, vmid: u32, vm: Vm) -> Option<Vm> {
        // One VMID space: a container under `vmid` goes too.
        let ct = self.cts.remove(&vmid);
        let old = self.vms.insert(vmid, vm);
        if old.is_some() || ct.is_some() {
            self.agents.remove(&vmid);
        }
        self.taken(vmid);
        old
    }

    /// Removes a guest and everything kept for it.
    pub fn remove(&mut self, vmid: &u32) -> Option<Vm> {
        self.agents.remove(vmid);
        let vm = self.vms.remove(vmid);
        if vm.is_some() {
            self.freed(*vmid);
        }
        vm
    }

    /// The guests of a saved world, containers included. A container
    /// under a VMID that a VM holds is dropped, and so is agent state of
    /// a VMID without a guest.
    pub fn with_containers(
        vms: BTreeMap<u32, Vm>,
        mut cts: BTreeMap<u32, Ct>,
        mut agents: BTreeMap<u32, Agent>,
    ) -> Self {
        cts.retain(|vmid, _| !vms.contains_key(vmid));
        agents.retain(|vmid, _| vms.contains_key(vmid) || cts.contains_key(vmid));
        let mut g = Self {
            vms,
            agents,
            cts,
            free_from: 0,
        };
        g.taken(super::cluster::NEXTID_LOWER);
        g
    }

    /// Who holds `vmid`: `VM` or `CT`, and the node of its config (as
    /// `check_vmid_unused` names it).
    pub fn holder(&self, vmid: u32) -> Option<(&'static str, &str)> {
        if let Some(v) = self.vms.get(&vmid) {
            return Some(("VM", v.node.as_str()));
        }
        self.cts.get(&vmid).map(|c| ("CT", c.node()))
    }

    /// Every VMID in use, VMs and containers, in order.
    pub fn all_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.vms.keys().chain(self.cts.keys()).copied().collect();
        ids.sort_unstable();
        ids
    }

    /// The guest type of `vmid` as the vmlist names it: `qemu` or `lxc`.
    pub fn kind(&self, vmid: u32) -> Option<&'static str> {
        if self.vms.contains_key(&vmid) {
            Some("qemu")
        } else if self.cts.contains_key(&vmid) {
            Some("lxc")
        } else {
            None
        }
    }

    /// The container `vmid`.
    pub fn ct_by_id(&self, vmid: u32) -> Option<&Ct> {
        self.cts.get(&vmid)
    }

    /// The container `vmid`, to change.
    pub fn ct_by_id_mut(&mut self, vmid: u32) -> Option<&mut Ct> {
        self.cts.get_mut(&vmid)
    }

    /// The VM `vmid` as seen from `node` (its config must be there).
    ///
    /// # Errors
    /// `Configuration file 'nodes/<node>/qemu-server/<vmid>.conf' does not
    /// exist`.
    pub fn vm(&self, node: &str, vmid: u32) -> super::Result<&Vm> {
        self.get(&vmid)
            .filter(|v| v.node == node)
            .ok_or_else(|| super::qemu::config_missing(node, vmid))
    }

    /// [`Guests::vm`], to change.
    ///
    /// # Errors
    /// As [`Guests::vm`].
    pub(crate) fn vm_mut(&mut self, node: &str, vmid: u32) -> super::Result<&mut Vm> {
        self.get_mut(&vmid)
            .filter(|v| v.node == node)
            .ok_or_else(|| super::qemu::config_missing(node, vmid))
    }

    /// `check_running`'s refusal for a VM whose config is elsewhere.
    ///
    /// # Errors
    /// `unable to find configuration file for VM N on node 'x'`.
    pub fn vm_on_node(&self, node: &str, vmid: u32) -> super::Result<&Vm> {
        self.get(&vmid).filter(|v| v.node == node).ok_or_else(|| {
            super::Error::not_found(format!(
                "unable to find configuration file for VM {vmid} on node '{node}'"
            ))
        })
    }

    /// The container `vmid` as seen from `node` (its config must be
    /// there).
    ///
    /// # Errors
    /// `Configuration file 'nodes/<node>/lxc/<vmid>.conf' does not exist`.
    pub fn ct(&self, node: &str, vmid: u32) -> super::Result<&Ct> {
        self.ct_by_id(vmid)
            .filter(|c| c.node == node)
            .ok_or_else(|| super::lxc::config_missing(node, vmid))
    }

    /// [`Guests::ct`], to change.
    ///
    /// # Errors
    /// As [`Guests::ct`].
    pub(crate) fn ct_mut(&mut self, node: &str, vmid: u32) -> super::Result<&mut Ct> {
        self.ct_by_id_mut(vmid)
            .filter(|c| c.node == node)
            .ok_or_else(|| super::lxc::config_missing(node, vmid))
    }

    /// The VMs whose config is on `node`, by VMID.
    pub fn vms_on<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a Vm> + 'a {
        self.values().filter(move |v| v.node == node)
    }

    /// The containers whose config is on `node`, by VMID.
    pub fn cts_on<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a Ct> + 'a {
        self.cts.values().filter(move |c| c.node == node)
    }

    /// The containers by VMID.
    pub fn cts(&self) -> &BTreeMap<u32, Ct> {
        &self.cts
    }

    /// Registers a container under a VMID no VM holds; answers whether it
    /// was registered (a container replaces a container).
    pub fn insert_ct(&mut self, ct: Ct) -> bool {
        let vmid = ct.vmid();
        if self.vms.contains_key(&vmid) {
            return false;
        }
        if self.cts.insert(vmid, ct).is_some() {
            self.agents.remove(&vmid);
        }
        self.taken(vmid);
        true
    }

    /// Removes a container and everything kept for it.
    pub fn remove_ct(&mut self, vmid: u32) -> Option<Ct> {
        self.agents.remove(&vmid);
        let ct = self.cts.remove(&vmid);
        if ct.is_some() {
            self.freed(vmid);
        }
        ct
    }

    /// `GET /cluster/nextid`: the lowest free VMID in `[lower, upper)`
    /// (datacenter.cfg's `next-id`), or a check of `vmid`.
    ///
    /// # Errors
    /// 400 `VM N already exists` on `vmid`; 500 when no id is free.
    pub fn nextid(&self, vmid: Option<u32>, (lower, upper): (u32, u32)) -> super::Result<String> {
        if let Some(id) = vmid {
            if self.contains_key(&id) {
                return Err(super::Error::invalid(
                    "vmid",
                    format!("VM {id} already exists"),
                ));
            }
            return Ok(id.to_string());
        }
        // Every VMID from the default lower bound to `free_from` is taken.
        let from = if lower >= super::cluster::NEXTID_LOWER {
            lower.max(self.free_from)
        } else {
            lower
        };
        (from..upper)
            .find(|id| !self.contains_key(id))
            .map(|id| id.to_string())
            .ok_or_else(|| {
                super::Error::failed(format!(
                    "unable to get any free VMID in range [{lower}, {upper}]"
                ))
            })
    }

    /// The agent state of `vmid`, if any was kept.
    pub fn agent(&self, vmid: u32) -> Option<&Agent> {
        self.agents.get(&vmid)
    }

    /// The agent state of `vmid`, made on first use.
    pub fn agent_mut(&mut self, vmid: u32) -> &mut Agent {
        self.agents.entry(vmid).or_default()
    }

    /// Forgets the agent state of `vmid`.
    pub fn forget_agent(&mut self, vmid: u32) {
        self.agents.remove(&vmid);
    }
}

/// `guests[&vmid]`, as a map indexes: panics when there is no such
/// guest (for tests and invariants already checked).
impl std::ops::Index<&u32> for Guests {
    type Output = Vm;
    fn index(&self, vmid: &u32) -> &Vm {
        &self.vms[vmid]
    }
}

/// A guest's snapshot sections by name (VMs and containers alike).
type Sections = BTreeMap<String, BTreeMap<String, String>>;

/// Why `__snapshot_commit` fails, in its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum SnapshotCommitError {
    /// The guest no longer has the `snapshot` lock.
    #[error("missing snapshot lock")]
    MissingLock,
    /// The snapshot's section is gone.
    #[error("snapshot '{0}' does not exist")]
    NoSuchSnapshot(String),
}

/// `__snapshot_commit` on a guest's config and snapshot sections: the
/// snapshot loses its `snapstate` and the `snapshot` lock gives way to
/// `parent`.
///
/// # Errors
/// `missing snapshot lock`, `snapshot '<name>' does not exist`.
pub(super) fn commit_snapshot(
    config: &mut BTreeMap<String, String>,
    snapshots: &mut Sections,
    name: &str,
) -> std::result::Result<(), SnapshotCommitError> {
    if config.get("lock").map(String::as_str) != Some("snapshot") {
        return Err(SnapshotCommitError::MissingLock);
    }
    let Some(snap) = snapshots.get_mut(name) else {
        return Err(SnapshotCommitError::NoSuchSnapshot(name.to_string()));
    };
    snap.remove("snapstate");
    config.remove("lock");
    config.insert("parent".into(), name.to_string());
    Ok(())
}

/// Undoes a snapshot still being prepared (its task failed or was
/// stopped): the section goes, and with it the `snapshot` lock; answers
/// the section removed.
pub(super) fn abort_snapshot(
    config: &mut BTreeMap<String, String>,
    snapshots: &mut Sections,
    name: &str,
) -> Option<BTreeMap<String, String>> {
    let preparing = snapshots
        .get(name)
        .is_some_and(|s| s.get("snapstate").is_some_and(|st| st == "prepare"));
    if !preparing {
        return None;
    }
    if config.get("lock").map(String::as_str) == Some("snapshot") {
        config.remove("lock");
    }
    snapshots.remove(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::qemu::VmStatus;

    fn vm(vmid: u32) -> Vm {
        Vm::new(vmid, "pve", VmStatus::Stopped, BTreeMap::new())
    }

    #[test]
    fn removing_a_guest_removes_its_agent_state() {
        let mut g = Guests::default();
        g.insert(100, vm(100));
        g.agent_mut(100).hostname = Some("web".into());
        assert!(g.agent(100).is_some());
        assert!(g.remove(&100).is_some());
        assert!(g.agent(100).is_none());
        // A new guest under the same VMID starts with a fresh agent.
        g.insert(100, vm(100));
        assert!(g.agent(100).is_none());
        assert_eq!(g.agent_mut(100).hostname, None);
    }

    #[test]
    fn replacing_a_guest_drops_the_old_agent_state() {
        let mut g = Guests::default();
        g.insert(101, vm(101));
        g.agent_mut(101).hostname = Some("db".into());
        assert!(g.insert(101, vm(101)).is_some());
        assert!(g.agent(101).is_none());
    }

    #[test]
    fn vms_and_containers_share_one_vmid_space() {
        let mut g = Guests::default();
        g.insert(100, vm(100));
        assert!(!g.insert_ct(Ct::new(100, "pve", BTreeMap::new())));
        assert!(g.insert_ct(Ct::new(200, "pve", BTreeMap::new())));
        assert!(g.contains_key(&200) && g.get(&200).is_none());
        assert_eq!(g.holder(200), Some(("CT", "pve")));
        assert_eq!(g.holder(100), Some(("VM", "pve")));
        g.agent_mut(200).hostname = Some("ct".into());
        // A VM registered over a container replaces it and its state.
        g.insert(200, vm(200));
        assert!(g.ct_by_id(200).is_none() && g.agent(200).is_none());
        assert_eq!(g.holder(200), Some(("VM", "pve")));
    }

    #[test]
    fn a_saved_world_keeps_no_agent_without_a_guest() {
        let vms = BTreeMap::from([(100, vm(100))]);
        let agents = BTreeMap::from([(100, Agent::default()), (555, Agent::default())]);
        let g = Guests::new(vms, agents);
        assert_eq!(g.parts().1.keys().copied().collect::<Vec<_>>(), vec![100]);
        assert_eq!(g.len(), 1);
        assert!(g.contains_key(&100) && !g.contains_key(&555));
    }

    fn ct(vmid: u32) -> Ct {
        Ct::new(vmid, "pve", BTreeMap::new())
    }

    /// nextid as a walk over every VMID from 100 would give it.
    fn lowest_free(g: &Guests) -> String {
        (100..1_000_000)
            .find(|id| !g.contains_key(id))
            .expect("in the test")
            .to_string()
    }

    #[rstest::rstest]
    #[case::in_order(&[100, 101, 102], &[], "103")]
    #[case::a_gap(&[100, 101, 103], &[], "102")]
    #[case::a_removed_one(&[100, 101, 102, 103], &[101], "101")]
    #[case::the_lowest_of_two_removed(&[100, 101, 102, 103], &[102, 100], "100")]
    #[case::containers_count(&[100, -101, 102], &[], "103")]
    #[case::a_removed_container(&[100, -101, 102], &[-101], "101")]
    #[case::above_the_range_start(&[500, 501], &[], "100")]
    fn nextid_starts_from_the_lowest_free_vmid(
        #[case] created: &[i64],
        #[case] removed: &[i64],
        #[case] want: &str,
    ) {
        // A negative number is a container.
        let mut g = Guests::default();
        let apply = |g: &mut Guests, id: i64, create: bool| {
            let vmid = u32::try_from(id.abs()).expect("in the test");
            match (id < 0, create) {
                (false, true) => {
                    g.insert(vmid, vm(vmid));
                }
                (true, true) => {
                    g.insert_ct(ct(vmid));
                }
                (false, false) => {
                    g.remove(&vmid);
                }
                (true, false) => {
                    g.remove_ct(vmid);
                }
            }
        };
        for id in created {
            apply(&mut g, *id, true);
        }
        for id in removed {
            apply(&mut g, *id, false);
        }
        assert_eq!(
            g.nextid(None, crate::model::datacenter::NEXT_ID_DEFAULT)
                .expect("in the test"),
            want
        );
        assert_eq!(lowest_free(&g), want);
    }

    #[test]
    fn a_saved_world_finds_its_lowest_free_vmid() {
        let vms: BTreeMap<u32, Vm> = (100..200).map(|id| (id, vm(id))).collect();
        let cts = BTreeMap::from([(200, ct(200)), (202, ct(202))]);
        let g = Guests::with_containers(vms, cts, BTreeMap::new());
        assert_eq!(
            g.nextid(None, crate::model::datacenter::NEXT_ID_DEFAULT)
                .expect("in the test"),
            "201"
        );
        let mut g = Guests::new((100..150).map(|id| (id, vm(id))).collect(), BTreeMap::new());
        assert_eq!(
            g.nextid(None, crate::model::datacenter::NEXT_ID_DEFAULT)
                .expect("in the test"),
            "150"
        );
        g.remove(&120);
        assert_eq!(
            g.nextid(None, crate::model::datacenter::NEXT_ID_DEFAULT)
                .expect("in the test"),
            "120"
        );
        // Taken again, the next free one is above the others.
        g.insert(120, vm(120));
        assert_eq!(
            g.nextid(None, crate::model::datacenter::NEXT_ID_DEFAULT)
                .expect("in the test"),
            "150"
        );
    }
}
