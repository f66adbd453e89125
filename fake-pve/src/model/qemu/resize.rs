//! Growing a disk (`PUT .../resize`, qemu-server `API2/Qemu.pm`
//! `resize_vm`; pve-storage `volume_resize`).
//!
//! PVE checks nothing before forking: the digest, the lock, the disk, the
//! storage permission and the size are all checked inside the `resize`
//! task, so every refusal ends the task with an error.

use serde::{Deserialize, Serialize};

use super::{EffectResult, Error, PveVersion, Result, drive_file, drive_is_cdrom, drive_with};
use crate::model::access::{Access, AuthId};
use crate::model::guests::Guests;
use crate::model::storage::Storages;
use crate::model::storage::parse_volid;
use crate::spec::propstring;

/// What a `resize` task was asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResizeJob {
    /// The node the request named: the config must be there.
    pub node: String,
    /// The drive key (`scsi0`).
    pub disk: String,
    /// `+2G` or `10G` as given (the schema checked the pattern).
    pub size: String,
    /// Skip the lock check (root@pam only).
    pub skiplock: bool,
    /// The expected config digest.
    pub digest: Option<String>,
    /// Who asked: the task checks `Datastore.AllocateSpace` for them.
    pub who: AuthId,
}

/// Parses `\+?\d+(\.\d+)?[KMGT]?` into (relative, bytes) as `resize_vm`
/// does: the number times the unit, truncated to an integer later.
fn parse_resize(s: &str) -> Option<(bool, f64)> {
    let (rel, rest) = match s.strip_prefix('+') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (num, shift) = match rest.chars().last()? {
        'K' => (&rest[..rest.len() - 1], 10),
        'M' => (&rest[..rest.len() - 1], 20),
        'G' => (&rest[..rest.len() - 1], 30),
        'T' => (&rest[..rest.len() - 1], 40),
        _ => (rest, 0),
    };
    let mut parts = num.splitn(2, '.');
    let int = parts.next()?;
    let frac = parts.next();
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    Some((rel, n * f64::from(1u32 << (shift / 2)).powi(2)))
}

/// The `resize` task: grows the volume, writes `size=` into the
/// drive, and answers the storage tools' output.
pub(crate) fn finish_resize(
    guests: &mut Guests,
    storage: &mut Storages,
    access: &Access,
    version: PveVersion,
    vmid: u32,
    job: &ResizeJob,
) -> EffectResult {
    let fail = |e: Error| (Vec::new(), e.to_string());
    let node = job.node.as_str();
    let (volid, running, current) =
        resize_checks(guests, storage, access, node, vmid, job).map_err(fail)?;
    let (rel, bytes) =
        parse_resize(&job.size).ok_or_else(|| (Vec::new(), "internal error".to_string()))?;
    let mut newsize = bytes;
    if rel {
        newsize += current as f64;
    }
    let newsize = newsize as u64;
    if newsize < current {
        return Err((Vec::new(), "shrinking disks is not supported".into()));
    }
    if newsize == current {
        return Ok(Vec::new());
    }
    let lines = storage
        .resize_volume(&volid, node, newsize, running)
        .map_err(fail)?;
    let size_text = propstring::format_size(&newsize.to_string());
    if let Some(vm) = guests.get_mut(&vmid)
        && let Some(value) = vm.config.get(&job.disk).cloned()
    {
        let printed = drive_with(version, &job.disk, &value, &[("size", &size_text)], &[]);
        vm.config.insert(job.disk.clone(), printed);
    }
    Ok(lines)
}

/// `resize_vm`'s checks under the config lock, in PVE's order;
/// answers the volume, whether the VM runs and the current size.
fn resize_checks(
    guests: &Guests,
    storage: &Storages,
    access: &Access,
    node: &str,
    vmid: u32,
    job: &ResizeJob,
) -> Result<(String, bool, u64)> {
    let vm = guests.vm(node, vmid)?;
    if job.digest.as_deref().is_some_and(|d| d != vm.digest()) {
        return Err(Error::conflict(
            "checksum mismatch (file change by other user?)",
        ));
    }
    if !job.skiplock {
        vm.check_lock()?;
    }
    let Some(value) = vm.config.get(&job.disk) else {
        return Err(Error::not_found(format!(
            "disk '{}' does not exist",
            job.disk
        )));
    };
    let volid = drive_file(value).to_string();
    if volid.is_empty() {
        return Err(Error::failed(format!(
            "disk '{}' has no associated volume",
            job.disk
        )));
    }
    if drive_is_cdrom(value) {
        return Err(Error::failed("you can't resize a cdrom"));
    }
    let Some((sid, _)) = parse_volid(&volid) else {
        return Err(Error::failed(format!(
            "unable to parse volume ID '{volid}'"
        )));
    };
    let path = format!("/storage/{sid}");
    if !access.has_priv(&job.who, &path, "Datastore.AllocateSpace") {
        return Err(Error::permission(&path, &["Datastore.AllocateSpace"]));
    }
    let Some(size) = storage.volume(&volid, node).map(|v| v.size) else {
        return Err(Error::failed(format!(
            "Could not determine current size of volume '{volid}'"
        )));
    };
    Ok((volid, vm.running(), size))
}

#[cfg(test)]
mod tests {
    use super::parse_resize;

    #[test]
    fn sizes() {
        assert_eq!(
            parse_resize("+2G"),
            Some((true, 2.0 * f64::from(1u32 << 30)))
        );
        assert_eq!(parse_resize("10"), Some((false, 10.0)));
        assert_eq!(parse_resize("1.5M"), Some((false, 1.5 * 1048576.0)));
        assert_eq!(parse_resize("1T"), Some((false, 1099511627776.0)));
        assert_eq!(parse_resize("G"), None);
        assert_eq!(parse_resize("1.G"), None);
    }
}
