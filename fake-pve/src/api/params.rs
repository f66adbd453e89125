//! Request parameters as PVE reads them: path, query and body merged into
//! one map, with typed getters that refuse bad values in PVE's words
//! (pve-common `JSONSchema.pm`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::{Error, Result};

/// The merged parameters of one request.
#[derive(Debug, Clone, Default)]
pub struct Params {
    map: std::sync::Arc<BTreeMap<String, Value>>,
}

impl Params {
    /// Parameters from a map.
    pub fn new(map: BTreeMap<String, Value>) -> Self {
        Self::shared(std::sync::Arc::new(map))
    }

    /// Parameters checked once and shared (see the pipeline's route
    /// cache).
    pub fn shared(map: std::sync::Arc<BTreeMap<String, Value>>) -> Self {
        Self { map }
    }

    /// The raw value.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// Every parameter name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// Every parameter, as a map of its own.
    pub fn to_map(&self) -> BTreeMap<String, Value> {
        (*self.map).clone()
    }

    /// Which SDN configuration a read asks for (`running`, `pending`).
    ///
    /// # Errors
    /// 400 when either is not a boolean.
    pub fn sdn_view(&self) -> Result<crate::model::sdn::View> {
        Ok(crate::model::sdn::View::of(
            self.bool("running")?.unwrap_or(false),
            self.bool("pending")?.unwrap_or(false),
        ))
    }

    /// The value as text (numbers and booleans as PVE prints them).
    pub fn str(&self, name: &str) -> Option<String> {
        self.map.get(name).map(value_text)
    }

    /// A required string.
    ///
    /// # Errors
    /// 400 `property is missing and it is not optional`.
    pub fn req_str(&self, name: &str) -> Result<String> {
        self.str(name).ok_or_else(|| missing(name))
    }

    /// An optional boolean: `1`/`0` or JSON `true`/`false`; PVE refuses
    /// `true`, `on` and `yes` at the top level.
    ///
    /// # Errors
    /// 400 `type check ('boolean') failed - got '<v>'`.
    pub fn bool(&self, name: &str) -> Result<Option<bool>> {
        let Some(v) = self.map.get(name) else {
            return Ok(None);
        };
        match v {
            Value::Bool(b) => Ok(Some(*b)),
            Value::Number(n) if n.as_i64() == Some(1) => Ok(Some(true)),
            Value::Number(n) if n.as_i64() == Some(0) => Ok(Some(false)),
            other => match parse_bool(&value_text(other)) {
                Some(b) => Ok(Some(b)),
                None => Err(Error::invalid(
                    name,
                    format!(
                        "type check ('boolean') failed - got '{}'",
                        value_text(other)
                    ),
                )),
            },
        }
    }

    /// An optional integer within `min..=max`.
    ///
    /// # Errors
    /// 400 with PVE's type or range message.
    pub fn int(&self, name: &str, min: Option<i64>, max: Option<i64>) -> Result<Option<i64>> {
        let Some(v) = self.map.get(name) else {
            return Ok(None);
        };
        let n = match v {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => parse_int(s),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
        .ok_or_else(|| {
            Error::invalid(
                name,
                format!("type check ('integer') failed - got '{}'", value_text(v)),
            )
        })?;
        if let Some(m) = min
            && n < m
        {
            return Err(Error::invalid(
                name,
                format!("value must have a minimum value of {m}"),
            ));
        }
        if let Some(m) = max
            && n > m
        {
            return Err(Error::invalid(
                name,
                format!("value must have a maximum value of {m}"),
            ));
        }
        Ok(Some(n))
    }

    /// An optional string that must be one of `values`.
    ///
    /// # Errors
    /// 400 `value '<v>' does not have a value in the enumeration '<a, b>'`.
    pub fn enumeration(&self, name: &str, values: &[&str]) -> Result<Option<String>> {
        match self.str(name) {
            Some(v) if !values.contains(&v.as_str()) => Err(Error::invalid(
                name,
                format!(
                    "value '{v}' does not have a value in the enumeration '{}'",
                    values.join(", ")
                ),
            )),
            other => Ok(other),
        }
    }
}

/// The 400 for a missing required parameter.
pub fn missing(name: &str) -> Error {
    Error::invalid(name, "property is missing and it is not optional")
}

/// A value as PVE sees it in text form.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "1" } else { "0" }.into(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// PVE's top-level boolean: exactly `1` or `0` (JSON `true`/`false` are
/// read before this).
fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// PVE's integer: optional sign and decimal digits.
fn parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn p(v: Value) -> Params {
        Params::new(BTreeMap::from([("x".to_string(), v)]))
    }

    #[rstest]
    #[case(json!("1"), Some(true))]
    #[case(json!("0"), Some(false))]
    #[case(json!(true), Some(true))]
    #[case(json!(0), Some(false))]
    #[case(json!(false), Some(false))]
    fn booleans(#[case] v: Value, #[case] want: Option<bool>) {
        assert_eq!(p(v).bool("x").expect("valid"), want);
    }

    #[rstest]
    #[case(json!("True"), "type check ('boolean') failed - got 'True'")]
    #[case(json!("2"), "type check ('boolean') failed - got '2'")]
    #[case(json!(""), "type check ('boolean') failed - got ''")]
    #[case(json!("true"), "type check ('boolean') failed - got 'true'")]
    #[case(json!("on"), "type check ('boolean') failed - got 'on'")]
    fn bad_booleans(#[case] v: Value, #[case] msg: &str) {
        let Err(Error::Invalid(e)) = p(v).bool("x") else {
            panic!("must fail")
        };
        assert_eq!(e["x"], msg);
    }

    #[rstest]
    #[case(json!("42"), Ok(42))]
    #[case(json!(42), Ok(42))]
    #[case(json!("-3"), Err("value must have a minimum value of 0"))]
    #[case(json!("4.5"), Err("type check ('integer') failed - got '4.5'"))]
    #[case(json!("abc"), Err("type check ('integer') failed - got 'abc'"))]
    #[case(json!("1001"), Err("value must have a maximum value of 1000"))]
    fn integers(#[case] v: Value, #[case] want: std::result::Result<i64, &str>) {
        match (p(v).int("x", Some(0), Some(1000)), want) {
            (Ok(got), Ok(w)) => assert_eq!(got, Some(w)),
            (Err(Error::Invalid(e)), Err(w)) => assert_eq!(e["x"], w),
            (got, w) => panic!("{got:?} vs {w:?}"),
        }
    }

    #[test]
    fn enumerations() {
        let Err(Error::Invalid(e)) = p(json!("pool")).enumeration("x", &["vm", "node"]) else {
            panic!("must fail")
        };
        assert_eq!(
            e["x"],
            "value 'pool' does not have a value in the enumeration 'vm, node'"
        );
    }
}
