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
    V9_1,
    /// PVE 9.2 (pve-manager 9.2.11), the current release.
    #[serde(rename = "9.2")]
    #[default]
    V9_2,
}

impl PveVersion {
    /// Every release, oldest first.
    pub const ALL: [Self; 3] = [Self::V8_4, Self::V9_1, Self::V9_2];

    /// Parses `8.4`, `9.1` or `9.2` (a full `8.4.x`, `9.1.x` or `9.2.x`
    /// is accepted too); a bare major names its newest release (`8` is
    /// 8.4, `9` is 9.2).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        if s == "8" {
            return Some(Self::V8_4);
        }
        if s == "9" {
            return Some(Self::V9_2);
        }
        Self::ALL.into_iter().find(|v| {
            s == v.release()
                || s.strip_prefix(v.release())
                    .is_some_and(|r| r.starts_with('.'))
        })
    }

    /// The full pve-manager version, as `/version` reports it.
    pub fn version(self) -> &'static str {
        match self {
            Self::V8_4 => "8.4.14",
            Self::V9_1 => "9.1.5",
            Self::V9_2 => "9.2.11",
        }
    }

    /// `x.y`.
    pub fn release(self) -> &'static str {
        match self {
            Self::V8_4 => "8.4",
            Self::V9_1 => "9.1",
            Self::V9_2 => "9.2",
        }
    }

    /// The 16-hex-digit id of the pve-manager release commit.
    pub fn repoid(self) -> &'static str {
        match self {
            Self::V8_4 => "b502d23c55afcba1",
            Self::V9_1 => "80cf92a64bef6889",
            Self::V9_2 => "f6997e698c7933ea",
        }
    }

    /// The reason phrase of a 401 for a bad ticket or token.
    pub fn invalid_ticket_message(self) -> &'static str {
        match self {
            Self::V8_4 => "permission denied - invalid PVE ticket",
            Self::V9_1 | Self::V9_2 => "Authentication failed!",
        }
    }

    /// Whether this is the 9.x line.
    pub fn is_v9(self) -> bool {
        matches!(self, Self::V9_1 | Self::V9_2)
    }
}

impl std::fmt::Display for PveVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.release())
    }
}

#[cfg(test)]
mod tests {
    use super::PveVersion;

    #[rstest::rstest]
    #[case("8.4", Some(PveVersion::V8_4))]
    #[case("8.4.14", Some(PveVersion::V8_4))]
    #[case("8", Some(PveVersion::V8_4))]
    #[case("9.1", Some(PveVersion::V9_1))]
    #[case(" 9.1.5 ", Some(PveVersion::V9_1))]
    #[case("9.2", Some(PveVersion::V9_2))]
    #[case("9.2.11", Some(PveVersion::V9_2))]
    #[case("9", Some(PveVersion::V9_2))]
    #[case("9.10", None)]
    #[case("9.0", None)]
    #[case("7.4", None)]
    #[case("", None)]
    fn parse_names_a_release(#[case] text: &str, #[case] want: Option<PveVersion>) {
        assert_eq!(PveVersion::parse(text), want);
    }

    /// Each release reads back from its own names, and the default is
    /// the newest.
    #[test]
    fn every_release_round_trips() {
        for v in PveVersion::ALL {
            assert_eq!(PveVersion::parse(v.release()), Some(v));
            assert_eq!(PveVersion::parse(v.version()), Some(v));
            assert_eq!(v.repoid().len(), 16);
            let json = serde_json::to_string(&v).expect("serializes");
            assert_eq!(json, format!("\"{}\"", v.release()));
        }
        assert_eq!(PveVersion::default(), PveVersion::V9_2);
        assert!(PveVersion::V9_2.is_v9() && PveVersion::V9_1.is_v9() && !PveVersion::V8_4.is_v9());
    }
}
