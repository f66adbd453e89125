//! Criterion benchmarks of fake-pve's hot paths: authentication, routing
//! and validation against the schema, the cluster views with many guests,
//! and a whole request over loopback TLS.
//!
//! `cargo bench -p fake-pve --bench hot_paths`

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use fake_pve::api::auth::Keys;
use fake_pve::{Clock, FakePve, PveVersion, Scenario};
use serde_json::{Value, json};

/// A cluster of 10 nodes with `n` guests spread over them.
fn big_scenario(n: u32) -> Scenario {
    let mut y = String::from("cluster: big\nnodes:\n");
    for i in 0..10 {
        let _ = writeln!(y, "  - {{name: node{i}, cpus: 64, memory: 512G}}");
    }
    y.push_str("vms:\n");
    for v in 0..n {
        let _ = writeln!(
            y,
            "  - {{vmid: {}, node: node{}, name: vm{v}, status: {}}}",
            100 + v,
            v % 10,
            if v % 3 == 0 { "running" } else { "stopped" }
        );
    }
    Scenario::parse(&y, "bench").expect("valid scenario")
}

fn auth(c: &mut Criterion) {
    let keys = Keys::random();
    let ticket = keys.ticket("root@pam", 1_790_000_000);
    let csrf = keys.csrf("root@pam", 1_790_000_000);
    c.bench_function("auth/verify_ticket", |b| {
        b.iter(|| black_box(keys.verify_ticket(black_box(&ticket), 1_790_000_100)))
    });
    c.bench_function("auth/verify_csrf", |b| {
        b.iter(|| black_box(keys.verify_csrf(black_box(&csrf), "root@pam", 1_790_000_100)))
    });
}

fn routing(c: &mut Criterion) {
    let spec = fake_pve::spec::spec(PveVersion::V9_1);
    let segs: Vec<String> = "/nodes/pve/qemu/100/status/current"
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    c.bench_function("spec/find vm_status", |b| {
        b.iter(|| {
            black_box(
                spec.find("GET", black_box(&segs))
                    .map(|f| f.endpoint.name.len()),
            )
        })
    });
    let create = spec
        .endpoint("POST", "/nodes/{node}/qemu")
        .expect("create_vm");
    let params: std::collections::BTreeMap<String, Value> = serde_json::from_value(json!({
        "node": "pve", "vmid": "100", "name": "web", "memory": "2048", "cores": "2",
        "net0": "virtio,bridge=vmbr0,firewall=1", "scsi0": "local-lvm:32,discard=on,ssd=1",
        "ostype": "l26", "ipconfig0": "ip=dhcp", "agent": "1"
    }))
    .expect("params");
    c.bench_function("spec/validate create_vm", |b| {
        b.iter(|| black_box(fake_pve::spec::validate::validate(create, black_box(&params)).is_ok()))
    });
}

fn views(c: &mut Criterion) {
    let cluster = big_scenario(10_000)
        .build(PveVersion::V9_1, "pw", 1_790_000_000)
        .expect("builds");
    c.bench_function("cluster/resources with 10000 guests", |b| {
        b.iter(|| black_box(cluster.resources_view(None, 1_790_000_100).len()))
    });
    c.bench_function("cluster/nextid with 10000 guests", |b| {
        b.iter(|| black_box(cluster.nextid(None).map(|s| s.len())))
    });
}

fn wire(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (pve, http, ticket) = rt.block_on(async {
        let pve = FakePve::builder()
            .listen("127.0.0.1:0".parse().expect("addr"))
            .auth_failure_delay(Duration::ZERO)
            .clock(Clock::manual(1_790_000_000))
            .start()
            .await
            .expect("starts");
        let http = reqwest::Client::builder()
            .danger_accept_invalid_certs(true)
            .build()
            .expect("client");
        let login: Value = http
            .post(format!("{}/access/ticket", pve.api_url()))
            .form(&[("username", "root@pam"), ("password", "password")])
            .send()
            .await
            .expect("login")
            .json()
            .await
            .expect("json");
        let ticket = login["data"]["ticket"]
            .as_str()
            .expect("ticket")
            .to_string();
        (pve, http, ticket)
    });
    let url = format!("{}/nodes/pve/status", pve.api_url());
    c.bench_function("wire/GET node status over TLS keep-alive", |b| {
        b.iter(|| {
            rt.block_on(async {
                let r = http
                    .get(&url)
                    .header("Cookie", format!("PVEAuthCookie={ticket}"))
                    .send()
                    .await
                    .expect("request");
                black_box(r.bytes().await.expect("body").len())
            })
        })
    });
    rt.block_on(pve.shutdown());
}

criterion_group!(benches, auth, routing, views, wire);
criterion_main!(benches);
