//! The `pve` IPAM plugin's database (`Ipams/PVEPlugin.pm`) and what
//! uses it: subnets and their gateways, the `/cluster/sdn/vnets/{vnet}/ips`
//! calls (`API2/Network/SDN/Ips.pm`), `/cluster/sdn/ipams/{ipam}/status`,
//! and the DHCP mapping a guest's start makes (`add_dhcp_mapping`).

use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::net::{Cidr, canon, num};
use super::{Obj, Sdn, Section, split_subnet_id, text};
use crate::model::{Error, Result};

/// What holds an address in the IPAM database: a subnet's gateway, or a
/// guest (by MAC, VMID, hostname). Kept as the database's JSON keeps it
/// (`"gateway": 1`, the VMID as a string), keys in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpamEntry {
    /// The subnet's gateway (any `gateway` member marks it).
    #[serde(
        default,
        skip_serializing_if = "std::ops::Not::not",
        with = "present_as_one"
    )]
    pub gateway: bool,
    /// The guest's hostname.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The MAC the address is mapped to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// The guest's VMID, as the database holds it (text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vmid: Option<String>,
}

/// `gateway`: written as `1`, read as set whatever its value.
mod present_as_one {
    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::trivially_copy_pass_by_ref)]
    pub fn serialize<S: Serializer>(_: &bool, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(1)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| true)
    }
}

/// An address of the IPAM's status: what holds it, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpamAddress<'a> {
    /// The zone.
    pub zone: &'a str,
    /// The subnet's CIDR.
    pub subnet: &'a str,
    /// The address.
    pub ip: &'a str,
    /// The VNet whose running subnet holds it.
    pub vnet: String,
    /// What holds it.
    pub entry: &'a IpamEntry,
}

/// A subnet of a VNet as the lookups see it: id, `cidr`, `zone`.
struct SubnetRef {
    zone: String,
    cidr_text: String,
    cidr: Cidr,
    obj: Obj,
}

fn subnet_ref(id: &str, obj: &Obj) -> Option<SubnetRef> {
    let (zone, network, mask) = split_subnet_id(id)?;
    let cidr_text = format!("{network}/{mask}");
    Some(SubnetRef {
        zone: zone.to_string(),
        cidr: Cidr::parse(&cidr_text)?,
        cidr_text,
        obj: obj.clone(),
    })
}

impl Sdn {
    /// `add_subnet`: the subnet gets an (empty) entry.
    pub(super) fn ipam_add_subnet(&mut self, zone: &str, cidr: &str) {
        self.ipam_db
            .entry(zone.to_string())
            .or_default()
            .entry(cidr.to_string())
            .or_default();
    }

    /// `del_subnet`: only a subnet holding nothing but its gateway.
    pub(super) fn ipam_del_subnet(&mut self, zone: &str, cidr: &str) -> Result<()> {
        let z = self
            .ipam_db
            .get_mut(zone)
            .ok_or_else(|| Error::failed(format!("zone '{zone}' doesn't exist in IPAM DB")))?;
        let ips = z
            .get(cidr)
            .ok_or_else(|| Error::failed(format!("subnet '{cidr}' doesn't exist in IPAM DB")))?;
        let only_gateway = ips.len() == 1 && ips.values().next().is_some_and(|e| e.gateway);
        if !ips.is_empty() && !only_gateway {
            return Err(Error::failed(format!(
                "cannot delete subnet '{cidr}', not empty"
            )));
        }
        z.remove(cidr);
        Ok(())
    }

    /// `add_ip`: an address for a gateway or a guest.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ipam_add_ip(
        &mut self,
        zone: &str,
        cidr: &str,
        ip: &str,
        hostname: Option<&str>,
        mac: Option<&str>,
        vmid: Option<&str>,
        gateway: bool,
    ) -> Result<()> {
        let ip = canon(ip).unwrap_or_else(|| ip.to_string());
        let ips = self
            .ipam_db
            .get_mut(zone)
            .ok_or_else(|| Error::failed(format!("zone '{zone}' doesn't exist in IPAM DB")))?
            .get_mut(cidr)
            .ok_or_else(|| Error::failed(format!("subnet '{cidr}' doesn't exist in IPAM DB")))?;
        let taken = ips.get(&ip).is_some_and(|e| !gateway || !e.gateway);
        if taken {
            return Err(Error::failed(format!("IP '{ip}' already exist")));
        }
        let e = if gateway {
            IpamEntry {
                gateway: true,
                ..IpamEntry::default()
            }
        } else {
            let given = |v: Option<&str>| v.filter(|v| !v.is_empty()).map(str::to_string);
            IpamEntry {
                gateway: false,
                hostname: given(hostname),
                mac: given(mac),
                vmid: given(vmid),
            }
        };
        ips.insert(ip, e);
        Ok(())
    }

    /// `del_ip`.
    pub(super) fn ipam_del_ip(&mut self, zone: &str, cidr: &str, ip: &str) -> Result<()> {
        let ip = canon(ip).unwrap_or_else(|| ip.to_string());
        let z = self
            .ipam_db
            .get_mut(zone)
            .ok_or_else(|| Error::failed(format!("zone {zone} don't exist in ipam db")))?;
        let ips = z
            .get_mut(cidr)
            .ok_or_else(|| Error::failed(format!("subnet {cidr} don't exist in ipam db")))?;
        if ips.remove(&ip).is_none() {
            return Err(Error::failed(format!(
                "IP '{ip}' does not exist in IPAM DB"
            )));
        }
        Ok(())
    }

    /// The running subnets of a VNet, sorted by id.
    fn running_subnets(&self, vnet: &str) -> Vec<SubnetRef> {
        self.running
            .as_ref()
            .map(|r| &r.subnets)
            .into_iter()
            .flat_map(Section::iter)
            .filter(|(_, o)| o.get("vnet").map(text).as_deref() == Some(vnet))
            .filter_map(|(id, o)| subnet_ref(id, o))
            .collect()
    }

    /// `get_subnet_from_vnet_ip`: the VNet's zone (pending
    /// configuration) and the running subnet holding `ip`.
    fn subnet_of_ip(&self, vnet: &str, ip: &str) -> Result<(Obj, SubnetRef)> {
        let subnets = self.running_subnets(vnet);
        let zone_id = self
            .vnets
            .get(vnet)
            .and_then(|v| v.get("zone"))
            .map(text)
            .filter(|z| !z.is_empty())
            .ok_or_else(|| Error::failed("no sdn zone ID specified"))?;
        let zone = self
            .zones
            .get(&zone_id)
            .cloned()
            .ok_or_else(|| Error::failed(format!("sdn '{zone_id}' does not exist")))?;
        let addr: Option<IpAddr> = ip.parse().ok();
        let subnet = subnets
            .into_iter()
            .find(|s| addr.is_some_and(|a| s.cidr.contains(a)))
            .ok_or_else(|| Error::failed(format!("can't find any subnet for ip {ip}")))?;
        Ok((zone, subnet))
    }

    /// `POST /cluster/sdn/vnets/{vnet}/ips`.
    ///
    /// # Errors
    /// No subnet for the address; IPAM refusals.
    pub fn ipcreate(&mut self, vnet: &str, ip: &str, mac: Option<&str>) -> Result<()> {
        let (zone, sn) = self.subnet_of_ip(vnet, ip)?;
        if !zone.contains_key("ipam") {
            return Ok(());
        }
        self.ipam_add_ip(&sn.zone, &sn.cidr_text, ip, None, mac, None, false)
    }

    /// `DELETE /cluster/sdn/vnets/{vnet}/ips`.
    ///
    /// # Errors
    /// No subnet for the address; the address not in the IPAM.
    pub fn ipdelete(&mut self, vnet: &str, ip: &str) -> Result<()> {
        let (zone, sn) = self.subnet_of_ip(vnet, ip)?;
        if !zone.contains_key("ipam") {
            return Ok(());
        }
        self.ipam_del_ip(&sn.zone, &sn.cidr_text, ip)
    }

    /// `PUT /cluster/sdn/vnets/{vnet}/ips`: the MAC's address of the same
    /// family is replaced by `ip` (the old one comes back if the new one
    /// cannot be added).
    ///
    /// # Errors
    /// As for create.
    pub fn ipupdate(
        &mut self,
        vnet: &str,
        ip: &str,
        mac: Option<&str>,
        vmid: Option<u32>,
    ) -> Result<()> {
        let v4 = ip.parse::<IpAddr>().is_ok_and(|a| a.is_ipv4());
        let old = mac.and_then(|m| {
            self.ips_of_mac(vnet, m)
                .into_iter()
                .find(|o| o.parse::<IpAddr>().is_ok_and(|a| a.is_ipv4() == v4))
        });
        let snapshot = self.ipam_db.clone();
        if let Some(o) = &old {
            self.ipdelete(vnet, o)?;
        }
        let vmid = vmid.map(|v| v.to_string());
        let (zone, sn) = self.subnet_of_ip(vnet, ip)?;
        if !zone.contains_key("ipam") {
            return Ok(());
        }
        let r = self.ipam_add_ip(
            &sn.zone,
            &sn.cidr_text,
            ip,
            None,
            mac,
            vmid.as_deref(),
            false,
        );
        if r.is_err() {
            self.ipam_db = snapshot;
        }
        r
    }

    /// `get_ips_from_mac`: the addresses a MAC holds in the VNet's zone
    /// (only for zones with an IPAM and DHCP).
    pub fn ips_of_mac(&self, vnet: &str, mac: &str) -> Vec<String> {
        let Some(zone_id) = self.vnets.get(vnet).and_then(|v| v.get("zone")).map(text) else {
            return Vec::new();
        };
        let Some(zone) = self.zones.get(&zone_id) else {
            return Vec::new();
        };
        if !zone.contains_key("ipam") || zone.get("dhcp").is_none() {
            return Vec::new();
        }
        self.ipam_db
            .get(&zone_id)
            .into_iter()
            .flat_map(|z| z.values())
            .flat_map(|ips| ips.iter())
            .filter(|(_, e)| e.mac.as_ref().is_some_and(|m| m.eq_ignore_ascii_case(mac)))
            .map(|(ip, _)| ip.clone())
            .collect()
    }

    /// `add_dhcp_mapping` at a guest's start: for a VNet whose zone has an
    /// IPAM and DHCP, a MAC without an address of a family gets the first
    /// free one of a DHCP range of the VNet's running subnets of that
    /// family.
    ///
    /// # Errors
    /// `can't find any free ip in zone <zone> for IPv<n>`.
    pub fn add_dhcp_mapping(
        &mut self,
        vnet: &str,
        mac: &str,
        vmid: u32,
        name: Option<&str>,
    ) -> Result<()> {
        let Some(zone_id) = self.vnets.get(vnet).and_then(|v| v.get("zone")).map(text) else {
            return Ok(());
        };
        let Some(zone) = self.zones.get(&zone_id) else {
            return Ok(());
        };
        if !zone.contains_key("ipam") || zone.get("dhcp").is_none() {
            return Ok(());
        }
        let have = self.ips_of_mac(vnet, mac);
        for v4 in [true, false] {
            if have
                .iter()
                .any(|ip| ip.parse::<IpAddr>().is_ok_and(|a| a.is_ipv4() == v4))
            {
                continue;
            }
            let subnets: Vec<SubnetRef> = self
                .running_subnets(vnet)
                .into_iter()
                .filter(|s| s.cidr.is_v4() == v4)
                .collect();
            if subnets.is_empty() {
                continue;
            }
            let mut got = false;
            for sn in &subnets {
                if let Some(ip) = self.free_in_ranges(sn) {
                    self.ipam_add_subnet(&sn.zone, &sn.cidr_text);
                    let ips = self
                        .ipam_db
                        .entry(sn.zone.clone())
                        .or_default()
                        .entry(sn.cidr_text.clone())
                        .or_default();
                    let e = IpamEntry {
                        gateway: false,
                        hostname: name.map(str::to_string),
                        mac: Some(mac.to_string()),
                        vmid: Some(vmid.to_string()),
                    };
                    ips.insert(ip, e);
                    got = true;
                    break;
                }
            }
            if !got {
                let n = if v4 { 4 } else { 6 };
                return Err(Error::failed(format!(
                    "can't find any free ip in zone {zone_id} for IPv{n}"
                )));
            }
        }
        Ok(())
    }

    /// The first address of a subnet's DHCP ranges the IPAM does not hold.
    fn free_in_ranges(&self, sn: &SubnetRef) -> Option<String> {
        let held = self
            .ipam_db
            .get(&sn.zone)
            .and_then(|z| z.get(&sn.cidr_text));
        let ranges = sn.obj.get("dhcp-range").and_then(Value::as_array)?;
        for r in ranges {
            let Ok((start, end)) = super::parse_range(&text(r)) else {
                continue;
            };
            let (Ok(a), Ok(b)) = (start.parse::<IpAddr>(), end.parse::<IpAddr>()) else {
                continue;
            };
            let (a, b) = (num(a), num(b));
            let mut n = a;
            while n <= b {
                let ip = sn.cidr.addr_of(n).to_string();
                if held.is_none_or(|h| !h.contains_key(&ip)) {
                    return Some(ip);
                }
                n += 1;
            }
        }
        None
    }

    /// Frees what the IPAM holds for these MACs (a guest's destruction).
    pub fn release_macs(&mut self, macs: &[String]) {
        for z in self.ipam_db.values_mut() {
            for ips in z.values_mut() {
                ips.retain(|_, e| {
                    e.mac
                        .as_ref()
                        .is_none_or(|m| !macs.iter().any(|x| x.eq_ignore_ascii_case(m)))
                });
            }
        }
    }

    /// `GET /cluster/sdn/ipams/{ipam}/status`: the addresses of the zones
    /// that run with the `pve` IPAM and DHCP, with the VNet whose running
    /// subnet holds them; `may_see(zone, vnet)` filters.
    ///
    /// # Errors
    /// `Currently only PVE IPAM is supported!`.
    pub fn ipam_status(
        &self,
        ipam: &str,
        may_see: impl Fn(&str, &str) -> bool,
    ) -> Result<Vec<IpamAddress<'_>>> {
        if ipam != "pve" {
            return Err(Error::failed("Currently only PVE IPAM is supported!"));
        }
        let mut out = Vec::new();
        let Some(run) = &self.running else {
            return Ok(out);
        };
        for (zone_id, subnets) in &self.ipam_db {
            let Some(zone) = run.zones.get(zone_id) else {
                continue;
            };
            if zone.get("ipam").map(text).as_deref() != Some("pve") || zone.get("dhcp").is_none() {
                continue;
            }
            for (cidr_text, ips) in subnets {
                let Some(cidr) = Cidr::parse(cidr_text) else {
                    continue;
                };
                let vnet = run
                    .vnets
                    .iter()
                    .filter(|(_, v)| v.get("zone").map(text).as_deref() == Some(zone_id))
                    .find(|(id, _)| {
                        self.running_subnets(id)
                            .iter()
                            .any(|s| s.cidr.contains(cidr.addr))
                    })
                    .map(|(id, _)| id.clone());
                let Some(vnet) = vnet else {
                    continue;
                };
                if !may_see(zone_id, &vnet) {
                    continue;
                }
                for (ip, e) in ips {
                    out.push(IpamAddress {
                        zone: zone_id,
                        subnet: cidr_text,
                        ip,
                        vnet: vnet.clone(),
                        entry: e,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The subnet ids of the running configuration (for tests and views).
    pub fn running_subnet_ids(&self) -> Vec<String> {
        self.running
            .as_ref()
            .map(|r| r.subnets.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// What the IPAM holds in a zone's subnet, by address.
    pub fn ipam_entries(
        &self,
        zone: &str,
        cidr: &str,
    ) -> Option<&std::collections::BTreeMap<String, IpamEntry>> {
        self.ipam_db.get(zone).and_then(|z| z.get(cidr))
    }
}
