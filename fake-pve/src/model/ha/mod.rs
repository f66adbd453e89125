//! High availability as pve-ha-manager keeps it: `ha/resources.cfg`,
//! `ha/groups.cfg` (8.x; 9.x migrates groups to rules), `ha/rules.cfg`
//! (9.x), the CRM's `ha/manager_status` and each node's `lrm_status`
//! (pve-ha-manager `PVE/HA/Config.pm`, `Resources.pm`, `Groups.pm`,
//! `Rules.pm`, `API2/HA/*.pm`).
//!
//! The configuration lives here with its own checks; the manager's
//! rounds (every ten seconds of the emulated clock) live in
//! [`manager`], where they start, stop and move guests through ordinary
//! tasks as the LRM does.

mod cluster;
mod groups;
pub mod manager;
mod resources;
mod rule_api;
pub mod rules;
mod status;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::qemu::sha1_hex;
use super::{Error, PveVersion, Result};
pub use cluster::{LrmJob, guest_type, round, status_current};
pub use groups::GroupEntry;
pub use manager::{HaRequest, Manager, Service};
pub use resources::{MoveRequested, ResourceEntry};
pub use rule_api::RuleEntry;
pub use rules::{Rule, RuleUpdate};
pub use status::{Fencing, LrmLine, ManagerStatus, ServiceLine, StatusLine};

/// The message of a digest that no longer matches
/// (`SectionConfig::assert_if_modified`).
pub const MODIFIED: &str =
    "detected modified configuration - file changed by other user? Try again.";

/// One HA resource of `resources.cfg`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// `vm` or `ct`.
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failback: Option<bool>,
    /// 9.2: may the CRS move it when it rebalances the cluster.
    #[serde(
        default,
        rename = "auto-rebalance",
        skip_serializing_if = "Option::is_none"
    )]
    auto_rebalance: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_restart: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_relocate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
}

impl Resource {
    /// `vm` or `ct`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The requested state as configured (`None`: `started`).
    pub fn state(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// The requested state, `enabled` and unset read as `started`
    /// (`read_and_check_resources_config`).
    pub fn requested(&self) -> &str {
        match self.state.as_deref() {
            None | Some("enabled") => "started",
            Some(s) => s,
        }
    }

    /// The group, if one is set.
    pub fn group(&self) -> Option<&str> {
        self.group.as_deref()
    }

    /// `max_restart` (default 1).
    pub fn max_restart(&self) -> u64 {
        self.max_restart.unwrap_or(1)
    }

    /// `max_relocate` (default 1).
    pub fn max_relocate(&self) -> u64 {
        self.max_relocate.unwrap_or(1)
    }

    /// `comment`, if set.
    pub fn comment(&self) -> Option<&str> {
        self.comment.as_deref()
    }

    /// `failback` as configured (9.x; `None`: on).
    pub fn configured_failback(&self) -> Option<bool> {
        self.failback
    }

    /// `auto-rebalance` as configured (9.2; `None`: on).
    pub fn configured_auto_rebalance(&self) -> Option<bool> {
        self.auto_rebalance
    }

    /// `max_restart` as configured.
    pub fn configured_max_restart(&self) -> Option<u64> {
        self.max_restart
    }

    /// `max_relocate` as configured.
    pub fn configured_max_relocate(&self) -> Option<u64> {
        self.max_relocate
    }

    fn section_text(&self, sid: &str, out: &mut String) {
        let name = sid.split_once(':').map_or(sid, |(_, n)| n);
        out.push_str(&format!("{}: {name}\n", self.kind));
        if let Some(a) = self.auto_rebalance {
            option_line(out, "auto-rebalance", u8::from(a));
        }
        if let Some(c) = &self.comment {
            option_line(out, "comment", c);
        }
        if let Some(f) = self.failback {
            option_line(out, "failback", u8::from(f));
        }
        if let Some(g) = &self.group {
            option_line(out, "group", g);
        }
        if let Some(n) = self.max_relocate {
            option_line(out, "max_relocate", n);
        }
        if let Some(n) = self.max_restart {
            option_line(out, "max_restart", n);
        }
        if let Some(s) = &self.state {
            option_line(out, "state", s);
        }
        out.push('\n');
    }
}

/// One group of `groups.cfg`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// `node[:priority]` entries as given.
    nodes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    restricted: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nofailback: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
}

impl Group {
    /// The `node[:priority]` entries.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// Whether the group is restricted.
    pub fn restricted(&self) -> bool {
        self.restricted.unwrap_or(false)
    }

    /// Whether failback is off.
    pub fn nofailback(&self) -> bool {
        self.nofailback.unwrap_or(false)
    }

    /// `comment`, if set.
    pub fn comment(&self) -> Option<&str> {
        self.comment.as_deref()
    }

    /// `restricted` as configured.
    pub fn configured_restricted(&self) -> Option<bool> {
        self.restricted
    }

    /// `nofailback` as configured.
    pub fn configured_nofailback(&self) -> Option<bool> {
        self.nofailback
    }

    fn section_text(&self, id: &str, out: &mut String) {
        out.push_str(&format!("group: {id}\n"));
        if let Some(c) = &self.comment {
            option_line(out, "comment", c);
        }
        if let Some(f) = self.nofailback {
            option_line(out, "nofailback", u8::from(f));
        }
        option_line(out, "nodes", self.nodes.join(","));
        if let Some(r) = self.restricted {
            option_line(out, "restricted", u8::from(r));
        }
        out.push('\n');
    }
}

/// What `POST`/`PUT /cluster/ha/resources` ask for.
#[derive(Debug, Clone, Default)]
pub struct ResourceUpdate {
    /// `state`.
    pub state: Option<String>,
    /// `group`.
    pub group: Option<String>,
    /// `failback` (9.x).
    pub failback: Option<bool>,
    /// `auto-rebalance` (9.2).
    pub auto_rebalance: Option<bool>,
    /// `max_restart`.
    pub max_restart: Option<u64>,
    /// `max_relocate`.
    pub max_relocate: Option<u64>,
    /// `comment`.
    pub comment: Option<String>,
    /// `delete`: options to remove.
    pub delete: Vec<String>,
    /// `digest`.
    pub digest: Option<String>,
    /// `type`, checked against the sid's.
    pub kind: Option<String>,
}

/// What `POST`/`PUT /cluster/ha/groups` ask for.
#[derive(Debug, Clone, Default)]
pub struct GroupUpdate {
    /// `nodes`, unparsed.
    pub nodes: Option<String>,
    /// `restricted`.
    pub restricted: Option<bool>,
    /// `nofailback`.
    pub nofailback: Option<bool>,
    /// `comment`.
    pub comment: Option<String>,
    /// `delete`: options to remove.
    pub delete: Vec<String>,
    /// `digest`.
    pub digest: Option<String>,
    /// `type` (only `group`).
    pub kind: Option<String>,
}

/// A guest as the HA stack looks it up (`PVE::Cluster::get_vmlist`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestType {
    /// A VM (`qemu`).
    Qemu,
    /// A container (`lxc`).
    Lxc,
}

impl GuestType {
    /// The HA resource type of the guest type.
    pub fn ha_type(self) -> &'static str {
        match self {
            Self::Qemu => "vm",
            Self::Lxc => "ct",
        }
    }
}

/// The whole HA configuration and the manager's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ha {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    resources: BTreeMap<String, Resource>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    groups: BTreeMap<String, Group>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    rules: BTreeMap<String, Rule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    manager: Option<Manager>,
    /// `ha/crm_commands`: what the CRM picks up at its next round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    crm_commands: Vec<String>,
    /// When the next manager round runs, epoch seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    next_round: Option<i64>,
}

/// One option line of a section config file.
fn option_line(out: &mut String, key: &str, value: impl std::fmt::Display) {
    out.push_str(&format!("\t{key} {value}\n"));
}

/// `parse_sid`: `vm:100`, `ct:101` or a bare VMID looked up in the
/// cluster's guests. Answers the sid, its type and its name.
///
/// # Errors
/// `unable to detect SID from VMID - VM/CT 100 does not exist` (8.4 says
/// `unable do detect`), `unable to parse service id 'x'`.
pub fn parse_sid(
    version: PveVersion,
    sid: &str,
    lookup: impl Fn(u32) -> Option<GuestType>,
) -> Result<(String, String, String)> {
    if !sid.is_empty() && sid.bytes().all(|b| b.is_ascii_digit()) {
        let found = sid.parse::<u32>().ok().and_then(&lookup);
        return match found {
            Some(t) => Ok((
                format!("{}:{sid}", t.ha_type()),
                t.ha_type().to_string(),
                sid.to_string(),
            )),
            None => Err(Error::not_found(format!(
                "unable {} detect SID from VMID - VM/CT {sid} does not exist",
                if version.is_v9() { "to" } else { "do" }
            ))),
        };
    }
    match sid.split_once(':') {
        Some((t, n))
            if !t.is_empty()
                && !n.is_empty()
                && !t.chars().any(char::is_whitespace)
                && !n.chars().any(char::is_whitespace) =>
        {
            Ok((sid.to_string(), t.to_string(), n.to_string()))
        }
        _ => Err(Error::failed(format!("unable to parse service id '{sid}'"))),
    }
}

/// `parse_node_priority` on each entry of a node list.
///
/// # Errors
/// `unable to parse HA node entry 'x'`.
pub fn parse_node_list(value: &str) -> Result<Vec<(String, u32)>> {
    let mut out: Vec<(String, u32)> = Vec::new();
    for entry in crate::spec::formats::split_list(value) {
        let (node, pri) = match entry.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (entry, None),
        };
        let node_ok = !node.is_empty()
            && node.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !node.starts_with('-')
            && !node.ends_with('-');
        let pri = match pri {
            None => Some(0),
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok(),
            Some(_) => None,
        };
        match (node_ok, pri) {
            (true, Some(p)) => {
                out.retain(|(n, _)| n != node);
                out.push((node.to_string(), p));
            }
            _ => {
                return Err(Error::failed(format!(
                    "unable to parse HA node entry '{entry}'"
                )));
            }
        }
    }
    Ok(out)
}

impl Ha {
    /// Whether nothing HA has ever been configured.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
            && self.groups.is_empty()
            && self.rules.is_empty()
            && self.manager.is_none()
            && self.crm_commands.is_empty()
    }

    /// The resources by sid.
    pub fn resources(&self) -> &BTreeMap<String, Resource> {
        &self.resources
    }

    /// The groups by id.
    pub fn groups(&self) -> &BTreeMap<String, Group> {
        &self.groups
    }

    /// The rules by id.
    pub fn rules(&self) -> &BTreeMap<String, Rule> {
        &self.rules
    }

    /// The manager's state, once a CRM has been master.
    pub fn manager(&self) -> Option<&Manager> {
        self.manager.as_ref()
    }

    /// The queued CRM commands.
    pub fn crm_commands(&self) -> &[String] {
        &self.crm_commands
    }

    /// `have_groups_been_migrated`: whether `groups.cfg` is empty.
    pub fn groups_migrated(&self) -> bool {
        self.groups.is_empty()
    }

    /// A group as a world is seeded with it (a cluster upgraded from 8.x
    /// keeps its `groups.cfg` until the manager migrates it).
    ///
    /// # Errors
    /// A node list that does not parse.
    pub fn seed_group(
        &mut self,
        id: &str,
        nodes: &str,
        restricted: bool,
        nofailback: bool,
    ) -> Result<()> {
        parse_node_list(nodes)?;
        self.groups.insert(
            id.to_string(),
            Group {
                nodes: crate::spec::formats::split_list(nodes)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
                restricted: restricted.then_some(true),
                nofailback: nofailback.then_some(true),
                comment: None,
            },
        );
        Ok(())
    }

    /// The text of `resources.cfg`.
    fn resources_text(&self) -> String {
        let mut out = String::new();
        for (sid, r) in &self.resources {
            r.section_text(sid, &mut out);
        }
        out
    }

    /// The text of `groups.cfg`.
    fn groups_text(&self) -> String {
        let mut out = String::new();
        for (id, g) in &self.groups {
            g.section_text(id, &mut out);
        }
        out
    }

    /// The digest of `resources.cfg`.
    pub fn resources_digest(&self) -> String {
        sha1_hex(self.resources_text().as_bytes())
    }

    /// The digest of `groups.cfg`.
    pub fn groups_digest(&self) -> String {
        sha1_hex(self.groups_text().as_bytes())
    }

    /// The digest of `rules.cfg`.
    pub fn rules_digest(&self) -> String {
        sha1_hex(rules::rules_text(&self.rules).as_bytes())
    }

    /// `service_check_ha_state` without a state: configured and not
    /// `ignored` (nor released by a disarm in `ignore` mode).
    pub fn is_managed(&self, sid: &str) -> bool {
        let Some(r) = self.resources.get(sid) else {
            return false;
        };
        if r.state() == Some("ignored") {
            return false;
        }
        self.manager
            .as_ref()
            .is_none_or(|m| m.disarm_mode() != Some("ignore"))
    }

    /// The managed sid of a guest (`vm_is_ha_managed`).
    pub fn managed_sid(&self, vmid: u32) -> Option<String> {
        ["vm", "ct"]
            .iter()
            .map(|t| format!("{t}:{vmid}"))
            .find(|sid| self.is_managed(sid))
    }

    /// The `ha` member of the `status/current` of the guest `vmid` of
    /// `kind` (`vm` or `ct`) (`get_service_status`): no service ID is
    /// made while no resource is configured.
    pub(crate) fn guest_service_status(&self, kind: &str, vmid: u32) -> ServiceStatus<'_> {
        if self.resources.is_empty() {
            return ServiceStatus::Unmanaged;
        }
        self.service_status_of(&format!("{kind}:{vmid}"))
    }

    fn service_status_of(&self, sid: &str) -> ServiceStatus<'_> {
        if !self.is_managed(sid) {
            return ServiceStatus::Unmanaged;
        }
        ServiceStatus::Managed(
            self.manager
                .as_ref()
                .and_then(|m| m.service(sid))
                .map(manager::Service::state),
        )
    }

    /// Whether any guest may have a `hastate` (a resource configured, or
    /// the CRM running): the listings skip the look-up otherwise.
    pub fn may_have_hastate(&self) -> bool {
        !self.resources.is_empty() || self.manager.is_some()
    }

    /// The `hastate` of a guest in `/cluster/resources` (`None`: no
    /// member): the CRM's state of the service, or its configured state
    /// (`Some(None)`, a `null`, when none is set) before the CRM took it
    /// up.
    pub fn hastate(&self, vmid: u32, guest: GuestType) -> Option<Option<&str>> {
        let sid = format!("{}:{vmid}", guest.ha_type());
        if let Some(s) = self.manager.as_ref().and_then(|m| m.service(&sid)) {
            return Some(Some(s.state()));
        }
        self.resources.get(&sid).map(Resource::state)
    }

    /// The `hastate` of a node in `/cluster/resources`.
    pub fn node_hastate(&self, node: &str) -> Option<&str> {
        self.manager.as_ref().and_then(|m| m.node_state(node))
    }

    /// Makes sure a manager round is planned.
    fn wake(&mut self, now: i64) {
        if self.next_round.is_none() {
            self.next_round = Some(manager::next_grid(now));
        }
    }
}

/// The `ha` member of a guest's `status/current`: unmanaged, or managed
/// with the manager's state of the service (none before the manager has
/// seen it). The API's view writes it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServiceStatus<'a> {
    Unmanaged,
    Managed(Option<&'a str>),
}
