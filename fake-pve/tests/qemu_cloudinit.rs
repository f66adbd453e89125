//! Cloud-init over the wire: `GET .../cloudinit/dump` rendered as PVE
//! renders user data, network config (nocloud v1 and configdrive2) and
//! meta data; `GET/PUT .../cloudinit` with the changes a running VM's
//! drive does not hold yet (`[special:cloudinit]`).

mod common;

use common::{Auth, Pve, start_scenario};
use fake_pve::model::qemu::sha1_hex;
use serde_json::{Value, json};

const USERS: &str = "users:\n  - userid: audit@pve\n    password: auditpass\nacl:\n  - { path: /, roles: [PVEAuditor], users: [audit@pve] }\n";

async fn ok(pve: &Pve, auth: &Auth, r: &common::Resp) {
    let u = r.data().as_str().expect("a UPID").to_string();
    let st = pve.task_status(&u, auth).await;
    assert_eq!(st["exitstatus"], "OK", "{st}");
}

async fn dump(pve: &Pve, auth: &Auth, kind: &str) -> String {
    pve.get(
        &format!("/nodes/pve/qemu/100/cloudinit/dump?type={kind}"),
        auth,
    )
    .await
    .data()
    .as_str()
    .expect("text")
    .to_string()
}

/// `ssh-ed25519 AAAAC3 me@host` and a second key, URI-encoded as PVE
/// wants them, then form-encoded.
const KEYS: &str = "ssh-ed25519%2520AAAAC3%2520me%2540host%250Assh-rsa%2520AAAAB3%2520you%250A";

async fn vm(pve: &Pve, root: &Auth, extra: &str) {
    let r = pve
        .post(
            "/nodes/pve/qemu",
            root,
            &format!(
                "vmid=100&name=web&ide2=local-lvm%3Acloudinit&net0=virtio%3DBC%3A24%3A11%3AAA%3ABB%3ACC%2Cbridge%3Dvmbr0&net1=virtio%3DBC%3A24%3A11%3A00%3A00%3A01%2Cbridge%3Dvmbr0&ipconfig0=ip%3D10.0.0.5%2F24%2Cgw%3D10.0.0.1&ipconfig1=ip%3Ddhcp%2Cip6%3Dauto&ciuser=admin&cipassword=secret&sshkeys={KEYS}{extra}"
            ),
        )
        .await;
    ok(pve, root, &r).await;
}

#[tokio::test]
async fn nocloud_dump() {
    let pve = start_scenario(USERS).await;
    let root = pve.root().await;
    vm(
        &pve,
        &root,
        "&nameserver=1.1.1.1+9.9.9.9&searchdomain=example.com",
    )
    .await;
    let user = dump(&pve, &root, "user").await;
    assert_eq!(
        user,
        "#cloud-config\nhostname: web\nmanage_etc_hosts: true\nfqdn: web.example.com\nuser: admin\npassword: secret\nssh_authorized_keys:\n  - ssh-ed25519 AAAAC3 me@host\n  - ssh-rsa AAAAB3 you\nchpasswd:\n  expire: False\nusers:\n  - default\npackage_upgrade: true\n"
    );
    let network = dump(&pve, &root, "network").await;
    assert_eq!(
        network,
        "version: 1\nconfig:\n    - type: physical\n      name: eth0\n      mac_address: 'bc:24:11:aa:bb:cc'\n      subnets:\n      - type: static\n        address: '10.0.0.5'\n        netmask: '255.255.255.0'\n        gateway: '10.0.0.1'\n    - type: physical\n      name: eth1\n      mac_address: 'bc:24:11:00:00:01'\n      subnets:\n      - type: dhcp4\n      - type: ipv6_slaac\n    - type: nameserver\n      address:\n      - '1.1.1.1'\n      - '9.9.9.9'\n      search:\n      - 'example.com'\n"
    );
    let meta = dump(&pve, &root, "meta").await;
    assert_eq!(
        meta,
        format!(
            "instance-id: {}\n",
            sha1_hex(format!("{user}{network}").as_bytes())
        )
    );
    // An auditor sees the password masked; the meta data still hashes the
    // real one.
    let audit = pve.login_as("audit@pve", "auditpass").await;
    assert!(
        dump(&pve, &audit, "user")
            .await
            .contains("password: **********\n")
    );
    assert_eq!(dump(&pve, &audit, "meta").await, meta);
    pve.get("/nodes/pve/qemu/100/cloudinit/dump?type=vendor", &root)
        .await
        .assert_param_error(
            "type",
            "value 'vendor' does not have a value in the enumeration 'user, network, meta'",
        );
}

#[tokio::test]
async fn configdrive2_and_root_user() {
    let pve = start_scenario(USERS).await;
    let root = pve.root().await;
    vm(&pve, &root, "&citype=configdrive2&ciupgrade=0").await;
    pve.put(
        "/nodes/pve/qemu/100/config",
        &root,
        "ciuser=root&name=db.lan.example&ipconfig1=ip6%3D2001%3Adb8%3A%3A5%2F64%2Cgw6%3D2001%3Adb8%3A%3A1",
    )
    .await
    .data();
    let user = dump(&pve, &root, "user").await;
    assert!(
        user.starts_with("#cloud-config\nhostname: db\nmanage_etc_hosts: true\nfqdn: db.lan.example\nuser: root\ndisable_root: False\npassword: secret\n"),
        "{user}"
    );
    assert!(user.ends_with("chpasswd:\n  expire: False\n"), "{user}");
    let network = dump(&pve, &root, "network").await;
    // No name server configured: the node's resolver (its gateway).
    assert_eq!(
        network,
        "auto lo\niface lo inet loopback\n\n        dns_nameservers 192.0.2.1\nauto eth0\niface eth0 inet static\n        address 10.0.0.5\n        netmask 255.255.255.0\n        gateway 10.0.0.1\nauto eth1\niface eth1 inet6 static\n        address 2001:db8::5\n        netmask 64\n        gateway 2001:db8::1\n"
    );
    let meta = dump(&pve, &root, "meta").await;
    let uuid = sha1_hex(format!("{user}{network}").as_bytes());
    assert_eq!(
        meta,
        format!(
            "{{\n     \"uuid\": \"{uuid}\",\n     \"network_config\": {{ \"content_path\": \"/content/0000\" }}\n}}\n"
        )
    );
}

async fn pending(pve: &Pve, auth: &Auth) -> Vec<Value> {
    pve.get("/nodes/pve/qemu/100/cloudinit", auth)
        .await
        .data()
        .as_array()
        .cloned()
        .expect("list")
}

fn item<'a>(list: &'a [Value], key: &str) -> &'a Value {
    list.iter()
        .find(|i| i["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {list:?}"))
}

#[tokio::test]
async fn pending_changes_of_a_running_vm() {
    let pve = start_scenario(USERS).await;
    let root = pve.root().await;
    vm(&pve, &root, "&searchdomain=example.com").await;
    let l = pending(&pve, &root).await;
    assert_eq!(
        item(&l, "ciuser"),
        &json!({"key": "ciuser", "value": "admin"})
    );
    assert_eq!(
        item(&l, "cipassword"),
        &json!({"key": "cipassword", "value": "**********"})
    );
    // A stopped VM regenerates the drive at its next start: nothing is
    // recorded.
    pve.put("/nodes/pve/qemu/100/config", &root, "ciuser=ops")
        .await
        .data();
    assert_eq!(
        item(&pending(&pve, &root).await, "ciuser"),
        &json!({"key": "ciuser", "value": "ops"})
    );

    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let digest = pve.get("/nodes/pve/qemu/100/config", &root).await.data()["digest"].clone();
    pve.put(
        "/nodes/pve/qemu/100/config",
        &root,
        "ciuser=admin&nameserver=9.9.9.9&delete=searchdomain",
    )
    .await
    .data();
    let l = pending(&pve, &root).await;
    assert_eq!(l[0], json!({"key": "nameserver", "pending": "9.9.9.9"}));
    assert_eq!(
        item(&l, "ciuser"),
        &json!({"key": "ciuser", "value": "ops", "pending": "admin"})
    );
    assert_eq!(
        item(&l, "searchdomain"),
        &json!({"key": "searchdomain", "delete": 1})
    );
    // The section is part of the config file, hence of the digest.
    let c = pve.get("/nodes/pve/qemu/100/config", &root).await.data();
    assert_ne!(c["digest"], digest);
    assert_eq!(c["ciuser"], "admin");

    // Changing it back to what the drive holds clears that entry.
    pve.put("/nodes/pve/qemu/100/config", &root, "ciuser=ops")
        .await
        .data();
    assert_eq!(
        item(&pending(&pve, &root).await, "ciuser"),
        &json!({"key": "ciuser", "value": "ops"})
    );

    // PUT regenerates the drive: nothing pending any more.
    let d = pve
        .put("/nodes/pve/qemu/100/cloudinit", &root, "")
        .await
        .data();
    assert_eq!(d, Value::Null);
    let l = pending(&pve, &root).await;
    assert!(
        l.iter()
            .all(|i| i.get("pending").is_none() && i.get("delete").is_none()),
        "{l:?}"
    );
    assert!(l.iter().all(|i| i["key"] != "searchdomain"));
    pve.put("/nodes/pve/qemu/100/config", &root, "lock=backup")
        .await
        .data();
    pve.put("/nodes/pve/qemu/100/cloudinit", &root, "")
        .await
        .assert_error(500, "VM is locked (backup)\n");
}
