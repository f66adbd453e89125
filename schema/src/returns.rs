//! Checks an answer's `data` against the endpoint's `returns` schema, so
//! that tests (and the conformance harness) catch a shape a real PVE
//! would not send.
//!
//! PVE is written in Perl and its answers are loosely typed, so the check
//! is as loose as real answers are: booleans may be `0`/`1`, integers and
//! numbers may come as numeric strings (`/cluster/nextid` answers `"100"`
//! for an integer), and properties the schema does not list are allowed.
//! It reports wrong types and missing properties the schema requires.

use serde_json::Value;

/// The problems found, each as `path: what`; empty when the shape fits.
pub fn check(schema: &Value, data: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    walk(schema, data, "data", &mut problems);
    problems
}

fn numeric_text(s: &str) -> bool {
    !s.is_empty() && s.parse::<f64>().is_ok()
}

fn walk(schema: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    let Some(kind) = schema.get("type") else {
        return;
    };
    let kinds: Vec<&str> = match kind {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => return,
    };
    // PVE's formatter sends `null` for an undefined result whatever the
    // declared type, so `null` always fits.
    if v.is_null() {
        return;
    }
    let fits = kinds.iter().any(|k| match *k {
        "any" => true,
        "null" => v.is_null(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string() || v.is_number(),
        "boolean" => {
            v.is_boolean()
                || v.as_i64().is_some_and(|n| n == 0 || n == 1)
                || v.as_str().is_some_and(|s| s == "0" || s == "1")
        }
        "integer" => {
            v.is_i64() || v.is_u64() || v.as_str().is_some_and(|s| s.parse::<i64>().is_ok())
        }
        "number" => v.is_number() || v.as_str().is_some_and(numeric_text),
        _ => true,
    });
    if !fits {
        out.push(format!("{path}: expected {}, got {v}", kinds.join("|")));
        return;
    }
    if let (Some(props), Some(obj)) = (
        schema.get("properties").and_then(Value::as_object),
        v.as_object(),
    ) {
        for (name, sub) in props {
            let optional = sub
                .get("optional")
                .is_some_and(|o| o.as_i64() == Some(1) || o.as_bool() == Some(true));
            match obj.get(name) {
                Some(x) => walk(sub, x, &format!("{path}.{name}"), out),
                None if !optional => out.push(format!("{path}.{name}: missing")),
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            walk(items, x, &format!("{path}[{i}]"), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn loose_like_perl_strict_on_shape() {
        let s = json!({"type": "object", "properties": {
            "vmid": {"type": "integer"}, "name": {"type": "string", "optional": 1},
            "template": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}}
        }});
        assert!(check(&s, &json!({"vmid": "100", "template": 0, "tags": ["a"]})).is_empty());
        assert_eq!(
            check(&s, &json!({"template": 1, "tags": []})),
            ["data.vmid: missing"]
        );
        assert_eq!(
            check(&s, &json!({"vmid": "x", "template": 2, "tags": [{}]})),
            [
                "data.vmid: expected integer, got \"x\"",
                "data.template: expected boolean, got 2",
                "data.tags[0]: expected string, got {}"
            ]
        );
        assert!(check(&json!({"type": "integer"}), &json!("100")).is_empty());
        assert!(!check(&json!({"type": "array"}), &json!({})).is_empty());
    }
}
