//! pve-storage's formats: portals, content types, volume IDs and
//! directory overrides (`Storage/Plugin.pm`).

use super::*;

/// `PVE::Tools::parse_host_and_port`.
pub(super) fn is_host_and_port(v: &str) -> bool {
    if re(r"[[:alnum:]\-.]+(?::\d+)?").is_match(v) {
        return true;
    }
    if let Some(c) = re(r"\[(.*)\](?::\d+)?").captures(v) {
        let inner = &c[1];
        return is_ip(inner) || re(r"[[:alnum:]\-.]+").is_match(inner);
    }
    if v.parse::<Ipv6Addr>().is_ok() {
        return true;
    }
    v.rsplit_once('.').is_some_and(|(a, p)| {
        !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()) && a.parse::<Ipv6Addr>().is_ok()
    })
}

pub(super) const CONTENT_TYPES: &[&str] = &[
    "images", "rootdir", "vztmpl", "iso", "backup", "snippets", "none", "import",
];

pub(super) fn verify_content(v: &str) -> Check {
    if CONTENT_TYPES.contains(&v) {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!(
            "invalid content type '{v}'\n"
        )))
    }
}

pub(super) fn verify_volume_id(v: &str) -> Check {
    if re(r"(?is:[a-z][a-z0-9\-\_\.]*[a-z0-9]:.+)").is_match(v) {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!(
            "unable to parse volume ID '{v}'\n"
        )))
    }
}

pub(super) fn verify_volume_id_or_absolute_path(v: &str) -> Check {
    if v.starts_with('/') {
        Ok(())
    } else {
        verify_volume_id(v)
    }
}

/// pve-storage's ZFS `blocksize` (9.2): a positive number without
/// leading zeros, `k` or `m` (either case) multiplying it, that comes to
/// a power of two from 512 B to 16 MiB. Empty passes.
pub(super) fn verify_zfs_blocksize(v: &str) -> Check {
    if v.is_empty() {
        return Ok(());
    }
    let Some(c) = re(r"(?i:([1-9][0-9]*)([km])?)").captures(v) else {
        return Err(FormatError::Invalid(format!(
            "invalid ZFS blocksize format '{v}'. Use a positive number \
             (no leading zeros) with an optional 'k' or 'm' suffix.\n"
        )));
    };
    let unit: u128 = match c.get(2).map(|u| u.as_str().to_ascii_lowercase()) {
        Some(u) if u == "k" => 1024,
        Some(u) if u == "m" => 1024 * 1024,
        _ => 1,
    };
    // A number too long for any integer is far above 16 MiB.
    let bytes = c[1].parse::<u128>().ok().and_then(|n| n.checked_mul(unit));
    match bytes {
        Some(n) if (512..=16 * 1024 * 1024).contains(&n) && n.is_power_of_two() => Ok(()),
        _ => Err(FormatError::Invalid(format!(
            "value '{v}' is not a valid ZFS blocksize. Must be a power of 2 \
             between 512B and 16MiB (e.g., 4k, 8k, 16k, 64k, 1m).\n"
        ))),
    }
}

pub(super) fn verify_dir_override(v: &str) -> Check {
    if let Some(c) = re(r"([a-z]+)=([^.]*(?:\.?[^.]+)+)").captures(v) {
        verify_content(&c[1])?;
        let path = &c[2];
        if path.len() < 1023 && !path.split('/').any(|p| p.len() >= 255) {
            return Ok(());
        }
    }
    Err(FormatError::Invalid(format!("invalid override '{v}'\n")))
}
