//! Privileges, built-in roles and the ACL tree (pve-access-control
//! `AccessControl.pm`: `$privgroups`, `create_roles`, `normalize_path`,
//! `check_path`).
//!
//! PVE builds its roles from privilege groups per category: `root`
//! privileges only Administrator holds, `admin`, `user` and `audit` ones.
//! `PVE<Cat>Admin` gets admin + user + audit, `PVE<Cat>User` user + audit
//! (only for categories with user privileges), `PVEAuditor` every audit
//! privilege, `PVEAdmin` every admin set but `Mapping.Modify`, and
//! `PVETemplateUser` is fixed. 9.0 dropped `VM.Monitor` and added the
//! guest-agent privileges and `VM.Replicate`.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::PveVersion;

/// One category of privileges: (category, root, admin, user, audit).
type PrivGroup = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

const SYS: PrivGroup = (
    "Sys",
    &[
        "Sys.PowerMgmt",
        "Sys.Modify",
        "Sys.Incoming",
        "Sys.AccessNetwork",
    ],
    &["Sys.Console", "Sys.Syslog"],
    &[],
    &["Sys.Audit"],
);
const DATASTORE: PrivGroup = (
    "Datastore",
    &[],
    &["Datastore.Allocate", "Datastore.AllocateTemplate"],
    &["Datastore.AllocateSpace"],
    &["Datastore.Audit"],
);
const SDN: PrivGroup = (
    "SDN",
    &[],
    &["SDN.Allocate", "SDN.Audit"],
    &["SDN.Use"],
    &["SDN.Audit"],
);
const USER: PrivGroup = (
    "User",
    &["Realm.Allocate"],
    &["User.Modify", "Group.Allocate", "Realm.AllocateUser"],
    &[],
    &[],
);
const POOL: PrivGroup = (
    "Pool",
    &[],
    &["Pool.Allocate"],
    &["Pool.Audit"],
    &["Pool.Audit"],
);
const MAPPING: PrivGroup = (
    "Mapping",
    &[],
    &["Mapping.Modify"],
    &["Mapping.Use"],
    &["Mapping.Audit"],
);
const VM_8: PrivGroup = (
    "VM",
    &[],
    &[
        "VM.Config.Disk",
        "VM.Config.CPU",
        "VM.Config.Memory",
        "VM.Config.Network",
        "VM.Config.HWType",
        "VM.Config.Options",
        "VM.Allocate",
        "VM.Clone",
        "VM.Monitor",
        "VM.Migrate",
        "VM.Snapshot",
        "VM.Snapshot.Rollback",
    ],
    &[
        "VM.Config.CDROM",
        "VM.Config.Cloudinit",
        "VM.Console",
        "VM.Backup",
        "VM.PowerMgmt",
    ],
    &["VM.Audit"],
);
const VM_9: PrivGroup = (
    "VM",
    &[],
    &[
        "VM.Config.Disk",
        "VM.Config.CPU",
        "VM.Config.Memory",
        "VM.Config.Network",
        "VM.Config.HWType",
        "VM.Config.Options",
        "VM.Allocate",
        "VM.Clone",
        "VM.GuestAgent.Unrestricted",
        "VM.Migrate",
        "VM.Replicate",
        "VM.Snapshot",
        "VM.Snapshot.Rollback",
    ],
    &[
        "VM.Config.CDROM",
        "VM.Config.Cloudinit",
        "VM.Console",
        "VM.Backup",
        "VM.GuestAgent.FileRead",
        "VM.GuestAgent.FileSystemMgmt",
        "VM.GuestAgent.FileWrite",
        "VM.PowerMgmt",
    ],
    &["VM.Audit", "VM.GuestAgent.Audit"],
);

fn privgroups(version: PveVersion) -> [PrivGroup; 7] {
    let vm = if version.is_v9() { VM_9 } else { VM_8 };
    [vm, SYS, DATASTORE, SDN, USER, POOL, MAPPING]
}

/// Every privilege name the release knows (`$valid_privs`).
pub fn valid_privs(version: PveVersion) -> BTreeSet<&'static str> {
    let mut all = BTreeSet::from(["Permissions.Modify"]);
    for (_, root, admin, user, audit) in privgroups(version) {
        all.extend(root.iter().chain(admin).chain(user).chain(audit));
    }
    all
}

/// Whether `privilege` exists in the release (`verify_privname`).
pub fn is_valid_priv(version: PveVersion, privilege: &str) -> bool {
    static V8: std::sync::OnceLock<BTreeSet<&'static str>> = std::sync::OnceLock::new();
    static V9: std::sync::OnceLock<BTreeSet<&'static str>> = std::sync::OnceLock::new();
    let cell = if version.is_v9() { &V9 } else { &V8 };
    cell.get_or_init(|| valid_privs(version))
        .contains(privilege)
}

/// [`builtin_roles`], made once per release (the permission checks of
/// every request read it).
pub fn builtin_roles_shared(version: PveVersion) -> &'static BTreeMap<String, BTreeSet<String>> {
    static V8: std::sync::OnceLock<BTreeMap<String, BTreeSet<String>>> = std::sync::OnceLock::new();
    static V9: std::sync::OnceLock<BTreeMap<String, BTreeSet<String>>> = std::sync::OnceLock::new();
    let cell = if version.is_v9() { &V9 } else { &V8 };
    cell.get_or_init(|| builtin_roles(version))
}

/// The built-in ("special") roles of the release with their privileges.
pub fn builtin_roles(version: PveVersion) -> BTreeMap<String, BTreeSet<String>> {
    let mut roles: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let own = |s: &[&str]| s.iter().map(|p| (*p).to_string()).collect::<Vec<_>>();
    roles.insert("NoAccess".into(), BTreeSet::new());
    roles.insert(
        "Administrator".into(),
        valid_privs(version)
            .into_iter()
            .map(str::to_string)
            .collect(),
    );
    for (cat, _, admin, user, audit) in privgroups(version) {
        let admin_set: Vec<String> = own(admin)
            .into_iter()
            .chain(own(user))
            .chain(own(audit))
            .collect();
        roles
            .entry(format!("PVE{cat}Admin"))
            .or_default()
            .extend(admin_set.iter().cloned());
        roles
            .entry("PVEAdmin".into())
            .or_default()
            .extend(admin_set);
        if !user.is_empty() {
            roles
                .entry(format!("PVE{cat}User"))
                .or_default()
                .extend(own(user).into_iter().chain(own(audit)));
        }
        roles
            .entry("PVEAuditor".into())
            .or_default()
            .extend(own(audit));
    }
    if let Some(admin) = roles.get_mut("PVEAdmin") {
        admin.remove("Mapping.Modify");
    }
    roles.insert(
        "PVETemplateUser".into(),
        own(&["VM.Clone", "VM.Audit"]).into_iter().collect(),
    );
    roles
}

/// Whether `role` is one of PVE's built-in roles (`role_is_special`).
pub fn role_is_special(role: &str) -> bool {
    // The set of names does not depend on the release.
    builtin_roles(PveVersion::V9_1).contains_key(role)
}

/// The entries of one ACL path: per user, group and token, the roles with
/// their propagate flag.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AclNode {
    /// `userid -> role -> propagate`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub users: BTreeMap<String, BTreeMap<String, bool>>,
    /// `groupid -> role -> propagate`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, BTreeMap<String, bool>>,
    /// `user@realm!token -> role -> propagate`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tokens: BTreeMap<String, BTreeMap<String, bool>>,
}

impl AclNode {
    /// Whether the node holds no entry at all.
    pub fn is_empty(&self) -> bool {
        [&self.users, &self.groups, &self.tokens]
            .iter()
            .all(|m| m.values().all(BTreeMap::is_empty))
    }

    /// Drops members left without roles.
    pub fn prune(&mut self) {
        for m in [&mut self.users, &mut self.groups, &mut self.tokens] {
            m.retain(|_, roles| !roles.is_empty());
        }
    }
}

/// The kind of ACL subject, as `GET /access/acl` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UgKind {
    /// A user (`users`).
    User,
    /// A group (`groups`).
    Group,
    /// An API token (`tokens`).
    Token,
}

impl UgKind {
    /// `user`, `group` or `token`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Group => "group",
            Self::Token => "token",
        }
    }
}

/// PVE's `normalize_path`: collapses slashes, drops a trailing one, adds a
/// leading one; `None` for an empty path or characters outside
/// `[[:alnum:].-_/]`.
pub fn normalize_path(path: &str) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut last_slash = false;
    for c in path.chars() {
        if c == '/' {
            if !last_slash {
                out.push('/');
            }
            last_slash = true;
        } else {
            out.push(c);
            last_slash = false;
        }
    }
    if out.ends_with('/') {
        out.pop();
    }
    if out.is_empty() {
        out.push('/');
    }
    if !out.starts_with('/') {
        out.insert(0, '/');
    }
    out.chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '/'))
        .then_some(out)
}

/// PVE's `check_path`: the ACL paths `PUT /access/acl` accepts.
pub fn check_path(path: &str) -> bool {
    let name = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    let alnum = |s: &str| !s.is_empty() && s.chars().all(char::is_alphanumeric);
    let alnum_us_dash = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
    };
    let vlan = |s: &str| {
        let b = s.as_bytes();
        (1..=4).contains(&b.len()) && b[0] != b'0' && b.iter().all(u8::is_ascii_digit)
    };
    let vmid = |s: &str| {
        let b = s.as_bytes();
        b.len() >= 3 && b[0] != b'0' && b.iter().all(u8::is_ascii_digit)
    };
    let pool = |s: &str| s.is_ascii() && name(s);
    if path == "/" {
        return true;
    }
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        ["access"] | ["nodes"] | ["pool"] | ["sdn"] | ["storage"] | ["vms"] | ["mapping"] => true,
        ["access", "groups" | "realm"] => true,
        ["access", "groups" | "realm", n] | ["nodes", n] | ["storage", n] | ["mapping", n] => {
            name(n)
        }
        ["mapping", a, b] => name(a) && name(b),
        ["pool", ps @ ..] => (1..=3).contains(&ps.len()) && ps.iter().all(|p| pool(p)),
        ["sdn", "controllers" | "dns" | "ipams" | "zones"] => true,
        ["sdn", "fabrics" | "prefix-lists" | "route-maps"] => true,
        ["sdn", "controllers", n] => alnum_us_dash(n),
        [
            "sdn",
            "dns" | "ipams" | "fabrics" | "prefix-lists" | "route-maps",
            n,
        ] => alnum(n),
        ["sdn", "zones", z] => name(z),
        ["sdn", "zones", z, v] => name(z) && name(v),
        ["sdn", "zones", z, v, tag] => name(z) && name(v) && vlan(tag),
        ["vms", id] => vmid(id),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn joined(v: PveVersion, role: &str) -> String {
        builtin_roles(v)[role]
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn privilege_counts() {
        assert_eq!(valid_privs(PveVersion::V8_4).len(), 42);
        assert_eq!(valid_privs(PveVersion::V9_1).len(), 47);
        assert_eq!(builtin_roles(PveVersion::V8_4)["PVEAdmin"].len(), 35);
        assert_eq!(builtin_roles(PveVersion::V8_4)["PVEVMAdmin"].len(), 18);
        assert!(builtin_roles(PveVersion::V9_1)["NoAccess"].is_empty());
        assert_eq!(builtin_roles(PveVersion::V9_1).len(), 17);
    }

    #[rstest]
    #[case(
        PveVersion::V8_4,
        "PVEAuditor",
        "Datastore.Audit,Mapping.Audit,Pool.Audit,SDN.Audit,Sys.Audit,VM.Audit"
    )]
    #[case(
        PveVersion::V9_1,
        "PVEAuditor",
        "Datastore.Audit,Mapping.Audit,Pool.Audit,SDN.Audit,Sys.Audit,VM.Audit,VM.GuestAgent.Audit"
    )]
    #[case(
        PveVersion::V8_4,
        "PVEVMUser",
        "VM.Audit,VM.Backup,VM.Config.CDROM,VM.Config.Cloudinit,VM.Console,VM.PowerMgmt"
    )]
    #[case(
        PveVersion::V9_1,
        "PVEVMUser",
        "VM.Audit,VM.Backup,VM.Config.CDROM,VM.Config.Cloudinit,VM.Console,VM.GuestAgent.Audit,VM.GuestAgent.FileRead,VM.GuestAgent.FileSystemMgmt,VM.GuestAgent.FileWrite,VM.PowerMgmt"
    )]
    #[case(
        PveVersion::V8_4,
        "PVEUserAdmin",
        "Group.Allocate,Realm.AllocateUser,User.Modify"
    )]
    #[case(PveVersion::V8_4, "PVEPoolUser", "Pool.Audit")]
    #[case(PveVersion::V8_4, "PVESysAdmin", "Sys.Audit,Sys.Console,Sys.Syslog")]
    #[case(PveVersion::V8_4, "PVETemplateUser", "VM.Audit,VM.Clone")]
    #[case(
        PveVersion::V8_4,
        "PVEDatastoreUser",
        "Datastore.AllocateSpace,Datastore.Audit"
    )]
    #[case(PveVersion::V9_1, "PVEMappingUser", "Mapping.Audit,Mapping.Use")]
    fn role_lists(#[case] v: PveVersion, #[case] role: &str, #[case] privs: &str) {
        assert_eq!(joined(v, role), privs);
    }

    #[test]
    fn admin_roles_per_release() {
        let a8 = &builtin_roles(PveVersion::V8_4)["PVEAdmin"];
        let a9 = &builtin_roles(PveVersion::V9_1)["PVEAdmin"];
        assert!(a8.contains("VM.Monitor") && !a9.contains("VM.Monitor"));
        assert!(a9.contains("VM.Replicate") && a9.contains("VM.GuestAgent.Unrestricted"));
        assert!(!a9.contains("Mapping.Modify") && !a9.contains("Sys.Modify"));
        assert!(builtin_roles(PveVersion::V9_1)["Administrator"].contains("Sys.Modify"));
        assert!(!builtin_roles(PveVersion::V9_1).contains_key("PVESysUser"));
    }

    #[rstest]
    #[case("/", Some("/"))]
    #[case("//vms//100/", Some("/vms/100"))]
    #[case("vms", Some("/vms"))]
    #[case("", None)]
    #[case("/vms/1 0", None)]
    fn normalized(#[case] p: &str, #[case] want: Option<&str>) {
        assert_eq!(normalize_path(p).as_deref(), want);
    }

    #[rstest]
    #[case("/", true)]
    #[case("/vms/100", true)]
    #[case("/vms/99", false)]
    #[case("/vms/0100", false)]
    #[case("/nodes/pve", true)]
    #[case("/access/groups/admins", true)]
    #[case("/pool/a/b/c", true)]
    #[case("/pool/a/b/c/d", false)]
    #[case("/sdn/zones/z1/vnet1/100", true)]
    #[case("/sdn/zones/z1/vnet1/0", false)]
    #[case("/foo", false)]
    #[case("/storage/local-lvm", true)]
    fn acl_paths(#[case] p: &str, #[case] ok: bool) {
        assert_eq!(check_path(p), ok, "{p}");
    }
}
