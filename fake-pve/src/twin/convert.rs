//! Answers turned back into what creates them: a value as a parameter's
//! text, an entry as the parameters of its `POST`/`PUT`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// A scalar as PVE's parameters and config files write it (`1`/`0` for
/// booleans); an object as a property string (`k=v,k2=v2`); a list of
/// scalars joined by `;`.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "1" } else { "0" }.into(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(";"),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", text(v)))
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The text of `key` of an object, when present and not empty.
pub fn field(v: &Value, key: &str) -> Option<String> {
    v.get(key).map(text).filter(|s| !s.is_empty())
}

/// The parameters an entry of a list or a read gives to the call that
/// makes it: every key but `drop` (and `digest`), values as text,
/// empty values left out.
pub fn params(v: &Value, drop: &[&str]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    if let Value::Object(m) = v {
        for (k, val) in m {
            if k == "digest" || drop.contains(&k.as_str()) {
                continue;
            }
            let t = text(val);
            if !t.is_empty() {
                out.insert(k.clone(), json!(t));
            }
        }
    }
    out
}

/// A `setup` call; it may fail (fake-pve may not emulate all it sets:
/// `compare` shows what is missing).
pub fn call(method: &str, path: &str, params: BTreeMap<String, Value>) -> Value {
    json!({ "method": method, "path": path, "params": params, "may_fail": true })
}

/// The items of a list answer (none for anything else).
pub fn items(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A map of texts: every key but `drop` and `digest`.
pub fn texts(v: &Value, drop: &[&str]) -> Map<String, Value> {
    params(v, drop).into_iter().collect()
}

/// A comma- or `;`-separated list, or a JSON list, as its items.
pub fn split_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a.iter().map(text).filter(|s| !s.is_empty()).collect(),
        Some(Value::String(s)) => s
            .split([',', ';', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether a value is true as PVE writes it (`1`, `true`).
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0) != 0,
        Some(Value::String(s)) => s == "1" || s == "true",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(json!("a"), "a")]
    #[case(json!(true), "1")]
    #[case(json!(12), "12")]
    #[case(json!(["a", "b"]), "a;b")]
    #[case(json!({"color-map": "a:b", "ordering": "config"}), "color-map=a:b,ordering=config")]
    fn text_of_values(#[case] v: Value, #[case] want: &str) {
        assert_eq!(text(&v), want);
    }

    #[test]
    fn params_leave_out_digest_dropped_and_empty() {
        let v = json!({"digest": "x", "pos": 0, "action": "ACCEPT", "comment": "", "enable": 1});
        let p = params(&v, &["pos"]);
        assert_eq!(p.keys().collect::<Vec<_>>(), ["action", "enable"]);
        assert_eq!(p["enable"], json!("1"));
    }

    #[rstest]
    #[case(json!("a,b c"), vec!["a", "b", "c"])]
    #[case(json!(["x", "y"]), vec!["x", "y"])]
    #[case(json!(null), vec![])]
    fn lists(#[case] v: Value, #[case] want: Vec<&str>) {
        assert_eq!(split_list(Some(&v)), want);
    }
}
