//! A value as PVE's configuration files keep it once parsed: a number
//! (a flag is 0 or 1) or text, as the schema types the key
//! (`domains.cfg`, `jobs.cfg`, the firewall's files).

use serde::{Deserialize, Serialize};

/// A number or text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ConfValue {
    /// A number or a flag.
    Int(i64),
    /// Text.
    Text(String),
}

impl ConfValue {
    /// The number, if it is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Self::Int(n) => Some(*n),
            Self::Text(_) => None,
        }
    }

    /// The text, if it is text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Int(_) => None,
            Self::Text(t) => Some(t),
        }
    }

    /// Text as it is, a number written out.
    pub fn text(&self) -> String {
        self.to_string()
    }
}

impl From<&str> for ConfValue {
    fn from(t: &str) -> Self {
        Self::Text(t.to_string())
    }
}

impl From<String> for ConfValue {
    fn from(t: String) -> Self {
        Self::Text(t)
    }
}

impl From<i64> for ConfValue {
    fn from(n: i64) -> Self {
        Self::Int(n)
    }
}

impl std::fmt::Display for ConfValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Int(n) => write!(f, "{n}"),
            Self::Text(t) => f.write_str(t),
        }
    }
}

/// What a saved world or a scenario may give: a number, a flag as a
/// boolean (kept as 0 or 1) or text.
#[derive(Deserialize)]
#[serde(untagged)]
enum Given {
    Int(i64),
    Bool(bool),
    Text(String),
}

impl<'de> Deserialize<'de> for ConfValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Given::deserialize(d)? {
            Given::Int(n) => Self::Int(n),
            Given::Bool(b) => Self::Int(i64::from(b)),
            Given::Text(t) => Self::Text(t),
        })
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::ConfValue;

    #[rstest]
    #[case("7", ConfValue::Int(7))]
    #[case("true", ConfValue::Int(1))]
    #[case("false", ConfValue::Int(0))]
    #[case("\"ldap\"", ConfValue::Text("ldap".into()))]
    fn a_value_reads_as_a_number_or_text(#[case] json: &str, #[case] want: ConfValue) {
        let got: ConfValue = serde_json::from_str(json).expect("parse");
        assert_eq!(got, want);
    }

    #[rstest]
    #[case(ConfValue::Int(389), "389")]
    #[case(ConfValue::Text("dc=example".into()), "\"dc=example\"")]
    fn a_value_saves_as_the_json_it_came_from(#[case] v: ConfValue, #[case] json: &str) {
        assert_eq!(serde_json::to_string(&v).expect("save"), json);
        assert_eq!(serde_json::from_str::<ConfValue>(json).expect("back"), v);
    }

    #[test]
    fn a_list_is_refused() {
        assert!(serde_json::from_str::<ConfValue>("[1]").is_err());
    }
}
