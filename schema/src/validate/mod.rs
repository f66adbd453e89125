//! Parameter validation as PVE's JSONSchema does it (pve-common
//! `JSONSchema.pm`: `check_object`, `check_prop`, `check_type`,
//! `check_format`), with its messages, before any handler runs.
//!
//! Per property the order is PVE's: type, format, pattern, maxLength,
//! minLength, maximum, minimum, enum; one error per property, several
//! properties at once.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Endpoint, Format, Group, Prop, formats, propstring};
use crate::formats::FormatError;

/// The refusal of a parameter the schema does not define.
const UNKNOWN: &str =
    "property is not defined in schema and the schema does not allow additional properties";

/// Errors by parameter path, as PVE's `errors` member.
pub type Errors = BTreeMap<String, String>;

/// Validates the merged parameters of a request against an endpoint.
///
/// # Errors
/// Every parameter error, keyed by parameter.
pub fn validate(ep: &Endpoint, params: &BTreeMap<String, Value>) -> Result<(), Errors> {
    let mut errors = Errors::new();
    if let Some(groups) = &ep.parameters.all_of {
        check_all_of(groups, params, &mut errors);
    } else {
        check_object(
            None,
            &ep.parameters.properties,
            Some(ep.parameters.always_checked()),
            params,
            &mut errors,
            None,
        );
    }
    if ep.parameters.additional.is_none() && ep.parameters.all_of.is_none() {
        // A method that does not set `additionalProperties` (the 9.x SDN
        // fabrics') takes other parameters too: PVE only refuses them
        // when it is set and false.
        errors.retain(|k, v| !(params.contains_key(k) && v == UNKNOWN));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// PVE's `$normalize_legacy_param_formats` (pve-common
/// `RESTHandler.pm`), as its handler runs it before validation: a list
/// given for a string parameter of a `-list` format (a form's repeated
/// key, `content=images&content=rootdir`) becomes its items joined by
/// commas, and a single value of an `array` parameter a list of one,
/// since `www-form-urlencoded` cannot say "a list of one". A value Perl
/// takes for false (`""`, `"0"`, 0, `false`) is left as it is.
pub fn normalize(ep: &Endpoint, params: &mut BTreeMap<String, Value>) {
    for (key, v) in params.iter_mut() {
        let Some(prop) = lookup(&ep.parameters.properties, key) else {
            continue;
        };
        let kind = prop.kind.as_deref();
        match v {
            Value::Array(items)
                if kind == Some("string")
                    && matches!(&prop.format, Some(Format::Named(f)) if f.ends_with("-list")) =>
            {
                let joined: Vec<String> = items
                    .iter()
                    .map(|i| scalar_text(i).map_or_else(|| i.to_string(), Cow::into_owned))
                    .collect();
                *v = Value::String(joined.join(","));
            }
            Value::Array(_) | Value::Object(_) | Value::Null => {}
            Value::String(s) if s.is_empty() || s == "0" => {}
            Value::Bool(false) => {}
            Value::Number(n) if n.as_f64() == Some(0.0) => {}
            scalar if kind == Some("array") => *scalar = Value::Array(vec![scalar.take()]),
            _ => {}
        }
    }
}

/// The value of the property that picks a `oneOf` variant
/// (`get_instance_type`).
fn instance_type(prop: &Prop, value: &BTreeMap<String, Value>) -> Option<String> {
    let tp = prop.type_property.as_deref()?;
    value.get(tp).and_then(scalar_text).map(Cow::into_owned)
}

/// The property schema for `key`, resolving indexed names (`net3` is
/// `net[n]` when 3 is below its count).
pub fn lookup<'a>(props: &'a BTreeMap<String, Prop>, key: &str) -> Option<&'a Prop> {
    props.get(key).or_else(|| indexed(props, key))
}

/// The `name[n]` property an indexed name such as `net3` stands for.
fn indexed<'a>(props: &'a BTreeMap<String, Prop>, key: &str) -> Option<&'a Prop> {
    let digits = key.len() - key.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits == key.len() {
        return None;
    }
    let (base, index) = key.split_at(key.len() - digits);
    if index.len() > 1 && index.starts_with('0') {
        return None;
    }
    let p = props.get(&format!("{base}[n]"))?;
    let n: u32 = index.parse().ok()?;
    (n < p.max_index.unwrap_or(0)).then_some(p)
}

fn add_error(errors: &mut Errors, path: &str, msg: &str) {
    let path = if path.is_empty() { "_root" } else { path };
    match errors.get_mut(path) {
        // PVE joins with a literal backslash-n.
        Some(e) => {
            e.push_str("\\n");
            e.push_str(msg);
        }
        None => {
            errors.insert(path.to_string(), msg.to_string());
        }
    }
}

/// A property's path for its errors: its name at the top level (not
/// copied), `outer.name` below.
fn join<'a>(path: Option<&str>, key: &'a str) -> Cow<'a, str> {
    match path {
        Some(p) => Cow::Owned(format!("{p}.{key}")),
        None => Cow::Borrowed(key),
    }
}

/// `check_all_of`: every group is checked; a parameter is refused as
/// unknown only when no group defines it (the groups collect what they
/// do not know, and what all of them left is refused).
fn check_all_of(groups: &[Group], value: &BTreeMap<String, Value>, errors: &mut Errors) {
    let mut everywhere: Option<BTreeSet<String>> = None;
    for g in groups {
        let mut here = BTreeSet::new();
        check_group(g, value, errors, &mut here);
        everywhere = Some(match everywhere {
            None => here,
            Some(e) => e.intersection(&here).cloned().collect(),
        });
    }
    for k in everywhere.unwrap_or_default() {
        add_error(errors, &k, UNKNOWN);
    }
}

/// One group of an `allOf`: its own properties, or (`check_one_of`) the
/// variant its type property picks, whose errors are named
/// `oneOf[<type>].<key>`. Without a type (or with one its schema
/// refuses) every other parameter counts as unknown.
fn check_group(
    g: &Group,
    value: &BTreeMap<String, Value>,
    errors: &mut Errors,
    unknown: &mut BTreeSet<String>,
) {
    let Some(variants) = &g.one_of else {
        // A group open to other parameters leaves them to the others.
        let mut ignored = BTreeSet::new();
        let collect = if g.closed() { unknown } else { &mut ignored };
        check_object(None, &g.properties, None, value, errors, Some(collect));
        return;
    };
    let (Some(tp), Some(ts)) = (g.type_property.as_deref(), g.type_schema.as_ref()) else {
        return;
    };
    let others = || value.keys().filter(|k| k.as_str() != tp).cloned();
    let Some(it) = value.get(tp).and_then(scalar_text).map(Cow::into_owned) else {
        unknown.extend(others());
        if !g.optional {
            check_prop(None, ts, tp, errors, None);
        }
        return;
    };
    let mut type_errors = Errors::new();
    check_prop(value.get(tp), ts, tp, &mut type_errors, None);
    if !type_errors.is_empty() {
        for (k, v) in type_errors {
            add_error(errors, &k, &v);
        }
        unknown.extend(others());
        return;
    }
    match variants
        .iter()
        .find(|v| v.instance_type.as_deref() == Some(it.as_str()))
    {
        Some(v) => {
            let path = format!("oneOf[{it}]");
            let mut here = BTreeSet::new();
            check_object(
                Some(&path),
                &v.properties,
                None,
                value,
                errors,
                Some(&mut here),
            );
            // the enclosing oneOf owns the type property
            here.remove(tp);
            if v.closed() {
                unknown.extend(here);
            }
        }
        None => add_error(errors, "", &format!("'{it}' is not a valid oneOf variant")),
    }
}

/// `check_object`; with `collect`, the parameters it does not define are
/// gathered there instead of refused (an `allOf` group's).
fn check_object(
    path: Option<&str>,
    props: &BTreeMap<String, Prop>,
    always: Option<&[String]>,
    value: &BTreeMap<String, Value>,
    errors: &mut Errors,
    mut collect: Option<&mut BTreeSet<String>>,
) {
    // Each property of the schema is checked, given or not; but one that
    // may be left out, and whose variants do not depend on another
    // property, has nothing to check unless it is given (most of a
    // method's properties, in most requests): those are checked with
    // the parameters given, below, not looked for one by one. A
    // method's own list of the others is found once
    // ([`crate::Parameters::always_checked`]).
    let mut check_always = |key: &str, prop: &Prop| {
        let it = instance_type(prop, value);
        check_prop(
            value.get(key),
            prop,
            &join(path, key),
            errors,
            it.as_deref(),
        );
    };
    match always {
        Some(keys) => {
            for key in keys {
                if let Some(prop) = props.get(key) {
                    check_always(key, prop);
                }
            }
        }
        None => {
            for (key, prop) in props {
                if !key.ends_with("[n]") && prop.always_checked() {
                    check_always(key, prop);
                }
            }
        }
    }
    for (key, v) in value {
        // Looked up once: by its own name, else as an indexed one.
        let (prop, own_name) = match props.get(key) {
            Some(prop) => (prop, true),
            None => match indexed(props, key) {
                Some(prop) => (prop, false),
                None => {
                    match collect.as_deref_mut() {
                        Some(c) => {
                            c.insert(key.clone());
                        }
                        None => add_error(errors, &join(path, key), UNKNOWN),
                    }
                    continue;
                }
            },
        };
        if own_name {
            if !key.ends_with("[n]") && !prop.always_checked() {
                let it = instance_type(prop, value);
                check_prop(Some(v), prop, &join(path, key), errors, it.as_deref());
            }
        } else if key.contains(|c: char| c.is_ascii_digit()) {
            check_prop(Some(v), prop, &join(path, key), errors, None);
        }
        if let Some(Value::String(req)) = &prop.requires
            && !value.contains_key(req)
        {
            add_error(
                errors,
                &join(path, req),
                &format!("missing property required by '{}'", join(path, key)),
            );
        }
    }
}

/// Perl's `is_number`.
fn is_number(v: &str) -> bool {
    let s = v.strip_prefix(['+', '-']).unwrap_or(v);
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
    let mant_ok = match mant.split_once('.') {
        Some((a, b)) => (digits(a) && (b.is_empty() || digits(b))) || (a.is_empty() && digits(b)),
        None => digits(mant),
    };
    let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    mant_ok && exp_ok
}

fn is_integer(v: &str) -> bool {
    let s = v.strip_prefix(['+', '-']).unwrap_or(v);
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

fn scalar_text(v: &Value) -> Option<Cow<'_, str>> {
    match v {
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Number(n) => Some(Cow::Owned(n.to_string())),
        _ => None,
    }
}

fn perl_ref(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "ARRAY",
        Value::Object(_) => "HASH",
        Value::Bool(_) => "JSON::PP::Boolean",
        _ => "",
    }
}

fn check_type(path: &str, kind: Option<&str>, v: &Value, errors: &mut Errors) -> bool {
    let Some(kind) = kind else { return true };
    match kind {
        "any" => true,
        "array" => {
            let ok = v.is_array();
            if !ok {
                add_error(errors, path, "type check ('array') failed");
            }
            ok
        }
        "object" => {
            let ok = v.is_object();
            if !ok {
                add_error(errors, path, "type check ('object') failed");
            }
            ok
        }
        _ => {
            if let Some(r) = Some(perl_ref(v)).filter(|r| !r.is_empty()) {
                if kind == "boolean" && v.is_boolean() {
                    return true;
                }
                add_error(
                    errors,
                    path,
                    &format!("type check ('{kind}') failed - got {r}"),
                );
                return false;
            }
            let text = scalar_text(v).unwrap_or_default();
            let ok = match kind {
                "boolean" => text == "1" || text == "0",
                "integer" => is_integer(&text),
                "number" => is_number(&text),
                _ => true,
            };
            if !ok {
                add_error(
                    errors,
                    path,
                    &format!("type check ('{kind}') failed - got '{text}'"),
                );
            }
            ok
        }
    }
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn check_prop(
    value: Option<&Value>,
    prop: &Prop,
    path: &str,
    errors: &mut Errors,
    instance: Option<&str>,
) {
    // A property that depends on a type property: only the variant for
    // the instance's type is checked, and one that does not apply to it
    // may be absent.
    let mut optional_for_type = false;
    if let Some(variants) = &prop.one_of {
        if prop.type_property.is_some() {
            optional_for_type = true;
            if let Some(it) = instance {
                for variant in variants {
                    let applies = variant
                        .instance_types
                        .as_ref()
                        .is_some_and(|t| t.iter().any(|x| x == it));
                    if applies {
                        optional_for_type = variant.optional;
                        check_prop(value, variant, path, errors, None);
                    }
                }
            }
        }
    } else if let Some(it) = instance
        && !prop
            .instance_types
            .as_ref()
            .is_some_and(|t| t.iter().any(|x| x == it))
    {
        optional_for_type = true;
    }
    if prop.alias.is_some() {
        return;
    }
    let Some(v) = value.filter(|v| !v.is_null()) else {
        if !prop.optional && !optional_for_type {
            add_error(errors, path, "property is missing and it is not optional");
        }
        return;
    };
    if !check_type(path, prop.kind.as_deref(), v, errors) {
        return;
    }
    if let Value::Array(items) = v {
        if let Some(item) = &prop.items {
            for (i, el) in items.iter().enumerate() {
                check_prop(Some(el), item, &format!("{path}[{i}]"), errors, None);
            }
        }
        return;
    }
    if v.is_object() {
        return;
    }
    let text = match v {
        Value::Bool(b) => Cow::Borrowed(if *b { "1" } else { "0" }),
        other => scalar_text(other).unwrap_or_default(),
    };
    if let Some(format) = &prop.format
        && let Err(msg) = check_format(format, &text, path).and_then(|()| {
            // The validator PVE attaches to a registered property string.
            match (format, prop.validator) {
                (Format::Object(keys), Some(validator)) => {
                    validator(&propstring::parse(keys, &text)?)
                }
                _ => Ok(()),
            }
        })
    {
        add_error(errors, path, &format!("invalid format - {msg}"));
        return;
    }
    if prop.pattern.is_some()
        && let Some(re) = prop.regex()
        && !re.is_match(&text)
    {
        add_error(errors, path, "value does not match the regex pattern");
        return;
    }
    let len = text.chars().count();
    if let Some(max) = prop.max_length
        && len > max
    {
        add_error(
            errors,
            path,
            &format!("value may only be {max} characters long"),
        );
        return;
    }
    if let Some(min) = prop.min_length
        && len < min
    {
        add_error(
            errors,
            path,
            &format!("value must be at least {min} characters long"),
        );
        return;
    }
    if is_number(&text)
        && let Ok(n) = text.parse::<f64>()
    {
        if let Some(max) = prop.maximum
            && n > max
        {
            add_error(
                errors,
                path,
                &format!("value must have a maximum value of {}", num(max)),
            );
            return;
        }
        if let Some(min) = prop.minimum
            && n < min
        {
            add_error(
                errors,
                path,
                &format!("value must have a minimum value of {}", num(min)),
            );
            return;
        }
    }
    if let Some(values) = &prop.enumeration
        && !values
            .iter()
            .any(|e| scalar_text(e).as_deref() == Some(&*text))
    {
        let list: Vec<Cow<'_, str>> = values.iter().filter_map(scalar_text).collect();
        add_error(
            errors,
            path,
            &format!(
                "value '{text}' does not have a value in the enumeration '{}'",
                list.join(", ")
            ),
        );
    }
}

/// Checks a value against a named or property-string format.
///
/// # Errors
/// Why the value does not fit; it displays as the text that follows
/// `invalid format - ` in PVE's message.
pub fn check_format(format: &Format, value: &str, path: &str) -> Result<(), FormatError> {
    match format {
        Format::Named(name) => formats::check(name, value),
        Format::Object(keys) => {
            let parsed = propstring::parse(keys, value)?;
            let as_values: BTreeMap<String, Value> = parsed
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            let mut errors = Errors::new();
            check_object(
                (!path.is_empty()).then_some(path),
                keys,
                None,
                &as_values,
                &mut errors,
                None,
            );
            if errors.is_empty() {
                return Ok(());
            }
            Err(FormatError::Keys(errors))
        }
    }
}

#[cfg(test)]
mod tests;
