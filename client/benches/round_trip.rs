//! Criterion benchmarks of the client against an in-process fake-pve
//! over loopback TLS: one round trip (`GET /version`, and a VM's
//! `status/current`, with an API token), and a whole create → start → stop → destroy cycle of a VM with its
//! task waits.
//!
//! `cargo bench -p pve-client --bench round_trip`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use fake_pve::{FakePve, Latency};
use pve_client::api::qemu::{CreateVm, DestroyOptions, StartOptions, StopOptions};
use pve_client::api::tasks::WaitOptions;
use pve_client::propstring::NetworkDevice;
use pve_client::{Client, Config};

const TOKEN: &str = "root@pam!bench";
const SECRET: &str = "4c8f0a7e-2b1d-4e6a-9f3c-5d7b8e1a2c90";

const SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: bench, secret: 4c8f0a7e-2b1d-4e6a-9f3c-5d7b8e1a2c90, privsep: false }
";

fn round_trips(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (fake, pve) = rt.block_on(async {
        let fake = FakePve::builder()
            .listen("127.0.0.1:0".parse().expect("address"))
            .auth_failure_delay(Duration::ZERO)
            .latency(Latency::instant())
            .scenario(fake_pve::Scenario::parse(SCENARIO, "bench.yaml").expect("scenario"))
            .start()
            .await
            .expect("fake-pve starts");
        let config = Config::builder()
            .endpoint(fake.url())
            .ca_bundle_pem(fake.cert_pem().expect("TLS").to_string())
            .token(TOKEN, SECRET)
            .wait_options(
                WaitOptions::default()
                    .poll_interval(Duration::from_millis(1))
                    .timeout(Duration::from_secs(10)),
            )
            .build()
            .expect("config");
        let pve = Client::new(config).expect("client");
        pve.version().await.expect("warm-up");
        (fake, pve)
    });

    c.bench_function("client/version_round_trip", |b| {
        b.iter(|| rt.block_on(async { black_box(pve.version().await.expect("version")) }));
    });

    let q = pve.qemu();
    rt.block_on(async {
        q.create_vm_and_wait("pve", &CreateVm::new(901).name("watched"))
            .await
            .expect("create the watched VM");
    });
    c.bench_function("client/status_current_round_trip", |b| {
        b.iter(|| rt.block_on(async { black_box(q.vm_status("pve", 901).await.expect("status")) }));
    });

    let create = CreateVm::new(900).name("bench").memory(512).net(
        0,
        &NetworkDevice {
            bridge: Some("vmbr0".into()),
            ..NetworkDevice::new("virtio")
        },
    );
    c.bench_function("client/vm_create_start_stop_destroy", |b| {
        b.iter(|| {
            rt.block_on(async {
                q.create_vm_and_wait("pve", &create).await.expect("create");
                q.vm_start_and_wait("pve", 900, &StartOptions::default())
                    .await
                    .expect("start");
                q.vm_stop_and_wait("pve", 900, &StopOptions::default())
                    .await
                    .expect("stop");
                q.destroy_vm_and_wait("pve", 900, &DestroyOptions::default())
                    .await
                    .expect("destroy");
            });
        });
    });

    rt.block_on(fake.shutdown());
}

criterion_group!(benches, round_trips);
criterion_main!(benches);
