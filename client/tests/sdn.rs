//! The SDN calls (`api::sdn`) against an in-process fake-pve: a zone, a
//! VNet and a subnet made pending, applied, used by a VM's NIC and seen
//! in the PVE IPAM; every answer checked against the schema.

mod common;

use common::{MODES, checked_client, start};
use pve_client::Category;
use pve_client::api::sdn::{DhcpRange, SdnView};

#[tokio::test]
async fn zone_vnet_subnet_apply_and_ipam() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let sdn = pve.sdn();

        let areas = sdn.index().await.expect("index");
        assert!(areas.contains(&"zones".to_string()), "{areas:?}");

        sdn.zones()
            .create("lab", "simple", &[("ipam", "pve"), ("dhcp", "dnsmasq")])
            .await
            .expect("zone");
        let e = sdn
            .zones()
            .create("lab2", "vlan", &[])
            .await
            .expect_err("vlan needs a bridge");
        assert!(
            e.to_string()
                .contains("missing value for required option 'bridge'"),
            "{e}"
        );
        sdn.vnets()
            .create_vnet("labnet", &[("zone", "lab"), ("alias", "lab net")])
            .await
            .expect("vnet");
        let e = sdn
            .vnets()
            .create_vnet("tagged", &[("zone", "lab"), ("tag", "5")])
            .await
            .expect_err("no tags in a simple zone");
        assert!(
            e.to_string()
                .contains("vlan tag is not allowed on simple zone"),
            "{e}"
        );
        let range = DhcpRange {
            start: "10.10.0.100".into(),
            end: "10.10.0.199".into(),
        };
        sdn.subnets("labnet")
            .create(
                "10.10.0.0/24",
                &[("gateway", "10.10.0.1"), ("snat", "1")],
                std::slice::from_ref(&range),
            )
            .await
            .expect("subnet");

        let pending = sdn.zones().index(SdnView::Pending).await.expect("pending");
        let lab = pending.iter().find(|z| z.zone == "lab").expect("lab");
        assert_eq!(lab.state.as_deref(), Some("new"), "{mode:?}");
        assert!(
            sdn.zones()
                .index(SdnView::Running)
                .await
                .expect("running")
                .is_empty()
        );
        let vnet = sdn
            .vnets()
            .read("labnet", SdnView::Current)
            .await
            .expect("vnet");
        assert_eq!(vnet.zone.as_deref(), Some("lab"));
        assert!(vnet.digest.is_some());

        let upid = sdn.reload().await.expect("apply");
        assert!(upid.to_string().contains(":reloadnetworkall:"), "{upid}");
        let st = pve.tasks().wait(&upid).await.expect("task");
        assert_eq!(st.exitstatus.as_deref(), Some("OK"));
        let running = sdn.vnets().index(SdnView::Running).await.expect("running");
        assert_eq!(running.len(), 1);

        let subnets = sdn
            .subnets("labnet")
            .index(SdnView::Current)
            .await
            .expect("subnets");
        assert_eq!(subnets.len(), 1);
        assert_eq!(subnets[0].subnet, "lab-10.10.0.0-24");
        assert_eq!(subnets[0].cidr, "10.10.0.0/24");
        assert_eq!(subnets[0].dhcp_range, vec![range]);

        sdn.ipcreate("lab", "labnet", "10.10.0.50", Some("BC:24:11:AA:BB:CC"))
            .await
            .expect("ipcreate");
        let e = sdn
            .ipcreate("lab", "labnet", "10.10.0.50", None)
            .await
            .expect_err("taken");
        assert!(
            e.to_string().contains("IP '10.10.0.50' already exist"),
            "{e}"
        );
        let ips = sdn.ipamindex("pve").await.expect("ipam status");
        assert!(
            ips.iter()
                .any(|i| i.ip == "10.10.0.1" && i.gateway == Some(1)),
            "{ips:?}"
        );
        assert!(ips.iter().any(|i| i.ip == "10.10.0.50"), "{ips:?}");
        sdn.ipdelete("lab", "labnet", "10.10.0.50", None)
            .await
            .expect("ipdelete");

        let e = sdn.zones().delete("lab").await.expect_err("used by a vnet");
        assert_eq!(e.category(), Category::Server, "{e}");

        let names = checked.names();
        for want in [
            "GET index",
            "POST create",
            "GET read",
            "PUT reload",
            "GET ipamindex",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}

/// A VNet's firewall (`api::firewall::Scope::Vnet`) once the VNet is
/// applied, and the node's view of the applied zones and VNets.
#[tokio::test]
async fn vnet_firewall_and_node_status() {
    use pve_client::api::firewall::{RuleSpec, Scope};

    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let sdn = pve.sdn();
        let fw = pve.firewall();
        let scope = Scope::Vnet("labnet".into());

        sdn.zones()
            .create("lab", "simple", &[])
            .await
            .expect("zone");
        sdn.vnets()
            .create_vnet("labnet", &[("zone", "lab")])
            .await
            .expect("vnet");
        assert!(sdn.node("pve").zones().await.expect("zones").is_empty());
        let e = fw.get_rules(&scope).await.expect_err("not applied yet");
        assert!(e.to_string().contains("invalid vnet specified"), "{e}");

        let upid = sdn.reload().await.expect("apply");
        pve.tasks().wait(&upid).await.expect("task");

        let zones = sdn.node("pve").zones().await.expect("zones");
        assert_eq!(zones.len(), 1);
        assert_eq!(
            (zones[0].zone.as_str(), zones[0].status.as_str()),
            ("lab", "available")
        );
        let content = sdn.node("pve").zone_content("lab").await.expect("content");
        assert_eq!(content.len(), 1);
        assert_eq!(content[0].vnet, "labnet");
        assert_eq!(content[0].status.as_deref(), Some("available"));
        assert_eq!(content[0].statusmsg, None);

        fw.create_rule(
            &scope,
            &RuleSpec::new("forward", "ACCEPT")
                .macro_("ssh")
                .enable(true),
        )
        .await
        .expect("forward rule");
        let e = fw
            .create_rule(&scope, &RuleSpec::new("in", "ACCEPT"))
            .await
            .expect_err("no in rules on a VNet");
        assert!(
            e.to_string()
                .contains("invalid rule type 'in' for rule_env 'vnet'"),
            "{e}"
        );
        let rules = fw.get_rules(&scope).await.expect("rules");
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].get("macro"), Some("SSH"));
        let one = fw.get_rule(&scope, 0).await.expect("rule");
        assert_eq!(one.kind, "forward");
        fw.set_options(
            &scope,
            &[("enable", "1"), ("policy_forward", "DROP")],
            &[],
            None,
        )
        .await
        .expect("options");
        let opts = fw.get_options(&scope).await.expect("options");
        assert_eq!(
            opts.get("policy_forward").and_then(|v| v.as_str()),
            Some("DROP")
        );
        fw.delete_rule(&scope, 0, None).await.expect("delete");
        assert!(fw.get_rules(&scope).await.expect("rules").is_empty());

        let names = checked.names();
        for want in [
            "GET get_rules",
            "GET get_rule",
            "GET get_options",
            "GET index",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}

/// 9.2's evpn controllers (nodes, peer group, BGP mode, route maps) and
/// an evpn zone's secondary controllers, typed.
#[tokio::test]
async fn evpn_controllers_and_secondary_controllers() {
    for mode in MODES {
        let run = start().await;
        let (pve, _checked) = checked_client(&run, mode);
        let sdn = pve.sdn();
        sdn.route_maps()
            .create_route_map_entry("rmin", 10, "permit", &[])
            .await
            .expect("route map");
        let controllers = sdn.controllers();
        controllers
            .create("evpn1", "evpn", &[("asn", "65000"), ("peers", "10.0.0.1")])
            .await
            .expect("first evpn controller");
        let e = controllers
            .create("evpn2", "evpn", &[("asn", "65000"), ("peers", "10.0.0.2")])
            .await
            .expect_err("the same peer group");
        assert!(
            e.to_string().contains(
                "cannot have two controllers with same peer-group-name configured (VTEP)"
            ),
            "{e}"
        );
        controllers
            .create(
                "evpn2",
                "evpn",
                &[
                    ("asn", "65000"),
                    ("peers", "10.0.0.2"),
                    ("nodes", "pve"),
                    ("peer-group-name", "EDGE"),
                    ("bgp-mode", "external"),
                    ("route-map-in", "rmin"),
                ],
            )
            .await
            .expect("second evpn controller");
        let c = controllers
            .read("evpn2", SdnView::Current)
            .await
            .expect("read");
        assert_eq!(c.controller, "evpn2");
        assert_eq!(c.asn, Some(65000));
        assert_eq!(c.nodes.as_deref(), Some("pve"));
        assert_eq!(c.peer_group_name.as_deref(), Some("EDGE"));
        assert_eq!(c.bgp_mode.as_deref(), Some("external"));
        assert_eq!(c.route_map_in.as_deref(), Some("rmin"));
        assert!(c.route_map_out.is_none());
        let pending = controllers.index(SdnView::Pending).await.expect("pending");
        assert!(pending.iter().all(|c| c.state.as_deref() == Some("new")));

        let zones = sdn.zones();
        zones
            .create(
                "ev",
                "evpn",
                &[("controller", "evpn1"), ("vrf-vxlan", "10000")],
            )
            .await
            .expect("zone");
        zones
            .set_secondary_controllers("ev", &["evpn2"], None)
            .await
            .expect("secondary");
        let z = zones.read("ev", SdnView::Current).await.expect("zone");
        assert_eq!(z.secondary_controllers, vec!["evpn2"]);
        let e = controllers.delete("evpn2").await.expect_err("in use");
        assert!(
            e.to_string().contains("controller evpn2 is used by ev"),
            "{e}"
        );
        zones
            .set_secondary_controllers("ev", &[], None)
            .await
            .expect("none");
        let z = zones.read("ev", SdnView::Current).await.expect("zone");
        assert!(z.secondary_controllers.is_empty());
        controllers.delete("evpn2").await.expect("deleted");
    }
}

#[tokio::test]
async fn dry_run_and_the_evpn_tables() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let sdn = pve.sdn();
        sdn.controllers()
            .create(
                "evpn1",
                "evpn",
                &[("asn", "65000"), ("peers", "10.0.0.1,10.0.0.2")],
            )
            .await
            .expect("controller");
        sdn.zones()
            .create(
                "ev",
                "evpn",
                &[("controller", "evpn1"), ("vrf-vxlan", "10000")],
            )
            .await
            .expect("zone");
        sdn.vnets()
            .create_vnet("evn", &[("zone", "ev"), ("tag", "20000")])
            .await
            .expect("vnet");
        sdn.subnets("evn")
            .create("10.20.0.0/24", &[("gateway", "10.20.0.1")], &[])
            .await
            .expect("subnet");

        let d = sdn.dry_run("pve").await.expect("dry run");
        let ifaces = d.interfaces_diff.expect("interfaces diff");
        assert!(
            ifaces.starts_with("--- /etc/network/interfaces.d/sdn\t"),
            "{ifaces}"
        );
        assert!(ifaces.contains("\n+auto evn\n+iface evn\n"), "{ifaces}");
        let frr = d.frr_diff.expect("frr diff");
        assert!(frr.starts_with("--- /etc/frr/frr.conf\t"), "{frr}");
        assert!(frr.contains("\n+router bgp 65000\n"), "{frr}");
        assert!(frr.contains("\n+vrf vrf_ev\n+ vni 10000\n"), "{frr}");

        let upid = sdn.reload().await.expect("apply");
        pve.tasks().wait(&upid).await.expect("task");
        let d = sdn.dry_run("pve").await.expect("dry run");
        assert_eq!((d.frr_diff, d.interfaces_diff), (None, None));

        let routes = sdn.node("pve").ip_vrf("ev").await.expect("ip-vrf");
        let of = |ip: &str| routes.iter().find(|r| r.ip == ip).cloned();
        let connected = of("10.20.0.0/24").expect("the subnet");
        assert_eq!(
            (
                connected.protocol.as_str(),
                connected.metric,
                connected.nexthops
            ),
            ("connected", 0, vec!["evn".to_string()])
        );
        let default = of("0.0.0.0/0").expect("the default");
        assert_eq!(default.protocol, "kernel");
        assert!(
            sdn.node("pve")
                .mac_vrf("evn")
                .await
                .expect("mac-vrf")
                .is_empty()
        );
        let e = sdn
            .node("pve")
            .ip_vrf("nope")
            .await
            .expect_err("not applied");
        assert!(e.to_string().contains("zone does not exist"), "{e}");
        let names = checked.names();
        for want in ["GET dry-run", "GET ip-vrf", "GET mac-vrf"] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}
