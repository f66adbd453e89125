//! What a node's software reports about itself and does not keep as
//! state: QEMU's machine types (its CPUs in [`super::cpus`]) and the installed packages
//! of each release (qemu-server `CPUConfig.pm`, `API2/Qemu/Machine.pm`,
//! pve-manager `API2/APT.pm`).

use crate::model::PveVersion;

pub use super::cpus::{
    AvailableFlag, CpuModel, HOST_CPU_FLAGS, all_cpu_model_names, available_cpu_flags, cpu_flags,
    cpu_models, vendor_of,
};

/// A machine type a node's QEMU offers: `pc-<kind>-<qemu><revision>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// `q35` or `i440fx`.
    pub kind: &'static str,
    /// The QEMU machine version (`9.2`).
    pub qemu: &'static str,
    /// A `+pveN` revision and what it changed.
    pub revision: Option<(&'static str, &'static str)>,
}

/// The QEMU machine versions of the release's pve-qemu-kvm (9.2 on 8.4,
/// 10.1 on 9.1, 11.0 on 9.2), newest first, back to 2.4.
const QEMU_VERSIONS: &[&str] = &[
    "11.0", "10.1", "10.0", "9.2", "9.1", "9.0", "8.2", "8.1", "8.0", "7.2", "7.1", "7.0", "6.2",
    "6.1", "6.0", "5.2", "5.1", "5.0", "4.2", "4.1", "4.0", "3.1", "3.0", "2.12", "2.11", "2.10",
    "2.9", "2.8", "2.7", "2.6", "2.5", "2.4",
];

/// qemu-server's `$PVE_MACHINE_VERSION`: the `+pveN` revisions of a
/// machine version and what each changed.
fn pve_revisions(version: PveVersion, qemu: &str) -> &'static [(&'static str, &'static str)] {
    match qemu {
        "4.1" => &[
            ("+pve1", "Introduction of pveX versioning, no changes."),
            ("+pve2", "Increases the number of SCSI drives supported."),
        ],
        "9.2" => &[("+pve1", "Disables S3/S4 power states by default.")],
        "10.0" if version.is_v9() => &[(
            "+pve1",
            "Set host_mtu vNIC option even with default value for migration compat.",
        )],
        "11.0" if version == PveVersion::V9_2 => &[
            ("+pve1", "Use host_tunnel=off by default for VirtIO NICs."),
            (
                "+pve2",
                "Enable hv_emcs for Windows 11/2022/2025 to mitigate issues with VBS.",
            ),
        ],
        _ => &[],
    }
}

/// `GET /nodes/{node}/capabilities/qemu/machines` (x86_64): every
/// `pc-q35-X` and `pc-i440fx-X` of the release's QEMU with the `+pveN`
/// revisions, sorted newest first as `machine_version_cmp` sorts them.
pub fn machines(version: PveVersion) -> Vec<Machine> {
    let newest = match version {
        PveVersion::V8_4 => "9.2",
        PveVersion::V9_1 => "10.1",
        PveVersion::V9_2 => "11.0",
    };
    let start = QEMU_VERSIONS.iter().position(|v| *v == newest).unwrap_or(0);
    let mut out = Vec::new();
    for qemu in &QEMU_VERSIONS[start..] {
        for rev in pve_revisions(version, qemu).iter().rev() {
            for kind in ["q35", "i440fx"] {
                out.push(Machine {
                    kind,
                    qemu,
                    revision: Some(*rev),
                });
            }
        }
        for kind in ["q35", "i440fx"] {
            out.push(Machine {
                kind,
                qemu,
                revision: None,
            });
        }
    }
    out
}

/// One installed package: name, version on 8.4, on 9.1 and on 9.2,
/// origin, section and short description.
type Pkg = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

/// The packages `apt/versions` lists, in its order: `proxmox-ve`,
/// `pve-manager`, the kernels, then the rest by name. 9.2's are those of
/// pve-manager 9.2.11's release (August 2026): each package's newest
/// version from its changelog by then, and at least the version
/// pve-manager's and qemu-server's `debian/control` require; a package
/// no 9.2 source names keeps its 9.1 version.
const PACKAGES: &[Pkg] = &[
    (
        "proxmox-ve",
        "8.4.0",
        "9.1.0",
        "9.2.0",
        "Proxmox",
        "admin",
        "Proxmox Virtual Environment",
    ),
    (
        "pve-manager",
        "8.4.14",
        "9.1.5",
        "9.2.11",
        "Proxmox",
        "admin",
        "Proxmox Virtual Environment Management Tools",
    ),
    (
        "KERNEL-SIGNED",
        "6.8.12-15",
        "6.17.2-1",
        "7.0.14-12",
        "Proxmox",
        "kernel",
        "Proxmox Kernel Image (signed)",
    ),
    (
        "KERNEL-META",
        "6.8.12-15",
        "6.17.2-1",
        "7.0.14-12",
        "Proxmox",
        "kernel",
        "Latest Proxmox Kernel Image",
    ),
    (
        "amd64-microcode",
        "3.20250311.1~deb12u1",
        "3.20250311.1",
        "3.20250311.1",
        "Debian",
        "non-free-firmware/admin",
        "Processor microcode firmware for AMD CPUs",
    ),
    (
        "ceph-fuse",
        "18.2.7-pve1",
        "19.2.3-pve2",
        "19.2.3-pve2",
        "Proxmox",
        "admin",
        "FUSE-based client for the Ceph distributed file system",
    ),
    (
        "corosync",
        "3.1.9-pve1",
        "3.1.9-pve2",
        "3.1.9-pve2",
        "Proxmox",
        "admin",
        "cluster engine daemon and utilities",
    ),
    (
        "criu",
        "3.17.1-2+deb12u2",
        "4.1.1-1",
        "4.1.1-1",
        "Debian",
        "admin",
        "checkpoint and restore in userspace",
    ),
    (
        "frr-pythontools",
        "10.2.3-1+pve1",
        "10.3.1-1+pve4",
        "10.3.1-1+pve4",
        "Proxmox",
        "net",
        "FRRouting suite - Python tools",
    ),
    (
        "ifupdown2",
        "3.2.0-1+pmx11",
        "3.3.0-1+pmx11",
        "3.3.0-1+pmx11",
        "Proxmox",
        "admin",
        "Network Interface Management tool similar to ifupdown",
    ),
    (
        "intel-microcode",
        "3.20250512.1~deb12u1",
        "3.20250512.1",
        "3.20250512.1",
        "Debian",
        "non-free-firmware/admin",
        "Processor microcode firmware for Intel CPUs",
    ),
    (
        "ksm-control-daemon",
        "1.5-1",
        "1.5-1",
        "1.5-1",
        "Proxmox",
        "admin",
        "Kernel Samepage Merging (KSM) Tuning Daemon",
    ),
    (
        "libjs-extjs",
        "7.0.0-5",
        "7.0.0-5",
        "7.0.0-5",
        "Proxmox",
        "web",
        "cross-browser JavaScript library",
    ),
    (
        "libknet1",
        "1.30-pve2",
        "1.30-pve2",
        "1.30-pve2",
        "Proxmox",
        "libs",
        "kronosnet core switching implementation",
    ),
    (
        "libproxmox-acme-perl",
        "1.6.0",
        "1.7.0",
        "1.7.0",
        "Proxmox",
        "perl",
        "ACME client library for perl",
    ),
    (
        "libproxmox-backup-qemu0",
        "1.5.2",
        "2.0.1",
        "2.0.1",
        "Proxmox",
        "admin",
        "Proxmox Backup Server client library for QEMU",
    ),
    (
        "libproxmox-rs-perl",
        "0.3.5",
        "0.4.1",
        "0.4.1",
        "Proxmox",
        "perl",
        "PVE/PMG common perl parts for Rust perlmod bindings",
    ),
    (
        "libpve-access-control",
        "8.2.2",
        "9.0.4",
        "9.1.1",
        "Proxmox",
        "perl",
        "Proxmox VE access control library",
    ),
    (
        "libpve-apiclient-perl",
        "3.3.2",
        "3.4.2",
        "3.4.2",
        "Proxmox",
        "perl",
        "Proxmox VE API client library",
    ),
    (
        "libpve-cluster-api-perl",
        "8.1.2",
        "9.0.7",
        "9.1.6",
        "Proxmox",
        "perl",
        "Proxmox Virtual Environment cluster Perl API modules.",
    ),
    (
        "libpve-cluster-perl",
        "8.1.2",
        "9.0.7",
        "9.1.6",
        "Proxmox",
        "perl",
        "Proxmox Virtual Environment cluster Perl modules.",
    ),
    (
        "libpve-common-perl",
        "8.3.4",
        "9.0.13",
        "9.2.1",
        "Proxmox",
        "perl",
        "Proxmox VE base library",
    ),
    (
        "libpve-guest-common-perl",
        "5.2.2",
        "6.0.2",
        "6.0.2",
        "Proxmox",
        "perl",
        "Proxmox VE common guest-related modules",
    ),
    (
        "libpve-http-server-perl",
        "5.2.2",
        "6.0.5",
        "6.0.5",
        "Proxmox",
        "perl",
        "Proxmox Asynchrounous HTTP Server Implementation",
    ),
    (
        "libpve-network-perl",
        "0.11.2",
        "1.2.3",
        "1.6.5",
        "Proxmox",
        "perl",
        "Proxmox VE's SDN (Software Defined Network) stack",
    ),
    (
        "libpve-notify-perl",
        "8.1.2",
        "9.0.7",
        "9.1.6",
        "Proxmox",
        "perl",
        "Notify helper module.",
    ),
    (
        "libpve-rs-perl",
        "0.9.4",
        "0.11.3",
        "0.15.3",
        "Proxmox",
        "perl",
        "PVE parts which have been ported to Rust - Rust source code",
    ),
    (
        "libpve-storage-perl",
        "8.3.7",
        "9.1.0",
        "9.1.7",
        "Proxmox",
        "perl",
        "Proxmox VE storage management library",
    ),
    (
        "libspice-server1",
        "0.15.1-1",
        "0.15.2-1+b1",
        "0.15.2-1+b1",
        "Debian",
        "libs",
        "Implements the server side of the SPICE protocol",
    ),
    (
        "lvm2",
        "2.03.16-2",
        "2.03.31-2+pmx1",
        "2.03.31-2+pmx1",
        "Debian",
        "admin",
        "Linux Logical Volume Manager",
    ),
    (
        "lxc-pve",
        "6.0.0-1",
        "6.0.5-3",
        "6.0.5-3",
        "Proxmox",
        "admin",
        "Linux containers userspace tools",
    ),
    (
        "lxcfs",
        "6.0.0-pve2",
        "6.0.4-pve1",
        "6.0.4-pve1",
        "Proxmox",
        "admin",
        "LXC userspace filesystem",
    ),
    (
        "novnc-pve",
        "1.6.0-2",
        "1.6.0-3",
        "1.6.0-4",
        "Proxmox",
        "web",
        "HTML5 VNC client",
    ),
    (
        "proxmox-backup-client",
        "3.4.7-1",
        "4.0.20-1",
        "4.0.20-1",
        "Proxmox",
        "admin",
        "Proxmox Backup Client tools",
    ),
    (
        "proxmox-backup-file-restore",
        "3.4.7-1",
        "4.0.20-1",
        "4.0.20-1",
        "Proxmox",
        "admin",
        "Proxmox Backup single file restore tools for pxar and block device backups",
    ),
    (
        "proxmox-backup-restore-image",
        "0.7.0",
        "1.0.0",
        "1.0.0",
        "Proxmox",
        "admin",
        "Kernel/initramfs images for Proxmox Backup single-file restore.",
    ),
    (
        "proxmox-firewall",
        "0.7.1",
        "1.2.1",
        "1.2.1",
        "Proxmox",
        "admin",
        "Proxmox's nftables-based firewall written in rust",
    ),
    (
        "proxmox-kernel-helper",
        "8.1.4",
        "9.0.4",
        "9.0.4",
        "Proxmox",
        "admin",
        "Function for various kernel maintenance tasks.",
    ),
    (
        "proxmox-mail-forward",
        "0.3.3",
        "1.0.2",
        "1.0.2",
        "Proxmox",
        "admin",
        "Proxmox mail forward helper",
    ),
    (
        "proxmox-mini-journalreader",
        "1.5",
        "1.6",
        "1.7",
        "Proxmox",
        "admin",
        "Minimal systemd Journal Reader",
    ),
    (
        "proxmox-offline-mirror-helper",
        "0.6.8",
        "0.7.3",
        "0.7.3",
        "Proxmox",
        "admin",
        "Proxmox offline repository mirror and subscription key manager helper",
    ),
    (
        "proxmox-widget-toolkit",
        "4.3.13",
        "5.1.2",
        "5.2.6",
        "Proxmox",
        "web",
        "Core Widgets and ExtJS Helper Classes for Proxmox Web UIs",
    ),
    (
        "pve-cluster",
        "8.1.2",
        "9.0.7",
        "9.1.6",
        "Proxmox",
        "admin",
        "\"pmxcfs\" distributed cluster filesystem for Proxmox Virtual Environment.",
    ),
    (
        "pve-container",
        "5.3.3",
        "6.0.18",
        "6.1.10",
        "Proxmox",
        "perl",
        "Proxmox VE Container management tool",
    ),
    (
        "pve-docs",
        "8.4.1",
        "9.1.1",
        "9.1.5",
        "Proxmox",
        "doc",
        "Proxmox VE Documentation",
    ),
    (
        "pve-edk2-firmware",
        "4.2025.02-4~bpo12+1",
        "4.2025.05-2",
        "4.2025.05-2",
        "Proxmox",
        "misc",
        "edk2 based UEFI firmware modules for virtual machines",
    ),
    (
        "pve-esxi-import-tools",
        "0.7.4",
        "1.0.1",
        "1.0.1",
        "Proxmox",
        "admin",
        "Tools to allow importing VMs from ESXi hosts",
    ),
    (
        "pve-firewall",
        "5.1.2",
        "6.0.4",
        "6.0.4",
        "Proxmox",
        "admin",
        "Proxmox VE Firewall",
    ),
    (
        "pve-firmware",
        "3.16-3",
        "3.17-2",
        "3.17-2",
        "Proxmox",
        "misc",
        "Binary firmware code for the pve-kernel",
    ),
    (
        "pve-ha-manager",
        "4.0.7",
        "5.0.8",
        "5.2.5",
        "Proxmox",
        "perl",
        "Proxmox VE HA Manager",
    ),
    (
        "pve-i18n",
        "3.4.5",
        "3.6.2",
        "3.6.2",
        "Proxmox",
        "perl",
        "Internationalization support for Proxmox VE",
    ),
    (
        "pve-qemu-kvm",
        "9.2.0-7",
        "10.1.2-4",
        "11.0.2-1",
        "Proxmox",
        "admin",
        "Full virtualization on x86 hardware",
    ),
    (
        "pve-xtermjs",
        "5.5.0-2",
        "5.5.0-3",
        "5.5.0-3",
        "Proxmox",
        "admin",
        "HTML/JS Shell client for Proxmox projects",
    ),
    (
        "qemu-server",
        "8.4.4",
        "9.1.4",
        "9.2.5",
        "Proxmox",
        "admin",
        "Qemu Server Tools",
    ),
    (
        "smartmontools",
        "7.3-pve1",
        "7.4-pve1",
        "7.4-pve1",
        "Proxmox",
        "utils",
        "control and monitor storage systems using S.M.A.R.T.",
    ),
    (
        "spiceterm",
        "3.3.1",
        "3.4.1",
        "3.4.1",
        "Proxmox",
        "admin",
        "SPICE Terminal Emulator",
    ),
    (
        "swtpm",
        "0.8.0+pve1",
        "0.8.0+pve3",
        "0.8.0+pve3",
        "Proxmox",
        "misc",
        "Libtpms-based TPM emulator",
    ),
    (
        "vncterm",
        "1.8.1",
        "1.9.1",
        "1.9.2",
        "Proxmox",
        "admin",
        "VNC Terminal Emulator",
    ),
    (
        "zfsutils-linux",
        "2.2.8-pve1",
        "2.3.4-pve1",
        "2.4.3-pve1",
        "Proxmox",
        "contrib/admin",
        "command-line tools to manage OpenZFS filesystems",
    ),
];

/// The running kernel of a release's nodes: its release (`uname -r`),
/// its series (the `proxmox-kernel-<series>` meta package) and its build
/// (`uname -v`).
struct Kernel {
    release: &'static str,
    series: &'static str,
    build: &'static str,
}

fn kernel(version: PveVersion) -> Kernel {
    match version {
        PveVersion::V8_4 => Kernel {
            release: "6.8.12-15-pve",
            series: "6.8",
            build: "#1 SMP PREEMPT_DYNAMIC PMX 6.8.12-15 (2025-09-12T11:02Z)",
        },
        PveVersion::V9_1 => Kernel {
            release: "6.17.2-1-pve",
            series: "6.17",
            build: "#1 SMP PREEMPT_DYNAMIC PMX 6.17.2-1 (2025-10-21T11:55Z)",
        },
        PveVersion::V9_2 => Kernel {
            release: "7.0.14-12-pve",
            series: "7.0",
            build: "#1 SMP PREEMPT_DYNAMIC PMX 7.0.14-12 (2026-08-12T14:56Z)",
        },
    }
}

/// The running kernel's release (`uname -r`), as `/nodes/{node}/status`
/// reports it.
pub fn kernel_release(version: PveVersion) -> &'static str {
    kernel(version).release
}

/// The running kernel's build (`uname -v`).
pub fn kernel_build(version: PveVersion) -> &'static str {
    kernel(version).build
}

/// A package's name as the release installs it (the kernel's names
/// carry its version).
fn package_name(version: PveVersion, name: &str) -> String {
    let Kernel {
        release: abi,
        series,
        ..
    } = kernel(version);
    match name {
        "KERNEL-SIGNED" => format!("proxmox-kernel-{abi}-signed"),
        "KERNEL-META" => format!("proxmox-kernel-{series}"),
        other => other.to_string(),
    }
}

/// The installed packages of the release as `apt/versions` assembles
/// them: `(name, version, origin, section, title)`.
pub fn installed(
    version: PveVersion,
) -> Vec<(
    String,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
)> {
    PACKAGES
        .iter()
        .map(|(name, v8_4, v9_1, v9_2, origin, section, title)| {
            (
                package_name(version, name),
                match version {
                    PveVersion::V8_4 => *v8_4,
                    PveVersion::V9_1 => *v9_1,
                    PveVersion::V9_2 => *v9_2,
                },
                *origin,
                *section,
                *title,
            )
        })
        .collect()
}

/// What `pveversion --verbose` prints: every installed package of
/// `apt/versions` as `name: version`, the running kernel after
/// `proxmox-ve` and the running manager after `pve-manager`.
pub fn pveversion_verbose(version: PveVersion) -> String {
    let mut out = String::new();
    for (name, ver, ..) in installed(version) {
        out.push_str(&format!("{name}: {ver}"));
        if name == "proxmox-ve" {
            out.push_str(&format!(" (running kernel: {})", kernel_release(version)));
        } else if name == "pve-manager" {
            out.push_str(&format!(
                " (running version: {}/{})",
                version.version(),
                version.repoid()
            ));
        }
        out.push('\n');
    }
    out
}

/// Whether `name` is a package the release has installed.
pub fn is_installed(version: PveVersion, name: &str) -> Option<&'static str> {
    installed(version)
        .into_iter()
        .find(|(n, ..)| n == name)
        .map(|(_, v, ..)| v)
}
