//! The rules calls of `API2/HA/Rules.pm` (9.x).

use std::collections::BTreeMap;

use super::rules::{self, Rule, RuleKind, RuleUpdate};
use super::{Ha, MODIFIED};
use crate::model::{Error, Result};

/// A rule as `GET /cluster/ha/rules[/{rule}]` shows it: the rules shown
/// include the groups not yet migrated, so it is a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEntry {
    /// Its id.
    pub id: String,
    /// The rule.
    pub rule: Rule,
    /// The digest of `rules.cfg`.
    pub digest: String,
    /// Per option, why the rule cannot be applied (`check_feasibility`).
    pub errors: Option<BTreeMap<&'static str, Vec<String>>>,
}

impl Ha {
    /// The rules as the API shows them: with the not yet migrated
    /// groups as `ha-group-<group>` node affinity rules
    /// (`get_full_rules_config`).
    fn full_rules(&self) -> BTreeMap<String, Rule> {
        let mut rules = self.rules.clone();
        rules::migrate_groups(&mut rules, &self.groups, &self.resources);
        rules
    }

    /// `GET /cluster/ha/rules`, in rule order, optionally only of one
    /// `type` or with one `resource`.
    pub fn rules_index(&self, kind: Option<&str>, resource: Option<&str>) -> Vec<RuleEntry> {
        let rules = self.full_rules();
        let nodes = self.manager_nodes();
        let mut errors = rules::check_feasibility(&rules, nodes.len());
        let digest = self.rules_digest();
        rules::sorted(&rules)
            .into_iter()
            .filter(|(_, r)| kind.is_none_or(|k| k == r.kind().as_str()))
            .filter(|(_, r)| resource.is_none_or(|s| r.resources().contains(s)))
            .map(|(id, r)| RuleEntry {
                id: id.clone(),
                rule: r.clone(),
                digest: digest.clone(),
                errors: errors.remove(id),
            })
            .collect()
    }

    /// `GET /cluster/ha/rules/{rule}`.
    ///
    /// # Errors
    /// `no such ha rule 'x'`.
    pub fn read_rule(&self, id: &str) -> Result<RuleEntry> {
        let mut rules = self.full_rules();
        let nodes = self.manager_nodes();
        let mut errors = rules::check_feasibility(&rules, nodes.len());
        let Some(rule) = rules.remove(id) else {
            return Err(Error::not_found(format!("no such ha rule '{id}'")));
        };
        Ok(RuleEntry {
            id: id.to_string(),
            rule,
            digest: self.rules_digest(),
            errors: errors.remove(id),
        })
    }

    /// The nodes the manager knows (`node_status`).
    fn manager_nodes(&self) -> Vec<String> {
        self.manager
            .as_ref()
            .map(|m| m.nodes().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// `POST /cluster/ha/rules`.
    ///
    /// # Errors
    /// `cannot create ha rule: ha groups have not been migrated yet`, the
    /// type's option checks, `create ha rule failed: ...` (an existing
    /// rule, unmanaged resources, unknown nodes, an infeasible rule).
    pub fn create_rule(
        &mut self,
        id: &str,
        kind: &str,
        up: &RuleUpdate,
        node_exists: impl Fn(&str) -> bool,
    ) -> Result<()> {
        if !self.groups_migrated() {
            return Err(Error::failed(
                "cannot create ha rule: ha groups have not been migrated yet",
            ));
        }
        let kind = RuleKind::parse(kind)?;
        let rule = Rule::create(kind, up)?;
        let wrap = |e: Error| e.map_message(|m| format!("create ha rule failed: {m}"));
        if self.rules.contains_key(id) {
            return Err(wrap(Error::exists(format!(
                "HA rule '{id}' already defined"
            ))));
        }
        self.check_members(&rule, &node_exists).map_err(wrap)?;
        let mut rules = self.rules.clone();
        let mut rule = rule;
        rule.set_order(rules::next_ordinal(&rules));
        rules.insert(id.to_string(), rule);
        self.assert_feasible(&rules, id).map_err(wrap)?;
        self.rules = rules;
        Ok(())
    }

    /// `PUT /cluster/ha/rules/{rule}`.
    ///
    /// # Errors
    /// `cannot update ha rule: ...`, `update HA rules failed: ...`
    /// (digest, unknown rule, options, members, feasibility).
    pub fn update_rule(
        &mut self,
        id: &str,
        up: &RuleUpdate,
        node_exists: impl Fn(&str) -> bool,
    ) -> Result<()> {
        if !self.groups_migrated() {
            return Err(Error::failed(
                "cannot update ha rule: ha groups have not been migrated yet",
            ));
        }
        let wrap = |e: Error| e.map_message(|m| format!("update HA rules failed: {m}"));
        if up
            .digest
            .as_deref()
            .is_some_and(|d| d != self.rules_digest())
        {
            return Err(wrap(Error::conflict(MODIFIED)));
        }
        let Some(rule) = self.rules.get(id) else {
            return Err(wrap(Error::not_found(format!(
                "HA rule '{id}' does not exist"
            ))));
        };
        if up
            .kind
            .as_deref()
            .is_some_and(|t| t != rule.kind().as_str())
        {
            return Err(wrap(Error::failed("unexpected property 'type'")));
        }
        let next = rule.updated(up).map_err(wrap)?;
        if up.resources.is_some() || up.nodes.is_some() {
            self.check_members(&next, &node_exists).map_err(wrap)?;
        }
        let mut rules = self.rules.clone();
        rules.insert(id.to_string(), next);
        self.assert_feasible(&rules, id).map_err(wrap)?;
        self.rules = rules;
        Ok(())
    }

    /// `DELETE /cluster/ha/rules/{rule}`: a missing rule is no error.
    pub fn delete_rule(&mut self, id: &str) {
        self.rules.remove(id);
    }

    /// `assert_valid_resources_param`, `assert_valid_nodes_param`.
    fn check_members(&self, rule: &Rule, node_exists: &impl Fn(&str) -> bool) -> Result<()> {
        if rule.resources().is_empty() {
            return Err(Error::failed("no resources were specified"));
        }
        let unmanaged: Vec<&str> = rule
            .resources()
            .iter()
            .filter(|s| !self.resources.contains_key(*s))
            .map(String::as_str)
            .collect();
        if !unmanaged.is_empty() {
            return Err(Error::failed(format!(
                "cannot use unmanaged resource(s) {}.",
                unmanaged.join(", ")
            )));
        }
        if rule.kind() == RuleKind::NodeAffinity {
            if rule.nodes().is_empty() {
                return Err(Error::failed("no nodes were specified"));
            }
            let missing: Vec<&str> = rule
                .nodes()
                .keys()
                .filter(|n| !node_exists(n))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(Error::failed(format!(
                    "cannot use non-existent node(s) {}.",
                    missing.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// `assert_feasibility`: the rule `id` must have no error among
    /// `rules` (with the groups not yet migrated).
    fn assert_feasible(&self, rules: &BTreeMap<String, Rule>, id: &str) -> Result<()> {
        let mut full = rules.clone();
        rules::migrate_groups(&mut full, &self.groups, &self.resources);
        let errors = rules::check_feasibility(&full, self.manager_nodes().len());
        let Some(errs) = errors.get(id) else {
            return Ok(());
        };
        let mut msg = format!("400 Rule '{id}' is invalid.\n");
        for (opt, list) in errs {
            msg.push_str(&format!("{opt}: {}\n", list.join(", ")));
        }
        Err(Error::failed(msg.trim_end().to_string()))
    }
}
