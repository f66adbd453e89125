//! Scenario files: the YAML that describes the cluster fake-pve starts
//! with (nodes, storages, bridges, users, tokens and guests).
//!
//! ```yaml
//! cluster: lab            # omit for a standalone node
//! nodes:
//!   - name: pve1
//!     cpus: 16
//!     memory: 64G
//!     bridges: [vmbr0, vmbr1]
//! users:
//!   - userid: ci@pve
//!     password: secret
//!     tokens:
//!       - { tokenid: runner, secret: 0b7d..., privsep: false }
//!     groups: [ops]
//! groups:
//!   - { groupid: ops, comment: Operators }
//! roles:
//!   - { roleid: Starter, privs: [VM.PowerMgmt, VM.Audit] }
//! acl:
//!   - { path: /vms, roles: [Starter], groups: [ops] }
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::PveVersion;
use super::access::{
    Access, AclUpdate, AuthId, Group, Token, User, valid_groupid, valid_tokenid, valid_userid,
};
use super::acl::{check_path, is_valid_priv, normalize_path, role_is_special};
use super::cluster::{Cluster, ClusterDoc, Storage, Vm};
use super::faults::{FaultRule, Faults};
use super::nodes::{Node, NodeStatus};

/// A parsed scenario file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Cluster name; a standalone node when absent.
    #[serde(default)]
    pub cluster: Option<String>,
    /// Members; the first is the node clients talk to.
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
    /// Cluster-wide storages (`storage.cfg`).
    #[serde(default)]
    pub storages: Vec<StorageSpec>,
    /// Users besides root@pam (root@pam may be listed to give it tokens).
    #[serde(default)]
    pub users: Vec<UserSpec>,
    /// Guests that already exist.
    #[serde(default)]
    pub vms: Vec<VmSpec>,
    /// Fault rules in force from the start (see `model::faults`).
    #[serde(default)]
    pub faults: Vec<FaultRule>,
    /// User groups.
    #[serde(default)]
    pub groups: Vec<GroupSpec>,
    /// Custom roles (the built-in ones always exist).
    #[serde(default)]
    pub roles: Vec<RoleSpec>,
    /// ACL entries.
    #[serde(default)]
    pub acl: Vec<AclSpec>,
    /// What the guest agents of VMs report, by VMID (see `model::agent`).
    #[serde(default)]
    pub guests: BTreeMap<u32, super::agent::Guest>,
    /// The URLs `download-url` and `query-url-metadata` know (see
    /// `model::storage::content`).
    #[serde(default)]
    pub downloads: Vec<super::storage::content::KnownUrl>,
    /// Where the text came from, for messages.
    #[serde(skip)]
    pub source: String,
    /// The text itself, to find lines for semantic errors.
    #[serde(skip)]
    pub text: String,
    /// A saved world (a state document given where a scenario goes): the
    /// cluster is this, as it was.
    #[serde(skip)]
    pub world: Option<Box<Cluster>>,
}

/// A node of a scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Node name.
    pub name: String,
    /// Logical CPUs (default 8).
    #[serde(default)]
    pub cpus: Option<u32>,
    /// CPU sockets (default 1).
    #[serde(default)]
    pub sockets: Option<u32>,
    /// Memory: bytes or a size such as `32G` (default 32 GiB).
    #[serde(default)]
    pub memory: Option<Size>,
    /// Root disk size (default 100 GiB).
    #[serde(default)]
    pub disk: Option<Size>,
    /// `online` (default) or `offline`.
    #[serde(default)]
    pub status: NodeStatus,
    /// Address shown in `/cluster/status` (default `192.0.2.<n>`).
    #[serde(default)]
    pub ip: Option<String>,
    /// Subscription level (default none).
    #[serde(default)]
    pub level: Option<String>,
    /// Bridges (default `[vmbr0]`).
    #[serde(default)]
    pub bridges: Option<Vec<String>>,
    /// Storages only this node has.
    #[serde(default)]
    pub storages: Vec<StorageSpec>,
}

/// A storage of a scenario. Keys other than those below are kept as the
/// storage's type-specific options.
#[derive(Debug, Clone, Deserialize)]
pub struct StorageSpec {
    /// Storage id.
    pub id: String,
    /// Plugin type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Content types.
    #[serde(default)]
    pub content: Option<Vec<String>>,
    /// Shared between nodes.
    #[serde(default)]
    pub shared: Option<bool>,
    /// Restricted to these nodes.
    #[serde(default)]
    pub nodes: Option<Vec<String>>,
    /// Configured but disabled.
    #[serde(default)]
    pub disable: bool,
    /// Capacity (default 100 GiB).
    #[serde(default)]
    pub size: Option<Size>,
    /// Already used (default 0).
    #[serde(default)]
    pub used: Option<Size>,
    /// Type-specific options (`path`, `thinpool`, `vgname`, ...).
    #[serde(flatten)]
    pub options: BTreeMap<String, serde_yaml::Value>,
}

/// A user of a scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSpec {
    /// `name@realm` (realm `pam` or `pve`).
    pub userid: String,
    /// Login password.
    #[serde(default)]
    pub password: Option<String>,
    /// Default true.
    #[serde(default = "yes")]
    pub enable: bool,
    /// Expiry, epoch seconds (0 never).
    #[serde(default)]
    pub expire: i64,
    /// Comment.
    #[serde(default)]
    pub comment: Option<String>,
    /// E-mail.
    #[serde(default)]
    pub email: Option<String>,
    /// API tokens.
    #[serde(default)]
    pub tokens: Vec<TokenSpec>,
    /// Groups the user is a member of.
    #[serde(default)]
    pub groups: Vec<String>,
}

/// A group of a scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Group name (letters, digits, `.`, `-`, `_`).
    pub groupid: String,
    /// Comment.
    #[serde(default)]
    pub comment: Option<String>,
    /// Member userids (they may also name the group in their `groups`).
    #[serde(default)]
    pub members: Vec<String>,
}

/// A custom role of a scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleSpec {
    /// Role name; not one of the built-in roles, not starting with `PVE`.
    pub roleid: String,
    /// Privileges of the release.
    #[serde(default)]
    pub privs: Vec<String>,
}

/// An ACL entry of a scenario: every role for every user, group and token.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AclSpec {
    /// ACL path (`/`, `/vms/100`, `/nodes/pve`, ...).
    pub path: String,
    /// Built-in or custom roles.
    pub roles: Vec<String>,
    /// Userids.
    #[serde(default)]
    pub users: Vec<String>,
    /// Groupids.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Full token ids (`user@realm!token`).
    #[serde(default)]
    pub tokens: Vec<String>,
    /// Whether the entry is inherited below the path (default true).
    #[serde(default = "yes")]
    pub propagate: bool,
}

/// A token of a scenario user.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenSpec {
    /// Token name.
    pub tokenid: String,
    /// The secret; a UUID is generated when absent.
    #[serde(default)]
    pub secret: Option<String>,
    /// Privilege separation (default true, as PVE).
    #[serde(default = "yes")]
    pub privsep: bool,
    /// Expiry, epoch seconds.
    #[serde(default)]
    pub expire: i64,
    /// Comment.
    #[serde(default)]
    pub comment: Option<String>,
}

/// A pre-existing guest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VmSpec {
    /// VMID.
    pub vmid: u32,
    /// Node (default: the first).
    #[serde(default)]
    pub node: Option<String>,
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// `running` or `stopped` (default).
    #[serde(default)]
    pub status: Option<String>,
    /// Other config keys, as PVE stores them.
    #[serde(default)]
    pub config: BTreeMap<String, serde_yaml::Value>,
    /// Snapshot sections by name, keys as PVE stores them (`snaptime`,
    /// `description`, `parent`, `vmstate`, config keys). The current
    /// config's `parent` names the newest one.
    #[serde(default)]
    pub snapshots: BTreeMap<String, BTreeMap<String, serde_yaml::Value>>,
}

fn yes() -> bool {
    true
}

/// A byte size: a number of bytes or text such as `32G`, `512M`, `1.5T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a size in bytes or a number with K, M, G or T")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Size, E> {
                Ok(Size(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Size, E> {
                u64::try_from(v)
                    .map(Size)
                    .map_err(|_| E::custom(format!("invalid size {v}")))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Size, E> {
                parse_size(s).map(Size).ok_or_else(|| {
                    E::custom(format!(
                        "invalid size '{s}' (use bytes or a number with K, M, G or T)"
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses `123`, `64K`, `512M`, `32G`, `1.5T` (optionally `iB`/`B`).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s
        .strip_suffix("iB")
        .or_else(|| s.strip_suffix('B'))
        .unwrap_or(s);
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        'T' | 't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some((v * mult as f64) as u64)
}

/// Why a scenario was refused: the file, the line if known, and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {reason}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ScenarioError {
    /// The file (or `<inline>`).
    pub file: String,
    /// 1-based line.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

const GIB: u64 = 1 << 30;

impl Scenario {
    /// The built-in default: a fresh single-node install.
    pub fn default_single_node() -> Self {
        Self {
            nodes: vec![NodeSpec {
                name: "pve".into(),
                cpus: None,
                sockets: None,
                memory: None,
                disk: None,
                status: NodeStatus::Online,
                ip: None,
                level: None,
                bridges: None,
                storages: vec![],
            }],
            source: "<built-in>".into(),
            ..Self::default()
        }
    }

    /// Parses YAML (JSON is YAML too).
    ///
    /// # Errors
    /// The source, line and reason of the first problem.
    pub fn parse(text: &str, source: &str) -> Result<Self, ScenarioError> {
        if super::world::is_state_doc(text) {
            let doc = super::world::parse(text, source)?;
            return Ok(Self::from_world(doc.cluster, source));
        }
        let mut s: Scenario = if text.trim().is_empty() {
            Scenario::default()
        } else {
            serde_yaml::from_str(text).map_err(|e| ScenarioError {
                file: source.into(),
                line: e.location().map(|l| l.line()),
                reason: strip_location(&e.to_string()),
            })?
        };
        s.source = source.into();
        s.text = text.into();
        if s.nodes.is_empty() {
            s.nodes = Self::default_single_node().nodes;
        }
        s.build(PveVersion::default(), "x", 0)?;
        let mut check = Faults::default();
        for rule in &s.faults {
            check
                .add(rule.clone())
                .map_err(|reason| s.err("faults", format!("faults: {reason}")))?;
        }
        Ok(s)
    }

    /// A scenario that is a saved world: building it gives `cluster` back.
    pub fn from_world(cluster: Cluster, source: &str) -> Self {
        Self {
            nodes: cluster
                .nodes
                .iter()
                .map(|n| NodeSpec {
                    name: n.name.clone(),
                    ..NodeSpec::default()
                })
                .collect(),
            source: source.to_string(),
            world: Some(Box::new(cluster)),
            ..Self::default()
        }
    }

    /// Reads and parses a file.
    ///
    /// # Errors
    /// When the file cannot be read or is malformed.
    pub fn load(path: &std::path::Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.display().to_string(),
            line: None,
            reason: e.to_string(),
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// An error at the first line where `needle` stands as a whole word.
    fn err(&self, needle: &str, reason: String) -> ScenarioError {
        self.err_at(needle, reason, false)
    }

    /// An error at the last line where `needle` stands: for duplicates,
    /// the second occurrence is the wrong one.
    fn dup_err(&self, needle: &str, reason: String) -> ScenarioError {
        self.err_at(needle, reason, true)
    }

    fn err_at(&self, needle: &str, reason: String, last: bool) -> ScenarioError {
        let word = |l: &str| {
            l.match_indices(needle).any(|(i, _)| {
                let before = l[..i].chars().next_back();
                let after = l[i + needle.len()..].chars().next();
                let edge = |c: Option<char>| {
                    c.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '@')))
                };
                edge(before) && edge(after)
            })
        };
        let mut lines = self.text.lines().enumerate().filter(|(_, l)| word(l));
        let found = if last { lines.last() } else { lines.next() };
        ScenarioError {
            file: self.source.clone(),
            line: found.map(|(i, _)| i + 1),
            reason,
        }
    }

    /// Builds the cluster this scenario describes.
    ///
    /// # Errors
    /// Names that are invalid, duplicated or refer to nothing.
    pub fn build(
        &self,
        version: PveVersion,
        root_password: &str,
        now: i64,
    ) -> Result<Cluster, ScenarioError> {
        if let Some(world) = &self.world {
            if world.version != version {
                return Err(ScenarioError {
                    file: self.source.clone(),
                    line: None,
                    reason: super::world::release_mismatch(world.version, version),
                });
            }
            return Ok((**world).clone());
        }
        let mut nodes = Vec::new();
        let mut seen = BTreeSet::new();
        let clustered = self.cluster.is_some() || self.nodes.len() > 1;
        if let Some(c) = &self.cluster
            && !valid_name(c, 15)
        {
            return Err(self.err(c, format!("invalid cluster name '{c}'")));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if !valid_name(&n.name, 63) {
                return Err(self.err(&n.name, format!("invalid node name '{}'", n.name)));
            }
            if !seen.insert(n.name.clone()) {
                return Err(self.dup_err(&n.name, format!("duplicate node name '{}'", n.name)));
            }
            let bridges = n.bridges.clone().unwrap_or_else(|| vec!["vmbr0".into()]);
            for b in &bridges {
                if !valid_bridge(b) {
                    return Err(self.err(b, format!("invalid bridge name '{b}'")));
                }
            }
            let cpus = n.cpus.unwrap_or(8);
            if cpus == 0 {
                return Err(self.err(&n.name, format!("node '{}' needs at least one cpu", n.name)));
            }
            let idx = u32::try_from(i).unwrap_or(u32::MAX).saturating_add(1);
            nodes.push(Node {
                name: n.name.clone(),
                nodeid: if clustered { idx } else { 0 },
                ip: n
                    .ip
                    .clone()
                    .unwrap_or_else(|| format!("192.0.2.{}", 10 + i)),
                status: n.status,
                cpus,
                sockets: n.sockets.unwrap_or(1).max(1),
                cpu_model: "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz".into(),
                memory: n.memory.map_or(32 * GIB, |m| m.0),
                rootfs: n.disk.map_or(100 * GIB, |m| m.0),
                swap: 8 * GIB,
                level: n.level.clone().unwrap_or_default(),
                boot_time: now - 3 * 86_400 - 4_242 * i64::from(idx),
                ssl_fingerprint: fake_fingerprint(&n.name),
                bridges,
            });
        }
        let storages = self.build_storages(&nodes)?;
        let access = self.build_access(version, root_password)?;
        let mut vms = BTreeMap::new();
        for v in &self.vms {
            if !(100..=999_999_999).contains(&v.vmid) {
                return Err(self.err(&v.vmid.to_string(), format!("invalid vmid {}", v.vmid)));
            }
            let node = v.node.clone().unwrap_or_else(|| nodes[0].name.clone());
            if !nodes.iter().any(|n| n.name == node) {
                return Err(self.err(&node, format!("VM {}: unknown node '{node}'", v.vmid)));
            }
            let raw = v.status.as_deref().unwrap_or("stopped");
            let Some(status) = super::qemu::VmStatus::parse(raw) else {
                return Err(self.err(
                    raw,
                    format!("VM {}: status must be running or stopped", v.vmid),
                ));
            };
            let mut config: BTreeMap<String, String> = v
                .config
                .iter()
                .map(|(k, val)| (k.clone(), yaml_scalar(val)))
                .collect();
            if let Some(name) = &v.name {
                config.insert("name".into(), name.clone());
            }
            let mut vm = Vm::new(v.vmid, &node, status, config);
            for (name, section) in &v.snapshots {
                let valid = name.len() >= 2
                    && name.len() <= 40
                    && name.starts_with(|c: char| c.is_ascii_alphabetic())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if !valid || name == "current" || name.eq_ignore_ascii_case("pending") {
                    return Err(self.err(
                        name,
                        format!("VM {}: invalid snapshot name '{name}'", v.vmid),
                    ));
                }
                let section: BTreeMap<String, String> = section
                    .iter()
                    .map(|(k, val)| (k.clone(), yaml_scalar(val)))
                    .collect();
                vm.snapshots.insert(name.clone(), section);
            }
            let parents = vm
                .snapshots
                .values()
                .filter_map(|s| s.get("parent"))
                .chain(vm.config.get("parent"));
            for p in parents {
                if !vm.snapshots.contains_key(p) {
                    return Err(
                        self.err(p, format!("VM {}: parent '{p}' is not a snapshot", v.vmid))
                    );
                }
            }
            if vms.insert(v.vmid, vm).is_some() {
                return Err(self.dup_err(&v.vmid.to_string(), format!("duplicate vmid {}", v.vmid)));
            }
        }
        for vmid in self.guests.keys() {
            if !vms.contains_key(vmid) {
                return Err(self.err(&vmid.to_string(), format!("guests: unknown VM {vmid}")));
            }
        }
        let mut cluster = Cluster::from(ClusterDoc {
            version,
            name: self.cluster.clone(),
            local_node: nodes[0].name.clone(),
            nodes,
            storages,
            vms,
            access,
            volumes: Default::default(),
            tasks: Vec::new(),
            next_pid: 4_000 + u32::try_from(now.rem_euclid(50_000)).unwrap_or(0),
            faults: Faults::default(),
            network: BTreeMap::new(),
            guests: self.guests.clone(),
        });
        for d in &self.downloads {
            if !d.url.starts_with("http://") && !d.url.starts_with("https://") {
                return Err(self.err(
                    &d.url,
                    format!("downloads: '{}' is not an http(s) URL", d.url),
                ));
            }
        }
        cluster.storage.volumes_mut().downloads = self.downloads.clone();
        cluster.adopt_seed_vms(now);
        Ok(cluster)
    }

    fn build_storages(&self, nodes: &[Node]) -> Result<Vec<Storage>, ScenarioError> {
        let mut specs: Vec<(StorageSpec, Option<String>)> =
            self.storages.iter().map(|s| (s.clone(), None)).collect();
        for n in &self.nodes {
            specs.extend(n.storages.iter().map(|s| (s.clone(), Some(n.name.clone()))));
        }
        if specs.is_empty() {
            specs = default_storages().into_iter().map(|s| (s, None)).collect();
        }
        let mut out: Vec<Storage> = Vec::new();
        for (spec, owner) in specs {
            if !valid_storage_id(&spec.id) {
                return Err(self.err(&spec.id, format!("invalid storage id '{}'", spec.id)));
            }
            let Some(default_content) = default_content(&spec.kind) else {
                return Err(self.err(
                    &spec.kind,
                    format!(
                        "storage '{}': unknown storage type '{}'",
                        spec.id, spec.kind
                    ),
                ));
            };
            for n in spec.nodes.iter().flatten() {
                if !nodes.iter().any(|x| &x.name == n) {
                    return Err(self.err(n, format!("storage '{}': unknown node '{n}'", spec.id)));
                }
            }
            if let Some(existing) = out.iter_mut().find(|s| s.storage == spec.id) {
                match (&owner, &mut existing.nodes) {
                    (Some(o), Some(list)) if existing.kind == spec.kind => {
                        list.push(o.clone());
                        continue;
                    }
                    _ => {
                        return Err(
                            self.dup_err(&spec.id, format!("duplicate storage id '{}'", spec.id))
                        );
                    }
                }
            }
            let options = spec
                .options
                .iter()
                .map(|(k, v)| (k.clone(), yaml_scalar(v)))
                .collect();
            out.push(Storage {
                storage: spec.id.clone(),
                shared: spec.shared.unwrap_or(matches!(
                    spec.kind.as_str(),
                    "nfs" | "cifs" | "rbd" | "cephfs" | "pbs"
                )),
                content: spec
                    .content
                    .clone()
                    .unwrap_or_else(|| default_content.iter().map(|c| (*c).to_string()).collect()),
                nodes: owner.map(|o| vec![o]).or(spec.nodes.clone()),
                disable: spec.disable,
                total: spec.size.map_or(100 * GIB, |s| s.0),
                used: spec.used.map_or(0, |s| s.0),
                kind: spec.kind,
                options,
            });
        }
        Ok(out)
    }

    fn build_access(
        &self,
        version: PveVersion,
        root_password: &str,
    ) -> Result<Access, ScenarioError> {
        let mut access = Access {
            version,
            ..Access::default()
        };
        let mut root = User::new("root@pam");
        root.password = Some(root_password.to_string());
        root.email = Some("root@localhost".into());
        access.users.insert(root.userid.clone(), root);
        for u in &self.users {
            if !valid_userid(&u.userid) {
                return Err(self.err(&u.userid, format!("invalid userid '{}'", u.userid)));
            }
            let realm = u.userid.rsplit('@').next().unwrap_or_default();
            if realm != "pam" && realm != "pve" {
                return Err(self.err(
                    &u.userid,
                    format!("user '{}': unknown realm '{realm}' (pam or pve)", u.userid),
                ));
            }
            let is_root = u.userid == "root@pam";
            if !is_root && access.users.contains_key(&u.userid) {
                return Err(self.dup_err(&u.userid, format!("duplicate user '{}'", u.userid)));
            }
            let mut user = access
                .users
                .remove(&u.userid)
                .unwrap_or_else(|| User::new(&u.userid));
            if !is_root || u.password.is_some() {
                user.password.clone_from(&u.password);
            }
            user.enable = u.enable;
            user.expire = u.expire;
            user.comment.clone_from(&u.comment);
            if u.email.is_some() {
                user.email.clone_from(&u.email);
            }
            for t in &u.tokens {
                if !valid_tokenid(&t.tokenid) {
                    return Err(self.err(&t.tokenid, format!("invalid token id '{}'", t.tokenid)));
                }
                let token = Token {
                    tokenid: t.tokenid.clone(),
                    secret: t
                        .secret
                        .clone()
                        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
                    privsep: t.privsep,
                    expire: t.expire,
                    comment: t.comment.clone(),
                };
                if user.tokens.insert(t.tokenid.clone(), token).is_some() {
                    return Err(
                        self.dup_err(&t.tokenid, format!("duplicate token '{}'", t.tokenid))
                    );
                }
            }
            access.users.insert(u.userid.clone(), user);
        }
        self.build_groups(&mut access)?;
        self.build_roles(&mut access)?;
        self.build_acl(&mut access)?;
        Ok(access)
    }

    fn build_groups(&self, access: &mut Access) -> Result<(), ScenarioError> {
        for g in &self.groups {
            if !valid_groupid(&g.groupid) {
                return Err(self.err(&g.groupid, format!("invalid group id '{}'", g.groupid)));
            }
            if access.groups.contains_key(&g.groupid) {
                return Err(self.dup_err(&g.groupid, format!("duplicate group '{}'", g.groupid)));
            }
            let mut group = Group {
                comment: g.comment.clone(),
                ..Group::default()
            };
            for m in &g.members {
                if !access.users.contains_key(m) {
                    return Err(self.err(m, format!("group '{}': unknown user '{m}'", g.groupid)));
                }
                group.members.insert(m.clone());
            }
            access.groups.insert(g.groupid.clone(), group);
        }
        for u in &self.users {
            for g in &u.groups {
                let Some(group) = access.groups.get_mut(g) else {
                    return Err(self.err(g, format!("user '{}': unknown group '{g}'", u.userid)));
                };
                group.members.insert(u.userid.clone());
            }
        }
        Ok(())
    }

    fn build_roles(&self, access: &mut Access) -> Result<(), ScenarioError> {
        for r in &self.roles {
            if r.roleid.is_empty()
                || !r
                    .roleid
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
            {
                return Err(self.err(&r.roleid, format!("invalid role id '{}'", r.roleid)));
            }
            if role_is_special(&r.roleid) {
                return Err(self.err(
                    &r.roleid,
                    format!("role '{}' is built in and cannot be redefined", r.roleid),
                ));
            }
            if r.roleid.to_ascii_lowercase().starts_with("pve") {
                return Err(self.err(
                    &r.roleid,
                    format!(
                        "role '{}': cannot use role ID starting with the (case-insensitive) 'PVE' namespace",
                        r.roleid
                    ),
                ));
            }
            if access.roles.contains_key(&r.roleid) {
                return Err(self.dup_err(&r.roleid, format!("duplicate role '{}'", r.roleid)));
            }
            for p in &r.privs {
                if !is_valid_priv(access.version, p) {
                    return Err(self.err(
                        p,
                        format!(
                            "role '{}': invalid privilege '{p}' in PVE {}",
                            r.roleid, access.version
                        ),
                    ));
                }
            }
            access
                .roles
                .insert(r.roleid.clone(), r.privs.iter().cloned().collect());
        }
        Ok(())
    }

    fn build_acl(&self, access: &mut Access) -> Result<(), ScenarioError> {
        for a in &self.acl {
            let path = normalize_path(&a.path)
                .filter(|p| check_path(p))
                .ok_or_else(|| self.err(&a.path, format!("invalid ACL path '{}'", a.path)))?;
            if a.roles.is_empty() {
                return Err(self.err(&a.path, format!("acl '{}': no roles", a.path)));
            }
            if a.users.is_empty() && a.groups.is_empty() && a.tokens.is_empty() {
                return Err(self.err(
                    &a.path,
                    format!(
                        "acl '{}': either users, groups or tokens is required",
                        a.path
                    ),
                ));
            }
            for r in &a.roles {
                if access.role_privs(r).is_none() {
                    return Err(self.err(r, format!("acl '{}': unknown role '{r}'", a.path)));
                }
            }
            for u in &a.users {
                if !access.users.contains_key(u) {
                    return Err(self.err(u, format!("acl '{}': unknown user '{u}'", a.path)));
                }
            }
            for g in &a.groups {
                if !access.groups.contains_key(g) {
                    return Err(self.err(g, format!("acl '{}': unknown group '{g}'", a.path)));
                }
            }
            for t in &a.tokens {
                let known = match AuthId::parse(t) {
                    Some(AuthId::Token { userid, tokenid }) => {
                        access.token(&userid, &tokenid).is_ok()
                    }
                    _ => false,
                };
                if !known {
                    return Err(self.err(t, format!("acl '{}': unknown token '{t}'", a.path)));
                }
            }
            access
                .update_acl(
                    &path,
                    &AclUpdate {
                        roles: &a.roles,
                        users: &a.users,
                        groups: &a.groups,
                        tokens: &a.tokens,
                        propagate: a.propagate,
                        delete: false,
                    },
                )
                .map_err(|e| self.err(&a.path, format!("acl '{}': {e}", a.path)))?;
        }
        Ok(())
    }
}

fn default_storages() -> Vec<StorageSpec> {
    let spec = |id: &str, kind: &str, content: &[&str], opts: &[(&str, &str)]| StorageSpec {
        id: id.into(),
        kind: kind.into(),
        content: Some(content.iter().map(|c| (*c).to_string()).collect()),
        shared: Some(false),
        nodes: None,
        disable: false,
        size: None,
        used: None,
        options: opts
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_string(),
                    serde_yaml::Value::String((*v).to_string()),
                )
            })
            .collect(),
    };
    vec![
        spec(
            "local",
            "dir",
            &["iso", "vztmpl", "backup", "snippets"],
            &[("path", "/var/lib/vz")],
        ),
        spec(
            "local-lvm",
            "lvmthin",
            &["images", "rootdir"],
            &[("thinpool", "data"), ("vgname", "pve")],
        ),
    ]
}

/// The content types a storage type allows by default; `None` for an
/// unknown type.
fn default_content(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "dir" | "nfs" | "cifs" | "cephfs" | "glusterfs" => {
            &["images", "rootdir", "iso", "vztmpl", "backup", "snippets"]
        }
        "lvmthin" | "lvm" | "zfspool" | "rbd" | "iscsi" | "zfs" | "iscsidirect" | "esxi" => {
            &["images", "rootdir"]
        }
        "pbs" => &["backup"],
        _ => return None,
    })
}

fn yaml_scalar(v: &serde_yaml::Value) -> String {
    match v {
        serde_yaml::Value::String(s) => s.clone(),
        serde_yaml::Value::Bool(b) => if *b { "1" } else { "0" }.into(),
        serde_yaml::Value::Number(n) => n.to_string(),
        other => serde_yaml::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

fn strip_location(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Node and cluster names: letters, digits and `-`, not starting or ending
/// with `-`.
fn valid_name(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// `pve-storage-id`: a letter, then letters, digits, `-`, `_`, `.`.
fn valid_storage_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `pve-bridge-id`: a letter, then letters, digits, `-`, `_`, `.`; at most
/// 15 characters.
fn valid_bridge(s: &str) -> bool {
    s.len() <= 15 && valid_storage_id(s)
}

fn fake_fingerprint(name: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(format!("fake-pve node {name}").as_bytes());
    d.iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("1024", Some(1024))]
    #[case("1K", Some(1024))]
    #[case("512M", Some(512 << 20))]
    #[case("32G", Some(32 << 30))]
    #[case("32GiB", Some(32 << 30))]
    #[case("1.5T", Some(3 << 39))]
    #[case("x", None)]
    #[case("-1G", None)]
    fn sizes(#[case] s: &str, #[case] v: Option<u64>) {
        assert_eq!(parse_size(s), v);
    }

    #[test]
    fn default_is_a_fresh_install() {
        let c = Scenario::default_single_node()
            .build(PveVersion::V9_1, "pw", 1_700_000_000)
            .expect("default builds");
        assert_eq!(c.local_node, "pve");
        assert_eq!(c.name, None);
        assert_eq!(c.nodes[0].bridges, vec!["vmbr0"]);
        let ids: Vec<_> = c.storage.cfg().iter().map(|s| s.storage.as_str()).collect();
        assert_eq!(ids, ["local", "local-lvm"]);
        assert_eq!(
            c.storage.cfg()[0].content,
            ["iso", "vztmpl", "backup", "snippets"]
        );
        assert!(c.access.users.contains_key("root@pam"));
    }

    #[rstest]
    #[case("nodes: [{name: pve, cpus: many}]", Some(1), "invalid type")]
    #[case(
        "nodes:\n  - name: pve\n    colour: red\n",
        Some(3),
        "unknown field `colour`"
    )]
    #[case(
        "nodes:\n  - name: a\n  - name: a\n",
        Some(3),
        "duplicate node name 'a'"
    )]
    #[case("nodes:\n  - name: -bad\n", Some(2), "invalid node name '-bad'")]
    #[case("users:\n  - userid: bob\n", Some(2), "invalid userid 'bob'")]
    #[case("users:\n  - userid: bob@ldap\n", Some(2), "unknown realm 'ldap'")]
    #[case(
        "vms:\n  - vmid: 100\n    node: nope\n",
        Some(3),
        "unknown node 'nope'"
    )]
    #[case(
        "storages:\n  - id: s1\n    type: floppy\n",
        Some(3),
        "unknown storage type 'floppy'"
    )]
    #[case(
        "nodes:\n  - name: pve\n    memory: lots\n",
        Some(3),
        "invalid size 'lots'"
    )]
    #[case("groups:\n  - groupid: 'a b'\n", Some(2), "invalid group id 'a b'")]
    #[case(
        "users:\n  - userid: bob@pve\n    groups: [ops]\n",
        Some(3),
        "user 'bob@pve': unknown group 'ops'"
    )]
    #[case(
        "groups:\n  - groupid: ops\n    members: [eve@pve]\n",
        Some(3),
        "group 'ops': unknown user 'eve@pve'"
    )]
    #[case(
        "roles:\n  - roleid: Ops\n    privs: [VM.Audit, VM.Monitor]\n",
        Some(3),
        "role 'Ops': invalid privilege 'VM.Monitor' in PVE 9.1"
    )]
    #[case("roles:\n  - roleid: PVEVMUser\n", Some(2), "is built in")]
    #[case("roles:\n  - roleid: pveOps\n", Some(2), "'PVE' namespace")]
    #[case(
        "acl:\n  - path: /nowhere\n    roles: [PVEAuditor]\n    users: [root@pam]\n",
        Some(2),
        "invalid ACL path '/nowhere'"
    )]
    #[case(
        "acl:\n  - path: /vms\n    roles: [Nope]\n    users: [root@pam]\n",
        Some(3),
        "acl '/vms': unknown role 'Nope'"
    )]
    #[case(
        "acl:\n  - path: /vms\n    roles: [PVEAuditor]\n    tokens: [root@pam!ci]\n",
        Some(4),
        "acl '/vms': unknown token 'root@pam!ci'"
    )]
    #[case(
        "acl:\n  - path: /vms\n    roles: [PVEAuditor]\n",
        Some(2),
        "either users, groups or tokens is required"
    )]
    fn bad_scenarios(#[case] text: &str, #[case] line: Option<usize>, #[case] reason: &str) {
        let e = Scenario::parse(text, "s.yaml").expect_err("must be refused");
        assert_eq!(e.file, "s.yaml");
        assert_eq!(e.line, line, "{e}");
        assert!(e.reason.contains(reason), "{e}");
    }

    #[test]
    fn access_entries_build() {
        let s = Scenario::parse(
            "users:\n  - userid: bob@pve\n    groups: [ops]\n    tokens: [{tokenid: ci}]\ngroups:\n  - { groupid: ops, comment: Operators }\n  - { groupid: dev, members: [bob@pve] }\nroles:\n  - { roleid: Starter, privs: [VM.PowerMgmt] }\nacl:\n  - { path: /vms/, roles: [Starter], groups: [ops], propagate: false }\n  - { path: /nodes, roles: [PVEAuditor], tokens: ['bob@pve!ci'] }\n",
            "s.yaml",
        )
        .expect("valid");
        let c = s.build(PveVersion::V8_4, "pw", 0).expect("builds");
        let a = &c.access;
        assert_eq!(a.user_groups("bob@pve"), ["dev", "ops"]);
        assert_eq!(a.groups["ops"].comment.as_deref(), Some("Operators"));
        assert!(!a.acl["/vms"].groups["ops"]["Starter"]);
        assert!(a.acl["/nodes"].tokens["bob@pve!ci"]["PVEAuditor"]);
        let bob = AuthId::User("bob@pve".into());
        assert!(a.has_priv(&bob, "/vms", "VM.PowerMgmt"));
        assert!(!a.has_priv(&bob, "/vms/100", "VM.PowerMgmt"));
    }

    #[test]
    fn node_storages_merge_by_id() {
        let s = Scenario::parse(
            "cluster: lab\nnodes:\n  - name: a\n    storages: [{id: fast, type: zfspool, pool: rpool}]\n  - name: b\n    storages: [{id: fast, type: zfspool, pool: rpool}]\n",
            "s.yaml",
        )
        .expect("valid");
        let c = s.build(PveVersion::V8_4, "pw", 0).expect("builds");
        let fast = c
            .storages()
            .cfg()
            .iter()
            .find(|s| s.storage == "fast")
            .expect("fast");
        assert_eq!(
            fast.nodes.as_deref(),
            Some(&["a".to_string(), "b".to_string()][..])
        );
        assert_eq!(fast.options.get("pool").map(String::as_str), Some("rpool"));
        assert_eq!(c.nodes[1].nodeid, 2);
    }
}
