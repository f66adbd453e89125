//! A node's network over the wire: the fresh interfaces, the pending
//! configuration with its diff, apply (`srvreload`) and revert, PVE's
//! refusals, and bridges that VMs can use only once applied.

mod common;

use common::{Auth, Pve, enc, start_scenario};
use serde_json::Value;

async fn pve() -> Pve {
    common::start().await
}

async fn list(pve: &Pve, auth: &Auth, query: &str) -> (Vec<Value>, Value) {
    let r = pve.get(&format!("/nodes/pve/network{query}"), auth).await;
    let data = r.data();
    let changes = r.json()["changes"].clone();
    (data.as_array().expect("a list").clone(), changes)
}

fn find<'a>(items: &'a [Value], iface: &str) -> Option<&'a Value> {
    items.iter().find(|i| i["iface"] == iface)
}

fn names(items: &[Value]) -> Vec<String> {
    let mut n: Vec<String> = items
        .iter()
        .map(|i| i["iface"].as_str().unwrap_or_default().to_string())
        .collect();
    n.sort();
    n
}

async fn task_end(pve: &Pve, auth: &Auth, upid: &str) -> (String, Vec<String>) {
    let st = pve.task_status(upid, auth).await;
    assert_eq!(st["status"], "stopped", "{st}");
    let log = pve
        .get(&format!("/nodes/pve/tasks/{}/log", enc(upid)), auth)
        .await
        .data();
    let lines = log
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l["t"].as_str().unwrap_or_default().to_string())
        .collect();
    (
        st["exitstatus"].as_str().unwrap_or_default().to_string(),
        lines,
    )
}

#[tokio::test]
async fn a_fresh_node_lists_its_nics_and_the_management_bridge() {
    let pve = pve().await;
    let root = pve.root().await;
    let (items, changes) = list(&pve, &root, "").await;
    assert_eq!(names(&items), ["eno1", "eno2", "vmbr0"]);
    assert_eq!(changes, Value::Null, "nothing pending");
    let br = find(&items, "vmbr0").expect("vmbr0");
    assert_eq!(br["type"], "bridge");
    assert_eq!(br["bridge_ports"], "eno1");
    assert_eq!(br["bridge_stp"], "off");
    assert_eq!(br["bridge_fd"], "0");
    assert_eq!(br["method"], "static");
    assert_eq!(br["method6"], "manual");
    assert_eq!(br["families"], serde_json::json!(["inet"]));
    assert_eq!(br["autostart"], 1);
    assert_eq!(br["active"], 1);
    assert_eq!(br["address"], "192.0.2.10");
    assert_eq!(br["netmask"], "24");
    assert_eq!(br["cidr"], "192.0.2.10/24");
    assert_eq!(br["gateway"], "192.0.2.1");
    let eno1 = find(&items, "eno1").expect("eno1");
    assert_eq!(eno1["type"], "eth");
    assert_eq!(eno1["exists"], 1);
    assert_eq!(eno1["active"], 1, "enslaved in vmbr0");
    assert_eq!(eno1.get("autostart"), None);
    let eno2 = find(&items, "eno2").expect("eno2");
    assert_eq!(eno2["exists"], 1);
    assert_eq!(eno2.get("active"), None, "no link");

    let (bridges, _) = list(&pve, &root, "?type=bridge").await;
    assert_eq!(names(&bridges), ["vmbr0"]);
    let (any, _) = list(&pve, &root, "?type=any_bridge").await;
    assert_eq!(names(&any), ["vmbr0"]);
    let (eth, _) = list(&pve, &root, "?type=eth").await;
    assert_eq!(names(&eth), ["eno1", "eno2"]);
    let (bonds, _) = list(&pve, &root, "?type=bond").await;
    assert!(bonds.is_empty());
    pve.get("/nodes/pve/network?type=wlan", &root)
        .await
        .assert_param_error(
            "type",
            "value 'wlan' does not have a value in the enumeration 'bridge, bond, eth, alias, vlan, fabric, OVSBridge, OVSBond, OVSPort, OVSIntPort, vnet, any_bridge, any_local_bridge, include_sdn'",
        );

    let one = pve.get("/nodes/pve/network/vmbr0", &root).await.data();
    assert_eq!(one["type"], "bridge");
    assert_eq!(one.get("iface"), None);
    pve.get("/nodes/pve/network/vmbr7", &root)
        .await
        .assert_param_error("iface", "interface does not exist");
}

#[tokio::test]
async fn a_created_bridge_is_pending_until_applied_and_vms_can_use_it_then() {
    let pve = start_scenario(
        "vms:\n  - vmid: 100\n    config: { net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr1' }\n",
    )
    .await;
    let root = pve.root().await;
    let r = pve
        .post(
            "/nodes/pve/network",
            &root,
            "iface=vmbr1&type=bridge&bridge_ports=eno2&autostart=1&cidr=10.10.0.1%2F16&comments=lab",
        )
        .await;
    assert_eq!(r.data(), Value::Null);

    let (items, changes) = list(&pve, &root, "").await;
    let br = find(&items, "vmbr1").expect("pending bridge listed");
    assert_eq!(br["bridge_ports"], "eno2");
    assert_eq!(br["address"], "10.10.0.1");
    assert_eq!(br["netmask"], "16");
    assert_eq!(br["cidr"], "10.10.0.1/16");
    assert_eq!(br["method"], "static");
    assert_eq!(br["autostart"], 1);
    assert_eq!(br["comments"], "lab\n");
    assert_eq!(br.get("active"), None, "not up before apply");
    let diff = changes.as_str().expect("a diff in changes");
    assert!(diff.starts_with("--- /etc/network/interfaces\t"), "{diff}");
    assert!(
        diff.contains("\n+++ /etc/network/interfaces.new\t"),
        "{diff}"
    );
    assert!(
        diff.contains("\n+auto vmbr1\n+iface vmbr1 inet static\n+\taddress 10.10.0.1/16\n"),
        "{diff}"
    );
    assert!(diff.contains("\n@@ -"), "{diff}");

    // Only the applied configuration counts for VMs.
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    let (exit, _) = task_end(&pve, &root, r.data().as_str().expect("upid")).await;
    assert_eq!(exit, "bridge 'vmbr1' does not exist");

    let r = pve.put("/nodes/pve/network", &root, "").await;
    let upid = r.data().as_str().expect("upid").to_string();
    assert!(upid.contains(":srvreload:networking:root@pam:"), "{upid}");
    let (exit, _) = task_end(&pve, &root, &upid).await;
    assert_eq!(exit, "OK");

    let (items, changes) = list(&pve, &root, "").await;
    assert_eq!(changes, Value::Null);
    let br = find(&items, "vmbr1").expect("applied bridge");
    assert_eq!(br["active"], 1);
    assert_eq!(find(&items, "eno2").expect("eno2")["active"], 1);
    let (bridges, _) = list(&pve, &root, "?type=any_local_bridge").await;
    assert_eq!(names(&bridges), ["vmbr0", "vmbr1"]);

    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    let (exit, _) = task_end(&pve, &root, r.data().as_str().expect("upid")).await;
    assert_eq!(exit, "OK");
}

#[tokio::test]
async fn revert_drops_pending_changes_and_delete_is_pending_too() {
    let pve = pve().await;
    let root = pve.root().await;
    pve.post("/nodes/pve/network", &root, "iface=vmbr5&type=bridge")
        .await
        .data();
    let (items, _) = list(&pve, &root, "").await;
    let br = find(&items, "vmbr5").expect("vmbr5");
    assert_eq!(br["bridge_ports"], "");
    assert_eq!(br["bridge_fd"], 0);
    assert_eq!(br["method"], "manual");
    assert_eq!(
        pve.delete("/nodes/pve/network", &root).await.data(),
        Value::Null
    );
    let (items, changes) = list(&pve, &root, "").await;
    assert!(find(&items, "vmbr5").is_none());
    assert_eq!(changes, Value::Null);

    // Deleting vmbr0 is only pending; eno1 stays a listed NIC.
    assert_eq!(
        pve.delete("/nodes/pve/network/vmbr0", &root).await.data(),
        Value::Null
    );
    let (items, changes) = list(&pve, &root, "").await;
    assert!(find(&items, "vmbr0").is_none());
    assert!(
        changes
            .as_str()
            .is_some_and(|d| d.contains("\n-auto vmbr0\n"))
    );
    pve.delete("/nodes/pve/network/vmbr0", &root)
        .await
        .assert_param_error("iface", "interface does not exist");
    pve.delete("/nodes/pve/network", &root).await.data();
    let (items, _) = list(&pve, &root, "").await;
    assert!(find(&items, "vmbr0").is_some());
}

#[tokio::test]
async fn updates_recompute_method_and_families() {
    let pve = pve().await;
    let root = pve.root().await;
    pve.put(
        "/nodes/pve/network/eno2",
        &root,
        "type=eth&address6=2001:db8::5&netmask6=64&mtu=9000",
    )
    .await
    .data();
    let one = pve.get("/nodes/pve/network/eno2", &root).await.data();
    assert_eq!(one["method"], "manual");
    assert_eq!(one["method6"], "static");
    assert_eq!(one["families"], serde_json::json!(["inet6"]));
    assert_eq!(one["cidr6"], "2001:db8::5/64");
    assert_eq!(one["mtu"], "9000");
    pve.put("/nodes/pve/network/eno2", &root, "type=eth&delete=mtu")
        .await
        .data();
    let one = pve.get("/nodes/pve/network/eno2", &root).await.data();
    assert_eq!(one.get("mtu"), None);
    assert_eq!(one["method6"], "manual", "address6 not in this request");
    pve.put("/nodes/pve/network/nope0", &root, "type=eth")
        .await
        .assert_param_error("iface", "interface does not exist");
    pve.put("/nodes/pve/network/eno2", &root, "")
        .await
        .assert_param_error("type", "property is missing and it is not optional");
}

#[tokio::test]
async fn refusals_in_pves_words() {
    let pve = pve().await;
    let root = pve.root().await;
    let post = |form: &'static str| {
        let pve = &pve;
        let root = root.clone();
        async move { pve.post("/nodes/pve/network", &root, form).await }
    };
    post("iface=vmbr0&type=bridge")
        .await
        .assert_param_error("iface", "interface already exists");
    post("iface=vmbr1&type=bridge&bridge_ports=eno1")
        .await
        .assert_param_error("bridge_ports", "eno1 is already used on interface 'vmbr0'.");
    post("iface=vmbr1&type=bridge&gateway=10.0.0.1&cidr=10.0.0.2%2F24")
        .await
        .assert_param_error(
            "gateway",
            "Default gateway already exists on interface 'vmbr0'.",
        );
    post("iface=vmbr1&type=bridge&cidr=10.0.0.2%2F24&address=10.0.0.3&netmask=255.255.255.0")
        .await
        .assert_param_error("address", "address conflicts with cidr");
    post("iface=vmbr1&type=bridge&address6=ff02::1&netmask6=64")
        .await
        .assert_param_error(
            "address",
            "ff02::1 with type 'MULTICAST', cannot be used as host IPv6 address.",
        );
    post("iface=vmbr1&type=bridge&bridge_ports=eno9")
        .await
        .assert_error(500, "bridge 'vmbr1' - unable to find bridge port 'eno9'\n");
    post("iface=eno1.5&type=vlan").await.data();
    pve.delete("/nodes/pve/network", &root).await.data();
    post("iface=eno7.5&type=vlan")
        .await
        .assert_error(500, "vlan 'eno7.5' - unable to find parent 'eno7'\n");
    post("iface=vlan5&type=vlan")
        .await
        .assert_error(500, "missing vlan-raw-device option\n");
    post("iface=ovs0&type=OVSBridge").await.assert_error(
        500,
        "Open VSwitch is not installed (need package 'openvswitch-switch')\n",
    );
    post("iface=x&type=bridge").await.assert_param_error(
        "iface",
        "invalid format - invalid network interface name 'x'\n",
    );
    post("iface=vmbr2&type=bridge&bridge_vids=,")
        .await
        .assert_param_error("bridge_vids", "VLAN list items are empty");
    // eno2 with an address cannot be bridged.
    pve.put(
        "/nodes/pve/network/eno2",
        &root,
        "type=eth&cidr=10.1.0.2%2F24",
    )
    .await
    .data();
    post("iface=vmbr2&type=bridge&bridge_ports=eno2")
        .await
        .assert_error(
            500,
            "iface eno2 - ip address can't be set on interface if bridged in vmbr2\n",
        );
    // Nothing refused was written.
    let (items, _) = list(&pve, &root, "").await;
    assert_eq!(names(&items), ["eno1", "eno2", "vmbr0"]);
}

#[tokio::test]
async fn bridges_are_listed_only_to_who_may_see_them() {
    let pve = start_scenario(
        "users:\n  - { userid: ops@pve, password: secret }\nacl:\n  - { path: /nodes/pve, roles: [PVEAuditor], users: [ops@pve] }\n",
    )
    .await;
    let ops = pve.login_as("ops@pve", "secret").await;
    let (items, _) = list(&pve, &ops, "").await;
    assert_eq!(names(&items), ["eno1", "eno2"]);
    let root = pve.root().await;
    let (items, _) = list(&pve, &root, "").await;
    assert_eq!(names(&items), ["eno1", "eno2", "vmbr0"]);
}
