//! [`PveWorld`]: one scenario's state. Its target (a fresh fake-pve, or
//! the real cluster), the clients it speaks through (the administrator
//! and whoever the scenario logs in as), what the last call answered, and
//! everything the scenario made, to be removed after it.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use pve_client::api::tasks::Upid;
use pve_client::{Category, Client, Config, Method, Params, RetryPolicy};
use pve_schema::Release;
use serde_json::Value;

use crate::raw::{Raw, RawReply, Trust};
use crate::target::{Kind, Target};

/// The fixed start of a fake-pve's manual clock: tasks and tickets age
/// only when a scenario says so.
pub const FAKE_T0: i64 = 1_790_000_000;

/// root@pam's password on fake-pve.
pub const FAKE_ROOT_PASSWORD: &str = "password";

/// The actor every scenario starts as.
pub const ADMIN: &str = "admin";

static SCENARIO_SEQ: AtomicU32 = AtomicU32::new(0);

/// What a call answered, as a client observes it.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// `GET /nodes`, for messages.
    pub request: String,
    /// The HTTP status (200 for a success; 0 when nothing answered).
    pub status: u16,
    /// The `data` member.
    pub data: Value,
    /// The top-level `total`, where PVE sends one.
    pub total: Option<u64>,
    /// PVE's message on failure, without its trailing newline.
    pub message: String,
    /// Per-parameter messages of a 400, without trailing newlines.
    pub errors: BTreeMap<String, String>,
    /// The client's error category, for calls made through `pve-client`.
    pub category: Option<Category>,
    /// The status line's reason phrase, for raw calls.
    pub reason: Option<String>,
    /// The body as sent, for raw calls.
    pub body: Option<String>,
}

impl Outcome {
    fn from_client(request: String, r: pve_client::Result<pve_client::Answer>) -> Self {
        match r {
            Ok(a) => Self {
                request,
                status: 200,
                data: a.data,
                total: a.total,
                ..Self::default()
            },
            Err(e) => Self {
                request,
                status: e.status().unwrap_or(0),
                message: e.message().to_string(),
                errors: e.param_errors().cloned().unwrap_or_default(),
                category: Some(e.category()),
                ..Self::default()
            },
        }
    }

    fn from_raw(request: String, r: RawReply) -> Self {
        let json = r.json();
        let get = |k: &str| json.as_ref().and_then(|j| j.get(k)).cloned();
        let message = get("message")
            .and_then(|m| m.as_str().map(|s| s.trim_end().to_string()))
            .unwrap_or_else(|| {
                if r.status == 200 {
                    String::new()
                } else {
                    r.reason.clone()
                }
            });
        let errors = get("errors")
            .and_then(|e| e.as_object().cloned())
            .map(|o| {
                o.into_iter()
                    .map(|(k, v)| {
                        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        (k, text.trim_end().to_string())
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            request,
            status: r.status,
            data: get("data").unwrap_or(Value::Null),
            total: get("total").and_then(|t| {
                t.as_u64()
                    .or_else(|| t.as_str().and_then(|s| s.parse().ok()))
            }),
            message,
            errors,
            category: None,
            reason: Some(r.reason),
            body: Some(r.text),
        }
    }

    /// Whether the call succeeded.
    pub fn ok(&self) -> bool {
        self.status == 200 && self.message.is_empty()
    }
}

/// Something a scenario made, removed again after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Made {
    /// A user (with its tokens and ACL entries).
    User(String),
    /// A group.
    Group(String),
    /// A role.
    Role(String),
    /// An API token: user, token ID.
    Token(String, String),
    /// An ACL entry: path, role, `users`/`groups`/`tokens`, who.
    Acl {
        /// The ACL path.
        path: String,
        /// The role.
        role: String,
        /// `users`, `groups` or `tokens`.
        kind: String,
        /// The user, group or token.
        who: String,
    },
    /// A VM (stopped, then destroyed with `purge`).
    Vm(u32),
    /// A container (stopped, then destroyed with `purge`).
    Ct(u32),
    /// A storage definition.
    Storage(String),
    /// A volume allocated (or downloaded) on a storage of the test node:
    /// storage ID, full volume ID.
    Volume(String, String),
    /// A resource pool (removed once its guests are gone).
    Pool(String),
    /// A backup job.
    BackupJob(String),
    /// An authentication realm (`/access/domains`).
    Realm(String),
    /// A realm sync job.
    RealmSyncJob(String),
    /// An SDN zone (removed from the pending configuration).
    SdnZone(String),
    /// An SDN VNet.
    SdnVnet(String),
    /// An SDN subnet: VNet, subnet ID (`<zone>-<cidr>`).
    SdnSubnet(String, String),
    /// An SDN fabric (9.x; removed with its nodes).
    SdnFabric(String),
    /// A firewall security group (emptied, then removed).
    FwGroup(String),
    /// A cluster firewall alias.
    FwAlias(String),
    /// A cluster firewall IP set (removed with its entries).
    FwIpset(String),
    /// An HA resource (`vm:<vmid>` of one of the scenario's VMs).
    HaResource(String),
    /// An HA group (8.x).
    HaGroup(String),
    /// An HA rule (9.x).
    HaRule(String),
}

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
                let release = if has("pve8") && !has("pve9") {
                    Release::V8_4
                } else if has("pve9") && !has("pve8") {
                    Release::V9_1
                } else {
                    *release
                };
                let version = match release {
                    Release::V8_4 => fake_pve::PveVersion::V8_4,
                    Release::V9_1 => fake_pve::PveVersion::V9_1,
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
        self.release.unwrap_or(Release::V9_1)
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

    // ---- names -------------------------------------------------------

    /// The scenario's prefix for what it makes (`cnf1a2b3c7`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The user ID for a name in a feature: `alice` is the scenario's own
    /// `<prefix>-alice@pve`; a full ID (`root@pam`) stays as it is.
    pub fn userid(&self, name: &str) -> String {
        if name.contains('@') {
            name.to_string()
        } else {
            format!("{}-{name}@pve", self.prefix)
        }
    }

    /// The full token ID for `alice!ci` (or `root@pam!ci`).
    pub fn tokenid(&self, name: &str) -> String {
        match name.split_once('!') {
            Some((user, token)) => format!("{}!{token}", self.userid(user)),
            None => panic!("a token is named USER!TOKEN, not '{name}'"),
        }
    }

    /// The group ID for a name in a feature.
    pub fn groupid(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// The role ID for a name in a feature; PVE's built-in roles (and
    /// `NoAccess`, `Administrator`) stay as they are.
    pub fn roleid(&self, name: &str) -> String {
        if name.starts_with("PVE") || name == "NoAccess" || name == "Administrator" {
            name.to_string()
        } else {
            format!("{}-{name}", self.prefix)
        }
    }

    /// The VMID `{vmN}` stands for: the N-th of the reserved range.
    ///
    /// # Panics
    /// When it falls outside the range.
    pub fn vm(&self, n: u32) -> u32 {
        assert!(
            (1..=VM_BLOCK).contains(&n),
            "{{vm{n}}}: a scenario has {{vm1}} to {{vm{VM_BLOCK}}}"
        );
        let id = self.vm_base + n - 1;
        self.guard_vmid(id);
        id
    }

    /// The scenario's SDN tag: four base-36 characters drawn from its
    /// prefix. SDN IDs are short (zones and VNets at most 8 characters,
    /// letters and digits only), so they cannot carry the whole prefix.
    pub fn sdn_tag(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.prefix.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
        (0..4)
            .map(|i| char::from(digits[usize::try_from((h >> (i * 8)) % 36).unwrap_or(0)]))
            .collect()
    }

    /// The SDN ID for a name in a feature: `kind` (`z` for zones, `v`
    /// for VNets, `c` for controllers, `f` for fabrics), the scenario's [`Self::sdn_tag`],
    /// then at most three letters or digits of the name.
    pub fn sdnid(&self, kind: char, name: &str) -> String {
        let tail: String = name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(3)
            .collect();
        format!("{kind}{}{tail}", self.sdn_tag())
    }

    /// Whether an SDN ID is one of this scenario's.
    pub fn sdn_mine(&self, id: &str) -> bool {
        id.len() >= 5 && id.get(1..5) == Some(self.sdn_tag().as_str())
    }

    /// The storage ID for a name in a feature: the scenario's own
    /// `<prefix>-<name>`.
    pub fn storageid(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// Refuses any VMID outside the reserved range: scenarios never touch
    /// guests they do not own, on fake-pve as on a real cluster.
    ///
    /// # Panics
    /// When `vmid` is outside the range.
    pub fn guard_vmid(&self, vmid: u32) {
        let r = &self.target().vmids;
        assert!(
            r.contains(&vmid),
            "refusing to touch VM {vmid}: outside the reserved VMID range {}-{}",
            r.start(),
            r.end()
        );
    }

    /// Replaces the placeholders of a feature's text: `{node}`,
    /// `{storage}`, `{bridge}`, `{vmN}`, `{user:alice}`, `{token:alice!ci}`,
    /// `{group:ops}`, `{role:Starter}`, `{realm:corp}`, `{storage:isos}` (the scenario's
    /// own storage ID), `{var:NAME}` (a remembered value), `{me}` (the
    /// administrator), `{upid}` (the last task), `{release}`, `{prefix}`.
    ///
    /// # Panics
    /// On an unknown placeholder.
    pub fn expand(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let key = &rest[open + 1..open + close];
            // `{2}` and `{2,8}` are regex repetitions, not placeholders.
            let is_key = !key.is_empty()
                && !key.chars().all(|c| c.is_ascii_digit() || c == ',')
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ":!@._-".contains(c));
            if !is_key {
                // Not a placeholder (a YAML flow mapping, say): keep it.
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
                continue;
            }
            out.push_str(&rest[..open]);
            out.push_str(&self.placeholder(key));
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        out
    }

    fn placeholder(&self, key: &str) -> String {
        let t = self.target();
        if let Some(n) = key.strip_prefix("vm").and_then(|n| n.parse::<u32>().ok()) {
            return self.vm(n).to_string();
        }
        if let Some((kind, name)) = key.split_once(':') {
            return match kind {
                "user" => self.userid(name),
                "token" => self.tokenid(name),
                "group" => self.groupid(name),
                "role" => self.roleid(name),
                "storage" | "pool" | "job" | "fw" | "realm" => self.storageid(name),
                "zone" => self.sdnid('z', name),
                "vnet" => self.sdnid('v', name),
                "controller" => self.sdnid('c', name),
                "fabric" => self.sdnid('f', name),
                "var" => self
                    .vars
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| panic!("nothing remembered as {name}")),
                "secret" => self
                    .secrets
                    .get(&self.tokenid(name))
                    .cloned()
                    .unwrap_or_else(|| panic!("no secret known for token {name}")),
                "ticket" => self.ticket_of(name).0,
                "csrf" => self.ticket_of(name).1,
                "ticket-escaped" => pve_client::api::seg(&self.ticket_of(name).0),
                _ => panic!("unknown placeholder {{{key}}}"),
            };
        }
        match key {
            "node" => t.node.clone(),
            "storage" => t.storage.clone(),
            "bridge" => t.bridge.clone(),
            "me" => self.admin_principal.clone(),
            "prefix" => self.prefix.clone(),
            "release" => crate::target::release_name(self.release()).to_string(),
            "upid" => self.last_upid().to_string(),
            "T0" => FAKE_T0.to_string(),
            _ => panic!("unknown placeholder {{{key}}}"),
        }
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

    /// Refuses requests a scenario must not make: VMIDs outside the
    /// reserved range anywhere; and, unless the scenario is `@fake-only`,
    /// writes outside `/access` and the test node, to users, groups and
    /// roles the scenario did not make, and node-wide power calls that
    /// would reach guests outside the range.
    ///
    /// # Panics
    /// When the request is refused.
    pub fn guard_request(&self, method: &Method, path: &str, params: &Params) {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        for w in segs.windows(2) {
            if matches!(w[0], "qemu" | "lxc")
                && let Ok(id) = w[1].parse::<u32>()
            {
                self.guard_vmid(id);
            }
        }
        for (k, v) in params.pairs() {
            if matches!(k.as_str(), "vmid" | "newid" | "vms" | "target-vmid") {
                for id in v
                    .split([',', ';', ' '])
                    .filter_map(|x| x.parse::<u32>().ok())
                {
                    self.guard_vmid(id);
                }
            }
            // HA resource IDs (`vm:100`, `ct:101`, `100`) name VMIDs too.
            if matches!(k.as_str(), "sid" | "resources" | "resource") {
                for id in v.split([',', ';', ' ']).filter_map(ha_vmid) {
                    self.guard_vmid(id);
                }
            }
        }
        if self.fake_only || *method == Method::GET {
            return;
        }
        let refuse = |why: &str| -> ! {
            panic!("refusing {method} {path}: {why} (a scenario that needs it must be @fake-only)")
        };
        let mine = |id: &str| id.starts_with(&self.prefix);
        match segs.as_slice() {
            ["access", "ticket"] => {}
            ["access", "users" | "groups" | "roles", id, ..] if !mine(id) => {
                refuse("not made by this scenario");
            }
            ["access", "users" | "groups" | "roles", ..] => {}
            ["access", "acl"] => {
                for (k, v) in params.pairs() {
                    if matches!(k.as_str(), "users" | "groups" | "tokens")
                        && v.split(',').any(|x| !mine(x))
                    {
                        refuse("an ACL entry for someone this scenario did not make");
                    }
                }
            }
            ["access", "password"] => {
                if params
                    .pairs()
                    .iter()
                    .any(|(k, v)| k == "userid" && !mine(v))
                {
                    refuse("another user's password");
                }
            }
            ["nodes", node, rest @ ..] => {
                if *node != self.target().node {
                    refuse("not the test node");
                }
                if matches!(rest, ["firewall", ..]) && !self.destructive {
                    refuse("the node's firewall (tag the scenario @destructive)");
                }
                if matches!(rest, ["startall" | "stopall"])
                    && !params.pairs().iter().any(|(k, _)| k == "vms")
                {
                    refuse("startall/stopall without `vms` would reach every guest of the node");
                }
                if matches!(rest, ["vzdump"]) {
                    let p = |name: &str| params.pairs().iter().find(|(k, _)| k == name);
                    if p("all").is_some_and(|(_, v)| v == "1") || p("exclude").is_some() {
                        refuse("vzdump of all guests would reach every guest of the node");
                    }
                    if p("pool").is_some_and(|(_, v)| !mine(v)) {
                        refuse("vzdump of a pool this scenario did not make");
                    }
                }
                if let ["storage", sid, "prunebackups"] = rest
                    && !mine(sid)
                {
                    refuse("pruning a storage this scenario did not make");
                }
            }
            ["pools", ..] => {
                let id = segs
                    .get(1)
                    .map(|s| (*s).to_string())
                    .or_else(|| {
                        params
                            .pairs()
                            .iter()
                            .find(|(k, _)| k == "poolid")
                            .map(|(_, v)| v.clone())
                    })
                    .unwrap_or_default();
                if !mine(&id) {
                    refuse("a pool this scenario did not make");
                }
            }
            ["cluster", "backup"] => {
                if !params.pairs().iter().any(|(k, v)| k == "id" && mine(v)) {
                    refuse("a backup job without an id of this scenario");
                }
            }
            ["cluster", "backup", id, ..] if !mine(id) => {
                refuse("a backup job this scenario did not make");
            }
            ["cluster", "backup", ..] => {}
            ["access", "domains"] => {
                if !params.pairs().iter().any(|(k, v)| k == "realm" && mine(v)) {
                    refuse("a realm without an id of this scenario");
                }
            }
            ["access", "domains" | "tfa", id, ..] if !mine(id) => {
                refuse("a realm or user this scenario did not make");
            }
            ["access", "domains" | "tfa", ..] => {}
            ["cluster", "jobs", "realm-sync", id, ..] if !mine(id) => {
                refuse("a realm sync job this scenario did not make");
            }
            ["cluster", "jobs", "realm-sync", ..] => {}
            [
                "cluster",
                "firewall",
                "groups" | "aliases" | "ipset",
                rest @ ..,
            ] => {
                // Only the scenario's own groups, aliases and IP sets, by
                // path or (to make or rename one) by parameter.
                if let Some(id) = rest.first()
                    && !mine(id)
                {
                    refuse("a firewall object this scenario did not make");
                }
                let named = params
                    .pairs()
                    .iter()
                    .filter(|(k, _)| matches!(k.as_str(), "group" | "name" | "rename"));
                for (_, v) in named {
                    if !mine(v) {
                        refuse("a firewall object this scenario does not name as its own");
                    }
                }
            }
            ["cluster", "firewall", ..] if !self.destructive => {
                refuse("the cluster's firewall options and rules (tag the scenario @destructive)");
            }
            ["cluster", "firewall", ..] => {}
            // HA: resources of the scenario's own VMIDs (checked above
            // and here for the path), groups and rules with its prefix.
            ["cluster", "ha", "resources"] => {
                if !params.pairs().iter().any(|(k, _)| k == "sid") {
                    refuse("an HA resource without a sid");
                }
            }
            ["cluster", "ha", "resources", sid, ..] => match ha_vmid(sid) {
                Some(id) => self.guard_vmid(id),
                None => refuse("an HA resource that is not one of this scenario's guests"),
            },
            ["cluster", "ha", kind @ ("groups" | "rules")] => {
                let key = if *kind == "groups" { "group" } else { "rule" };
                if !params.pairs().iter().any(|(k, v)| k == key && mine(v)) {
                    refuse("an HA group or rule without an id of this scenario");
                }
            }
            ["cluster", "ha", "groups" | "rules", id, ..] if !mine(id) => {
                refuse("an HA group or rule this scenario did not make");
            }
            ["cluster", "ha", "groups" | "rules", ..] => {}
            // Replication jobs `<guest>-<n>` of the scenario's own
            // guests; metric servers with its prefix.
            ["cluster", "replication", rest @ ..] => {
                let id = rest.first().map(|s| (*s).to_string()).or_else(|| {
                    params
                        .pairs()
                        .iter()
                        .find(|(k, _)| k == "id")
                        .map(|(_, v)| v.clone())
                });
                match id
                    .as_deref()
                    .and_then(|i| i.split_once('-'))
                    .and_then(|(g, _)| g.parse::<u32>().ok())
                {
                    Some(g) => self.guard_vmid(g),
                    None => refuse("a replication job that is not one of this scenario's guests"),
                }
            }
            ["cluster", "metrics", "server", id] if !mine(id) => {
                refuse("a metric server this scenario did not make");
            }
            ["cluster", "metrics", "server", _] => {}
            ["storage"] => {
                if !params
                    .pairs()
                    .iter()
                    .any(|(k, v)| k == "storage" && mine(v))
                {
                    refuse("a storage this scenario does not name as its own");
                }
            }
            ["storage", id, ..] if !mine(id) => refuse("a storage this scenario did not make"),
            ["storage", ..] => {}
            ["cluster", "sdn", rest @ ..] => {
                if let Some(why) = self.guard_sdn(rest, params) {
                    refuse(why);
                }
            }
            _ => refuse("outside /access, the scenario's storages and the test node"),
        }
    }

    /// The SDN part of [`Self::guard_request`]: a scenario writes only
    /// the zones, VNets (and their subnets and IPs), controllers and
    /// fabrics (and their nodes) whose IDs carry its tag; applying, locking and rolling back reach every
    /// pending change of the cluster, so only `@destructive` scenarios may.
    fn guard_sdn(&self, rest: &[&str], params: &Params) -> Option<&'static str> {
        let param = |name: &str| {
            params
                .pairs()
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let mine = |id: &str| self.sdn_mine(id);
        match rest {
            [] | ["lock" | "rollback"] => (!self.destructive).then_some(
                "applying, locking or rolling back SDN reaches others' pending changes (tag it @destructive)",
            ),
            ["zones"] => (!param("zone").is_some_and(|z| mine(&z)))
                .then_some("a zone without this scenario's SDN tag"),
            ["vnets"] => (!param("vnet").is_some_and(|v| mine(&v))
                || !param("zone").is_some_and(|z| mine(&z)))
            .then_some("a VNet (or its zone) without this scenario's SDN tag"),
            ["controllers"] => (!param("controller").is_some_and(|c| mine(&c)))
                .then_some("a controller without this scenario's SDN tag"),
            ["zones" | "vnets" | "controllers", id, ..] => {
                (!mine(id)).then_some("an SDN object this scenario did not make")
            }
            ["fabrics", "fabric"] => (!param("id").is_some_and(|f| mine(&f)))
                .then_some("a fabric without this scenario's SDN tag"),
            ["fabrics", "fabric" | "node", id, ..] => {
                (!mine(id)).then_some("a fabric this scenario did not make")
            }
            _ => Some("SDN configuration outside this scenario's zones, VNets and controllers"),
        }
    }

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
                message: e,
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

    // ---- what the scenario made ----------------------------------------

    /// Remembers something to remove after the scenario.
    pub fn made(&mut self, m: Made) {
        if !self.made.contains(&m) {
            self.made.push(m);
        }
    }

    /// Forgets something the scenario removed itself.
    pub fn unmade(&mut self, m: &Made) {
        self.made.retain(|x| x != m);
    }

    /// Removes everything the scenario made, newest first, as the
    /// administrator. Called after every scenario, failed or not; what is
    /// already gone is fine, anything else is reported.
    pub async fn cleanup(&mut self) -> Vec<String> {
        let problems = self.remove_made().await;
        if let Some(b) = self.vm_block.take() {
            VM_BLOCKS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(&b);
        }
        problems
    }

    async fn remove_made(&mut self) -> Vec<String> {
        let Some(admin) = self.clients.get(ADMIN).cloned() else {
            return Vec::new();
        };
        if let Some(fake) = &self.fake {
            // Let whatever tasks the scenario left running end (well
            // within the tickets' two hours).
            fake.clock().advance(600);
        }
        let as_root = self.admin_principal == "root@pam";
        let mut problems = Vec::new();
        while let Some(m) = self.made.pop() {
            let seg = pve_client::api::seg;
            let (method, path, params) = match &m {
                Made::Vm(vmid) => {
                    let node = self.target().node.clone();
                    if let Err(e) = remove_vm(&admin, &node, *vmid, as_root).await {
                        problems.push(format!("cleaning up VM {vmid}: {e}"));
                    }
                    continue;
                }
                Made::Ct(vmid) => {
                    let node = self.target().node.clone();
                    if let Err(e) = remove_ct(&admin, &node, *vmid).await {
                        problems.push(format!("cleaning up CT {vmid}: {e}"));
                    }
                    continue;
                }
                Made::Volume(sid, volid) => {
                    let node = self.target().node.clone();
                    if let Err(e) = remove_volume(&admin, &node, sid, volid).await {
                        problems.push(format!("cleaning up volume {volid}: {e}"));
                    }
                    continue;
                }
                Made::Storage(id) => (
                    Method::DELETE,
                    format!("/storage/{}", seg(id)),
                    Params::new(),
                ),
                Made::Pool(id) => (
                    Method::DELETE,
                    "/pools".to_string(),
                    Params::new().set("poolid", id.as_str()),
                ),
                Made::BackupJob(id) => (
                    Method::DELETE,
                    format!("/cluster/backup/{}", seg(id)),
                    Params::new(),
                ),
                Made::Realm(id) => (
                    Method::DELETE,
                    format!("/access/domains/{}", seg(id)),
                    Params::new(),
                ),
                Made::RealmSyncJob(id) => (
                    Method::DELETE,
                    format!("/cluster/jobs/realm-sync/{}", seg(id)),
                    Params::new(),
                ),
                Made::SdnZone(id) => (
                    Method::DELETE,
                    format!("/cluster/sdn/zones/{}", seg(id)),
                    Params::new(),
                ),
                Made::SdnVnet(id) => {
                    // A VNet's firewall file outlives the VNet in PVE.
                    if self.sdn_applied {
                        clear_vnet_firewall(&admin, id).await;
                    }
                    (
                        Method::DELETE,
                        format!("/cluster/sdn/vnets/{}", seg(id)),
                        Params::new(),
                    )
                }
                Made::SdnSubnet(vnet, id) => (
                    Method::DELETE,
                    format!("/cluster/sdn/vnets/{}/subnets/{}", seg(vnet), seg(id)),
                    Params::new(),
                ),
                Made::SdnFabric(id) => (
                    Method::DELETE,
                    format!("/cluster/sdn/fabrics/fabric/{}", seg(id)),
                    Params::new(),
                ),
                Made::FwGroup(g) => {
                    if let Err(e) = remove_fw_group(&admin, g).await {
                        problems.push(format!("cleaning up security group {g}: {e}"));
                    }
                    continue;
                }
                Made::FwAlias(a) => (
                    Method::DELETE,
                    format!("/cluster/firewall/aliases/{}", seg(a)),
                    Params::new(),
                ),
                Made::FwIpset(n) => (
                    Method::DELETE,
                    format!("/cluster/firewall/ipset/{}", seg(n)),
                    Params::new().set("force", true),
                ),
                Made::HaResource(sid) => (
                    Method::DELETE,
                    format!("/cluster/ha/resources/{}", seg(sid)),
                    Params::new(),
                ),
                Made::HaGroup(id) => (
                    Method::DELETE,
                    format!("/cluster/ha/groups/{}", seg(id)),
                    Params::new(),
                ),
                Made::HaRule(id) => (
                    Method::DELETE,
                    format!("/cluster/ha/rules/{}", seg(id)),
                    Params::new(),
                ),
                Made::User(u) => (
                    Method::DELETE,
                    format!("/access/users/{}", seg(u)),
                    Params::new(),
                ),
                Made::Group(g) => (
                    Method::DELETE,
                    format!("/access/groups/{}", seg(g)),
                    Params::new(),
                ),
                Made::Role(r) => (
                    Method::DELETE,
                    format!("/access/roles/{}", seg(r)),
                    Params::new(),
                ),
                Made::Token(u, t) => (
                    Method::DELETE,
                    format!("/access/users/{}/token/{}", seg(u), seg(t)),
                    Params::new(),
                ),
                Made::Acl {
                    path,
                    role,
                    kind,
                    who,
                } => (
                    Method::PUT,
                    "/access/acl".to_string(),
                    Params::new()
                        .set("path", path.as_str())
                        .set("roles", role.as_str())
                        .set(kind.as_str(), who.as_str())
                        .set("delete", true),
                ),
            };
            if let Err(e) = admin.request(method, &path, &params).await
                && !gone(&e.to_string())
            {
                problems.push(format!("cleaning up {m:?}: {e}"));
            }
        }
        if self.sdn_applied {
            // The removals above are pending until applied again.
            self.sdn_applied = false;
            match admin
                .request(Method::PUT, "/cluster/sdn", &Params::new())
                .await
            {
                Ok(v) => {
                    let upid = v.data.as_str().unwrap_or_default().to_string();
                    if let Err(e) = wait_task(&admin, &upid).await {
                        problems.push(format!("applying the SDN removals: {e}"));
                    }
                }
                Err(e) => problems.push(format!("applying the SDN removals: {e}")),
            }
        }
        problems
    }
}

/// The VMID of an HA resource ID (`vm:100`, `ct:101`, `100`).
fn ha_vmid(sid: &str) -> Option<u32> {
    let sid = sid.replace("%3A", ":").replace("%3a", ":");
    let name = sid.rsplit_once(':').map_or(sid.as_str(), |(_, n)| n);
    name.parse().ok()
}

/// Whether a message says that what was asked for is gone.
fn gone(msg: &str) -> bool {
    let msg = msg.to_lowercase();
    msg.contains("does not exist")
        || msg.contains("no such")
        || msg.contains("not found")
        || msg.contains("not ha managed")
        || msg.contains("have been migrated to rules")
}

/// Waits for a task to end (polling every 200 ms, at most five minutes)
/// and answers its exit status.
///
/// # Errors
/// When its status cannot be read or it does not end in time.
pub async fn wait_task(client: &Client, upid: &str) -> Result<String, String> {
    let node = upid.split(':').nth(1).unwrap_or_default();
    let path = format!(
        "/nodes/{}/tasks/{}/status",
        pve_client::api::seg(node),
        pve_client::api::seg(upid)
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        let st = client
            .get(&path, &Params::new())
            .await
            .map_err(|e| format!("status of {upid}: {e}"))?;
        if st["status"] != "running" {
            return Ok(st["exitstatus"].as_str().unwrap_or_default().to_string());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("{upid} still runs after 5 minutes"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Stops and destroys VM `vmid` on `node` with `purge` (and its
/// unreferenced disks), after taking its protection away; a VM that is
/// already gone is fine. root@pam also skips locks; anyone else waits up
/// to a minute for a lock to go.
///
/// # Errors
/// What PVE answered when it refused, or a task's error.
pub async fn remove_vm(
    client: &Client,
    node: &str,
    vmid: u32,
    as_root: bool,
) -> Result<(), String> {
    let base = format!("/nodes/{}/qemu/{vmid}", pve_client::api::seg(node));
    let skip = |p: Params| if as_root { p.set("skiplock", true) } else { p };
    let config = match client.get(&format!("{base}/config"), &Params::new()).await {
        Ok(c) => c,
        Err(e) if gone(e.message()) => return Ok(()),
        Err(e) => return Err(format!("reading its config: {e}")),
    };
    let status = client
        .get(&format!("{base}/status/current"), &Params::new())
        .await
        .map_err(|e| format!("reading its status: {e}"))?;
    if status["status"] == "running" {
        let upid = client
            .post(&format!("{base}/status/stop"), &skip(Params::new()))
            .await
            .map_err(|e| format!("stopping it: {e}"))?;
        let exit = wait_task(client, upid.as_str().unwrap_or_default()).await?;
        if exit != "OK" {
            return Err(format!("stopping it: {exit}"));
        }
    }
    if config["protection"] == 1 {
        client
            .put(
                &format!("{base}/config"),
                &skip(Params::new().set("delete", "protection")),
            )
            .await
            .map_err(|e| format!("removing its protection: {e}"))?;
    }
    let params = skip(
        Params::new()
            .set("purge", true)
            .set("destroy-unreferenced-disks", true),
    );
    let mut tries = 0;
    let upid = loop {
        match client.delete(&base, &params).await {
            Ok(u) => break u,
            Err(e) if gone(e.message()) => return Ok(()),
            Err(e) if e.message().contains("is locked") && tries < 60 => {
                tries += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(format!("destroying it: {e}")),
        }
    };
    let exit = wait_task(client, upid.as_str().unwrap_or_default()).await?;
    if exit == "OK" {
        Ok(())
    } else {
        Err(format!("destroying it: {exit}"))
    }
}

/// Stops and destroys container `vmid` on `node` with `purge`, after
/// taking its protection away; a container that is already gone is fine.
///
/// # Errors
/// What PVE answered when it refused, or a task's error.
pub async fn remove_ct(client: &Client, node: &str, vmid: u32) -> Result<(), String> {
    let base = format!("/nodes/{}/lxc/{vmid}", pve_client::api::seg(node));
    let config = match client.get(&format!("{base}/config"), &Params::new()).await {
        Ok(c) => c,
        Err(e) if gone(e.message()) => return Ok(()),
        Err(e) => return Err(format!("reading its config: {e}")),
    };
    let status = client
        .get(&format!("{base}/status/current"), &Params::new())
        .await
        .map_err(|e| format!("reading its status: {e}"))?;
    if status["status"] == "running" {
        let upid = client
            .post(&format!("{base}/status/stop"), &Params::new())
            .await
            .map_err(|e| format!("stopping it: {e}"))?;
        let exit = wait_task(client, upid.as_str().unwrap_or_default()).await?;
        if exit != "OK" {
            return Err(format!("stopping it: {exit}"));
        }
    }
    if config["protection"] == 1 {
        client
            .put(
                &format!("{base}/config"),
                &Params::new().set("delete", "protection"),
            )
            .await
            .map_err(|e| format!("removing its protection: {e}"))?;
    }
    let params = Params::new().set("purge", true);
    let mut tries = 0;
    let upid = loop {
        match client.delete(&base, &params).await {
            Ok(u) => break u,
            Err(e) if gone(e.message()) => return Ok(()),
            Err(e) if e.message().contains("is locked") && tries < 60 => {
                tries += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(format!("destroying it: {e}")),
        }
    };
    let exit = wait_task(client, upid.as_str().unwrap_or_default()).await?;
    if exit == "OK" {
        Ok(())
    } else {
        Err(format!("destroying it: {exit}"))
    }
}

/// Deletes volume `volid` of storage `sid` on `node` and waits for the
/// `imgdel` task; a volume that is already gone (or a storage that no
/// longer answers for it) is fine.
///
/// # Errors
/// What PVE answered when it refused, or the task's error.
pub async fn remove_volume(
    client: &Client,
    node: &str,
    sid: &str,
    volid: &str,
) -> Result<(), String> {
    let seg = pve_client::api::seg;
    let path = format!(
        "/nodes/{}/storage/{}/content/{}",
        seg(node),
        seg(sid),
        seg(volid)
    );
    if client.get(&path, &Params::new()).await.is_err() {
        return Ok(());
    }
    let upid = match client.delete(&path, &Params::new()).await {
        Ok(u) => u,
        Err(e) if gone(e.message()) => return Ok(()),
        Err(e) => return Err(format!("deleting it: {e}")),
    };
    let Some(upid) = upid.as_str() else {
        return Ok(());
    };
    let exit = wait_task(client, upid).await?;
    if exit == "OK" || gone(&exit) {
        Ok(())
    } else {
        Err(format!("deleting it: {exit}"))
    }
}

fn percent_decode(s: &str) -> String {
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

/// Removes a security group: its rules first (PVE removes only an empty
/// group), then the group.
///
/// # Errors
/// When a call fails for another reason than the group being gone.
pub async fn remove_fw_group(client: &Client, group: &str) -> Result<(), String> {
    let path = format!("/cluster/firewall/groups/{}", pve_client::api::seg(group));
    let rules = match client.get(&path, &Params::new()).await {
        Ok(r) => r,
        Err(e) if gone(e.message()) => return Ok(()),
        Err(e) => return Err(format!("reading its rules: {e}")),
    };
    for _ in rules.as_array().map_or(&[][..], Vec::as_slice) {
        client
            .delete(&format!("{path}/0"), &Params::new())
            .await
            .map_err(|e| format!("deleting a rule: {e}"))?;
    }
    client
        .delete(&path, &Params::new())
        .await
        .map_err(|e| format!("deleting it: {e}"))?;
    Ok(())
}

/// Empties the firewall of an applied VNet (its rules and options), so
/// that no `sdn/firewall/<vnet>.fw` outlives the scenario. A VNet that was
/// never applied has no firewall to reach: the errors are left unsaid.
pub async fn clear_vnet_firewall(client: &Client, vnet: &str) {
    let path = format!("/cluster/sdn/vnets/{}/firewall", pve_client::api::seg(vnet));
    let Ok(rules) = client.get(&format!("{path}/rules"), &Params::new()).await else {
        return;
    };
    for _ in rules.as_array().map_or(&[][..], Vec::as_slice) {
        let _ = client
            .delete(&format!("{path}/rules/0"), &Params::new())
            .await;
    }
    let _ = client
        .put(
            &format!("{path}/options"),
            &Params::new().set("delete", "enable,policy_forward,log_level_forward"),
        )
        .await;
}

#[cfg(test)]
mod guard_tests {
    use super::*;

    fn world(destructive: bool) -> PveWorld {
        PveWorld {
            prefix: "cnf1a2b3c7".into(),
            destructive,
            ..PveWorld::default()
        }
    }

    fn refused(w: &PveWorld, method: Method, path: &str, params: &[(&str, &str)]) -> bool {
        let mut p = Params::new();
        for (k, v) in params {
            p.push(*k, *v);
        }
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            w.guard_request(&method, path, &p);
        }))
        .is_err()
    }

    #[test]
    fn sdn_ids_are_short_and_the_scenario_writes_only_its_own() {
        let w = world(false);
        let zone = w.sdnid('z', "lab");
        let vnet = w.sdnid('v', "lab");
        assert!(zone.len() <= 8 && zone.chars().all(|c| c.is_ascii_alphanumeric()));
        assert!(zone.starts_with('z') && w.sdn_mine(&zone) && w.sdn_mine(&vnet));
        assert_ne!(
            world(false).sdn_tag(),
            PveWorld {
                prefix: "cnf1a2b3c8".into(),
                ..PveWorld::default()
            }
            .sdn_tag()
        );
        let post = Method::POST;
        assert!(!refused(
            &w,
            post.clone(),
            "/cluster/sdn/zones",
            &[("zone", &zone)]
        ));
        assert!(refused(
            &w,
            post.clone(),
            "/cluster/sdn/zones",
            &[("zone", "other")]
        ));
        assert!(!refused(
            &w,
            post.clone(),
            "/cluster/sdn/vnets",
            &[("vnet", &vnet), ("zone", &zone)]
        ));
        assert!(refused(
            &w,
            post.clone(),
            "/cluster/sdn/vnets",
            &[("vnet", &vnet), ("zone", "other")]
        ));
        assert!(refused(&w, Method::DELETE, "/cluster/sdn/zones/other", &[]));
        assert!(!refused(
            &w,
            Method::DELETE,
            &format!("/cluster/sdn/vnets/{vnet}/subnets/x"),
            &[]
        ));
        assert!(refused(&w, Method::PUT, "/cluster/sdn", &[]));
        assert!(refused(
            &w,
            post.clone(),
            "/cluster/sdn/ipams",
            &[("ipam", &zone)]
        ));
        assert!(!refused(&world(true), Method::PUT, "/cluster/sdn", &[]));
        assert!(!refused(&w, Method::GET, "/cluster/sdn/zones/other", &[]));
    }

    #[test]
    fn a_scenario_writes_only_its_own_firewall_objects() {
        let w = world(false);
        let groups = "/cluster/firewall/groups";
        assert!(!refused(
            &w,
            Method::POST,
            groups,
            &[("group", "cnf1a2b3c7-web")]
        ));
        assert!(refused(&w, Method::POST, groups, &[("group", "web")]));
        assert!(refused(
            &w,
            Method::POST,
            groups,
            &[("group", "cnf1a2b3c7-web"), ("rename", "prod")]
        ));
        assert!(!refused(
            &w,
            Method::POST,
            "/cluster/firewall/groups/cnf1a2b3c7-web",
            &[]
        ));
        assert!(refused(
            &w,
            Method::DELETE,
            "/cluster/firewall/groups/prod/0",
            &[]
        ));
        assert!(refused(
            &w,
            Method::POST,
            "/cluster/firewall/aliases",
            &[("name", "lan")]
        ));
        assert!(!refused(
            &w,
            Method::DELETE,
            "/cluster/firewall/ipset/cnf1a2b3c7-set/10.0.0.0/8",
            &[]
        ));
        assert!(refused(
            &w,
            Method::PUT,
            "/cluster/firewall/ipset/mgmt/10.0.0.0/8",
            &[]
        ));
        // reading is always allowed
        assert!(!refused(&w, Method::GET, "/cluster/firewall/rules", &[]));
    }

    #[test]
    fn the_clusters_own_rules_and_options_need_destructive() {
        for path in ["/cluster/firewall/rules", "/cluster/firewall/options"] {
            assert!(refused(&world(false), Method::PUT, path, &[]), "{path}");
            assert!(!refused(&world(true), Method::PUT, path, &[]), "{path}");
        }
    }
}
