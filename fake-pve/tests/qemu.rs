//! QEMU VMs over the wire: create with disk allocation, config with
//! pending changes and digests, power tasks and their refusals, destroy,
//! and how the cluster views reflect VMs.

mod common;

use common::{Auth, Pve, builder, enc, start_scenario, start_with};
use fake_pve::{Latency, Scenario};
use serde_json::Value;

const GIB: u64 = 1 << 30;

async fn pve() -> Pve {
    common::start().await
}

fn upid(r: &common::Resp) -> String {
    r.data().as_str().expect("a UPID").to_string()
}

async fn log(pve: &Pve, auth: &Auth, upid: &str) -> Vec<String> {
    let r = pve
        .get(
            &format!("/nodes/pve/tasks/{}/log?limit=500", enc(upid)),
            auth,
        )
        .await;
    r.data()
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l["t"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Runs a task call and answers its exit status and log.
async fn task(pve: &Pve, auth: &Auth, r: &common::Resp) -> (String, Vec<String>) {
    let u = upid(r);
    let st = pve.task_status(&u, auth).await;
    assert_eq!(st["status"], "stopped", "{st}");
    (
        st["exitstatus"].as_str().unwrap_or_default().to_string(),
        log(pve, auth, &u).await,
    )
}

async fn create(pve: &Pve, auth: &Auth, form: &str) -> (String, Vec<String>) {
    let r = pve.post("/nodes/pve/qemu", auth, form).await;
    task(pve, auth, &r).await
}

async fn config(pve: &Pve, auth: &Auth, vmid: u32) -> Value {
    pve.get(&format!("/nodes/pve/qemu/{vmid}/config"), auth)
        .await
        .data()
}

async fn power(pve: &Pve, auth: &Auth, vmid: u32, action: &str, form: &str) -> common::Resp {
    pve.post(
        &format!("/nodes/pve/qemu/{vmid}/status/{action}"),
        auth,
        form,
    )
    .await
}

async fn status(pve: &Pve, auth: &Auth, vmid: u32) -> Value {
    pve.get(&format!("/nodes/pve/qemu/{vmid}/status/current"), auth)
        .await
        .data()
}

const MINIMAL: &str =
    "vmid=100&name=test&memory=2048&cores=2&net0=virtio%2Cbridge%3Dvmbr0&scsi0=local-lvm%3A8";

fn is_mac(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 6
        && parts[..3] == ["BC", "24", "11"]
        && parts.iter().all(|p| {
            p.len() == 2
                && p.chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
        })
}

#[tokio::test]
async fn create_stores_the_canonical_config() {
    let pve = pve().await;
    let root = pve.root().await;
    let (exit, lines) = create(&pve, &root, MINIMAL).await;
    assert_eq!(exit, "OK", "{lines:?}");
    assert_eq!(
        lines,
        [
            "  Logical volume \"vm-100-disk-0\" created.",
            "scsi0: successfully created disk 'local-lvm:vm-100-disk-0,size=8G'",
            "TASK OK"
        ]
    );
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["boot"], "order=scsi0;net0");
    assert_eq!(c["cores"], 2);
    assert_eq!(c["memory"], "2048");
    assert_eq!(c["name"], "test");
    assert_eq!(c["scsi0"], "local-lvm:vm-100-disk-0,size=8G");
    let net = c["net0"].as_str().expect("net0");
    let (model, rest) = net.split_once(',').expect("two parts");
    assert_eq!(rest, "bridge=vmbr0");
    let mac = model.strip_prefix("virtio=").expect("virtio=MAC");
    assert!(is_mac(mac), "{net}");
    assert_eq!(
        c["meta"],
        format!("creation-qemu=11.0.2,ctime={}", common::T0).as_str()
    );
    assert!(c["smbios1"].as_str().expect("smbios1").starts_with("uuid="));
    assert_eq!(c["vmgenid"].as_str().expect("vmgenid").len(), 36);
    let digest = c["digest"].as_str().expect("digest");
    assert_eq!(digest.len(), 40);
    assert!(digest.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(c.get("lock").is_none());
    assert!(c.get("vmid").is_none());
    let mut keys: Vec<&String> = c.as_object().expect("object").keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "boot", "cores", "digest", "memory", "meta", "name", "net0", "scsi0", "smbios1",
            "vmgenid"
        ]
    );

    // The volume shows up in the storage's content and usage.
    let content = pve
        .get("/nodes/pve/storage/local-lvm/content", &root)
        .await
        .data();
    assert_eq!(content.as_array().map(Vec::len), Some(1), "{content}");
    assert_eq!(content[0]["volid"], "local-lvm:vm-100-disk-0");
    assert_eq!(content[0]["size"], 8 * GIB);
    assert_eq!(content[0]["vmid"], 100);
    assert_eq!(content[0]["format"], "raw");
    let res = pve
        .get("/cluster/resources?type=storage", &root)
        .await
        .data();
    let lvm = res
        .as_array()
        .expect("list")
        .iter()
        .find(|s| s["storage"] == "local-lvm")
        .expect("local-lvm");
    assert_eq!(lvm["disk"], 8 * GIB);

    // A second create numbers per storage and allocates the cloud-init drive.
    let (exit, lines) = create(
        &pve,
        &root,
        "vmid=101&scsi0=local-lvm%3A1&scsi1=local-lvm%3A2&cdrom=none",
    )
    .await;
    assert_eq!(exit, "OK", "{lines:?}");
    let c = config(&pve, &root, 101).await;
    assert_eq!(c["scsi0"], "local-lvm:vm-101-disk-0,size=1G");
    assert_eq!(c["scsi1"], "local-lvm:vm-101-disk-1,size=2G");
    assert_eq!(c["ide2"], "none,media=cdrom");
    assert_eq!(c["boot"], "order=scsi0;ide2");

    let (exit, lines) = create(&pve, &root, "vmid=102&ide2=local-lvm%3Acloudinit").await;
    assert_eq!(exit, "OK", "{lines:?}");
    assert!(
        lines.contains(
            &"ide2: successfully created disk 'local-lvm:vm-102-cloudinit,media=cdrom'".to_string()
        ),
        "{lines:?}"
    );
    assert_eq!(
        config(&pve, &root, 102).await["ide2"],
        "local-lvm:vm-102-cloudinit,media=cdrom"
    );

    // nextid and the resources reflect the VMs.
    assert_eq!(pve.get("/cluster/nextid", &root).await.data(), "103");
    pve.get("/cluster/nextid?vmid=100", &root)
        .await
        .assert_param_error("vmid", "VM 100 already exists");
    let res = pve.get("/cluster/resources?type=vm", &root).await.data();
    let ids: Vec<&str> = res
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|v| v["id"].as_str())
        .collect();
    assert_eq!(ids, ["qemu/100", "qemu/101", "qemu/102"]);
    assert_eq!(res[0]["maxdisk"], 8 * GIB);
    assert_eq!(res[0]["maxmem"], 2048u64 << 20);
}

#[tokio::test]
async fn create_refusals() {
    let pve = pve().await;
    let root = pve.root().await;
    assert_eq!(create(&pve, &root, MINIMAL).await.0, "OK");
    pve.post("/nodes/pve/qemu", &root, MINIMAL)
        .await
        .assert_error(
            500,
            "unable to create VM 100 - VM 100 already exists on node 'pve'\n",
        );
    pve.post("/nodes/pve/qemu", &root, "vmid=101&scsi0=nope%3A8")
        .await
        .assert_error(500, "storage 'nope' does not exist\n");
    pve.post("/nodes/pve/qemu", &root, "vmid=101&scsi0=local%3A8")
        .await
        .assert_param_error("storage", "storage 'local' does not support vm images");
    // A size without a storage is no volume ID: the schema refuses it.
    pve.post("/nodes/pve/qemu", &root, "vmid=101&scsi0=8")
        .await
        .assert_param_error(
            "scsi0",
            "invalid format - format error\nscsi0.file: invalid format - unable to parse volume ID '8'\n\n",
        );
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=101&archive=local%3Abackup%2Fx.vma.zst",
        )
        .await;
    r.assert_error(500, "can't find file 'local:backup/x.vma.zst'\n");
    // Nothing was left behind.
    assert_eq!(pve.get("/cluster/nextid", &root).await.data(), "101");
    // A bare size is no volume ID, even with a default `storage`: the
    // schema's `pve-volume-id` check refuses it before the handler runs.
    pve.post("/nodes/pve/qemu", &root, "vmid=101&scsi0=4&storage=local-lvm")
        .await
        .assert_param_error(
            "scsi0",
            "invalid format - format error\nscsi0.file: invalid format - unable to parse volume ID '4'\n\n",
        );
}

#[tokio::test]
async fn thick_lvm_without_room_fails_the_task() {
    let pve = start_scenario(
        "storages:\n  - {id: thick, type: lvm, vgname: pve, size: 10G}\n  - {id: local, type: dir, path: /var/lib/vz}\n",
    )
    .await;
    let root = pve.root().await;
    let (exit, lines) = create(&pve, &root, "vmid=100&scsi0=thick%3A4&scsi1=thick%3A20").await;
    assert_eq!(
        exit,
        format!(
            "unable to create VM 100 - not enough free space ({} < {})",
            6 * GIB,
            20 * GIB / 1024
        )
    );
    // The first disk was freed again and the config removed.
    assert!(
        lines.contains(&"  Logical volume \"vm-100-disk-0\" successfully removed.".to_string()),
        "{lines:?}"
    );
    pve.get("/nodes/pve/qemu/100/config", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/100.conf' does not exist\n",
        );
    // Dir storage: a file per disk, raw unless asked otherwise.
    let (exit, lines) = create(
        &pve,
        &root,
        "vmid=100&scsi0=local%3A1&virtio0=local%3A1%2Cformat%3Dqcow2",
    )
    .await;
    assert_eq!(exit, "OK", "{lines:?}");
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["scsi0"], "local:100/vm-100-disk-0.raw,size=1G");
    assert_eq!(c["virtio0"], "local:100/vm-100-disk-0.qcow2,size=1G");
}

#[tokio::test]
async fn lock_create_while_the_task_runs() {
    let mut latency = Latency::instant();
    latency.set_task_ms("qmcreate", 3_000);
    let pve = start_with(builder().latency(latency)).await;
    let root = pve.root().await;
    let r = pve.post("/nodes/pve/qemu", &root, MINIMAL).await;
    let u = upid(&r);
    assert!(u.contains(":qmcreate:100:root@pam:"), "{u}");
    let c = config(&pve, &root, 100).await;
    let mut keys: Vec<&String> = c.as_object().expect("object").keys().collect();
    keys.sort();
    assert_eq!(keys, ["digest", "lock"]);
    assert_eq!(c["lock"], "create");
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=4")
        .await
        .assert_error(500, "VM is locked (create)\n");
    let res = pve.get("/cluster/resources?type=vm", &root).await.data();
    assert_eq!(res[0]["lock"], "create");
    pve.run.clock().advance(3);
    assert_eq!(pve.task_status(&u, &root).await["exitstatus"], "OK");
    assert!(config(&pve, &root, 100).await.get("lock").is_none());
}

#[tokio::test]
async fn missing_bridge_fails_only_at_start() {
    let pve = pve().await;
    let root = pve.root().await;
    let (exit, _) = create(&pve, &root, "vmid=100&net0=virtio%2Cbridge%3Dvmbr9").await;
    assert_eq!(exit, "OK");
    let (exit, lines) = task(&pve, &root, &power(&pve, &root, 100, "start", "").await).await;
    assert_eq!(exit, "bridge 'vmbr9' does not exist");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("TASK ERROR: bridge 'vmbr9' does not exist")
    );
    assert_eq!(status(&pve, &root, 100).await["status"], "stopped");

    // start=1 starts in a task of its own after the create.
    let (exit, lines) = create(&pve, &root, "vmid=101&start=1").await;
    assert_eq!(exit, "OK");
    assert!(lines.contains(&"Execute autostart".to_string()));
    let tasks = pve.get("/nodes/pve/tasks?vmid=101", &root).await.data();
    let kinds: Vec<&str> = tasks
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|t| t["type"].as_str())
        .collect();
    assert_eq!(kinds, ["qmstart", "qmcreate"]);
    assert_eq!(status(&pve, &root, 101).await["status"], "running");
}

#[tokio::test]
async fn config_updates_pending_and_digest() {
    let pve = pve().await;
    let root = pve.root().await;
    create(&pve, &root, MINIMAL).await;
    let before = config(&pve, &root, 100).await;
    let digest = before["digest"].as_str().expect("digest").to_string();

    // Stopped: applied at once.
    let r = pve
        .put(
            "/nodes/pve/qemu/100/config",
            &root,
            &format!("cores=4&onboot=1&digest={digest}"),
        )
        .await;
    assert_eq!(r.data(), Value::Null);
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["cores"], 4);
    assert_eq!(c["onboot"], 1);
    assert_ne!(c["digest"], before["digest"]);
    // The old digest no longer fits.
    pve.put(
        "/nodes/pve/qemu/100/config",
        &root,
        &format!("cores=8&digest={digest}"),
    )
    .await
    .assert_error(500, "checksum mismatch (file change by other user?)\n");
    pve.put("/nodes/pve/qemu/100/config", &root, "")
        .await
        .assert_error(500, "no options specified\n");
    pve.put("/nodes/pve/qemu/100/config", &root, "delete=bogus")
        .await
        .assert_param_error("delete", "unknown option 'bogus'");
    pve.put("/nodes/pve/qemu/100/config", &root, "delete=cores&cores=2")
        .await
        .assert_param_error(
            "delete",
            "you can't use '-cores' and -delete cores' at the same time",
        );
    pve.put("/nodes/pve/qemu/100/config", &root, "revert=nothing")
        .await
        .assert_param_error("revert", "unknown option 'nothing'");

    // Deleting a disk of a stopped VM makes its volume unused.
    pve.put("/nodes/pve/qemu/100/config", &root, "delete=scsi0%2Conboot")
        .await
        .data();
    let c = config(&pve, &root, 100).await;
    assert!(c.get("scsi0").is_none());
    assert!(c.get("onboot").is_none());
    assert_eq!(c["unused0"], "local-lvm:vm-100-disk-0");
    // Deleting the unused entry frees the volume.
    pve.put("/nodes/pve/qemu/100/config", &root, "delete=unused0")
        .await
        .data();
    let content = pve
        .get("/nodes/pve/storage/local-lvm/content", &root)
        .await
        .data();
    assert_eq!(content, Value::Array(vec![]));
    // A new disk through config.
    pve.put("/nodes/pve/qemu/100/config", &root, "virtio0=local-lvm%3A2")
        .await
        .data();
    assert_eq!(
        config(&pve, &root, 100).await["virtio0"],
        "local-lvm:vm-100-disk-0,size=2G"
    );

    // POST config is a qmconfig task with PVE's log line.
    let r = pve
        .post(
            "/nodes/pve/qemu/100/config",
            &root,
            "name=renamed&cipassword=secret",
        )
        .await;
    let u = upid(&r);
    assert!(u.contains(":qmconfig:100:root@pam:"), "{u}");
    let (exit, lines) = task(&pve, &root, &r).await;
    assert_eq!(exit, "OK");
    assert_eq!(
        lines,
        [
            "update VM 100: -cipassword <hidden> -name renamed",
            "TASK OK"
        ]
    );
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["name"], "renamed");
    assert_eq!(c["cipassword"], "**********");
}

#[tokio::test]
async fn running_vm_keeps_cold_changes_pending() {
    let pve = pve().await;
    let root = pve.root().await;
    create(&pve, &root, MINIMAL).await;
    let (exit, _) = task(&pve, &root, &power(&pve, &root, 100, "start", "").await).await;
    assert_eq!(exit, "OK");
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=4&name=live")
        .await
        .data();
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["cores"], 4);
    assert_eq!(c["name"], "live");
    let cur = pve
        .get("/nodes/pve/qemu/100/config?current=1", &root)
        .await
        .data();
    assert_eq!(cur["cores"], 2);
    assert_eq!(cur["name"], "live");
    let pending = pve.get("/nodes/pve/qemu/100/pending", &root).await.data();
    let items = pending.as_array().expect("list");
    let cores = items.iter().find(|i| i["key"] == "cores").expect("cores");
    assert_eq!(cores["value"], 2);
    assert_eq!(cores["pending"], 4);
    let name = items.iter().find(|i| i["key"] == "name").expect("name");
    assert!(name.get("pending").is_none());
    assert!(items.iter().any(|i| i["key"] == "digest"));
    assert_eq!(status(&pve, &root, 100).await["cpus"], 2);

    // A pending delete shows as delete:1; revert drops it.
    pve.put("/nodes/pve/qemu/100/config", &root, "delete=memory")
        .await
        .data();
    let pending = pve.get("/nodes/pve/qemu/100/pending", &root).await.data();
    let mem = pending
        .as_array()
        .expect("list")
        .iter()
        .find(|i| i["key"] == "memory")
        .cloned()
        .expect("memory");
    assert_eq!(mem["delete"], 1);
    pve.put("/nodes/pve/qemu/100/config", &root, "revert=memory")
        .await
        .data();
    let pending = pve.get("/nodes/pve/qemu/100/pending", &root).await.data();
    let mem = pending
        .as_array()
        .expect("list")
        .iter()
        .find(|i| i["key"] == "memory")
        .cloned()
        .expect("memory");
    assert!(mem.get("delete").is_none(), "{mem}");

    // Hot-plugging a NIC onto a missing bridge is a 400.
    pve.put(
        "/nodes/pve/qemu/100/config",
        &root,
        "net1=virtio%2Cbridge%3Dvmbr9",
    )
    .await
    .assert_param_error("net1", "hotplug problem - bridge 'vmbr9' does not exist");
    pve.put("/nodes/pve/qemu/100/config", &root, "delete=net1")
        .await
        .data();

    // Stop and start apply what was pending.
    task(&pve, &root, &power(&pve, &root, 100, "stop", "").await).await;
    task(&pve, &root, &power(&pve, &root, 100, "start", "").await).await;
    assert_eq!(status(&pve, &root, 100).await["cpus"], 4);
    let cur = pve
        .get("/nodes/pve/qemu/100/config?current=1", &root)
        .await
        .data();
    assert_eq!(cur["cores"], 4);
}

#[tokio::test]
async fn power_tasks_and_refusals() {
    let pve = pve().await;
    let root = pve.root().await;
    create(&pve, &root, MINIMAL).await;
    let st = status(&pve, &root, 100).await;
    assert_eq!(st["status"], "stopped");
    assert_eq!(st["qmpstatus"], "stopped");
    assert_eq!(st["ha"]["managed"], 0);
    assert_eq!(st["maxdisk"], 8 * GIB);
    assert_eq!(st["maxmem"], 2048u64 << 20);
    assert!(st.get("pid").is_none());
    assert!(st.get("diskread").is_none());

    for action in ["reboot", "reset", "suspend", "resume"] {
        power(&pve, &root, 100, action, "")
            .await
            .assert_error(500, "VM 100 not running\n");
    }
    // Stop and shutdown of a stopped VM end OK.
    for action in ["stop", "shutdown"] {
        let r = power(&pve, &root, 100, action, "").await;
        assert!(upid(&r).contains(&format!(":qm{action}:100:")));
        assert_eq!(task(&pve, &root, &r).await.0, "OK");
    }
    let r = power(&pve, &root, 100, "start", "").await;
    assert!(upid(&r).contains(":qmstart:100:"));
    assert_eq!(task(&pve, &root, &r).await.0, "OK");
    pve.run.clock().advance(42);
    let st = status(&pve, &root, 100).await;
    assert_eq!(st["status"], "running");
    assert_eq!(st["qmpstatus"], "running");
    assert_eq!(st["uptime"], 42);
    assert!(st["pid"].is_u64());
    assert_eq!(st["running-qemu"], "11.0.2");
    assert!(st["nics"]["tap100i0"].is_object(), "{st}");
    assert!(st["blockstat"]["scsi0"].is_object(), "{st}");
    let (exit, _) = task(&pve, &root, &power(&pve, &root, 100, "start", "").await).await;
    assert_eq!(exit, "VM 100 already running");

    // Pause, then shutdown is refused; resume.
    let r = power(&pve, &root, 100, "suspend", "").await;
    assert!(upid(&r).contains(":qmpause:100:"));
    assert_eq!(task(&pve, &root, &r).await.0, "OK");
    assert_eq!(status(&pve, &root, 100).await["qmpstatus"], "paused");
    let res = pve.get("/cluster/resources?type=vm", &root).await.data();
    assert_eq!(res[0]["status"], "paused");
    power(&pve, &root, 100, "shutdown", "")
        .await
        .assert_error(500, "VM is paused - cannot shutdown\n");
    power(&pve, &root, 100, "reboot", "")
        .await
        .assert_error(500, "VM is paused - cannot shutdown\n");
    let r = power(&pve, &root, 100, "resume", "").await;
    assert!(upid(&r).contains(":qmresume:100:"));
    assert_eq!(task(&pve, &root, &r).await.0, "OK");
    assert_eq!(status(&pve, &root, 100).await["qmpstatus"], "running");

    // Reset and reboot.
    let r = power(&pve, &root, 100, "reset", "").await;
    assert!(upid(&r).contains(":qmreset:100:"));
    assert_eq!(task(&pve, &root, &r).await.0, "OK");
    let r = power(&pve, &root, 100, "reboot", "").await;
    assert!(upid(&r).contains(":qmreboot:100:"));
    assert_eq!(task(&pve, &root, &r).await.0, "OK");
    assert_eq!(status(&pve, &root, 100).await["status"], "running");

    // Hibernate: the state goes to a volume and the VM is stopped.
    let r = power(&pve, &root, 100, "suspend", "todisk=1").await;
    assert!(upid(&r).contains(":qmsuspend:100:"));
    assert_eq!(task(&pve, &root, &r).await.0, "OK");
    let st = status(&pve, &root, 100).await;
    assert_eq!(st["status"], "stopped");
    assert_eq!(st["lock"], "suspended");
    let c = config(&pve, &root, 100).await;
    let state = c["vmstate"].as_str().expect("vmstate");
    assert!(
        state.starts_with("local-lvm:vm-100-state-suspend-20"),
        "{state}"
    );
    let r = power(&pve, &root, 100, "resume", "").await;
    assert_eq!(task(&pve, &root, &r).await.0, "OK");
    let c = config(&pve, &root, 100).await;
    assert!(c.get("vmstate").is_none() && c.get("lock").is_none(), "{c}");
    assert_eq!(status(&pve, &root, 100).await["status"], "running");

    // A guest without ACPI does not shut down.
    pve.put("/nodes/pve/qemu/100/config", &root, "acpi=0")
        .await
        .data();
    task(&pve, &root, &power(&pve, &root, 100, "stop", "").await).await;
    task(&pve, &root, &power(&pve, &root, 100, "start", "").await).await;
    let (exit, _) = task(&pve, &root, &power(&pve, &root, 100, "shutdown", "").await).await;
    assert_eq!(exit, "VM quit/powerdown failed - got timeout");
    let (exit, lines) = task(
        &pve,
        &root,
        &power(&pve, &root, 100, "shutdown", "forceStop=1").await,
    )
    .await;
    assert_eq!(exit, "OK", "{lines:?}");
    assert_eq!(status(&pve, &root, 100).await["status"], "stopped");

    // Templates do not start; missing VMs are refused.
    pve.put("/nodes/pve/qemu/100/config", &root, "template=1")
        .await
        .data();
    let (exit, _) = task(&pve, &root, &power(&pve, &root, 100, "start", "").await).await;
    assert_eq!(exit, "you can't start a vm if it's a template");
    power(&pve, &root, 999, "start", "").await.assert_error(
        500,
        "Configuration file 'nodes/pve/qemu-server/999.conf' does not exist\n",
    );
    power(&pve, &root, 999, "reset", "").await.assert_error(
        500,
        "unable to find configuration file for VM 999 on node 'pve'\n",
    );
}

#[tokio::test]
async fn destroy_frees_volumes_and_refuses_as_pve() {
    let pve = pve().await;
    let root = pve.root().await;
    create(&pve, &root, MINIMAL).await;
    task(&pve, &root, &power(&pve, &root, 100, "start", "").await).await;
    pve.delete("/nodes/pve/qemu/100", &root)
        .await
        .assert_error(500, "VM 100 is running - destroy failed\n");
    task(&pve, &root, &power(&pve, &root, 100, "stop", "").await).await;
    pve.put("/nodes/pve/qemu/100/config", &root, "protection=1")
        .await
        .data();
    pve.delete("/nodes/pve/qemu/100", &root)
        .await
        .assert_error(500, "can't remove VM 100 - protection mode enabled\n");
    pve.put("/nodes/pve/qemu/100/config", &root, "delete=protection")
        .await
        .data();
    let r = pve.delete("/nodes/pve/qemu/100?purge=1", &root).await;
    assert!(upid(&r).contains(":qmdestroy:100:"));
    let (exit, lines) = task(&pve, &root, &r).await;
    assert_eq!(exit, "OK");
    assert_eq!(
        lines,
        [
            "  Logical volume \"vm-100-disk-0\" successfully removed.",
            "purging VM 100 from related configurations..",
            "TASK OK"
        ]
    );
    pve.get("/nodes/pve/qemu/100/status/current", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/100.conf' does not exist\n",
        );
    let content = pve
        .get("/nodes/pve/storage/local-lvm/content", &root)
        .await
        .data();
    assert_eq!(content, Value::Array(vec![]));
    assert_eq!(pve.get("/cluster/nextid", &root).await.data(), "100");
}

#[tokio::test]
async fn vm_list_with_and_without_full() {
    let pve = start_scenario(
        "vms:\n  - vmid: 100\n    name: web\n    status: running\n    config: {memory: '1024', cores: 2, scsi0: 'local-lvm:vm-100-disk-0,size=32G', net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0'}\n  - {vmid: 101, name: db}\n",
    )
    .await;
    let root = pve.root().await;
    let list = pve.get("/nodes/pve/qemu", &root).await.data();
    let items = list.as_array().expect("list");
    assert_eq!(items.len(), 2);
    let web = &items[0];
    assert_eq!(web["vmid"], 100);
    assert_eq!(web["status"], "running");
    assert_eq!(web["maxdisk"], 32 * GIB);
    assert_eq!(web["uptime"], 3600);
    for k in ["qmpstatus", "nics", "blockstat", "ha", "running-qemu"] {
        assert!(web.get(k).is_none(), "{k} in {web}");
    }
    let full = pve.get("/nodes/pve/qemu?full=1", &root).await.data();
    assert_eq!(full[0]["qmpstatus"], "running");
    assert!(full[0]["nics"].is_object());
    assert_eq!(full[1]["qmpstatus"], "stopped");
    assert!(full[0].get("ha").is_none());
    // The seed's disk is a volume on the storage.
    let content = pve
        .get("/nodes/pve/storage/local-lvm/content", &root)
        .await
        .data();
    assert_eq!(content[0]["volid"], "local-lvm:vm-100-disk-0");
    assert_eq!(content[0]["size"], 32 * GIB);
    // A new disk of VM 100 takes the next number.
    pve.put("/nodes/pve/qemu/100/config", &root, "scsi1=local-lvm%3A1")
        .await
        .data();
    assert_eq!(
        config(&pve, &root, 100).await["scsi1"],
        "local-lvm:vm-100-disk-1,size=1G"
    );
}

#[tokio::test]
async fn skiplock_is_for_root_only() {
    let scenario = Scenario::parse(
        "users:\n  - userid: root@pam\n    tokens: [{tokenid: ci, secret: 11111111-2222-3333-4444-555555555555, privsep: false}]\n",
        "t.yaml",
    )
    .expect("scenario");
    let pve = start_with(builder().scenario(scenario)).await;
    let root = pve.root().await;
    create(&pve, &root, MINIMAL).await;
    let token =
        Auth::Token("PVEAPIToken=root@pam!ci=11111111-2222-3333-4444-555555555555".to_string());
    pve.put("/nodes/pve/qemu/100/config", &token, "cores=3&skiplock=1")
        .await
        .assert_param_error("skiplock", "Only root may use this option.");
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=3&skiplock=1")
        .await
        .data();
}

#[tokio::test]
async fn concurrent_creates_get_distinct_ids_and_volumes() {
    let pve = pve().await;
    let root = pve.root().await;
    // Everybody races for the same VMID: exactly one wins.
    let same = futures_join(
        (0..8)
            .map(|_| pve.post("/nodes/pve/qemu", &root, "vmid=200&scsi0=local-lvm%3A1"))
            .collect(),
    )
    .await;
    let ok = same.iter().filter(|r| r.status == 200).count();
    assert_eq!(ok, 1);
    for r in same.iter().filter(|r| r.status != 200) {
        r.assert_error(
            500,
            "unable to create VM 200 - VM 200 already exists on node 'pve'\n",
        );
    }
    // Different VMIDs at once: every disk gets its own volume.
    let (pve, root) = (&pve, &root);
    let many = futures_join(
        (300..320)
            .map(|id| {
                let form = format!("vmid={id}&scsi0=local-lvm%3A1&scsi1=local-lvm%3A1");
                async move { pve.post("/nodes/pve/qemu", root, &form).await }
            })
            .collect(),
    )
    .await;
    assert!(many.iter().all(|r| r.status == 200));
    let content = pve
        .get("/nodes/pve/storage/local-lvm/content", root)
        .await
        .data();
    let vols: Vec<&str> = content
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|v| v["volid"].as_str())
        .collect();
    assert_eq!(vols.len(), 41);
    let mut sorted = vols.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), 41);
}

async fn futures_join<F: std::future::Future<Output = common::Resp>>(
    futs: Vec<F>,
) -> Vec<common::Resp> {
    let mut set = Vec::new();
    for f in futs {
        set.push(f);
    }
    let mut out = Vec::new();
    // Poll them together so that the requests overlap on the server.
    let joined = join_all(set).await;
    out.extend(joined);
    out
}

async fn join_all<F: std::future::Future>(futs: Vec<F>) -> Vec<F::Output> {
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = futs.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<F::Output>> = (0..pinned.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in pinned.iter_mut().enumerate() {
            if results[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => results[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    results.into_iter().flatten().collect()
}
