//! `POST /nodes/{node}/qemu/{vmid}/monitor`: a command line for the VM's
//! QEMU monitor, with the permission its command needs (qemu-server
//! `API2/Qemu.pm` `monitor`, `API2/Qemu/HMPPerms.pm`).
//!
//! On 9.x the commands and what each needs are those the schema's
//! permission text names (the same on 9.1 and 9.2): nothing more for `help`, `?` and `info`,
//! `Sys.Modify` on `/` for the listed ones, root@pam for the root-only
//! ones and for any other. On 8.4 a command other than `info ...` and
//! `help` needs `Sys.Modify` on `/`.

use serde_json::json;

use crate::api::{Ctx, Reply};
use crate::model::{Error, PveVersion, Result};

/// What a command needs beyond the call's own permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Nothing,
    SysModify,
    Root,
}

/// The commands that need nothing more (9.x).
const NOTHING: &[&str] = &["?", "help", "info"];

/// The commands that need `Sys.Modify` on `/` (9.x).
const SYS_MODIFY: &[&str] = &[
    "announce_self",
    "backup_cancel",
    "balloon",
    "block_job_cancel",
    "block_job_complete",
    "block_job_pause",
    "block_job_resume",
    "block_job_set_speed",
    "block_resize",
    "block_set_io_throttle",
    "boot_set",
    "c",
    "calc_dirty_rate",
    "cancel_vcpu_dirty_limit",
    "chardev-send-break",
    "closefd",
    "commit",
    "cont",
    "cpu",
    "delvm",
    "eject",
    "exit_preconfig",
    "expire_password",
    "getfd",
    "gpa2hpa",
    "gpa2hva",
    "gva2gpa",
    "i",
    "loadvm",
    "log",
    "migrate_cancel",
    "migrate_continue",
    "migrate_pause",
    "migrate_set_capability",
    "migrate_set_parameter",
    "migrate_start_postcopy",
    "mouse_button",
    "mouse_move",
    "mouse_set",
    "one-insn-per-tb",
    "p",
    "print",
    "q",
    "qemu-io",
    "qom-get",
    "qom-
    list",
    "quit",
    "replay_break",
    "replay_delete_break",
    "replay_seek",
    "ringbuf_read",
    "ringbuf_write",
    "s",
    "savevm",
    "sendkey",
    "set_link",
    "set_password",
    "set_vcpu_dirty_limit",
    "snapshot_blkdev_internal",
    "snapshot_delete_blkdev_internal",
    "stop",
    "stopcapture",
    "sum",
    "sync-profile",
    "system_powerdown",
    "system_reset",
    "system_wakeup",
    "trace-event",
    "x",
    "x_colo_lost_heartbeat",
    "xp",
];

/// The root-only commands (9.x).
const ROOT_ONLY: &[&str] = &[
    "backup",
    "block_stream",
    "change",
    "chardev-add",
    "chardev-change",
    "chardev-remove",
    "client_migrate_info",
    "device_add",
    "device_del",
    "drive_add",
    "drive_backup",
    "drive_del",
    "drive_mirror",
    "dump-guest-memory",
    "dumpdtb",
    "gdbserver",
    "hostfwd_add",
    "hostfwd_remove",
    "logfile",
    "mce",
    "memsave",
    "migrate",
    "migrate_incoming",
    "migrate_recover",
    "nbd_server_add",
    "nbd_server_remove",
    "nbd_server_start",
    "nbd_server_stop",
    "netdev_add",
    "netdev_del",
    "nmi",
    "o",
    "object_add",
    "object_del",
    "pcie_aer_inject_error",
    "pmemsave",
    "qom-set",
    "savevm-end",
    "savevm-start",
    "screendump",
    "snapshot_blkdev",
    "watchdog_action",
    "wavcapture",
    "xen-event-inject",
    "xen-event-list ",
];

/// The commands 9.x names, with what each needs.
fn table() -> impl Iterator<Item = (&'static str, Need)> {
    let of = |list: &'static [&'static str], need| list.iter().map(move |c| (*c, need));
    of(NOTHING, Need::Nothing)
        .chain(of(SYS_MODIFY, Need::SysModify))
        .chain(of(ROOT_ONLY, Need::Root))
}

/// What `name` needs on `version`; `None` for a command the release does
/// not name.
fn need(version: PveVersion, name: &str, command: &str) -> Option<Need> {
    if version.is_v9() {
        return table().find(|(c, _)| *c == name).map(|(_, n)| n);
    }
    let read_only = name == "info" || command.trim() == "help";
    Some(if read_only {
        Need::Nothing
    } else {
        Need::SysModify
    })
}

/// Whether QEMU has a command of this name (the commands 9.x's schema
/// names, which QEMU's monitor offers on every release).
fn known(name: &str) -> bool {
    table().any(|(c, _)| c == name)
}

/// `POST .../monitor`: the command's output (`ERROR: ...` when the VM
/// does not run).
pub(super) fn monitor(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let command = ctx.params.str("command").unwrap_or_default();
    let who = ctx.who()?.clone();
    let root = who.to_string() == "root@pam";
    let version = ctx.with(|c| c.version());
    let name = command.split_whitespace().next().unwrap_or_default();
    // 8.4 checks only `Sys.Modify` for a command that is not `info` or
    // `help`; 9.x checks the command first.
    let need = if version.is_v9() {
        if command.is_empty() || command == "0" {
            return Err(Error::failed("no command specified"));
        }
        if name.is_empty() {
            return Err(Error::failed(format!("unexpected command '{command}'")));
        }
        match need(version, name, &command) {
            Some(n) => n,
            None if root => Need::Root,
            None => {
                return Err(Error::failed(format!(
                    "command '{name}' non-existent or not assigned a required permission yet, limiting to root user"
                )));
            }
        }
    } else {
        need(version, name, &command).unwrap_or(Need::SysModify)
    };
    match need {
        Need::Root if !root => {
            return Err(Error::failed(format!("root-only command '{name}'")));
        }
        Need::SysModify => ctx.with(|c| c.access().check_perm(&who, "/", &["Sys.Modify"]))?,
        _ => {}
    }
    let text = ctx.with(|c| {
        // The files of the VM's volumes, for `info block`.
        let paths: std::collections::BTreeMap<String, String> = c
            .guests
            .vm(&node, vmid)
            .map(|vm| {
                vm.config()
                    .values()
                    .filter_map(|v| {
                        let volid = v.split(',').next()?;
                        let (sid, name) = crate::model::storage::parse_volid(volid)?;
                        let s = c.storages().find(sid)?;
                        Some((
                            volid.to_string(),
                            crate::model::storage::content::volume_path(s, name),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        c.guests
            .monitor(&node, vmid, &command, version, known, &paths)
    })?;
    Ok(json!(text).into())
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::{Need, need};
    use crate::model::PveVersion;

    #[rstest]
    #[case(PveVersion::V9_1, "info", "info status", Some(Need::Nothing))]
    #[case(PveVersion::V9_1, "?", "?", Some(Need::Nothing))]
    #[case(PveVersion::V9_1, "stop", "stop", Some(Need::SysModify))]
    #[case(PveVersion::V9_1, "sendkey", "sendkey ret", Some(Need::SysModify))]
    #[case(PveVersion::V9_1, "device_add", "device_add e1000", Some(Need::Root))]
    #[case(PveVersion::V9_1, "frobnicate", "frobnicate", None)]
    #[case(PveVersion::V8_4, "info", "info cpus", Some(Need::Nothing))]
    #[case(PveVersion::V8_4, "help", " help ", Some(Need::Nothing))]
    #[case(PveVersion::V8_4, "help", "help info", Some(Need::SysModify))]
    #[case(
        PveVersion::V8_4,
        "device_add",
        "device_add e1000",
        Some(Need::SysModify)
    )]
    fn what_a_command_needs(
        #[case] version: PveVersion,
        #[case] name: &str,
        #[case] command: &str,
        #[case] want: Option<Need>,
    ) {
        assert_eq!(need(version, name, command), want);
    }
}
