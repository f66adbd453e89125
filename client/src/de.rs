//! Lenient readers for PVE's JSON, where booleans are often `0`/`1`,
//! numbers sometimes strings (`/cluster/nextid` answers `"100"`) and
//! integers sometimes floats.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

fn to_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|f| f != 0.0),
        Value::String(s) => match s.trim() {
            "1" | "true" | "on" | "yes" => Some(true),
            "0" | "false" | "off" | "no" | "" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn to_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn to_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn to_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn wrong<E: serde::de::Error>(what: &str, v: &Value) -> E {
    E::custom(format!("expected {what}, got {v}"))
}

macro_rules! readers {
    ($req:ident, $opt:ident, $t:ty, $conv:ident, $what:literal) => {
        /// A required value read leniently.
        #[allow(dead_code)]
        pub fn $req<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
            let v = Value::deserialize(d)?;
            $conv(&v).ok_or_else(|| wrong($what, &v))
        }

        /// An optional value read leniently (`null` is none).
        #[allow(dead_code)]
        pub fn $opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$t>, D::Error> {
            let v = Value::deserialize(d)?;
            if v.is_null() {
                return Ok(None);
            }
            $conv(&v).map(Some).ok_or_else(|| wrong($what, &v))
        }
    };
}

readers!(bool01, opt_bool01, bool, to_bool, "a boolean");
readers!(u64_lenient, opt_u64, u64, to_u64, "an unsigned integer");
readers!(i64_lenient, opt_i64, i64, to_i64, "an integer");
readers!(f64_lenient, opt_f64, f64, to_f64, "a number");

/// A list PVE sends either as text (`"a,b"`, its `-list` formats) or
/// as an array; `null` and `""` are empty.
#[allow(dead_code)]
pub fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let v = Value::deserialize(d)?;
    match v {
        Value::Null => Ok(Vec::new()),
        Value::String(s) => Ok(s
            .split([',', ';', ' '])
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                other => Err(wrong("a string", other)),
            })
            .collect(),
        other => Err(wrong("a list", &other)),
    }
}

/// A value that may be `null` for "none" (`tokens` of a user).
#[allow(dead_code)]
pub fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct T {
        #[serde(default, deserialize_with = "opt_bool01")]
        b: Option<bool>,
        #[serde(deserialize_with = "u64_lenient")]
        n: u64,
    }

    #[test]
    fn pve_numbers_and_booleans() {
        let t: T = serde_json::from_str(r#"{"b":1,"n":"100"}"#).expect("ok");
        assert_eq!((t.b, t.n), (Some(true), 100));
        let t: T = serde_json::from_str(r#"{"b":false,"n":7.0}"#).expect("ok");
        assert_eq!((t.b, t.n), (Some(false), 7));
        let t: T = serde_json::from_str(r#"{"n":1}"#).expect("ok");
        assert_eq!(t.b, None);
        assert!(serde_json::from_str::<T>(r#"{"n":"x"}"#).is_err());
    }

    #[derive(Deserialize)]
    struct L {
        #[serde(default, deserialize_with = "list")]
        l: Vec<String>,
    }

    #[test]
    fn lists_as_text_or_arrays() {
        let l = |j: &str| serde_json::from_str::<L>(j).map(|l| l.l);
        assert_eq!(l(r#"{"l":"a,b"}"#).expect("ok"), ["a", "b"]);
        assert_eq!(l(r#"{"l":["a","b"]}"#).expect("ok"), ["a", "b"]);
        assert!(l(r#"{"l":""}"#).expect("ok").is_empty());
        assert!(l(r#"{"l":null}"#).expect("ok").is_empty());
        assert!(l(r#"{}"#).expect("ok").is_empty());
        assert!(l(r#"{"l":[1]}"#).is_err());
    }
}
