//! [`PveWorld`]: one scenario's state. Its target (a fresh fake-pve, or
//! the real cluster), the clients it speaks through (the administrator
//! and whoever the scenario logs in as), what the last call answered, and
//! everything the scenario made, to be removed after it.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use pve_client::api::tasks::Upid;
use pve_client::{Client, Config, Method, Params, RetryPolicy};
use pve_schema::Release;
use serde_json::Value;

use crate::raw::{Raw, Trust};
use crate::target::{Kind, Target};

mod cleanup;
mod guard;
mod names;
mod outcome;

pub use cleanup::{
    CleanupError, Made, TaskWaitError, clear_vnet_firewall, remove_ct, remove_fw_group, remove_vm,
    remove_volume, wait_task,
};
pub use outcome::Outcome;

/// The fixed start of a fake-pve's manual clock: tasks and tickets age
/// only when a scenario says so.
pub const FAKE_T0: i64 = 1_790_000_000;

/// root@pam's password on fake-pve.
pub const FAKE_ROOT_PASSWORD: &str = "password";

/// The actor every scenario starts as.
pub const ADMIN: &str = "admin";

static SCENARIO_SEQ: AtomicU32 = AtomicU32::new(0);

/// How many VMIDs of the reserved range one scenario gets (`{vm1}` ..
/// `{vm10}`). Against a real cluster concurrent scenarios get disjoint
/// blocks; against fake-pve every scenario has its own server and starts
/// at the range's first VMID.
pub const VM_BLOCK: u32 = 10;

/// Blocks of the reserved range in use by running scenarios (real target).
static VM_BLOCKS: std::sync::Mutex<std::collections::BTreeSet<u32>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The state of one scenario.
#[derive(Default, cucumber::World)]
#[world(init = Self::default)]
pub struct PveWorld {
    target: Option<Arc<Target>>,
    fake: Option<fake_pve::Running>,
    fake_only: bool,
    destructive: bool,
    /// Whether the scenario applied the SDN configuration (cleanup then
    /// applies its removals too).
    pub sdn_applied: bool,
    release: Option<Release>,
    prefix: String,
    admin_principal: String,
    raw: Option<Raw>,
    actor: String,
    clients: HashMap<String, Client>,
    /// userid → password, for the users the scenario made.
    pub passwords: HashMap<String, String>,
    /// actor → (ticket, CSRF token), for ticket logins.
    pub tickets: HashMap<String, (String, String)>,
    /// full token ID → secret, for the tokens the scenario made.
    pub secrets: HashMap<String, String>,
    /// What the last call answered.
    pub last: Option<Outcome>,
    /// The tasks started, the last one last.
    pub upids: Vec<Upid>,
    /// Values a scenario remembered (`{var:NAME}` in texts).
    pub vars: HashMap<String, String>,
    made: Vec<Made>,
    /// The first VMID of this scenario's block (`{vm1}`).
    vm_base: u32,
    /// The block taken from [`VM_BLOCKS`], to give back after the scenario.
    vm_block: Option<u32>,
    /// A load run (`features/load/`).
    pub load: crate::steps::load::LoadRun,
    /// Other in-process fake-pve servers of the scenario (the cluster a
    /// join goes to), kept running until it ends.
    peers: Vec<fake_pve::Running>,
}

impl fmt::Debug for PveWorld {
    /// Without tickets, passwords or secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PveWorld")
            .field("target", &self.target.as_ref().map(|t| t.describe()))
            .field("release", &self.release)
            .field("prefix", &self.prefix)
            .field("actor", &self.actor)
            .field("last", &self.last)
            .field("upids", &self.upids)
            .field("made", &self.made)
            .finish_non_exhaustive()
    }
}

impl PveWorld {
    /// Sets the scenario up: a fresh fake-pve of the release its tags ask
    /// for, or the real cluster, and the administrator's client.
    ///
    /// # Panics
    /// When the target cannot be reached (the scenario then fails).
    pub async fn setup(&mut self, target: Arc<Target>, tags: &[String]) {
        let has = |t: &str| tags.iter().any(|x| x == t);
        self.fake_only = has("fake-only");
        self.destructive = has("destructive");
        self.prefix = format!(
            "{}{}",
            target.prefix,
            SCENARIO_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        self.actor = ADMIN.into();
        self.vm_base = *target.vmids.start();
        if target.is_real() {
            let blocks = (target.vmids.end() - target.vmids.start() + 1) / VM_BLOCK;
            let mut busy = VM_BLOCKS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let free = (0..blocks).find(|b| !busy.contains(b)).unwrap_or_else(|| {
                panic!("the reserved VMID range has no free block of {VM_BLOCK} VMIDs left")
            });
            busy.insert(free);
            self.vm_block = Some(free);
            self.vm_base = target.vmids.start() + free * VM_BLOCK;
        }
        match &target.kind {
            Kind::Fake { release } => {
                let release = crate::target::fake_release_for(tags, *release);
                let version = match release {
                    Release::V8_4 => fake_pve::PveVersion::V8_4,
                    Release::V9_1 => fake_pve::PveVersion::V9_1,
                    Release::V9_2 => fake_pve::PveVersion::V9_2,
                };
                let fake = fake_pve::FakePve::builder()
                    .listen(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
                    .auth_failure_delay(Duration::ZERO)
                    .clock(fake_pve::Clock::manual(FAKE_T0))
                    .pve_version(version)
                    .start()
                    .await
                    .unwrap_or_else(|e| panic!("fake-pve does not start: {e}"));
                let cert = fake.cert_pem().unwrap_or_default().to_string();
                let config = Config::builder()
                    .endpoint(fake.url())
                    .password("root@pam", FAKE_ROOT_PASSWORD)
                    .ca_bundle_pem(cert.clone())
                    .retry(RetryPolicy::none())
                    .build()
                    .unwrap_or_else(|e| panic!("client configuration: {e}"));
                let admin = Client::connect(config)
                    .await
                    .unwrap_or_else(|e| panic!("cannot log in to fake-pve: {e}"));
                self.raw = Some(
                    Raw::new(&fake.api_url(), &Trust::CaPem(cert))
                        .unwrap_or_else(|e| panic!("{e}")),
                );
                self.admin_principal = "root@pam".into();
                self.clients.insert(ADMIN.into(), admin);
                self.fake = Some(fake);
                self.release = Some(release);
            }
            Kind::Real(real) => {
                assert!(
                    !self.fake_only,
                    "a @fake-only scenario must not run against a real cluster"
                );
                let admin = Client::connect(real.admin.clone())
                    .await
                    .unwrap_or_else(|e| panic!("cannot connect to the cluster: {e}"));
                self.raw = Some(
                    Raw::new(real.admin.api_url(), &real.trust).unwrap_or_else(|e| panic!("{e}")),
                );
                self.admin_principal = real.admin.credentials().principal();
                self.clients.insert(ADMIN.into(), admin);
                self.release = Some(real.release);
            }
        }
        self.target = Some(target);
    }

    /// The target.
    ///
    /// # Panics
    /// Before [`PveWorld::setup`].
    pub fn target(&self) -> &Target {
        self.target
            .as_deref()
            .unwrap_or_else(|| panic!("the scenario has no target"))
    }

    /// The release that answers.
    pub fn release(&self) -> Release {
        self.release.unwrap_or(Release::V9_2)
    }

    /// The in-process fake-pve, for `@fake-only` steps.
    ///
    /// # Panics
    /// Against a real cluster, or when the scenario is not tagged
    /// `@fake-only` (so that the tag filter keeps it off real clusters).
    pub fn fake(&self) -> &fake_pve::Running {
        assert!(
            self.fake_only,
            "this step needs fake-pve's controls: tag the scenario @fake-only"
        );
        self.fake
            .as_ref()
            .unwrap_or_else(|| panic!("this step needs fake-pve, not a real cluster"))
    }

    /// Moves the in-process fake-pve's clock on by `secs`; `false` against
    /// a real cluster, whose time only passes.
    pub fn advance_fake_clock(&self, secs: i64) -> bool {
        match &self.fake {
            Some(f) => {
                f.clock().advance(secs);
                true
            }
            None => false,
        }
    }

    /// Raw HTTP to the target.
    pub fn raw(&self) -> &Raw {
        self.raw
            .as_ref()
            .unwrap_or_else(|| panic!("the scenario has no target"))
    }

    /// Who the scenario acts as now.
    pub fn actor(&self) -> &str {
        &self.actor
    }

    /// Acts as `actor` from now on (its client must exist).
    pub fn act_as(&mut self, actor: &str) {
        assert!(
            self.clients.contains_key(actor),
            "no session for '{actor}': log in or create the token first"
        );
        self.actor = actor.to_string();
    }

    /// The client of the current actor.
    pub fn client(&self) -> Client {
        self.client_of(&self.actor)
    }

    /// The client of `actor`.
    pub fn client_of(&self, actor: &str) -> Client {
        self.clients
            .get(actor)
            .cloned()
            .unwrap_or_else(|| panic!("no session for '{actor}'"))
    }

    /// The administrator's client.
    pub fn admin(&self) -> Client {
        self.client_of(ADMIN)
    }

    /// Whether the scenario acts as root@pam now, for whom alone PVE
    /// skips permission checks.
    pub fn acting_as_root(&self) -> bool {
        self.actor == ADMIN && self.admin_principal == "root@pam"
    }

    /// Who the administrator is (`root@pam`, or the configured user or
    /// token).
    pub fn admin_principal(&self) -> &str {
        &self.admin_principal
    }

    /// A configuration builder for the target without credentials.
    fn builder(&self) -> pve_client::ConfigBuilder {
        let b = match &self.target().kind {
            Kind::Fake { .. } => {
                let fake = self.fake.as_ref().unwrap_or_else(|| panic!("no fake-pve"));
                Config::builder()
                    .endpoint(fake.url())
                    .ca_bundle_pem(fake.cert_pem().unwrap_or_default())
            }
            Kind::Real(real) => real.builder().unwrap_or_else(|e| panic!("{e}")),
        };
        b.retry(RetryPolicy::none())
    }

    /// Keeps `run`, another fake-pve of the scenario, running until the
    /// scenario ends, and makes `client` (a session on it) `actor`'s.
    pub fn add_peer(&mut self, actor: &str, run: fake_pve::Running, client: Client) {
        self.peers.push(run);
        self.clients.insert(actor.to_string(), client);
    }

    /// Adds a session for `actor` that uses a ticket (and CSRF token).
    pub fn add_ticket_session(&mut self, actor: &str, ticket: &str, csrf: &str) {
        let config = self
            .builder()
            .ticket(ticket.to_string(), csrf.to_string())
            .build()
            .unwrap_or_else(|e| panic!("client configuration: {e}"));
        let client = Client::new(config).unwrap_or_else(|e| panic!("{e}"));
        self.clients.insert(actor.to_string(), client);
        self.tickets
            .insert(actor.to_string(), (ticket.to_string(), csrf.to_string()));
    }

    /// Adds a session for `actor` that logs in with a password.
    ///
    /// # Panics
    /// When the login fails.
    pub async fn add_password_session(&mut self, actor: &str, userid: &str, password: &str) {
        let config = self
            .builder()
            .password(userid.to_string(), password.to_string())
            .build()
            .unwrap_or_else(|e| panic!("client configuration: {e}"));
        let client = Client::connect(config)
            .await
            .unwrap_or_else(|e| panic!("{userid} cannot log in: {e}"));
        self.clients.insert(actor.to_string(), client);
    }

    /// Adds a session for `actor` that uses an API token.
    pub fn add_token_session(&mut self, actor: &str, full_tokenid: &str, secret: &str) {
        let config = self
            .builder()
            .token(full_tokenid.to_string(), secret.to_string())
            .build()
            .unwrap_or_else(|e| panic!("client configuration: {e}"));
        let client = Client::new(config).unwrap_or_else(|e| panic!("{e}"));
        self.clients.insert(actor.to_string(), client);
    }

    /// The ticket and CSRF token `actor` logged in with.
    pub fn ticket_of(&self, actor: &str) -> (String, String) {
        self.tickets
            .get(actor)
            .cloned()
            .unwrap_or_else(|| panic!("'{actor}' has not logged in"))
    }

    /// The last task started.
    pub fn last_upid(&self) -> &Upid {
        self.upids
            .last()
            .unwrap_or_else(|| panic!("no task has been started"))
    }

    // ---- calls -------------------------------------------------------

    /// Calls `method path` as the current actor through `pve-client`,
    /// checks a success against the official return schema, and keeps the
    /// outcome.
    ///
    /// # Panics
    /// When the request is refused by [`PveWorld::guard_request`] or the
    /// answer does not fit the schema.
    pub async fn call(&mut self, method: Method, path: &str, params: Params) -> &Outcome {
        self.guard_request(&method, path, &params);
        let request = format!("{method} {path}");
        let r = self.client().request(method.clone(), path, &params).await;
        let outcome = Outcome::from_client(request, r);
        if outcome.ok() {
            self.check_shape(&method, path, &outcome.data);
        }
        self.last.insert(outcome)
    }

    /// Uploads a file through `pve-client` (`multipart/form-data`) as the
    /// current actor, and keeps the outcome.
    ///
    /// # Panics
    /// As [`PveWorld::call`].
    pub async fn call_upload(
        &mut self,
        sid: &str,
        req: &pve_client::api::storage::Upload,
    ) -> &Outcome {
        let node = self.target().node.clone();
        let path = format!(
            "/nodes/{}/storage/{}/upload",
            pve_client::api::seg(&node),
            pve_client::api::seg(sid)
        );
        self.guard_request(&Method::POST, &path, &Params::new());
        let request = format!("POST {path}");
        let r = self.client().storage().upload(&node, sid, req).await;
        let outcome = match r {
            Ok(upid) => Outcome {
                request,
                status: 200,
                data: Value::String(upid.to_string()),
                ..Outcome::default()
            },
            Err(e) => Outcome::from_client(request, Err(e)),
        };
        if outcome.ok() {
            self.check_shape(&Method::POST, &path, &outcome.data);
        }
        self.last.insert(outcome)
    }

    /// Sends `method path` (after `/api2/json`) over plain HTTP with these
    /// headers, and keeps the outcome.
    ///
    /// # Panics
    /// As [`PveWorld::call`], and when nothing answers.
    pub async fn call_raw(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(String, String)],
        params: Params,
    ) -> &Outcome {
        self.raw_outcome(method, path, headers, params, false).await
    }

    /// As [`PveWorld::call_raw`]; with `may_close`, a request the target
    /// closes the connection on without answering is recorded as status 0
    /// with the client's error as the message, rather than a panic.
    pub async fn raw_outcome(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(String, String)],
        params: Params,
        may_close: bool,
    ) -> &Outcome {
        self.guard_request(&method, path, &params);
        let request = format!("{method} {path}");
        let reply = self
            .raw()
            .send(
                method.clone(),
                &format!("/api2/json{path}"),
                headers,
                params.pairs(),
            )
            .await;
        let outcome = match reply {
            Ok(reply) => Outcome::from_raw(request, reply),
            Err(e) if may_close => Outcome {
                request,
                status: 0,
                message: e.to_string(),
                ..Outcome::default()
            },
            Err(e) => panic!("{e}"),
        };
        if outcome.ok() {
            self.check_shape(&method, path, &outcome.data);
        }
        self.last.insert(outcome)
    }

    /// Checks `data` against the `returns` schema of the endpoint.
    ///
    /// # Panics
    /// When it does not fit.
    pub fn check_shape(&self, method: &Method, path: &str, data: &Value) {
        let path = path.split('?').next().unwrap_or(path);
        let segs: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(percent_decode)
            .collect();
        // The journal is streamed as a download, which PVE does not check
        // against its return schema (strings): 9.2's structured records
        // are objects.
        let structured_journal = segs.last().is_some_and(|s| s == "journal")
            && data
                .as_array()
                .and_then(|a| a.first())
                .is_some_and(Value::is_object);
        if structured_journal {
            return;
        }
        if let Some(found) = pve_schema::spec(self.release()).find(method.as_str(), &segs) {
            let problems = pve_schema::returns::check(&found.endpoint.returns, data);
            assert!(
                problems.is_empty(),
                "{method} {path}: the answer does not fit PVE's return schema: {problems:?}\n{data}"
            );
        }
    }

    /// The last outcome.
    ///
    /// # Panics
    /// When nothing was called yet.
    pub fn last(&self) -> &Outcome {
        self.last
            .as_ref()
            .unwrap_or_else(|| panic!("no call has been made yet"))
    }

    /// A `/_fake` control call as root@pam (fake-pve only).
    ///
    /// # Panics
    /// When the control API refuses.
    pub async fn control(&self, method: Method, path: &str, body: Option<(&str, String)>) -> Value {
        let fake = self.fake();
        self.control_on(fake, method, path, body).await
    }

    /// A `/_fake` control call that only gives the in-process fake-pve
    /// what a real target's fake-pve has from the world it was started
    /// with (`ci/conformance-real.yaml`, such as a Proxmox Backup Server):
    /// the scenario needs no `@fake-only`, and against a real target the
    /// call is not made (`None`).
    ///
    /// # Panics
    /// When the control API refuses.
    pub async fn control_for_parity(
        &self,
        method: Method,
        path: &str,
        body: Option<(&str, String)>,
    ) -> Option<Value> {
        let fake = self.fake.as_ref()?;
        Some(self.control_on(fake, method, path, body).await)
    }

    async fn control_on(
        &self,
        fake: &fake_pve::Running,
        method: Method,
        path: &str,
        body: Option<(&str, String)>,
    ) -> Value {
        let (ticket, csrf) = self.root_ticket().await;
        let http = reqwest::Client::builder()
            .add_root_certificate(
                reqwest::Certificate::from_pem(fake.cert_pem().unwrap_or_default().as_bytes())
                    .unwrap_or_else(|e| panic!("{e}")),
            )
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut rb = http
            .request(method.clone(), format!("{}{path}", fake.url()))
            .header("Cookie", format!("PVEAuthCookie={ticket}"))
            .header("CSRFPreventionToken", csrf);
        if let Some((ctype, text)) = body {
            rb = rb.header("Content-Type", ctype).body(text);
        }
        let r = rb
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = r.status();
        let text = r.text().await.unwrap_or_default();
        assert!(status.is_success(), "{method} {path}: {status} {text}");
        serde_json::from_str::<Value>(&text)
            .map(|v| v["data"].clone())
            .unwrap_or(Value::Null)
    }

    /// Headers that authenticate the administrator on raw requests: a
    /// root@pam ticket on fake-pve; the `PVE_*` token (or a ticket for
    /// `PVE_USERNAME`) on a real cluster.
    pub async fn admin_headers(&self) -> Vec<(String, String)> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let (ticket, csrf) = match (&self.target().kind, env("PVE_TOKEN_ID")) {
            (Kind::Real(_), Some(id)) => {
                let secret = env("PVE_TOKEN_SECRET").unwrap_or_default();
                return vec![("Authorization".into(), format!("PVEAPIToken={id}={secret}"))];
            }
            (Kind::Real(_), None) => {
                self.login_raw(
                    &env("PVE_USERNAME").unwrap_or_default(),
                    &env("PVE_PASSWORD").unwrap_or_default(),
                )
                .await
            }
            (Kind::Fake { .. }, _) => self.root_ticket().await,
        };
        vec![
            ("Cookie".into(), format!("PVEAuthCookie={ticket}")),
            ("CSRFPreventionToken".into(), csrf),
        ]
    }

    async fn root_ticket(&self) -> (String, String) {
        self.login_raw("root@pam", FAKE_ROOT_PASSWORD).await
    }

    async fn login_raw(&self, username: &str, password: &str) -> (String, String) {
        let reply = self
            .raw()
            .send(
                Method::POST,
                "/api2/json/access/ticket",
                &[],
                &[
                    ("username".into(), username.into()),
                    ("password".into(), password.into()),
                ],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let j = reply.json().unwrap_or(Value::Null);
        (
            j["data"]["ticket"].as_str().unwrap_or_default().to_string(),
            j["data"]["CSRFPreventionToken"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    }
}

pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(s.get(i + 1..i + 3).unwrap_or(""), 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
