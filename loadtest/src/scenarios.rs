//! The goose scenarios: one per row of the table and the operator's
//! mixed one, each a sequence of PVE API calls by goose users sharing one
//! `Ctx`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use goose::prelude::*;
use serde_json::Value;

use crate::options::Auth;
use crate::table::{CLONE, CREATE, DESCRIBE, RECONFIGURE, ROWS, SNAPSHOT, START, STOP};

/// Shared by every goose user of one run.
pub(crate) struct Ctx {
    pub(crate) node: String,
    pub(crate) storage: String,
    pub(crate) auth: Auth,
    pub(crate) poll: Duration,
    /// A task not done after this long (real) fails the operation.
    pub(crate) task_timeout: Duration,
    /// Past it, transactions do nothing (bounds `--iterations` runs in
    /// time).
    pub(crate) deadline: Instant,
    pub(crate) next_vmid: AtomicU32,
    pub(crate) snap: AtomicU64,
    pub(crate) samples: Mutex<Vec<Vec<Duration>>>,
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

pub(crate) fn scenarios(ctx: &Arc<Ctx>) -> Result<Vec<Scenario>, GooseError> {
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
