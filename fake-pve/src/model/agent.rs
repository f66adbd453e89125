//! The QEMU guest agent inside each VM (qemu-server `QemuServer/Agent.pm`,
//! `API2/Qemu/Agent.pm`; qemu `qga/qapi-schema.json`).
//!
//! Each VM has a [`Guest`]: what its agent reports (OS, host name, time
//! zone, users, interfaces, file systems) with defaults generated from the
//! VM config, a few files, and the state of `exec` and `fsfreeze`. The
//! agent answers once the VM has run for [`Guest::boot_delay_ms`] of
//! emulated time and is down while the VM is stopped or paused.

use std::collections::BTreeMap;

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::cluster::Vm;
use super::guests::Guests;
use super::size::parse_size;
use super::{Error, Result};

/// How long the agent takes to answer after the VM starts, by default.
pub const DEFAULT_BOOT_DELAY_MS: u64 = 5_000;
/// The qemu-ga version `info` reports.
pub const QGA_VERSION: &str = "7.2.11";
/// `file-read` stops after this many bytes (`$MAX_READ_SIZE`).
pub const MAX_READ_SIZE: usize = 16 * 1024 * 1024;

/// What a guest's agent reports; every field left out is generated from
/// the VM config. Scenario files (`guests:`) and `/_fake/guests/{vmid}`
/// set it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guest {
    /// Milliseconds after the start until the agent answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_delay_ms: Option<u64>,
    /// `get-osinfo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osinfo: Option<Value>,
    /// `get-host-name`'s `host-name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// `get-timezone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<Value>,
    /// `get-users`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<Value>,
    /// `network-get-interfaces`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interfaces: Option<Value>,
    /// `get-fsinfo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsinfo: Option<Value>,
    /// Files, by path, as text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Passwords set through `set-user-password`, by user.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub passwords: BTreeMap<String, String>,
    /// Whether the file systems are frozen.
    #[serde(default)]
    pub frozen: bool,
    /// Finished `exec` processes, by pid.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub processes: BTreeMap<u32, Process>,
}

/// A process `exec` started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    /// Exit code.
    pub exitcode: i32,
    /// Captured standard output.
    pub out: String,
    /// Captured standard error.
    pub err: String,
}

/// A finished process as `exec-status` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecStatus {
    /// Exit code.
    pub exitcode: i32,
    /// Its standard output, decoded.
    pub out: String,
    /// Its standard error, decoded.
    pub err: String,
}

/// What `file-read` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChunk {
    /// The bytes, as text (`decode`) or base64.
    pub content: String,
    /// How many bytes.
    pub bytes_read: usize,
    /// Whether the file goes on after them.
    pub truncated: bool,
}

/// The commands `info` lists (qemu-ga 7.2 on Linux).
const QGA_COMMANDS: &[&str] = &[
    "guest-exec",
    "guest-exec-status",
    "guest-file-close",
    "guest-file-flush",
    "guest-file-open",
    "guest-file-read",
    "guest-file-seek",
    "guest-file-write",
    "guest-fsfreeze-freeze",
    "guest-fsfreeze-freeze-list",
    "guest-fsfreeze-status",
    "guest-fsfreeze-thaw",
    "guest-fstrim",
    "guest-get-devices",
    "guest-get-disks",
    "guest-get-fsinfo",
    "guest-get-host-name",
    "guest-get-memory-block-info",
    "guest-get-memory-blocks",
    "guest-get-osinfo",
    "guest-get-time",
    "guest-get-timezone",
    "guest-get-users",
    "guest-get-vcpus",
    "guest-info",
    "guest-network-get-interfaces",
    "guest-ping",
    "guest-set-memory-blocks",
    "guest-set-time",
    "guest-set-user-password",
    "guest-set-vcpus",
    "guest-shutdown",
    "guest-suspend-disk",
    "guest-suspend-hybrid",
    "guest-suspend-ram",
    "guest-sync",
    "guest-sync-delimited",
];

/// Commands qemu-ga still runs while the file systems are frozen.
const FROZEN_ALLOWED: &[&str] = &[
    "ping",
    "info",
    "fsfreeze-status",
    "fsfreeze-thaw",
    "get-time",
    "get-host-name",
    "get-osinfo",
    "get-timezone",
    "get-users",
    "get-vcpus",
    "get-fsinfo",
    "get-memory-blocks",
    "get-memory-block-info",
    "network-get-interfaces",
    "exec-status",
];

fn agent_error(desc: &str) -> Error {
    Error::failed(format!("Agent error: {desc}"))
}

/// Whether the `agent` option enables the agent (`1`, `enabled=1,...`).
pub(crate) fn agent_enabled(value: &str) -> bool {
    value.split(',').any(|p| {
        let v = p.strip_prefix("enabled=").unwrap_or(p);
        (!p.contains('=') || p.starts_with("enabled="))
            && crate::spec::propstring::parse_boolean(v) == Some(true)
    })
}

/// `52:54:...` style MAC of a `netN` value, lower case.
fn net_mac(value: &str) -> Option<String> {
    value.split(',').find_map(|p| {
        let (_, v) = p.split_once('=')?;
        (v.len() == 17 && v.bytes().filter(|b| *b == b':').count() == 5)
            .then(|| v.to_ascii_lowercase())
    })
}

/// The EUI-64 link-local address of a MAC.
pub(crate) fn link_local(mac: &str) -> String {
    let b: Vec<u8> = mac
        .split(':')
        .filter_map(|x| u8::from_str_radix(x, 16).ok())
        .collect();
    if b.len() != 6 {
        return "fe80::1".into();
    }
    let w = |h: u8, l: u8| (u16::from(h) << 8) | u16::from(l);
    format!(
        "fe80::{:x}:{:x}:{:x}:{:x}",
        w(b[0] ^ 0x02, b[1]),
        w(b[2], 0xff),
        w(0xfe, b[3]),
        w(b[4], b[5])
    )
}

fn statistics(seed: u64) -> Value {
    json!({
        "rx-bytes": 1_048_576 + seed * 4096,
        "rx-packets": 2_048 + seed * 8,
        "rx-errs": 0,
        "rx-dropped": 0,
        "tx-bytes": 524_288 + seed * 2048,
        "tx-packets": 1_024 + seed * 4,
        "tx-errs": 0,
        "tx-dropped": 0,
    })
}

impl Guest {
    /// The effective boot delay.
    pub fn boot_delay(&self) -> u64 {
        self.boot_delay_ms.unwrap_or(DEFAULT_BOOT_DELAY_MS)
    }

    fn windows(vm: &Vm) -> bool {
        vm.config.get("ostype").is_some_and(|o| o.starts_with('w'))
    }

    /// `get-osinfo`.
    pub fn osinfo(&self, vm: &Vm) -> Value {
        if let Some(v) = &self.osinfo {
            return v.clone();
        }
        if Self::windows(vm) {
            json!({
                "id": "mswindows",
                "name": "Microsoft Windows",
                "pretty-name": "Windows Server 2022 Standard",
                "version": "Microsoft Windows Server 2022",
                "version-id": "2022",
                "variant": "server",
                "variant-id": "server",
                "kernel-release": "20348",
                "kernel-version": "10.0",
                "machine": "x86_64",
            })
        } else {
            json!({
                "id": "debian",
                "name": "Debian GNU/Linux",
                "pretty-name": "Debian GNU/Linux 12 (bookworm)",
                "version": "12 (bookworm)",
                "version-id": "12",
                "kernel-release": "6.1.0-28-amd64",
                "kernel-version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)",
                "machine": "x86_64",
            })
        }
    }

    /// `get-host-name`'s name: the VM name unless set.
    pub fn hostname(&self, vm: &Vm) -> String {
        self.hostname.clone().unwrap_or_else(|| {
            vm.config
                .get("name")
                .cloned()
                .unwrap_or_else(|| "localhost".into())
        })
    }

    /// `network-get-interfaces`: `lo`, then one interface per `netN`
    /// with its MAC, the address of `ipconfigN` (or a DHCP lease) and a
    /// link-local IPv6 address.
    pub fn interfaces(&self, vm: &Vm) -> Value {
        if let Some(v) = &self.interfaces {
            return v.clone();
        }
        let mut out = vec![json!({
            "name": "lo",
            "hardware-address": "00:00:00:00:00:00",
            "ip-addresses": [
                {"ip-address": "127.0.0.1", "ip-address-type": "ipv4", "prefix": 8},
                {"ip-address": "::1", "ip-address-type": "ipv6", "prefix": 128},
            ],
            "statistics": statistics(0),
        })];
        let windows = Self::windows(vm);
        let mut nets: Vec<(u32, &String)> = vm
            .config
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("net")?.parse::<u32>().ok()?, v)))
            .collect();
        nets.sort_by_key(|(n, _)| *n);
        for (n, value) in nets {
            let Some(mac) = net_mac(value) else { continue };
            let mut ips = Vec::new();
            let ipconfig = vm.config.get(&format!("ipconfig{n}"));
            let field = |key: &str| {
                ipconfig.and_then(|c| {
                    c.split(',')
                        .find_map(|p| p.strip_prefix(key).map(str::to_string))
                })
            };
            match field("ip=") {
                Some(ip) if ip.contains('/') => {
                    let (a, p) = ip.split_once('/').unwrap_or((&ip, "24"));
                    ips.push(json!({"ip-address": a, "ip-address-type": "ipv4",
                        "prefix": p.parse::<u32>().unwrap_or(24)}));
                }
                _ => {
                    let host = vm.vmid % 250 + 2;
                    ips.push(json!({"ip-address": format!("10.0.{n}.{host}"),
                        "ip-address-type": "ipv4", "prefix": 24}));
                }
            }
            if let Some(ip6) = field("ip6=").filter(|i| i.contains('/')) {
                let (a, p) = ip6.split_once('/').unwrap_or((&ip6, "64"));
                ips.push(json!({"ip-address": a, "ip-address-type": "ipv6",
                    "prefix": p.parse::<u32>().unwrap_or(64)}));
            }
            ips.push(
                json!({"ip-address": link_local(&mac), "ip-address-type": "ipv6",
                "prefix": 64}),
            );
            let name = if windows {
                if n == 0 {
                    "Ethernet".to_string()
                } else {
                    format!("Ethernet {}", n + 1)
                }
            } else {
                format!("ens{}", 18 + n)
            };
            out.push(json!({
                "name": name,
                "hardware-address": mac,
                "ip-addresses": ips,
                "statistics": statistics(u64::from(n) + 1),
            }));
        }
        Value::Array(out)
    }

    /// `get-fsinfo`: one root file system on the first disk.
    pub fn fsinfo(&self, vm: &Vm) -> Value {
        if let Some(v) = &self.fsinfo {
            return v.clone();
        }
        let disk = ["scsi", "virtio", "sata", "ide"].iter().find_map(|bus| {
            (0..31).find_map(|i| {
                let v = vm.config.get(&format!("{bus}{i}"))?;
                if v.contains("media=cdrom") || v.starts_with("none") {
                    return None;
                }
                let size = v
                    .split(',')
                    .find_map(|p| p.strip_prefix("size="))
                    .and_then(parse_size)
                    .unwrap_or(8 << 30);
                Some((*bus, i, size))
            })
        });
        let Some((bus, unit, size)) = disk else {
            return json!([]);
        };
        let windows = Self::windows(vm);
        let (dev, bus_type) = match bus {
            "virtio" => ("vda1", "virtio"),
            "ide" => ("sda1", "ide"),
            "sata" => ("sda1", "sata"),
            _ => ("sda1", "scsi"),
        };
        let total = size.saturating_sub(size / 50);
        json!([{
            "name": if windows { "\\\\?\\Volume{5d1b2f43-0000-0000-0000-100000000000}\\" } else { dev },
            "mountpoint": if windows { "C:\\" } else { "/" },
            "type": if windows { "NTFS" } else { "ext4" },
            "used-bytes": total / 5,
            "total-bytes": total,
            "disk": [{
                "pci-controller": {"domain": 0, "bus": 0, "slot": 5, "function": 0},
                "bus-type": bus_type,
                "bus": 0,
                "target": 0,
                "unit": unit,
                "dev": format!("/dev/{}", dev.trim_end_matches('1')),
                "serial": format!("drive-{bus}{unit}"),
            }],
        }])
    }
}

/// A tiny shell for `exec`: `echo`, `cat`, `hostname`, `true`, `false`,
/// `sh -c`; anything else is not found (exit 127).
fn run(guest: &Guest, vm: &Vm, argv: &[String], input: &str) -> Process {
    let Some((prog, args)) = argv.split_first() else {
        return Process {
            out: input.to_string(),
            ..Process::default()
        };
    };
    let name = prog.rsplit('/').next().unwrap_or(prog);
    match name {
        "echo" => Process {
            out: format!("{}\n", args.join(" ")),
            ..Process::default()
        },
        "true" => Process::default(),
        "false" => Process {
            exitcode: 1,
            ..Process::default()
        },
        "hostname" => Process {
            out: format!("{}\n", guest.hostname(vm)),
            ..Process::default()
        },
        "cat" if args.is_empty() => Process {
            out: input.to_string(),
            ..Process::default()
        },
        "cat" => {
            let mut p = Process::default();
            for f in args {
                if f == "-" {
                    p.out.push_str(input);
                    continue;
                }
                match guest.files.get(f) {
                    Some(c) => p.out.push_str(c),
                    None => {
                        p.err
                            .push_str(&format!("cat: {f}: No such file or directory\n"));
                        p.exitcode = 1;
                    }
                }
            }
            p
        }
        "sh" | "bash" if args.first().is_some_and(|a| a == "-c") => {
            let script = args.get(1).cloned().unwrap_or_default();
            let mut last = Process::default();
            let mut out = String::new();
            let mut err = String::new();
            for cmd in script.split([';', '\n']) {
                let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
                if words.is_empty() {
                    continue;
                }
                last = run(guest, vm, &words, input);
                if last.exitcode == 127 {
                    last.err = format!("{name}: 1: {}: not found\n", words[0]);
                }
                out.push_str(&last.out);
                err.push_str(&last.err);
            }
            Process {
                exitcode: last.exitcode,
                out,
                err,
            }
        }
        _ => Process {
            exitcode: 127,
            out: String::new(),
            err: format!("sh: 1: {prog}: not found\n"),
        },
    }
}

impl Guests {
    /// Forgets the guest model of `vmid` again if `f` left it as a fresh
    /// one that was not there before: reading a guest leaves no trace in
    /// the world (so that only writes change it, as the journal of
    /// `--data-dir` expects).
    pub fn leaving_no_trace<R>(&mut self, vmid: u32, f: impl FnOnce(&mut Self) -> R) -> R {
        let existed = self.agent(vmid).is_some();
        let r = f(self);
        if !existed && self.agent(vmid).is_some_and(|g| *g == Guest::default()) {
            self.forget_agent(vmid);
        }
        r
    }

    /// PVE's three checks, in order: an `agent` option, a running VM, and
    /// an agent that answers `guest-ping` (booted, not paused).
    ///
    /// # Errors
    /// The VM's config missing; `No QEMU guest agent configured`, `VM N is
    /// not running`, `QEMU guest agent is not running`.
    pub fn agent_available(&self, node: &str, vmid: u32, now_ms: i64) -> Result<()> {
        let vm = self.vm(node, vmid)?;
        let Some(agent) = vm.config.get("agent") else {
            return Err(Error::failed("No QEMU guest agent configured"));
        };
        if !vm.running() {
            return Err(Error::conflict(format!("VM {vmid} is not running")));
        }
        let delay = self
            .agent(vmid)
            .map_or(DEFAULT_BOOT_DELAY_MS, Guest::boot_delay);
        let booted = vm
            .started_ms
            .is_none_or(|t| now_ms >= t.saturating_add(i64::try_from(delay).unwrap_or(i64::MAX)));
        if !agent_enabled(agent) || vm.paused() || !booted {
            return Err(Error::conflict("QEMU guest agent is not running"));
        }
        Ok(())
    }

    /// Runs an agent command after the checks; answers what qemu-ga
    /// returns (the caller wraps it in `result` where PVE does).
    ///
    /// # Errors
    /// The checks of [`Cluster::agent_available`]; `Agent error: ...`.
    fn agent_command_inner(
        &mut self,
        node: &str,
        vmid: u32,
        cmd: &str,
        args: &BTreeMap<String, Value>,
        now_ms: i64,
    ) -> Result<Value> {
        self.agent_available(node, vmid, now_ms)?;
        let vm = self.vm(node, vmid)?.clone();
        let guest = self.agent_mut(vmid);
        if guest.frozen && !FROZEN_ALLOWED.contains(&cmd) {
            return Err(agent_error(&format!(
                "Command guest-{cmd} has been disabled: the agent is in frozen state"
            )));
        }
        let arg = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default();
        Ok(match cmd {
            "ping" => json!({}),
            "info" => json!({
                "version": QGA_VERSION,
                "supported_commands": QGA_COMMANDS.iter().map(|c| json!({
                    "name": c,
                    "enabled": true,
                    "success-response": !matches!(*c, "guest-shutdown" | "guest-suspend-disk"
                        | "guest-suspend-ram" | "guest-suspend-hybrid"),
                })).collect::<Vec<_>>(),
            }),
            "get-time" => json!(now_ms.saturating_mul(1_000_000)),
            "get-osinfo" => guest.osinfo(&vm),
            "get-host-name" => json!({ "host-name": guest.hostname(&vm) }),
            "get-timezone" => guest
                .timezone
                .clone()
                .unwrap_or_else(|| json!({"zone": "UTC", "offset": 0})),
            "get-users" => guest.users.clone().unwrap_or_else(|| json!([])),
            "get-vcpus" => Value::Array(
                (0..vm.maxcpu())
                    .map(|i| json!({"logical-id": i, "online": true, "can-offline": i != 0}))
                    .collect(),
            ),
            "get-memory-blocks" => Value::Array(
                (0..vm.maxmem() / (128 << 20))
                    .map(|i| json!({"phys-index": i, "online": true, "can-offline": i != 0}))
                    .collect(),
            ),
            "get-memory-block-info" => json!({ "size": 134_217_728u64 }),
            "get-fsinfo" => guest.fsinfo(&vm),
            "network-get-interfaces" => guest.interfaces(&vm),
            "fsfreeze-status" => json!(if guest.frozen { "frozen" } else { "thawed" }),
            "fsfreeze-freeze" => {
                guest.frozen = true;
                json!(guest.fsinfo(&vm).as_array().map_or(0, Vec::len))
            }
            "fsfreeze-thaw" => {
                let n = if guest.frozen {
                    guest.fsinfo(&vm).as_array().map_or(0, Vec::len)
                } else {
                    0
                };
                guest.frozen = false;
                json!(n)
            }
            "fstrim" => {
                let paths: Vec<Value> = guest
                    .fsinfo(&vm)
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|f| json!({"path": f["mountpoint"], "trimmed": 0, "minimum": 0}))
                    .collect();
                json!({ "paths": paths })
            }
            "set-user-password" => {
                let user = arg("username").to_string();
                let listed = guest
                    .users
                    .as_ref()
                    .and_then(Value::as_array)
                    .is_some_and(|l| l.iter().any(|u| u["user"].as_str() == Some(user.as_str())));
                let builtin = if Guest::windows(&vm) {
                    "Administrator"
                } else {
                    "root"
                };
                if user != builtin && !listed && !guest.passwords.contains_key(&user) {
                    return Err(agent_error("child process has failed to set user password"));
                }
                guest.passwords.insert(user, arg("password").to_string());
                json!({})
            }
            "shutdown" | "suspend-disk" => {
                // A `qmstop` with skiplock, as the agent's own
                // shutdown ends the process.
                if let Some(vm) = self.get_mut(&vmid)
                    && !vm.flock.held()
                {
                    crate::model::qemu::power_off(vm);
                }
                Value::Null
            }
            "suspend-ram" | "suspend-hybrid" => {
                // A `qmsuspend` without `todisk`: the guest pauses.
                if let Some(vm) = self.get_mut(&vmid)
                    && !vm.flock.held()
                    && vm.running()
                {
                    vm.qmpstatus = Some(crate::model::qemu::QmpStatus::Paused);
                }
                Value::Null
            }
            other => {
                return Err(agent_error(&format!(
                    "The command guest-{other} has not been found"
                )));
            }
        })
    }

    /// `exec`: runs the command in the guest's tiny shell and answers
    /// its pid.
    ///
    /// # Errors
    /// `command or input-data (or both) required`; the agent checks.
    pub fn agent_exec(
        &mut self,
        node: &str,
        vmid: u32,
        command: &[String],
        input: Option<&str>,
        now_ms: i64,
    ) -> Result<u32> {
        if command.is_empty() && input.is_none() {
            return Err(Error::failed("command or input-data (or both) required"));
        }
        self.agent_available(node, vmid, now_ms)?;
        let vm = self.vm(node, vmid)?.clone();
        let guest = self.agent_mut(vmid);
        if guest.frozen {
            return Err(agent_error(
                "Command guest-exec has been disabled: the agent is in frozen state",
            ));
        }
        let p = run(guest, &vm, command, input.unwrap_or_default());
        let pid = 1000 + u32::try_from(guest.processes.len()).unwrap_or(0) * 7 + vmid % 7;
        guest.processes.insert(pid, p);
        Ok(pid)
    }

    /// A guest agent command (see the inner function); reads leave no
    /// trace.
    ///
    /// # Errors
    /// The agent checks and the command's refusals.
    pub fn agent_command(
        &mut self,
        node: &str,
        vmid: u32,
        cmd: &str,
        args: &BTreeMap<String, Value>,
        now_ms: i64,
    ) -> Result<Value> {
        self.leaving_no_trace(vmid, |c| {
            c.agent_command_inner(node, vmid, cmd, args, now_ms)
        })
    }

    /// `exec-status`; leaves no trace.
    ///
    /// # Errors
    /// `Agent error: Invalid parameter 'pid'`; the agent checks.
    pub fn agent_exec_status(
        &mut self,
        node: &str,
        vmid: u32,
        pid: u32,
        now_ms: i64,
    ) -> Result<ExecStatus> {
        self.leaving_no_trace(vmid, |c| c.agent_exec_status_inner(node, vmid, pid, now_ms))
    }

    /// `file-read`; leaves no trace.
    ///
    /// # Errors
    /// `Agent error: failed to open file ...`; the agent checks.
    #[allow(clippy::too_many_arguments)]
    pub fn agent_file_read(
        &mut self,
        node: &str,
        vmid: u32,
        file: &str,
        count: Option<usize>,
        offset: usize,
        decode: bool,
        now_ms: i64,
    ) -> Result<FileChunk> {
        self.leaving_no_trace(vmid, |c| {
            c.agent_file_read_inner(node, vmid, file, count, offset, decode, now_ms)
        })
    }

    /// `exec-status`: the process, its data decoded.
    ///
    /// # Errors
    /// `Agent error: Invalid parameter 'pid'`; the agent checks.
    fn agent_exec_status_inner(
        &mut self,
        node: &str,
        vmid: u32,
        pid: u32,
        now_ms: i64,
    ) -> Result<ExecStatus> {
        self.agent_available(node, vmid, now_ms)?;
        let Some(p) = self.agent_mut(vmid).processes.get(&pid) else {
            return Err(agent_error("Invalid parameter 'pid'"));
        };
        Ok(ExecStatus {
            exitcode: p.exitcode,
            out: p.out.clone(),
            err: p.err.clone(),
        })
    }

    /// `file-read`: up to `count` bytes from `offset`.
    ///
    /// # Errors
    /// `Agent error: failed to open file ...`; the agent checks.
    #[allow(clippy::too_many_arguments)]
    fn agent_file_read_inner(
        &mut self,
        node: &str,
        vmid: u32,
        file: &str,
        count: Option<usize>,
        offset: usize,
        decode: bool,
        now_ms: i64,
    ) -> Result<FileChunk> {
        self.agent_available(node, vmid, now_ms)?;
        let guest = self.agent_mut(vmid);
        if guest.frozen {
            return Err(agent_error(
                "Command guest-file-open has been disabled: the agent is in frozen state",
            ));
        }
        let Some(content) = guest.files.get(file) else {
            return Err(agent_error(&format!(
                "failed to open file '{file}' (mode: 'r'): No such file or directory"
            )));
        };
        let bytes = content.as_bytes();
        let limit = count.unwrap_or(MAX_READ_SIZE);
        let start = offset.min(bytes.len());
        let end = start.saturating_add(limit).min(bytes.len());
        let chunk = &bytes[start..end];
        let eof = end >= bytes.len();
        let content = if decode {
            String::from_utf8_lossy(chunk).into_owned()
        } else {
            base64::engine::general_purpose::STANDARD.encode(chunk)
        };
        Ok(FileChunk {
            content,
            bytes_read: chunk.len(),
            truncated: !eof,
        })
    }

    /// `file-write`: `content` (base64 already when `encode=0`).
    ///
    /// # Errors
    /// `Agent error: ...` for content that is not base64; the checks.
    pub fn agent_file_write(
        &mut self,
        node: &str,
        vmid: u32,
        file: &str,
        content: &str,
        encode: bool,
        now_ms: i64,
    ) -> Result<()> {
        self.agent_available(node, vmid, now_ms)?;
        let guest = self.agent_mut(vmid);
        if guest.frozen {
            return Err(agent_error(
                "Command guest-file-open has been disabled: the agent is in frozen state",
            ));
        }
        let text = if encode {
            content.to_string()
        } else {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(content.trim())
                .map_err(|_| {
                    agent_error("Guest agent command failed, error was 'base64 decode failed'")
                })?;
            String::from_utf8_lossy(&bytes).into_owned()
        };
        guest.files.insert(file.to_string(), text);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_local_addresses_follow_eui64() {
        assert_eq!(link_local("bc:24:11:aa:bb:cc"), "fe80::be24:11ff:feaa:bbcc");
    }

    #[test]
    fn agent_option() {
        assert!(agent_enabled("1"));
        assert!(agent_enabled("enabled=1,fstrim_cloned_disks=1"));
        assert!(agent_enabled("1,type=virtio"));
        assert!(!agent_enabled("0"));
        assert!(!agent_enabled("enabled=0"));
    }
}
