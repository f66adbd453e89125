//! The formats of guests' options: qemu-server's (CPU sets, drives, boot
//! devices, hotplug, physical address bits), pve-container's (mount
//! point and device paths) and replication job IDs.

use super::*;

pub(super) fn verify_lxc_mp_string(v: &str) -> Check {
    let bad = v.contains("/./")
        || v.contains("/../")
        || v.ends_with("/.")
        || v.ends_with("/..")
        || v.starts_with("../");
    if bad {
        Err(FormatError::Invalid(format!(
            "{v} contains illegal character sequences\n"
        )))
    } else {
        Ok(())
    }
}

pub(super) fn verify_lxc_dev_string(v: &str) -> Check {
    if re(r"(?s:.*/\.\.?(?:/.*)?)").is_match(v) || !v.starts_with("/dev/") {
        Err(FormatError::Invalid(format!(
            "{v} is not a valid device path\n"
        )))
    } else {
        Ok(())
    }
}

/// `parse_replication_job_id`: only a guest ID below 100 dies; any other
/// text passes, as PVE's validator returns without dying.
pub(super) fn verify_replication_job_id(v: &str) -> Check {
    if let Some(c) = re(r"(\d+)-(\d+)").captures(v)
        && c[1].parse::<u128>().is_ok_and(|g| g < 100)
    {
        return Err(FormatError::Invalid(format!(
            "invalid replication job id '{v}' (guest IDs < 100 are reserved)\n"
        )));
    }
    Ok(())
}

/// `PVE::CpuSet::parse_cpuset`.
pub(super) fn verify_cpuset(v: &str) -> Check {
    let mut parts: Vec<&str> = v.split(',').collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    for part in parts {
        let Some(c) = re(r"\s*(\d+)(?:-(\d+))?\s*").captures(part) else {
            return Err(FormatError::Invalid(
                "unable to parse cpuset option\n".into(),
            ));
        };
        let from: u128 = c[1].parse().unwrap_or(u128::MAX);
        let to: u128 = c
            .get(2)
            .map_or(from, |t| t.as_str().parse().unwrap_or(u128::MAX));
        if to < from {
            return Err(FormatError::Invalid(
                "unable to parse cpuset option\n".into(),
            ));
        }
    }
    Ok(())
}

/// `is_valid_drivename`: ide0-3, scsi0-30, virtio0-15, sata0-5,
/// efidisk0, tpmstate0.
pub(super) fn is_valid_drivename(v: &str) -> bool {
    indexed(v, "ide", 4)
        || indexed(v, "scsi", 31)
        || indexed(v, "virtio", 16)
        || indexed(v, "sata", 6)
        || v == "efidisk0"
        || v == "tpmstate0"
}

pub(super) fn indexed(v: &str, base: &str, count: u32) -> bool {
    v.strip_prefix(base).is_some_and(|i| {
        !i.is_empty()
            && i.bytes().all(|c| c.is_ascii_digit())
            && !(i.len() > 1 && i.starts_with('0'))
            && i.parse::<u32>().is_ok_and(|n| n < count)
    })
}

pub(super) fn verify_bootdev(v: &str) -> Check {
    let special = v.starts_with("efidisk") || v.starts_with("tpmstate");
    if (is_valid_drivename(v) && !special)
        || indexed(v, "net", 32)
        || indexed(v, "usb", 14)
        || indexed(v, "hostpci", 16)
    {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!("invalid boot device '{v}'\n")))
    }
}

pub(super) fn verify_hotplug_features(v: &str) -> Check {
    if v == "0" {
        return Ok(());
    }
    let v = if v == "1" { "network,disk,usb" } else { v };
    ok(
        split_list(v).iter().all(|f| {
            matches!(
                *f,
                "network" | "disk" | "cpu" | "memory" | "usb" | "cloudinit"
            )
        }),
        "unable to parse hotplug option\n",
    )
}

pub(super) fn verify_phys_bits(v: &str) -> Check {
    let good = v == "host"
        || (re(r"\d{1,2}").is_match(v) && v.parse::<u32>().is_ok_and(|n| (8..=64).contains(&n)));
    ok(
        good,
        "value must be an integer between 8 and 64 or 'host'\n",
    )
}
