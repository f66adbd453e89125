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
