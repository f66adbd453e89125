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

// The server's allocator (`src/main.rs`): what a request costs depends on
// it, large answers most.
#[global_allocator]
static ALLOC: fake_pve_alloc::Allocator = fake_pve_alloc::Allocator;

/// A cluster of 10 nodes with `n` guests spread over them.
fn big_scenario(n: u32) -> Scenario {
    Scenario::parse(&big_yaml(n), "bench").expect("valid scenario")
}

fn big_yaml(n: u32) -> String {
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
    y
}

/// A fake-pve of [`big_scenario`]`(n)` on PVE 9.1, its clock stopped at
/// 1,790,000,000 and tasks ending at once.
fn big_state(n: u32) -> fake_pve::state::State {
    let settings = fake_pve::state::Settings {
        version: PveVersion::V9_1,
        root_password: "pw".into(),
        auth_failure_delay: Duration::ZERO,
        fingerprint: None,
        proxy_pem: None,
        pki: Default::default(),
        served: None,
        random_seed: 1,
    };
    fake_pve::state::State::new(
        big_scenario(n),
        settings,
        Clock::manual(1_790_000_000),
        fake_pve::Latency::instant(),
    )
    .expect("state")
}

/// Sends `req` through `app` on `rt`: the length of the body of its
/// answer, which must be a 200.
fn answer_len(
    rt: &tokio::runtime::Runtime,
    app: &axum::Router,
    req: http::Request<axum::body::Body>,
) -> usize {
    use tower::ServiceExt as _;
    let uri = req.uri().clone();
    rt.block_on(async {
        let resp = app.clone().oneshot(req).await.expect("answer");
        assert_eq!(resp.status(), 200, "{uri}");
        axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .expect("body")
            .len()
    })
}

/// What the access log costs a request: formatting its line into the
/// buffer (the writer thread writes to a sink here).
fn access_log(c: &mut Criterion) {
    use fake_pve::access_log::{AccessLog, Line};
    let log = AccessLog::to_writer(Box::new(std::io::sink())).expect("log");
    let line = Line {
        peer: Some(std::net::IpAddr::from([127, 0, 0, 1])),
        user: Some("root@pam"),
        method: "GET",
        uri: "/api2/json/nodes/pve/qemu/100/status/current",
        version: "HTTP/1.1",
        status: 200,
        length: Some(1006),
    };
    c.bench_function("access_log/record one line", |b| {
        b.iter(|| log.record(black_box(&line)))
    });
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
    // The handler of the endpoint found: the route table's lookup, among
    // every route fake-pve has.
    let router = fake_pve::api::Router::default();
    let method = http::Method::GET;
    c.bench_function("api/Router::handler vm_status", |b| {
        b.iter(|| {
            black_box(
                router
                    .handler(
                        &method,
                        black_box("/nodes/{node}/qemu/{vmid}/status/current"),
                    )
                    .is_some(),
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

/// The cluster-wide views with 100,000 guests on 10 nodes (targets:
/// `/cluster/resources` under 50 ms as a whole request, `nextid` under
/// 1 ms).
fn views(c: &mut Criterion) {
    let n = 100_000;
    let cluster = big_scenario(n)
        .build(PveVersion::V9_1, "pw", 1_790_000_000)
        .expect("builds");
    let root = fake_pve::model::AuthId::User("root@pam".into());
    c.bench_function(
        "cluster/resources (model, as JSON) with 100000 guests",
        |b| {
            b.iter(|| {
                black_box(
                    fake_pve::api::cluster::view::resources_json(
                        &cluster.resources(),
                        None,
                        1_790_000_100,
                        &root,
                    )
                    .len(),
                )
            })
        },
    );
    c.bench_function("cluster/nextid with 100000 guests", |b| {
        b.iter(|| {
            black_box(
                cluster
                    .guests()
                    .nextid(None, fake_pve::model::datacenter::NEXT_ID_DEFAULT)
                    .map(|s| s.len()),
            )
        })
    });
    // The whole request: routing, authentication, the permission check,
    // the handler and the envelope, through the app without a socket.
    let state = big_state(n);
    let ticket = state.keys().ticket("root@pam", 1_790_000_000);
    let app = fake_pve::app::app(state);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let rt = &rt;
    let get = |path: &'static str| {
        let (app, ticket) = (app.clone(), ticket.clone());
        move || {
            let req = http::Request::get(path)
                .header("Cookie", format!("PVEAuthCookie={ticket}"))
                .body(axum::body::Body::empty())
                .expect("request");
            black_box(answer_len(rt, &app, req))
        }
    };
    let mut resources = get("/api2/json/cluster/resources");
    c.bench_function("cluster/resources request with 100000 guests", |b| {
        b.iter(&mut resources)
    });
    let mut nextid = get("/api2/json/cluster/nextid");
    c.bench_function("cluster/nextid request with 100000 guests", |b| {
        b.iter(&mut nextid)
    });
}

/// The whole wire of [`big_state`]`(10)` without a socket, with root@pam's
/// ticket cookie and CSRF token, and a runtime to call it on.
struct Api {
    rt: tokio::runtime::Runtime,
    app: axum::Router,
    cookie: String,
    csrf: String,
}

impl Api {
    fn new() -> Self {
        let state = big_state(10);
        let ticket = state.keys().ticket("root@pam", 1_790_000_000);
        let csrf = state.keys().csrf("root@pam", 1_790_000_000);
        Self {
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            app: fake_pve::app::app(state),
            cookie: format!("PVEAuthCookie={ticket}"),
            csrf,
        }
    }
}

/// One poll of a running VM's status as a whole request without a socket
/// (routing, authentication, the permission check, the lock, the handler
/// and the envelope): what fake-pve itself adds to each read that
/// `pve-throughput` compares with a bare server.
fn api(c: &mut Criterion) {
    let Api {
        rt, app, cookie, ..
    } = Api::new();
    c.bench_function("api/GET status/current of a running VM", |b| {
        b.iter(|| {
            let req = http::Request::get("/api2/json/nodes/node0/qemu/100/status/current")
                .header("Cookie", cookie.as_str())
                .body(axum::body::Body::empty())
                .expect("request");
            black_box(answer_len(&rt, &app, req))
        })
    });
}

/// One turn of `pve-throughput`'s write mix as whole requests without a
/// socket: create a VM, update its config, start it, stop it, delete it
/// (five requests, four of them tasks that end at once).
fn api_writes(c: &mut Criterion) {
    let Api {
        rt,
        app,
        cookie,
        csrf,
    } = Api::new();
    let send = |method: http::Method, path: &str, form: &str| {
        let req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("Cookie", cookie.as_str())
            .header("CSRFPreventionToken", csrf.as_str())
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(axum::body::Body::from(form.to_owned()))
            .expect("request");
        black_box(answer_len(&rt, &app, req))
    };
    let mut next = 1_000_u32;
    c.bench_function("api/write mix: create, config, start, stop, delete", |b| {
        b.iter(|| {
            next += 1;
            let vm = format!("/api2/json/nodes/node0/qemu/{next}");
            send(
                http::Method::POST,
                "/api2/json/nodes/node0/qemu",
                &format!("vmid={next}&name=load{next}&memory=512&cores=1"),
            );
            send(
                http::Method::PUT,
                &format!("{vm}/config"),
                "description=under%20load&cores=2",
            );
            send(http::Method::POST, &format!("{vm}/status/start"), "");
            send(http::Method::POST, &format!("{vm}/status/stop"), "");
            send(http::Method::DELETE, &vm, "");
        })
    });
}

/// Checkpoints and state documents of a world with 10,000 guests
/// (target: a restore well under a second).
fn worlds(c: &mut Criterion) {
    let state = big_state(10_000);
    state.checkpoint("bench").expect("checkpoint");
    c.bench_function("world/checkpoint with 10000 guests", |b| {
        b.iter(|| state.checkpoint("again").expect("checkpoint"))
    });
    c.bench_function("world/restore with 10000 guests", |b| {
        b.iter(|| state.restore("bench").expect("restore"))
    });
    c.bench_function("world/export as JSON with 10000 guests", |b| {
        b.iter(|| black_box(serde_json::to_vec(&state.export()).map(|v| v.len())))
    });
}

/// Per-VM calls on the model with 10,000 guests present: they must not
/// grow with the number of guests.
fn vms(c: &mut Criterion) {
    use fake_pve::model::qemu::{CloneRequest, CreateRequest};
    for n in [10_u32, 10_000] {
        let yaml = big_yaml(n)
            + "  - {vmid: 900000, node: node0, config: {template: 1, scsi0: 'local-lvm:base-900000-disk-0,size=8G'}}\n";
        let scenario = Scenario::parse(&yaml, "bench").expect("valid scenario");
        let mut cluster = scenario
            .build(PveVersion::V9_1, "pw", 1_790_000_000)
            .expect("builds");
        let probe = 100 + n / 2;
        let probe_node = format!("node{}", (probe - 100) % 10);
        assert!(
            cluster
                .guests()
                .config_view(cluster.version(), &probe_node, probe, false)
                .is_ok(),
            "the probe VM exists"
        );
        let now_ms = 1_790_000_000_000;
        c.bench_function(&format!("vm/status_current with {n} guests"), |b| {
            b.iter(|| {
                let vm = cluster
                    .guests()
                    .vm(&probe_node, black_box(probe))
                    .expect("vm");
                black_box(fake_pve::api::qemu::status::vm_status(
                    &cluster.vm_status_reader(),
                    vm,
                    now_ms,
                    true,
                    true,
                ))
            })
        });
        c.bench_function(&format!("vm/config read with {n} guests"), |b| {
            b.iter(|| {
                black_box(
                    cluster
                        .guests()
                        .config_view(cluster.version(), "node0", black_box(probe), false)
                        .map(|v| fake_pve::api::qemu::view::config(&v))
                        .is_ok(),
                )
            })
        });
        let mut next = 1_000_000_u32;
        c.bench_function(&format!("vm/create with {n} guests"), |b| {
            b.iter(|| {
                next += 1;
                let config = std::collections::BTreeMap::from([
                    ("name".to_string(), format!("b{next}")),
                    ("memory".to_string(), "2048".to_string()),
                    ("net0".to_string(), "virtio,bridge=vmbr0".to_string()),
                    ("scsi0".to_string(), "local-lvm:8".to_string()),
                ]);
                let worker = cluster
                    .vm_ops()
                    .create_vm(
                        CreateRequest {
                            vmid: next,
                            node: "node0".into(),
                            config,
                            storage: None,
                            start: None,
                            pool: None,
                        },
                        &mut fake_pve::model::Context::new(now_ms, next.into()),
                    )
                    .expect("create");
                black_box(cluster.start_task("node0", worker, "root@pam", now_ms, 0))
            })
        });
        c.bench_function(&format!("vm/clone (linked) with {n} guests"), |b| {
            b.iter(|| {
                next += 1;
                let worker = cluster
                    .vm_ops()
                    .clone_vm(
                        CloneRequest {
                            node: "node0".into(),
                            vmid: 900_000,
                            newid: next,
                            name: None,
                            description: None,
                            pool: None,
                            snapname: None,
                            storage: None,
                            format: None,
                            full: None,
                            target: None,
                            who: None,
                            bwlimit: None,
                        },
                        &mut fake_pve::model::Context::new(now_ms, next.into()),
                    )
                    .expect("clone");
                black_box(cluster.start_task("node0", worker, "root@pam", now_ms, 0))
            })
        });
    }
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

criterion_group!(
    benches, access_log, auth, routing, api, api_writes, views, worlds, vms, wire
);
criterion_main!(benches);
