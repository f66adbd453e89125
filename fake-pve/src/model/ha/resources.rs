//! HA resources (`resources.cfg`) as `API2/HA/Resources.pm` and
//! `HA/Config.pm` handle them, and the CRM commands of a guest's power
//! and migrate calls.

use super::{GuestType, Ha, HaRequest, MODIFIED, Resource, ResourceUpdate, parse_sid, rules};
use crate::model::{Error, PveVersion, Result};

/// The options of a resource type that `delete` may name.
fn resource_options(version: PveVersion) -> &'static [&'static str] {
    if version == PveVersion::V9_2 {
        &[
            "state",
            "group",
            "comment",
            "failback",
            "auto-rebalance",
            "max_restart",
            "max_relocate",
        ]
    } else if version.is_v9() {
        &[
            "state",
            "group",
            "comment",
            "failback",
            "max_restart",
            "max_relocate",
        ]
    } else {
        &["state", "group", "comment", "max_restart", "max_relocate"]
    }
}

/// `verify_name` and `exists` of the VM and CT resource plugins.
fn check_guest(
    version: PveVersion,
    kind: &str,
    name: &str,
    lookup: &impl Fn(u32) -> Option<GuestType>,
) -> Result<()> {
    let valid =
        name.len() >= 2 && name.bytes().all(|b| b.is_ascii_digit()) && !name.starts_with('0');
    if !valid {
        return Err(Error::failed("invalid VMID"));
    }
    let found = name.parse::<u32>().ok().and_then(lookup);
    let Some(found) = found else {
        return Err(Error::not_found(format!(
            "resource '{kind}:{name}' does not exist in cluster"
        )));
    };
    if version.is_v9() && found.ha_type() != kind {
        let what = if kind == "vm" { "a VM" } else { "a container" };
        return Err(Error::failed(format!(
            "resource '{kind}:{name}' - guest with ID {name} is not {what}"
        )));
    }
    Ok(())
}

/// A resource as `GET /cluster/ha/resources[/{sid}]` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry<'a> {
    /// Its sid.
    pub sid: &'a str,
    /// Its configuration.
    pub resource: &'a Resource,
    /// The digest of `resources.cfg`.
    pub digest: String,
    /// Its group as shown: none on 9.x once the groups are migrated.
    pub group: Option<&'a str>,
    /// In the index: the group shown when no such group exists.
    pub missing_group: Option<&'a str>,
}

/// What `POST .../migrate` and `.../relocate` answer on 9.x
/// (`get_resource_motion_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveRequested {
    /// The resource.
    pub sid: String,
    /// The node asked for.
    pub node: String,
    /// The resources that move with it (positive affinity).
    pub comigrated: Vec<String>,
    /// The resources on the node that keep it away (negative affinity).
    pub blocking: Vec<String>,
}

impl Ha {
    /// One resource as `GET /cluster/ha/resources/{sid}` shows it.
    fn resource_entry<'a>(
        &'a self,
        sid: &'a str,
        r: &'a Resource,
        digest: String,
        version: PveVersion,
    ) -> ResourceEntry<'a> {
        let hide_group = version.is_v9() && self.groups_migrated();
        ResourceEntry {
            sid,
            resource: r,
            digest,
            group: r.group().filter(|_| !hide_group),
            missing_group: None,
        }
    }

    /// `GET /cluster/ha/resources`, sorted by sid; a resource whose
    /// group does not exist has it in `missing_group`.
    pub fn resources_index(
        &self,
        version: PveVersion,
        kind: Option<&str>,
    ) -> Vec<ResourceEntry<'_>> {
        let digest = self.resources_digest();
        self.resources
            .iter()
            .filter(|(_, r)| kind.is_none_or(|k| k == r.kind))
            .map(|(sid, r)| {
                let mut e = self.resource_entry(sid, r, digest.clone(), version);
                e.missing_group = e.group.filter(|g| !self.groups.contains_key(*g));
                e
            })
            .collect()
    }

    /// `GET /cluster/ha/resources/{sid}`.
    ///
    /// # Errors
    /// `no such resource 'vm:100'`.
    pub fn read_resource<'a>(
        &'a self,
        version: PveVersion,
        sid: &str,
    ) -> Result<ResourceEntry<'a>> {
        let Some((sid, r)) = self.resources.get_key_value(sid) else {
            return Err(Error::not_found(format!("no such resource '{sid}'")));
        };
        Ok(self.resource_entry(sid, r, self.resources_digest(), version))
    }

    /// `check_service_state`: a service in `error` takes nothing but
    /// `disabled`.
    fn check_service_state(&self, sid: &str, req: Option<&str>) -> Result<()> {
        let in_error = self.is_managed(sid)
            && self
                .manager
                .as_ref()
                .and_then(|m| m.service(sid))
                .is_some_and(|s| s.state() == "error");
        if in_error && req != Some("disabled") {
            return Err(Error::conflict(format!(
                "service '{sid}' in error state, must be disabled and fixed first"
            )));
        }
        Ok(())
    }

    /// `POST /cluster/ha/resources`.
    ///
    /// # Errors
    /// PVE's refusals: `types does not match`, a migrated `group`, an
    /// unknown resource type, a bad or missing guest, `resource ID 'x'
    /// already defined`.
    pub fn create_resource(
        &mut self,
        version: PveVersion,
        sid: &str,
        up: &ResourceUpdate,
        lookup: impl Fn(u32) -> Option<GuestType>,
        now: i64,
    ) -> Result<String> {
        let (sid, kind, name) = parse_sid(version, sid, &lookup)?;
        if up.kind.as_deref().is_some_and(|t| t != kind) {
            return Err(Error::failed("types does not match"));
        }
        if version.is_v9() && up.group.is_some() && self.groups_migrated() {
            return Err(Error::failed(
                "invalid parameter 'group': ha groups have been migrated to rules",
            ));
        }
        if kind != "vm" && kind != "ct" {
            return Err(Error::failed(format!("unknown section type '{kind}'")));
        }
        check_guest(version, &kind, &name, &lookup)?;
        if self.resources.contains_key(&sid) {
            return Err(Error::exists(format!(
                "create resource failed: resource ID '{sid}' already defined"
            )));
        }
        let r = Resource {
            kind,
            state: up.state.clone(),
            group: up.group.clone(),
            failback: up.failback,
            auto_rebalance: up.auto_rebalance,
            max_restart: up.max_restart,
            max_relocate: up.max_relocate,
            comment: up.comment.clone(),
        };
        self.resources.insert(sid.clone(), r);
        self.wake(now);
        Ok(sid)
    }

    /// `PUT /cluster/ha/resources/{sid}`.
    ///
    /// # Errors
    /// `types does not match`, a missing or migrated group, a service in
    /// error, `update resources config failed: ...` (digest, unknown
    /// resource, bad `delete`).
    pub fn update_resource(
        &mut self,
        version: PveVersion,
        sid: &str,
        up: &ResourceUpdate,
        lookup: impl Fn(u32) -> Option<GuestType>,
        now: i64,
    ) -> Result<()> {
        let (sid, kind, _) = parse_sid(version, sid, &lookup)?;
        if up.kind.as_deref().is_some_and(|t| t != kind) {
            return Err(Error::failed("types does not match"));
        }
        if let Some(g) = &up.group {
            if version.is_v9() && self.groups_migrated() {
                return Err(Error::failed(
                    "invalid parameter 'group': ha groups have been migrated to rules",
                ));
            }
            if !self.groups.contains_key(g) {
                return Err(Error::not_found(format!("HA group '{g}' does not exist")));
            }
        }
        self.check_service_state(&sid, up.state.as_deref())?;
        let wrap = |e: Error| e.map_message(|m| format!("update resources config failed: {m}"));
        if up
            .digest
            .as_deref()
            .is_some_and(|d| d != self.resources_digest())
        {
            return Err(wrap(Error::conflict(MODIFIED)));
        }
        let options = resource_options(version);
        let Some(r) = self.resources.get_mut(&sid) else {
            return Err(wrap(Error::not_found(format!("no such resource '{sid}'"))));
        };
        let mut next = r.clone();
        if let Some(s) = &up.state {
            next.state = Some(s.clone());
        }
        if let Some(g) = &up.group {
            next.group = Some(g.clone());
        }
        if let Some(f) = up.failback {
            next.failback = Some(f);
        }
        if let Some(a) = up.auto_rebalance {
            next.auto_rebalance = Some(a);
        }
        if let Some(n) = up.max_restart {
            next.max_restart = Some(n);
        }
        if let Some(n) = up.max_relocate {
            next.max_relocate = Some(n);
        }
        if let Some(c) = &up.comment {
            next.comment = Some(c.clone());
        }
        for k in &up.delete {
            if !options.contains(&k.as_str()) {
                return Err(wrap(Error::failed(format!("no such option '{k}'"))));
            }
            match k.as_str() {
                "state" => next.state = None,
                "group" => next.group = None,
                "comment" => next.comment = None,
                "failback" => next.failback = None,
                "auto-rebalance" => next.auto_rebalance = None,
                "max_restart" => next.max_restart = None,
                _ => next.max_relocate = None,
            }
        }
        *r = next;
        self.wake(now);
        Ok(())
    }

    /// `DELETE /cluster/ha/resources/{sid}`; `purge` (9.x) takes the
    /// resource out of the rules too, dropping a rule left without one.
    ///
    /// # Errors
    /// `cannot delete service 'vm:100', not HA managed!`.
    pub fn delete_resource(
        &mut self,
        version: PveVersion,
        sid: &str,
        purge: bool,
        lookup: impl Fn(u32) -> Option<GuestType>,
    ) -> Result<()> {
        let (sid, _, _) = parse_sid(version, sid, &lookup)?;
        if self.resources.remove(&sid).is_none() {
            return Err(Error::not_found(format!(
                "cannot delete service '{sid}', not HA managed!"
            )));
        }
        if version.is_v9() && purge {
            self.rules.retain(|_, rule| rule.remove_resource(&sid));
        }
        Ok(())
    }

    /// Removes a guest's resource when the guest is destroyed with
    /// `purge` (`delete_service_from_config`).
    pub fn forget_guest(&mut self, vmid: u32) {
        for t in ["vm", "ct"] {
            let sid = format!("{t}:{vmid}");
            if self.resources.remove(&sid).is_some() {
                self.rules.retain(|_, rule| rule.remove_resource(&sid));
            }
        }
    }

    /// `POST .../migrate` and `.../relocate`: queues the CRM command;
    /// 9.x answers what moves with the resource and what blocks it.
    ///
    /// # Errors
    /// `resource 'vm:100' is not HA managed`, a service in error.
    pub fn request_move(
        &mut self,
        version: PveVersion,
        sid: &str,
        node: &str,
        relocate: bool,
        lookup: impl Fn(u32) -> Option<GuestType>,
        now: i64,
    ) -> Result<Option<MoveRequested>> {
        let (sid, _, _) = parse_sid(version, sid, &lookup)?;
        if !self.is_managed(&sid) {
            return Err(Error::failed(format!("resource '{sid}' is not HA managed")));
        }
        self.check_service_state(&sid, None)?;
        let cmd = if relocate { "relocate" } else { "migrate" };
        self.crm_commands.push(format!("{cmd} {sid} {node}"));
        self.wake(now);
        if !version.is_v9() {
            return Ok(None);
        }
        let (comigrated, blocking) = self.motion_info(&sid, node);
        Ok(Some(MoveRequested {
            sid,
            node: node.to_string(),
            comigrated,
            blocking,
        }))
    }

    /// `get_resource_motion_info`: the resources in positive affinity
    /// with `sid`, and those in negative affinity that are on (or moving
    /// to) `node`.
    fn motion_info(&self, sid: &str, node: &str) -> (Vec<String>, Vec<String>) {
        let (together, separate) = rules::affinitive(&self.rules, sid);
        let ss = |s: &str| {
            self.manager
                .as_ref()
                .and_then(|m| m.service(s))
                .filter(|x| x.state() != "ignored")
        };
        let online = self
            .manager
            .as_ref()
            .is_some_and(|m| m.node_state(node) == Some("online"));
        let together = together.into_iter().filter(|s| ss(s).is_some()).collect();
        let blocking = if online {
            separate
                .into_iter()
                .filter(|s| {
                    ss(s).is_some_and(|x| x.node() == node && x.target().is_none_or(|t| t == node))
                })
                .collect()
        } else {
            Vec::new()
        };
        (together, blocking)
    }

    /// Asks for the CRM command of a guest's power or migrate call
    /// (`ha-manager set ... --state started`, `crm-command stop`,
    /// `ha-manager migrate`): a start sets the requested state at once,
    /// the others are queued for the next round.
    ///
    /// # Errors
    /// A service in error state refuses anything but `disabled`.
    pub fn request(&mut self, sid: &str, req: &HaRequest, now: i64) -> Result<()> {
        match req {
            HaRequest::Start => {
                self.check_service_state(sid, Some("started"))?;
                if let Some(r) = self.resources.get_mut(sid) {
                    r.state = Some("started".into());
                }
            }
            HaRequest::Stop { timeout } => {
                self.crm_commands.push(format!("stop {sid} {timeout}"));
            }
            HaRequest::Migrate { target } => {
                self.check_service_state(sid, None)?;
                self.crm_commands.push(format!("migrate {sid} {target}"));
            }
        }
        self.wake(now);
        Ok(())
    }
}
