use std::collections::BTreeMap;

use rstest::rstest;
use serde_json::{Value, json};

use super::vrf::GuestNic;
use super::{Host, HostIface, frr, interfaces};
use crate::model::sdn::Sdn;

/// A node with `vmbr0` on `eno1` holding `ip`/24 and the default route,
/// and a VLAN-aware `vmbr1` on `eno2`.
fn host(node: &str, ip: &str) -> Host {
    let mut ifaces = BTreeMap::new();
    ifaces.insert(
        "vmbr0".to_string(),
        HostIface {
            kind: "bridge".into(),
            address: Some(ip.into()),
            prefix: Some(24),
            gateway: Some("127.0.0.254".into()),
            ports: vec!["eno1".into()],
            ..HostIface::default()
        },
    );
    ifaces.insert(
        "vmbr1".to_string(),
        HostIface {
            kind: "bridge".into(),
            vlan_aware: true,
            ports: vec!["eno2".into()],
            ..HostIface::default()
        },
    );
    Host {
        node: node.into(),
        ifaces,
        physical: ["eno1", "eno2"].iter().map(|x| (*x).to_string()).collect(),
        ip: ip.into(),
    }
}

/// An SDN state whose running configuration (version 3) and
/// configuration as written are `cfg`.
fn applied(cfg: &Value) -> Sdn {
    let mut all = cfg.clone();
    let mut running = cfg.clone();
    running["version"] = json!(3);
    running["frr_written"] = json!(cfg.get("controllers").is_some());
    all["running"] = running;
    serde_json::from_value(all).expect("sdn state")
}

fn ifaces_of(sdn: &Sdn, h: &Host) -> String {
    interfaces::generate(&sdn.running_compiled().expect("applied"), h)
}

fn frr_of(sdn: &Sdn, h: &Host) -> String {
    let c = sdn.running_compiled().expect("applied");
    frr::render(&h.node, &frr::generate(&c, h))
}

fn evpn_cfg(zone_extra: &Value) -> Value {
    let mut zone = json!({"type": "evpn", "controller": "ctl", "vrf-vxlan": 10000,
        "mac": "BC:24:11:00:00:01"});
    for (k, v) in zone_extra.as_object().expect("object") {
        zone[k] = v.clone();
    }
    json!({
        "controllers": {"ctl": {"type": "evpn", "asn": 65000,
            "peers": "127.0.0.1,127.0.0.2,127.0.0.3"}},
        "zones": {"ev": zone},
        "vnets": {"vn1": {"type": "vnet", "zone": "ev", "tag": 11000}},
        "subnets": {"ev-10.0.1.0-24": {"type": "subnet", "vnet": "vn1",
            "gateway": "10.0.1.1", "snat": 1}},
    })
}

#[rstest]
fn a_simple_zone_gets_a_bridge_with_its_gateway_and_snat() {
    let sdn = applied(&json!({
        "zones": {"sz": {"type": "simple", "mtu": 1400}},
        "vnets": {"sv": {"type": "vnet", "zone": "sz", "alias": "lab"}},
        "subnets": {"sz-10.9.0.0-24": {"type": "subnet", "vnet": "sv",
            "gateway": "10.9.0.1", "snat": 1}},
    }));
    let text = ifaces_of(&sdn, &host("pve1", "127.0.0.1"));
    assert_eq!(
        text,
        "#version:3\n\nauto sv\niface sv\n\taddress 10.9.0.1/24\n\
         \tpost-up iptables -t nat -A POSTROUTING -s '10.9.0.0/24' -o vmbr0 -j SNAT --to-source 127.0.0.1\n\
         \tpost-down iptables -t nat -D POSTROUTING -s '10.9.0.0/24' -o vmbr0 -j SNAT --to-source 127.0.0.1\n\
         \tpost-up iptables -t raw -I PREROUTING -i fwbr+ -j CT --zone 1\n\
         \tpost-down iptables -t raw -D PREROUTING -i fwbr+ -j CT --zone 1\n\
         \tbridge_ports none\n\tbridge_stp off\n\tbridge_fd 0\n\tmtu 1400\n\talias lab\n\tip-forward on\n"
    );
}

#[rstest]
#[case::plain_bridge(
    "vmbr0",
    "\nauto ln_v10\niface ln_v10\n\tlink-type veth\n\tveth-peer-name pr_v10\n\nauto pr_v10\niface pr_v10\n\tlink-type veth\n\tveth-peer-name ln_v10\n\nauto v10\niface v10\n\tbridge_ports ln_v10\n\tbridge_stp off\n\tbridge_fd 0\n\nauto vmbr0v10\niface vmbr0v10\n\tbridge_ports  eno1.10 pr_v10\n\tbridge_stp off\n\tbridge_fd 0\n"
)]
#[case::vlan_aware_bridge(
    "vmbr1",
    "\nauto v10\niface v10\n\tbridge_ports vmbr1.10\n\tbridge_stp off\n\tbridge_fd 0\n"
)]
fn a_vlan_zone_links_the_vnet_to_its_bridge(#[case] bridge: &str, #[case] body: &str) {
    let sdn = applied(&json!({
        "zones": {"vz": {"type": "vlan", "bridge": bridge}},
        "vnets": {"v10": {"type": "vnet", "zone": "vz", "tag": 10}},
    }));
    assert_eq!(
        ifaces_of(&sdn, &host("pve1", "127.0.0.1")),
        format!("#version:3\n{body}")
    );
}

#[rstest]
fn a_vlan_zone_on_a_missing_bridge_leaves_the_vnet_out() {
    let sdn = applied(&json!({
        "zones": {"vz": {"type": "vlan", "bridge": "vmbr9"}},
        "vnets": {"v10": {"type": "vnet", "zone": "vz", "tag": 10}},
    }));
    assert_eq!(ifaces_of(&sdn, &host("pve1", "127.0.0.1")), "#version:3\n");
}

#[rstest]
fn a_qinq_zone_stacks_the_service_vlan_under_a_zone_bridge() {
    let sdn = applied(&json!({
        "zones": {"qz": {"type": "qinq", "bridge": "vmbr0", "tag": 20, "vlan-protocol": "802.1ad"}},
        "vnets": {"qv": {"type": "vnet", "zone": "qz", "tag": 30}},
    }));
    assert_eq!(
        ifaces_of(&sdn, &host("pve1", "127.0.0.1")),
        "#version:3\n\nauto ln_qz\niface ln_qz\n\tlink-type veth\n\tveth-peer-name pr_qz\n\n\
         auto pr_qz\niface pr_qz\n\tlink-type veth\n\tveth-peer-name ln_qz\n\n\
         auto qv\niface qv\n\tbridge_ports z_qz.30\n\tbridge_stp off\n\tbridge_fd 0\n\n\
         auto sv_qz\niface sv_qz\n\tvlan-raw-device eno1\n\tvlan-id 20\n\tvlan-protocol 802.1ad\n\n\
         auto z_qz\niface z_qz\n\tbridge-stp off\n\tbridge-ports sv_qz ln_qz\n\tbridge-fd 0\n\
         \tbridge-vlan-aware yes\n\tbridge-vids 2-4094\n"
    );
}

#[rstest]
fn a_vxlan_zone_tunnels_to_the_other_peers() {
    let sdn = applied(&json!({
        "zones": {"xz": {"type": "vxlan", "peers": "127.0.0.1,127.0.0.2", "vxlan-port": 4790}},
        "vnets": {"xv": {"type": "vnet", "zone": "xz", "tag": 100, "vlanaware": 1}},
    }));
    assert_eq!(
        ifaces_of(&sdn, &host("pve1", "127.0.0.1")),
        "#version:3\n\nauto vxlan_xv\niface vxlan_xv\n\tvxlan-id 100\n\tvxlan_remoteip 127.0.0.2\n\
         \tvxlan-port 4790\n\tmtu 1450\n\n\
         auto xv\niface xv\n\tbridge_ports vxlan_xv\n\tbridge_stp off\n\tbridge_fd 0\n\
         \tbridge-vlan-aware yes\n\tbridge-vids 2-4094\n\tmtu 1450\n"
    );
}

#[rstest]
fn a_vxlan_vnet_without_tag_is_left_out() {
    let sdn = applied(&json!({
        "zones": {"xz": {"type": "vxlan", "peers": "127.0.0.1"}},
        "vnets": {"xv": {"type": "vnet", "zone": "xz"}},
    }));
    assert_eq!(ifaces_of(&sdn, &host("pve1", "127.0.0.1")), "#version:3\n");
}

#[rstest]
#[case::member(
    "pve2",
    "\tpost-up ip route add vrf vrf_ev unreachable default metric 4278198272\n",
    ""
)]
#[case::exit_node(
    "pve1",
    "\tpost-up ip route del vrf vrf_ev unreachable default metric 4278198272\n",
    "\tpost-up iptables -t nat -A POSTROUTING -s '10.0.1.0/24' -o vmbr0 -j SNAT --to-source 127.0.0.1\n\
     \tpost-down iptables -t nat -D POSTROUTING -s '10.0.1.0/24' -o vmbr0 -j SNAT --to-source 127.0.0.1\n\
     \tpost-up iptables -t raw -I PREROUTING -i fwbr+ -j CT --zone 1\n\
     \tpost-down iptables -t raw -D PREROUTING -i fwbr+ -j CT --zone 1\n"
)]
fn an_evpn_zone_gets_vxlan_vrf_and_l3vni_interfaces(
    #[case] node: &str,
    #[case] vrf_route: &str,
    #[case] snat: &str,
) {
    let sdn = applied(&evpn_cfg(&json!({"exitnodes": "pve1"})));
    let ip = if node == "pve1" {
        "127.0.0.1"
    } else {
        "127.0.0.2"
    };
    let text = ifaces_of(&sdn, &host(node, ip));
    let expected = format!(
        "#version:3\n\n\
         auto vn1\niface vn1\n\taddress 10.0.1.1/24\n{snat}\thwaddress BC:24:11:00:00:01\n\
         \tbridge_ports vxlan_vn1\n\tbridge_stp off\n\tbridge_fd 0\n\tmtu 1450\n\tip-forward on\n\
         \tarp-accept on\n\tvrf vrf_ev\n\n\
         auto vrf_ev\niface vrf_ev\n\tvrf-table auto\n{vrf_route}\n\
         auto vrfbr_ev\niface vrfbr_ev\n\tbridge-ports vrfvx_ev\n\tbridge_stp off\n\tbridge_fd 0\n\
         \tmtu 1450\n\tvrf vrf_ev\n\n\
         auto vrfvx_ev\niface vrfvx_ev\n\tvxlan-id 10000\n\tvxlan-local-tunnelip {ip}\n\
         \tbridge-learning off\n\tbridge-arp-nd-suppress on\n\tmtu 1450\n\n\
         auto vxlan_vn1\niface vxlan_vn1\n\tvxlan-id 11000\n\tvxlan-local-tunnelip {ip}\n\
         \tbridge-learning off\n\tbridge-arp-nd-suppress on\n\tmtu 1450\n"
    );
    assert_eq!(text, expected);
}

#[rstest]
fn a_zone_restricted_to_other_nodes_generates_nothing_here() {
    let sdn = applied(&json!({
        "zones": {"sz": {"type": "simple", "nodes": "pve2"}},
        "vnets": {"sv": {"type": "vnet", "zone": "sz"}},
    }));
    assert_eq!(ifaces_of(&sdn, &host("pve1", "127.0.0.1")), "#version:3\n");
}

/// Lines joined as a file holds them.
fn lines(l: &[&str]) -> String {
    let mut s = l.join("\n");
    s.push('\n');
    s
}

#[rstest]
fn an_evpn_member_peers_with_the_other_vteps() {
    let sdn = applied(&evpn_cfg(&json!({})));
    assert_eq!(
        frr_of(&sdn, &host("pve1", "127.0.0.1")),
        lines(&[
            "frr version 10.4.1",
            "frr defaults datacenter",
            "hostname pve1",
            "log syslog informational",
            "service integrated-vtysh-config",
            "!",
            "vrf vrf_ev",
            " vni 10000",
            "exit-vrf",
            "!",
            "router bgp 65000",
            " bgp router-id 127.0.0.1",
            " no bgp hard-administrative-reset",
            " no bgp default ipv4-unicast",
            " coalesce-time 1000",
            " no bgp graceful-restart notification",
            " neighbor VTEP peer-group",
            " neighbor VTEP remote-as 65000",
            " neighbor VTEP bfd",
            " neighbor 127.0.0.2 peer-group VTEP",
            " neighbor 127.0.0.3 peer-group VTEP",
            " !",
            " address-family l2vpn evpn",
            "  neighbor VTEP activate",
            "  neighbor VTEP route-map MAP_VTEP_IN in",
            "  neighbor VTEP route-map MAP_VTEP_OUT out",
            "  advertise-all-vni",
            " exit-address-family",
            "exit",
            "!",
            "router bgp 65000 vrf vrf_ev",
            " bgp router-id 127.0.0.1",
            " no bgp hard-administrative-reset",
            " no bgp graceful-restart notification",
            "exit",
            "!",
            "route-map MAP_VTEP_IN permit 1",
            "exit",
            "!",
            "route-map MAP_VTEP_OUT permit 1",
            "exit",
            "!",
            "line vty",
            "!",
        ])
    );
}

#[rstest]
fn an_exit_node_originates_the_default_and_filters_the_others() {
    let mut cfg = evpn_cfg(&json!({"exitnodes": "pve1"}));
    cfg["zones"]["other"] = json!({"type": "simple"});
    cfg["vnets"]["ov"] = json!({"type": "vnet", "zone": "other"});
    cfg["subnets"]["other-10.7.0.0-16"] = json!({"type": "subnet", "vnet": "ov"});
    let text = frr_of(&applied(&cfg), &host("pve1", "127.0.0.1"));
    for part in [
        "!\nvrf vrf_ev\n vni 10000\n ip route 10.7.0.0/16 null0\nexit-vrf\n",
        " !\n address-family ipv4 unicast\n  import vrf vrf_ev\n exit-address-family\n",
        " !\n address-family ipv4 unicast\n  redistribute connected\n exit-address-family\n",
        " !\n address-family l2vpn evpn\n  default-originate ipv4\n  default-originate ipv6\n exit-address-family\n",
        "!\nip prefix-list only_default seq 1 permit 0.0.0.0/0\n!\nipv6 prefix-list only_default_v6 seq 1 permit ::/0\n",
        "!\nroute-map MAP_VTEP_IN deny 1\n match ip address prefix-list only_default\nexit\n\
         !\nroute-map MAP_VTEP_IN deny 2\n match ipv6 address prefix-list only_default_v6\nexit\n\
         !\nroute-map MAP_VTEP_IN permit 3\nexit\n",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
}

#[rstest]
fn a_secondary_exit_node_announces_its_default_with_a_worse_metric() {
    let cfg = evpn_cfg(&json!({"exitnodes": "pve1,pve2", "exitnodes-primary": "pve1"}));
    let text = frr_of(&applied(&cfg), &host("pve2", "127.0.0.2"));
    assert!(text.contains(
        "!\nroute-map MAP_VTEP_OUT permit 1\n match ip address prefix-list only_default\n set metric 200\nexit\n"
    ));
    assert!(text.contains("!\nroute-map MAP_VTEP_IN permit 1\nexit\n"));
}

#[rstest]
fn bgp_and_isis_controllers_configure_their_node_only() {
    let mut cfg = evpn_cfg(&json!({}));
    cfg["controllers"]["bgp-pve1"] = json!({"type": "bgp", "node": "pve1", "asn": 65001,
        "peers": "127.0.0.254", "ebgp": 1, "loopback": "vmbr0"});
    cfg["controllers"]["isis-pve1"] = json!({"type": "isis", "node": "pve1",
        "isis-domain": "dom", "isis-net": "49.0001.1720.2000.0001.00", "isis-ifaces": "eno2,eno1"});
    let sdn = applied(&cfg);
    let text = frr_of(&sdn, &host("pve1", "127.0.0.1"));
    for part in [
        lines(&[
            "router bgp 65001",
            " bgp router-id 127.0.0.1",
            " no bgp default ipv4-unicast",
            " coalesce-time 1000",
            " bgp disable-ebgp-connected-route-check",
            " neighbor BGP peer-group",
            " neighbor BGP remote-as external",
        ]),
        lines(&[
            " neighbor VTEP remote-as external",
            " neighbor VTEP bfd",
            " neighbor VTEP ebgp-multihop 10",
            " neighbor VTEP update-source vmbr0",
        ]),
        lines(&["  autort as 65000"]),
        lines(&[
            "  network 127.0.0.1/32",
            "  neighbor BGP activate",
            "  neighbor BGP soft-reconfiguration inbound",
        ]),
        lines(&[
            "!",
            "router isis dom",
            " net 49.0001.1720.2000.0001.00",
            " redistribute ipv4 connected level-1",
            " redistribute ipv6 connected level-1",
            " log-adjacency-changes",
            "exit",
            "!",
            "interface eno1",
            " ip router isis dom",
            "exit",
        ]),
        lines(&[
            "!",
            "ip prefix-list loopbacks_ips seq 10 permit 0.0.0.0/0 le 32",
        ]),
        lines(&[
            "!",
            "route-map correct_src permit 1",
            " match ip address prefix-list loopbacks_ips",
            " set src 127.0.0.1",
            "exit",
        ]),
        lines(&[
            "!",
            "ip protocol bgp route-map correct_src",
            "!",
            "line vty",
        ]),
    ] {
        assert!(text.contains(&part), "missing {part:?} in\n{text}");
    }
    let other = frr_of(&sdn, &host("pve2", "127.0.0.2"));
    assert!(!other.contains("router isis") && !other.contains("neighbor BGP"));
}

#[rstest]
fn nothing_pending_gives_no_diff_and_a_change_gives_both() {
    let mut sdn = applied(&evpn_cfg(&json!({})));
    let h = host("pve1", "127.0.0.1");
    let none = sdn.dry_run(&h, 1_000, "/proc/1/fd/11", "/proc/1/fd/12");
    assert_eq!((none.frr, none.interfaces), (None, None));
    let mut cfg = serde_json::to_value(&sdn).expect("json");
    cfg["vnets"]["vn2"] = json!({"type": "vnet", "zone": "ev", "tag": 12000});
    cfg["zones"]["ev"]["exitnodes"] = json!("pve1");
    sdn = serde_json::from_value(cfg).expect("sdn");
    sdn.mark_applied(0);
    let d = sdn.dry_run(&h, 86_400, "/proc/1/fd/11", "/proc/1/fd/12");
    let ifaces = d.interfaces.expect("interfaces diff");
    assert!(ifaces.starts_with(
        "--- /etc/network/interfaces.d/sdn\t1970-01-01 00:00:00.000000000 +0000\n\
         +++ /proc/1/fd/12\t1970-01-02 00:00:00.000000000 +0000\n@@ "
    ));
    assert!(ifaces.contains("+auto vn2\n+iface vn2\n"));
    let frr = d.frr.expect("frr diff");
    assert!(
        frr.contains("+ default-originate ipv4\n") || frr.contains("+  default-originate ipv4\n")
    );
}

#[rstest]
fn before_any_apply_the_package_frr_conf_is_compared() {
    let sdn: Sdn = serde_json::from_value(evpn_cfg(&json!({}))).expect("sdn");
    let d = sdn.dry_run(&host("pve1", "127.0.0.1"), 0, "/a", "/b");
    let frr = d.frr.expect("frr diff");
    assert!(frr.contains("\n-# default to using syslog."));
    assert!(frr.contains("\n+frr version 10.4.1\n"));
    assert!(
        d.interfaces
            .expect("interfaces")
            .contains("\n+#version:1\n")
    );
}

fn hosts() -> BTreeMap<String, Host> {
    [
        ("pve1", "127.0.0.1"),
        ("pve2", "127.0.0.2"),
        ("pve3", "127.0.0.3"),
    ]
    .into_iter()
    .map(|(n, ip)| (n.to_string(), host(n, ip)))
    .collect()
}

fn nics() -> Vec<GuestNic> {
    vec![
        GuestNic {
            node: "pve2".into(),
            bridge: "vn1".into(),
            mac: "BC:24:11:AA:00:02".into(),
            ips: vec!["10.0.1.20".into()],
        },
        GuestNic {
            node: "pve1".into(),
            bridge: "vn1".into(),
            mac: "BC:24:11:AA:00:01".into(),
            ips: vec!["10.0.1.10".into()],
        },
        GuestNic {
            node: "pve3".into(),
            bridge: "vn1".into(),
            mac: "BC:24:11:AA:00:03".into(),
            ips: Vec::new(),
        },
    ]
}

#[rstest]
fn the_mac_vrf_holds_every_vtep_s_guests_with_an_address() {
    let sdn = applied(&evpn_cfg(&json!({})));
    let routes = sdn.mac_vrf("vn1", &hosts(), &nics());
    let got: Vec<(String, String, String)> = routes
        .into_iter()
        .map(|r| (r.mac, r.ip, r.nexthop))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "bc:24:11:aa:00:01".into(),
                "10.0.1.10".into(),
                "127.0.0.1".into()
            ),
            (
                "bc:24:11:aa:00:02".into(),
                "10.0.1.20".into(),
                "127.0.0.2".into()
            ),
        ]
    );
}

#[rstest]
#[case::no_exit_nodes(json!({}), vec![("0.0.0.0/0", "kernel", 8192, vec![])])]
#[case::primary_exit(
    json!({"exitnodes": "pve2,pve3", "exitnodes-primary": "pve3"}),
    vec![("0.0.0.0/0", "bgp", 0, vec!["127.0.0.3"])]
)]
#[case::two_exits(
    json!({"exitnodes": "pve2,pve3"}),
    vec![("0.0.0.0/0", "bgp", 0, vec!["127.0.0.2", "127.0.0.3"])]
)]
fn the_ip_vrf_holds_subnets_remote_guests_and_the_default(
    #[case] zone: Value,
    #[case] default: Vec<(&str, &str, u32, Vec<&str>)>,
) {
    let sdn = applied(&evpn_cfg(&zone));
    let routes = sdn.ip_vrf("pve1", "ev", &hosts(), &nics());
    let got: Vec<(String, &str, u32, Vec<String>)> = routes
        .into_iter()
        .map(|r| (r.ip, r.protocol, r.metric, r.nexthops))
        .collect();
    let mut want: Vec<(String, &str, u32, Vec<String>)> = default
        .iter()
        .map(|(ip, p, m, n)| {
            (
                ip.to_string(),
                *p,
                *m,
                n.iter().map(|x| x.to_string()).collect(),
            )
        })
        .collect();
    want.extend([
        (
            "10.0.1.0/24".to_string(),
            "connected",
            0,
            vec!["vn1".to_string()],
        ),
        (
            "10.0.1.1/32".to_string(),
            "local",
            0,
            vec!["vn1".to_string()],
        ),
        (
            "10.0.1.20/32".to_string(),
            "bgp",
            0,
            vec!["127.0.0.2".to_string()],
        ),
    ]);
    if let Some((_, "bgp", _, hops)) = want.first().cloned() {
        want.push((
            "::/0".into(),
            "bgp",
            0,
            hops.iter().map(|h| format!("::ffff:{h}")).collect(),
        ));
    }
    assert_eq!(got, want);
}

/// An EVPN controller on an OpenFabric fabric `of1` of three nodes,
/// applied.
fn on_fabric() -> Sdn {
    let mut sdn: Sdn = serde_json::from_value(json!({
        "controllers": {"ctl": {"type": "evpn", "asn": 65000, "fabric": "of1"}},
        "zones": {"ev": {"type": "evpn", "controller": "ctl", "vrf-vxlan": 10000}},
        "vnets": {"vn1": {"type": "vnet", "zone": "ev", "tag": 11000}},
    }))
    .expect("sdn");
    let p = |pairs: &[(&str, &str)]| -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), json!(v)))
            .collect()
    };
    sdn.add_fabric(&p(&[
        ("id", "of1"),
        ("protocol", "openfabric"),
        ("ip_prefix", "127.0.100.0/24"),
    ]))
    .expect("fabric");
    for (node, ip) in [
        ("pve1", "127.0.100.1"),
        ("pve2", "127.0.100.2"),
        ("pve3", "127.0.100.3"),
    ] {
        let mut params = p(&[
            ("fabric_id", "of1"),
            ("node_id", node),
            ("protocol", "openfabric"),
            ("ip", ip),
        ]);
        params.insert("interfaces".into(), json!(["name=eno2"]));
        sdn.add_fabric_node(&params, &mut crate::model::tests::rq())
            .expect("fabric node");
    }
    sdn.commit(None, true).expect("applied");
    sdn
}

#[rstest]
fn a_controller_on_a_fabric_peers_with_the_fabric_s_nodes() {
    let sdn = on_fabric();
    let h = host("pve1", "127.0.0.1");
    let text = frr_of(&sdn, &h);
    for part in [
        lines(&[
            "router bgp 65000",
            " bgp router-id 127.0.100.1",
            " no bgp hard-administrative-reset",
        ]),
        lines(&[
            " neighbor VTEP bfd",
            " neighbor VTEP update-source dummy_of1",
            " neighbor 127.0.100.2 peer-group VTEP",
            " neighbor 127.0.100.3 peer-group VTEP",
        ]),
    ] {
        assert!(text.contains(&part), "missing {part:?} in\n{text}");
    }
    let ifaces = ifaces_of(&sdn, &h);
    assert!(
        ifaces.contains("\tvxlan-id 11000\n\tvxlan-local-tunnelip 127.0.100.1\n"),
        "{ifaces}"
    );
    let nics = vec![GuestNic {
        node: "pve2".into(),
        bridge: "vn1".into(),
        mac: "BC:24:11:AA:00:02".into(),
        ips: vec!["10.0.1.20".into()],
    }];
    let routes = sdn.mac_vrf("vn1", &hosts(), &nics);
    assert_eq!(routes.len(), 1);
    assert_eq!(routes[0].nexthop, "127.0.100.2");
}
