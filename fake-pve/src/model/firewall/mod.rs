//! The firewall's configuration as pve-firewall keeps it: `cluster.fw`
//! (options, aliases, IP sets, rules, security groups), a `host.fw` per
//! node (options, rules) and a `<vmid>.fw` per guest (options, aliases,
//! IP sets, rules) (pve-firewall `API2/Firewall/*.pm`, `Firewall.pm`).
//!
//! Only the configuration is emulated: no packet is filtered and the
//! firewall log stays empty. SDN VNets have files of their own
//! (`sdn/firewall/<vnet>.fw`: options and `forward` rules). Each file is kept as what survives writing
//! it and reading it back (names of groups and IP sets in lower case,
//! IP set entries sorted, `/32` dropped from an alias), and what PVE
//! works out on reading it (a rule's `ipversion` and `errors`, an IP set
//! entry's `errors`) is worked out on each read.
//!
//! - [`rules`]: a rule and `verify_rule`;
//! - [`macros`]: the macros (`SSH`, `HTTPS`, ...).
//!
//! The calls on security groups, aliases and IP sets are in `groups`,
//! `aliases` and `ipsets`.

mod aliases;
mod groups;
mod ipsets;
pub mod macros;
pub mod rules;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::conf_value::ConfValue;
use super::{Error, Result};
pub use rules::{Names, Rule, RuleEnv};

const MODIFIED: &str = "detected modified configuration - file changed by other user? Try again.";

/// An alias of `[ALIASES]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alias {
    /// The name as given.
    pub name: String,
    /// The address or network (`/32` and `/128` dropped).
    pub cidr: String,
    /// The comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

impl Alias {
    /// 4 or 6.
    pub fn ipversion(&self) -> u8 {
        if self.cidr.contains(':') { 6 } else { 4 }
    }

    fn digest_into(&self, d: &mut DigestText) {
        d.field("cidr", &self.cidr);
        d.opt("comment", self.comment.as_deref());
        d.field("ipversion", self.ipversion());
        d.field("name", &self.name);
    }
}

/// A list as PVE hands it out (`copy_list_with_digest`): its entries,
/// and the digest of them all, which each entry carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digested<T> {
    /// The entries, in order.
    pub items: Vec<T>,
    /// The list's digest.
    pub digest: String,
}

/// The options of a file (`GET .../options`) and their digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FwOptions {
    /// The options set, by name.
    pub values: BTreeMap<String, ConfValue>,
    /// Their digest.
    pub digest: String,
}

/// A rule as PVE reads it: its properties (`enable` a number, the
/// `ipversion` worked out) and the errors found in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRule {
    /// The properties, in the order they are listed.
    pub fields: Vec<(String, ConfValue)>,
    /// Its errors by property (the first of each).
    pub errors: BTreeMap<String, String>,
}

impl ReadRule {
    /// A property's value.
    pub fn get(&self, key: &str) -> Option<&ConfValue> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// A section of a file as listed: an IP set or a security group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its comment.
    pub comment: Option<&'a str>,
}

/// An entry of an IP set as read, with the error found in it (an alias
/// that does not resolve).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpRead<'a> {
    /// The address, network or alias.
    pub cidr: &'a str,
    /// The entry.
    pub entry: &'a IpEntry,
    /// `cidr`'s error.
    pub error: Option<String>,
}

/// What a rule may refer to (`GET .../refs`): an IP set (`+name`) or an
/// alias, with the scope it comes from (`dc` or `guest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FwRef<'a> {
    /// `ipset` or `alias`.
    pub kind: &'static str,
    /// Its name.
    pub name: &'a str,
    /// How a rule writes it.
    pub reference: String,
    /// `dc` or `guest`.
    pub scope: &'static str,
    /// Its comment.
    pub comment: Option<&'a str>,
}

/// An entry of an IP set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpEntry {
    /// Excluded from the set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nomatch: bool,
    /// The comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// An IP set: its comment and its entries by address, network or alias.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpSet {
    /// The comment of its section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The entries, sorted as the file keeps them.
    #[serde(default)]
    pub entries: BTreeMap<String, IpEntry>,
}

/// A security group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// The comment of its section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Its rules.
    #[serde(default)]
    pub rules: Vec<Rule>,
}

/// One firewall file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FwConf {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    options: BTreeMap<String, ConfValue>,
    /// By lower-case name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    aliases: BTreeMap<String, Alias>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    ipsets: BTreeMap<String, IpSet>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rules: Vec<Rule>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    groups: BTreeMap<String, Group>,
}

impl FwConf {
    /// Whether the file would be empty (and so is not there).
    pub fn is_empty(&self) -> bool {
        self.options.is_empty()
            && self.aliases.is_empty()
            && self.ipsets.is_empty()
            && self.rules.is_empty()
            && self.groups.is_empty()
    }
}

impl Names for FwConf {
    fn alias(&self, alias: &str) -> Option<u8> {
        self.aliases.get(alias).map(Alias::ipversion)
    }

    fn ipset(&self, name: &str) -> bool {
        self.ipsets.contains_key(name)
    }
}

/// Which file: the cluster's, a node's or a guest's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    /// `cluster.fw`.
    Cluster,
    /// A node's `host.fw`.
    Host(String),
    /// A VM's `<vmid>.fw`.
    Vm(u32),
    /// A container's `<vmid>.fw`.
    Ct(u32),
    /// An SDN VNet's `sdn/firewall/<vnet>.fw` (options and rules only).
    Vnet(String),
}

/// Which list of rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleSet {
    /// The rules of a file.
    Level(Level),
    /// The rules of a security group.
    Group(String),
}

/// The firewall configuration of the whole cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Firewall {
    #[serde(default, skip_serializing_if = "FwConf::is_empty")]
    cluster: FwConf,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    hosts: BTreeMap<String, FwConf>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    guests: BTreeMap<u32, FwConf>,
    /// By VNet; a VNet's file outlives the VNet, as in PVE.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    vnets: BTreeMap<String, FwConf>,
}

/// A change of a rule (`PUT .../rules/{pos}`).
#[derive(Debug, Clone, Default)]
pub struct RuleUpdate {
    /// The rule properties given.
    pub props: BTreeMap<String, String>,
    /// `moveto`: move the rule; the rest is ignored.
    pub moveto: Option<usize>,
    /// `delete`: properties to remove.
    pub delete: Vec<String>,
    /// `digest` of the list.
    pub digest: Option<String>,
}

/// The text Perl's `Digest::SHA` hashes in `copy_list_with_digest` and
/// `copy_opject_with_digest`: a `key:value` line per field (objects and
/// missing values left out).
#[derive(Default)]
struct DigestText(String);

impl DigestText {
    fn field(&mut self, key: &str, value: impl std::fmt::Display) {
        use std::fmt::Write as _;
        let _ = writeln!(self.0, "{key}:{value}");
    }

    fn opt(&mut self, key: &str, value: Option<impl std::fmt::Display>) {
        if let Some(v) = value {
            self.field(key, v);
        }
    }

    fn finish(&self) -> String {
        super::qemu::sha1_hex(self.0.as_bytes())
    }
}

/// `copy_list_with_digest`: the entries and their digest.
fn digested<T>(items: Vec<T>, feed: impl Fn(&T, &mut DigestText)) -> Digested<T> {
    let mut text = DigestText::default();
    for item in &items {
        feed(item, &mut text);
    }
    let digest = text.finish();
    Digested { items, digest }
}

/// The digest of a section list (`comment`, then the name under `key`).
fn sections<'a>(key: &'static str, items: Vec<Section<'a>>) -> Digested<Section<'a>> {
    digested(items, |s, d| {
        d.opt("comment", s.comment);
        d.field(key, s.name);
    })
}

fn check_digest(digest: Option<&str>, current: &str) -> Result<()> {
    match digest {
        Some(d) if !d.is_empty() && d != current => Err(Error::conflict(MODIFIED)),
        _ => Ok(()),
    }
}

/// How an option's value reads back.
#[derive(Clone, Copy)]
enum OptKind {
    Bool,
    Int,
    Text,
    Lower,
}

fn option_kind(level: &Level, name: &str) -> Option<OptKind> {
    use OptKind::{Bool, Int, Lower, Text};
    match level {
        Level::Cluster => match name {
            "enable" => Some(Int),
            "ebtables" => Some(Bool),
            "policy_in" | "policy_out" | "policy_forward" | "log_ratelimit" => Some(Text),
            _ => None,
        },
        Level::Host(_) => match name {
            "enable"
            | "nosmurfs"
            | "tcpflags"
            | "ndp"
            | "log_nf_conntrack"
            | "nf_conntrack_allow_invalid"
            | "protection_synflood"
            | "nftables" => Some(Bool),
            "log_level_in"
            | "log_level_out"
            | "log_level_forward"
            | "tcp_flags_log_level"
            | "smurf_log_level" => Some(Text),
            "nf_conntrack_helpers" => Some(Lower),
            "nf_conntrack_max"
            | "nf_conntrack_tcp_timeout_established"
            | "nf_conntrack_tcp_timeout_syn_recv"
            | "protection_synflood_rate"
            | "protection_synflood_burst" => Some(Int),
            _ => None,
        },
        Level::Vm(_) | Level::Ct(_) => match name {
            "enable" | "dhcp" | "ndp" | "radv" | "macfilter" | "ipfilter" => Some(Bool),
            "log_level_in" | "log_level_out" | "policy_in" | "policy_out" => Some(Text),
            _ => None,
        },
        // `$vnet_option_properties`.
        Level::Vnet(_) => match name {
            "enable" => Some(Bool),
            "policy_forward" | "log_level_forward" => Some(Text),
            _ => None,
        },
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn ip_is_v6(ip: &str) -> bool {
    ip.contains(':')
}

/// `clean_cidr`: the host bits of a network cleared, the address
/// compressed.
pub fn clean_cidr(cidr: &str) -> String {
    let Some((ip, len)) = cidr.split_once('/') else {
        return cidr.to_string();
    };
    let Ok(bits) = len.parse::<u32>() else {
        return cidr.to_string();
    };
    if bits == 0 && len.is_empty() {
        return cidr.to_string();
    }
    if ip_is_v6(ip) {
        let Ok(a) = ip.parse::<std::net::Ipv6Addr>() else {
            return cidr.to_string();
        };
        let mask = if bits == 0 {
            0
        } else {
            u128::MAX << (128 - bits.min(128))
        };
        let n = std::net::Ipv6Addr::from(u128::from(a) & mask);
        format!("{n}/{len}")
    } else {
        let Ok(a) = ip.parse::<std::net::Ipv4Addr>() else {
            return cidr.to_string();
        };
        let mask = if bits == 0 {
            0
        } else {
            u32::MAX << (32 - bits.min(32))
        };
        let n = std::net::Ipv4Addr::from(u32::from(a) & mask);
        format!("{n}/{len}")
    }
}

/// `parse_ip_or_cidr`: `/32` (IPv4) or `/128` (IPv6) dropped.
pub fn strip_host_len(cidr: &str) -> String {
    if ip_is_v6(cidr) {
        cidr.strip_suffix("/128").unwrap_or(cidr).to_string()
    } else {
        cidr.strip_suffix("/32").unwrap_or(cidr).to_string()
    }
}

fn trimmed(c: Option<&str>) -> Option<String> {
    c.map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
}

impl Firewall {
    /// Whether nothing is configured.
    pub fn is_empty(&self) -> bool {
        self.cluster.is_empty()
            && self.hosts.is_empty()
            && self.guests.is_empty()
            && self.vnets.is_empty()
    }

    fn conf(&self, level: &Level) -> Option<&FwConf> {
        match level {
            Level::Cluster => Some(&self.cluster),
            Level::Host(n) => self.hosts.get(n),
            Level::Vm(v) | Level::Ct(v) => self.guests.get(v),
            Level::Vnet(v) => self.vnets.get(v),
        }
    }

    fn conf_mut(&mut self, level: &Level) -> &mut FwConf {
        match level {
            Level::Cluster => &mut self.cluster,
            Level::Host(n) => self.hosts.entry(n.clone()).or_default(),
            Level::Vm(v) | Level::Ct(v) => self.guests.entry(*v).or_default(),
            Level::Vnet(v) => self.vnets.entry(v.clone()).or_default(),
        }
    }

    /// An emptied file is no file.
    fn tidy(&mut self) {
        self.hosts.retain(|_, c| !c.is_empty());
        self.guests.retain(|_, c| !c.is_empty());
        self.vnets.retain(|_, c| !c.is_empty());
    }

    // ---- options -------------------------------------------------------

    fn options_map(&self, level: &Level, now: i64) -> BTreeMap<String, ConfValue> {
        let mut m = self
            .conf(level)
            .map(|c| c.options.clone())
            .unwrap_or_default();
        if *level == Level::Cluster
            && let Some(e) = m.get("enable").and_then(ConfValue::as_int)
            && e > 1
            && now - e > 60
        {
            m.insert("enable".into(), ConfValue::Int(0));
        }
        m
    }

    /// `GET .../firewall/options`: the options set, with their digest.
    pub fn options(&self, level: &Level, now: i64) -> FwOptions {
        let values = self.options_map(level, now);
        let mut text = DigestText::default();
        for (k, v) in &values {
            text.field(k, v);
        }
        FwOptions {
            digest: text.finish(),
            values,
        }
    }

    /// `PUT .../firewall/options`: `delete` first, then the values given
    /// (by name, as text). A cluster `enable` above 1 becomes the time
    /// (PVE's anti-lockout), and reads as 0 after a minute unconfirmed.
    ///
    /// # Errors
    /// A changed `digest`; `delete`: `no such option 'x'`.
    pub fn set_options(
        &mut self,
        level: &Level,
        set: &BTreeMap<String, String>,
        delete: &[&str],
        digest: Option<&str>,
        now: i64,
    ) -> Result<()> {
        check_digest(digest, &self.options(level, now).digest)?;
        let mut opts = self.options_map(level, now);
        for d in delete {
            if option_kind(level, d).is_none() {
                return Err(Error::invalid("delete", format!("no such option '{d}'")));
            }
            opts.remove(*d);
        }
        for (k, v) in set {
            let Some(kind) = option_kind(level, k) else {
                continue;
            };
            let value = match kind {
                OptKind::Bool => ConfValue::Int(i64::from(parse_bool(v).unwrap_or(false))),
                OptKind::Int => {
                    let mut n: i64 = v.parse().unwrap_or(0);
                    if *level == Level::Cluster && k == "enable" && n > 1 {
                        n = now;
                    }
                    ConfValue::Int(n)
                }
                OptKind::Text => ConfValue::Text(v.clone()),
                OptKind::Lower => {
                    if v.is_empty() {
                        // `nf_conntrack_helpers: ` does not read back.
                        opts.remove(k);
                        continue;
                    }
                    ConfValue::Text(v.to_ascii_lowercase())
                }
            };
            opts.insert(k.clone(), value);
        }
        self.conf_mut(level).options = opts;
        self.tidy();
        Ok(())
    }

    // ---- rules ---------------------------------------------------------

    fn env(set: &RuleSet) -> RuleEnv {
        match set {
            RuleSet::Group(_) => RuleEnv::Group,
            RuleSet::Level(Level::Cluster) => RuleEnv::Cluster,
            RuleSet::Level(Level::Host(_)) => RuleEnv::Host,
            RuleSet::Level(Level::Vm(_)) => RuleEnv::Vm,
            RuleSet::Level(Level::Ct(_)) => RuleEnv::Ct,
            RuleSet::Level(Level::Vnet(_)) => RuleEnv::Vnet,
        }
    }

    /// The rules of a list as stored.
    ///
    /// # Errors
    /// `no such security group 'x'`.
    fn stored_rules(&self, set: &RuleSet) -> Result<Vec<Rule>> {
        match set {
            RuleSet::Group(g) => self
                .cluster
                .groups
                .get(g)
                .map(|g| g.rules.clone())
                .ok_or_else(|| Error::not_found(format!("no such security group '{g}'"))),
            RuleSet::Level(l) => Ok(self.conf(l).map(|c| c.rules.clone()).unwrap_or_default()),
        }
    }

    /// `$cluster_conf` and `$fw_conf` of a list, as PVE has them when it
    /// reads the file (`reading`) or checks a request.
    fn names_for<'a>(
        &'a self,
        set: &RuleSet,
        reading: bool,
    ) -> (Option<&'a dyn Names>, Option<&'a dyn Names>) {
        let cluster: &dyn Names = &self.cluster;
        match set {
            RuleSet::Group(_) => {
                if reading {
                    (Some(cluster), None)
                } else {
                    (None, Some(cluster))
                }
            }
            RuleSet::Level(Level::Cluster) => {
                if reading {
                    (Some(cluster), Some(cluster))
                } else {
                    (None, Some(cluster))
                }
            }
            RuleSet::Level(l) => (
                Some(cluster),
                Some(
                    self.conf(l)
                        .map_or(&EMPTY as &dyn Names, |c| c as &dyn Names),
                ),
            ),
        }
    }

    /// The rules as PVE reads them: each with `ipversion` and `errors`
    /// worked out (the digest leaves the errors out); a rule its parser
    /// would die on is skipped.
    ///
    /// # Errors
    /// `no such security group 'x'`.
    pub fn rules(&self, set: &RuleSet) -> Result<Digested<ReadRule>> {
        let env = Self::env(set);
        let (c, l) = self.names_for(set, true);
        let mut list = Vec::new();
        for mut r in self.stored_rules(set)? {
            let Ok(v) = rules::verify(&mut r, env, c, l, false) else {
                continue;
            };
            let mut fields: Vec<(String, ConfValue)> = r
                .into_iter()
                .map(|(k, v)| {
                    let v = if k == "enable" {
                        ConfValue::Int(v.parse::<i64>().unwrap_or(1))
                    } else {
                        ConfValue::Text(v)
                    };
                    (k, v)
                })
                .collect();
            if let Some(ipv) = v.ipversion {
                fields.push(("ipversion".into(), ConfValue::Int(i64::from(ipv))));
            }
            list.push(ReadRule {
                fields,
                errors: v.errors,
            });
        }
        Ok(digested(list, |r, d| {
            for (k, v) in &r.fields {
                d.field(k, v);
            }
        }))
    }

    /// `GET .../rules/{pos}`: the rule and the list's digest.
    ///
    /// # Errors
    /// `no rule at position N`, `no such security group 'x'`.
    pub fn rule(&self, set: &RuleSet, pos: usize) -> Result<(ReadRule, String)> {
        let Digested { items, digest } = self.rules(set)?;
        items
            .into_iter()
            .nth(pos)
            .map(|r| (r, digest))
            .ok_or_else(|| Error::not_found(format!("no rule at position {pos}")))
    }

    fn rules_digest(&self, set: &RuleSet) -> Result<String> {
        Ok(self.rules(set)?.digest)
    }

    fn save_rules(&mut self, set: &RuleSet, list: Vec<Rule>) {
        let allow_iface = !matches!(set, RuleSet::Group(_));
        let list: Vec<Rule> = list
            .iter()
            .map(|r| rules::round_trip(r, allow_iface))
            .collect();
        match set {
            RuleSet::Group(g) => {
                if let Some(group) = self.cluster.groups.get_mut(g) {
                    group.rules = list;
                }
            }
            RuleSet::Level(l) => self.conf_mut(l).rules = list,
        }
        self.tidy();
    }

    /// `POST .../rules`: a new rule, checked, at the top of the list (PVE
    /// ignores `pos` here); `enable` is 0 unless given.
    ///
    /// # Errors
    /// The first error of `verify_rule`; `no such security group 'x'`.
    pub fn create_rule(&mut self, set: &RuleSet, props: &BTreeMap<String, String>) -> Result<()> {
        let mut list = self.stored_rules(set)?;
        let mut rule = Rule::new();
        rules::copy_rule_data(&mut rule, props);
        let (c, l) = self.names_for(set, false);
        rules::verify(&mut rule, Self::env(set), c, l, true)?;
        if !props.contains_key("enable") {
            rule.insert("enable".into(), "0".into());
        }
        list.insert(0, rule);
        self.save_rules(set, list);
        Ok(())
    }

    /// `PUT .../rules/{pos}`: moves the rule (`moveto`), or changes it.
    ///
    /// # Errors
    /// A changed `digest`, `no rule at position N`, a bad `delete`, the
    /// first error of `verify_rule`.
    pub fn update_rule(&mut self, set: &RuleSet, pos: usize, up: &RuleUpdate) -> Result<()> {
        let mut list = self.stored_rules(set)?;
        check_digest(up.digest.as_deref(), &self.rules_digest(set)?)?;
        if pos >= list.len() {
            return Err(Error::not_found(format!("no rule at position {pos}")));
        }
        match up.moveto {
            Some(to) if to != pos => {
                let rule = list.remove(pos);
                // PVE puts it before the rule that was at `moveto`.
                let at = if to > pos { to - 1 } else { to };
                if to > list.len() {
                    list.push(rule);
                } else {
                    list.insert(at.min(list.len()), rule);
                }
            }
            _ => {
                let mut rule = list[pos].clone();
                rules::copy_rule_data(&mut rule, &up.props);
                let del: Vec<&str> = up.delete.iter().map(String::as_str).collect();
                rules::delete_rule_properties(&mut rule, &del)?;
                let (c, l) = self.names_for(set, false);
                rules::verify(&mut rule, Self::env(set), c, l, true)?;
                list[pos] = rule;
            }
        }
        self.save_rules(set, list);
        Ok(())
    }

    /// `DELETE .../rules/{pos}`.
    ///
    /// # Errors
    /// A changed `digest`, `no rule at position N`.
    pub fn delete_rule(&mut self, set: &RuleSet, pos: usize, digest: Option<&str>) -> Result<()> {
        let mut list = self.stored_rules(set)?;
        check_digest(digest, &self.rules_digest(set)?)?;
        if pos >= list.len() {
            return Err(Error::not_found(format!("no rule at position {pos}")));
        }
        list.remove(pos);
        self.save_rules(set, list);
        Ok(())
    }

    // ---- references, macros, guests ------------------------------------

    fn collect_refs<'a>(
        conf: Option<&'a FwConf>,
        kind: Option<&str>,
        scope: &'static str,
    ) -> Vec<FwRef<'a>> {
        let mut out = Vec::new();
        let Some(conf) = conf else {
            return out;
        };
        if kind.is_none_or(|k| k == "ipset") {
            for (name, s) in &conf.ipsets {
                out.push(FwRef {
                    kind: "ipset",
                    name,
                    reference: format!("+{name}"),
                    scope,
                    comment: s.comment.as_deref(),
                });
            }
        }
        if kind.is_none_or(|k| k == "alias") {
            for (name, a) in &conf.aliases {
                out.push(FwRef {
                    kind: "alias",
                    name,
                    reference: name.clone(),
                    scope,
                    comment: a.comment.as_deref(),
                });
            }
        }
        out
    }

    /// `GET .../refs`: the IP sets and aliases a rule of `level` may use
    /// (the cluster's with scope `dc`, a guest's own with `guest`). SDN
    /// IP sets are not emulated.
    pub fn refs(&self, level: &Level, kind: Option<&str>) -> Vec<FwRef<'_>> {
        let mut out = Self::collect_refs(Some(&self.cluster), kind, "dc");
        if matches!(level, Level::Vm(_) | Level::Ct(_)) {
            out.extend(Self::collect_refs(self.conf(level), kind, "guest"));
        }
        out
    }

    /// `GET /cluster/firewall/macros`, sorted by name.
    pub fn macros() -> &'static [macros::Macro] {
        macros::MACROS
    }

    /// `remove_vmfw_conf`: a destroyed guest's file goes.
    pub fn remove_guest(&mut self, vmid: u32) {
        self.guests.remove(&vmid);
    }

    /// `clone_vmfw_conf`: a clone gets a copy of its source's file.
    pub fn clone_guest(&mut self, vmid: u32, newid: u32) {
        self.guests.remove(&newid);
        if let Some(c) = self.guests.get(&vmid).cloned() {
            self.guests.insert(newid, c);
        }
    }

    /// Whether a guest has a firewall file.
    pub fn has_guest(&self, vmid: u32) -> bool {
        self.guests.contains_key(&vmid)
    }
}

/// An empty file.
static EMPTY: FwConf = FwConf {
    options: BTreeMap::new(),
    aliases: BTreeMap::new(),
    ipsets: BTreeMap::new(),
    rules: Vec::new(),
    groups: BTreeMap::new(),
};
