//! The formats of pve-common's `JSONSchema.pm` and `CalendarEvent.pm`,
//! pve-access-control and pve-manager that are checked by code: IDs,
//! user names, privileges, time zones, startup order, PEM, command
//! batches and calendar events.

use super::*;

pub(super) fn parse_id(v: &str, kind: &str) -> Check {
    if v.chars().count() < 2 {
        return Err(FormatError::Invalid(format!(
            "{kind} ID '{v}' cannot be shorter than 2 characters\n"
        )));
    }
    if !re(r"(?i:[a-z][a-z0-9\-\_\.]*[a-z0-9])").is_match(v) {
        return Err(FormatError::Invalid(format!(
            "{kind} ID '{v}' contains illegal characters\n"
        )));
    }
    Ok(())
}

pub(super) fn verify_userid(v: &str) -> Check {
    let len = v.chars().count();
    if len < 3 {
        return Err(FormatError::Invalid(format!(
            "user name '{v}' is too short\n"
        )));
    }
    if len > 64 {
        return Err(FormatError::Invalid(format!(
            "user name '{v}' is too long ({len} > 64)\n"
        )));
    }
    if re(r"[^\s:/]+@[A-Za-z][A-Za-z0-9\.\-_]+").is_match(v) {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!(
            "value '{v}' does not look like a valid user name\n"
        )))
    }
}

pub(super) fn parse_id_as(v: &str, format: &str) -> Check {
    match format {
        "pve-bridge-id" => {
            if re(r"[-_.\w\d]+").is_match(v) {
                Ok(())
            } else {
                Err(FormatError::Invalid(format!("invalid bridge ID '{v}'\n")))
            }
        }
        _ => parse_id(v, "storage"),
    }
}

/// `$verify_idpair`: one item of a `storage-pair-list` or
/// `bridge-pair-list`, checked by `parse_idmap`.
pub(super) fn verify_idpair(v: &str, format: &str) -> Check {
    let fail = |e: FormatError| {
        Err(FormatError::Invalid(format!(
            "entry '{v}' contains invalid ID - {e}\n\n"
        )))
    };
    for entry in split_list(v) {
        if entry == "1" {
            continue;
        }
        if let Some(c) = re(r"([^:]+):([^:]+)").captures(entry) {
            if let Err(e) = parse_id_as(&c[1], format).and_then(|()| parse_id_as(&c[2], format)) {
                return fail(e);
            }
        } else if let Err(e) = parse_id_as(entry, format) {
            return fail(e);
        }
    }
    Ok(())
}

pub(super) fn verify_timezone(v: &str) -> Check {
    if v == "UTC" || crate::sysdata::ZONES.contains(&v) {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!("invalid time zone '{v}'\n")))
    }
}

/// `pve_parse_startup_order`.
pub(super) fn verify_startup_order(v: &str) -> Check {
    let parsed = !v.is_empty()
        && v != "0"
        && v.split(',')
            .all(|p| p.trim().is_empty() || re(r"(order=)?\d+|up=\d+|down=\d+").is_match(p));
    ok(parsed, "unable to parse startup options\n")
}

pub(super) fn check_pem(v: &str, label: &'static str, multiple: bool) -> Check {
    // `strip_leading_text`: drop anything before the first header.
    let header = |l: &str| format!(r"-----BEGIN {l}-----(?:\s|\n)*");
    let any_header = Regex::new(&header(".*?")).expect("pem header");
    let content = any_header.find(v).map_or(v, |m| &v[m.start()..]);
    let b64 = r"[0-9A-Za-z\+/]";
    let one = format!(
        r"{}(?:(?:{b64})+\s*\n)*(?:{b64})*(?:=\s*\n=|={{0,2}})?\s*\n-----END {label}-----(?:\s|\n)*",
        header(label)
    );
    let full = if multiple {
        format!(r"(?s:^(?:{one}\n+)*{one}\n?$)")
    } else {
        format!(r"(?s:^{one}\n?$)")
    };
    let good = Regex::new(&full).is_ok_and(|r| r.is_match(content));
    ok(good, "not a valid PEM-formatted string.\n")
}

/// The privileges of PVE 9.1 and 8.4 (`$privgroups` plus
/// `Permissions.Modify`; 8.4 still had `VM.Monitor`, 9.x added the
/// `VM.GuestAgent.*` and `VM.Replicate` privileges).
pub const PRIVILEGES: &[&str] = &[
    "Datastore.Allocate",
    "Datastore.AllocateSpace",
    "Datastore.AllocateTemplate",
    "Datastore.Audit",
    "Group.Allocate",
    "Mapping.Audit",
    "Mapping.Modify",
    "Mapping.Use",
    "Permissions.Modify",
    "Pool.Allocate",
    "Pool.Audit",
    "Realm.Allocate",
    "Realm.AllocateUser",
    "SDN.Allocate",
    "SDN.Audit",
    "SDN.Use",
    "Sys.AccessNetwork",
    "Sys.Audit",
    "Sys.Console",
    "Sys.Incoming",
    "Sys.Modify",
    "Sys.PowerMgmt",
    "Sys.Syslog",
    "User.Modify",
    "VM.Allocate",
    "VM.Audit",
    "VM.Backup",
    "VM.Clone",
    "VM.Config.CDROM",
    "VM.Config.CPU",
    "VM.Config.Cloudinit",
    "VM.Config.Disk",
    "VM.Config.HWType",
    "VM.Config.Memory",
    "VM.Config.Network",
    "VM.Config.Options",
    "VM.Console",
    "VM.GuestAgent.Audit",
    "VM.GuestAgent.FileRead",
    "VM.GuestAgent.FileSystemMgmt",
    "VM.GuestAgent.FileWrite",
    "VM.GuestAgent.Unrestricted",
    "VM.Migrate",
    "VM.Monitor",
    "VM.PowerMgmt",
    "VM.Replicate",
    "VM.Snapshot",
    "VM.Snapshot.Rollback",
];

pub(super) fn verify_privname(v: &str) -> Check {
    if PRIVILEGES.contains(&v) {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!("invalid privilege '{v}'\n")))
    }
}

/// `verify_command_batch`: a JSON array of `{path, method, args}`.
/// Approximate: PVE's message quotes JSON::XS's parser error and the
/// schema errors, which fake-pve words as serde_json and plainly.
pub(super) fn verify_command_batch(v: &str) -> Check {
    let parsed: serde_json::Value = serde_json::from_str(v).map_err(|e| {
        FormatError::Invalid(format!("commands param did not contain valid JSON: {e}\n"))
    })?;
    let invalid = |why: &str| {
        Err(FormatError::Invalid(format!(
            "commands is not a valid array of commands: {why}\n"
        )))
    };
    let Some(items) = parsed.as_array() else {
        return invalid("type check ('array') failed");
    };
    for item in items {
        let Some(obj) = item.as_object() else {
            return invalid("type check ('object') failed");
        };
        if !obj.get("path").is_some_and(serde_json::Value::is_string) {
            return invalid("path: property is missing and it is not optional");
        }
        let method = obj.get("method").and_then(serde_json::Value::as_str);
        if !method.is_some_and(|m| re("(GET|POST|PUT|DELETE)").is_match(m)) {
            return invalid("method: value does not match the regex pattern");
        }
        if obj.get("args").is_some_and(|a| !a.is_object()) {
            return invalid("args: type check ('object') failed");
        }
    }
    Ok(())
}

/// The calendar-event grammar of proxmox-time (systemd-like:
/// `[weekdays] [[year-]month-day] [[hour:]minute[:second]] [UTC]` or a
/// shorthand like `daily`). Approximate: the grammar is followed, but
/// the nom error after ` - ` is reduced to `unable to parse calendar
/// event`.
pub(super) fn verify_calendar_event(v: &str) -> Check {
    let text = v.trim();
    if text.is_empty() {
        return Err(FormatError::Invalid(format!(
            "invalid calendar event '{v}' - unable to parse calendar event - event is empty\n\n"
        )));
    }
    if calendar_ok(text) {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!(
            "invalid calendar event '{v}' - unable to parse calendar event\n"
        )))
    }
}

pub(super) fn calendar_ok(text: &str) -> bool {
    let text = text
        .strip_suffix("UTC")
        .map_or(text, |t| t.trim_end_matches(' '));
    if matches!(
        text,
        "minutely"
            | "hourly"
            | "daily"
            | "weekly"
            | "monthly"
            | "yearly"
            | "annually"
            | "quarterly"
            | "semiannually"
            | "semi-annually"
    ) {
        return true;
    }
    let day = r"(?:mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?";
    let comp = r"(?:\d+(?:\.\.\d+)?(?:/\d+)?)";
    let list = format!(r"(?:\*(?:/\d+)?|{comp}(?:,{comp})*)");
    let full = format!(
        r"^(?:(?:{day}(?:\.\.{day})?)(?:,{day}(?:\.\.{day})?)* *)?(?:(?:{list}-)?{list}-{list} *)?(?:(?:{list}:)?{list}(?::{list})?)?$"
    );
    let Ok(r) = Regex::new(&full) else {
        return false;
    };
    if text.is_empty() || !r.is_match(text) {
        return false;
    }
    // every number within its field's bounds is beyond this grammar check;
    // ranges must go upwards.
    let range = re(r"(\d+)\.\.(\d+)");
    range
        .captures_iter(text)
        .all(|c| c[1].parse::<u64>().unwrap_or(u64::MAX) <= c[2].parse::<u64>().unwrap_or(0))
}
