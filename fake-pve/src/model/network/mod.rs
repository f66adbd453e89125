//! A node's network configuration as `/etc/network/interfaces` holds it,
//! with PVE's pending copy `interfaces.new` (pve-manager `API2/Network.pm`,
//! pve-common `Network/Interfaces.pm`, `INotify.pm`).
//!
//! Every create, update or delete rewrites the whole configuration into
//! the pending copy; `GET` then lists the pending configuration with a
//! unified diff in `changes`. `PUT /network` applies it (the interfaces
//! come up, the node's bridge list follows), `DELETE /network` drops it.
//! Interfaces are kept in the form PVE reads them back from the file:
//! values are strings, flags are `1`, `cidr` is derived.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::nodes::Nodes;
use super::{Error, Result};

mod checks;
use checks::{
    check_duplicate, check_duplicate_ports, check_ipv6, check_write, derive_cidr, map_cidr,
    no_iface, normalize_vids, settings,
};

/// One interface: PVE's keys (`type`, `method`, `bridge_ports`, ...) in
/// the order they were set. A removed key's place is taken by the last
/// one (`swap_remove`).
pub type IfaceConf = indexmap::IndexMap<String, IfaceValue>;

/// A setting of an interface as PVE reads it back from the file: text,
/// a number (`priority`, a flag's 1) or a list (`families`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IfaceValue {
    /// A number or a flag.
    Int(i64),
    /// Text.
    Text(String),
    /// A list (`families`).
    List(Vec<String>),
}

impl IfaceValue {
    /// The number, if it is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Self::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The text, if it is text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// Whether an interface exists on the node (`exists`): a physical NIC
/// or a VLAN on one does; a VLAN on a bridge is `null` (unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exists {
    /// `1`.
    Yes,
    /// `null`.
    Unknown,
}

/// An interface as GET shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfaceItem {
    /// Its name (`iface`).
    pub name: String,
    /// Its settings.
    pub conf: IfaceConf,
    /// `exists`, when known.
    pub exists: Option<Exists>,
    /// On PVE 9, a physical NIC's alternative name (`altnames`).
    pub altname: Option<String>,
    /// Whether it is up (`active`).
    pub active: bool,
}

impl IfaceItem {
    /// Its `type`.
    pub fn kind(&self) -> &str {
        kind(&self.conf)
    }
}

/// The network configuration of every node, made for a node on first
/// use (from its bridges) and kept by node name.
#[derive(Debug, Clone, Default)]
pub struct Networks {
    by_node: BTreeMap<String, NodeNetwork>,
}

impl Networks {
    /// The networks of a saved world.
    pub fn new(by_node: BTreeMap<String, NodeNetwork>) -> Self {
        Self { by_node }
    }

    /// The networks by node, as a saved world keeps them.
    pub fn parts(&self) -> &BTreeMap<String, NodeNetwork> {
        &self.by_node
    }

    /// The network of `node`, if it has been made.
    pub fn get(&self, node: &str) -> Option<&NodeNetwork> {
        self.by_node.get(node)
    }

    /// The network of `node`, made by `fresh` if it has none yet.
    fn get_or_make(&mut self, node: &str, fresh: impl FnOnce() -> NodeNetwork) -> &mut NodeNetwork {
        self.by_node.entry(node.to_string()).or_insert_with(fresh)
    }
}

/// The network configuration of one node.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NodeNetwork {
    /// `/etc/network/interfaces`, by interface name.
    pub current: BTreeMap<String, IfaceConf>,
    /// `/etc/network/interfaces.new`, when there are pending changes.
    pub pending: Option<BTreeMap<String, IfaceConf>>,
    /// Physical NICs (they `exist` whether configured or not).
    pub physical: BTreeSet<String>,
    /// Interfaces that are up (`active`).
    pub up: BTreeSet<String>,
    /// Modification time of `interfaces`, epoch seconds.
    pub mtime: i64,
    /// Modification time of `interfaces.new`.
    pub pending_mtime: i64,
}

fn s(v: &str) -> IfaceValue {
    IfaceValue::Text(v.to_string())
}

fn inet() -> IfaceValue {
    IfaceValue::List(vec!["inet".into()])
}

fn text(c: &IfaceConf, k: &str) -> Option<String> {
    match c.get(k)? {
        IfaceValue::Text(s) if !s.is_empty() => Some(s.clone()),
        IfaceValue::Int(n) => Some(n.to_string()),
        _ => None,
    }
}

fn kind(c: &IfaceConf) -> &str {
    c.get("type")
        .and_then(IfaceValue::as_str)
        .unwrap_or("unknown")
}

fn is_bridge(c: &IfaceConf) -> bool {
    matches!(kind(c), "bridge" | "OVSBridge")
}

/// The ports an interface enslaves (`bridge_ports`, `ovs_ports`,
/// `slaves`, `ovs_bonds`), with the first key that names any.
fn ports(c: &IfaceConf) -> (Vec<String>, Option<&'static str>) {
    let mut out = Vec::new();
    let mut key = None;
    for k in ["bridge_ports", "ovs_ports", "slaves", "ovs_bonds"] {
        if let Some(v) = text(c, k) {
            key.get_or_insert(k);
            out.extend(split_list(&v));
        }
    }
    (out, key)
}

/// PVE's `split_list`: commas, semicolons and white space.
pub fn split_list(v: &str) -> Vec<String> {
    v.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

impl NodeNetwork {
    /// A fresh install: its NICs (`eno1` and `eno2` when `nics` is
    /// empty), `vmbr0` on the first with the node's address, and any
    /// further bridges without ports.
    pub fn fresh(ip: &str, bridges: &[String], nics: &[String], now: i64) -> Self {
        let default = ["eno1".to_string(), "eno2".to_string()];
        let nics = if nics.is_empty() { &default[..] } else { nics };
        let mut current = BTreeMap::new();
        let mut prio = 2;
        for nic in nics {
            let mut c = IfaceConf::new();
            c.insert("type".into(), s("eth"));
            c.insert("method".into(), s("manual"));
            c.insert("method6".into(), s("manual"));
            c.insert("families".into(), inet());
            c.insert("priority".into(), IfaceValue::Int(prio));
            prio += 1;
            current.insert(nic.to_string(), c);
        }
        let gw = match ip.rsplit_once('.') {
            Some((net, _)) => format!("{net}.1"),
            None => String::new(),
        };
        for (i, b) in bridges.iter().enumerate() {
            let mut c = IfaceConf::new();
            c.insert("type".into(), s("bridge"));
            c.insert("autostart".into(), IfaceValue::Int(1));
            c.insert("families".into(), inet());
            c.insert("method6".into(), s("manual"));
            c.insert("priority".into(), IfaceValue::Int(prio));
            prio += 1;
            if i == 0 {
                c.insert("method".into(), s("static"));
                c.insert("address".into(), s(ip));
                c.insert("netmask".into(), s("24"));
                c.insert("cidr".into(), s(&format!("{ip}/24")));
                if !gw.is_empty() && gw != ip {
                    c.insert("gateway".into(), s(&gw));
                }
                c.insert("bridge_ports".into(), s(&nics[0]));
            } else {
                c.insert("method".into(), s("manual"));
                c.insert("bridge_ports".into(), s(""));
            }
            c.insert("bridge_stp".into(), s("off"));
            c.insert("bridge_fd".into(), s("0"));
            current.insert(b.clone(), c);
        }
        let mut n = Self {
            current,
            pending: None,
            physical: nics.iter().cloned().collect(),
            up: BTreeSet::new(),
            mtime: now - 86_400,
            pending_mtime: now,
        };
        n.up = n.brought_up(&n.current);
        n
    }

    /// What `ifreload -a` leaves up: `auto` interfaces, the ports they
    /// enslave, and NICs that carry a link.
    fn brought_up(&self, conf: &BTreeMap<String, IfaceConf>) -> BTreeSet<String> {
        let mut up: BTreeSet<String> = conf
            .iter()
            .filter(|(_, c)| c.get("autostart").and_then(IfaceValue::as_int) == Some(1))
            .map(|(k, _)| k.clone())
            .collect();
        for name in up.clone() {
            if let Some(c) = conf.get(&name) {
                up.extend(ports(c).0);
            }
        }
        up.retain(|n| conf.contains_key(n) || self.physical.contains(n));
        up
    }

    /// The addresses (without prefix length) of the applied
    /// configuration's interfaces, IPv4 then IPv6 each.
    pub fn addresses(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in self.current.values() {
            for key in ["cidr", "address", "cidr6", "address6"] {
                if let Some(v) = text(c, key) {
                    let ip = v.split('/').next().unwrap_or(&v).to_string();
                    if !out.contains(&ip) {
                        out.push(ip);
                    }
                }
            }
        }
        out
    }

    /// The configuration GET shows: the pending one while it exists.
    pub fn visible(&self) -> &BTreeMap<String, IfaceConf> {
        self.pending.as_ref().unwrap_or(&self.current)
    }

    /// The Linux bridges of the applied configuration as the kernel has
    /// them: name, `bridge_vlan_aware`, `bridge_vids` (`2-4094` unless
    /// set) and the ports (`bridge_ports`).
    pub fn linux_bridges(&self) -> Vec<(String, bool, String, Vec<String>)> {
        self.current
            .iter()
            .filter(|(_, c)| kind(c) == "bridge")
            .map(|(k, c)| {
                let aware = text(c, "bridge_vlan_aware").is_some_and(|v| v == "1");
                let vids = text(c, "bridge_vids").unwrap_or_else(|| "2-4094".into());
                let ports = text(c, "bridge_ports")
                    .map(|p| split_list(&p))
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|p| p != "none")
                    .collect();
                (k.clone(), aware, vids, ports)
            })
            .collect()
    }

    /// Names of the bridges of the applied configuration.
    pub fn bridges(&self) -> Vec<String> {
        self.current
            .iter()
            .filter(|(_, c)| is_bridge(c))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// An interface as GET shows it (with `exists` and `active`, and on
    /// PVE 9 a physical NIC's `altnames`), or a physical NIC that the
    /// file does not mention.
    fn view(&self, name: &str, v9: bool) -> Option<IfaceItem> {
        let conf = self.visible();
        let c = match conf.get(name) {
            Some(c) => c.clone(),
            None if self.physical.contains(name) => {
                let mut c = IfaceConf::new();
                c.insert("type".into(), s("eth"));
                c.insert("method".into(), s("manual"));
                c.insert("method6".into(), s("manual"));
                c.insert("families".into(), inet());
                c
            }
            None => return None,
        };
        let mut item = IfaceItem {
            name: name.to_string(),
            exists: None,
            altname: None,
            active: self.up.contains(name),
            conf: c,
        };
        if self.physical.contains(name) {
            item.exists = Some(Exists::Yes);
            if v9 {
                item.altname = self.altname(name);
            }
        }
        if matches!(item.kind(), "vlan" | "alias") {
            let parent = text(&item.conf, "vlan-raw-device")
                .or_else(|| name.split(['.', ':']).next().map(str::to_string))
                .unwrap_or_default();
            if self.physical.contains(&parent) {
                item.exists = Some(Exists::Yes);
            } else if conf.get(&parent).is_some_and(is_bridge) {
                item.exists = Some(Exists::Unknown);
            }
        }
        Some(item)
    }

    /// The alternative name udev gives a physical NIC besides its
    /// onboard or configured name: its PCI path name (`enp1s0` for the
    /// first NIC), which PVE 9 lists in `altnames`
    /// (`API2/Network.pm`, `extract_altnames`). None for a NIC whose
    /// name already is a path name.
    fn altname(&self, name: &str) -> Option<String> {
        if name.starts_with("enp") {
            return None;
        }
        let pos = self.physical.iter().position(|n| n == name)?;
        Some(format!("enp{}s0", pos + 1))
    }

    /// The interfaces GET lists and the pending changes (the diff), for
    /// the dashboard.
    pub fn overview(&self, v9: bool) -> (Vec<IfaceItem>, Option<String>) {
        let ifaces = self
            .names()
            .iter()
            .filter_map(|n| self.view(n, v9))
            .collect();
        (ifaces, self.changes())
    }

    /// Every interface GET lists (loopback left out).
    fn names(&self) -> BTreeSet<String> {
        let mut names: BTreeSet<String> = self.visible().keys().cloned().collect();
        names.extend(self.physical.iter().cloned());
        names
    }

    /// The file text PVE writes for a configuration.
    pub fn render(conf: &BTreeMap<String, IfaceConf>) -> String {
        let mut out = String::from(
            "# network interface settings; autogenerated\n\
             # Please do NOT modify this file directly, unless you know what\n\
             # you're doing.\n\
             #\n\
             # If you want to manage parts of the network configuration manually,\n\
             # please utilize the 'source' or 'source-directory' directives to do\n\
             # so.\n\
             # PVE will preserve these directives, but will NOT read its network\n\
             # configuration from sourced files, so do not attempt to move any of\n\
             # the PVE managed interfaces into external files!\n\n\
             auto lo\niface lo inet loopback\n\n",
        );
        let type_prio = |name: &str| -> i64 {
            let root = name.split(['.', ':']).next().unwrap_or(name);
            let level = i64::try_from(name.matches(['.', ':']).count()).unwrap_or(0);
            let base = match conf.get(root).map(kind) {
                Some("eth" | "OVSPort") => 200_000,
                Some("OVSIntPort") => 300_000,
                Some("bond" | "OVSBond") => 400_000,
                Some("bridge" | "OVSBridge") => 500_000,
                Some("vlan" | "vxlan") => 600_000,
                Some("dummy") => 100_000,
                _ => 0,
            };
            base + level
        };
        let mut names: Vec<&String> = conf.keys().collect();
        names.sort_by_key(|n| {
            let p = conf
                .get(*n)
                .and_then(|c| c.get("priority"))
                .and_then(IfaceValue::as_int)
                .unwrap_or(50_000);
            (type_prio(n) + p, (*n).clone())
        });
        for name in names {
            let Some(c) = conf.get(name) else { continue };
            if c.get("autostart").and_then(IfaceValue::as_int) == Some(1) {
                out.push_str(&format!("auto {name}\n"));
            }
            let method = text(c, "method").unwrap_or_else(|| "manual".into());
            out.push_str(&format!("iface {name} inet {method}\n"));
            if let Some(cidr) = text(c, "cidr") {
                out.push_str(&format!("\taddress {cidr}\n"));
            }
            if let Some(gw) = text(c, "gateway") {
                out.push_str(&format!("\tgateway {gw}\n"));
            }
            let mut keys: Vec<(&str, &str)> = vec![
                ("bridge_ports", "bridge-ports"),
                ("bridge_stp", "bridge-stp"),
                ("bridge_fd", "bridge-fd"),
                ("bridge_vlan_aware", "bridge-vlan-aware"),
                ("bridge_vids", "bridge-vids"),
                ("slaves", "bond-slaves"),
                ("bond_miimon", "bond-miimon"),
                ("bond_mode", "bond-mode"),
                ("bond-primary", "bond-primary"),
                ("bond_xmit_hash_policy", "bond-xmit-hash-policy"),
                ("vlan-raw-device", "vlan-raw-device"),
                ("vlan-id", "vlan-id"),
                ("mtu", "mtu"),
            ];
            if kind(c) == "bridge" && text(c, "bridge_ports").is_none() {
                out.push_str("\tbridge-ports none\n");
                keys.remove(0);
            }
            for (k, file) in keys {
                let v = match c.get(k) {
                    Some(IfaceValue::Text(v)) if !v.is_empty() => v.clone(),
                    Some(IfaceValue::Int(n)) if k == "bridge_vlan_aware" => {
                        if *n == 1 {
                            "yes".into()
                        } else {
                            continue;
                        }
                    }
                    Some(IfaceValue::Int(n)) => n.to_string(),
                    _ => continue,
                };
                out.push_str(&format!("\t{file} {v}\n"));
            }
            if let Some(cidr6) = text(c, "cidr6") {
                let m6 = text(c, "method6").unwrap_or_else(|| "static".into());
                out.push_str(&format!("\niface {name} inet6 {m6}\n\taddress {cidr6}\n"));
                if let Some(gw) = text(c, "gateway6") {
                    out.push_str(&format!("\tgateway {gw}\n"));
                }
            }
            if let Some(com) = text(c, "comments") {
                for l in com.lines() {
                    out.push_str(&format!("#{l}\n"));
                }
            }
            out.push('\n');
        }
        out.push_str("\nsource /etc/network/interfaces.d/*\n");
        out
    }

    /// `diff -b -N -u interfaces interfaces.new`, or `None` when nothing
    /// is pending.
    pub fn changes(&self) -> Option<String> {
        let new = self.pending.as_ref()?;
        let a = Self::render(&self.current);
        let b = Self::render(new);
        let body = unified_diff(&a, &b);
        Some(format!(
            "--- /etc/network/interfaces\t{}\n+++ /etc/network/interfaces.new\t{}\n{body}",
            diff_time(self.mtime),
            diff_time(self.pending_mtime)
        ))
    }
}

/// A diff timestamp: `2025-05-10 12:00:00.000000000 +0000`.
fn diff_time(epoch: i64) -> String {
    let (year, month, day, h, m, sec, _) = crate::clock::civil(epoch);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{sec:02}.000000000 +0000")
}

/// The hunks of a unified diff with three lines of context.
pub fn unified_diff(a: &str, b: &str) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let (n, m) = (a.len(), b.len());
    // Longest common subsequence table, from the ends.
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // Edit script: (tag, line, old index, new index).
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', b[j]));
            j += 1;
        } else {
            ops.push(('-', a[i]));
            i += 1;
        }
    }
    const CTX: usize = 3;
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.0 != ' ')
        .map(|(k, _)| k)
        .collect();
    let mut out = String::new();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CTX);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CTX + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CTX + 1).min(ops.len());
        let old_before = ops[..start].iter().filter(|o| o.0 != '+').count();
        let new_before = ops[..start].iter().filter(|o| o.0 != '-').count();
        let old_len = ops[start..end].iter().filter(|o| o.0 != '+').count();
        let new_len = ops[start..end].iter().filter(|o| o.0 != '-').count();
        let range = |before: usize, len: usize| {
            let first = if len == 0 { before } else { before + 1 };
            if len == 1 {
                format!("{first}")
            } else {
                format!("{first},{len}")
            }
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(old_before, old_len),
            range(new_before, new_len)
        ));
        for (tag, line) in &ops[start..end] {
            out.push(*tag);
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

impl Networks {
    /// The network configuration of `node` as [`Networks::node_mut`]
    /// would make it, without keeping it.
    pub fn node_or_fresh(
        &self,
        nodes: &Nodes,
        node: &str,
        now: i64,
    ) -> std::borrow::Cow<'_, NodeNetwork> {
        match self.get(node) {
            Some(n) => std::borrow::Cow::Borrowed(n),
            None => {
                let (ip, bridges, nics) = nodes
                    .iter()
                    .find(|n| n.name == node)
                    .map(|n| (n.ip.clone(), n.bridges.clone(), n.nics.clone()))
                    .unwrap_or_default();
                std::borrow::Cow::Owned(NodeNetwork::fresh(&ip, &bridges, &nics, now))
            }
        }
    }

    /// The network configuration of `node`, made on first use from the
    /// node's bridges.
    pub fn node_mut(&mut self, nodes: &Nodes, node: &str, now: i64) -> &mut NodeNetwork {
        self.get_or_make(node, || {
            let (ip, bridges, nics) = nodes
                .iter()
                .find(|n| n.name == node)
                .map(|n| (n.ip.clone(), n.bridges.clone(), n.nics.clone()))
                .unwrap_or_default();
            NodeNetwork::fresh(&ip, &bridges, &nics, now)
        })
    }
}

impl NodeNetwork {
    /// `GET /nodes/{node}/network`: the items (bridges only if `can_see`
    /// allows them) and the pending `changes`.
    pub fn list(
        &self,
        filter: Option<&str>,
        can_see: impl Fn(&str) -> bool,
        v9: bool,
    ) -> (Vec<IfaceItem>, Option<String>) {
        let net = self;
        let mut items = Vec::new();
        for name in net.names() {
            let Some(item) = net.view(&name, v9) else {
                continue;
            };
            let t = item.kind();
            let bridge = t == "bridge" || t == "OVSBridge";
            let keep = match filter {
                None | Some("include_sdn") => true,
                Some("any_bridge" | "any_local_bridge") => bridge,
                Some(f) => f == t,
            };
            if keep && (!bridge || can_see(&name)) {
                items.push(item);
            }
        }
        (items, net.changes())
    }

    /// `GET /nodes/{node}/network/{iface}`.
    ///
    /// # Errors
    /// 400 `interface does not exist`.
    pub fn iface(&self, iface: &str, v9: bool) -> Result<IfaceItem> {
        if !self.visible().contains_key(iface) {
            return Err(no_iface());
        }
        self.view(iface, v9).ok_or_else(no_iface)
    }

    /// Writes a new pending configuration after the writer's checks.
    fn write(&mut self, conf: BTreeMap<String, IfaceConf>, now: i64) -> Result<()> {
        let net = self;
        check_write(&conf, &net.physical)?;
        net.pending = Some(conf);
        net.pending_mtime = now;
        Ok(())
    }

    /// `POST /nodes/{node}/network`.
    ///
    /// # Errors
    /// PVE's parameter and writer refusals.
    pub fn create(
        &mut self,
        iface: &str,
        params: &BTreeMap<String, Value>,
        now: i64,
    ) -> Result<()> {
        let mut conf = self.visible().clone();
        if conf.contains_key(iface) {
            return Err(Error::invalid("iface", "interface already exists"));
        }
        let mut p = settings(params);
        if text(&p, "gateway").is_some() {
            check_duplicate(&conf, iface, "gateway", "Default gateway")?;
        }
        if text(&p, "gateway6").is_some() {
            check_duplicate(&conf, iface, "gateway6", "Default ipv6 gateway")?;
        }
        check_duplicate_ports(&conf, iface, &p)?;
        map_cidr(&mut p)?;
        if let Some(a6) = text(&p, "address6") {
            check_ipv6(&a6, &text(&p, "netmask6").unwrap_or_default())?;
        }
        let mut families = Vec::new();
        if text(&p, "address").is_some() {
            families.push("inet");
        }
        if text(&p, "address6").is_some() {
            families.push("inet6");
        }
        if families.is_empty() {
            families.push("inet");
        }
        p.insert(
            "families".into(),
            IfaceValue::List(families.into_iter().map(str::to_string).collect()),
        );
        set_methods(&mut p);
        if kind(&p).starts_with("OVS") {
            return Err(Error::failed(
                "Open VSwitch is not installed (need package 'openvswitch-switch')",
            ));
        }
        normalize_vids(&mut p)?;
        if kind(&p) == "bridge" {
            let ports = text(&p, "bridge_ports")
                .map(|v| {
                    let mut l = split_list(&v);
                    l.sort();
                    l.join(" ")
                })
                .unwrap_or_default();
            p.insert("bridge_ports".into(), s(&ports));
            p.entry("bridge_stp".into()).or_insert_with(|| s("off"));
            p.entry("bridge_fd".into()).or_insert(IfaceValue::Int(0));
        }
        if let Some(c) = text(&p, "comments") {
            p.insert(
                "comments".into(),
                s(&format!("{}\n", c.trim_end_matches('\n'))),
            );
        }
        let prio = conf
            .values()
            .filter_map(|c| c.get("priority").and_then(IfaceValue::as_int))
            .max()
            .unwrap_or(1)
            + 1;
        p.insert("priority".into(), IfaceValue::Int(prio));
        derive_cidr(&mut p);
        conf.insert(iface.to_string(), p);
        self.write(conf, now)
    }

    /// `PUT /nodes/{node}/network/{iface}`.
    ///
    /// # Errors
    /// PVE's parameter and writer refusals.
    pub fn update(
        &mut self,
        iface: &str,
        params: &BTreeMap<String, Value>,
        delete: &[String],
        now: i64,
    ) -> Result<()> {
        let mut conf = self.visible().clone();
        let Some(mut cur) = conf.get(iface).cloned() else {
            return Err(no_iface());
        };
        let mut p = settings(params);
        for k in delete {
            cur.swap_remove(k);
            match k.as_str() {
                "cidr" => {
                    cur.swap_remove("address");
                    cur.swap_remove("netmask");
                }
                "cidr6" => {
                    cur.swap_remove("address6");
                    cur.swap_remove("netmask6");
                }
                _ => {}
            }
        }
        map_cidr(&mut p)?;
        if text(&p, "gateway").is_some() {
            check_duplicate(&conf, iface, "gateway", "Default gateway")?;
        }
        if text(&p, "gateway6").is_some() {
            check_duplicate(&conf, iface, "gateway6", "Default ipv6 gateway")?;
        }
        check_duplicate_ports(&conf, iface, &p)?;
        let mut families = Vec::new();
        if text(&p, "address").is_some() {
            families.push("inet");
        }
        if let Some(a6) = text(&p, "address6") {
            check_ipv6(&a6, &text(&p, "netmask6").unwrap_or_default())?;
            families.push("inet6");
        }
        if families.is_empty() {
            families.push("inet");
        }
        p.insert(
            "families".into(),
            IfaceValue::List(families.into_iter().map(str::to_string).collect()),
        );
        set_methods(&mut p);
        normalize_vids(&mut p)?;
        if let Some(ports) = text(&p, "bridge_ports") {
            let mut l = split_list(&ports);
            l.sort();
            p.insert("bridge_ports".into(), s(&l.join(" ")));
        }
        if let Some(c) = text(&p, "comments") {
            p.insert(
                "comments".into(),
                s(&format!("{}\n", c.trim_end_matches('\n'))),
            );
        }
        for (k, v) in p {
            cur.insert(k, v);
        }
        derive_cidr(&mut cur);
        conf.insert(iface.to_string(), cur);
        self.write(conf, now)
    }

    /// `DELETE /nodes/{node}/network/{iface}`.
    ///
    /// # Errors
    /// 400 `interface does not exist`; the writer's refusals.
    pub fn delete(&mut self, iface: &str, now: i64) -> Result<()> {
        let mut conf = self.visible().clone();
        if conf.remove(iface).is_none() {
            return Err(no_iface());
        }
        self.write(conf, now)
    }

    /// `DELETE /nodes/{node}/network`: drops the pending configuration.
    pub fn revert(&mut self) {
        self.pending = None;
    }
}

/// What the `srvreload` worker does first: the pending file replaces the
/// current one, `ifreload -a` brings interfaces up and down, and the
/// node's bridges are those of the new configuration.
pub fn apply(network: &mut Networks, nodes: &mut Nodes, node: &str, now: i64) {
    let net = network.node_mut(nodes, node, now);
    if let Some(new) = net.pending.take() {
        net.current = new;
        net.mtime = now;
    }
    net.up = net.brought_up(&net.current);
    let bridges = net.bridges();
    if let Some(n) = nodes.get_mut(node) {
        n.bridges = bridges;
    }
}

/// `method` and `method6`: `static` where the family has an address,
/// `manual` otherwise, as PVE's interfaces writer sets them.
fn set_methods(p: &mut IfaceConf) {
    let method = |key: &str| {
        if text(p, key).is_some() {
            "static"
        } else {
            "manual"
        }
    };
    let (m4, m6) = (method("address"), method("address6"));
    p.insert("method".into(), s(m4));
    p.insert("method6".into(), s(m6));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_are_unified() {
        let a = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let b = "a\nb\nc\nd\nX\ne\nf\ng\nh\n";
        assert_eq!(
            unified_diff(a, b),
            "@@ -2,6 +2,7 @@\n b\n c\n d\n+X\n e\n f\n g\n"
        );
        assert_eq!(unified_diff(a, a), "");
    }
}
