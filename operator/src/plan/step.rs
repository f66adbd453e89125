//! [`Step`]: one thing to do in PVE, and [`Plan`]: the steps with what to
//! report.

use crate::types::{Condition, Phase};

/// One thing to do in PVE.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `POST /nodes/{node}/qemu`.
    Create {
        /// Node.
        node: String,
        /// VMID (`auto`: chosen by the planner, may be moved on conflict).
        vmid: u32,
        /// Whether the VMID was chosen automatically.
        auto: bool,
        /// Every parameter but `vmid`.
        params: Vec<(String, String)>,
    },
    /// `POST /nodes/{node}/qemu/{source}/clone`.
    Clone {
        /// The template's node.
        node: String,
        /// The template.
        source: u32,
        /// The new VMID.
        vmid: u32,
        /// Whether the VMID was chosen automatically.
        auto: bool,
        /// Another node (full clones from shared storage).
        target: Option<String>,
        /// Name.
        name: String,
        /// Description (the ownership mark).
        description: String,
        /// Full clone.
        full: bool,
        /// Storage of a full clone.
        storage: Option<String>,
    },
    /// `PUT .../config`.
    Configure {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Keys to set.
        set: Vec<(String, String)>,
        /// Keys to remove.
        delete: Vec<String>,
    },
    /// `PUT .../resize`.
    Resize {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// `scsi0`.
        disk: String,
        /// The new size (`20G`).
        size: String,
    },
    /// `POST .../status/start`.
    Start {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../status/stop`.
    Stop {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../status/shutdown` with `forceStop`: graceful, then hard
    /// after `timeout` seconds.
    Shutdown {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Seconds before the hard stop.
        timeout: u32,
    },
    /// `POST .../status/reboot`.
    Reboot {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../status/suspend`: paused, in RAM.
    Suspend {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../status/resume`.
    Resume {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `DELETE /nodes/{node}/qemu/{vmid}` with `purge`.
    Destroy {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../snapshot`.
    Snapshot {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Snapshot name.
        name: String,
        /// Description.
        description: Option<String>,
        /// Save RAM.
        vmstate: bool,
    },
    /// `POST .../snapshot/{name}/rollback`.
    Rollback {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Snapshot name.
        name: String,
    },
    /// `DELETE .../snapshot/{name}`.
    DeleteSnapshot {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Snapshot name.
        name: String,
    },
    /// `POST /nodes/{node}/storage/{storage}/download-url`.
    DownloadUrl {
        /// Node.
        node: String,
        /// Storage.
        storage: String,
        /// URL.
        url: String,
        /// File name.
        filename: String,
        /// Checksum and algorithm.
        checksum: Option<(String, String)>,
    },
    /// `POST .../template`.
    Template {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
}

impl Step {
    /// A short name, for logs and metrics.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Create { .. } => "create",
            Self::Clone { .. } => "clone",
            Self::Configure { .. } => "configure",
            Self::Resize { .. } => "resize",
            Self::Start { .. } => "start",
            Self::Stop { .. } => "stop",
            Self::Shutdown { .. } => "shutdown",
            Self::Reboot { .. } => "reboot",
            Self::Suspend { .. } => "suspend",
            Self::Resume { .. } => "resume",
            Self::Destroy { .. } => "destroy",
            Self::Snapshot { .. } => "snapshot",
            Self::Rollback { .. } => "rollback",
            Self::DeleteSnapshot { .. } => "delete_snapshot",
            Self::DownloadUrl { .. } => "download_url",
            Self::Template { .. } => "template",
        }
    }
}

/// What to do next and what to report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// In order; empty when PVE matches the spec.
    pub steps: Vec<Step>,
    /// Conditions to set.
    pub conditions: Vec<Condition>,
    /// The phase to report.
    pub phase: Phase,
    /// The node, once known.
    pub node: Option<String>,
    /// The VMID, once known.
    pub vmid: Option<u32>,
    /// Something is in progress in PVE (a lock): look again soon.
    pub wait: bool,
    /// A problem that only a change of the spec or of PVE fixes.
    pub blocked: bool,
}

impl Plan {
    pub(super) fn cond(&mut self, kind: &str, ok: bool, reason: &str, msg: impl Into<String>) {
        self.conditions.push(Condition::new(kind, ok, reason, msg));
    }
}
