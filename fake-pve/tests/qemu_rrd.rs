//! `GET .../rrddata` over the wire: PVE's resolutions and point counts
//! per release and time frame, and figures that follow the VM's runs.

mod common;

use common::{Auth, Pve, T0};
use fake_pve::PveVersion;
use serde_json::Value;

async fn ok(pve: &Pve, auth: &Auth, r: &common::Resp) {
    let u = r.data().as_str().expect("a UPID").to_string();
    let st = pve.task_status(&u, auth).await;
    assert_eq!(st["exitstatus"], "OK", "{st}");
}

async fn series(pve: &Pve, auth: &Auth, q: &str) -> Vec<Value> {
    pve.get(&format!("/nodes/pve/qemu/100/rrddata?{q}"), auth)
        .await
        .data()
        .as_array()
        .cloned()
        .expect("points")
}

#[tokio::test]
async fn hour_series_follows_the_run() {
    let pve = common::start().await;
    let root = pve.root().await;
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=100&memory=2048&cores=2&scsi0=local-lvm%3A8",
        )
        .await;
    ok(&pve, &root, &r).await;
    pve.run.clock().advance(1800);
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let started = T0 + 1800;
    pve.run.clock().advance(600);
    let now = T0 + 2400;
    let s = series(&pve, &root, "timeframe=hour").await;
    assert_eq!(s.len(), 60);
    let ctime = 60 * (now / 60);
    assert_eq!(s[0]["time"], ctime - 3600);
    assert_eq!(s[59]["time"], ctime - 60);
    for p in &s {
        let t = p["time"].as_i64().expect("time");
        if t < T0 {
            // Before the VM was created its RRD file holds nothing: the
            // point has only its time.
            assert_eq!(p.as_object().map(|o| o.len()), Some(1), "{p}");
            continue;
        }
        assert_eq!(p["maxmem"], 2048u64 << 20);
        assert_eq!(p["maxcpu"], 2);
        assert_eq!(p["maxdisk"], 8u64 << 30);
        if t >= started {
            assert_eq!(p["mem"], 512u64 << 20, "{p}");
            assert!(p["cpu"].as_f64().expect("cpu") > 0.0);
            assert!(p["netin"].as_u64().expect("netin") > 0);
        } else {
            // Unknown while stopped: pvestatd writes `U`, rrddata leaves
            // the value out.
            for key in ["cpu", "mem", "netin", "netout", "diskread", "diskwrite"] {
                assert!(p.get(key).is_none(), "{key} in {p}");
            }
        }
    }
    // Points at whole minutes from the first one after the start.
    let first_up = 60 * ((started + 59) / 60);
    let expected = usize::try_from((ctime - 60 - first_up) / 60 + 1).expect("count");
    assert_eq!(expected, 9);
    assert_eq!(
        s.iter().filter(|p| p.get("mem").is_some()).count(),
        expected
    );
    // Created at T0: the points from before carry only their time.
    let bare = s.iter().filter(|p| p.get("maxmem").is_none()).count();
    assert_eq!(bare, 21);
    let day = series(&pve, &root, "timeframe=day&cf=MAX").await;
    assert_eq!(day.len(), 1440);
    pve.get("/nodes/pve/qemu/101/rrddata?timeframe=hour", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/101.conf' does not exist\n",
        );
    pve.get("/nodes/pve/qemu/100/rrddata?timeframe=decade", &root)
        .await
        .assert_param_error(
            "timeframe",
            "value 'decade' does not have a value in the enumeration 'hour, day, week, month, year'",
        );
}

#[tokio::test]
async fn pve8_resolutions() {
    let pve = common::start_version(PveVersion::V8_4).await;
    let root = pve.root().await;
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=100&scsi0=local-lvm%3A1")
        .await;
    ok(&pve, &root, &r).await;
    // Right after the creation every point lies before it: all carry only
    // their time, and the last one is left out as create_rrd_data does.
    let fresh = series(&pve, &root, "timeframe=day").await;
    assert_eq!(fresh.len(), 69);
    assert!(
        fresh
            .iter()
            .all(|p| p.as_object().map(|o| o.len()) == Some(1))
    );
    // Two weeks later both frames are whole.
    pve.run.clock().advance(15 * 86_400);
    let root = pve.root().await; // the ticket has expired
    let s = series(&pve, &root, "timeframe=day").await;
    assert_eq!(s.len(), 70);
    assert!(s.iter().all(|p| p.get("maxmem").is_some()));
    let step = s[1]["time"].as_i64().expect("t") - s[0]["time"].as_i64().expect("t");
    assert_eq!(step, 1800);
    assert!(s[0].get("memhost").is_none());
    assert_eq!(series(&pve, &root, "timeframe=year").await.len(), 70);
}

#[tokio::test]
async fn rrd_graph_names_its_file() {
    for (version, dir) in [
        (PveVersion::V9_1, "pve-vm-9.0"),
        (PveVersion::V8_4, "pve2-vm"),
    ] {
        let pve = common::start_version(version).await;
        let root = pve.root().await;
        let r = pve
            .post("/nodes/pve/qemu", &root, "vmid=100&scsi0=local-lvm%3A8")
            .await;
        ok(&pve, &root, &r).await;
        let g = pve
            .get("/nodes/pve/qemu/100/rrd?timeframe=hour&ds=cpu,mem", &root)
            .await
            .data();
        assert_eq!(
            g["filename"],
            format!("/var/lib/rrdcached/db/{dir}/100_cpu_mem.png")
        );
        let image = g["image"].as_str().expect("image");
        assert!(image.starts_with("\u{89}PNG\r\n\u{1a}\n"), "{image:?}");
        pve.get("/nodes/pve/qemu/101/rrd?timeframe=hour&ds=cpu", &root)
            .await
            .assert_error(
                500,
                &format!("RRD error: opening '/var/lib/rrdcached/db/{dir}/101': No such file or directory\n"),
            );
        pve.get("/nodes/pve/qemu/100/rrd?timeframe=hour", &root)
            .await
            .assert_param_error("ds", "property is missing and it is not optional");
    }
}
