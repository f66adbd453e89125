//! Software-defined networking as pve-network keeps it: the section
//! files `sdn/zones.cfg`, `vnets.cfg`, `subnets.cfg`, `controllers.cfg`,
//! `ipams.cfg` and `dns.cfg` (the pending configuration, which every
//! create, update and delete writes), the running configuration
//! `sdn/.running-config` that `PUT /cluster/sdn` makes equal to the
//! pending one, the PVE IPAM's database (`sdn/pve-ipam-state.json`) and,
//! on 9.x, the global configuration lock (`sdn/.lock`) and the fabrics
//! (`sdn/fabrics.cfg`, [`fabrics`]), and on 9.2 the prefix lists and
//! route maps (`sdn/prefix-lists.cfg`, `sdn/route-maps.cfg`,
//! [`prefix_lists`], [`route_maps`]) and the private keys of the
//! WireGuard fabrics' interfaces (`priv/wg-keys.cfg`, [`wireguard`]).
//!
//! Applied VNets become bridges guests may use (see [`Sdn::vnets_on`]);
//! [`generate`] renders the interfaces and FRR files a node gets from a
//! configuration (for the dry run) and the EVPN tables FRR holds. No
//! dnsmasq configuration is generated.

pub mod bridges;
pub mod cluster;
pub mod config;
pub mod fabrics;
pub mod generate;
pub mod ipam;
pub mod net;
pub mod prefix_lists;
pub mod route_maps;
pub mod rules;
pub mod status;
pub mod wireguard;

pub use cluster::{node_bridges, zone_bridges, zone_resources};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Context, Error, Result};

/// One section of a configuration file: its options (with `type`).
pub type Obj = BTreeMap<String, Value>;
/// A configuration file: sections by id.
pub type Section = BTreeMap<String, Obj>;

/// The configuration files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum File {
    /// `zones.cfg`.
    Zones,
    /// `vnets.cfg`.
    Vnets,
    /// `subnets.cfg`.
    Subnets,
    /// `controllers.cfg`.
    Controllers,
    /// `ipams.cfg`.
    Ipams,
    /// `dns.cfg`.
    Dns,
}

impl File {
    /// The key that names a section in the API's answers.
    pub fn id_key(self) -> &'static str {
        match self {
            File::Zones => "zone",
            File::Vnets => "vnet",
            File::Subnets => "subnet",
            File::Controllers => "controller",
            File::Ipams => "ipam",
            File::Dns => "dns",
        }
    }
}

/// Which configuration a read shows (`running`, `pending` parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// The configuration files as written (with their `digest`).
    #[default]
    Current,
    /// The running configuration (as last applied).
    Running,
    /// The running configuration with what applying would change:
    /// `state` `new`/`changed`/`deleted` and the `pending` values.
    Pending,
}

impl View {
    /// `pending` wins over `running`, as in PVE's handlers.
    pub fn of(running: bool, pending: bool) -> Self {
        if pending {
            View::Pending
        } else if running {
            View::Running
        } else {
            View::Current
        }
    }
}

/// What applying would do to a section (`state` of a pending read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not in the running configuration.
    New,
    /// In both, with options added, changed or removed.
    Changed,
    /// Only in the running configuration.
    Deleted,
}

/// What a pending read shows beside a section's running options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pending {
    /// The running options the configuration no longer has, sorted.
    pub deleted: Vec<String>,
    /// The options the configuration adds or changes, with their values.
    pub set: Obj,
}

/// One section as a read shows it: its options and, in the pending
/// view, what applying would change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    /// The options (the running ones in the pending view, with `type`,
    /// and a subnet's `vnet`, from the configuration).
    pub values: Obj,
    /// Set in the pending view when applying changes the section.
    pub state: Option<State>,
    /// Set in the pending view when applying changes the section.
    pub pending: Option<Pending>,
}

impl Entry {
    fn of(values: Obj) -> Self {
        Self {
            values,
            state: None,
            pending: None,
        }
    }

    /// An option's text: its value, or in the pending view its pending
    /// value (`deleted` for a removed option) when the section has none
    /// running.
    pub fn text_or_pending(&self, k: &str) -> Option<String> {
        if let Some(v) = self.values.get(k) {
            return Some(text(v));
        }
        let p = self.pending.as_ref()?;
        if p.deleted.iter().any(|d| d == k) {
            return Some("deleted".into());
        }
        p.set.get(k).map(text)
    }
}

/// The sections of a read by id, and the digest it shows (for the
/// configuration as written).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    /// The sections by id.
    pub items: BTreeMap<String, Entry>,
    /// The digest of the file.
    pub digest: Option<String>,
}

/// One section and the digest a read shows with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The section.
    pub entry: Entry,
    /// The digest of the file.
    pub digest: Option<String>,
}

/// The running configuration (`sdn/.running-config`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Running {
    version: u64,
    /// When it was applied (epoch seconds; 0 when not known): FRR's
    /// adjacencies of the applied fabrics are up since.
    #[serde(default, skip_serializing_if = "is_zero")]
    applied: i64,
    #[serde(default)]
    zones: Section,
    #[serde(default)]
    vnets: Section,
    #[serde(default)]
    subnets: Section,
    #[serde(default)]
    controllers: Section,
    /// The fabrics as last applied (9.x).
    #[serde(default, skip_serializing_if = "fabrics::Fabrics::is_empty")]
    fabrics: fabrics::Fabrics,
    /// The prefix lists as last applied (9.2).
    #[serde(default, skip_serializing_if = "prefix_lists::PrefixLists::is_empty")]
    prefix_lists: prefix_lists::PrefixLists,
    /// The route maps as last applied (9.2).
    #[serde(default, skip_serializing_if = "route_maps::RouteMaps::is_empty")]
    route_maps: route_maps::RouteMaps,
    /// Whether an apply wrote `/etc/frr/frr.conf` (the previous or the
    /// new configuration had controllers or fabrics).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    frr_written: bool,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// The IPAM database of the `pve` plugin: zone, subnet CIDR, address,
/// what the address is held by (`gateway`, `vmid`, `mac`, `hostname`).
pub type IpamDb = BTreeMap<String, BTreeMap<String, BTreeMap<String, ipam::IpamEntry>>>;

/// The SDN state of the cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sdn {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    zones: Section,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    vnets: Section,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    subnets: Section,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    controllers: Section,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    ipams: Section,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    dns: Section,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    running: Option<Running>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    ipam_db: IpamDb,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lock: Option<String>,
    /// `sdn/fabrics.cfg` (9.x).
    #[serde(default, skip_serializing_if = "fabrics::Fabrics::is_empty")]
    fabrics: fabrics::Fabrics,
    /// `sdn/prefix-lists.cfg` (9.2).
    #[serde(default, skip_serializing_if = "prefix_lists::PrefixLists::is_empty")]
    prefix_lists: prefix_lists::PrefixLists,
    /// `sdn/route-maps.cfg` (9.2).
    #[serde(default, skip_serializing_if = "route_maps::RouteMaps::is_empty")]
    route_maps: route_maps::RouteMaps,
    /// `priv/wg-keys.cfg` (9.2): the WireGuard interfaces' private keys.
    #[serde(default, skip_serializing_if = "wireguard::PrivateKeys::is_empty")]
    wg_keys: wireguard::PrivateKeys,
}

/// A value as PVE compares and prints it in text form.
pub(crate) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "1" } else { "0" }.into(),
        Value::Null => String::new(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join("\0"),
        other => other.to_string(),
    }
}

/// PVE's `"$errmsg: $@"` around what the locked code dies with: a
/// parameter exception is printed with its `400` line and its
/// parameters; the refusal becomes a plain one.
pub(crate) fn wrapped(errmsg: &str, e: Error) -> Error {
    match e {
        Error::Invalid(map) => {
            let lines: Vec<String> = map.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            Error::failed(format!(
                "{errmsg}: 400 Parameter verification failed.\n{}",
                lines.join("\n")
            ))
        }
        other => other.map_message(|m| format!("{errmsg}: {m}")),
    }
}

/// The text of a section file as `SectionConfig::write_config` lays it
/// out, for its digest.
fn render(section: &Section) -> String {
    let mut out = String::new();
    for (id, o) in section {
        let kind = o.get("type").map(text).unwrap_or_default();
        out.push_str(&format!("{kind}: {id}\n"));
        for (k, v) in o {
            if k == "type" {
                continue;
            }
            match v {
                Value::Array(a) => {
                    for x in a {
                        out.push_str(&format!("\t{k} {}\n", text(x)));
                    }
                }
                _ => out.push_str(&format!("\t{k} {}\n", text(v))),
            }
        }
        out.push('\n');
    }
    out
}

/// A value as `encode_value` compares it: the lists PVE sorts (a
/// subnet's `dhcp-range`, a fabric node's `interfaces`) sorted, and a
/// 9.2 evpn zone's `secondary-controllers` likewise (by their members,
/// not their order).
fn encoded(k: &str, v: &Value) -> String {
    match v {
        Value::Array(a)
            if matches!(
                k,
                "nodes" | "exitnodes" | "dhcp-range" | "interfaces" | "secondary-controllers"
            ) =>
        {
            let mut items: Vec<String> = a.iter().map(text).collect();
            items.sort();
            items.join(",")
        }
        other => text(other),
    }
}

/// `PVE::Network::SDN::pending_config`: the running sections, each with
/// `state` and the `pending` values where the configuration differs.
fn pending_config(running: &Section, cfg: &Section) -> BTreeMap<String, Entry> {
    let mut out: BTreeMap<String, Entry> = BTreeMap::new();
    for (id, r) in running {
        let c = cfg.get(id);
        let e = out.entry(id.clone()).or_default();
        for (k, v) in r {
            e.values.insert(k.clone(), v.clone());
            match c.filter(|c| !c.is_empty()) {
                None => e.state = Some(State::Deleted),
                Some(c) => match c.get(k) {
                    None => {
                        pending_of(e).deleted.push(k.clone());
                        e.state = Some(State::Changed);
                    }
                    Some(cv) if encoded(k, cv) != encoded(k, v) => {
                        e.state = Some(State::Changed);
                    }
                    Some(_) => {}
                },
            }
        }
        if e.state.is_some() {
            pending_of(e);
        }
    }
    for (id, c) in cfg {
        let r = running.get(id);
        let e = out.entry(id.clone()).or_default();
        for (k, v) in c {
            let rv = r.and_then(|r| r.get(k));
            if k == "type" || k == "vnet" {
                e.values.insert(k.clone(), v.clone());
            } else if rv.is_none_or(|rv| encoded(k, rv) != encoded(k, v)) {
                pending_of(e).set.insert(k.clone(), v.clone());
            }
            if r.is_none_or(BTreeMap::is_empty) {
                e.state = Some(State::New);
            } else if rv.is_none() {
                e.state = Some(State::Changed);
            }
        }
        if e.state.is_some() {
            pending_of(e);
        }
    }
    out
}

/// The `pending` values of a pending view's section, made if missing.
fn pending_of(e: &mut Entry) -> &mut Pending {
    e.pending.get_or_insert_with(Pending::default)
}

impl Sdn {
    /// Whether nothing was ever configured (saved worlds leave it out).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    fn file(&self, f: File) -> &Section {
        match f {
            File::Zones => &self.zones,
            File::Vnets => &self.vnets,
            File::Subnets => &self.subnets,
            File::Controllers => &self.controllers,
            File::Ipams => &self.ipams,
            File::Dns => &self.dns,
        }
    }

    fn running_file(&self, f: File) -> Option<&Section> {
        let r = self.running.as_ref()?;
        match f {
            File::Zones => Some(&r.zones),
            File::Vnets => Some(&r.vnets),
            File::Subnets => Some(&r.subnets),
            File::Controllers => Some(&r.controllers),
            File::Ipams | File::Dns => None,
        }
    }

    /// The digest of a configuration file (SHA1 of its text).
    pub fn digest(&self, f: File) -> String {
        crate::model::qemu::sha1_hex(render(self.file(f)).as_bytes())
    }

    /// `config()` of a file: the `pve` IPAM is always there.
    fn current(&self, f: File) -> Section {
        let mut s = self.file(f).clone();
        if f == File::Ipams {
            s.entry("pve".into())
                .or_insert_with(|| Obj::from([("type".to_string(), Value::from("pve"))]));
        }
        s
    }

    /// The sections of a file as a read shows them, and the file's digest
    /// (only for the configuration as written).
    pub fn sections(&self, f: File, view: View) -> Listing {
        let empty = Section::new();
        let of = |s: &Section| {
            s.iter()
                .map(|(id, o)| (id.clone(), Entry::of(o.clone())))
                .collect()
        };
        match view {
            View::Current => Listing {
                items: of(&self.current(f)),
                digest: Some(self.digest(f)),
            },
            View::Running => Listing {
                items: self.running_file(f).map(of).unwrap_or_default(),
                digest: None,
            },
            View::Pending => Listing {
                items: pending_config(self.running_file(f).unwrap_or(&empty), self.file(f)),
                digest: None,
            },
        }
    }

    /// `GET` of one section.
    ///
    /// # Errors
    /// The file's `... does not exist`.
    pub fn read(&self, f: File, id: &str, view: View) -> Result<Shown> {
        let Listing { mut items, digest } = self.sections(f, view);
        let entry = items.remove(id).ok_or_else(|| not_exist(f, id))?;
        Ok(Shown { entry, digest })
    }

    /// The zone of a VNet in the configuration as written.
    ///
    /// # Errors
    /// `sdn vnet '<id>' does not exist`.
    pub fn vnet_zone(&self, vnet: &str) -> Result<String> {
        let v = self
            .vnets
            .get(vnet)
            .ok_or_else(|| not_exist(File::Vnets, vnet))?;
        Ok(v.get("zone").map(text).unwrap_or_default())
    }

    /// The running configuration's version, once applied.
    pub fn running_version(&self) -> Option<u64> {
        self.running.as_ref().map(|r| r.version)
    }

    /// `has_pending_changes`: whether applying would change anything.
    pub fn has_pending_changes(&self) -> bool {
        let empty = Section::new();
        [File::Zones, File::Vnets, File::Subnets, File::Controllers]
            .into_iter()
            .any(|f| {
                pending_config(self.running_file(f).unwrap_or(&empty), self.file(f))
                    .values()
                    .any(|e| e.pending.is_some())
            })
    }

    /// `lock_sdn_config`: with a global lock held, only its token may
    /// write.
    ///
    /// # Errors
    /// `invalid lock token provided!`.
    pub(crate) fn check_token(&self, given: Option<&str>) -> Result<()> {
        match &self.lock {
            Some(l) if given != Some(l.as_str()) => {
                Err(Error::failed("invalid lock token provided!"))
            }
            _ => Ok(()),
        }
    }

    /// `PUT /cluster/sdn` (`commit_config`): the running configuration
    /// becomes the pending one with the next version; with a token and
    /// `release-lock`, the lock goes. The private keys of WireGuard
    /// interfaces the applied fabrics no longer have go
    /// (`cleanup_private_keys`).
    ///
    /// # Errors
    /// `could not commit SDN config: invalid lock token provided!`.
    pub fn commit(&mut self, token: Option<&str>, release_lock: bool) -> Result<u64> {
        self.commit_at(token, release_lock, 0)
    }

    /// [`Self::commit`] at `now` (epoch seconds), which the running
    /// configuration keeps as the time it was applied.
    ///
    /// # Errors
    /// As [`Self::commit`].
    pub fn commit_at(&mut self, token: Option<&str>, release_lock: bool, now: i64) -> Result<u64> {
        self.check_token(token)
            .map_err(|e| wrapped("could not commit SDN config", e))?;
        let version = self.running.as_ref().map_or(1, |r| r.version + 1);
        let has_frr = |c: &Section, f: &fabrics::Fabrics| !c.is_empty() || !f.is_empty();
        let frr_written = self
            .running
            .as_ref()
            .is_some_and(|r| r.frr_written || has_frr(&r.controllers, &r.fabrics))
            || has_frr(&self.controllers, &self.fabrics);
        self.running = Some(Running {
            version,
            applied: now,
            zones: self.zones.clone(),
            vnets: self.vnets.clone(),
            subnets: self.subnets.clone(),
            controllers: self.controllers.clone(),
            fabrics: self.fabrics.clone(),
            prefix_lists: self.prefix_lists.clone(),
            route_maps: self.route_maps.clone(),
            frr_written,
        });
        self.wg_keys.cleanup(&self.fabrics.wireguard_interfaces());
        if token.is_some() && release_lock {
            self.lock = None;
        }
        Ok(version)
    }

    /// `POST /cluster/sdn/lock`: a new global lock and its token.
    ///
    /// # Errors
    /// `could not acquire lock for SDN config: ...` when a lock is held
    /// or (without `allow-pending`) changes are pending.
    pub fn lock(&mut self, allow_pending: bool, rq: &mut Context) -> Result<String> {
        const MSG: &str = "could not acquire lock for SDN config";
        self.check_token(None).map_err(|e| wrapped(MSG, e))?;
        if !allow_pending && self.has_pending_changes() {
            return Err(wrapped(
                MSG,
                Error::failed("configuration has pending changes"),
            ));
        }
        let token = uuid_v7(rq);
        self.lock = Some(token.clone());
        Ok(token)
    }

    /// `DELETE /cluster/sdn/lock`.
    ///
    /// # Errors
    /// `could not release lock: invalid lock token provided!` without
    /// the token (unless `force`).
    pub fn release_lock(&mut self, token: Option<&str>, force: bool) -> Result<()> {
        if !force {
            self.check_token(token)
                .map_err(|e| wrapped("could not release lock", e))?;
        }
        self.lock = None;
        Ok(())
    }

    /// `POST /cluster/sdn/rollback`: the configuration files become the
    /// running configuration again (empty if never applied).
    ///
    /// # Errors
    /// `could not rollback SDN configuration: invalid lock token provided!`.
    pub fn rollback(&mut self, token: Option<&str>, release_lock: bool) -> Result<()> {
        self.check_token(token)
            .map_err(|e| wrapped("could not rollback SDN configuration", e))?;
        let r = self.running.clone().unwrap_or_default();
        self.zones = r.zones;
        self.vnets = r.vnets;
        self.subnets = r.subnets;
        self.controllers = r.controllers;
        self.fabrics = r.fabrics;
        self.prefix_lists = r.prefix_lists;
        self.route_maps = r.route_maps;
        if token.is_some() && release_lock {
            self.lock = None;
        }
        Ok(())
    }

    /// The nodes regenerated their files from the running configuration
    /// at `now` (the apply's `reloadnetworkall`).
    pub fn mark_applied(&mut self, now: i64) {
        if let Some(r) = self.running.as_mut() {
            r.applied = now;
        }
    }

    /// Whether a global lock is held.
    pub fn locked(&self) -> bool {
        self.lock.is_some()
    }

    /// The applied VNets usable on `node`: those whose running zone is not
    /// restricted to other nodes, with their running zone.
    pub fn vnets_on(&self, node: &str) -> Vec<(String, Obj, Obj)> {
        let Some(r) = &self.running else {
            return Vec::new();
        };
        r.vnets
            .iter()
            .filter_map(|(id, v)| {
                let zone = r.zones.get(&v.get("zone").map(text)?)?;
                let nodes = zone.get("nodes").map(text);
                if nodes.is_some_and(|n| !n.split(',').any(|x| x == node)) {
                    return None;
                }
                Some((id.clone(), v.clone(), zone.clone()))
            })
            .collect()
    }

    /// The running zones available on `node`, with their type.
    pub fn zones_on(&self, node: &str) -> Vec<(String, String)> {
        let Some(r) = &self.running else {
            return Vec::new();
        };
        r.zones
            .iter()
            .filter(|(_, z)| {
                z.get("nodes")
                    .map(text)
                    .is_none_or(|n| n.split(',').any(|x| x == node))
            })
            .map(|(id, z)| (id.clone(), z.get("type").map(text).unwrap_or_default()))
            .collect()
    }
}

/// A section's `... does not exist` as each file's lookup says it.
pub(crate) fn not_exist(f: File, id: &str) -> Error {
    Error::failed(match f {
        File::Vnets => format!("sdn vnet '{id}' does not exist"),
        File::Subnets => format!("sdn subnet '{id}' does not exist"),
        _ => format!("sdn '{id}' does not exist"),
    })
}

/// `<zone>-<network>-<mask>` split as `sdn_subnets_config` splits it.
pub fn split_subnet_id(id: &str) -> Option<(&str, &str, &str)> {
    let mut it = id.splitn(3, '-');
    let zone = it.next()?;
    let network = it.next()?;
    let mask = it.next()?;
    Some((zone, network, mask))
}

/// A `dhcp-range` value `start-address=<ip>,end-address=<ip>`.
///
/// # Errors
/// A parameter error naming what is wrong.
pub fn parse_range(s: &str) -> Result<(String, String)> {
    let (mut start, mut end) = (None, None);
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('=') {
            Some(("start-address", v)) => start = Some(v.to_string()),
            Some(("end-address", v)) => end = Some(v.to_string()),
            Some((k, _)) => {
                return Err(Error::invalid(
                    "dhcp-range",
                    format!("invalid format - unexpected property '{k}'"),
                ));
            }
            None => {
                return Err(Error::invalid(
                    "dhcp-range",
                    "invalid format - value without key, but schema does not define a default key",
                ));
            }
        }
    }
    let start = start.ok_or_else(|| {
        Error::invalid(
            "dhcp-range",
            "invalid format - property 'start-address' is missing",
        )
    })?;
    let end = end.ok_or_else(|| {
        Error::invalid(
            "dhcp-range",
            "invalid format - property 'end-address' is missing",
        )
    })?;
    Ok((start, end))
}

/// A version 7 UUID (`UUID::generate_v7`): the time in milliseconds,
/// then random bits.
fn uuid_v7(rq: &mut Context) -> String {
    let ms = u64::try_from(rq.now_ms()).unwrap_or(0) & 0xFFFF_FFFF_FFFF;
    let (a, b) = (rq.next_u64(), rq.next_u64());
    let rand_a = a & 0x0FFF;
    let rand_b = b & 0x3FFF_FFFF_FFFF_FFFF;
    let hi = (ms << 16) | 0x7000 | rand_a;
    let lo = 0x8000_0000_0000_0000 | rand_b;
    let n = (u128::from(hi) << 64) | u128::from(lo);
    let h = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}
