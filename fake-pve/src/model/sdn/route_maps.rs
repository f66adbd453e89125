//! The SDN route maps of PVE 9.2 (`sdn/route-maps.cfg`), as pve-network's
//! `API2/Network/SDN/RouteMaps*.pm` hand them to the Rust crate
//! proxmox-ve-config (`sdn/route_map.rs`): FRR route maps, kept entry by
//! entry (section `<route map>_<order>`). An entry permits or denies, has
//! `match` conditions and `set` actions (a key and, for most keys, a
//! value of the key's kind), may `call` another route map and may say
//! how evaluation goes on (`exit-action`). A route map is the set of its
//! entries: it exists while one does.
//!
//! Changes are pending until `PUT /cluster/sdn`, as for zones and VNets.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::fabrics::{Params, check_digest, list, opt};
use super::{Entry, Listing, Obj, Sdn, Section, View, pending_config, wrapped};
use crate::model::{Error, Result};

/// One route map entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteMapEntry {
    route_map: String,
    order: u16,
    action: String,
    /// Property strings `key=<key>[,value=<value>]`.
    #[serde(default)]
    set: Vec<String>,
    #[serde(default)]
    matches: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    call: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_action: Option<String>,
}

impl RouteMapEntry {
    /// The entry as `api::RouteMapEntry` serializes it: `route-map-id`,
    /// `order`, `action`, `set`, `match` (both always there), `call` and
    /// `exit-action` when set.
    fn record(&self) -> Obj {
        let mut m = Obj::new();
        m.insert("route-map-id".into(), json!(self.route_map));
        m.insert("order".into(), json!(self.order));
        m.insert("action".into(), json!(self.action));
        m.insert("set".into(), json!(self.set));
        m.insert("match".into(), json!(self.matches));
        if let Some(c) = &self.call {
            m.insert("call".into(), json!(c));
        }
        if let Some(x) = &self.exit_action {
            m.insert("exit-action".into(), json!(x));
        }
        m
    }
}

/// `sdn/route-maps.cfg`: the entries by section ID `<route map>_<order>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteMaps {
    entries: BTreeMap<String, RouteMapEntry>,
}

/// The section ID of an entry.
fn section_id(route_map: &str, order: u16) -> String {
    format!("{route_map}_{order}")
}

/// A `key=...[,value=...]` property string's key and value.
fn key_value(s: &str) -> (String, Option<String>) {
    let (mut key, mut value) = (String::new(), None);
    for part in s.split(',').filter(|x| !x.is_empty()) {
        match part.split_once('=') {
            Some(("key", k)) => key = k.to_string(),
            Some(("value", v)) => value = Some(v.to_string()),
            _ => key = part.to_string(),
        }
    }
    (key, value)
}

fn bad_value(key: &str, v: &str, what: &str) -> Error {
    Error::failed(format!(
        "invalid value '{v}' for key '{key}': expected {what}"
    ))
}

/// A `u32` as `proxmox_serde::perl::deserialize_u32` takes it.
fn unsigned(key: &str, v: &str) -> Result<String> {
    v.parse::<u32>()
        .map(|n| n.to_string())
        .map_err(|_| bad_value(key, v, "an unsigned 32 bit integer"))
}

/// A `ModifyNumber`: a number, or `+`/`-` and a number.
fn modify_number(key: &str, v: &str) -> Result<String> {
    let (sign, n) = match v.strip_prefix('+') {
        Some(n) => ("+", n),
        None => v.strip_prefix('-').map_or(("", v), |n| ("-", n)),
    };
    let n: u32 = n
        .parse()
        .map_err(|_| bad_value(key, v, "a number, optionally with '+' or '-'"))?;
    Ok(format!("{sign}{n}"))
}

/// A tag: `untagged` or a number.
fn tag(key: &str, v: &str) -> Result<String> {
    if v == "untagged" {
        return Ok(v.into());
    }
    unsigned(key, v).map_err(|_| bad_value(key, v, "'untagged' or a number"))
}

fn ip4(key: &str, v: &str) -> Result<String> {
    v.parse::<Ipv4Addr>()
        .map(|a| a.to_string())
        .map_err(|_| bad_value(key, v, "an IPv4 address"))
}

fn ip6(key: &str, v: &str) -> Result<String> {
    v.parse::<Ipv6Addr>()
        .map(|a| a.to_string())
        .map_err(|_| bad_value(key, v, "an IPv6 address"))
}

/// A prefix list's ID (the crate's `PrefixListId`).
fn prefix_list_id(key: &str, v: &str) -> Result<String> {
    let mut chars = v.chars();
    let good = v.len() <= 32
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && v.chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || v.len() < 32);
    if good {
        Ok(v.into())
    } else {
        Err(bad_value(key, v, "a prefix list ID"))
    }
}

/// The canonical property string of a `set` action, its value checked
/// against the key's kind (`SetAction`).
fn set_action(s: &str) -> Result<String> {
    let (key, value) = key_value(s);
    let v = value.as_deref();
    let checked = match (key.as_str(), v) {
        (
            "ip-next-hop-peer-address"
            | "ip-next-hop-unchanged"
            | "ip6-next-hop-peer-address"
            | "ip6-next-hop-prefer-global",
            None,
        ) => None,
        (
            "ip-next-hop-peer-address"
            | "ip-next-hop-unchanged"
            | "ip6-next-hop-peer-address"
            | "ip6-next-hop-prefer-global",
            Some(_),
        ) => {
            return Err(Error::failed(format!("key '{key}' takes no value")));
        }
        (_, None) => return Err(Error::failed(format!("key '{key}' requires a value"))),
        ("ip-next-hop", Some(v)) => Some(ip4(&key, v)?),
        ("ip6-next-hop", Some(v)) => Some(ip6(&key, v)?),
        ("weight", Some(v)) => Some(unsigned(&key, v)?),
        ("tag", Some(v)) => Some(tag(&key, v)?),
        ("metric", Some(v)) => Some(match v {
            "rtt" | "+rtt" | "-rtt" | "igp" | "aigp" => v.to_string(),
            _ => modify_number(&key, v)?,
        }),
        ("local-preference", Some(v)) => Some(modify_number(&key, v)?),
        ("src", Some(v)) => Some(
            v.parse::<IpAddr>()
                .map(|a| a.to_string())
                .map_err(|_| bad_value(&key, v, "an IP address"))?,
        ),
        (other, _) => return Err(Error::failed(format!("unknown set key '{other}'"))),
    };
    Ok(property_string(&key, checked.as_deref()))
}

/// The canonical property string of a `match` condition (`MatchAction`):
/// every key needs a value.
fn match_action(s: &str) -> Result<String> {
    let (key, value) = key_value(s);
    let Some(v) = value.as_deref() else {
        return Err(Error::failed(format!("key '{key}' requires a value")));
    };
    let checked = match key.as_str() {
        "route-type" => match v {
            "ead" | "macip" | "multicast" | "es" | "prefix" => v.to_string(),
            _ => {
                return Err(bad_value(
                    &key,
                    v,
                    "one of ead, macip, multicast, es, prefix",
                ));
            }
        },
        "vni" => v
            .parse::<u32>()
            .ok()
            .filter(|n| *n <= 16_777_215)
            .map(|n| n.to_string())
            .ok_or_else(|| bad_value(&key, v, "a VNI (0 - 16777215)"))?,
        "ip-address-prefix-list"
        | "ip6-address-prefix-list"
        | "ip-next-hop-prefix-list"
        | "ip6-next-hop-prefix-list" => prefix_list_id(&key, v)?,
        "ip-next-hop-address" => ip4(&key, v)?,
        "ip6-next-hop-address" => ip6(&key, v)?,
        "tag" => tag(&key, v)?,
        "metric" | "local-preference" => unsigned(&key, v)?,
        "peer" => v.to_string(),
        other => return Err(Error::failed(format!("unknown match key '{other}'"))),
    };
    Ok(property_string(&key, Some(&checked)))
}

/// The canonical property string of an `exit-action` (`ExitAction`):
/// `on-match-next` alone, `on-match-goto` and `continue` with an order.
fn exit_action(s: &str) -> Result<String> {
    let (key, value) = key_value(s);
    match (key.as_str(), value.as_deref()) {
        ("on-match-next", None) => Ok(property_string(&key, None)),
        ("on-match-next", Some(_)) => Err(Error::failed(format!("key '{key}' takes no value"))),
        ("on-match-goto" | "continue", Some(v)) => {
            let n: u16 = v
                .parse()
                .map_err(|_| bad_value(&key, v, "an unsigned 16 bit integer"))?;
            Ok(property_string(&key, Some(&n.to_string())))
        }
        ("on-match-goto" | "continue", None) => {
            Err(Error::failed(format!("key '{key}' requires a value")))
        }
        (other, _) => Err(Error::failed(format!("unknown exit action '{other}'"))),
    }
}

fn property_string(key: &str, value: Option<&str>) -> String {
    match value {
        Some(v) => format!("key={key},value={v}"),
        None => format!("key={key}"),
    }
}

fn order_of(p: &Params) -> Result<u16> {
    let v = opt(p, "order").unwrap_or_default();
    v.parse().map_err(|_| {
        Error::invalid(
            "order",
            format!("value must have a maximum value of 65535 - got '{v}'"),
        )
    })
}

impl RouteMaps {
    /// Whether no route map entry is configured.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The file as the section config writes it.
    fn render(&self) -> String {
        let mut out = String::new();
        for (id, e) in &self.entries {
            out.push_str(&format!("route-map-entry: {id}\n\taction {}\n", e.action));
            for s in &e.set {
                out.push_str(&format!("\tset {s}\n"));
            }
            for m in &e.matches {
                out.push_str(&format!("\tmatch {m}\n"));
            }
            if let Some(c) = &e.call {
                out.push_str(&format!("\tcall {c}\n"));
            }
            if let Some(x) = &e.exit_action {
                out.push_str(&format!("\texit-action {x}\n"));
            }
            out.push('\n');
        }
        out
    }

    /// `digest`: the SHA-256 of the file's text.
    pub fn digest(&self) -> String {
        hex::encode(Sha256::digest(self.render().as_bytes()))
    }

    /// The entries (of one route map, or all) by section ID.
    fn sections(&self, route_map: Option<&str>) -> Section {
        self.entries
            .iter()
            .filter(|(_, e)| route_map.is_none_or(|r| e.route_map == r))
            .map(|(id, e)| (id.clone(), e.record()))
            .collect()
    }

    /// The route map and order of an entry whose match names the prefix
    /// list `id` (`PrefixLists::check_references`).
    pub fn prefix_list_user(&self, id: &str) -> Option<(String, u16)> {
        self.entries
            .values()
            .find(|e| {
                e.matches.iter().any(|m| {
                    let (k, v) = key_value(m);
                    k.ends_with("-prefix-list") && v.as_deref() == Some(id)
                })
            })
            .map(|e| (e.route_map.clone(), e.order))
    }
}

impl Sdn {
    /// Whether a route map has an entry in the configuration as written
    /// (`list_route_map`, which a 9.2 controller's `route-map-in` and
    /// `route-map-out` are checked with).
    pub(super) fn route_map_exists(&self, id: &str) -> bool {
        self.route_maps.entries.values().any(|e| e.route_map == id)
    }

    /// `RouteMaps::check_references`: the controller whose `route-map-in`
    /// or `route-map-out` names the route map `id`.
    fn route_map_user(&self, id: &str) -> Option<String> {
        self.controllers
            .iter()
            .find(|(_, c)| {
                ["route-map-in", "route-map-out"]
                    .iter()
                    .any(|k| c.get(*k).map(super::text).as_deref() == Some(id))
            })
            .map(|(cid, _)| cid.clone())
    }

    fn running_route_maps(&self) -> RouteMaps {
        self.running
            .as_ref()
            .map(|r| r.route_maps.clone())
            .unwrap_or_default()
    }

    /// `GET /cluster/sdn/route-maps`: the IDs of the route maps (those
    /// with at least one entry), sorted.
    pub fn route_map_ids(&self, running: bool) -> Vec<String> {
        let maps = if running {
            self.running_route_maps()
        } else {
            self.route_maps.clone()
        };
        let ids: BTreeSet<String> = maps.entries.values().map(|e| e.route_map.clone()).collect();
        ids.into_iter().collect()
    }

    /// `GET /cluster/sdn/route-maps/entries[/{route-map-id}]`: the
    /// entries (of one route map, or all) by section ID in a view, with
    /// the file's digest but for the running view.
    pub fn route_map_entries(&self, route_map: Option<&str>, view: View) -> Listing {
        let of = |s: Section| s.into_iter().map(|(id, o)| (id, Entry::of(o))).collect();
        match view {
            View::Current => Listing {
                items: of(self.route_maps.sections(route_map)),
                digest: Some(self.route_maps.digest()),
            },
            View::Running => Listing {
                items: of(self.running_route_maps().sections(route_map)),
                digest: None,
            },
            View::Pending => Listing {
                items: pending_config(
                    &self.running_route_maps().sections(route_map),
                    &self.route_maps.sections(route_map),
                ),
                digest: Some(self.route_maps.digest()),
            },
        }
    }

    /// `GET /cluster/sdn/route-maps/entries/{route-map-id}/entry/{order}`.
    ///
    /// # Errors
    /// `route-map-id: <id>_<order> doesn't exist`.
    pub fn route_map_entry(&self, route_map: &str, order: u16) -> Result<Obj> {
        let id = section_id(route_map, order);
        self.route_maps
            .entries
            .get(&id)
            .map(RouteMapEntry::record)
            .ok_or_else(|| Error::invalid("route-map-id", format!("{id} doesn't exist")))
    }

    /// Runs a change of `route-maps.cfg` as PVE does: under the global
    /// lock's token, the digest checked, refusals after `errmsg`.
    fn route_maps_write(
        &mut self,
        errmsg: &str,
        p: &Params,
        change: impl FnOnce(&mut RouteMaps) -> Result<()>,
    ) -> Result<()> {
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(opt(p, "lock-token").as_deref())?;
            check_digest(&me.route_maps.digest(), p)?;
            let mut next = me.route_maps.clone();
            change(&mut next)?;
            me.route_maps = next;
            Ok(())
        };
        run(self).map_err(|e| wrapped(errmsg, e))
    }

    /// `POST /cluster/sdn/route-maps/entries`.
    ///
    /// # Errors
    /// `creating route map entry failed: ...`: an existing entry, a
    /// value that does not fit its key.
    pub fn create_route_map_entry(&mut self, p: &Params) -> Result<()> {
        self.route_maps_write("creating route map entry failed", p, |c| {
            let route_map = opt(p, "route-map-id").unwrap_or_default();
            let order = order_of(p)?;
            let entry = RouteMapEntry {
                route_map: route_map.clone(),
                order,
                action: opt(p, "action").ok_or_else(|| Error::failed("missing field `action`"))?,
                set: list(p, "set")
                    .iter()
                    .map(|s| set_action(s))
                    .collect::<Result<_>>()?,
                matches: list(p, "match")
                    .iter()
                    .map(|s| match_action(s))
                    .collect::<Result<_>>()?,
                call: opt(p, "call"),
                exit_action: opt(p, "exit-action").map(|x| exit_action(&x)).transpose()?,
            };
            let id = section_id(&route_map, order);
            if c.entries.contains_key(&id) {
                return Err(Error::failed(format!(
                    "route map entry already exists in configuration: {id}"
                )));
            }
            c.entries.insert(id, entry);
            Ok(())
        })
    }

    /// `PUT /cluster/sdn/route-maps/entries/{route-map-id}/entry/{order}`:
    /// what is given replaces the entry's, `delete` removes `set`,
    /// `match`, `call`, `exit-action`. Nothing to change is no error,
    /// even for an unknown entry.
    ///
    /// # Errors
    /// `updating route map entry failed: ...`.
    pub fn update_route_map_entry(&mut self, p: &Params) -> Result<()> {
        self.route_maps_write("updating route map entry failed", p, |c| {
            let id = section_id(&opt(p, "route-map-id").unwrap_or_default(), order_of(p)?);
            let set = p
                .contains_key("set")
                .then(|| list(p, "set").iter().map(|s| set_action(s)).collect())
                .transpose()?;
            let matches = p
                .contains_key("match")
                .then(|| list(p, "match").iter().map(|s| match_action(s)).collect())
                .transpose()?;
            let exit = opt(p, "exit-action").map(|x| exit_action(&x)).transpose()?;
            let (action, call, delete) = (opt(p, "action"), opt(p, "call"), list(p, "delete"));
            let nothing = action.is_none()
                && set.is_none()
                && matches.is_none()
                && exit.is_none()
                && call.is_none()
                && delete.is_empty();
            if nothing {
                return Ok(());
            }
            let e = c
                .entries
                .get_mut(&id)
                .ok_or_else(|| Error::failed(format!("Could not find route map with id: {id}")))?;
            if let Some(a) = action {
                e.action = a;
            }
            if let Some(m) = matches {
                e.matches = m;
            }
            if let Some(s) = set {
                e.set = s;
            }
            if exit.is_some() {
                e.exit_action = exit;
            }
            if call.is_some() {
                e.call = call;
            }
            for d in delete {
                match d.as_str() {
                    "set" => e.set.clear(),
                    "match" => e.matches.clear(),
                    "exit-action" => e.exit_action = None,
                    "call" => e.call = None,
                    _ => {}
                }
            }
            Ok(())
        })
    }

    /// `DELETE /cluster/sdn/route-maps/entries/{route-map-id}/entry/{order}`:
    /// the last entry of a route map a controller names stays.
    ///
    /// # Errors
    /// `deleting route map entry failed: could not find route map entry
    /// with id: <id>_<order>`, `... route map <id> still referenced by
    /// controller <controller>`.
    pub fn delete_route_map_entry(&mut self, p: &Params) -> Result<()> {
        let route_map = opt(p, "route-map-id").unwrap_or_default();
        let user = self.route_map_user(&route_map);
        self.route_maps_write("deleting route map entry failed", p, |c| {
            let id = section_id(&route_map, order_of(p)?);
            c.entries.remove(&id).ok_or_else(|| {
                Error::failed(format!("could not find route map entry with id: {id}"))
            })?;
            let remaining = c.entries.values().any(|e| e.route_map == route_map);
            match user {
                Some(controller) if !remaining => Err(Error::failed(format!(
                    "route map {route_map} still referenced by controller {controller}"
                ))),
                _ => Ok(()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use serde_json::Value;

    fn params(pairs: &[(&str, &str)]) -> Params {
        let mut p = Params::new();
        for (k, v) in pairs {
            match p.get_mut(*k) {
                Some(Value::Array(a)) => a.push(json!(v)),
                Some(old) => *old = json!([old.clone(), v]),
                None => {
                    p.insert(k.to_string(), json!(v));
                }
            }
        }
        p
    }

    fn entry(extra: &[(&str, &str)]) -> Params {
        let mut p = vec![
            ("route-map-id", "rm1"),
            ("order", "10"),
            ("action", "permit"),
        ];
        p.extend_from_slice(extra);
        params(&p)
    }

    #[rstest]
    #[case::tag(("set", "key=tag,value=untagged"), "key=tag,value=untagged")]
    #[case::metric(("set", "key=metric,value=+rtt"), "key=metric,value=+rtt")]
    #[case::local_pref(("set", "key=local-preference,value=-12"), "key=local-preference,value=-12")]
    #[case::no_value(("set", "key=ip-next-hop-unchanged"), "key=ip-next-hop-unchanged")]
    #[case::v6(("set", "key=ip6-next-hop,value=FD00:0::1"), "key=ip6-next-hop,value=fd00::1")]
    #[case::route_type(("match", "key=route-type,value=macip"), "key=route-type,value=macip")]
    #[case::vni(("match", "key=vni,value=4096"), "key=vni,value=4096")]
    #[case::prefix_list(("match", "key=ip6-address-prefix-list,value=pl_6"), "key=ip6-address-prefix-list,value=pl_6")]
    fn values_fit_their_key(#[case] given: (&str, &str), #[case] stored: &str) {
        let mut s = Sdn::default();
        s.create_route_map_entry(&entry(&[given])).expect("created");
        let e = s.route_map_entry("rm1", 10).expect("there");
        let key = if given.0 == "set" { "set" } else { "match" };
        assert_eq!(e[key], json!([stored]));
    }

    #[rstest]
    #[case::v4_next_hop(("set", "key=ip-next-hop,value=fd00::1"), "invalid value 'fd00::1' for key 'ip-next-hop': expected an IPv4 address")]
    #[case::weight(("set", "key=weight,value=heavy"), "invalid value 'heavy' for key 'weight'")]
    #[case::needs_value(("set", "key=tag"), "key 'tag' requires a value")]
    #[case::takes_none(("set", "key=ip-next-hop-unchanged,value=1"), "key 'ip-next-hop-unchanged' takes no value")]
    #[case::route_type(("match", "key=route-type,value=ospf"), "invalid value 'ospf' for key 'route-type'")]
    #[case::vni(("match", "key=vni,value=16777216"), "invalid value '16777216' for key 'vni'")]
    #[case::goto(("exit-action", "key=on-match-goto"), "key 'on-match-goto' requires a value")]
    fn values_that_do_not_fit_are_refused(#[case] given: (&str, &str), #[case] msg: &str) {
        let mut s = Sdn::default();
        let e = s
            .create_route_map_entry(&entry(&[given]))
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains(&format!("creating route map entry failed: {msg}")),
            "{e}"
        );
        assert!(s.route_maps.is_empty());
    }

    #[test]
    fn an_entry_is_made_once_updated_and_deleted() {
        let mut s = Sdn::default();
        s.create_route_map_entry(&entry(&[("set", "key=weight,value=7"), ("call", "other")]))
            .expect("created");
        let e = s.create_route_map_entry(&entry(&[])).expect_err("twice");
        assert!(
            e.to_string()
                .contains("route map entry already exists in configuration: rm1_10")
        );
        let upd = params(&[
            ("route-map-id", "rm1"),
            ("order", "10"),
            ("action", "deny"),
            ("exit-action", "key=continue,value=20"),
            ("delete", "set"),
            ("delete", "call"),
        ]);
        s.update_route_map_entry(&upd).expect("updated");
        let got = s.route_map_entry("rm1", 10).expect("there");
        assert_eq!(got["action"], json!("deny"));
        assert_eq!(got["set"], json!([]));
        assert_eq!(got["exit-action"], json!("key=continue,value=20"));
        assert!(!got.contains_key("call"));
        let none = params(&[("route-map-id", "rm2"), ("order", "1")]);
        s.update_route_map_entry(&none)
            .expect("nothing to do is no error");
        let unknown = params(&[("route-map-id", "rm2"), ("order", "1"), ("action", "deny")]);
        let e = s.update_route_map_entry(&unknown).expect_err("unknown");
        assert!(
            e.to_string()
                .contains("Could not find route map with id: rm2_1")
        );
        s.delete_route_map_entry(&params(&[("route-map-id", "rm1"), ("order", "10")]))
            .expect("deleted");
        let e = s
            .delete_route_map_entry(&params(&[("route-map-id", "rm1"), ("order", "10")]))
            .expect_err("gone");
        assert!(
            e.to_string()
                .contains("could not find route map entry with id: rm1_10")
        );
        let e = s.route_map_entry("rm1", 10).expect_err("gone");
        assert!(format!("{e:?}").contains("rm1_10 doesn't exist"), "{e:?}");
    }

    #[test]
    fn route_maps_are_their_entries_and_pending_until_applied() {
        let mut s = Sdn::default();
        for (rm, order) in [("b", "5"), ("a", "20"), ("a", "3")] {
            s.create_route_map_entry(&params(&[
                ("route-map-id", rm),
                ("order", order),
                ("action", "permit"),
            ]))
            .expect("created");
        }
        assert_eq!(s.route_map_ids(false), ["a", "b"]);
        assert!(s.route_map_ids(true).is_empty());
        let listing = s.route_map_entries(None, View::Current);
        let all: Vec<&String> = listing.items.keys().collect();
        assert_eq!(all, ["a_20", "a_3", "b_5"]);
        let a = s.route_map_entries(Some("a"), View::Pending);
        assert_eq!(a.items.len(), 2);
        assert!(
            a.items
                .values()
                .all(|e| e.state == Some(super::super::State::New))
        );
        s.commit(None, false).expect("applied");
        assert_eq!(s.route_map_ids(true), ["a", "b"]);
        let pending = s.route_map_entries(None, View::Pending);
        assert!(pending.items.values().all(|e| e.state.is_none()));
        let stale = params(&[("route-map-id", "a"), ("order", "3"), ("digest", "00")]);
        let e = s.delete_route_map_entry(&stale).expect_err("stale");
        assert!(e.to_string().contains("detected modified configuration"));
    }
}
