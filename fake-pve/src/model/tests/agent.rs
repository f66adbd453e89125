//! The guest agent: when it answers, what it reports, exec, files and
//! the frozen state.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};
use serde_json::{Value, json};

use super::{LAB, World, refused};
use crate::model::agent::{DEFAULT_BOOT_DELAY_MS, ExecStatus};
use crate::model::qemu::QemuOp;

/// The lab, an hour after the seeded VMs started: 101 runs with the agent.
#[fixture]
fn up() -> World {
    World::from_yaml(LAB)
}

fn cmd(w: &mut World, vmid: u32, c: &str) -> Result<Value, crate::model::Error> {
    let now = w.now_ms;
    w.c.guests
        .agent_command("pve", vmid, c, &BTreeMap::new(), now)
}

#[rstest]
#[case(100, "No QEMU guest agent configured")]
#[case(
    555,
    "Configuration file 'nodes/pve/qemu-server/555.conf' does not exist"
)]
fn the_agent_needs_a_configured_vm(mut up: World, #[case] vmid: u32, #[case] msg: &str) {
    assert_eq!(refused(cmd(&mut up, vmid, "ping")), (500, msg.to_string()));
}

#[rstest]
fn a_stopped_vm_is_named(mut up: World) {
    up.qm("qmstop", 101, QemuOp::Stop { skiplock: false });
    assert_eq!(
        refused(cmd(&mut up, 101, "ping")),
        (500, "VM 101 is not running".into())
    );
}

#[rstest]
#[case("agent: 0")]
#[case("paused")]
#[case("booting")]
fn when_the_agent_is_not_running(mut up: World, #[case] why: &str) {
    match why {
        "agent: 0" => {
            up.c.guests
                .get_mut(&101)
                .expect("vm")
                .config
                .insert("agent".into(), "0".into());
        }
        "paused" => {
            up.qm(
                "qmpause",
                101,
                QemuOp::Suspend {
                    skiplock: false,
                    todisk: None,
                },
            );
        }
        _ => {
            up.qm("qmstop", 101, QemuOp::Stop { skiplock: false });
            up.qm("qmstart", 101, QemuOp::Start { skiplock: false });
        }
    }
    assert_eq!(
        refused(cmd(&mut up, 101, "ping")),
        (500, "QEMU guest agent is not running".into())
    );
}

#[rstest]
fn the_agent_answers_once_the_guest_has_booted(mut up: World) {
    up.qm("qmstop", 101, QemuOp::Stop { skiplock: false });
    up.qm("qmstart", 101, QemuOp::Start { skiplock: false });
    let delay = i64::try_from(DEFAULT_BOOT_DELAY_MS).expect("small");
    up.now_ms += delay - 1;
    assert!(cmd(&mut up, 101, "ping").is_err());
    up.now_ms += 1;
    assert_eq!(cmd(&mut up, 101, "ping").expect("pong"), json!({}));
}

#[rstest]
fn a_guest_may_boot_faster(mut up: World) {
    up.c.guests.agent_mut(101).boot_delay_ms = Some(0);
    up.qm("qmstop", 101, QemuOp::Stop { skiplock: false });
    up.qm("qmstart", 101, QemuOp::Start { skiplock: false });
    assert!(cmd(&mut up, 101, "ping").is_ok());
}

#[rstest]
fn hostname_osinfo_and_vcpus_follow_the_config(mut up: World) {
    assert_eq!(
        cmd(&mut up, 101, "get-host-name").expect("ok"),
        json!({"host-name": "db"})
    );
    assert_eq!(
        cmd(&mut up, 101, "get-osinfo").expect("ok")["id"],
        json!("debian")
    );
    assert_eq!(
        cmd(&mut up, 101, "get-vcpus")
            .expect("ok")
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let blocks = cmd(&mut up, 101, "get-memory-blocks").expect("ok");
    assert_eq!(blocks.as_array().map(Vec::len), Some(4096 / 128));
    assert_eq!(
        cmd(&mut up, 101, "get-time").expect("ok"),
        json!(up.now_ms * 1_000_000),
        "nanoseconds"
    );
}

#[rstest]
fn interfaces_carry_the_nic_macs(mut up: World) {
    let ifs = cmd(&mut up, 101, "network-get-interfaces").expect("ok");
    let list = ifs.as_array().expect("list");
    assert_eq!(list[0]["name"], json!("lo"));
    assert_eq!(list[1]["hardware-address"], json!("bc:24:11:00:01:01"));
    let ips = list[1]["ip-addresses"].as_array().expect("ips");
    assert!(
        ips.iter()
            .any(|i| i["ip-address"] == "fe80::be24:11ff:fe00:101"),
        "{ips:?}"
    );
}

#[rstest]
fn an_unknown_command(mut up: World) {
    assert_eq!(
        refused(cmd(&mut up, 101, "teleport")),
        (
            500,
            "Agent error: The command guest-teleport has not been found".into()
        )
    );
}

#[rstest]
fn freezing_disables_writes_until_thawed(mut up: World) {
    assert_eq!(
        cmd(&mut up, 101, "fsfreeze-status").expect("ok"),
        json!("thawed")
    );
    let n = cmd(&mut up, 101, "fsfreeze-freeze").expect("ok");
    assert!(n.as_u64().is_some_and(|n| n > 0), "{n}");
    assert_eq!(
        cmd(&mut up, 101, "fsfreeze-status").expect("ok"),
        json!("frozen")
    );
    assert_eq!(
        refused(cmd(&mut up, 101, "fstrim")),
        (
            500,
            "Agent error: Command guest-fstrim has been disabled: the agent is in frozen state"
                .into()
        )
    );
    let now = up.now_ms;
    assert_eq!(
        refused(
            up.c.guests
                .agent_exec("pve", 101, &["true".to_string()], None, now)
        ),
        (
            500,
            "Agent error: Command guest-exec has been disabled: the agent is in frozen state"
                .into()
        )
    );
    assert_eq!(cmd(&mut up, 101, "fsfreeze-thaw").expect("ok"), n);
    assert_eq!(
        cmd(&mut up, 101, "fsfreeze-thaw").expect("ok"),
        json!(0),
        "nothing left to thaw"
    );
}

#[rstest]
fn exec_and_its_status(mut up: World) {
    let now = up.now_ms;
    let argv = |s: &[&str]| s.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
    let pid =
        up.c.guests
            .agent_exec("pve", 101, &argv(&["echo", "hi", "there"]), None, now)
            .expect("ok");
    assert_eq!(
        up.c.guests
            .agent_exec_status("pve", 101, pid, now)
            .expect("ok"),
        ExecStatus {
            exitcode: 0,
            out: "hi there\n".into(),
            err: String::new()
        }
    );
    let pid =
        up.c.guests
            .agent_exec("pve", 101, &argv(&["false"]), None, now)
            .expect("ok");
    assert_eq!(
        up.c.guests
            .agent_exec_status("pve", 101, pid, now)
            .expect("ok")
            .exitcode,
        1
    );
    assert_eq!(
        refused(up.c.guests.agent_exec_status("pve", 101, 4242, now)),
        (500, "Agent error: Invalid parameter 'pid'".into())
    );
    assert_eq!(
        refused(up.c.guests.agent_exec("pve", 101, &[], None, now)),
        (500, "command or input-data (or both) required".into())
    );
}

#[rstest]
fn files_written_can_be_read_back(mut up: World) {
    let now = up.now_ms;
    up.c.guests
        .agent_file_write("pve", 101, "/etc/motd", "aGVsbG8gd29ybGQ=", false, now)
        .expect("written");
    let r =
        up.c.guests
            .agent_file_read("pve", 101, "/etc/motd", None, 0, true, now)
            .expect("read");
    assert_eq!(
        (r.content.as_str(), r.bytes_read, r.truncated),
        ("hello world", 11, false)
    );
    let part =
        up.c.guests
            .agent_file_read("pve", 101, "/etc/motd", Some(5), 0, true, now)
            .expect("read");
    assert_eq!(
        (part.content.as_str(), part.bytes_read, part.truncated),
        ("hello", 5, true)
    );
    let b64 =
        up.c.guests
            .agent_file_read("pve", 101, "/etc/motd", None, 6, false, now)
            .expect("read");
    assert_eq!(b64.content, "d29ybGQ=");
}

#[rstest]
fn reading_a_missing_file(mut up: World) {
    let now = up.now_ms;
    assert_eq!(
        refused(
            up.c.guests
                .agent_file_read("pve", 101, "/nope", None, 0, true, now)
        ),
        (
            500,
            "Agent error: failed to open file '/nope' (mode: 'r'): No such file or directory"
                .into()
        )
    );
    assert!(
        up.c.guests.agent(101).is_none(),
        "a refused read leaves no guest state"
    );
}

#[rstest]
fn a_bad_base64_write(mut up: World) {
    let now = up.now_ms;
    assert_eq!(
        refused(
            up.c.guests
                .agent_file_write("pve", 101, "/f", "%%%", false, now)
        ),
        (
            500,
            "Agent error: Guest agent command failed, error was 'base64 decode failed'".into()
        )
    );
}

#[rstest]
fn set_user_password_knows_root_and_listed_users(mut up: World) {
    let now = up.now_ms;
    let args = |u: &str| -> BTreeMap<String, Value> {
        [
            ("username".to_string(), json!(u)),
            ("password".to_string(), json!("pw")),
        ]
        .into()
    };
    assert!(
        up.c.guests
            .agent_command("pve", 101, "set-user-password", &args("root"), now)
            .is_ok()
    );
    assert_eq!(
        refused(
            up.c.guests
                .agent_command("pve", 101, "set-user-password", &args("ghost"), now)
        ),
        (
            500,
            "Agent error: child process has failed to set user password".into()
        )
    );
}

#[rstest]
fn guest_shutdown_stops_the_vm(mut up: World) {
    assert_eq!(cmd(&mut up, 101, "shutdown").expect("ok"), Value::Null);
    assert!(!up.c.guests[&101].running());
}

#[rstest]
fn suspend_ram_pauses_the_vm(mut up: World) {
    cmd(&mut up, 101, "suspend-ram").expect("ok");
    assert!(up.c.guests[&101].paused());
}
