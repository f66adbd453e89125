//! The PVE release fake-pve impersonates: what routing, validation, the
//! model's rules and the answers all depend on.

use serde::{Deserialize, Serialize};

/// Which PVE release the emulator impersonates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum PveVersion {
    /// PVE 8.4 (pve-manager 8.4.14).
    #[serde(rename = "8.4")]
    V8_4,
    /// PVE 9.1 (pve-manager 9.1.5, the first with the new 401 message).
    #[serde(rename = "9.1")]
    #[default]
    V9_1,
}

impl PveVersion {
    /// Parses `8.4` or `9.1` (a full `8.4.x`/`9.1.x` is accepted too).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        if s == "8.4" || s.starts_with("8.4.") || s == "8" {
            Some(Self::V8_4)
        } else if s == "9.1" || s.starts_with("9.1.") || s == "9" {
            Some(Self::V9_1)
        } else {
            None
        }
    }

    /// The full pve-manager version, as `/version` reports it.
    pub fn version(self) -> &'static str {
        match self {
            Self::V8_4 => "8.4.14",
            Self::V9_1 => "9.1.5",
        }
    }

    /// `x.y`.
    pub fn release(self) -> &'static str {
        match self {
            Self::V8_4 => "8.4",
            Self::V9_1 => "9.1",
        }
    }

    /// The 16-hex-digit id of the pve-manager release commit.
    pub fn repoid(self) -> &'static str {
        match self {
            Self::V8_4 => "b502d23c55afcba1",
            Self::V9_1 => "80cf92a64bef6889",
        }
    }

    /// The reason phrase of a 401 for a bad ticket or token.
    pub fn invalid_ticket_message(self) -> &'static str {
        match self {
            Self::V8_4 => "permission denied - invalid PVE ticket",
            Self::V9_1 => "Authentication failed!",
        }
    }

    /// Whether this is the 9.x line.
    pub fn is_v9(self) -> bool {
        matches!(self, Self::V9_1)
    }
}

impl std::fmt::Display for PveVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.release())
    }
}
