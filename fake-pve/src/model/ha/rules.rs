//! HA rules of 9.x (`rules.cfg`): node affinity and resource affinity,
//! with the feasibility checks pve-ha-manager runs on every change
//! (`PVE/HA/Rules.pm`, `Rules/NodeAffinity.pm`,
//! `Rules/ResourceAffinity.pm`) and the migration of 8.x groups
//! (`Groups.pm` `migrate_groups_to_rules`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{Group, Resource, option_line, parse_node_list};
use crate::model::{Error, Result};

/// The two rule types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RuleKind {
    /// `node-affinity`: resources prefer (or, strict, keep to) nodes.
    #[serde(rename = "node-affinity")]
    NodeAffinity,
    /// `resource-affinity`: resources kept together or apart.
    #[serde(rename = "resource-affinity")]
    ResourceAffinity,
}

impl RuleKind {
    /// The type's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NodeAffinity => "node-affinity",
            Self::ResourceAffinity => "resource-affinity",
        }
    }

    /// A type by name.
    ///
    /// # Errors
    /// `unknown section type 'x'`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "node-affinity" => Ok(Self::NodeAffinity),
            "resource-affinity" => Ok(Self::ResourceAffinity),
            other => Err(Error::failed(format!("unknown section type '{other}'"))),
        }
    }

    /// The options a rule of the type takes, and whether each is
    /// optional.
    fn options(self) -> &'static [(&'static str, bool)] {
        match self {
            Self::NodeAffinity => &[
                ("resources", false),
                ("nodes", false),
                ("strict", true),
                ("disable", true),
                ("comment", true),
            ],
            Self::ResourceAffinity => &[
                ("resources", false),
                ("affinity", false),
                ("disable", true),
                ("comment", true),
            ],
        }
    }
}

/// One rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    #[serde(rename = "type")]
    kind: RuleKind,
    order: u32,
    resources: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    nodes: BTreeMap<String, u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    affinity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    disable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
}

/// What `POST`/`PUT /cluster/ha/rules` ask for.
#[derive(Debug, Clone, Default)]
pub struct RuleUpdate {
    /// `type` (on update, it must be the rule's).
    pub kind: Option<String>,
    /// `resources`, unparsed.
    pub resources: Option<String>,
    /// `nodes`, unparsed.
    pub nodes: Option<String>,
    /// `strict`.
    pub strict: Option<bool>,
    /// `affinity`.
    pub affinity: Option<String>,
    /// `disable` (a false one is dropped, as PVE drops it).
    pub disable: Option<bool>,
    /// `comment`.
    pub comment: Option<String>,
    /// `delete`: options to remove.
    pub delete: Vec<String>,
    /// `digest`.
    pub digest: Option<String>,
}

impl RuleUpdate {
    /// The options given, by name.
    fn given(&self) -> Vec<&'static str> {
        let mut g = Vec::new();
        if self.resources.is_some() {
            g.push("resources");
        }
        if self.nodes.is_some() {
            g.push("nodes");
        }
        if self.strict.is_some() {
            g.push("strict");
        }
        if self.affinity.is_some() {
            g.push("affinity");
        }
        if self.disable == Some(true) {
            g.push("disable");
        }
        if self.comment.is_some() {
            g.push("comment");
        }
        g
    }
}

fn parse_resources(v: &str) -> BTreeSet<String> {
    crate::spec::formats::split_list(v)
        .into_iter()
        .map(str::to_string)
        .collect()
}

impl Rule {
    /// `check_config` of a new rule.
    ///
    /// # Errors
    /// `unexpected property 'x'`, `missing value for required option
    /// 'x'`, a node list that does not parse.
    pub fn create(kind: RuleKind, up: &RuleUpdate) -> Result<Self> {
        let opts = kind.options();
        for g in up.given() {
            if !opts.iter().any(|(k, _)| *k == g) {
                return Err(Error::failed(format!("unexpected property '{g}'")));
            }
        }
        let given = up.given();
        for (k, optional) in opts {
            if !optional && !given.contains(k) {
                return Err(Error::failed(format!(
                    "missing value for required option '{k}'"
                )));
            }
        }
        let mut rule = Self {
            kind,
            order: 0,
            resources: BTreeSet::new(),
            nodes: BTreeMap::new(),
            strict: None,
            affinity: None,
            disable: None,
            comment: None,
        };
        rule.apply(up)?;
        Ok(rule)
    }

    fn apply(&mut self, up: &RuleUpdate) -> Result<()> {
        if let Some(r) = &up.resources {
            self.resources = parse_resources(r);
        }
        if let Some(n) = &up.nodes {
            self.nodes = parse_node_list(n)?.into_iter().collect();
        }
        if let Some(s) = up.strict {
            self.strict = Some(s);
        }
        if let Some(a) = &up.affinity {
            self.affinity = Some(a.clone());
        }
        if up.disable == Some(true) {
            self.disable = Some(true);
        }
        if let Some(c) = &up.comment {
            self.comment = Some(c.clone());
        }
        Ok(())
    }

    /// The rule with an update applied (`check_config`,
    /// `delete_from_config`).
    ///
    /// # Errors
    /// `unexpected property 'x'`, `no such option 'x'`, `unable to delete
    /// required option 'x'`, `cannot set and delete property 'x' at the
    /// same time!`.
    pub fn updated(&self, up: &RuleUpdate) -> Result<Self> {
        let opts = self.kind.options();
        let given = up.given();
        for g in &given {
            if !opts.iter().any(|(k, _)| k == g) {
                return Err(Error::failed(format!("unexpected property '{g}'")));
            }
        }
        let mut next = self.clone();
        for k in &up.delete {
            let Some((_, optional)) = opts.iter().find(|(o, _)| o == k) else {
                return Err(Error::failed(format!("no such option '{k}'")));
            };
            if !optional {
                return Err(Error::failed(format!(
                    "unable to delete required option '{k}'"
                )));
            }
            if given.contains(&k.as_str()) {
                return Err(Error::failed(format!(
                    "cannot set and delete property '{k}' at the same time!"
                )));
            }
            match k.as_str() {
                "strict" => next.strict = None,
                "disable" => next.disable = None,
                _ => next.comment = None,
            }
        }
        next.apply(up)?;
        Ok(next)
    }

    /// The type.
    pub fn kind(&self) -> RuleKind {
        self.kind
    }

    /// The resources.
    pub fn resources(&self) -> &BTreeSet<String> {
        &self.resources
    }

    /// The nodes with their priorities (node affinity).
    pub fn nodes(&self) -> &BTreeMap<String, u32> {
        &self.nodes
    }

    /// Whether the node affinity is strict.
    pub fn strict(&self) -> bool {
        self.strict.unwrap_or(false)
    }

    /// `positive` or `negative` (resource affinity).
    pub fn affinity(&self) -> Option<&str> {
        self.affinity.as_deref()
    }

    /// Whether the rule is disabled.
    pub fn disabled(&self) -> bool {
        self.disable.is_some()
    }

    /// The rule's place in `rules.cfg`.
    pub fn order(&self) -> u32 {
        self.order
    }

    pub(super) fn set_order(&mut self, order: u32) {
        self.order = order;
    }

    /// Takes `sid` out; answers whether the rule keeps any resource.
    pub(super) fn remove_resource(&mut self, sid: &str) -> bool {
        self.resources.remove(sid);
        !self.resources.is_empty()
    }

    /// `strict` as configured.
    pub fn configured_strict(&self) -> Option<bool> {
        self.strict
    }

    /// `disable` as configured.
    pub fn configured_disable(&self) -> Option<bool> {
        self.disable
    }

    /// `comment`, if set.
    pub fn comment(&self) -> Option<&str> {
        self.comment.as_deref()
    }

    /// The node list as PVE writes it: sorted, `:priority` when not 0.
    pub fn nodes_text(&self) -> String {
        self.nodes
            .iter()
            .map(|(n, p)| {
                if *p == 0 {
                    n.clone()
                } else {
                    format!("{n}:{p}")
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The resource list as PVE writes it: sorted.
    pub fn resources_text(&self) -> String {
        self.resources.iter().cloned().collect::<Vec<_>>().join(",")
    }

    fn section_text(&self, id: &str, out: &mut String) {
        out.push_str(&format!("{}: {id}\n", self.kind.as_str()));
        if let Some(a) = &self.affinity {
            option_line(out, "affinity", a);
        }
        if let Some(c) = &self.comment {
            option_line(out, "comment", c);
        }
        if let Some(d) = self.disable {
            option_line(out, "disable", u8::from(d));
        }
        if !self.nodes.is_empty() {
            option_line(out, "nodes", self.nodes_text());
        }
        option_line(out, "resources", self.resources_text());
        if let Some(s) = self.strict {
            option_line(out, "strict", u8::from(s));
        }
        out.push('\n');
    }
}

/// The text of `rules.cfg`, in rule order.
pub fn rules_text(rules: &BTreeMap<String, Rule>) -> String {
    let mut out = String::new();
    for (id, r) in sorted(rules) {
        r.section_text(id, &mut out);
    }
    out
}

/// The rules in their order (ties by id).
pub fn sorted(rules: &BTreeMap<String, Rule>) -> Vec<(&String, &Rule)> {
    let mut v: Vec<(&String, &Rule)> = rules.iter().collect();
    v.sort_by(|a, b| a.1.order.cmp(&b.1.order).then(a.0.cmp(b.0)));
    v
}

/// `get_next_ordinal`: one more than the *lowest* order in use, as
/// pve-ha-manager computes it.
pub fn next_ordinal(rules: &BTreeMap<String, Rule>) -> u32 {
    rules.values().map(|r| r.order).min().unwrap_or(0) + 1
}

/// `migrate_groups_to_rules`: each group that resources use becomes the
/// node affinity rule `ha-group-<group>` of those resources.
pub fn migrate_groups(
    rules: &mut BTreeMap<String, Rule>,
    groups: &BTreeMap<String, Group>,
    resources: &BTreeMap<String, Resource>,
) {
    let mut by_group: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (sid, r) in resources {
        if let Some(g) = r.group() {
            by_group.entry(g).or_default().insert(sid.clone());
        }
    }
    for (gid, sids) in by_group {
        let Some(g) = groups.get(gid) else {
            continue;
        };
        let nodes = g
            .nodes()
            .iter()
            .filter_map(|e| parse_node_list(e).ok())
            .flatten()
            .collect();
        let rule = Rule {
            kind: RuleKind::NodeAffinity,
            order: next_ordinal(rules),
            resources: sids,
            nodes,
            strict: Some(g.restricted()).filter(|_| g.restricted.is_some()),
            affinity: None,
            disable: None,
            comment: Some(
                g.comment
                    .clone()
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| format!("Generated from HA group '{gid}'.")),
            ),
        };
        rules.insert(format!("ha-group-{gid}"), rule);
    }
}

/// Per rule, per option, the reasons it cannot be applied
/// (`check_feasibility`); disabled rules are left out. `nodes` is how
/// many nodes the manager knows.
pub fn check_feasibility(
    rules: &BTreeMap<String, Rule>,
    nodes: usize,
) -> BTreeMap<String, BTreeMap<&'static str, Vec<String>>> {
    let mut errors: BTreeMap<String, BTreeMap<&'static str, Vec<String>>> = BTreeMap::new();
    let mut push = |id: &str, msg: String| {
        errors
            .entry(id.to_string())
            .or_default()
            .entry("resources")
            .or_default()
            .push(msg);
    };
    let enabled: Vec<(&String, &Rule)> = rules.iter().filter(|(_, r)| !r.disabled()).collect();
    // A resource in more than one node affinity rule.
    let mut users: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (id, r) in enabled
        .iter()
        .filter(|(_, r)| r.kind == RuleKind::NodeAffinity)
    {
        for sid in &r.resources {
            users.entry(sid).or_default().push(id);
        }
    }
    let mut conflicts: Vec<(&str, &str)> = users
        .iter()
        .filter(|(_, ids)| ids.len() > 1)
        .flat_map(|(sid, ids)| ids.iter().map(move |id| (*id, *sid)))
        .collect();
    conflicts.sort_unstable();
    for (id, sid) in conflicts {
        push(
            id,
            format!("resource '{sid}' is already used in another node affinity rule"),
        );
    }
    let affinity = |a: &str| {
        enabled
            .iter()
            .filter(move |(_, r)| r.kind == RuleKind::ResourceAffinity && r.affinity() == Some(a))
            .copied()
            .collect::<Vec<_>>()
    };
    let (positive, negative) = (affinity("positive"), affinity("negative"));
    for (id, r) in positive
        .iter()
        .chain(negative.iter())
        .copied()
        .collect::<BTreeMap<_, _>>()
    {
        if r.resources.len() < 2 {
            push(
                id,
                "rule is ineffective as there are less than two resources".into(),
            );
        }
    }
    for (id, r) in &negative {
        if r.resources.len() > nodes {
            push(
                id,
                "rule defines more resources than available nodes".into(),
            );
        }
    }
    // Positive rules sharing resources act as one set.
    let mut sets: Vec<(BTreeSet<String>, Vec<&str>)> = Vec::new();
    for (id, r) in &positive {
        let mut merged = (r.resources.clone(), vec![id.as_str()]);
        sets.retain(|(s, ids)| {
            if s.is_disjoint(&merged.0) {
                true
            } else {
                merged.0.extend(s.iter().cloned());
                merged.1.extend(ids.iter().copied());
                false
            }
        });
        sets.push(merged);
    }
    let mut inter: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (set, ids) in &sets {
        for (nid, n) in &negative {
            if set.intersection(&n.resources).count() < 2 {
                continue;
            }
            inter.insert(("negative", nid.as_str()));
            for id in ids {
                inter.insert(("positive", id));
            }
        }
    }
    for (kind, id) in inter {
        let other = if kind == "positive" {
            "negative"
        } else {
            "positive"
        };
        push(
            id,
            format!("rule shares two or more resources with a {other} resource affinity rule"),
        );
    }
    errors
}

/// `get_affinitive_resources`: the resources kept together with `sid`
/// and those kept apart from it, by the enabled resource affinity rules.
pub fn affinitive(rules: &BTreeMap<String, Rule>, sid: &str) -> (Vec<String>, Vec<String>) {
    let mut together = BTreeSet::new();
    let mut separate = BTreeSet::new();
    for r in rules.values() {
        if r.disabled() || r.kind != RuleKind::ResourceAffinity || !r.resources.contains(sid) {
            continue;
        }
        let set = if r.affinity() == Some("positive") {
            &mut together
        } else {
            &mut separate
        };
        set.extend(r.resources.iter().filter(|s| *s != sid).cloned());
    }
    (
        together.into_iter().collect(),
        separate.into_iter().collect(),
    )
}
