//! HA groups (`groups.cfg`, 8.x) as `API2/HA/Groups.pm` handles them;
//! on 9.x every call is refused once the groups are migrated to rules.

use std::collections::BTreeSet;

use super::{Group, GroupUpdate, Ha, MODIFIED};
use crate::model::{Error, PveVersion, Result};

/// A group as `GET /cluster/ha/groups[/{group}]` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupEntry<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its configuration.
    pub group: &'a Group,
    /// The digest of `groups.cfg`.
    pub digest: String,
}

impl Ha {
    /// `GET /cluster/ha/groups`.
    ///
    /// # Errors
    /// 9.x once groups are migrated: `cannot index groups: ...`.
    pub fn groups_index(&self, version: PveVersion) -> Result<Vec<GroupEntry<'_>>> {
        if version.is_v9() && self.groups_migrated() {
            return Err(Error::failed(
                "cannot index groups: ha groups have been migrated to rules",
            ));
        }
        let digest = self.groups_digest();
        Ok(self
            .groups
            .iter()
            .map(|(id, group)| GroupEntry {
                id,
                group,
                digest: digest.clone(),
            })
            .collect())
    }

    /// `GET /cluster/ha/groups/{group}`.
    ///
    /// # Errors
    /// `cannot read group: ...` (9.x, migrated), `no such ha group 'x'`.
    pub fn read_group<'a>(&'a self, version: PveVersion, id: &str) -> Result<GroupEntry<'a>> {
        if version.is_v9() && self.groups_migrated() {
            return Err(Error::failed(
                "cannot read group: ha groups have been migrated to rules",
            ));
        }
        let Some((id, group)) = self.groups.get_key_value(id) else {
            return Err(Error::not_found(format!("no such ha group '{id}'")));
        };
        Ok(GroupEntry {
            id,
            group,
            digest: self.groups_digest(),
        })
    }

    /// `POST /cluster/ha/groups`.
    ///
    /// # Errors
    /// `cannot create group: ...` (9.x, migrated), `types does not
    /// match`, `create ha group failed: ha group ID 'x' already defined`.
    pub fn create_group(&mut self, version: PveVersion, id: &str, up: &GroupUpdate) -> Result<()> {
        if version.is_v9() && self.groups_migrated() {
            return Err(Error::failed(
                "cannot create group: ha groups have been migrated to rules",
            ));
        }
        if up.kind.as_deref().is_some_and(|t| t != "group") {
            return Err(Error::failed("types does not match"));
        }
        let Some(nodes) = &up.nodes else {
            return Err(Error::failed("missing value for required option 'nodes'"));
        };
        if self.groups.contains_key(id) {
            return Err(Error::exists(format!(
                "create ha group failed: ha group ID '{id}' already defined"
            )));
        }
        let g = Group {
            nodes: group_nodes(nodes),
            restricted: up.restricted,
            nofailback: up.nofailback,
            comment: up.comment.clone(),
        };
        self.groups.insert(id.to_string(), g);
        Ok(())
    }

    /// `PUT /cluster/ha/groups/{group}`.
    ///
    /// # Errors
    /// `cannot update group: ...` (9.x, migrated), `update ha group
    /// failed: ...` (digest, unknown group, bad `delete`).
    pub fn update_group(&mut self, version: PveVersion, id: &str, up: &GroupUpdate) -> Result<()> {
        if version.is_v9() && self.groups_migrated() {
            return Err(Error::failed(
                "cannot update group: ha groups have been migrated to rules",
            ));
        }
        if up.kind.as_deref().is_some_and(|t| t != "group") {
            return Err(Error::failed("types does not match"));
        }
        let wrap = |e: Error| e.map_message(|m| format!("update ha group failed: {m}"));
        if up
            .digest
            .as_deref()
            .is_some_and(|d| d != self.groups_digest())
        {
            return Err(wrap(Error::conflict(MODIFIED)));
        }
        let Some(g) = self.groups.get_mut(id) else {
            return Err(wrap(Error::not_found(format!("no such ha group '{id}'"))));
        };
        let mut next = g.clone();
        if let Some(n) = &up.nodes {
            next.nodes = group_nodes(n);
        }
        if let Some(r) = up.restricted {
            next.restricted = Some(r);
        }
        if let Some(f) = up.nofailback {
            next.nofailback = Some(f);
        }
        if let Some(c) = &up.comment {
            next.comment = Some(c.clone());
        }
        for k in &up.delete {
            match k.as_str() {
                "nodes" => {
                    return Err(wrap(Error::failed(
                        "unable to delete required option 'nodes'",
                    )));
                }
                "comment" => next.comment = None,
                "nofailback" => next.nofailback = None,
                "restricted" => next.restricted = None,
                other => return Err(wrap(Error::failed(format!("no such option '{other}'")))),
            }
        }
        *g = next;
        Ok(())
    }

    /// `DELETE /cluster/ha/groups/{group}`: a missing group is no error.
    ///
    /// # Errors
    /// `cannot delete group: ...` (9.x, migrated), `delete ha group
    /// failed: ha group is used by service 'vm:100'`.
    pub fn delete_group(&mut self, version: PveVersion, id: &str) -> Result<()> {
        if version.is_v9() && self.groups_migrated() {
            return Err(Error::failed(
                "cannot delete group: ha groups have been migrated to rules",
            ));
        }
        if let Some((sid, _)) = self
            .resources
            .iter()
            .find(|(_, r)| r.group.as_deref() == Some(id))
        {
            return Err(Error::conflict(format!(
                "delete ha group failed: ha group is used by service '{sid}'"
            )));
        }
        self.groups.remove(id);
        Ok(())
    }
}

/// A group's `nodes` entries, each once, in the order given.
fn group_nodes(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for e in crate::spec::formats::split_list(value) {
        if seen.insert(e.to_string()) {
            out.push(e.to_string());
        }
    }
    out
}
