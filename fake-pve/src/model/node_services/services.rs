//! The systemd units `/nodes/{node}/services` lists (pve-manager
//! `API2/Services.pm`): their description, whether they are installed
//! and enabled, how they run on a fresh install, and what `systemctl`
//! does to them.

use serde::{Deserialize, Serialize};

use super::PveVersion;

/// How a unit runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceState {
    /// `active` / `running`.
    Running,
    /// `inactive` / `dead`.
    Stopped,
    /// `failed` / `failed`.
    Failed,
}

impl ServiceState {
    /// Parses `running`, `stopped` or `failed`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(Self::Running),
            "stopped" => Some(Self::Stopped),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// A `systemctl` command the API runs in a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceAction {
    /// `start` (task `srvstart`).
    Start,
    /// `stop` (task `srvstop`).
    Stop,
    /// `restart` (task `srvrestart`).
    Restart,
    /// `try-reload-or-restart` (task `srvreload`).
    Reload,
}

impl ServiceAction {
    /// The task type.
    pub fn task_kind(self) -> &'static str {
        match self {
            Self::Start => "srvstart",
            Self::Stop => "srvstop",
            Self::Restart => "srvrestart",
            Self::Reload => "srvreload",
        }
    }

    /// The `systemctl` command.
    pub fn command(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Stop => "stop",
            Self::Restart => "restart",
            Self::Reload => "try-reload-or-restart",
        }
    }

    /// What the worker writes to syslog when it begins.
    pub fn syslog_verb(self) -> &'static str {
        match self {
            Self::Start => "starting",
            Self::Stop => "stopping",
            Self::Restart => "re-starting",
            Self::Reload => "reloading",
        }
    }
}

/// One unit of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// The API's service id.
    pub name: &'static str,
    /// systemd's `Description`.
    pub desc: &'static str,
    /// The unit the id stands for, where it differs (`journalctl --unit`).
    pub unit: &'static str,
    /// `UnitFileState`: `enabled`, `static`, `disabled`; `not-found` when
    /// the package is not installed.
    pub unit_state: &'static str,
    /// How it runs on a fresh standalone node.
    pub standalone: ServiceState,
    /// A oneshot unit that stays `exited` while active.
    pub oneshot: bool,
    /// A start whose `ConditionPathExists` fails on a standalone node
    /// (corosync without `corosync.conf`): it succeeds and stays dead.
    pub needs_cluster: bool,
    /// Only in 9.x.
    pub v9_only: bool,
}

const fn u(name: &'static str, desc: &'static str, standalone: ServiceState) -> Unit {
    Unit {
        name,
        desc,
        unit: name,
        unit_state: "enabled",
        standalone,
        oneshot: false,
        needs_cluster: false,
        v9_only: false,
    }
}

use ServiceState::{Running, Stopped};

/// Every unit PVE lists, in name order (`$service_name_list`).
pub const UNITS: &[Unit] = &[
    u("chrony", "chrony, an NTP client/server", Running),
    Unit {
        needs_cluster: true,
        ..u("corosync", "Corosync Cluster Engine", Stopped)
    },
    u(
        "cron",
        "Regular background program processing daemon",
        Running,
    ),
    u(
        "ksmtuned",
        "Kernel Samepage Merging (KSM) Tuning Daemon",
        Running,
    ),
    Unit {
        v9_only: true,
        ..u("lxcfs", "FUSE filesystem for LXC", Running)
    },
    Unit {
        oneshot: true,
        ..u("postfix", "Postfix Mail Transport Agent", Running)
    },
    Unit {
        v9_only: true,
        ..u("proxmox-firewall", "Proxmox nftables firewall", Stopped)
    },
    u("pve-cluster", "The Proxmox VE cluster filesystem", Running),
    u("pve-firewall", "Proxmox VE firewall", Running),
    u(
        "pve-ha-crm",
        "PVE Cluster HA Resource Manager Daemon",
        Running,
    ),
    u(
        "pve-ha-lrm",
        "PVE Local HA Resource Manager Daemon",
        Running,
    ),
    Unit {
        v9_only: true,
        ..u("pve-lxc-syscalld", "Proxmox VE LXC Syscall Daemon", Running)
    },
    u("pvedaemon", "PVE API Daemon", Running),
    u("pvefw-logger", "Proxmox VE firewall logger", Running),
    u("pveproxy", "PVE API Proxy Server", Running),
    u("pvescheduler", "Proxmox VE scheduler", Running),
    u("pvestatd", "PVE Status Daemon", Running),
    Unit {
        v9_only: true,
        ..u("qmeventd", "PVE Qemu Event Daemon", Running)
    },
    u("spiceproxy", "PVE SPICE Proxy Server", Running),
    Unit {
        unit: "ssh",
        ..u("sshd", "OpenBSD Secure Shell server", Running)
    },
    Unit {
        unit_state: "not-found",
        ..u("syslog", "syslog.service", Stopped)
    },
    Unit {
        unit_state: "static",
        ..u("systemd-journald", "Journal Service", Running)
    },
    Unit {
        unit_state: "not-found",
        ..u("systemd-timesyncd", "systemd-timesyncd.service", Stopped)
    },
];

/// The units essential to the API: PVE refuses to stop them.
pub const ESSENTIAL: &[&str] = &["pveproxy", "pvedaemon", "pve-cluster"];

/// The units of `version`.
pub fn units(version: PveVersion) -> impl Iterator<Item = &'static Unit> {
    UNITS.iter().filter(move |u| version.is_v9() || !u.v9_only)
}

/// The unit `name` of `version`.
pub fn unit(version: PveVersion, name: &str) -> Option<&'static Unit> {
    units(version).find(|u| u.name == name)
}

impl Unit {
    /// Whether the package is installed.
    pub fn installed(&self) -> bool {
        self.unit_state != "not-found"
    }

    /// How it runs on a fresh node.
    pub fn initial(&self, clustered: bool) -> ServiceState {
        if self.needs_cluster && clustered {
            Running
        } else {
            self.standalone
        }
    }

    /// systemd's `SubState` and `ActiveState` of the unit in `state`.
    pub fn sub_and_active(&self, state: ServiceState) -> (&'static str, &'static str) {
        match state {
            Running if self.oneshot => ("exited", "active"),
            Running => ("running", "active"),
            Stopped => ("dead", "inactive"),
            ServiceState::Failed => ("failed", "failed"),
        }
    }

    /// What `systemctl <action>` makes of the unit in `state`: its new
    /// state, or the failure a task reports (the lines systemctl prints
    /// and `run_command`'s message).
    ///
    /// # Errors
    /// The unit is not installed, or it is essential and asked to stop.
    pub fn apply(
        &self,
        action: ServiceAction,
        state: ServiceState,
        clustered: bool,
    ) -> Result<ServiceState, (Vec<String>, String)> {
        if ESSENTIAL.contains(&self.name) && action == ServiceAction::Stop {
            return Err((
                Vec::new(),
                format!(
                    "invalid service cmd '{} stop': refusing to stop essential service!",
                    self.name
                ),
            ));
        }
        if !self.installed() {
            let what = match action {
                ServiceAction::Stop => "stop",
                ServiceAction::Start => "start",
                ServiceAction::Restart => "restart",
                ServiceAction::Reload => "try-reload-or-restart",
            };
            let why = if action == ServiceAction::Stop {
                "not loaded"
            } else {
                "not found"
            };
            return Err((
                vec![format!(
                    "Failed to {what} {}.service: Unit {}.service {why}.",
                    self.name, self.name
                )],
                format!(
                    "command 'systemctl {} {}' failed: exit code 5",
                    action.command(),
                    self.name
                ),
            ));
        }
        let condition_fails = self.needs_cluster && !clustered;
        Ok(match action {
            ServiceAction::Stop => Stopped,
            // The start condition fails: systemctl succeeds, the unit
            // stays dead.
            ServiceAction::Start | ServiceAction::Restart if condition_fails => Stopped,
            ServiceAction::Start | ServiceAction::Restart => Running,
            // `try-`: a unit that does not run is left alone.
            ServiceAction::Reload if state == Running => Running,
            ServiceAction::Reload => state,
        })
    }
}
