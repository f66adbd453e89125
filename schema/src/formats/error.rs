//! [`FormatError`]: why a value does not fit a named format or a
//! property-string format. Its text is PVE's, byte for byte: it goes on
//! the wire after `invalid format - `.

use std::collections::BTreeMap;

use crate::propstring::PropStringError;

/// Why a value does not fit a named format or a property-string format;
/// displayed as the text PVE's validator dies with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The value is refused with the validator's message (PVE's text,
    /// most ending in a newline).
    #[error("{0}")]
    Invalid(String),
    /// A property string that does not parse.
    #[error(transparent)]
    PropString(#[from] PropStringError),
    /// A property string whose values do not fit their keys: each key's
    /// message by its path (`net0.bridge`), as parameter validation
    /// words it. Displayed as `format error` and a line per key.
    #[error("format error\n{}", key_lines(.0))]
    Keys(BTreeMap<String, String>),
}

/// `<key>: <message>` lines, each ending in a newline.
fn key_lines(errors: &BTreeMap<String, String>) -> String {
    errors.iter().map(|(k, v)| format!("{k}: {v}\n")).collect()
}
