//! Clones and templates over the wire: full and linked clones with PVE's
//! rules and refusals, the `qmclone` task and its log, `lock: clone` on
//! the target, the source's file lock, templates and their base volumes,
//! and many clients cloning one template at once.

mod common;

use common::{Auth, Pve, builder, enc, ok, start_scenario, start_with, task, upid, volids};
use fake_pve::Latency;
use serde_json::Value;

async fn config(pve: &Pve, auth: &Auth, vmid: u32) -> Value {
    pve.get(&format!("/nodes/pve/qemu/{vmid}/config"), auth)
        .await
        .data()
}

const SOURCE: &str = "vmid=100&name=src&memory=2048&net0=virtio%2Cbridge%3Dvmbr0&net1=e1000%2Cbridge%3Dvmbr0%2Ctag%3D5&scsi0=local-lvm%3A8&ide2=local-lvm%3Acloudinit&smbios1=uuid%3D01234567-890a-bcde-f012-34567890abcd%2Cmanufacturer%3DQUNNRQ%3D%3D%2Cbase64%3D1";

/// Local directory storage that takes images, as on a ZFS-less install
/// where `local` was given `images`.
const LAB: &str = "storages:\n  - { id: local, type: dir, path: /var/lib/vz, content: [images, iso, vztmpl] }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }\n";

async fn with_source(pve: &Pve, root: &Auth) {
    let r = pve.post("/nodes/pve/qemu", root, SOURCE).await;
    ok(pve, root, &r).await;
}

#[tokio::test]
async fn full_clone_of_a_stopped_vm() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    with_source(&pve, &root).await;
    let src = config(&pve, &root, 100).await;
    let r = pve
        .post("/nodes/pve/qemu/100/clone", &root, "newid=101")
        .await;
    let u = upid(&r);
    let fields: Vec<&str> = u.split(':').collect();
    assert_eq!(fields[5], "qmclone");
    assert_eq!(fields[6], "100", "the id of a clone task is the source");
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "create full clone of drive ide2 (local-lvm:vm-100-cloudinit)",
            "  Logical volume \"vm-101-cloudinit\" created.",
            "create full clone of drive scsi0 (local-lvm:vm-100-disk-0)",
            "  Logical volume \"vm-101-disk-0\" created.",
            "transferred 0.0 B of 8.0 GiB (0.00%)",
            "transferred 8.0 GiB of 8.0 GiB (100.00%)",
            "TASK OK",
        ]
    );
    let c = config(&pve, &root, 101).await;
    assert_eq!(c["name"], "Copy-of-VM-src");
    assert_eq!(c["scsi0"], "local-lvm:vm-101-disk-0,size=8G");
    assert_eq!(c["ide2"], "local-lvm:vm-101-cloudinit,media=cdrom,size=4M");
    assert_eq!(c["memory"], "2048");
    assert_eq!(c["meta"], src["meta"], "meta is copied unchanged");
    for net in ["net0", "net1"] {
        let (old, new) = (
            src[net].as_str().unwrap_or(""),
            c[net].as_str().unwrap_or(""),
        );
        assert_ne!(old, new, "{net} gets a new MAC");
        let tail = |s: &str| s.split_once(',').map(|x| x.1.to_string());
        assert_eq!(tail(old), tail(new), "only the MAC changes");
        assert!(
            new.starts_with(&old[..old.find('=').unwrap_or(0) + 10]),
            "{new}"
        );
    }
    let smbios = c["smbios1"].as_str().expect("smbios1");
    assert!(smbios.contains("manufacturer=QUNNRQ=="), "{smbios}");
    assert!(!smbios.contains("01234567-890a"), "a new uuid: {smbios}");
    assert_ne!(c["vmgenid"], src["vmgenid"]);
    assert!(c.get("lock").is_none());
    assert!(c.get("template").is_none());
    let vols = volids(&pve, &root, "pve", "local-lvm").await;
    assert_eq!(
        vols,
        [
            "local-lvm:vm-100-cloudinit",
            "local-lvm:vm-100-disk-0",
            "local-lvm:vm-101-cloudinit",
            "local-lvm:vm-101-disk-0"
        ]
    );
    // A name and description of its own; a clone to another storage and
    // format.
    let r = pve
        .post(
            "/nodes/pve/qemu/100/clone",
            &root,
            "newid=102&name=web&description=hello&storage=local&format=qcow2",
        )
        .await;
    ok(&pve, &root, &r).await;
    let c = config(&pve, &root, 102).await;
    assert_eq!(c["name"], "web");
    assert_eq!(c["description"], "hello");
    assert_eq!(c["scsi0"], "local:102/vm-102-disk-0.qcow2,size=8G");
    assert_eq!(
        c["ide2"],
        "local:102/vm-102-cloudinit.qcow2,media=cdrom,size=4M"
    );
    // A source without a name.
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=110&scsi0=local-lvm%3A1")
        .await;
    ok(&pve, &root, &r).await;
    let r = pve
        .post("/nodes/pve/qemu/110/clone", &root, "newid=111")
        .await;
    ok(&pve, &root, &r).await;
    assert_eq!(config(&pve, &root, 111).await["name"], "Copy-of-VM-110");
}

#[tokio::test]
async fn clone_refusals() {
    let pve = start_scenario(
        "nodes:\n  - name: pve\n  - name: pve2\nstorages:\n  - { id: local, type: dir, path: /var/lib/vz, content: [images, iso] }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }\n  - { id: nfs, type: nfs, server: 192.0.2.1, export: /x, path: /mnt/pve/nfs }\n  - { id: isos, type: dir, path: /isos, content: [iso] }\n",
    )
    .await;
    let root = pve.root().await;
    with_source(&pve, &root).await;
    let post = |form: &'static str| pve.post("/nodes/pve/qemu/100/clone", &root, form);
    post("newid=101&full=0").await.assert_error(
        500,
        "Linked clone feature is not supported for 'local-lvm:vm-100-disk-0' (scsi0)\n",
    );
    post("newid=101&full=0&storage=local")
        .await
        .assert_error(500, "parameter 'storage' not allowed for linked clones\n");
    post("newid=101&full=0&format=raw")
        .await
        .assert_error(500, "parameter 'format' not allowed for linked clones\n");
    post("newid=101&target=pve2").await.assert_error(
        500,
        "can't clone VM to node 'pve2' (VM uses local storage)\n",
    );
    post("newid=101&target=pve2&storage=local-lvm")
        .await
        .assert_error(500, "can't clone to non-shared storage 'local-lvm'\n");
    post("newid=101&pool=prod").await.assert_error(
        403,
        "Permission check failed (pool 'prod' does not exist)\n",
    );
    post("newid=101&snapname=nope")
        .await
        .assert_error(500, "snapshot 'nope' does not exist\n");
    post("newid=101&storage=isos")
        .await
        .assert_param_error("storage", "storage 'isos' does not support vm images");
    post("newid=101&storage=nope")
        .await
        .assert_error(500, "storage 'nope' does not exist\n");
    pve.post("/nodes/pve/qemu/999/clone", &root, "newid=101")
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/999.conf' does not exist\n",
        );
    // An existing target VMID on the same node.
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=101&memory=512")
        .await;
    ok(&pve, &root, &r).await;
    post("newid=101")
        .await
        .assert_error(500, "unable to create VM 101: config file already exists\n");
    // Nothing was left behind by the refusals.
    assert_eq!(volids(&pve, &root, "pve", "local-lvm").await.len(), 2);
    // The target parameter naming the local node is ignored.
    let r = post("newid=102&target=pve").await;
    ok(&pve, &root, &r).await;
    assert_eq!(config(&pve, &root, 102).await["name"], "Copy-of-VM-src");
    // A VM on shared storage clones to another node.
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=120&scsi0=nfs%3A1")
        .await;
    ok(&pve, &root, &r).await;
    let r = pve
        .post("/nodes/pve/qemu/120/clone", &root, "newid=121&target=pve2")
        .await;
    ok(&pve, &root, &r).await;
    let c = pve.get("/nodes/pve2/qemu/121/config", &root).await.data();
    assert_eq!(c["scsi0"], "nfs:121/vm-121-disk-0.raw,size=1G");
}

#[tokio::test]
async fn target_is_locked_and_the_source_file_lock_blocks_edits() {
    let mut latency = Latency::instant();
    latency.set_task_ms("qmclone", 5_000);
    let pve = start_with(builder().latency(latency)).await;
    let root = pve.root().await;
    with_source(&pve, &root).await;
    let r = pve
        .post("/nodes/pve/qemu/100/clone", &root, "newid=101")
        .await;
    let u = upid(&r);
    let c = config(&pve, &root, 101).await;
    assert_eq!(c["lock"], "clone");
    let res = pve.get("/cluster/resources?type=vm", &root).await.data();
    let item = res
        .as_array()
        .expect("list")
        .iter()
        .find(|v| v["vmid"] == 101)
        .cloned()
        .expect("the target is listed at once");
    assert_eq!(item["lock"], "clone");
    // The source has no lock key, but its file lock blocks edits.
    assert!(config(&pve, &root, 100).await.get("lock").is_none());
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=2")
        .await
        .assert_error(
            500,
            "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout\n",
        );
    // The target refuses changes while locked.
    pve.put("/nodes/pve/qemu/101/config", &root, "cores=2")
        .await
        .assert_error(500, "VM is locked (clone)\n");
    // A second clone of a stopped source shares the lock.
    let r2 = pve
        .post("/nodes/pve/qemu/100/clone", &root, "newid=102")
        .await;
    pve.run.clock().advance(5);
    let st = pve.task_status(&u, &root).await;
    assert_eq!(st["exitstatus"], "OK");
    ok(&pve, &root, &r2).await;
    assert!(config(&pve, &root, 101).await.get("lock").is_none());
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=2")
        .await
        .data();

    // A running source is locked exclusively: a second clone fails in its
    // task, and a stopped task releases the lock and the target.
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let first = pve
        .post("/nodes/pve/qemu/100/clone", &root, "newid=103")
        .await;
    let second = pve
        .post("/nodes/pve/qemu/100/clone", &root, "newid=104")
        .await;
    pve.get("/nodes/pve/qemu/104/config", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/104.conf' does not exist\n",
        );
    assert_eq!(config(&pve, &root, 103).await["lock"], "clone");
    let first_upid = upid(&first);
    pve.delete(&format!("/nodes/pve/tasks/{}", enc(&first_upid)), &root)
        .await
        .data();
    pve.run.clock().advance(5);
    let (exit, lines) = task(&pve, &root, &second).await;
    assert_eq!(
        exit,
        "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"
    );
    assert_eq!(lines[0], "trying to acquire lock...");
    pve.get("/nodes/pve/qemu/103/config", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/103.conf' does not exist\n",
        );
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=3")
        .await
        .data();
    // A running source is mirrored.
    let r = pve
        .post("/nodes/pve/qemu/100/clone", &root, "newid=105")
        .await;
    pve.run.clock().advance(5);
    let lines = ok(&pve, &root, &r).await;
    assert!(
        lines.contains(&"drive mirror is starting for drive-scsi0".to_string()),
        "{lines:?}"
    );
    assert!(lines.contains(&"all 'mirror' jobs are ready".to_string()));
    assert!(lines.contains(&"resume vm".to_string()));
}

#[tokio::test]
async fn templates_and_linked_clones() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    with_source(&pve, &root).await;
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    pve.post("/nodes/pve/qemu/100/template", &root, "")
        .await
        .assert_error(500, "you can't convert a VM to template if VM is running\n");
    let r = pve.post("/nodes/pve/qemu/100/status/stop", &root, "").await;
    ok(&pve, &root, &r).await;
    let r = pve.post("/nodes/pve/qemu/100/template", &root, "").await;
    let u = upid(&r);
    assert_eq!(u.split(':').nth(5), Some("qmtemplate"));
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "  Renamed \"vm-100-disk-0\" to \"base-100-disk-0\" in volume group \"pve\"",
            "TASK OK"
        ]
    );
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["template"], 1);
    assert_eq!(c["scsi0"], "local-lvm:base-100-disk-0,size=8G");
    assert_eq!(c["ide2"], "local-lvm:vm-100-cloudinit,media=cdrom");
    pve.post("/nodes/pve/qemu/100/template", &root, "")
        .await
        .assert_error(500, "you can't convert a template to a template\n");
    // A template cannot start or be snapshotted.
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    let (exit, _) = task(&pve, &root, &r).await;
    assert_eq!(exit, "you can't start a vm if it's a template");
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot", &root, "snapname=s1")
        .await;
    let (exit, _) = task(&pve, &root, &r).await;
    assert_eq!(exit, "you can't take a snapshot if it's a template");
    let st = pve
        .get("/nodes/pve/qemu/100/status/current", &root)
        .await
        .data();
    assert_eq!(st["template"], 1);

    // A clone of a template is linked by default.
    let r = pve
        .post("/nodes/pve/qemu/100/clone", &root, "newid=101&name=linked")
        .await;
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "create full clone of drive ide2 (local-lvm:vm-100-cloudinit)",
            "  Logical volume \"vm-101-cloudinit\" created.",
            "create linked clone of drive scsi0 (local-lvm:base-100-disk-0)",
            "  Logical volume \"vm-101-disk-0\" created.",
            "TASK OK",
        ]
    );
    let c = config(&pve, &root, 101).await;
    assert_eq!(c["scsi0"], "local-lvm:vm-101-disk-0,size=8G");
    assert!(c.get("template").is_none());
    // full=1 copies the base volume.
    let r = pve
        .post("/nodes/pve/qemu/100/clone", &root, "newid=102&full=1")
        .await;
    let lines = ok(&pve, &root, &r).await;
    assert!(
        lines.contains(&"create full clone of drive scsi0 (local-lvm:base-100-disk-0)".to_string())
    );
    assert_eq!(
        volids(&pve, &root, "pve", "local-lvm").await,
        [
            "local-lvm:base-100-disk-0",
            "local-lvm:vm-100-cloudinit",
            "local-lvm:vm-101-cloudinit",
            "local-lvm:vm-101-disk-0",
            "local-lvm:vm-102-cloudinit",
            "local-lvm:vm-102-disk-0",
        ]
    );

    // On a directory storage a linked clone sits on its base file.
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=200&scsi0=local%3A1%2Cformat%3Dqcow2",
        )
        .await;
    ok(&pve, &root, &r).await;
    let r = pve.post("/nodes/pve/qemu/200/template", &root, "").await;
    assert_eq!(ok(&pve, &root, &r).await, ["TASK OK"]);
    assert_eq!(
        config(&pve, &root, 200).await["scsi0"],
        "local:200/base-200-disk-0.qcow2,size=1G"
    );
    let r = pve
        .post("/nodes/pve/qemu/200/clone", &root, "newid=201")
        .await;
    ok(&pve, &root, &r).await;
    assert_eq!(
        config(&pve, &root, 201).await["scsi0"],
        "local:200/base-200-disk-0.qcow2/201/vm-201-disk-0.qcow2,size=1G"
    );
    assert!(
        volids(&pve, &root, "pve", "local")
            .await
            .contains(&"local:200/base-200-disk-0.qcow2/201/vm-201-disk-0.qcow2".to_string())
    );
    // A template with snapshots cannot be made; one with snapshots refuses.
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=300&scsi0=local-lvm%3A1")
        .await;
    ok(&pve, &root, &r).await;
    let r = pve
        .post("/nodes/pve/qemu/300/snapshot", &root, "snapname=s1")
        .await;
    ok(&pve, &root, &r).await;
    pve.post("/nodes/pve/qemu/300/template", &root, "")
        .await
        .assert_error(
            500,
            "unable to create template, because VM contains snapshots\n",
        );
}

#[tokio::test]
async fn many_clients_clone_one_template_at_once() {
    let mut latency = Latency::instant();
    latency.set_task_ms("qmclone", 2_000);
    let pve = start_with(builder().latency(latency)).await;
    let root = pve.root().await;
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=100&name=tpl&scsi0=local-lvm%3A2&scsi1=local-lvm%3A1",
        )
        .await;
    ok(&pve, &root, &r).await;
    let r = pve.post("/nodes/pve/qemu/100/template", &root, "").await;
    ok(&pve, &root, &r).await;

    // Every client asks nextid, then clones; several get the same id.
    let n = 16;
    let mut ids = Vec::new();
    for i in 0..n {
        let id: u32 = pve
            .get("/cluster/nextid", &root)
            .await
            .data()
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("an id");
        ids.push(id + (i % 4));
    }
    let futs: Vec<_> = ids
        .iter()
        .map(|id| {
            let form = format!("newid={id}");
            let pve = &pve;
            let root = &root;
            async move { pve.post("/nodes/pve/qemu/100/clone", root, &form).await }
        })
        .collect();
    let answers = futures_join(futs).await;
    let mut started = Vec::new();
    for (id, r) in ids.iter().zip(&answers) {
        if r.status == 200 {
            started.push((*id, upid(r)));
        } else {
            r.assert_error(
                500,
                &format!("unable to create VM {id}: config file already exists\n"),
            );
        }
    }
    let mut distinct: Vec<u32> = started.iter().map(|(id, _)| *id).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), started.len(), "no duplicate ids");
    assert_eq!(started.len(), 4, "{ids:?}");
    // While they run, every target is locked and the template is busy.
    for (id, _) in &started {
        assert_eq!(config(&pve, &root, *id).await["lock"], "clone");
    }
    pve.put("/nodes/pve/qemu/100/config", &root, "name=x")
        .await
        .assert_error(
            500,
            "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout\n",
        );
    pve.run.clock().advance(2);
    for (id, u) in &started {
        let st = pve.task_status(u, &root).await;
        assert_eq!(st["exitstatus"], "OK", "{st}");
        let c = config(&pve, &root, *id).await;
        assert!(c.get("lock").is_none());
        assert_eq!(c["scsi0"], format!("local-lvm:vm-{id}-disk-0,size=2G"));
        assert_eq!(c["scsi1"], format!("local-lvm:vm-{id}-disk-1,size=1G"));
    }
    let vols = volids(&pve, &root, "pve", "local-lvm").await;
    assert_eq!(vols.len(), 2 + 2 * started.len(), "{vols:?}");
    pve.put("/nodes/pve/qemu/100/config", &root, "name=x")
        .await
        .data();
}

async fn futures_join<F: std::future::Future<Output = common::Resp>>(
    futs: Vec<F>,
) -> Vec<common::Resp> {
    let handles: Vec<_> = futs.into_iter().map(Box::pin).collect();
    let mut out = Vec::new();
    let mut all = futures_util_join(handles).await;
    out.append(&mut all);
    out
}

async fn futures_util_join<F: std::future::Future + Unpin>(futs: Vec<F>) -> Vec<F::Output> {
    // A tiny join_all without extra crates: poll every future in turn.
    let mut futs: Vec<Option<F>> = futs.into_iter().map(Some).collect();
    let mut out: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futs.iter_mut().enumerate() {
            if let Some(fut) = f {
                match std::pin::Pin::new(fut).poll(cx) {
                    std::task::Poll::Ready(v) => {
                        out[i] = Some(v);
                        *f = None;
                    }
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
    out.into_iter().flatten().collect()
}
