//! A Machine's phase and observed state, consoles, conditions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Phase of a machine.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
pub enum Phase {
    /// Waiting to be created (no node, source missing, retrying).
    #[default]
    Pending,
    /// Being created or configured.
    Creating,
    /// Running.
    Running,
    /// Stopped.
    Stopped,
    /// Paused (`powerState: Suspended`).
    Suspended,
    /// Cannot progress without a change (validation, configuration).
    Error,
}

impl Phase {
    /// The name, as in metrics and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Creating => "Creating",
            Self::Running => "Running",
            Self::Stopped => "Stopped",
            Self::Suspended => "Suspended",
            Self::Error => "Error",
        }
    }
}

/// A Machine's observed state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineStatus {
    /// Where it is in its life.
    pub phase: Phase,
    /// Its VMID once created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vmid: Option<u32>,
    /// Its node once placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Guest-agent addresses (no loopback, no link-local).
    #[serde(default)]
    pub ip_addresses: Vec<String>,
    /// Ready, VMCreated, ResourcesAllocated, NetworkConfigured.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The last `rebootRequest` carried out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reboot: Option<String>,
    /// How to reach its console, once it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console: Option<ConsoleInfo>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
}

/// The consoles PVE offers for a VM.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleInfo {
    /// The console PVE's web UI opens (noVNC, or xterm.js when the
    /// display is a serial port).
    pub url: String,
    /// What PVE offers: `novnc` (`vncproxy`), `spice` (`spiceproxy`, with
    /// a `qxl` display), `xtermjs` (`termproxy`, with a serial port).
    pub types: Vec<String>,
}

/// A Kubernetes-style condition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`, `VMCreated`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// `True` or `False`.
    pub status: String,
    /// CamelCase reason (`ValidationFailed`, `CreationSucceeded`, ...).
    pub reason: String,
    /// Details.
    #[serde(default)]
    pub message: String,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

impl Condition {
    /// A condition without a time.
    pub fn new(kind: &str, ok: bool, reason: &str, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            status: if ok { "True" } else { "False" }.into(),
            reason: reason.into(),
            message: message.into(),
            last_transition_time: None,
        }
    }

    /// Whether the status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// Sets `c` in `list`, keeping the transition time when the status did
/// not change.
pub fn set_condition(list: &mut Vec<Condition>, mut c: Condition, now: &str) {
    if let Some(old) = list.iter_mut().find(|o| o.kind == c.kind) {
        c.last_transition_time = if old.status == c.status {
            old.last_transition_time.clone()
        } else {
            Some(now.to_string())
        };
        *old = c;
    } else {
        c.last_transition_time = Some(now.to_string());
        list.push(c);
    }
}
