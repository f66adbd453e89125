//! `/etc/network/interfaces.d/sdn` as `generate_etc_network_config`
//! writes it: `#version:<n>`, then each interface the zone plugins
//! configure (sorted by name) as `auto`/`iface` with its options. A VNet
//! whose zone does not cover the node is left out; one its plugin
//! refuses (a missing tag, bridge or controller) too.

use std::collections::BTreeMap;

use super::{Compiled, Host, flag, list, opt, subnets_of};
use crate::model::sdn::Obj;

/// The options of each interface, by name.
type Conf = BTreeMap<String, Vec<String>>;

/// The file for `host`.
pub fn generate(cfg: &Compiled<'_>, host: &Host) -> String {
    let mut conf = Conf::new();
    for (id, vnet) in cfg.vnets {
        let Some(zone_id) = opt(vnet, "zone") else {
            continue;
        };
        let Some(zone) = cfg.zones.get(&zone_id) else {
            continue;
        };
        if zone.contains_key("nodes") && !list(zone, "nodes").contains(&host.node) {
            continue;
        }
        let controller = opt(zone, "controller").and_then(|c| cfg.controllers.get(&c));
        let mut next = conf.clone();
        let z = Zone {
            id: &zone_id,
            zone,
            vnet_id: id,
            vnet,
            cfg,
            host,
        };
        let done = match opt(zone, "type").as_deref() {
            Some("simple") => {
                z.simple(&mut next);
                Ok(())
            }
            Some("vlan") => z.vlan(&mut next),
            Some("qinq") => z.qinq(&mut next),
            Some("vxlan") => z.vxlan(&mut next),
            Some("evpn") => z.evpn(controller, &mut next),
            _ => Err(()),
        };
        if done.is_ok() {
            conf = next;
        }
    }
    let mut out = format!("#version:{}\n", cfg.version);
    for (iface, options) in &conf {
        out.push_str(&format!("\nauto {iface}\niface {iface}\n"));
        for o in options {
            out.push_str(&format!("\t{o}\n"));
        }
    }
    out
}

/// Adds an interface's options unless it is configured already.
fn add_once(conf: &mut Conf, name: &str, lines: Vec<String>) {
    conf.entry(name.to_string()).or_insert(lines);
}

/// Adds options to an interface.
fn append(conf: &mut Conf, name: &str, lines: Vec<String>) {
    conf.entry(name.to_string()).or_default().extend(lines);
}

/// A VNet and its zone being generated.
struct Zone<'a> {
    id: &'a str,
    zone: &'a Obj,
    vnet_id: &'a str,
    vnet: &'a Obj,
    cfg: &'a Compiled<'a>,
    host: &'a Host,
}

impl Zone<'_> {
    fn mtu(&self) -> Option<String> {
        opt(self.zone, "mtu")
    }

    fn vlanaware(&self, l: &mut Vec<String>) {
        if flag(self.vnet, "vlanaware") {
            l.push("bridge-vlan-aware yes".into());
            l.push("bridge-vids 2-4094".into());
        }
    }

    /// The gateway addresses, routes, SNAT rules and forwarding of the
    /// VNet's running subnets (simple and EVPN zones); `snat` says
    /// whether SNAT rules are written on this node.
    fn subnet_lines(&self, snat: bool) -> (Vec<String>, Vec<String>, bool) {
        let mut l = Vec::new();
        let mut seen = Vec::new();
        let (mut v4, mut v6, mut any) = (false, false, false);
        for (s, _) in subnets_of(self.cfg.running_subnets, Some(self.vnet_id)) {
            any = true;
            if let Some(gw) = &s.gateway
                && !seen.contains(gw)
            {
                l.push(format!("address {gw}/{}", s.mask));
                seen.push(gw.clone());
            }
            let is6 = s.gateway.as_deref().is_some_and(|g| g.contains(':'));
            let (iptables, check) = if is6 {
                ("ip6tables", "2001:4860:4860::8888")
            } else {
                ("iptables", "8.8.8.8")
            };
            if s.gateway.is_some() {
                if is6 {
                    v6 = true;
                } else {
                    v4 = true;
                }
            }
            if self.kind() == "simple" && s.mask == 32 && !is6 {
                l.push(format!("up ip route add {} dev {}", s.cidr, self.vnet_id));
            }
            if s.snat
                && snat
                && let Some((outip, outiface)) = self.host.route_to(check)
            {
                let cidr = &s.cidr;
                l.push(format!(
                    "post-up {iptables} -t nat -A POSTROUTING -s '{cidr}' -o {outiface} -j SNAT --to-source {outip}"
                ));
                l.push(format!(
                    "post-down {iptables} -t nat -D POSTROUTING -s '{cidr}' -o {outiface} -j SNAT --to-source {outip}"
                ));
                l.push(format!(
                    "post-up {iptables} -t raw -I PREROUTING -i fwbr+ -j CT --zone 1"
                ));
                l.push(format!(
                    "post-down {iptables} -t raw -D PREROUTING -i fwbr+ -j CT --zone 1"
                ));
            }
        }
        let mut fwd = Vec::new();
        if v4 {
            fwd.push("ip-forward on".into());
        }
        if v6 {
            fwd.push("ip6-forward on".into());
        }
        (l, fwd, any)
    }

    fn kind(&self) -> String {
        opt(self.zone, "type").unwrap_or_default()
    }

    /// `SimplePlugin::generate_sdn_config`.
    fn simple(&self, conf: &mut Conf) {
        if conf.contains_key(self.vnet_id) {
            return;
        }
        let (mut l, fwd, _) = self.subnet_lines(true);
        if let Some(mac) = opt(self.vnet, "mac") {
            l.push(format!("hwaddress {mac}"));
        }
        l.push("bridge_ports none".into());
        l.push("bridge_stp off".into());
        l.push("bridge_fd 0".into());
        self.vlanaware(&mut l);
        if let Some(m) = self.mtu() {
            l.push(format!("mtu {m}"));
        }
        if let Some(a) = opt(self.vnet, "alias") {
            l.push(format!("alias {a}"));
        }
        l.extend(fwd);
        append(conf, self.vnet_id, l);
    }

    /// The zone's `bridge` on the node, its VLAN awareness and whether it
    /// is an OVS bridge (`can't find bridge <b>` otherwise).
    fn bridge(&self) -> Result<(String, bool, bool, Vec<String>), ()> {
        let b = opt(self.zone, "bridge").ok_or(())?;
        let i = self.host.iface(&b).ok_or(())?;
        if !matches!(i.kind.as_str(), "bridge" | "OVSBridge") {
            return Err(());
        }
        let physical = i
            .ports
            .iter()
            .filter(|p| {
                self.host.physical.contains(*p)
                    || self.host.iface(p).is_some_and(|x| x.kind == "bond")
            })
            .cloned()
            .collect();
        Ok((b, i.vlan_aware, i.kind == "OVSBridge", physical))
    }

    fn mtu_line(&self, key: &str) -> Vec<String> {
        self.mtu()
            .map(|m| format!("{key} {m}"))
            .into_iter()
            .collect()
    }

    /// `VlanPlugin::generate_sdn_config`.
    fn vlan(&self, conf: &mut Conf) -> Result<(), ()> {
        let (bridge, aware, ovs, ports) = self.bridge()?;
        let tag = opt(self.vnet, "tag").unwrap_or_default();
        let v = self.vnet_id;
        let mut uplink = format!("ln_{v}");
        let peer = format!("pr_{v}");
        if ovs {
            let mut l = vec!["ovs_type OVSIntPort".into(), format!("ovs_bridge {bridge}")];
            l.extend(self.mtu_line("ovs_mtu"));
            if flag(self.vnet, "vlanaware") {
                l.push(format!(
                    "ovs_options vlan_mode=dot1q-tunnel other_config:qinq-ethtype=802.1q tag={tag}"
                ));
            } else {
                l.push(format!("ovs_options tag={tag}"));
            }
            add_once(conf, &uplink, l);
            append(conf, &bridge, vec![format!("ovs_ports {uplink}")]);
        } else if aware {
            uplink = format!("{bridge}.{tag}");
        } else {
            let bridgevlan = format!("{bridge}v{tag}");
            let ports: String = ports.iter().map(|p| format!(" {p}.{tag}")).collect();
            let mut l = vec!["link-type veth".into(), format!("veth-peer-name {peer}")];
            l.extend(self.mtu_line("mtu"));
            add_once(conf, &uplink, l);
            let mut l = vec!["link-type veth".into(), format!("veth-peer-name {uplink}")];
            l.extend(self.mtu_line("mtu"));
            add_once(conf, &peer, l);
            let mut l = vec![
                format!("bridge_ports {ports} {peer}"),
                "bridge_stp off".into(),
                "bridge_fd 0".into(),
            ];
            l.extend(self.mtu_line("mtu"));
            add_once(conf, &bridgevlan, l);
        }
        add_once(conf, v, self.vnet_bridge(&uplink, self.mtu_line("mtu")));
        Ok(())
    }

    /// The VNet's own bridge over `ports`, as the VLAN, QinQ and VXLAN
    /// plugins write it: no STP, no forward delay, VLAN-aware when the
    /// VNet is, its MTU lines and alias.
    fn vnet_bridge(&self, ports: &str, mtu: Vec<String>) -> Vec<String> {
        let mut l = vec![
            format!("bridge_ports {ports}"),
            "bridge_stp off".into(),
            "bridge_fd 0".into(),
        ];
        self.vlanaware(&mut l);
        l.extend(mtu);
        if let Some(a) = opt(self.vnet, "alias") {
            l.push(format!("alias {a}"));
        }
        l
    }

    /// `QinQPlugin::generate_sdn_config`.
    fn qinq(&self, conf: &mut Conf) -> Result<(), ()> {
        let (bridge, aware, ovs, ports) = self.bridge()?;
        let stag = opt(self.zone, "tag").unwrap_or_default();
        let mut proto = opt(self.zone, "vlan-protocol");
        let id = self.id;
        let notag_uplink = format!("ln_{id}");
        let notag_peer = format!("pr_{id}");
        let zone_bridge = format!("z_{id}");
        let vnet_ports = match opt(self.vnet, "tag") {
            Some(ctag) => format!("{zone_bridge}.{ctag}"),
            None => notag_peer.clone(),
        };
        let mut zone_ports = String::new();
        if ovs {
            let p = proto.get_or_insert_with(|| "802.1q".into()).clone();
            let sv = format!("sv_{id}");
            let mut l = vec!["ovs_type OVSIntPort".into(), format!("ovs_bridge {bridge}")];
            l.extend(self.mtu_line("ovs_mtu"));
            l.push(format!(
                "ovs_options vlan_mode=dot1q-tunnel tag={stag} other_config:qinq-ethtype={p}"
            ));
            add_once(conf, &sv, l);
            let b = conf.entry(bridge.clone()).or_default();
            if b.is_empty() {
                b.push("ovs_ports".into());
            }
            if !b[0].split(' ').any(|x| x == sv) {
                b[0].push_str(&format!(" {sv}"));
            }
            zone_ports = sv;
        } else if aware {
            zone_ports = format!("{bridge}.{stag}");
            if let Some(p) = &proto {
                add_once(conf, &bridge, vec![format!("bridge-vlan-protocol {p}")]);
                add_once(conf, &zone_ports, vec![format!("vlan-protocol {p}")]);
            }
        } else if let Some(port) = ports.first() {
            let sv = format!("sv_{id}");
            let mut l = vec![format!("vlan-raw-device {port}"), format!("vlan-id {stag}")];
            if let Some(p) = &proto {
                l.push(format!("vlan-protocol {p}"));
            }
            add_once(conf, &sv, l);
            zone_ports = sv;
        }
        add_once(
            conf,
            &notag_uplink,
            vec![
                "link-type veth".into(),
                format!("veth-peer-name {notag_peer}"),
            ],
        );
        add_once(
            conf,
            &notag_peer,
            vec![
                "link-type veth".into(),
                format!("veth-peer-name {notag_uplink}"),
            ],
        );
        let mut l = self.mtu_line("mtu");
        l.extend([
            "bridge-stp off".into(),
            format!("bridge-ports {zone_ports} {notag_uplink}"),
            "bridge-fd 0".into(),
            "bridge-vlan-aware yes".into(),
            "bridge-vids 2-4094".into(),
        ]);
        add_once(conf, &zone_bridge, l);
        add_once(
            conf,
            self.vnet_id,
            self.vnet_bridge(&vnet_ports, self.mtu_line("mtu")),
        );
        Ok(())
    }

    /// The MTU of a VXLAN or EVPN VNet: the zone's, else 50 below the
    /// underlay interface's, else 1450.
    fn vxlan_mtu(&self, iface: Option<&str>) -> String {
        if let Some(m) = self.mtu() {
            return m;
        }
        iface
            .and_then(|i| self.host.iface(i))
            .and_then(|i| i.mtu)
            .map_or(1450, |m| m.saturating_sub(50))
            .to_string()
    }

    /// `VxlanPlugin::generate_sdn_config` (zones with `peers`).
    fn vxlan(&self, conf: &mut Conf) -> Result<(), ()> {
        let tag = opt(self.vnet, "tag").ok_or(())?;
        let (peers, ip, iface) = match opt(self.zone, "fabric") {
            Some(fabric) => {
                let (peers, own) = self.cfg.fabric_peers(&fabric, &self.host.node).ok_or(())?;
                (peers, Some(own), None)
            }
            None => {
                let peers = list(self.zone, "peers");
                if peers.is_empty() {
                    return Err(());
                }
                let (ip, iface) = self.host.local_ip(&peers, None).unzip();
                (peers, ip, iface)
            }
        };
        let mtu = self.vxlan_mtu(iface.as_deref());
        let vx = format!("vxlan_{}", self.vnet_id);
        let mut l = vec![format!("vxlan-id {tag}")];
        for p in &peers {
            if Some(p) != ip.as_ref() {
                l.push(format!("vxlan_remoteip {p}"));
            }
        }
        if let Some(port) = opt(self.zone, "vxlan-port") {
            l.push(format!("vxlan-port {port}"));
        }
        l.push(format!("mtu {mtu}"));
        add_once(conf, &vx, l);
        add_once(
            conf,
            self.vnet_id,
            self.vnet_bridge(&vx, vec![format!("mtu {mtu}")]),
        );
        Ok(())
    }

    /// `EvpnPlugin::generate_sdn_config` (controllers with `peers`).
    fn evpn(&self, controller: Option<&Obj>, conf: &mut Conf) -> Result<(), ()> {
        let tag = opt(self.vnet, "tag").ok_or(())?;
        let controller = controller.ok_or(())?;
        let (ip, iface) = match opt(controller, "fabric") {
            Some(fabric) => {
                let (_, own) = self.cfg.fabric_peers(&fabric, &self.host.node).ok_or(())?;
                (Some(own), None)
            }
            None => {
                let peers = list(controller, "peers");
                if peers.is_empty() {
                    return Err(());
                }
                let loopback = super::frr::node_loopback(self.cfg.controllers, &self.host.node);
                self.host.local_ip(&peers, loopback.as_deref()).unzip()
            }
        };
        let node = &self.host.node;
        let gateway = list(self.zone, "exitnodes").iter().any(|n| n == node);
        let local_routing = flag(self.zone, "exitnodes-local-routing");
        let suppress = !flag(self.zone, "disable-arp-nd-suppression");
        let port = opt(self.zone, "vxlan-port");
        let mtu = self.vxlan_mtu(iface.as_deref());
        let id = self.id;
        let vrf = format!("vrf_{id}");
        let vxlan = |vni: &str| {
            let mut l = vec![format!("vxlan-id {vni}")];
            if let Some(ip) = &ip {
                l.push(format!("vxlan-local-tunnelip {ip}"));
            }
            if let Some(p) = &port {
                l.push(format!("vxlan-port {p}"));
            }
            l.push("bridge-learning off".into());
            if suppress {
                l.push("bridge-arp-nd-suppress on".into());
            }
            l.push(format!("mtu {mtu}"));
            l
        };
        let vx = format!("vxlan_{}", self.vnet_id);
        add_once(conf, &vx, vxlan(&tag));
        let (mut l, fwd, _) = self.subnet_lines(gateway);
        let subnets = subnets_of(self.cfg.running_subnets, Some(self.vnet_id));
        let v6 = subnets
            .iter()
            .any(|(s, _)| s.gateway.as_deref().is_some_and(|g| g.contains(':')));
        if let Some(mac) = opt(self.zone, "mac") {
            l.push(format!("hwaddress {mac}"));
        }
        l.push(format!("bridge_ports {vx}"));
        l.push("bridge_stp off".into());
        l.push("bridge_fd 0".into());
        l.push(format!("mtu {mtu}"));
        if let Some(a) = opt(self.vnet, "alias") {
            l.push(format!("alias {a}"));
        }
        l.extend(fwd);
        if !subnets.is_empty() {
            l.push("arp-accept on".into());
        }
        l.push(format!("vrf {vrf}"));
        add_once(conf, self.vnet_id, l);
        let verb = if gateway { "del" } else { "add" };
        add_once(
            conf,
            &vrf,
            vec![
                "vrf-table auto".into(),
                format!("post-up ip route {verb} vrf {vrf} unreachable default metric 4278198272"),
            ],
        );
        if let Some(vni) = opt(self.zone, "vrf-vxlan") {
            let vrfvx = format!("vrfvx_{id}");
            add_once(conf, &vrfvx, vxlan(&vni));
            add_once(
                conf,
                &format!("vrfbr_{id}"),
                vec![
                    format!("bridge-ports {vrfvx}"),
                    "bridge_stp off".into(),
                    "bridge_fd 0".into(),
                    format!("mtu {mtu}"),
                    format!("vrf {vrf}"),
                ],
            );
        }
        if gateway && local_routing {
            let big = mtu
                .parse::<u32>()
                .map_or(mtu.clone(), |m| (m + 50).to_string());
            let (x, xp) = (format!("xvrf_{id}"), format!("xvrfp_{id}"));
            let mut l = vec!["link-type veth".into(), "address 10.255.255.1/30".into()];
            if v6 {
                l.push("address fe80::1/126".into());
            }
            l.push(format!("veth-peer-name {xp}"));
            l.push(format!("mtu {big}"));
            add_once(conf, &x, l);
            let mut l = vec!["link-type veth".into(), "address 10.255.255.2/30".into()];
            if v6 {
                l.push("address fe80::2/126".into());
            }
            l.push(format!("veth-peer-name {x}"));
            l.push(format!("vrf {vrf}"));
            l.push(format!("mtu {big}"));
            add_once(conf, &xp, l);
        }
        Ok(())
    }
}
