//! pve-loadtest: goose load tests of the operations PVE automation runs,
//! compared with the latency targets the VirtRigaud provider publishes as
//! "Load Test Results" measured against a fake PVE server.
//!
//! Each row of the table ([`ROWS`]) is one goose scenario with one
//! measured transaction; a mixed scenario ("Operator") runs the whole life
//! of a VM as an operator does (create, wait, start, describe,
//! reconfigure, snapshot, clone, stop, delete). Requests are named after
//! the PVE API methods (`create_vm`, `vm_start`, `read_task_status`, ...).
//!
//! An operation's latency is what a client sees: from sending the request
//! until polling `read_task_status` reports the task stopped (for tasks),
//! or the request's latency (Describe, `vm_status`). fake-pve runs on the
//! system clock sped up by `time_scale` (emulated seconds per real second),
//! so real durations are multiplied by `time_scale` before they are
//! compared with the table. Polling happens every `poll_ms` emulated
//! milliseconds, so a task is seen on average `poll_ms / 2` late.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod connections;
pub mod scale;
pub mod side_by_side;
pub mod throughput;

use goose::config::GooseConfiguration;

/// How a measuring binary ends: its report printed and exit code 0 when
/// it passed, 1 when it did not, 2 (with the reason on stderr) when it
/// could not measure.
pub fn finish(name: &str, result: Result<(String, bool), String>) -> std::process::ExitCode {
    match result {
        Ok((report, passed)) => {
            print!("{report}");
            std::process::ExitCode::from(u8::from(!passed))
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
use goose::prelude::*;
use serde_json::Value;

/// A client that trusts an in-process fake-pve's certificate, logged in
/// as root@pam: the client, the ticket and the CSRF token.
///
/// # Errors
/// The certificate, the connection or the login.
pub async fn root_session(
    pve: &fake_pve::Running,
) -> Result<(reqwest::Client, String, String), String> {
    let http = reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(pve.cert_pem().unwrap_or_default().as_bytes())
                .map_err(|e| e.to_string())?,
        )
        .build()
        .map_err(|e| e.to_string())?;
    let v: Value = http
        .post(format!("{}/access/ticket", pve.api_url()))
        .form(&[("username", "root@pam"), ("password", "password")])
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    let field = |k: &str| {
        v["data"][k]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("no {k} in {v}"))
    };
    let (ticket, csrf) = (field("ticket")?, field("CSRFPreventionToken")?);
    Ok((http, ticket, csrf))
}

/// One row of the documented table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// The operation, as the table names it.
    pub op: &'static str,
    /// The PVE method that starts it.
    pub method: &'static str,
    /// Documented median, milliseconds.
    pub p50_ms: f64,
    /// Documented 95th percentile, milliseconds.
    pub p95_ms: f64,
    /// Documented throughput, operations per minute.
    pub ops_min: f64,
}

const fn row(op: &'static str, method: &'static str, p50: f64, p95: f64, ops: f64) -> Row {
    Row {
        op,
        method,
        p50_ms: p50,
        p95_ms: p95,
        ops_min: ops,
    }
}

/// The VirtRigaud "Load Test Results" table.
pub const ROWS: [Row; 7] = [
    row("Create VM", "create_vm", 2300.0, 4100.0, 12.0),
    row("Power On", "vm_start", 800.0, 1200.0, 45.0),
    row("Power Off", "vm_stop", 650.0, 1100.0, 50.0),
    row("Describe", "vm_status", 120.0, 200.0, 200.0),
    row("Reconfigure CPU", "update_vm_async", 1800.0, 3200.0, 15.0),
    row(
        "Snapshot Create (with memory)",
        "snapshot",
        3500.0,
        6800.0,
        8.0,
    ),
    row("Clone (linked)", "clone_vm", 1900.0, 3400.0, 12.0),
];

const CREATE: usize = 0;
const START: usize = 1;
const STOP: usize = 2;
const DESCRIBE: usize = 3;
const RECONFIGURE: usize = 4;
const SNAPSHOT: usize = 5;
const CLONE: usize = 6;

/// The tolerance of the comparison: 10 % of the documented figure.
pub const TOLERANCE: f64 = 0.10;

/// Whom the load test talks to.
#[derive(Debug, Clone)]
pub enum Target {
    /// A fake-pve started in this process on loopback.
    InProcess {
        /// `instant`, `documented`, or a YAML profile file.
        profile: String,
    },
    /// Any PVE (or fake-pve) at this URL.
    External {
        /// `https://host:8006` (with or without `/api2/json`).
        url: String,
        /// How to authenticate.
        auth: Auth,
    },
}

/// Credentials for an external target.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `USER@REALM!TOKENID=SECRET`.
    Token(String),
    /// Each goose user logs in (`create_ticket`) and uses the ticket and
    /// its CSRF token.
    Password {
        /// `user@realm`.
        username: String,
        /// The password.
        password: String,
    },
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The target.
    pub target: Target,
    /// Emulated seconds per real second (in-process fake-pve; for an
    /// external fake-pve, the scale it runs with).
    pub time_scale: f64,
    /// Task status polling interval, emulated milliseconds.
    pub poll_ms: f64,
    /// Concurrent goose users (spread over the 7 scenarios).
    pub users: usize,
    /// Wall-clock bound of the load, seconds.
    pub run_time: u64,
    /// Bound on scenario iterations per user (with `run_time` still
    /// bounding the time).
    pub iterations: Option<usize>,
    /// Run only these scenarios (goose machine names, e.g. `describe`).
    pub scenarios: Vec<String>,
    /// The node to create guests on.
    pub node: String,
    /// The storage of the guests' disks (must support snapshots and
    /// linked clones: lvmthin, zfs, rbd, ...).
    pub storage: String,
    /// First VMID the load test uses.
    pub vmid_base: u32,
    /// Where goose writes `report.html`, `report.json`, `report.md` (and
    /// this table as `table.md`); none: no reports.
    pub report_dir: Option<PathBuf>,
    /// Print goose's own metrics too.
    pub goose_metrics: bool,
    /// The in-process fake-pve keeps its world in this directory
    /// (journaled, default fsync mode), to measure what that costs.
    pub data_dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            target: Target::InProcess {
                profile: "documented".into(),
            },
            time_scale: 5.0,
            poll_ms: 20.0,
            users: 14,
            run_time: 60,
            iterations: None,
            scenarios: Vec::new(),
            node: "pve".into(),
            storage: "local-lvm".into(),
            vmid_base: 900_000,
            report_dir: None,
            goose_metrics: false,
            data_dir: None,
        }
    }
}

/// One measured row.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The documented row.
    pub row: Row,
    /// Samples.
    pub count: usize,
    /// Measured median, emulated milliseconds.
    pub p50_ms: f64,
    /// Measured 95th percentile, emulated milliseconds.
    pub p95_ms: f64,
    /// Operations per emulated minute.
    pub ops_min: f64,
    /// Within [`TOLERANCE`] of both documented figures (none when not
    /// compared: the `instant` profile).
    pub pass: Option<bool>,
}

/// What a run gave.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The profile (or `external`).
    pub profile: String,
    /// The time scale used.
    pub time_scale: f64,
    /// One per row of [`ROWS`].
    pub rows: Vec<Measured>,
    /// Wall-clock duration of the load, seconds.
    pub seconds: f64,
    /// Requests goose made.
    pub requests: usize,
    /// Requests that failed.
    pub failed_requests: usize,
    /// Transactions that failed (operations that did not end `OK`).
    pub failed_transactions: usize,
}

impl Outcome {
    /// Every compared row passed.
    pub fn passed(&self) -> bool {
        self.rows.iter().all(|r| r.pass != Some(false))
    }

    /// The table, in Markdown.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let compared = self.rows.iter().any(|r| r.pass.is_some());
        let _ = writeln!(
            s,
            "profile {} | time scale {} | {:.1} s | {} requests, {} failed | {} failed transactions",
            self.profile,
            self.time_scale,
            self.seconds,
            self.requests,
            self.failed_requests,
            self.failed_transactions
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "| operation | documented p50/p95 | measured p50/p95 | n | throughput (documented) | verdict |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for m in &self.rows {
            let verdict = match m.pass {
                Some(p) => format!(
                    "{} ({:+.1} % / {:+.1} %)",
                    if p { "PASS" } else { "FAIL" },
                    deviation(m.p50_ms, m.row.p50_ms) * 100.0,
                    deviation(m.p95_ms, m.row.p95_ms) * 100.0
                ),
                None if compared => "-".into(),
                None => "- (emulator cost)".into(),
            };
            let _ = writeln!(
                s,
                "| {} | {} / {} | {} / {} | {} | {:.1} ops/min ({}) | {} |",
                m.row.op,
                ms(m.row.p50_ms),
                ms(m.row.p95_ms),
                ms(m.p50_ms),
                ms(m.p95_ms),
                m.count,
                m.ops_min,
                m.row.ops_min,
                verdict
            );
        }
        s
    }
}

fn deviation(measured: f64, documented: f64) -> f64 {
    (measured - documented) / documented
}

fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} s", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// The nearest-rank percentile of sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Shared by every goose user of one run.
struct Ctx {
    node: String,
    storage: String,
    auth: Auth,
    poll: Duration,
    /// A task not done after this long (real) fails the operation.
    task_timeout: Duration,
    /// Past it, transactions do nothing (bounds `--iterations` runs in
    /// time).
    deadline: Instant,
    next_vmid: AtomicU32,
    snap: AtomicU64,
    samples: Mutex<Vec<Vec<Duration>>>,
}

impl Ctx {
    fn record(&self, row: usize, d: Duration) {
        if let Ok(mut s) = self.samples.lock() {
            s[row].push(d);
        }
    }

    fn vmid(&self) -> u32 {
        self.next_vmid.fetch_add(1, Ordering::Relaxed)
    }

    fn over(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

/// Per goose user.
#[derive(Clone, Default)]
struct Session {
    /// Ticket and CSRF token (password logins).
    ticket: Option<(String, String)>,
    /// The user's long-lived guest (power, describe, reconfigure,
    /// snapshot scenarios).
    vm: Option<u32>,
    /// The user's template (clone and operator scenarios).
    template: Option<u32>,
    /// The guest to clean up after a measured transaction.
    scratch: Option<u32>,
    /// The snapshot to delete after a measured transaction.
    snapname: Option<String>,
}

type TxResult<T> = Result<T, Box<TransactionError>>;

fn fail(msg: impl Into<String>) -> Box<TransactionError> {
    Box::new(TransactionError::Custom(msg.into()))
}

fn session(user: &mut GooseUser) -> &mut Session {
    if user.get_session_data::<Session>().is_none() {
        user.set_session_data(Session::default());
    }
    user.get_session_data_unchecked_mut::<Session>()
}

/// One PVE API call named `name`; answers `data`.
async fn call(
    user: &mut GooseUser,
    ctx: &Ctx,
    method: GooseMethod,
    path: &str,
    name: &str,
    form: &[(&str, String)],
) -> TxResult<Value> {
    let full = format!("/api2/json{path}");
    let mut rb = user.get_request_builder(&method, &full)?;
    let write = !matches!(method, GooseMethod::Get);
    match &ctx.auth {
        Auth::Token(t) => rb = rb.header("Authorization", format!("PVEAPIToken={t}")),
        Auth::Password { .. } => {
            if let Some((ticket, csrf)) = session(user).ticket.clone() {
                rb = rb.header("Cookie", format!("PVEAuthCookie={ticket}"));
                if write {
                    rb = rb.header("CSRFPreventionToken", csrf);
                }
            }
        }
    }
    if write && !form.is_empty() {
        rb = rb.form(form);
    }
    let req = GooseRequest::builder()
        .method(method)
        .path(full.as_str())
        .name(name)
        .set_request_builder(rb)
        .build();
    let goose = user.request(req).await?;
    let resp = goose.response.map_err(|e| fail(format!("{name}: {e}")))?;
    let status = resp.status();
    let body: Value = resp
        .json()
        .await
        .map_err(|e| fail(format!("{name}: {status}: {e}")))?;
    if !status.is_success() {
        return Err(fail(format!(
            "{name} {path}: {status}: {}",
            body.get("message").and_then(Value::as_str).unwrap_or("")
        )));
    }
    Ok(body.get("data").cloned().unwrap_or(Value::Null))
}

/// Waits for the task `upid` by polling `read_task_status`.
async fn wait_task(user: &mut GooseUser, ctx: &Ctx, upid: &Value) -> TxResult<()> {
    let upid = upid
        .as_str()
        .ok_or_else(|| fail(format!("expected a UPID, got {upid}")))?;
    let path = format!("/nodes/{}/tasks/{upid}/status", ctx.node);
    let until = Instant::now() + ctx.task_timeout;
    loop {
        let st = call(user, ctx, GooseMethod::Get, &path, "read_task_status", &[]).await?;
        if st.get("status").and_then(Value::as_str) == Some("stopped") {
            return match st.get("exitstatus").and_then(Value::as_str) {
                Some("OK") => Ok(()),
                other => Err(fail(format!("task {upid} ended {other:?}"))),
            };
        }
        if Instant::now() >= until {
            return Err(fail(format!(
                "task {upid} still running after {:?}",
                ctx.task_timeout
            )));
        }
        tokio::time::sleep(ctx.poll).await;
    }
}

/// Runs a task-starting call and waits for it; records the duration in
/// `row` when given.
async fn task(
    user: &mut GooseUser,
    ctx: &Ctx,
    row: Option<usize>,
    path: &str,
    name: &str,
    form: &[(&str, String)],
    method: GooseMethod,
) -> TxResult<()> {
    let t0 = Instant::now();
    let upid = call(user, ctx, method, path, name, form).await?;
    wait_task(user, ctx, &upid).await?;
    if let Some(r) = row {
        ctx.record(r, t0.elapsed());
    }
    Ok(())
}

fn qemu(ctx: &Ctx, vmid: u32, rest: &str) -> String {
    format!("/nodes/{}/qemu/{vmid}{rest}", ctx.node)
}

async fn create(user: &mut GooseUser, ctx: &Ctx, row: Option<usize>) -> TxResult<u32> {
    let vmid = ctx.vmid();
    let form = [
        ("vmid", vmid.to_string()),
        ("name", format!("loadtest-{vmid}")),
        ("memory", "512".into()),
        ("cores", "1".into()),
        ("scsi0", format!("{}:4", ctx.storage)),
        ("net0", "virtio,bridge=vmbr0".into()),
    ];
    let path = format!("/nodes/{}/qemu", ctx.node);
    task(user, ctx, row, &path, "create_vm", &form, GooseMethod::Post).await?;
    Ok(vmid)
}

async fn start(user: &mut GooseUser, ctx: &Ctx, vmid: u32, row: Option<usize>) -> TxResult<()> {
    let p = qemu(ctx, vmid, "/status/start");
    task(user, ctx, row, &p, "vm_start", &[], GooseMethod::Post).await
}

async fn stop(user: &mut GooseUser, ctx: &Ctx, vmid: u32, row: Option<usize>) -> TxResult<()> {
    let p = qemu(ctx, vmid, "/status/stop");
    task(user, ctx, row, &p, "vm_stop", &[], GooseMethod::Post).await
}

async fn describe(user: &mut GooseUser, ctx: &Ctx, vmid: u32) -> TxResult<()> {
    let t0 = Instant::now();
    let st = call(
        user,
        ctx,
        GooseMethod::Get,
        &qemu(ctx, vmid, "/status/current"),
        "vm_status",
        &[],
    )
    .await?;
    ctx.record(DESCRIBE, t0.elapsed());
    if st.get("status").and_then(Value::as_str).is_none() {
        return Err(fail(format!("vm_status {vmid}: no status in {st}")));
    }
    Ok(())
}

async fn reconfigure(user: &mut GooseUser, ctx: &Ctx, vmid: u32) -> TxResult<()> {
    let cores = if ctx.snap.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) {
        "2"
    } else {
        "1"
    };
    let p = qemu(ctx, vmid, "/config");
    let form = [("cores", cores.to_string())];
    task(
        user,
        ctx,
        Some(RECONFIGURE),
        &p,
        "update_vm_async",
        &form,
        GooseMethod::Post,
    )
    .await
}

async fn snapshot(user: &mut GooseUser, ctx: &Ctx, vmid: u32) -> TxResult<String> {
    let name = format!("lt{}", ctx.snap.fetch_add(1, Ordering::Relaxed));
    let p = qemu(ctx, vmid, "/snapshot");
    let form = [("snapname", name.clone()), ("vmstate", "1".into())];
    task(
        user,
        ctx,
        Some(SNAPSHOT),
        &p,
        "snapshot",
        &form,
        GooseMethod::Post,
    )
    .await?;
    Ok(name)
}

async fn delsnapshot(user: &mut GooseUser, ctx: &Ctx, vmid: u32, name: &str) -> TxResult<()> {
    let p = qemu(ctx, vmid, &format!("/snapshot/{name}"));
    task(user, ctx, None, &p, "delsnapshot", &[], GooseMethod::Delete).await
}

async fn clone(user: &mut GooseUser, ctx: &Ctx, template: u32) -> TxResult<u32> {
    let newid = ctx.vmid();
    let p = qemu(ctx, template, "/clone");
    let form = [
        ("newid", newid.to_string()),
        ("name", format!("loadtest-{newid}")),
        ("full", "0".into()),
    ];
    task(
        user,
        ctx,
        Some(CLONE),
        &p,
        "clone_vm",
        &form,
        GooseMethod::Post,
    )
    .await?;
    Ok(newid)
}

async fn destroy(user: &mut GooseUser, ctx: &Ctx, vmid: u32) -> TxResult<()> {
    let p = qemu(ctx, vmid, "");
    task(user, ctx, None, &p, "destroy_vm", &[], GooseMethod::Delete).await
}

async fn make_template(user: &mut GooseUser, ctx: &Ctx) -> TxResult<u32> {
    let vmid = create(user, ctx, None).await?;
    let p = qemu(ctx, vmid, "/template");
    task(user, ctx, None, &p, "template", &[], GooseMethod::Post).await?;
    Ok(vmid)
}

async fn login(user: &mut GooseUser, ctx: &Ctx) -> TxResult<()> {
    if let Auth::Password { username, password } = &ctx.auth {
        let form = [
            ("username", username.clone()),
            ("password", password.clone()),
        ];
        let d = call(
            user,
            ctx,
            GooseMethod::Post,
            "/access/ticket",
            "create_ticket",
            &form,
        )
        .await?;
        let get = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_string);
        let (Some(t), Some(c)) = (get("ticket"), get("CSRFPreventionToken")) else {
            return Err(fail("create_ticket: no ticket in the answer"));
        };
        session(user).ticket = Some((t, c));
    }
    Ok(())
}

/// The scenarios: (machine-name-ish title, transactions).
type Step = fn(Arc<Ctx>, &mut GooseUser) -> TxFuture<'_>;
type TxFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = TransactionResult> + Send + 'a>>;

fn tx(ctx: &Arc<Ctx>, name: &str, step: Step) -> Transaction {
    let ctx = Arc::clone(ctx);
    let f: goose::goose::TransactionFunction = Arc::new(move |user| {
        let ctx = Arc::clone(&ctx);
        Box::pin(async move {
            let r = step(ctx, user).await;
            if r.is_err() {
                // A failing transaction must not spin: goose would run it
                // again at once.
                tokio::time::sleep(IDLE).await;
            }
            r
        })
    });
    Transaction::new(f).set_name(name)
}

/// How long a user waits when it has nothing to do (past the deadline)
/// or after a failure.
const IDLE: Duration = Duration::from_millis(50);

/// Past the deadline: wait (yielding to the runtime) and do nothing.
async fn idle() -> TransactionResult {
    tokio::time::sleep(IDLE).await;
    Ok(())
}

macro_rules! step {
    (|$ctx:ident, $user:ident| $body:block) => {{
        fn f($ctx: Arc<Ctx>, $user: &mut GooseUser) -> TxFuture<'_> {
            Box::pin(async move { $body })
        }
        f as Step
    }};
}

/// Setup of a user: log in, and make the guests its scenario needs.
fn setup(ctx: &Arc<Ctx>, vm: bool, running: bool, template: bool) -> Transaction {
    let ctx = Arc::clone(ctx);
    let f: goose::goose::TransactionFunction = Arc::new(move |user| {
        let ctx = Arc::clone(&ctx);
        Box::pin(async move {
            login(user, &ctx).await?;
            if vm {
                let id = create(user, &ctx, None).await?;
                session(user).vm = Some(id);
                if running {
                    start(user, &ctx, id, None).await?;
                }
            }
            if template {
                let id = make_template(user, &ctx).await?;
                session(user).template = Some(id);
            }
            Ok(())
        })
    });
    Transaction::new(f).set_name("setup").set_on_start()
}

/// After a measured transaction: destroy the guest it made.
fn cleanup(ctx: &Arc<Ctx>) -> Transaction {
    tx(
        ctx,
        "cleanup",
        step!(|ctx, user| {
            if let Some(id) = session(user).scratch.take() {
                destroy(user, &ctx, id).await?;
            }
            Ok(())
        }),
    )
}

fn teardown(ctx: &Arc<Ctx>) -> Transaction {
    tx(
        ctx,
        "teardown",
        step!(|ctx, user| {
            let s = session(user).clone();
            for id in s.scratch.into_iter().chain(s.vm).chain(s.template) {
                // Best effort: stop (refused if already stopped), destroy.
                let _ = stop(user, &ctx, id, None).await;
                destroy(user, &ctx, id).await?;
            }
            Ok(())
        }),
    )
    .set_on_stop()
}

fn the_vm(user: &mut GooseUser) -> TxResult<u32> {
    session(user).vm.ok_or_else(|| fail("setup made no guest"))
}

fn scenarios(ctx: &Arc<Ctx>) -> Result<Vec<Scenario>, GooseError> {
    let create_row = Scenario::new("Create VM")
        .register_transaction(setup(ctx, false, false, false))
        .register_transaction(
            tx(
                ctx,
                ROWS[CREATE].op,
                step!(|ctx, user| {
                    if ctx.over() {
                        return idle().await;
                    }
                    let id = create(user, &ctx, Some(CREATE)).await?;
                    session(user).scratch = Some(id);
                    Ok(())
                }),
            )
            .set_sequence(1),
        )
        .register_transaction(cleanup(ctx).set_sequence(2))
        .register_transaction(teardown(ctx));
    let power = Scenario::new("Power")
        .register_transaction(setup(ctx, true, false, false))
        .register_transaction(
            tx(
                ctx,
                ROWS[START].op,
                step!(|ctx, user| {
                    if ctx.over() {
                        return idle().await;
                    }
                    let id = the_vm(user)?;
                    start(user, &ctx, id, Some(START)).await?;
                    Ok(())
                }),
            )
            .set_sequence(1),
        )
        .register_transaction(
            tx(
                ctx,
                ROWS[STOP].op,
                step!(|ctx, user| {
                    let id = the_vm(user)?;
                    // Stop whatever the start left running, even late.
                    let running = call(
                        user,
                        &ctx,
                        GooseMethod::Get,
                        &qemu(&ctx, id, "/status/current"),
                        "vm_status",
                        &[],
                    )
                    .await?
                    .get("status")
                    .and_then(Value::as_str)
                        == Some("running");
                    if running {
                        stop(user, &ctx, id, Some(STOP)).await?;
                    }
                    Ok(())
                }),
            )
            .set_sequence(2),
        )
        .register_transaction(teardown(ctx));
    let describe_row = Scenario::new("Describe")
        .register_transaction(setup(ctx, true, true, false))
        .register_transaction(tx(
            ctx,
            ROWS[DESCRIBE].op,
            step!(|ctx, user| {
                if ctx.over() {
                    return idle().await;
                }
                let id = the_vm(user)?;
                describe(user, &ctx, id).await?;
                Ok(())
            }),
        ))
        .register_transaction(teardown(ctx));
    let reconfigure_row = Scenario::new("Reconfigure")
        .register_transaction(setup(ctx, true, false, false))
        .register_transaction(tx(
            ctx,
            ROWS[RECONFIGURE].op,
            step!(|ctx, user| {
                if ctx.over() {
                    return idle().await;
                }
                let id = the_vm(user)?;
                reconfigure(user, &ctx, id).await?;
                Ok(())
            }),
        ))
        .register_transaction(teardown(ctx));
    let snapshot_row = Scenario::new("Snapshot")
        .register_transaction(setup(ctx, true, true, false))
        .register_transaction(
            tx(
                ctx,
                ROWS[SNAPSHOT].op,
                step!(|ctx, user| {
                    if ctx.over() {
                        return idle().await;
                    }
                    let id = the_vm(user)?;
                    let name = snapshot(user, &ctx, id).await?;
                    session(user).snapname = Some(name);
                    Ok(())
                }),
            )
            .set_sequence(1),
        )
        .register_transaction(
            tx(
                ctx,
                "cleanup",
                step!(|ctx, user| {
                    let id = the_vm(user)?;
                    if let Some(name) = session(user).snapname.take() {
                        delsnapshot(user, &ctx, id, &name).await?;
                    }
                    Ok(())
                }),
            )
            .set_sequence(2),
        )
        .register_transaction(teardown(ctx));
    let clone_row = Scenario::new("Clone")
        .register_transaction(setup(ctx, false, false, true))
        .register_transaction(
            tx(
                ctx,
                ROWS[CLONE].op,
                step!(|ctx, user| {
                    if ctx.over() {
                        return idle().await;
                    }
                    let t = session(user)
                        .template
                        .ok_or_else(|| fail("setup made no template"))?;
                    let id = clone(user, &ctx, t).await?;
                    session(user).scratch = Some(id);
                    Ok(())
                }),
            )
            .set_sequence(1),
        )
        .register_transaction(cleanup(ctx).set_sequence(2))
        .register_transaction(teardown(ctx));
    let operator = Scenario::new("Operator")
        .register_transaction(setup(ctx, false, false, true))
        .register_transaction(tx(
            ctx,
            "Operator",
            step!(|ctx, user| {
                if ctx.over() {
                    return idle().await;
                }
                let vm = create(user, &ctx, Some(CREATE)).await?;
                session(user).vm = Some(vm);
                start(user, &ctx, vm, Some(START)).await?;
                describe(user, &ctx, vm).await?;
                reconfigure(user, &ctx, vm).await?;
                snapshot(user, &ctx, vm).await?;
                let t = session(user)
                    .template
                    .ok_or_else(|| fail("setup made no template"))?;
                let linked = clone(user, &ctx, t).await?;
                session(user).scratch = Some(linked);
                stop(user, &ctx, vm, Some(STOP)).await?;
                destroy(user, &ctx, vm).await?;
                session(user).vm = None;
                destroy(user, &ctx, linked).await?;
                session(user).scratch = None;
                Ok(())
            }),
        ))
        .register_transaction(teardown(ctx));
    Ok(vec![
        create_row,
        power,
        describe_row,
        reconfigure_row,
        snapshot_row,
        clone_row,
        operator,
    ])
}

/// Runs the load test.
///
/// # Errors
/// fake-pve could not start, goose refused the configuration, or the run
/// overran its bound.
pub async fn run(opts: &Options) -> Result<Outcome, String> {
    if !(opts.time_scale.is_finite() && opts.time_scale > 0.0) {
        return Err("--time-scale must be positive".into());
    }
    if opts.users == 0 || opts.run_time == 0 {
        return Err("--users and --run-time must be positive".into());
    }
    let mut fake = None;
    let (host, auth, profile, scale) = match &opts.target {
        Target::InProcess { profile } => {
            let mut latency = match fake_pve::Latency::builtin(profile) {
                Some(l) => l,
                None => {
                    let text = std::fs::read_to_string(profile)
                        .map_err(|e| format!("profile {profile}: {e}"))?;
                    fake_pve::Latency::from_yaml(&text)
                        .map_err(|e| format!("profile {profile}: {e}"))?
                }
            };
            // instant: nothing to scale; the measured figures are real.
            let scale = if latency.name == "instant" {
                1.0
            } else {
                opts.time_scale
            };
            latency.time_scale = scale;
            let mut b = fake_pve::FakePve::builder();
            if let Some(dir) = &opts.data_dir {
                b = b.data_dir(dir);
            }
            let pve = b
                .listen(SocketAddr::from(([127, 0, 0, 1], 0)))
                .auth_failure_delay(Duration::ZERO)
                .latency(latency.clone())
                .start()
                .await
                .map_err(|e| e.to_string())?;
            let host = pve.url();
            fake = Some(pve);
            let auth = Auth::Password {
                username: "root@pam".into(),
                password: "password".into(),
            };
            (host, auth, latency.name, scale)
        }
        Target::External { url, auth } => {
            let host = url
                .trim_end_matches('/')
                .trim_end_matches("/api2/json")
                .to_string();
            (host, auth.clone(), "external".to_string(), opts.time_scale)
        }
    };
    let result = attack(opts, host, auth, profile, scale).await;
    if let Some(pve) = fake {
        pve.shutdown().await;
    }
    result
}

async fn attack(
    opts: &Options,
    host: String,
    auth: Auth,
    profile: String,
    scale: f64,
) -> Result<Outcome, String> {
    let started = Instant::now();
    let run_time = Duration::from_secs(opts.run_time);
    let ctx = Arc::new(Ctx {
        node: opts.node.clone(),
        storage: opts.storage.clone(),
        auth,
        poll: Duration::from_secs_f64((opts.poll_ms / scale / 1000.0).max(0.000_5)),
        task_timeout: Duration::from_secs(30).min(run_time + Duration::from_secs(10)),
        deadline: started + run_time,
        next_vmid: AtomicU32::new(opts.vmid_base),
        snap: AtomicU64::new(0),
        samples: Mutex::new(vec![Vec::new(); ROWS.len()]),
    });

    let mut config = GooseConfiguration::default();
    config.host = Some(host);
    config.users = Some(opts.users);
    config.increase_rate = Some(opts.users.to_string());
    match opts.iterations {
        Some(n) => config.iterations = Some(n),
        None => {
            config.run_time = Some(opts.run_time.to_string());
            config.no_reset_metrics = true;
        }
    }
    config.accept_invalid_certs = true;
    config.no_telnet = true;
    config.quiet = 1;
    config.no_print_metrics = !opts.goose_metrics;
    config.no_error_summary = !opts.goose_metrics;
    if let Some(dir) = &opts.report_dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        config.report_file = ["report.html", "report.json", "report.md"]
            .iter()
            .map(|f| dir.join(f).display().to_string())
            .collect();
    }
    let mut goose = GooseAttack::initialize_with_config(config).map_err(|e| e.to_string())?;
    let wanted = |s: &Scenario| {
        opts.scenarios.is_empty()
            || opts
                .scenarios
                .iter()
                .any(|w| w.eq_ignore_ascii_case(&s.name) || w.eq_ignore_ascii_case(&s.machine_name))
    };
    let mut any = false;
    for s in scenarios(&ctx).map_err(|e| e.to_string())? {
        if wanted(&s) {
            goose = goose.register_scenario(s);
            any = true;
        }
    }
    if !any {
        return Err(format!("no scenario matches {:?}", opts.scenarios));
    }
    // Setup and teardown add to the bound: generous, but bounded.
    let hard = run_time * 3 + Duration::from_secs(60);
    let metrics = tokio::time::timeout(hard, goose.execute())
        .await
        .map_err(|_| format!("the load test overran its bound of {hard:?}"))?
        .map_err(|e| e.to_string())?;
    let seconds = started.elapsed().as_secs_f64().min(run_time.as_secs_f64());

    let samples = ctx.samples.lock().map_err(|e| e.to_string())?.clone();
    let compare = profile != "instant";
    let emulated_min = seconds * scale / 60.0;
    let rows = ROWS
        .iter()
        .zip(samples)
        .map(|(row, s)| {
            let mut v: Vec<f64> = s.iter().map(|d| d.as_secs_f64() * 1000.0 * scale).collect();
            v.sort_by(f64::total_cmp);
            let (p50, p95) = (percentile(&v, 0.50), percentile(&v, 0.95));
            let pass = (compare && !v.is_empty()).then(|| {
                deviation(p50, row.p50_ms).abs() <= TOLERANCE
                    && deviation(p95, row.p95_ms).abs() <= TOLERANCE
            });
            Measured {
                row: *row,
                count: v.len(),
                p50_ms: p50,
                p95_ms: p95,
                ops_min: if emulated_min > 0.0 {
                    v.len() as f64 / emulated_min
                } else {
                    0.0
                },
                pass: if compare && v.is_empty() { None } else { pass },
            }
        })
        .collect();
    let (requests, failed_requests) = metrics.requests.values().fold((0, 0), |(n, f), r| {
        (n + r.success_count + r.fail_count, f + r.fail_count)
    });
    let failed_transactions = metrics
        .transactions
        .iter()
        .flatten()
        .map(|t| t.fail_count)
        .sum();
    let outcome = Outcome {
        profile,
        time_scale: scale,
        rows,
        seconds,
        requests,
        failed_requests,
        failed_transactions,
    };
    if let Some(dir) = &opts.report_dir {
        std::fs::write(dir.join("table.md"), outcome.table())
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(outcome)
}

/// Names of the scenarios, for `--scenario`.
pub fn scenario_names() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("create-vm", "Create VM"),
        ("power", "Power On and Power Off"),
        ("describe", "Describe"),
        ("reconfigure", "Reconfigure CPU"),
        ("snapshot", "Snapshot Create (with memory)"),
        ("clone", "Clone (linked)"),
        ("operator", "the mixed operator scenario"),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.95), 95.0);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    #[test]
    fn verdicts_in_the_table() {
        let m = |row: Row, p50: f64, p95: f64, pass| Measured {
            row,
            count: 10,
            p50_ms: p50,
            p95_ms: p95,
            ops_min: 1.0,
            pass,
        };
        let out = Outcome {
            profile: "documented".into(),
            time_scale: 5.0,
            rows: vec![
                m(ROWS[0], 2300.0, 4100.0, Some(true)),
                m(ROWS[3], 140.0, 200.0, Some(false)),
            ],
            seconds: 1.0,
            requests: 2,
            failed_requests: 0,
            failed_transactions: 0,
        };
        let t = out.table();
        assert!(
            t.contains("| Create VM | 2.30 s / 4.10 s | 2.30 s / 4.10 s |"),
            "{t}"
        );
        assert!(t.contains("FAIL (+16.7 % / +0.0 %)"), "{t}");
        assert!(!out.passed());
    }
}
