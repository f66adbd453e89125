//! The cluster's security groups (`[group <name>]` of `cluster.fw`):
//! listed, created, renamed (the rules that use them following) and
//! deleted.

use super::{Digested, Firewall, Rule, Section, check_digest, sections, trimmed};
use crate::model::{Error, Result};

impl Firewall {
    /// `GET /cluster/firewall/groups`.
    pub fn groups(&self) -> Digested<Section<'_>> {
        let list = self
            .cluster
            .groups
            .iter()
            .map(|(name, g)| Section {
                name,
                comment: g.comment.as_deref(),
            })
            .collect();
        sections("group", list)
    }

    /// `POST /cluster/firewall/groups`: a new group, or (with `rename`)
    /// a group renamed, the rules that use it following it everywhere.
    ///
    /// # Errors
    /// `group`: `Security group 'x' already exists`, `Security group 'x'
    /// does not exist`, `Security group 'x' does already exist`; a
    /// changed `digest`.
    pub fn create_group(
        &mut self,
        group: &str,
        comment: Option<&str>,
        rename: Option<&str>,
        digest: Option<&str>,
    ) -> Result<()> {
        let key = group.to_ascii_lowercase();
        let Some(old) = rename.filter(|r| !r.is_empty()) else {
            if self.cluster.groups.contains_key(group) {
                return Err(Error::invalid(
                    "group",
                    format!("Security group '{group}' already exists"),
                ));
            }
            let entry = self.cluster.groups.entry(key).or_default();
            if let Some(c) = comment {
                entry.comment = trimmed(Some(c));
            }
            return Ok(());
        };
        check_digest(digest, &self.groups().digest)?;
        if !self.cluster.groups.contains_key(old) {
            return Err(Error::invalid(
                "group",
                format!("Security group '{old}' does not exist"),
            ));
        }
        if self.cluster.groups.contains_key(group) && group != old {
            return Err(Error::invalid(
                "group",
                format!("Security group '{group}' does already exist"),
            ));
        }
        if old == group {
            if let (Some(c), Some(g)) = (comment, self.cluster.groups.get_mut(old)) {
                g.comment = trimmed(Some(c));
            }
            return Ok(());
        }
        let Some(mut g) = self.cluster.groups.remove(old) else {
            return Ok(());
        };
        if let Some(c) = comment {
            g.comment = trimmed(Some(c));
        }
        self.cluster.groups.insert(key.clone(), g);
        let follow = |rules: &mut Vec<Rule>| {
            for r in rules.iter_mut() {
                if r.get("type").map(String::as_str) == Some("group")
                    && r.get("action").map(String::as_str) == Some(old)
                {
                    r.insert("action".into(), group.to_string());
                }
            }
        };
        follow(&mut self.cluster.rules);
        for c in self.hosts.values_mut() {
            follow(&mut c.rules);
        }
        for c in self.guests.values_mut() {
            follow(&mut c.rules);
        }
        Ok(())
    }

    /// `DELETE /cluster/firewall/groups/{group}`: only an empty group.
    ///
    /// # Errors
    /// `no such security group 'x'`, `Security group 'x' is not empty`.
    pub fn delete_group(&mut self, group: &str) -> Result<()> {
        let Some(g) = self.cluster.groups.get(group) else {
            return Err(Error::not_found(format!(
                "no such security group '{group}'"
            )));
        };
        if !g.rules.is_empty() {
            return Err(Error::conflict(format!(
                "Security group '{group}' is not empty"
            )));
        }
        self.cluster.groups.remove(group);
        Ok(())
    }
}
