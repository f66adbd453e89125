//! Creating, updating and deleting the sections of the configuration
//! files, with the checks of pve-network's API handlers and plugin hooks
//! (`API2/Network/SDN/*.pm`, `on_update_hook`, `vnet_update_hook`,
//! `on_delete_hook`). Everything is written to the pending configuration.

use std::collections::BTreeMap;

use serde_json::Value;

use super::net::{Cidr, canon};
use super::rules::{self, check_config, delete_from_config, option_params};
use super::{File, Obj, Sdn, not_exist, parse_range, split_subnet_id, text, wrapped};
use crate::model::{Context, Error, PveVersion, Result};

/// The parameters of a call, by name.
pub type Params = BTreeMap<String, Value>;

fn token(p: &Params) -> Option<String> {
    p.get("lock-token").map(text)
}

fn delete_list(p: &Params) -> Vec<String> {
    p.get("delete")
        .map(text)
        .map(|d| {
            d.split([',', ';', ' ', '\0'])
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `assert_if_modified`.
fn check_digest(current: &str, p: &Params) -> Result<()> {
    match p.get("digest").map(text) {
        Some(d) if !d.is_empty() && d != current => Err(Error::conflict(
            "detected modified configuration - file changed by other user? Try again.",
        )),
        _ => Ok(()),
    }
}

fn int(o: &Obj, k: &str) -> Option<i64> {
    o.get(k).and_then(|v| match v {
        Value::Number(n) => n.as_i64(),
        other => text(other).parse().ok(),
    })
}

fn truthy(o: &Obj, k: &str) -> bool {
    int(o, k).is_some_and(|v| v != 0)
}

fn s(o: &Obj, k: &str) -> Option<String> {
    o.get(k).map(text).filter(|v| !v.is_empty())
}

impl Sdn {
    fn section_mut(&mut self, f: File) -> &mut super::Section {
        match f {
            File::Zones => &mut self.zones,
            File::Vnets => &mut self.vnets,
            File::Subnets => &mut self.subnets,
            File::Controllers => &mut self.controllers,
            File::Ipams => &mut self.ipams,
            File::Dns => &mut self.dns,
        }
    }

    // ------------------------------------------------------------- zones

    /// `POST /cluster/sdn/zones`.
    ///
    /// # Errors
    /// PVE's refusals: unknown options for the type, required ones
    /// missing, an existing id, unknown DNS servers or IPAM, the evpn
    /// controller and `vrf-vxlan` checks, the vxlan peers/fabric check.
    pub fn create_zone(&mut self, v: PveVersion, p: &Params, rq: &mut Context) -> Result<()> {
        let kind = p.get("type").map(text).unwrap_or_default();
        let id = p.get("zone").map(text).unwrap_or_default();
        let opts = rules::zone_options(v, &kind)
            .ok_or_else(|| Error::failed(format!("unknown section type '{kind}'")))?;
        let mut o = check_config(
            &opts,
            &option_params(p, &["type", "zone", "lock-token"]),
            true,
        )?;
        rules::zone_node_lists(&mut o);
        o.insert("type".into(), Value::from(kind));
        let msg = "create sdn zone object failed";
        self.check_token(token(p).as_deref())
            .map_err(|e| wrapped(msg, e))?;
        if self.zones.contains_key(&id) {
            return Err(wrapped(
                msg,
                Error::failed(format!("sdn zone object ID '{id}' already defined")),
            ));
        }
        self.check_zone_refs(&o).map_err(|e| wrapped(msg, e))?;
        let mut zones = self.zones.clone();
        zones.insert(id.clone(), o);
        self.zone_update_hook(v, &id, &mut zones, rq)
            .map_err(|e| wrapped(msg, e))?;
        self.zones = zones;
        Ok(())
    }

    /// `PUT /cluster/sdn/zones/{zone}`.
    ///
    /// # Errors
    /// As for create, plus a changed digest, unknown zone, bad deletes,
    /// and an IPAM change while the zone has subnets.
    pub fn update_zone(&mut self, v: PveVersion, p: &Params, rq: &mut Context) -> Result<()> {
        let id = p.get("zone").map(text).unwrap_or_default();
        let msg = "update sdn zone object failed";
        let run = |me: &mut Self, rq: &mut Context| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            check_digest(&me.digest(File::Zones), p)?;
            let mut zone = me
                .zones
                .get(&id)
                .cloned()
                .ok_or_else(|| not_exist(File::Zones, &id))?;
            let kind = s(&zone, "type").unwrap_or_default();
            let opts = rules::zone_options(v, &kind).unwrap_or_default();
            let new = check_config(
                &opts,
                &option_params(p, &["zone", "digest", "delete", "lock-token"]),
                false,
            )?;
            let old_ipam = s(&zone, "ipam");
            delete_from_config(&mut zone, &opts, &new, &delete_list(p))?;
            zone.extend(new.clone());
            rules::zone_node_lists(&mut zone);
            if s(&zone, "ipam") != old_ipam
                && me
                    .subnets
                    .keys()
                    .any(|sid| split_subnet_id(sid).is_some_and(|(z, _, _)| z == id))
            {
                return Err(Error::invalid(
                    "ipam",
                    "can't change ipam if a subnet is already defined in this zone",
                ));
            }
            me.check_zone_refs(&new)?;
            let mut zones = me.zones.clone();
            zones.insert(id.clone(), zone);
            me.zone_update_hook(v, &id, &mut zones, rq)?;
            me.zones = zones;
            Ok(())
        };
        run(self, rq).map_err(|e| wrapped(msg, e))
    }

    /// `DELETE /cluster/sdn/zones/{zone}`.
    ///
    /// # Errors
    /// Unknown zone; `zone <z> is used by vnet <v>`.
    pub fn delete_zone(&mut self, p: &Params) -> Result<()> {
        let id = p.get("zone").map(text).unwrap_or_default();
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            if !me.zones.contains_key(&id) {
                return Err(not_exist(File::Zones, &id));
            }
            if let Some((vnet, _)) = me
                .vnets
                .iter()
                .find(|(_, vn)| s(vn, "zone").as_deref() == Some(id.as_str()))
            {
                return Err(Error::failed(format!("zone {id} is used by vnet {vnet}")));
            }
            me.zones.remove(&id);
            Ok(())
        };
        run(self).map_err(|e| wrapped("delete sdn zone object failed", e))
    }

    /// The DNS servers, DNS zone and IPAM a zone names must exist.
    fn check_zone_refs(&self, o: &Obj) -> Result<()> {
        let dns = s(o, "dns");
        if let Some(d) = &dns
            && !self.dns.contains_key(d)
        {
            return Err(Error::invalid("dns", format!("{d} don't exist")));
        }
        if let Some(d) = s(o, "reversedns")
            && !self.dns.contains_key(&d)
        {
            return Err(Error::invalid("reversedns", format!("{d} don't exist")));
        }
        if s(o, "dnszone").is_some() && dns.is_none() {
            return Err(Error::invalid("dnszone", "missing dns server"));
        }
        if let Some(i) = s(o, "ipam")
            && !self.current(File::Ipams).contains_key(&i)
        {
            return Err(Error::invalid("ipam", format!("{i} not existing")));
        }
        Ok(())
    }

    /// The zone plugin's `on_update_hook`.
    fn zone_update_hook(
        &self,
        v: PveVersion,
        id: &str,
        zones: &mut super::Section,
        rq: &mut Context,
    ) -> Result<()> {
        let zone = zones.get(id).cloned().unwrap_or_default();
        match s(&zone, "type").as_deref() {
            Some("evpn") => {
                // The zone's controller, then (9.2) its secondary ones:
                // each an evpn controller.
                let primary = s(&zone, "controller").unwrap_or_default();
                let secondary = zone
                    .get("secondary-controllers")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(text).collect::<Vec<_>>())
                    .unwrap_or_default();
                for c in std::iter::once(primary).chain(secondary) {
                    match self.controllers.get(&c) {
                        None => return Err(Error::failed(format!("controller {c} don't exist"))),
                        Some(ctl) if s(ctl, "type").as_deref() != Some("evpn") => {
                            return Err(Error::failed(format!(
                                "{c} is not a evpn controller type"
                            )));
                        }
                        Some(_) => {}
                    }
                }
                let vrf = zone.get("vrf-vxlan").map(text).unwrap_or_default();
                if let Some((other, _)) = zones.iter().find(|(zid, z)| {
                    zid.as_str() != id && z.get("vrf-vxlan").map(text).as_deref() == Some(&vrf)
                }) {
                    return Err(Error::failed(format!(
                        "vrf-vxlan {vrf} is already declared in {other}"
                    )));
                }
                if !zone.contains_key("mac") {
                    let mac = rq.random_mac();
                    if let Some(z) = zones.get_mut(id) {
                        z.insert("mac".into(), Value::from(mac));
                    }
                }
            }
            Some("vxlan") if v.is_v9() => {
                let peers = s(&zone, "peers").is_some();
                let fabric = s(&zone, "fabric").is_some();
                if peers == fabric {
                    let m = "must have exactly one of peers / fabric defined";
                    let mut e = BTreeMap::new();
                    e.insert("peers".to_string(), m.to_string());
                    e.insert("fabric".to_string(), m.to_string());
                    return Err(Error::Invalid(e));
                }
            }
            _ => {}
        }
        Ok(())
    }

    // ------------------------------------------------------------- vnets

    /// `POST /cluster/sdn/vnets`.
    ///
    /// # Errors
    /// An existing id, an unknown zone, the zone type's tag checks.
    pub fn create_vnet(&mut self, p: &Params) -> Result<()> {
        let id = p.get("vnet").map(text).unwrap_or_default();
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            let mut o = check_config(
                &rules::vnet_options(),
                &option_params(p, &["type", "vnet", "lock-token"]),
                true,
            )?;
            o.insert("type".into(), Value::from("vnet"));
            if me.vnets.contains_key(&id) {
                return Err(Error::failed(format!(
                    "sdn vnet object ID '{id}' already defined"
                )));
            }
            let mut vnets = me.vnets.clone();
            vnets.insert(id.clone(), o);
            me.vnet_update_hook(&id, &vnets)?;
            me.vnets = vnets;
            Ok(())
        };
        run(self).map_err(|e| wrapped("create sdn vnet object failed", e))
    }

    /// `PUT /cluster/sdn/vnets/{vnet}` (the handler checked the VNet
    /// exists).
    ///
    /// # Errors
    /// A changed digest, bad deletes, a zone change while subnets exist,
    /// the zone type's tag checks.
    pub fn update_vnet(&mut self, p: &Params) -> Result<()> {
        let id = p.get("vnet").map(text).unwrap_or_default();
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            check_digest(&me.digest(File::Vnets), p)?;
            let opts = rules::vnet_options();
            let new = check_config(
                &opts,
                &option_params(p, &["vnet", "digest", "delete", "lock-token"]),
                false,
            )?;
            let mut data = me
                .vnets
                .get(&id)
                .cloned()
                .ok_or_else(|| not_exist(File::Vnets, &id))?;
            let old_zone = s(&data, "zone");
            delete_from_config(&mut data, &opts, &new, &delete_list(p))?;
            data.extend(new);
            let new_zone = s(&data, "zone");
            if new_zone.is_none() {
                return Err(Error::invalid("zone", "cannot delete zone"));
            }
            if me.has_subnets(&id) && old_zone != new_zone {
                return Err(Error::invalid("zone", "can't change zone if subnets exist"));
            }
            let mut vnets = me.vnets.clone();
            vnets.insert(id.clone(), data);
            me.vnet_update_hook(&id, &vnets)?;
            me.vnets = vnets;
            Ok(())
        };
        run(self).map_err(|e| wrapped("update sdn vnet object failed", e))
    }

    /// `DELETE /cluster/sdn/vnets/{vnet}`.
    ///
    /// # Errors
    /// Unknown VNet; `Can't delete vnet if subnets exists`.
    pub fn delete_vnet(&mut self, p: &Params) -> Result<()> {
        let id = p.get("vnet").map(text).unwrap_or_default();
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            if !me.vnets.contains_key(&id) {
                return Err(not_exist(File::Vnets, &id));
            }
            if me.has_subnets(&id) {
                return Err(Error::invalid(
                    "vnet",
                    "Can't delete vnet if subnets exists",
                ));
            }
            me.vnets.remove(&id);
            Ok(())
        };
        run(self).map_err(|e| wrapped("delete sdn vnet object failed", e))
    }

    fn has_subnets(&self, vnet: &str) -> bool {
        self.subnets
            .values()
            .any(|sn| s(sn, "vnet").as_deref() == Some(vnet))
    }

    /// The zone plugin's `vnet_update_hook` and the VNet plugin's
    /// `on_update_hook`.
    fn vnet_update_hook(&self, id: &str, vnets: &super::Section) -> Result<()> {
        let vnet = vnets.get(id).cloned().unwrap_or_default();
        let zone_id = s(&vnet, "zone").unwrap_or_default();
        let zone_type = self
            .zones
            .get(&zone_id)
            .and_then(|z| s(z, "type"))
            .unwrap_or_default();
        let tag = int(&vnet, "tag");
        let others = vnets.iter().filter(|(o, _)| o.as_str() != id);
        let vxlan_dup = |tag: i64| -> Result<()> {
            for (oid, o) in vnets.iter().filter(|(o, _)| o.as_str() != id) {
                let oz = s(o, "zone").unwrap_or_default();
                let ot = self.zones.get(&oz).and_then(|z| s(z, "type"));
                if !matches!(ot.as_deref(), Some("vxlan" | "evpn")) {
                    continue;
                }
                if int(o, "tag") == Some(tag) {
                    return Err(Error::invalid(
                        "tag",
                        format!("vxlan tag {tag} already exist in vnet {oid} in zone {oz} "),
                    ));
                }
            }
            Ok(())
        };
        match zone_type.as_str() {
            "simple" => {
                if tag.is_some() {
                    return Err(Error::invalid(
                        "tag",
                        "vlan tag is not allowed on simple zone",
                    ));
                }
            }
            "vlan" => {
                let tag = tag.ok_or_else(|| Error::invalid("tag", "missing vlan tag"))?;
                if tag > 4096 {
                    return Err(Error::invalid("tag", "vlan tag max value is 4096"));
                }
                for (oid, o) in others {
                    if s(o, "zone") == s(&vnet, "zone") && int(o, "tag") == Some(tag) {
                        return Err(Error::invalid(
                            "tag",
                            format!("tag {tag} already exist in vnet {oid}"),
                        ));
                    }
                }
            }
            "qinq" => {
                if tag.is_some_and(|t| t > 4096) {
                    return Err(Error::invalid("tag", "VLAN tag maximal value is 4096"));
                }
                for (oid, o) in others {
                    if s(o, "zone") != s(&vnet, "zone") {
                        continue;
                    }
                    let other = int(o, "tag").filter(|t| *t != 0);
                    match tag.filter(|t| *t != 0) {
                        Some(t) if other == Some(t) => {
                            return Err(Error::invalid(
                                "tag",
                                format!("tag {t} already exist in zone {zone_id} vnet {oid}"),
                            ));
                        }
                        None if other.is_none() => {
                            return Err(Error::invalid(
                                "tag",
                                format!(
                                    "tag-less vnet already exists in zone {zone_id} vnet {oid}"
                                ),
                            ));
                        }
                        _ => {}
                    }
                }
            }
            "vxlan" | "evpn" => {
                let tag = tag.ok_or_else(|| Error::invalid("tag", "missing vxlan tag"))?;
                if tag > 16_777_216 {
                    return Err(Error::invalid("tag", "vxlan tag max value is 16777216"));
                }
                if zone_type == "evpn" && truthy(&vnet, "vlanaware") {
                    return Err(Error::invalid(
                        "vlan-aware",
                        "vlan-aware option can't be enabled with evpn",
                    ));
                }
                vxlan_dup(tag)?;
            }
            "faucet" => {}
            other => {
                return Err(Error::failed(format!("unknown section type '{other}'")));
            }
        }
        if truthy(&vnet, "vlanaware") && self.has_subnets(id) {
            return Err(Error::invalid(
                "vlanaware",
                "vlanaware vnet is not compatible with subnets",
            ));
        }
        Ok(())
    }

    // ----------------------------------------------------------- subnets

    /// `POST /cluster/sdn/vnets/{vnet}/subnets` (the handler checked the
    /// VNet exists): the id is `<zone>-<cidr with / as ->`; with an IPAM,
    /// the subnet and its gateway are registered in it.
    ///
    /// # Errors
    /// A bad CIDR, an existing id, a vlan-aware VNet, a gateway outside
    /// the subnet, bad DHCP ranges, IPAM refusals.
    pub fn create_subnet(&mut self, p: &Params) -> Result<()> {
        let cidr_text = p.get("subnet").map(text).unwrap_or_default();
        let vnet = p.get("vnet").map(text).unwrap_or_default();
        Cidr::parse(&cidr_text).ok_or_else(|| {
            Error::invalid("subnet", "value does not look like a valid CIDR network")
        })?;
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            let zone_id = me
                .vnets
                .get(&vnet)
                .and_then(|v| s(v, "zone"))
                .unwrap_or_default();
            let id = format!("{zone_id}-{}", cidr_text.replace('/', "-"));
            let o = check_config(
                &rules::subnet_options(),
                &option_params(p, &["type", "subnet", "lock-token"]),
                true,
            )?;
            if me.subnets.contains_key(&id) {
                return Err(Error::failed(format!(
                    "sdn subnet object ID '{id}' already defined"
                )));
            }
            let mut o = o;
            o.insert("type".into(), Value::from("subnet"));
            let zone = me.zones.get(&zone_id).cloned().unwrap_or_default();
            let mut next = me.clone();
            next.subnets.insert(id.clone(), o.clone());
            next.subnet_update_hook(&zone, &id, &o, None)?;
            *me = next;
            Ok(())
        };
        run(self).map_err(|e| wrapped("create sdn subnet object failed", e))
    }

    /// `PUT /cluster/sdn/vnets/{vnet}/subnets/{subnet}`.
    ///
    /// # Errors
    /// Unknown subnet, a changed digest, bad deletes, the create checks.
    pub fn update_subnet(&mut self, p: &Params) -> Result<()> {
        let id = p.get("subnet").map(text).unwrap_or_default();
        let vnet = p.get("vnet").map(text).unwrap_or_default();
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            let zone_id = me
                .vnets
                .get(&vnet)
                .and_then(|v| s(v, "zone"))
                .unwrap_or_default();
            let zone = me.zones.get(&zone_id).cloned().unwrap_or_default();
            let old = me
                .subnets
                .get(&id)
                .cloned()
                .ok_or_else(|| not_exist(File::Subnets, &id))?;
            check_digest(&me.digest(File::Subnets), p)?;
            let opts = rules::subnet_options();
            let new = check_config(
                &opts,
                &option_params(p, &["subnet", "digest", "delete", "lock-token"]),
                false,
            )?;
            let mut data = old.clone();
            delete_from_config(&mut data, &opts, &new, &delete_list(p))?;
            data.extend(new);
            let mut next = me.clone();
            next.subnets.insert(id.clone(), data.clone());
            next.subnet_update_hook(&zone, &id, &data, Some(&old))?;
            *me = next;
            Ok(())
        };
        run(self).map_err(|e| wrapped("update sdn subnet object failed", e))
    }

    /// `DELETE /cluster/sdn/vnets/{vnet}/subnets/{subnet}`: with an
    /// IPAM, only a subnet holding nothing but its gateway.
    ///
    /// # Errors
    /// IPAM refusals (`cannot delete subnet '<cidr>', not empty`).
    pub fn delete_subnet(&mut self, p: &Params) -> Result<()> {
        let id = p.get("subnet").map(text).unwrap_or_default();
        let vnet = p.get("vnet").map(text).unwrap_or_default();
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            let zone_id = me
                .vnets
                .get(&vnet)
                .and_then(|v| s(v, "zone"))
                .unwrap_or_default();
            let zone = me.zones.get(&zone_id).cloned().unwrap_or_default();
            let exists = me.subnets.contains_key(&id);
            if s(&zone, "ipam").is_some() {
                let (z, cidr) = match split_subnet_id(&id).filter(|_| exists) {
                    Some((z, n, m)) => (z.to_string(), format!("{n}/{m}")),
                    None => (String::new(), String::new()),
                };
                me.ipam_del_subnet(&z, &cidr)?;
            }
            me.subnets.remove(&id);
            Ok(())
        };
        run(self).map_err(|e| wrapped("delete sdn subnet object failed", e))
    }

    /// The subnet plugin's `on_update_hook`.
    fn subnet_update_hook(
        &mut self,
        zone: &Obj,
        id: &str,
        subnet: &Obj,
        old: Option<&Obj>,
    ) -> Result<()> {
        let (zone_id, network, mask) = split_subnet_id(id).unwrap_or_default();
        let cidr_text = format!("{network}/{mask}");
        let cidr = Cidr::parse(&cidr_text).ok_or_else(|| {
            Error::invalid("subnet", "value does not look like a valid CIDR network")
        })?;
        if let Some(vnet_id) = s(subnet, "vnet") {
            let vnet = self
                .vnets
                .get(&vnet_id)
                .ok_or_else(|| Error::invalid("vnet", format!("{vnet_id} don't exist")))?;
            if truthy(vnet, "vlanaware") {
                return Err(Error::invalid(
                    "vnet",
                    "you can't add a subnet on a vlanaware vnet",
                ));
            }
        }
        let gateway = s(subnet, "gateway");
        let pointopoint = cidr.is_v4() && cidr.prefix == 32;
        if let Some(g) = &gateway {
            let inside = g.parse().is_ok_and(|ip| cidr.contains(ip));
            if !inside && !pointopoint {
                return Err(Error::invalid(
                    "gateway",
                    format!("{g} is not in subnet {cidr_text}"),
                ));
            }
        }
        validate_dhcp_ranges(subnet, &cidr, &cidr_text)?;
        if s(zone, "ipam").is_none() {
            return Ok(());
        }
        if old.is_none() {
            self.ipam_add_subnet(zone_id, &cidr_text);
        }
        if pointopoint {
            return Ok(());
        }
        let old_gw = old.and_then(|o| s(o, "gateway"));
        if gateway.is_none()
            && let Some(og) = &old_gw
        {
            let _ = self.ipam_del_ip(zone_id, &cidr_text, og);
        }
        if let Some(g) = &gateway
            && old_gw.as_ref() != Some(g)
        {
            self.ipam_add_ip(zone_id, &cidr_text, g, None, None, None, true)?;
            if let Some(og) = &old_gw {
                let _ = self.ipam_del_ip(zone_id, &cidr_text, og);
            }
        }
        Ok(())
    }

    // ------------------------------------- controllers, IPAMs, DNS servers

    /// `POST` of a controller, IPAM or DNS server (configuration only).
    /// `nodes` are the cluster's nodes (`PVE::Cluster::get_nodelist`),
    /// which a 9.2 evpn controller without `nodes` runs on.
    ///
    /// # Errors
    /// Unknown options for the type, required ones missing, an existing
    /// id, the controller plugins' hooks.
    pub fn create_plugin(
        &mut self,
        v: PveVersion,
        f: File,
        p: &Params,
        nodes: &[String],
    ) -> Result<()> {
        let kind = p.get("type").map(text).unwrap_or_default();
        let key = f.id_key();
        let id = p.get(key).map(text).unwrap_or_default();
        let opts = plugin_options(v, f, &kind)
            .ok_or_else(|| Error::failed(format!("unknown section type '{kind}'")))?;
        let mut o = check_config(&opts, &option_params(p, &["type", key, "lock-token"]), true)?;
        o.insert("type".into(), Value::from(kind));
        let what = plugin_what(f);
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            if me.current(f).contains_key(&id) {
                return Err(Error::failed(format!(
                    "sdn {what} object ID '{id}' already defined"
                )));
            }
            let mut all = me.file(f).clone();
            all.insert(id.clone(), o);
            if f == File::Controllers {
                me.controller_update_hook(v, &id, &all, nodes)?;
            }
            *me.section_mut(f) = all;
            Ok(())
        };
        run(self).map_err(|e| wrapped(&format!("create sdn {what} object failed"), e))
    }

    /// `PUT` of a controller, IPAM or DNS server (`nodes` as for
    /// [`Sdn::create_plugin`]).
    ///
    /// # Errors
    /// Unknown id, a changed digest, unknown options, bad deletes, the
    /// controller plugins' hooks.
    pub fn update_plugin(
        &mut self,
        v: PveVersion,
        f: File,
        p: &Params,
        nodes: &[String],
    ) -> Result<()> {
        let key = f.id_key();
        let id = p.get(key).map(text).unwrap_or_default();
        let what = plugin_what(f);
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            check_digest(&me.digest(f), p)?;
            let mut o = me
                .current(f)
                .get(&id)
                .cloned()
                .ok_or_else(|| not_exist(f, &id))?;
            let kind = s(&o, "type").unwrap_or_default();
            let opts = plugin_options(v, f, &kind).unwrap_or_default();
            let new = check_config(
                &opts,
                &option_params(p, &[key, "digest", "delete", "lock-token"]),
                false,
            )?;
            delete_from_config(&mut o, &opts, &new, &delete_list(p))?;
            o.extend(new);
            let mut all = me.file(f).clone();
            all.insert(id.clone(), o);
            if f == File::Controllers {
                me.controller_update_hook(v, &id, &all, nodes)?;
            }
            *me.section_mut(f) = all;
            Ok(())
        };
        run(self).map_err(|e| wrapped(&format!("update sdn {what} object failed"), e))
    }

    /// `DELETE` of a controller, IPAM or DNS server.
    ///
    /// # Errors
    /// Unknown id; a controller a zone uses (an evpn controller as a
    /// 9.2 zone's secondary controller too).
    pub fn delete_plugin(&mut self, f: File, p: &Params) -> Result<()> {
        let key = f.id_key();
        let id = p.get(key).map(text).unwrap_or_default();
        let what = plugin_what(f);
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(token(p).as_deref())?;
            let o = me
                .current(f)
                .get(&id)
                .cloned()
                .ok_or_else(|| not_exist(f, &id))?;
            if f == File::Controllers
                && let Some(zone) = me.controller_user(&id, s(&o, "type").as_deref())
            {
                return Err(Error::failed(format!("controller {id} is used by {zone}")));
            }
            me.section_mut(f).remove(&id);
            Ok(())
        };
        run(self).map_err(|e| wrapped(&format!("delete sdn {what} object failed"), e))
    }

    /// The controller plugins' `on_delete_hook`: the zone that uses an
    /// evpn or bgp controller as its `controller`, or an evpn controller
    /// among its `secondary-controllers`.
    fn controller_user(&self, id: &str, kind: Option<&str>) -> Option<String> {
        if !matches!(kind, Some("evpn" | "bgp")) {
            return None;
        }
        self.zones
            .iter()
            .find(|(_, z)| {
                s(z, "controller").as_deref() == Some(id)
                    || (kind == Some("evpn")
                        && z.get("secondary-controllers")
                            .and_then(Value::as_array)
                            .is_some_and(|a| a.iter().any(|c| text(c) == id)))
            })
            .map(|(zone, _)| zone.clone())
    }

    /// The controller plugins' `on_update_hook`, over the controllers as
    /// they would be written (`all`): on 8.4 and 9.1 one evpn controller;
    /// on 9.x an evpn controller needs exactly one of `peers`/`fabric`;
    /// on 9.2 (where zones may name several) one unambiguous router ASN
    /// on every node an evpn controller runs on, a peer group name of its
    /// own, and the route maps a controller names must exist; one bgp or
    /// isis controller per node.
    fn controller_update_hook(
        &self,
        v: PveVersion,
        id: &str,
        all: &super::Section,
        nodes: &[String],
    ) -> Result<()> {
        let me = all.get(id).cloned().unwrap_or_default();
        let kind = s(&me, "type").unwrap_or_default();
        let others = all.iter().filter(|(o, _)| o.as_str() != id);
        let v9_2 = v == PveVersion::V9_2;
        match kind.as_str() {
            "evpn" => {
                if v9_2 {
                    let on: Vec<String> = match s(&me, "nodes") {
                        Some(n) => crate::model::network::split_list(&n),
                        None => nodes.to_vec(),
                    };
                    for node in &on {
                        default_router_asn(node, all)?;
                    }
                    let group = |o: &Obj| s(o, "peer-group-name").unwrap_or_else(|| "VTEP".into());
                    let mine = group(&me);
                    if others
                        .clone()
                        .any(|(_, o)| s(o, "type").as_deref() == Some("evpn") && group(o) == mine)
                    {
                        return Err(Error::failed(format!(
                            "cannot have two controllers with same peer-group-name configured ({mine})"
                        )));
                    }
                    self.check_route_maps(&me)?;
                } else if others
                    .clone()
                    .any(|(_, o)| s(o, "type").as_deref() == Some("evpn"))
                {
                    return Err(Error::failed(
                        "only 1 global evpn controller can be defined",
                    ));
                }
                if v.is_v9() && s(&me, "peers").is_some() == s(&me, "fabric").is_some() {
                    return Err(Error::failed(
                        "must have exactly one of peers / fabric defined",
                    ));
                }
            }
            "bgp" | "isis" => {
                let node = s(&me, "node");
                let same = others
                    .filter(|(_, o)| {
                        s(o, "type").as_deref() == Some(kind.as_str()) && s(o, "node") == node
                    })
                    .count();
                if same > 1 {
                    return Err(Error::failed(if kind == "bgp" {
                        "only 1 bgp controller can be defined"
                    } else {
                        "only 1 bgp or isis controller can be defined"
                    }));
                }
                if kind == "bgp" && v9_2 {
                    self.check_route_maps(&me)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The route maps a 9.2 controller names must have an entry in the
    /// configuration as written.
    fn check_route_maps(&self, controller: &Obj) -> Result<()> {
        for k in ["route-map-in", "route-map-out"] {
            if let Some(rm) = s(controller, k)
                && !self.route_map_exists(&rm)
            {
                return Err(Error::failed(format!("route map {rm} does not exist!")));
            }
        }
        Ok(())
    }
}

/// What a file's messages call its objects.
fn plugin_what(f: File) -> &'static str {
    match f {
        File::Controllers => "controller",
        File::Ipams => "ipam",
        _ => "dns",
    }
}

fn plugin_options(v: PveVersion, f: File, kind: &str) -> Option<Vec<(&'static str, bool)>> {
    match f {
        File::Controllers => rules::controller_options(v, kind),
        File::Ipams => rules::ipam_options(kind),
        File::Dns => rules::dns_options(kind),
        _ => None,
    }
}

/// `get_default_router_asn` (9.2), for its refusals: the ASN of the BGP
/// router on `node` must be unambiguous. The evpn controllers running
/// there share one ASN, and those not in `external` BGP mode share it
/// with the node's bgp controller unless that one is eBGP.
fn default_router_asn(node: &str, all: &super::Section) -> Result<()> {
    let mut ibgp = all
        .values()
        .find(|c| s(c, "type").as_deref() == Some("bgp") && s(c, "node").as_deref() == Some(node))
        .filter(|b| !truthy(b, "ebgp"))
        .and_then(|b| s(b, "asn"));
    let mut evpn: Option<String> = None;
    for c in all.values() {
        if s(c, "type").as_deref() != Some("evpn") {
            continue;
        }
        if let Some(n) = s(c, "nodes")
            && !crate::model::network::split_list(&n)
                .iter()
                .any(|x| x == node)
        {
            continue;
        }
        let asn = s(c, "asn").unwrap_or_default();
        if evpn.as_ref().is_some_and(|e| *e != asn) {
            return Err(Error::failed(
                "all EVPN controllers on a node must have the same ASN configured",
            ));
        }
        evpn = Some(asn.clone());
        if s(c, "bgp-mode").as_deref() == Some("external") {
            continue;
        }
        if ibgp.as_ref().is_some_and(|i| *i != asn) {
            return Err(Error::failed(
                "cannot have two different ASNs for iBGP sessions configured",
            ));
        }
        ibgp = Some(asn);
    }
    Ok(())
}

/// `validate_dhcp_ranges`.
fn validate_dhcp_ranges(subnet: &Obj, cidr: &Cidr, cidr_text: &str) -> Result<()> {
    let Some(ranges) = subnet.get("dhcp-range").and_then(Value::as_array) else {
        return Ok(());
    };
    let mut seen: Vec<(u128, u128)> = Vec::new();
    let bad = |m: String| Error::invalid("dhcp-range", m);
    for r in ranges {
        let (start, end) = parse_range(&text(r))?;
        let s_ip: std::net::IpAddr = start
            .parse()
            .map_err(|_| bad(format!("start-address is not a valid IP {start}")))?;
        let e_ip: std::net::IpAddr = end
            .parse()
            .map_err(|_| bad(format!("end-address is not a valid IP {end}")))?;
        let (a, b) = (super::net::num(s_ip), super::net::num(e_ip));
        if a > b {
            return Err(bad(format!(
                "start-address {start} must be smaller than end-address {end}"
            )));
        }
        if !cidr.contains(s_ip) {
            return Err(bad(format!(
                "start-address {start} is not in subnet {cidr_text}"
            )));
        }
        if !cidr.contains(e_ip) {
            return Err(bad(format!(
                "end-address {end} is not in subnet {cidr_text}"
            )));
        }
        if seen.iter().any(|(x, y)| a <= *y && *x <= b) {
            return Err(bad("dhcp ranges must not overlap".into()));
        }
        seen.push((a, b));
    }
    Ok(())
}

/// The canonical address of a parameter (`ip`), unchanged if not one.
pub fn canonical(ip: &str) -> String {
    canon(ip).unwrap_or_else(|| ip.to_string())
}
