//! Permission checks that PVE's guest handlers make themselves, beyond
//! the schema's `check` lists, and that VMs, containers and the storage
//! content share: SDN.Use on a bridge and its VLANs (pve-guest-common
//! `GuestHelpers::check_vnet_access`) and access to a volume (pve-storage
//! `Storage::check_volume_access`), each a function of the areas it
//! reads. A privilege on a guest or its pool (pve-access-control
//! `RPCEnvironment::check_vm_perm`) is [`Access::check_vm_perm`].
//!
//! Each check refuses as PVE does: a missing privilege is a 403
//! `Permission check failed (<path>, <privilege>)`, what only root@pam may
//! do is PVE's own `die` (500) or `raise_perm_exc`, as each check words it.

use super::access::Access;
use super::access::AuthId;
use super::guests::Guests;
use super::sdn::Sdn;
use super::storage::Storages;
use super::storage::content::{backup_info, vtype};
use super::storage::parse_volid;
use super::{Error, Result};

/// The areas a guest's permission checks read: the ACLs, the storages
/// (volume and storage access), the SDN (bridges and VNets) and the
/// guests (a container's mount points). The checks of the two kinds are
/// its methods, in `qemu::perm` and `lxc::perm`.
#[derive(Clone, Copy)]
pub struct Perms<'a> {
    /// Users, ACLs and pools.
    pub(in crate::model) access: &'a Access,
    /// The storages.
    pub(in crate::model) storage: &'a Storages,
    /// The SDN configuration.
    pub(in crate::model) sdn: &'a Sdn,
    /// The guests.
    pub(in crate::model) guests: &'a Guests,
    /// The release: some checks changed with it.
    pub(in crate::model) version: super::PveVersion,
}

impl<'a> Perms<'a> {
    /// The checks over these areas, as the release makes them.
    pub fn of(
        access: &'a Access,
        storage: &'a Storages,
        sdn: &'a Sdn,
        guests: &'a Guests,
        version: super::PveVersion,
    ) -> Self {
        Self {
            access,
            storage,
            sdn,
            guests,
            version,
        }
    }
}

/// Whether the caller is the user root@pam itself: the checks that PVE
/// short-circuits with `$authuser eq 'root@pam'` (root's tokens are not
/// `root@pam` there and go through every check).
pub fn is_root_pam(who: &AuthId) -> bool {
    matches!(who, AuthId::User(u) if u == "root@pam")
}

/// `raise_perm_exc($what)`: 403 `Permission check failed (<what>)`.
pub fn perm_exc(what: &str) -> Error {
    Error::Forbidden(format!("Permission check failed ({what})"))
}

/// `raise_perm_exc()` without a reason: 403 `Permission check failed`.
pub fn perm_denied() -> Error {
    Error::Forbidden("Permission check failed".into())
}

/// The value of `key=` in a property string (`bridge` of a `net0`).
pub fn prop_value<'a>(value: &'a str, key: &str) -> Option<&'a str> {
    value
        .split(',')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// `get_tags_from_trunk`: the VLAN tags of a `trunks` value
/// (`10;20-22`), in the order PVE checks them (sorted as text). A range
/// whose end is not above its start counts as its start alone.
pub fn trunk_tags(trunks: &str) -> Vec<String> {
    let mut tags = std::collections::BTreeSet::new();
    for part in trunks.split(';').filter(|p| !p.is_empty()) {
        let (start, end) = part.split_once('-').unwrap_or((part, ""));
        let (Ok(a), Ok(b)) = (start.parse::<u32>(), end.parse::<u32>()) else {
            tags.insert(start.to_string());
            continue;
        };
        if b > a {
            tags.extend((a..=b).map(|t| t.to_string()));
        } else {
            tags.insert(start.to_string());
        }
    }
    tags.into_iter().collect()
}

/// The VMID a volume name belongs to, as `parse_volname` finds it:
/// an image's (`100/vm-100-disk-0.qcow2`, `vm-100-disk-0`,
/// `base-100-disk-0/vm-101-disk-0`), a backup's (`backup/vzdump-qemu-100-...`).
pub fn volname_owner(name: &str) -> Option<u32> {
    match vtype(name) {
        "backup" => name.rsplit('/').next().and_then(|f| backup_info(f).1),
        "images" => {
            // The last file names its owner (a linked clone's base comes
            // first); a directory storage's `<vmid>/<file>` otherwise.
            let file = name.rsplit('/').next().unwrap_or(name);
            ["vm-", "base-", "subvol-", "basevol-"]
                .iter()
                .find_map(|p| file.strip_prefix(p))
                .and_then(|rest| rest.split('-').next())
                .and_then(|v| v.parse().ok())
                .or_else(|| name.split_once('/').and_then(|(d, _)| d.parse().ok()))
        }
        _ => None,
    }
}

/// `check_vnet_access`: SDN.Use on the bridge (or VNet) of a network
/// device, in the zone of the VNet (`localnetwork` for a plain
/// bridge); with a VLAN `tag` or `trunks`, SDN.Use on each VLAN
/// instead (which an ACL on the bridge gives by propagation).
///
/// # Errors
/// 403 `Permission check failed (/sdn/zones/<zone>/<bridge>[/<tag>], SDN.Use)`.
pub fn check_vnet_access(
    access: &Access,
    sdn: &Sdn,
    who: &AuthId,
    bridge: &str,
    tag: Option<&str>,
    trunks: Option<&str>,
) -> Result<()> {
    let zone = sdn
        .vnet_zone(bridge)
        .ok()
        .filter(|z| !z.is_empty())
        .unwrap_or_else(|| "localnetwork".into());
    let base = format!("/sdn/zones/{zone}/{bridge}");
    let tag = tag.filter(|t| !t.is_empty() && *t != "0");
    let trunks = trunks.filter(|t| !t.is_empty());
    if let Some(t) = tag {
        access.check_perm(who, &format!("{base}/{t}"), &["SDN.Use"])?;
    }
    if let Some(tr) = trunks {
        for t in trunk_tags(tr) {
            access.check_perm(who, &format!("{base}/{t}"), &["SDN.Use"])?;
        }
    }
    if tag.is_none() && trunks.is_none() {
        access.check_perm(who, &base, &["SDN.Use"])?;
    }
    Ok(())
}

/// `check_bridge_access` of one network device's value (`net0`): the
/// VNet check of its bridge, if it has one. root@pam is not checked.
///
/// # Errors
/// Those of [`check_vnet_access`].
pub fn check_net_bridge_access(access: &Access, sdn: &Sdn, who: &AuthId, net: &str) -> Result<()> {
    if is_root_pam(who) {
        return Ok(());
    }
    match prop_value(net, "bridge") {
        Some(bridge) => check_vnet_access(
            access,
            sdn,
            who,
            bridge,
            prop_value(net, "tag"),
            prop_value(net, "trunks"),
        ),
        None => Ok(()),
    }
}

/// `check_volume_access`: whether `who` may use the volume `volid`
/// for guest `vmid` (or for no guest). Datastore.Allocate on its
/// storage allows every volume; otherwise ISO images, container
/// templates and import sources need Datastore.AllocateSpace or
/// Datastore.Audit, the guest's own volumes nothing more, another
/// guest's backup Datastore.AllocateSpace and VM.Backup on that
/// guest, another guest's image Datastore.Audit and VM.Config.Disk on
/// that guest. A path outside any storage is root@pam's. `ctype`,
/// when given, is the content type the volume must have (`images`
/// does for `rootdir`).
///
/// # Errors
/// 403 `Permission check failed (...)`; 500 `unable to use volume
/// <volid> - content type needs to be '<type>'`, `missing privileges
/// to access <volid>`, `Only root can pass arbitrary filesystem
/// paths.`; the storage's `storage '<id>' does not exist`.
pub fn check_volume_access(
    access: &Access,
    storage: &Storages,
    who: &AuthId,
    vmid: Option<u32>,
    volid: &str,
    ctype: Option<&str>,
) -> Result<()> {
    let Some((sid, name)) = parse_volid(volid).filter(|(s, _)| valid_storage_id(s)) else {
        if is_root_pam(who) {
            return Ok(());
        }
        return Err(Error::failed(
            "Only root can pass arbitrary filesystem paths.",
        ));
    };
    storage.existing(sid)?;
    let vt = vtype(name);
    let owner = volname_owner(name);
    if let Some(t) = ctype
        && vt != t
        && !(t == "rootdir" && vt == "images")
    {
        return Err(Error::failed(format!(
            "unable to use volume {volid} - content type needs to be '{t}'"
        )));
    }
    let spath = format!("/storage/{sid}");
    if access.has_priv(who, &spath, "Datastore.Allocate") {
        return Ok(());
    }
    match (vt, owner) {
        ("iso" | "vztmpl" | "import", _) => {
            access.check_any(who, &spath, &["Datastore.AllocateSpace", "Datastore.Audit"])
        }
        (_, Some(o)) if vmid == Some(o) => Ok(()),
        ("backup", Some(o)) => {
            access.check_perm(who, &spath, &["Datastore.AllocateSpace"])?;
            access.check_perm(who, &format!("/vms/{o}"), &["VM.Backup"])
        }
        ("images" | "rootdir", Some(o)) => {
            access.check_perm(who, &spath, &["Datastore.Audit"])?;
            access.check_perm(who, &format!("/vms/{o}"), &["VM.Config.Disk"])
        }
        _ => Err(Error::failed(format!(
            "missing privileges to access {volid}"
        ))),
    }
}

/// `parse_volume_id`'s storage part: a letter first, then letters,
/// digits, `-`, `_`, `.`, and a letter or digit last (a PBS snapshot's
/// time, `vm/100/2024-01-01T00:00:00Z`, has a colon but no storage).
pub(crate) fn valid_storage_id(sid: &str) -> bool {
    let b = sid.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("10", &["10"])]
    #[case("10;20-22", &["10", "20", "21", "22"])]
    #[case("9-11", &["10", "11", "9"])]
    #[case("5-3", &["5"])]
    fn trunks_as_pve_lists_them(#[case] trunks: &str, #[case] want: &[&str]) {
        assert_eq!(trunk_tags(trunks), want);
    }

    #[rstest]
    #[case("100/vm-100-disk-0.qcow2", Some(100))]
    #[case("vm-4242-disk-1", Some(4242))]
    #[case("base-200-disk-0/vm-201-disk-0", Some(201))]
    #[case("100/base-100-disk-0.raw/101/vm-101-disk-0.qcow2", Some(101))]
    #[case("100/mine.raw", Some(100))]
    #[case("subvol-300-disk-0", Some(300))]
    #[case("backup/vzdump-qemu-105-2024_01_02-03_04_05.vma.zst", Some(105))]
    #[case("backup/other.tar", None)]
    #[case("iso/debian.iso", None)]
    #[case("vztmpl/debian.tar.zst", None)]
    fn owners_as_parse_volname_finds_them(#[case] name: &str, #[case] owner: Option<u32>) {
        assert_eq!(volname_owner(name), owner);
    }

    #[rstest]
    #[case("local", true)]
    #[case("local-lvm", true)]
    #[case("a", false)]
    #[case("1abc", false)]
    #[case("abc-", false)]
    fn storage_ids(#[case] sid: &str, #[case] ok: bool) {
        assert_eq!(valid_storage_id(sid), ok);
    }
}
