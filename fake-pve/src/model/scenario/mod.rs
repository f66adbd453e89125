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

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::PveVersion;
use super::access::{
    Access, AclUpdate, AuthId, Group, Token, User, valid_groupid, valid_realm, valid_tokenid,
    valid_userid,
};
use super::acl::{check_path, is_valid_priv, normalize_path, role_is_special};
use super::cluster::{Cluster, ClusterDoc, Storage, Vm};
use super::faults::{FaultRule, Faults};
use super::nodes::{Node, NodeStatus};
use super::size::parse_size;

mod access;
pub use access::TfaSpec;
mod build;
pub(crate) use build::fake_fingerprint;
pub mod ceph;
pub mod nesting;
mod volumes;
pub use volumes::VolumeSpec;

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
    /// Realms besides pam and pve (LDAP, AD, OpenID), with the directory
    /// an LDAP or AD server holds.
    #[serde(default)]
    pub realms: Vec<RealmSpec>,
    /// Guests that already exist.
    #[serde(default)]
    pub vms: Vec<VmSpec>,
    /// Containers that already exist (in the VMs' VMID space).
    #[serde(default)]
    pub containers: Vec<CtSpec>,
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
    /// Resource pools with their guests and storages.
    #[serde(default)]
    pub pools: Vec<PoolSpec>,
    /// `datacenter.cfg` options fake-pve models (the tag rules).
    #[serde(default)]
    pub datacenter: DatacenterSpec,
    /// What the guest agents of VMs report, by VMID (see `model::agent`).
    #[serde(default)]
    pub guests: BTreeMap<u32, super::agent::Guest>,
    /// The URLs `download-url` and `query-url-metadata` know (see
    /// `model::storage::content`).
    #[serde(default)]
    pub downloads: Vec<super::storage::content::KnownUrl>,
    /// Files on storages no guest config names: ISO images, templates,
    /// backups (with notes and protection), snippets (see
    /// [`VolumeSpec`]).
    #[serde(default)]
    pub volumes: Vec<VolumeSpec>,
    /// The images the emulated container registries hold
    /// (`query-oci-repo-tags`, `oci-registry-pull`; see `model::oci`).
    #[serde(default)]
    pub oci_images: Vec<super::oci::Image>,
    /// Custom CPU models (`cpu-models.conf`) by name, with or without
    /// `custom-`: `reported-model`, `flags`, `hidden`, `hv-vendor-id`,
    /// `phys-bits`, `guest-phys-bits`, `level`.
    #[serde(default)]
    pub cpu_models: BTreeMap<String, super::qemu::cpu_models::CpuModel>,
    /// Ceph: the release installed, initialisation, daemons, flags (see
    /// `scenario::ceph`).
    #[serde(default)]
    pub ceph: Option<ceph::CephSpec>,
    /// Resource mappings (`mapping/{pci,usb,dir}.cfg`) by kind and id:
    /// `description`, `mdev`, `live-migration-capable` (PCI) and `map`,
    /// the per-node property strings (`node=pve1,path=0000:65:00.0,
    /// id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2`).
    #[serde(default)]
    pub mappings: BTreeMap<super::mapping::Kind, BTreeMap<String, super::mapping::Mapping>>,
    /// Proxmox Backup Servers `pbs` storages reach: `name`, `address`
    /// (what a storage's `server` says, default the name), `port`,
    /// `fingerprint` (a storage must pin it) and `datastores` by name,
    /// each with `namespaces` and `verify-new` (see `model::pbs`).
    #[serde(default)]
    pub pbs: Vec<super::pbs::Server>,
    /// API calls run as root@pam once the world is built, in order (and
    /// again on a reset): what the fields above do not describe yet
    /// (firewall, SDN, HA, jobs, network interfaces, datacenter options),
    /// as `fake-pve scenario capture` writes it. A call that fails stops
    /// the start.
    #[serde(default)]
    pub setup: Vec<SetupCall>,
    /// Where the text came from, for messages.
    #[serde(skip)]
    pub source: String,
    /// The text itself, to find lines for semantic errors. A scenario
    /// read from text ([`Scenario::read`]) that a server starts from is
    /// rebuilt from its text (on a reset): its guests go into the world
    /// rather than being kept twice.
    #[serde(skip)]
    pub text: String,
    /// Whether `vms` and `containers` are what `text` gives.
    #[serde(skip)]
    read_from_text: bool,
    /// Whether `vms` and `containers` went into a world, to be read
    /// from `text` again for the next ([`Scenario::build_seed`]).
    #[serde(skip)]
    guests_in_text: bool,
    /// A saved world (a state document given where a scenario goes): the
    /// cluster is this, as it was.
    #[serde(skip)]
    pub world: Option<Box<Cluster>>,
}

/// One API call of a scenario's `setup`.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SetupCall {
    /// `POST`, `PUT` or `DELETE`.
    pub method: String,
    /// The path below `/api2/json` (`/cluster/firewall/rules`).
    pub path: String,
    /// The parameters, as a client sends them.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Whether the start goes on when the call fails (with a warning):
    /// a capture's calls, which may set what fake-pve does not emulate
    /// (`fake-pve compare` then shows what is missing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub may_fail: bool,
}

impl SetupCall {
    /// Whether the call is one `setup` may hold: a write of a path below
    /// the API root.
    pub fn check(&self) -> Result<(), String> {
        if !matches!(self.method.as_str(), "POST" | "PUT" | "DELETE") {
            return Err(format!(
                "setup: method '{}' is not POST, PUT or DELETE",
                self.method
            ));
        }
        if !self.path.starts_with('/') || self.path.contains("..") {
            return Err(format!("setup: invalid path '{}'", self.path));
        }
        Ok(())
    }
}

/// The `datacenter.cfg` options of a scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatacenterSpec {
    /// `registered-tags`: tags only `Sys.Modify` on `/` may set.
    #[serde(default, rename = "registered-tags")]
    pub registered_tags: Vec<String>,
    /// `user-tag-access`.
    #[serde(default, rename = "user-tag-access")]
    pub user_tag_access: Option<UserTagAccessSpec>,
}

/// `user-tag-access` of `datacenter.cfg`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserTagAccessSpec {
    /// `none`, `list`, `existing` or `free` (default).
    #[serde(default, rename = "user-allow")]
    pub user_allow: Option<String>,
    /// `user-allow-list`.
    #[serde(default, rename = "user-allow-list")]
    pub user_allow_list: Vec<String>,
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
    /// Physical NICs, in their order (default `[eno1, eno2]`); the
    /// first is `vmbr0`'s port.
    #[serde(default)]
    pub nics: Option<Vec<String>>,
    /// Bridges (default `[vmbr0]`).
    #[serde(default)]
    pub bridges: Option<Vec<String>>,
    /// Storages only this node has.
    #[serde(default)]
    pub storages: Vec<StorageSpec>,
    /// Disks beside the system disk (`sda`, which listing it replaces);
    /// default: two empty HDDs and an empty NVMe disk.
    #[serde(default)]
    pub disks: Option<Vec<super::node_hw::DiskSpec>>,
    /// PCI devices (default: a server board's, with a vGPU).
    #[serde(default)]
    pub pci: Option<Vec<super::node_hw::PciDevice>>,
    /// USB devices (default: a BMC's keyboard and a USB stick).
    #[serde(default)]
    pub usb: Option<Vec<super::node_hw::UsbDevice>>,
    /// Package updates available (default none).
    #[serde(default)]
    pub updates: Option<Vec<super::node_hw::Update>>,
    /// The storage servers the node's scans reach (default none).
    #[serde(default)]
    pub scan: Option<super::node_hw::ScanServers>,
    /// `/etc/resolv.conf` (default: search `example.com`, dns1 `192.0.2.1`).
    #[serde(default)]
    pub dns: Option<DnsSpec>,
    /// `/etc/hosts` (default: the installer's, with the node's address).
    #[serde(default)]
    pub hosts: Option<String>,
    /// The time zone (default `UTC`).
    #[serde(default)]
    pub timezone: Option<String>,
    /// Services whose state differs from a fresh install's, by service
    /// id: `running`, `stopped` or `failed`.
    #[serde(default)]
    pub services: BTreeMap<String, String>,
    /// The subscription (default: none, or an active one of `level`).
    #[serde(default)]
    pub subscription: Option<SubscriptionSpec>,
    /// The SHA-256 fingerprint of its certificate as `/nodes` shows it
    /// (default: one made from its name; the node fake-pve answers as
    /// shows its own certificate's when it serves HTTPS).
    #[serde(default)]
    pub fingerprint: Option<String>,
}

impl NodeSpec {
    /// The node's hardware as the scenario describes it.
    pub fn hardware(&self) -> super::node_hw::HardwareSpec {
        super::node_hw::HardwareSpec {
            disks: self.disks.clone(),
            pci: self.pci.clone(),
            usb: self.usb.clone(),
            updates: self.updates.clone(),
            scan: self.scan.clone(),
        }
    }
}

/// A node's `/etc/resolv.conf` in a scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DnsSpec {
    /// The search domain.
    #[serde(default)]
    pub search: Option<String>,
    /// First name server.
    #[serde(default)]
    pub dns1: Option<String>,
    /// Second name server.
    #[serde(default)]
    pub dns2: Option<String>,
    /// Third name server.
    #[serde(default)]
    pub dns3: Option<String>,
}

/// A node's subscription in a scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionSpec {
    /// `pve<sockets><level>-<10 hex digits>` (default: one of the node's
    /// `level`, or `c`, for its sockets).
    #[serde(default)]
    pub key: Option<String>,
    /// `active` (default), `new`, `invalid`, `expired` or `suspended`.
    #[serde(default)]
    pub status: Option<String>,
    /// `YYYY-MM-DD` (default: a year after the start).
    #[serde(default)]
    pub nextduedate: Option<String>,
    /// The shop's message.
    #[serde(default)]
    pub message: Option<String>,
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
    /// Second factors, listed as they are but with new secrets: `totp`
    /// and `recovery` entries.
    #[serde(default)]
    pub tfa: Vec<TfaSpec>,
}

/// A realm of a scenario (`domains.cfg`), as `POST /access/domains`
/// makes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RealmSpec {
    /// The realm id.
    pub realm: String,
    /// `ldap`, `ad` or `openid`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The realm's options (`server1`, `base_dn`, `user_attr`, `domain`,
    /// `issuer-url`, `client-id`, `default`, `comment`, `tfa`, ...).
    #[serde(default)]
    pub options: BTreeMap<String, serde_yaml::Value>,
    /// The bind password (with `bind_dn`).
    #[serde(default)]
    pub password: Option<String>,
    /// What the LDAP or AD server holds: `users` by name (`password`,
    /// `email`, `firstname`, `lastname`, `comment`) and `groups` by name
    /// with their members' names. For an `openid` realm of the emulated
    /// provider, the accounts the provider authenticates and their
    /// claims (`groups` in the `groups` claim).
    #[serde(default)]
    pub directory: super::access::realms::Directory,
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

/// A resource pool of a scenario (`user.cfg`'s `pool:` line).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolSpec {
    /// The pool ID (`prod`, `prod/web`; a nested pool after its parent).
    pub poolid: String,
    /// Its comment.
    #[serde(default)]
    pub comment: Option<String>,
    /// Member guests.
    #[serde(default)]
    pub vms: Vec<u32>,
    /// Member storages.
    #[serde(default)]
    pub storage: Vec<String>,
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
    /// Other config keys, as PVE stores them (a number or boolean in
    /// the scenario is its text: `2048`, `1` or `0`).
    #[serde(default, deserialize_with = "scalar_texts")]
    pub config: BTreeMap<String, String>,
    /// Snapshot sections by name, keys as PVE stores them (`snaptime`,
    /// `description`, `parent`, `vmstate`, config keys). The current
    /// config's `parent` names the newest one.
    #[serde(default)]
    pub snapshots: BTreeMap<String, BTreeMap<String, serde_yaml::Value>>,
    /// Pending values (the config file's `[PENDING]` section).
    #[serde(default, deserialize_with = "scalar_texts")]
    pub pending: BTreeMap<String, String>,
    /// Pending deletions (`!key`: forced).
    #[serde(default)]
    pub pending_delete: Vec<String>,
}

/// A pre-existing container.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CtSpec {
    /// VMID (not one a VM has).
    pub vmid: u32,
    /// Node (default: the first).
    #[serde(default)]
    pub node: Option<String>,
    /// Host name.
    #[serde(default)]
    pub hostname: Option<String>,
    /// `running` or `stopped` (default).
    #[serde(default)]
    pub status: Option<String>,
    /// Config keys as PVE stores them (`rootfs`, `net0`, `memory`, ...);
    /// the volumes named are made on their storages.
    #[serde(default, deserialize_with = "scalar_texts")]
    pub config: BTreeMap<String, String>,
    /// Snapshot sections by name, as a VM's.
    #[serde(default)]
    pub snapshots: BTreeMap<String, BTreeMap<String, serde_yaml::Value>>,
    /// Pending values (the config file's `[pve:pending]` section).
    #[serde(default, deserialize_with = "scalar_texts")]
    pub pending: BTreeMap<String, String>,
    /// Pending deletions.
    #[serde(default)]
    pub pending_delete: Vec<String>,
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
                parse_scenario_size(s).map(Size).ok_or_else(|| {
                    E::custom(format!(
                        "invalid size '{s}' (use bytes or a number with K, M, G or T)"
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// A size in a scenario file: PVE's [`parse_size`] (`123`, `64K`,
/// `512M`, `32G`, `1.5T`), with what a hand-written file may add besides:
/// blanks around it, a lower-case unit and a `B`/`iB` suffix (`32GiB`,
/// `512m`). Scenario sizes (node memory, storage capacity) are the
/// emulator's own input, not a value PVE parses, so they are read more
/// leniently than a drive's `size=`.
pub fn parse_scenario_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s
        .strip_suffix("iB")
        .or_else(|| s.strip_suffix('B'))
        .unwrap_or(s);
    parse_size(&s.to_ascii_uppercase())
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
                ..NodeSpec::default()
            }],
            source: "<built-in>".into(),
            ..Self::default()
        }
    }

    /// Parses YAML (JSON is YAML too), and checks that it builds.
    ///
    /// # Errors
    /// The source, line and reason of the first problem.
    pub fn parse(text: &str, source: &str) -> Result<Self, ScenarioError> {
        let s = Self::read(text, source)?;
        if s.world.is_some() {
            return Ok(s);
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

    /// Parses YAML or JSON without building it: what does not build is
    /// reported when it is built (as a server starts, with its release),
    /// so that a large world is built once, not twice.
    ///
    /// # Errors
    /// The source, line and reason of a malformed document.
    pub fn read(text: &str, source: &str) -> Result<Self, ScenarioError> {
        Self::read_text(Cow::Borrowed(text), source)
    }

    /// [`Scenario::read`] of text the scenario may keep as it is, not
    /// copied (a scenario of a million guests is hundreds of megabytes).
    ///
    /// # Errors
    /// As [`Scenario::read`].
    pub fn read_owned(text: String, source: &str) -> Result<Self, ScenarioError> {
        Self::read_text(Cow::Owned(text), source)
    }

    fn read_text(text: Cow<'_, str>, source: &str) -> Result<Self, ScenarioError> {
        nesting::check(&text).map_err(|e| ScenarioError {
            file: source.into(),
            line: Some(e.line),
            reason: e.to_string(),
        })?;
        if super::world::is_state_doc(&text) {
            let doc = super::world::parse(&text, source)?;
            return Ok(Self::from_world(doc.cluster, source));
        }
        let mut s: Scenario = if text.trim().is_empty() {
            Scenario::default()
        } else if let Some(s) = text
            .trim_start()
            .starts_with('{')
            .then(|| serde_json::from_str::<Scenario>(&text).ok())
            .flatten()
        {
            // JSON, read by the JSON parser (many times faster than YAML's
            // for a scenario of many guests). What it does not read (YAML
            // in flow style, a mistake) goes to YAML's, which says where.
            s
        } else {
            serde_yaml::from_str(&text).map_err(|e| ScenarioError {
                file: source.into(),
                line: e.location().map(|l| l.line()),
                reason: strip_location(&e.to_string()),
            })?
        };
        s.source = source.into();
        s.text = text.into_owned();
        s.read_from_text = true;
        if s.nodes.is_empty() {
            s.nodes = Self::default_single_node().nodes;
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

    /// Reads and parses a file ([`Scenario::read`]: it is checked when
    /// it is built).
    ///
    /// # Errors
    /// When the file cannot be read or is malformed.
    pub fn load(path: &std::path::Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.display().to_string(),
            line: None,
            reason: e.to_string(),
        })?;
        Self::read_owned(text, &path.display().to_string())
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
}

/// A config map of a scenario, each value as PVE stores it
/// ([`yaml_scalar`]), read without keeping the YAML values.
fn scalar_texts<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    struct Texts;
    impl<'de> serde::de::Visitor<'de> for Texts {
        type Value = BTreeMap<String, String>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map")
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut m: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((k, v)) = m.next_entry::<String, serde_yaml::Value>()? {
                let text = match v {
                    serde_yaml::Value::String(s) => s,
                    v => yaml_scalar(&v),
                };
                out.insert(k, text);
            }
            Ok(out)
        }
    }
    d.deserialize_map(Texts)
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

#[cfg(test)]
mod tests;
