//! One firewall rule, and its checks (pve-firewall `Firewall.pm`
//! `verify_rule`, `copy_rule_data`, `delete_rule_properties`,
//! `$apply_macro`, and the round trip of `$format_rules` and
//! `parse_fw_rule`).
//!
//! A rule is kept as its file line keeps it: the properties by PVE's
//! names (`type`, `action`, `macro`, `iface`, `source`, `dest`, `proto`,
//! `dport`, `sport`, `log`, `icmp-type`, `comment`, `enable`), values as
//! text. What a rule reads as (its `ipversion`, its `errors`) is worked
//! out on each read against the aliases and IP sets of the moment, as
//! PVE does when it parses the file again.

use std::collections::BTreeMap;

use pve_schema::formats::{FormatError, ICMP_TYPES, ICMPV6_TYPES, check};

use super::macros;
use crate::model::{Error, Result};

/// A rule: its properties by name.
pub type Rule = BTreeMap<String, String>;

/// The properties a rule may have (`$rule_properties`, without `pos`
/// and `digest`, which are not kept).
pub const RULE_PROPERTIES: &[&str] = &[
    "type",
    "action",
    "macro",
    "iface",
    "source",
    "dest",
    "proto",
    "enable",
    "log",
    "sport",
    "dport",
    "comment",
    "icmp-type",
];

/// Where a rule lives: its `rule_env`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleEnv {
    /// `cluster.fw` `[RULES]`.
    Cluster,
    /// `host.fw` of a node.
    Host,
    /// A VM's `<vmid>.fw`.
    Vm,
    /// A container's `<vmid>.fw`.
    Ct,
    /// A security group of `cluster.fw`.
    Group,
    /// An SDN VNet's `<vnet>.fw`.
    Vnet,
}

impl RuleEnv {
    /// PVE's name of it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cluster => "cluster",
            Self::Host => "host",
            Self::Vm => "vm",
            Self::Ct => "ct",
            Self::Group => "group",
            Self::Vnet => "vnet",
        }
    }

    fn allows_iface(self) -> bool {
        !matches!(self, Self::Group | Self::Vnet)
    }

    fn directions(self) -> &'static [&'static str] {
        match self {
            Self::Vm | Self::Ct => &["in", "out", "group"],
            Self::Group => &["in", "out", "forward"],
            Self::Cluster | Self::Host => &["in", "out", "forward", "group"],
            Self::Vnet => &["forward", "group"],
        }
    }
}

/// What an alias resolves to, for a rule's IP version.
pub trait Names {
    /// The IP version of the alias named (lower case) `alias`, if it
    /// exists.
    fn alias(&self, alias: &str) -> Option<u8>;
    /// Whether an IP set named `name` exists.
    fn ipset(&self, name: &str) -> bool;
}

/// The refusal of a rule: a parameter error, or a plain `die`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `raise_param_exc({param => msg})`.
    Param(String, String),
    /// A plain `die` (HTTP 500).
    Die(String),
}

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Param(p, m) => Error::invalid(p, m),
            Refusal::Die(m) => Error::failed(m),
        }
    }
}

/// What a rule reads as.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified {
    /// The IP version its addresses, aliases or protocol imply.
    pub ipversion: Option<u8>,
    /// Its errors by property (the first of each).
    pub errors: BTreeMap<String, String>,
}

const PROTOCOLS_WITH_PORTS: &[&str] = &[
    "udp", "17", "udplite", "136", "tcp", "6", "dccp", "33", "sctp", "132",
];

fn is_icmp(proto: &str) -> bool {
    matches!(proto, "icmp" | "icmpv6" | "ipv6-icmp")
}

/// `[A-Za-z][A-Za-z0-9\-\_]+`, the pattern of group, IP set and alias
/// names.
pub fn is_name(v: &str) -> bool {
    let mut b = v.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic())
        && v.len() >= 2
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

fn chomp(m: &str) -> String {
    m.strip_suffix('\n').unwrap_or(m).to_string()
}

/// Why a rule's address or protocol is refused, in PVE's words.
#[derive(Debug, thiserror::Error)]
enum AddressError {
    /// Not a `pve-fw-addr-spec`.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// An address, alias or protocol of the other IP version than the
    /// rule's so far.
    #[error("detected mixed ipv4/ipv6 addresses in rule\n")]
    MixedVersions,
}

/// The IP version of an address list that `parse_address_list` accepts
/// (`None` for an IP set or alias reference).
fn address_list_version(v: &str) -> std::result::Result<Option<u8>, FormatError> {
    check("pve-fw-addr-spec", v)?;
    if v.starts_with('+') || alias_ref(v).is_some() {
        return Ok(None);
    }
    Ok(Some(if v.contains(':') { 6 } else { 4 }))
}

/// `^(guest/|dc/)?<name>$`: the scope and the name of an alias
/// reference.
pub fn alias_ref(v: &str) -> Option<(&str, &str)> {
    let (scope, name) = if let Some(n) = v.strip_prefix("dc/") {
        ("dc/", n)
    } else if let Some(n) = v.strip_prefix("guest/") {
        ("guest/", n)
    } else {
        ("", v)
    };
    is_name(name).then_some((scope, name))
}

/// Checks a rule as `verify_rule` does, normalizing its macro's name.
/// `strict` stops at the first error (the API's checks); otherwise
/// every error is collected (a rule read back from its file).
///
/// `cluster` and `local` are PVE's `$cluster_conf` and `$fw_conf`.
///
/// # Errors
/// The first refusal when `strict`, or a `die` either way.
pub fn verify(
    rule: &mut Rule,
    env: RuleEnv,
    cluster: Option<&dyn Names>,
    local: Option<&dyn Names>,
    strict: bool,
) -> std::result::Result<Verified, Refusal> {
    let mut out = Verified::default();
    let add = |out: &mut Verified, p: &str, m: String| -> std::result::Result<(), Refusal> {
        let m = chomp(&m);
        if strict {
            return Err(Refusal::Param(p.to_string(), m));
        }
        out.errors.entry(p.to_string()).or_insert(m);
        Ok(())
    };
    let set_version =
        |ipv: &mut Option<u8>, v: Option<u8>| -> std::result::Result<(), AddressError> {
            if let Some(v) = v {
                if ipv.is_some_and(|old| old != v) {
                    return Err(AddressError::MixedVersions);
                }
                *ipv = Some(v);
            }
            Ok(())
        };
    let get = |r: &Rule, k: &str| r.get(k).filter(|v| !v.is_empty()).cloned();
    let ty = get(rule, "type");
    let action = get(rule, "action");
    if ty.is_none() {
        add(&mut out, "type", "missing property".into())?;
    }
    if action.is_none() {
        add(&mut out, "action", "missing property".into())?;
    }
    if let Some(t) = &ty {
        if !env.directions().contains(&t.as_str()) {
            add(
                &mut out,
                "type",
                format!("invalid rule type '{t}' for rule_env '{}'", env.name()),
            )?;
        }
        match t.as_str() {
            "in" | "out" | "forward" => {
                if t == "forward" && action.as_deref() == Some("REJECT") {
                    add(
                        &mut out,
                        "action",
                        "cannot define REJECT rules on forward chain".into(),
                    )?;
                }
                if let Some(a) = &action
                    && !matches!(a.as_str(), "ACCEPT" | "DROP" | "REJECT")
                {
                    add(&mut out, "action", format!("unknown action '{a}'"))?;
                }
            }
            "group" => {
                if env == RuleEnv::Group {
                    add(&mut out, "type", "security groups not allowed".into())?;
                }
                if let Some(a) = &action
                    && !is_name(a)
                {
                    add(
                        &mut out,
                        "action",
                        "invalid characters in security group name".into(),
                    )?;
                }
            }
            _ => add(&mut out, "type", format!("unknown rule type '{t}'"))?,
        }
    }
    if let Some(iface) = get(rule, "iface") {
        if !env.allows_iface() {
            add(
                &mut out,
                "type",
                "parameter -i not allowed for this rule type".into(),
            )?;
        }
        if let Err(e) = check("pve-iface", &iface) {
            add(&mut out, "iface", e.to_string())?;
        }
        if matches!(env, RuleEnv::Vm | RuleEnv::Ct) {
            let ok = iface
                .strip_prefix("net")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
            if !ok {
                add(
                    &mut out,
                    "iface",
                    "value does not match the regex pattern 'net\\d+'".into(),
                )?;
            }
        }
    }
    if let Some(m) = get(rule, "macro") {
        match macros::find(&m) {
            Some(found) => {
                rule.insert("macro".into(), found.name.to_string());
            }
            None => add(&mut out, "macro", format!("unknown macro '{m}'"))?,
        }
    }
    let mut ipv: Option<u8> = None;
    let proto = get(rule, "proto");
    let mut icmp = false;
    if let Some(p) = &proto {
        if let Err(e) = check("pve-fw-protocol-spec", p) {
            add(&mut out, "proto", e.to_string())?;
        }
        let v = match p.as_str() {
            "icmp" => Some(4),
            "icmpv6" | "ipv6-icmp" => Some(6),
            _ => None,
        };
        set_version(&mut ipv, v).map_err(|e| Refusal::Die(chomp(&e.to_string())))?;
        icmp = is_icmp(p);
    }
    let proto_s = proto.clone().unwrap_or_default();
    if let Some(d) = get(rule, "dport") {
        let spec = if icmp {
            "pve-fw-dport-spec"
        } else {
            "pve-fw-sport-spec"
        };
        if let Err(e) = check(spec, &d) {
            add(&mut out, "dport", e.to_string())?;
        }
        if proto.is_none() {
            add(
                &mut out,
                "proto",
                "missing property - 'dport' requires this property".into(),
            )?;
        }
        if !PROTOCOLS_WITH_PORTS.contains(&proto_s.as_str()) && !icmp {
            add(
                &mut out,
                "dport",
                format!("protocol '{proto_s}' does not support ports"),
            )?;
        }
    }
    if let Some(t) = get(rule, "icmp-type").filter(|t| t != "0") {
        if !icmp {
            add(
                &mut out,
                "proto",
                "missing property - 'icmp-type' requires this property".into(),
            )?;
        }
        if get(rule, "dport").is_some() {
            add(
                &mut out,
                "icmp-type",
                "'icmp-type' cannot be specified together with 'dport'".into(),
            )?;
        }
        if proto_s == "icmp" && !ICMP_TYPES.contains(&t.as_str()) {
            add(
                &mut out,
                "icmp-type",
                format!("invalid icmp-type '{t}' for proto 'icmp'"),
            )?;
        } else if matches!(proto_s.as_str(), "icmpv6" | "ipv6-icmp")
            && !ICMPV6_TYPES.contains(&t.as_str())
        {
            add(
                &mut out,
                "icmp-type",
                format!("invalid icmp-type '{t}' for proto '{proto_s}'"),
            )?;
        }
    }
    if let Some(s) = get(rule, "sport") {
        if let Err(e) = check("pve-fw-sport-spec", &s) {
            add(&mut out, "sport", e.to_string())?;
        }
        if proto.is_none() {
            add(
                &mut out,
                "proto",
                "missing property - 'sport' requires this property".into(),
            )?;
        }
        if !PROTOCOLS_WITH_PORTS.contains(&proto_s.as_str()) {
            add(
                &mut out,
                "sport",
                format!("protocol '{proto_s}' does not support ports"),
            )?;
        }
    }
    for name in ["source", "dest"] {
        let Some(value) = get(rule, name) else {
            continue;
        };
        if let Err(e) = address_list_version(&value)
            .map_err(AddressError::from)
            .and_then(|v| set_version(&mut ipv, v))
        {
            add(&mut out, name, e.to_string())?;
        }
        // `$check_ipset_or_alias_property`
        if let Some(set) = value.strip_prefix('+') {
            let bare = set
                .strip_prefix("guest/")
                .or_else(|| set.strip_prefix("dc/"))
                .or_else(|| set.strip_prefix("sdn/"))
                .unwrap_or(set);
            if is_name(bare) {
                let known =
                    cluster.is_some_and(|c| c.ipset(bare)) || local.is_some_and(|l| l.ipset(bare));
                if !known {
                    add(&mut out, name, format!("no such ipset '{bare}'"))?;
                }
            } else {
                add(&mut out, name, format!("invalid ipset name '{value}'"))?;
            }
        } else if let Some((scope, alias)) = alias_ref(&value) {
            let alias = alias.to_ascii_lowercase();
            let in_cluster = cluster.and_then(|c| c.alias(&alias));
            let in_local = local.and_then(|l| l.alias(&alias));
            if in_cluster.is_none() && in_local.is_none() {
                add(&mut out, name, format!("no such alias '{value}'"))?;
            }
            let mut e = if scope != "dc/" { in_local } else { None };
            if scope != "guest/" && e.is_none() {
                e = in_cluster;
            }
            set_version(&mut ipv, e).map_err(|e| Refusal::Die(chomp(&e.to_string())))?;
        }
    }
    out.ipversion = ipv;
    if out.errors.is_empty()
        && let Some(m) = get(rule, "macro").and_then(|m| macros::find(&m))
        && let Err((p, msg)) = apply_macro(m, rule, ipv)
    {
        add(&mut out, &p, msg)?;
    }
    Ok(out)
}

/// `$apply_macro` in its checking mode: every value the macro fixes
/// must agree with the rule's own.
fn apply_macro(
    m: &macros::Macro,
    rule: &Rule,
    ipv: Option<u8>,
) -> std::result::Result<(), (String, String)> {
    let mut templates = m.rules;
    if ipv == Some(6)
        && let Some(v6) = m.rules_v6
    {
        templates = v6;
    }
    if let Some(v) = ipv
        && m.ipversion != 0
        && v != m.ipversion
    {
        return Ok(());
    }
    for t in templates {
        let mut used = Vec::new();
        let mut fixed = BTreeMap::new();
        for (k, v) in *t {
            let (key, value) = match *v {
                "PARAM" => (*k, rule.get(*k)),
                "DEST" => ("dest", rule.get("dest")),
                "SOURCE" => ("source", rule.get("source")),
                _ => {
                    fixed.insert(*k, *v);
                    continue;
                }
            };
            used.push(key);
            if value.is_none() {
                return Err((
                    "macro".into(),
                    format!("missing parameter '{k}' in macro '{}'", m.name),
                ));
            }
        }
        for (k, v) in rule {
            if k == "macro" || used.contains(&k.as_str()) {
                continue;
            }
            if let Some(f) = fixed.get(k.as_str())
                && *f != v.as_str()
            {
                return Err((
                    k.clone(),
                    format!("parameter '{k}' already define in macro (value = '{f}')"),
                ));
            }
        }
    }
    Ok(())
}

/// `copy_rule_data`: the rule properties of a request go into the rule;
/// an empty value or `-` removes one.
pub fn copy_rule_data(rule: &mut Rule, params: &BTreeMap<String, String>) {
    for k in RULE_PROPERTIES {
        if let Some(v) = params.get(*k) {
            if v.is_empty() || v == "-" {
                rule.remove(*k);
            } else {
                rule.insert((*k).to_string(), v.clone());
            }
        }
    }
}

/// `delete_rule_properties`.
///
/// # Errors
/// `delete`: `no such property ('x')`, `unable to delete required
/// property 'type'`.
pub fn delete_rule_properties(rule: &mut Rule, list: &[&str]) -> Result<()> {
    for opt in list {
        if !RULE_PROPERTIES.contains(opt) && *opt != "pos" && *opt != "digest" {
            return Err(Error::invalid(
                "delete",
                format!("no such property ('{opt}')"),
            ));
        }
        if *opt == "type" || *opt == "action" {
            return Err(Error::invalid(
                "delete",
                format!("unable to delete required property '{opt}'"),
            ));
        }
        rule.remove(*opt);
    }
    Ok(())
}

fn truthy(v: Option<&String>) -> bool {
    v.is_some_and(|v| !v.is_empty() && v != "0")
}

/// What survives writing a rule to its file and reading it back
/// (`$format_rules`, `parse_fw_rule`): an `enable` of `0` or `1`, the
/// properties its type writes, a trimmed comment. `allow_iface` is false
/// in a security group's section.
pub fn round_trip(rule: &Rule, allow_iface: bool) -> Rule {
    let mut out = Rule::new();
    let ty = rule.get("type").cloned().unwrap_or_default();
    let enabled = rule.get("enable").is_none_or(|v| truthy(Some(v)));
    out.insert("enable".into(), if enabled { "1" } else { "0" }.into());
    out.insert("type".into(), ty.to_ascii_lowercase());
    let mut action = rule.get("action").cloned().unwrap_or_default();
    if ty == "group" {
        if let Some(m) = rule.get("macro").filter(|m| !m.is_empty()) {
            action = format!("{m}({action})");
        }
    } else if let Some(m) = rule.get("macro").filter(|m| !m.is_empty()) {
        out.insert("macro".into(), m.clone());
    }
    out.insert("action".into(), action);
    if allow_iface && truthy(rule.get("iface")) {
        out.insert("iface".into(), rule["iface"].clone());
    }
    if ty != "group" {
        for k in ["source", "dest", "proto", "dport", "sport", "log"] {
            if truthy(rule.get(k)) {
                out.insert(k.into(), rule[k].clone());
            }
        }
        if let Some(t) = rule.get("icmp-type").filter(|t| !t.is_empty()) {
            out.insert("icmp-type".into(), t.clone());
        }
    }
    if let Some(c) = rule.get("comment") {
        let c = c.trim();
        if !c.is_empty() {
            out.insert("comment".into(), c.to_string());
        }
    }
    out
}
