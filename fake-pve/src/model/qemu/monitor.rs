//! The QEMU monitor (HMP) of a running VM, as `POST .../monitor` hands a
//! command line to it (qemu-server `API2/Qemu.pm` `monitor`,
//! `QemuServer/Monitor.pm` `hmp_cmd`; QEMU's `hmp-commands.hx` and
//! `hmp-commands-info.hx`). QEMU writes every line ending as `\r\n`.
//!
//! Emulated: `info status`, `info version`, `info cpus`, `info balloon`,
//! `info block`, `info network`, `stop`, `cont`
//! (and `c`), `system_reset`, `sendkey`. A command QEMU does not know
//! answers QEMU's `unknown command`; a command QEMU knows that is not
//! emulated is refused as not emulated, never answered with a made-up
//! output.

use super::QmpStatus;
use super::schema::qemu_version;
use crate::model::guests::Guests;
use crate::model::node_hw::catalog;
use crate::model::{Error, PveVersion, Result};

/// QEMU's key names (`QKeyCode`) that `sendkey` takes, joined by `-`.
const KEYS: &[&str] = &[
    "unmapped",
    "shift",
    "shift_r",
    "alt",
    "alt_r",
    "ctrl",
    "ctrl_r",
    "menu",
    "esc",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "0",
    "minus",
    "equal",
    "backspace",
    "tab",
    "q",
    "w",
    "e",
    "r",
    "t",
    "y",
    "u",
    "i",
    "o",
    "p",
    "bracket_left",
    "bracket_right",
    "ret",
    "a",
    "s",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "semicolon",
    "apostrophe",
    "grave_accent",
    "backslash",
    "z",
    "x",
    "c",
    "v",
    "b",
    "n",
    "m",
    "comma",
    "dot",
    "slash",
    "asterisk",
    "spc",
    "caps_lock",
    "f1",
    "f2",
    "f3",
    "f4",
    "f5",
    "f6",
    "f7",
    "f8",
    "f9",
    "f10",
    "num_lock",
    "scroll_lock",
    "kp_divide",
    "kp_multiply",
    "kp_subtract",
    "kp_add",
    "kp_enter",
    "kp_decimal",
    "sysrq",
    "kp_0",
    "kp_1",
    "kp_2",
    "kp_3",
    "kp_4",
    "kp_5",
    "kp_6",
    "kp_7",
    "kp_8",
    "kp_9",
    "less",
    "f11",
    "f12",
    "print",
    "home",
    "pgup",
    "pgdn",
    "end",
    "left",
    "up",
    "down",
    "right",
    "insert",
    "delete",
    "stop",
    "again",
    "props",
    "undo",
    "front",
    "copy",
    "open",
    "paste",
    "find",
    "cut",
    "lf",
    "help",
    "meta_l",
    "meta_r",
    "compose",
    "pause",
    "ro",
    "hiragana",
    "henkan",
    "yen",
    "muhenkan",
    "katakanahiragana",
    "kp_comma",
    "kp_equals",
    "power",
    "sleep",
    "wake",
    "audionext",
    "audioprev",
    "audiostop",
    "audioplay",
    "audiomute",
    "volumeup",
    "volumedown",
    "mediaselect",
    "mail",
    "calculator",
    "computer",
    "ac_home",
    "ac_back",
    "ac_forward",
    "ac_refresh",
    "ac_bookmarks",
    "lang1",
    "lang2",
    "f13",
    "f14",
    "f15",
    "f16",
    "f17",
    "f18",
    "f19",
    "f20",
    "f21",
    "f22",
    "f23",
    "f24",
];

/// QEMU's output: each `\n` written as `\r\n`.
fn out(text: &str) -> String {
    text.replace('\n', "\r\n")
}

/// The first key name of `keys` QEMU does not take (`0x..` codes are
/// taken as they are).
fn bad_key(keys: &str) -> Option<&str> {
    keys.split('-').find(|k| {
        let hex = k
            .strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()));
        !hex && !KEYS.contains(k)
    })
}

/// Why a command is not answered: QEMU knows it, fake-pve does not
/// emulate it.
fn not_emulated(command: &str) -> Error {
    Error::NotImplemented(format!(
        "monitor command '{command}' is not emulated by fake-pve"
    ))
}

/// The drives QEMU has, in the order qemu-server adds them.
fn drive_keys(conf: &std::collections::BTreeMap<String, String>) -> Vec<&String> {
    let rank = |k: &str| {
        ["efidisk", "tpmstate", "ide", "sata", "scsi", "virtio"]
            .iter()
            .position(|p| k.starts_with(p))
            .unwrap_or(9)
    };
    let mut keys: Vec<&String> = conf
        .keys()
        .filter(|k| super::schema::is_drive_key(k) && !k.starts_with("unused"))
        .collect();
    keys.sort_by_key(|k| {
        let n: u32 = k
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .unwrap_or(0);
        (rank(k), n)
    });
    keys
}

/// A drive option of a drive's value.
fn drive_opt<'a>(value: &'a str, key: &str) -> Option<&'a str> {
    value
        .split(',')
        .skip(1)
        .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
}

/// `info block`: each drive, its file and format, the device it is
/// attached to, a CD drive's tray, the cache mode and zero detection
/// (qemu-server's defaults: `cache=none` is writeback with O_DIRECT,
/// `detect-zeroes` on, or `unmap` with `discard=on`).
fn info_block(
    conf: &std::collections::BTreeMap<String, String>,
    paths: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut blocks = Vec::new();
    for (i, key) in drive_keys(conf).into_iter().enumerate() {
        let value = &conf[key];
        let volume = value.split(',').next().unwrap_or_default();
        let cdrom = drive_opt(value, "media") == Some("cdrom");
        let mut b = format!("drive-{key}");
        let file = match volume {
            "none" | "cdrom" | "" => None,
            v => Some(paths.get(v).cloned().unwrap_or_else(|| v.to_string())),
        };
        match &file {
            Some(f) => {
                let format = drive_opt(value, "format").map_or_else(
                    || {
                        f.rsplit_once('.')
                            .map(|(_, e)| e)
                            .filter(|e| ["qcow2", "vmdk", "raw"].contains(e))
                            .unwrap_or("raw")
                            .to_string()
                    },
                    str::to_string,
                );
                let ro = if cdrom { ", read-only" } else { "" };
                b.push_str(&format!(" (#block{}): {f} ({format}{ro})\n", 100 + i * 58));
            }
            None => b.push_str(": [not inserted]\n"),
        }
        b.push_str(&format!("    Attached to:      {key}\n"));
        if cdrom {
            b.push_str("    Removable device: not locked, tray closed\n");
        }
        if file.is_some() {
            let cache = match drive_opt(value, "cache") {
                Some("writethrough") => "writethrough",
                Some("directsync") => "writethrough, direct",
                Some("writeback") => "writeback",
                Some("unsafe") => "writeback, ignore flushes",
                _ => "writeback, direct",
            };
            b.push_str(&format!("    Cache mode:       {cache}\n"));
            if !cdrom {
                let zeroes = match (
                    drive_opt(value, "detect_zeroes"),
                    drive_opt(value, "discard"),
                ) {
                    (Some("0"), _) => None,
                    (_, Some("on")) => Some("unmap"),
                    _ => Some("on"),
                };
                if let Some(z) = zeroes {
                    b.push_str(&format!("    Detect zeroes:    {z}\n"));
                }
            }
        }
        blocks.push(b);
    }
    blocks.join("\n")
}

/// `info network`: each NIC (`netN`: its model and MAC), then the tap
/// device behind it (`tap<vmid>i<N>` with qemu-server's bridge scripts).
fn info_network(
    vmid: u32,
    conf: &std::collections::BTreeMap<String, String>,
    version: PveVersion,
) -> String {
    let scripts = if version.is_v9() {
        "/usr/libexec/qemu-server"
    } else {
        "/var/lib/qemu-server"
    };
    let mut nets: Vec<(u32, &String)> = conf
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("net")?.parse().ok()?, v)))
        .collect();
    nets.sort_by_key(|(n, _)| *n);
    let mut out = String::new();
    for (n, value) in nets {
        let mut model = "virtio";
        let mut mac = String::new();
        for p in value.split(',') {
            if let Some((k, v)) = p.split_once('=') {
                match k {
                    "virtio" | "e1000" | "e1000e" | "rtl8139" | "vmxnet3" | "ne2k_pci"
                    | "pcnet" | "i82551" | "i82557b" | "i82559er" | "ne2k_isa" => {
                        model = k;
                        mac = v.to_lowercase();
                    }
                    "model" => model = v,
                    "macaddr" => mac = v.to_lowercase(),
                    _ => {}
                }
            }
        }
        let device = match model {
            "virtio" => "virtio-net-pci",
            "e1000" => "e1000",
            other => other,
        };
        out.push_str(&format!(
            "net{n}: index=0,type=nic,model={device},macaddr={mac}\n \\ net{n}: index=0,type=tap,ifname=tap{vmid}i{n},script={scripts}/pve-bridge,downscript={scripts}/pve-bridgedown\n"
        ));
    }
    out
}

impl Guests {
    /// `hmp_cmd`: runs a command line on the monitor of VM `vmid`:
    /// QEMU's output, or `ERROR: ...` as the call answers a failure
    /// (`VM <vmid> not running`). `known` says whether QEMU has a command
    /// of that name.
    ///
    /// # Errors
    /// A missing VM; a command QEMU knows that is not emulated.
    ///
    /// `paths` are the files of the VM's volumes (volume ID to path), as
    /// `info block` names them.
    pub fn monitor(
        &mut self,
        node: &str,
        vmid: u32,
        command: &str,
        version: PveVersion,
        known: impl Fn(&str) -> bool,
        paths: &std::collections::BTreeMap<String, String>,
    ) -> Result<String> {
        let vm = self.vm_mut(node, vmid)?;
        if !vm.running() {
            return Ok(format!("ERROR: VM {vmid} not running\n"));
        }
        let words: Vec<&str> = command.split_whitespace().collect();
        let name = words.first().copied().unwrap_or_default();
        Ok(match (name, words.get(1).copied()) {
            // An empty line does nothing.
            ("", _) => String::new(),
            ("info", Some("status")) => {
                let state = if vm.qmpstatus == Some(QmpStatus::Paused) {
                    "paused"
                } else {
                    "running"
                };
                out(&format!("VM status: {state}\n"))
            }
            // QEMU's version, then the package pve-qemu-kvm builds it
            // as (`--with-pkgversion`), without a space between.
            ("info", Some("version")) => out(&format!(
                "{}pve-qemu-kvm_{}\n",
                qemu_version(version),
                catalog::is_installed(version, "pve-qemu-kvm").unwrap_or_default()
            )),
            ("info", Some("cpus")) => {
                let pid = 10_000 + u64::from(vmid);
                let lines: String = (0..vm.maxcpu())
                    .map(|i| {
                        let active = if i == 0 { '*' } else { ' ' };
                        format!("{active} CPU #{i}: thread_id={}\n", pid + 2 + i)
                    })
                    .collect();
                out(&lines)
            }
            ("info", Some("balloon")) => {
                if vm.config.get("balloon").is_some_and(|b| b == "0") {
                    out("Error: No balloon device has been activated\n")
                } else {
                    out(&format!("balloon: actual={}\n", vm.maxmem() >> 20))
                }
            }
            ("info", Some("block")) => out(&info_block(&vm.config, paths)),
            ("info", Some("network")) => out(&info_network(vmid, &vm.config, version)),
            ("info", _) => return Err(not_emulated(command.trim())),
            ("stop", None) => {
                vm.qmpstatus = Some(QmpStatus::Paused);
                String::new()
            }
            ("cont" | "c", None) => {
                vm.qmpstatus = None;
                String::new()
            }
            ("system_reset", None) => String::new(),
            ("sendkey", Some(keys)) => match bad_key(keys) {
                Some(k) => out(&format!("invalid parameter: {k}\n")),
                None => String::new(),
            },
            _ if !known(name) => out(&format!("unknown command: '{name}'\n")),
            _ => return Err(not_emulated(command.trim())),
        })
    }
}
