//! The capture of a world of 1,000 guests (`fake-pve scenario capture`'s
//! code) from a fake-pve on loopback: 10 nodes, 700 VMs and 300
//! containers, a tenth of them with a snapshot. Target: under 30 s.
//!
//! `cargo bench -p fake-pve --bench twin_capture`

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use fake_pve::twin::{Reader, capture};
use fake_pve::{FakePve, Scenario, Tls};

#[global_allocator]
static ALLOC: fake_pve_alloc::Allocator = fake_pve_alloc::Allocator;

/// 10 nodes and `n` guests: seven VMs in ten, the rest containers.
fn world(n: u32) -> String {
    let mut y = String::from("cluster: big\nnodes:\n");
    for i in 0..10 {
        let _ = writeln!(y, "  - {{name: node{i}, cpus: 64, memory: 512G}}");
    }
    let (mut vms, mut cts) = (String::from("vms:\n"), String::from("containers:\n"));
    for v in 0..n {
        let vmid = 100 + v;
        let status = if v % 3 == 0 { "running" } else { "stopped" };
        let snap = if v % 10 == 0 {
            ", snapshots: {s1: {snaptime: 1790000000}}"
        } else {
            ""
        };
        if v % 10 < 7 {
            let _ = writeln!(
                vms,
                "  - {{vmid: {vmid}, node: node{}, name: vm{v}, status: {status}, config: {{memory: 2048, scsi0: 'local-lvm:vm-{vmid}-disk-0,size=8G'}}{snap}}}",
                v % 10
            );
        } else {
            let _ = writeln!(
                cts,
                "  - {{vmid: {vmid}, node: node{}, hostname: ct{v}, status: {status}, config: {{memory: 512, rootfs: 'local-lvm:vm-{vmid}-disk-0,size=4G'}}{snap}}}",
                v % 10
            );
        }
    }
    y + &vms + &cts
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let pve = rt.block_on(async {
        FakePve::builder()
            .listen("127.0.0.1:0".parse().expect("address"))
            .tls(Tls::Off)
            .root_password("pw")
            .auth_failure_delay(Duration::ZERO)
            .scenario(Scenario::parse(&world(1_000), "bench").expect("scenario"))
            .start()
            .await
            .expect("start")
    });
    let url = pve.url();
    let client = || {
        pve_client::Config::builder()
            .endpoint(url.clone())
            .password("root@pam", "pw")
            .build()
            .and_then(pve_client::Client::new)
            .expect("client")
    };
    // Once, to say what it costs.
    let cap = rt
        .block_on(capture(Arc::new(Reader::new(client())), &url))
        .expect("capture");
    assert_eq!(cap.guests(), 1_000);
    eprintln!(
        "twin/capture of 1000 guests: {} GETs in {:.2} s",
        cap.calls,
        cap.elapsed.as_secs_f64()
    );
    let mut g = c.benchmark_group("twin");
    g.sample_size(10);
    g.bench_function("capture of 1000 guests", |b| {
        b.iter(|| {
            rt.block_on(capture(Arc::new(Reader::new(client())), &url))
                .expect("capture")
        });
    });
    g.finish();
    rt.block_on(pve.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
