//! Checks an answer's `data` against the endpoint's `returns` schema, so
//! that tests (and the conformance harness) catch a shape a real PVE
//! would not send.
//!
//! PVE is written in Perl and its answers are loosely typed, so the check
//! is as loose as real answers are: booleans may be `0`/`1`, integers and
//! numbers may come as numeric strings (`/cluster/nextid` answers `"100"`
//! for an integer), and properties the schema does not list are allowed.
//! It reports wrong types and missing properties the schema requires.

use serde_json::{Value, json};

/// The problems found, each as `path: what`; empty when the shape fits.
pub fn check(schema: &Value, data: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    walk(schema, data, "data", &mut problems);
    problems
}

fn numeric_text(s: &str) -> bool {
    !s.is_empty() && s.parse::<f64>().is_ok()
}

/// Numeric text as [`check`] takes it for an integer (`str::parse::<i64>`).
pub const INTEGER_TEXT: &str = "^[+-]?[0-9]+$";

/// Numeric text as [`check`] takes it for a number (`str::parse::<f64>`:
/// decimals, exponents, infinities and NaN).
pub const NUMBER_TEXT: &str = "^[+-]?(([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN])$";

/// The `returns` schema as an OpenAPI 3.0 schema object that accepts
/// exactly what [`check`] accepts, so that a schema-based tool validating
/// answers finds what this module would, and no more: `null` anywhere,
/// `0`/`1` (numbers or text) for a boolean, numeric text for an integer or
/// a number, a number for a string, properties beyond those listed; a
/// property not marked optional is required. Enumerations, patterns and
/// ranges of the answer's values are not declared (PVE's code does not
/// keep to them, and [`check`] does not look at them).
pub fn json_schema(schema: &Value) -> Value {
    let kinds: Vec<&str> = match schema.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => return json!({}),
    };
    let typed = |t: &str| json!({ "type": t, "nullable": true });
    let text = |pattern: &str| json!({ "type": "string", "pattern": pattern, "nullable": true });
    let mut alternatives = Vec::new();
    for kind in &kinds {
        match *kind {
            "null" => {}
            "object" => {
                let mut o = typed("object");
                if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                    let required: Vec<&String> = props
                        .iter()
                        // A `oneOf` chosen by a `type-property` may be
                        // absent for some types: not required here.
                        .filter(|(_, p)| !is_optional(p) && p.get("type-property").is_none())
                        .map(|(name, _)| name)
                        .collect();
                    let converted: serde_json::Map<String, Value> = props
                        .iter()
                        .map(|(name, p)| (name.clone(), json_schema(p)))
                        .collect();
                    o["properties"] = Value::Object(converted);
                    if !required.is_empty() {
                        o["required"] = json!(required);
                    }
                }
                alternatives.push(o);
            }
            "array" => {
                let mut a = typed("array");
                if let Some(items) = schema.get("items") {
                    a["items"] = json_schema(items);
                }
                alternatives.push(a);
            }
            "string" => alternatives.extend([typed("string"), typed("number")]),
            "boolean" => alternatives.extend([
                typed("boolean"),
                json!({ "type": "integer", "minimum": 0, "maximum": 1, "nullable": true }),
                text("^[01]$"),
            ]),
            "integer" => alternatives.extend([typed("integer"), text(INTEGER_TEXT)]),
            "number" => alternatives.extend([typed("number"), text(NUMBER_TEXT)]),
            // `any` and types PVE's schema does not define: anything.
            _ => return json!({}),
        }
    }
    match alternatives.len() {
        // Only `null`, which fits whatever the type.
        0 => json!({}),
        1 => alternatives.remove(0),
        _ => json!({ "anyOf": alternatives }),
    }
}

fn is_optional(schema: &Value) -> bool {
    schema
        .get("optional")
        .is_some_and(|o| o.as_i64() == Some(1) || o.as_bool() == Some(true))
}

/// Whether a `oneOf` property chosen by a `type-property` may be absent
/// from `obj`, as PVE's JSONSchema decides it: when `obj` has no type, or
/// no variant is of its type, it may; otherwise the variant of its type
/// says.
fn optional_for_type(schema: &Value, obj: &serde_json::Map<String, Value>) -> bool {
    let (Some(variants), Some(tp)) = (
        schema.get("oneOf").and_then(Value::as_array),
        schema.get("type-property").and_then(Value::as_str),
    ) else {
        return false;
    };
    let Some(instance) = obj.get(tp).and_then(Value::as_str) else {
        return true;
    };
    variants
        .iter()
        .find(|v| {
            v.get("instance-types")
                .and_then(Value::as_array)
                .is_some_and(|t| t.iter().any(|t| t.as_str() == Some(instance)))
        })
        .is_none_or(is_optional)
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
            let optional = is_optional(sub) || optional_for_type(sub, obj);
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
    use rstest::rstest;

    /// A `oneOf` property of some types only (9.2's fabrics'
    /// `redistribute`) may be absent from an object of another type, and
    /// from one of its types where that variant is optional.
    #[test]
    fn a_property_of_other_types_may_be_absent() {
        let variant = |types: &[&str], optional: bool| {
            let mut v = json!({"type": "array", "instance-types": types});
            if optional {
                v["optional"] = json!(1);
            }
            v
        };
        let schema = |optional: bool| {
            json!({"type": "object", "properties": {
                "protocol": {"type": "string", "optional": 1},
                "redistribute": {"type": "array", "type-property": "protocol",
                    "oneOf": [variant(&["ospf"], optional), variant(&["bgp"], true)]},
            }})
        };
        assert!(check(&schema(true), &json!({"protocol": "openfabric"})).is_empty());
        assert!(check(&schema(true), &json!({"protocol": "ospf"})).is_empty());
        assert!(check(&schema(false), &json!({"protocol": "openfabric"})).is_empty());
        assert!(check(&schema(false), &json!({})).is_empty());
        assert_eq!(
            check(&schema(false), &json!({"protocol": "ospf"})),
            ["data.redistribute: missing"]
        );
        assert_eq!(
            check(
                &schema(true),
                &json!({"protocol": "ospf", "redistribute": 1})
            ),
            ["data.redistribute: expected array, got 1"]
        );
    }

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

    /// The OpenAPI 3.0 keywords [`json_schema`] writes, read as a
    /// validator reads them (independently of [`check`]).
    fn conforms(schema: &Value, v: &Value) -> bool {
        if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
            return any.iter().any(|s| conforms(s, v));
        }
        let Some(t) = schema.get("type").and_then(Value::as_str) else {
            return true;
        };
        if v.is_null() {
            return schema["nullable"] == json!(true);
        }
        let fits = match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            _ => false,
        };
        let in_range = |n: f64| {
            schema["minimum"].as_f64().is_none_or(|m| n >= m)
                && schema["maximum"].as_f64().is_none_or(|m| n <= m)
        };
        let pattern = |s: &str| {
            schema["pattern"]
                .as_str()
                .is_none_or(|p| regex::Regex::new(p).is_ok_and(|re| re.is_match(s)))
        };
        fits && v.as_f64().is_none_or(in_range)
            && v.as_str().is_none_or(pattern)
            && schema["required"].as_array().is_none_or(|r| {
                r.iter()
                    .all(|k| k.as_str().is_some_and(|k| v.get(k).is_some()))
            })
            && schema["properties"].as_object().is_none_or(|props| {
                props
                    .iter()
                    .all(|(k, s)| v.get(k).is_none_or(|x| conforms(s, x)))
            })
            && v.as_array().is_none_or(|a| {
                a.iter()
                    .all(|x| conforms(schema.get("items").unwrap_or(&json!({})), x))
            })
    }

    /// Both readings agree, on values that fit and values that do not.
    #[rstest]
    #[case(json!({"type": "integer"}), json!(5))]
    #[case(json!({"type": "integer"}), json!("-12"))]
    #[case(json!({"type": "integer"}), json!("+3"))]
    #[case(json!({"type": "integer"}), json!("1.5"))]
    #[case(json!({"type": "integer"}), json!(1.5))]
    #[case(json!({"type": "integer"}), json!(null))]
    #[case(json!({"type": "integer"}), json!(true))]
    #[case(json!({"type": "number"}), json!("1e5"))]
    #[case(json!({"type": "number"}), json!(".5"))]
    #[case(json!({"type": "number"}), json!("NaN"))]
    #[case(json!({"type": "number"}), json!("x1"))]
    #[case(json!({"type": "number"}), json!(""))]
    #[case(json!({"type": "boolean"}), json!(1))]
    #[case(json!({"type": "boolean"}), json!("0"))]
    #[case(json!({"type": "boolean"}), json!(2))]
    #[case(json!({"type": "boolean"}), json!("true"))]
    #[case(json!({"type": "boolean"}), json!(false))]
    #[case(json!({"type": "string"}), json!(7))]
    #[case(json!({"type": "string"}), json!([]))]
    #[case(json!({"type": "null"}), json!(null))]
    #[case(json!({"type": "any"}), json!({"a": 1}))]
    #[case(json!({"type": ["integer", "string"]}), json!("x"))]
    #[case(json!({"type": "array", "items": {"type": "integer"}}), json!([1, "2"]))]
    #[case(json!({"type": "array", "items": {"type": "integer"}}), json!([1, "x"]))]
    #[case(json!({"type": "array"}), json!({}))]
    #[case(json!({"type": "object", "properties": {"vmid": {"type": "integer"}, "name": {"type": "string", "optional": 1}}}), json!({"vmid": 100, "extra": true}))]
    #[case(json!({"type": "object", "properties": {"vmid": {"type": "integer"}, "name": {"type": "string", "optional": 1}}}), json!({"name": "x"}))]
    #[case(json!({"type": "object", "properties": {"vmid": {"type": "integer"}}}), json!({"vmid": "x"}))]
    #[case(json!({"type": "object", "properties": {"vmid": {"type": "integer"}}}), json!([]))]
    fn the_json_schema_accepts_what_the_check_accepts(#[case] returns: Value, #[case] v: Value) {
        assert_eq!(
            conforms(&json_schema(&returns), &v),
            check(&returns, &v).is_empty(),
            "{returns} {v}: {}",
            json_schema(&returns)
        );
    }
}
