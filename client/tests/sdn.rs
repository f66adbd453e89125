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
