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
mod tests {
    use super::*;
    use crate::Release;
    use crate::spec;
    use rstest::rstest;
    use serde_json::json;

    fn run(version: Release, method: &str, path: &str, params: Value) -> Result<(), Errors> {
        let ep = spec(version).endpoint(method, path).expect("endpoint");
        let map: BTreeMap<String, Value> = serde_json::from_value(params).expect("object");
        validate(ep, &map)
    }

    fn err(params: Value) -> Errors {
        run(Release::V9_1, "POST", "/nodes/{node}/qemu", params).expect_err("refused")
    }

    #[test]
    fn a_good_create_passes() {
        run(
            Release::V9_1,
            "POST",
            "/nodes/{node}/qemu",
            json!({"node": "pve", "vmid": "100", "name": "web", "memory": "2048", "cores": "2",
                   "net0": "virtio,bridge=vmbr0,firewall=1", "scsi0": "local-lvm:32,discard=on,ssd=1",
                   "ostype": "l26", "onboot": "1", "agent": "1", "ipconfig0": "ip=dhcp"}),
        )
        .expect("valid");
    }

    #[rstest]
    #[case(json!({"node": "pve"}), "vmid", "property is missing and it is not optional")]
    #[case(json!({"node": "pve", "vmid": "abc"}), "vmid", "type check ('integer') failed - got 'abc'")]
    #[case(json!({"node": "pve", "vmid": "99"}), "vmid", "invalid format - value does not look like a valid VM ID\n")]
    #[case(json!({"node": "pve", "vmid": 100, "cores": "0"}), "cores", "value must have a minimum value of 1")]
    #[case(json!({"node": "pve", "vmid": 100, "onboot": "yes"}), "onboot", "type check ('boolean') failed - got 'yes'")]
    #[case(json!({"node": "pve", "vmid": 100, "onboot": [1]}), "onboot", "type check ('boolean') failed - got ARRAY")]
    #[case(json!({"node": "pve", "vmid": 100, "ostype": "dos"}), "ostype", "value 'dos' does not have a value in the enumeration 'other, wxp, w2k, w2k3, w2k8, wvista, win7, win8, win10, win11, l24, l26, solaris'")]
    #[case(json!({"node": "pve", "vmid": 100, "colour": "red"}), "colour", "property is not defined in schema and the schema does not allow additional properties")]
    #[case(json!({"node": "pve", "vmid": 100, "net32": "virtio"}), "net32", "property is not defined in schema and the schema does not allow additional properties")]
    #[case(json!({"node": "pve", "vmid": 100, "net01": "virtio"}), "net01", "property is not defined in schema and the schema does not allow additional properties")]
    #[case(json!({"node": "pve", "vmid": 100, "net0": "virtio,colour=red"}), "net0", "invalid format - invalid key in comma-separated list property: colour\n")]
    #[case(json!({"node": "pve", "vmid": 100, "net0": "virtio,bridge=vm br"}), "net0", "invalid format - format error\nnet0.bridge: invalid format - invalid bridge ID 'vm br'\n\n")]
    #[case(json!({"node": "pve", "vmid": 100, "net0": "virtio,tag=5000"}), "net0", "invalid format - format error\nnet0.tag: value must have a maximum value of 4094\n")]
    #[case(json!({"node": "pve", "vmid": 100, "net0": "bridge=vmbr0"}), "net0", "invalid format - format error\nnet0.model: property is missing and it is not optional\n")]
    #[case(json!({"node": "pve", "vmid": 100, "name": "a b"}), "name", "invalid format - value does not look like a valid DNS name\n")]
    #[case(json!({"node": "pve", "vmid": 100, "ipconfig0": "ip=garbage"}), "ipconfig0", "invalid format - format error\nipconfig0.ip: invalid format - value does not look like a valid ipv4 network configuration\n\n")]
    #[case(json!({"node": "pve", "vmid": 100, "ipconfig0": "mtu=9000"}), "ipconfig0", "invalid format - invalid key in comma-separated list property: mtu\n")]
    fn create_vm_refusals(#[case] params: Value, #[case] key: &str, #[case] msg: &str) {
        let e = err(params);
        assert_eq!(e.get(key).map(String::as_str), Some(msg), "{e:?}");
    }

    /// The properties checked whether given or not are exactly those
    /// the schema does not let be left out, or whose variants depend on
    /// another property.
    #[rstest]
    #[case(Release::V8_4, "POST", "/nodes/{node}/qemu", &["node", "vmid"])]
    #[case(Release::V9_1, "POST", "/nodes/{node}/qemu", &["node", "vmid"])]
    #[case(Release::V9_1, "PUT", "/nodes/{node}/qemu/{vmid}/config", &["node", "vmid"])]
    #[case(Release::V9_1, "POST", "/nodes/{node}/qemu/{vmid}/status/start", &["node", "vmid"])]
    #[case(Release::V9_1, "POST", "/access/ticket", &["password", "username"])]
    #[case(Release::V9_1, "GET", "/version", &[])]
    fn a_method_s_always_checked_properties(
        #[case] version: Release,
        #[case] method: &str,
        #[case] path: &str,
        #[case] expected: &[&str],
    ) {
        let ep = spec(version).endpoint(method, path).expect("endpoint");
        assert_eq!(ep.parameters.always_checked(), expected);
        let by_scan: Vec<&str> = ep
            .parameters
            .properties
            .iter()
            .filter(|(k, p)| !k.ends_with("[n]") && (!p.optional || p.one_of.is_some()))
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(by_scan, expected);
    }

    #[test]
    fn registered_formats_pass_when_valid() {
        run(
            Release::V9_1,
            "POST",
            "/nodes/{node}/qemu",
            json!({"node": "pve", "vmid": "100", "cpu": "host,flags=+aes;-pcid",
                   "boot": "order=scsi0;ide2;net0", "startup": "order=1,up=30",
                   "cdrom": "local:iso/debian.iso", "hotplug": "network,disk",
                   "watchdog": "i6300esb,action=reset", "rng0": "source=/dev/urandom",
                   "affinity": "0-3", "bootdisk": "scsi0", "ipconfig0": "ip=10.0.0.5/24,gw=10.0.0.1"}),
        )
        .expect("valid");
        run(
            Release::V8_4,
            "POST",
            "/nodes/{node}/qemu",
            json!({"node": "pve", "vmid": "100", "cpu": "x86-64-v2-AES"}),
        )
        .expect("valid");
    }

    #[rstest]
    #[case(json!({"node": "pve", "vmid": 100, "boot": "order=scsi0;foo"}), "boot", "invalid format - format error\nboot.order: invalid format - invalid boot device 'foo'\n\n")]
    #[case(json!({"node": "pve", "vmid": 100, "startup": "order=1,up=x"}), "startup", "invalid format - unable to parse startup options\n")]
    #[case(json!({"node": "pve", "vmid": 100, "cpu": "host,flags=+avx2"}), "cpu", "invalid format - VM-specific CPU flags must be a subset of: nested-virt, md-clear, pcid, spec-ctrl, ssbd, ibpb, virt-ssbd, amd-ssbd, amd-no-ssb, pdpe1gb, hv-tlbflush, hv-evmcs, aes\n")]
    #[case(json!({"node": "pve", "vmid": 100, "cpu": "host,flags=aes"}), "cpu", "invalid format - format error\ncpu.flags: value does not match the regex pattern\n")]
    #[case(json!({"node": "pve", "vmid": 100, "cpu": "host,colour=red"}), "cpu", "invalid format - invalid key in comma-separated list property: colour\n")]
    #[case(json!({"node": "pve", "vmid": 100, "cdrom": "debian.iso"}), "cdrom", "invalid format - format error\ncdrom.file: invalid format - unable to parse volume ID 'debian.iso'\n\n")]
    #[case(json!({"node": "pve", "vmid": 100, "hotplug": "gpu"}), "hotplug", "invalid format - unable to parse hotplug option\n")]
    #[case(json!({"node": "pve", "vmid": 100, "affinity": "3-1"}), "affinity", "invalid format - unable to parse cpuset option\n")]
    #[case(json!({"node": "pve", "vmid": 100, "ipconfig0": "gw=10.0.0.1"}), "ipconfig0", "invalid format - format error\nipconfig0.ip: missing property required by 'ipconfig0.gw'\n")]
    fn registered_format_refusals(#[case] params: Value, #[case] key: &str, #[case] msg: &str) {
        let e = err(params);
        assert_eq!(e.get(key).map(String::as_str), Some(msg), "{e:?}");
    }

    /// The models and the qemu-server a `cpu` is checked against, as
    /// fake-pve hands them over for a 9.2 world with one custom model.
    fn nine_two() -> crate::registered::CpuContext {
        crate::registered::CpuContext {
            models: vec!["host".into(), "EPYC-Turin".into()],
            custom: vec!["fast".into()],
            qemu_server_9_2: true,
        }
    }

    #[rstest]
    #[case("custom-fast,flags=+aes", None)]
    #[case("EPYC-Turin,level=30", None)]
    #[case(
        "custom-slow",
        Some("invalid format - Custom cputype 'slow' not found\n")
    )]
    #[case(
        "Skylake-Server",
        Some(
            "invalid format - Built-in cputype 'Skylake-Server' is not defined (missing 'custom-' prefix?)\n"
        )
    )]
    #[case(
        "host,flags=+avx2",
        Some(
            "invalid format - VM-specific CPU flags must be a subset of: aes, amd-no-ssb, amd-ssbd, hv-evmcs, hv-tlbflush, ibpb, md-clear, nested-virt, pcid, pdpe1gb, spec-ctrl, ssbd, virt-ssbd\n"
        )
    )]
    fn the_cpu_is_checked_against_the_world_s_models(
        #[case] cpu: &str,
        #[case] refusal: Option<&str>,
    ) {
        let params = json!({"node": "pve", "vmid": 100, "cpu": cpu});
        let got = crate::registered::with_cpu_context(nine_two(), || {
            run(Release::V9_1, "POST", "/nodes/{node}/qemu", params)
        });
        match refusal {
            None => got.expect("valid"),
            Some(msg) => {
                let e = got.expect_err("refused");
                assert_eq!(e.get("cpu").map(String::as_str), Some(msg), "{e:?}");
            }
        }
    }

    #[test]
    fn level_is_a_key_of_9_2_only() {
        let e = err(json!({"node": "pve", "vmid": 100, "cpu": "host,level=30"}));
        assert_eq!(
            e.get("cpu").map(String::as_str),
            Some("invalid format - invalid key in comma-separated list property: level\n")
        );
        // The context goes when the validation ends.
        let params = json!({"node": "pve", "vmid": 100, "cpu": "custom-fast"});
        crate::registered::with_cpu_context(nine_two(), || {
            run(Release::V9_1, "POST", "/nodes/{node}/qemu", params.clone())
        })
        .expect("valid");
        assert!(run(Release::V9_1, "POST", "/nodes/{node}/qemu", params).is_err());
    }

    #[rstest]
    #[case("POST", "/cluster/firewall/rules", json!({"action": "ACCEPT", "type": "in", "dport": "90:80"}), "dport", "invalid format - backwards range '90:80' not allowed, did you mean '80:90'?\n")]
    #[case("POST", "/cluster/backup", json!({"schedule": "every day", "all": 1}), "schedule", "invalid format - invalid calendar event 'every day' - unable to parse calendar event\n")]
    #[case("PUT", "/access/roles/{roleid}", json!({"roleid": "r", "privs": "VM.Audit,VM.Fly"}), "privs", "invalid format - invalid privilege 'VM.Fly'\n")]
    #[case("POST", "/nodes/{node}/vzdump", json!({"node": "pve", "fleecing": "enabled=1"}), "fleecing", "invalid format - 'storage' parameter is required when 'enabled' is set\n")]
    fn other_endpoints_refuse(
        #[case] method: &str,
        #[case] path: &str,
        #[case] params: Value,
        #[case] key: &str,
        #[case] msg: &str,
    ) {
        let e = run(Release::V9_1, method, path, params).expect_err("refused");
        assert_eq!(e.get(key).map(String::as_str), Some(msg), "{e:?}");
    }

    #[test]
    fn several_errors_at_once() {
        let e = err(json!({"node": "-x", "vmid": "x", "cores": "many"}));
        assert_eq!(e.len(), 3, "{e:?}");
    }

    #[test]
    fn versions_differ() {
        // `max-workers` exists on startall only since 9.x.
        let p = json!({"node": "pve", "max-workers": "4"});
        assert!(run(Release::V9_1, "POST", "/nodes/{node}/startall", p.clone()).is_ok());
        assert!(run(Release::V8_4, "POST", "/nodes/{node}/startall", p).is_err());
    }

    #[rstest]
    #[case("1", true)]
    #[case("-2.5", true)]
    #[case("1.", true)]
    #[case(".5", true)]
    #[case("1e3", true)]
    #[case("1e", false)]
    #[case("abc", false)]
    #[case("", false)]
    fn perl_numbers(#[case] v: &str, #[case] ok: bool) {
        assert_eq!(is_number(v), ok);
    }

    /// A parameter whose schema depends on `protocol` (`type-property`,
    /// `oneOf`): only the protocol's variant is checked.
    #[rstest]
    #[case("openfabric", json!(["hello_interval"]), None)]
    #[case(
        "openfabric",
        json!(["area"]),
        Some(("delete[0]", "value 'area' does not have a value in the enumeration 'hello_interval, csnp_interval'"))
    )]
    #[case("ospf", json!(["area"]), None)]
    #[case(
        "ospf",
        json!(["csnp_interval"]),
        Some(("delete[0]", "value 'csnp_interval' does not have a value in the enumeration 'area'"))
    )]
    fn type_property_variants(
        #[case] protocol: &str,
        #[case] delete: Value,
        #[case] want: Option<(&str, &str)>,
    ) {
        let r = run(
            Release::V9_1,
            "PUT",
            "/cluster/sdn/fabrics/fabric/{id}",
            json!({"id": "f1", "protocol": protocol, "delete": delete}),
        );
        match want {
            None => assert!(r.is_ok(), "{r:?}"),
            Some((k, msg)) => assert_eq!(
                r.expect_err("refused").get(k).map(String::as_str),
                Some(msg)
            ),
        }
    }

    #[test]
    fn a_variant_checks_its_property_strings() {
        let r = run(
            Release::V9_1,
            "POST",
            "/cluster/sdn/fabrics/node/{fabric_id}",
            json!({"fabric_id": "f1", "node_id": "pve", "protocol": "ospf",
                   "interfaces": ["name=ens19,hello_multiplier=3"]}),
        );
        let e = r.expect_err("refused");
        assert!(
            e.get("interfaces[0]")
                .is_some_and(|m| m.contains("hello_multiplier")),
            "{e:?}"
        );
        let ok = run(
            Release::V9_1,
            "POST",
            "/cluster/sdn/fabrics/node/{fabric_id}",
            json!({"fabric_id": "f1", "node_id": "pve", "protocol": "openfabric",
                   "interfaces": ["name=ens19,hello_multiplier=3"]}),
        );
        assert!(ok.is_ok(), "{ok:?}");
    }

    /// The fabrics' methods leave `additionalProperties` unset, so they
    /// take other parameters (`lock-token` on a delete); the others do
    /// not.
    #[test]
    fn unset_additional_properties_allow_others() {
        let r = run(
            Release::V9_1,
            "DELETE",
            "/cluster/sdn/fabrics/fabric/{id}",
            json!({"id": "f1", "lock-token": "x"}),
        );
        assert!(r.is_ok(), "{r:?}");
        let r = run(
            Release::V9_1,
            "DELETE",
            "/cluster/sdn/zones/{zone}",
            json!({"zone": "z1", "bogus": "x"}),
        );
        assert_eq!(
            r.expect_err("refused").get("bogus").map(String::as_str),
            Some(UNKNOWN)
        );
    }

    /// A single form value of an array parameter is a list of one.
    #[test]
    fn a_single_value_of_a_list_is_a_list_of_one() {
        let ep = spec(Release::V9_1)
            .endpoint("POST", "/cluster/sdn/fabrics/node/{fabric_id}")
            .expect("endpoint");
        let mut map: BTreeMap<String, Value> = serde_json::from_value(json!({
            "fabric_id": "f1", "node_id": "pve", "protocol": "openfabric",
            "interfaces": "name=ens19"
        }))
        .expect("object");
        assert!(validate(ep, &map).is_err());
        normalize(ep, &mut map);
        assert_eq!(map["interfaces"], json!(["name=ens19"]));
        assert!(validate(ep, &map).is_ok());
    }

    /// A list given for a string of a `-list` format (a form's repeated
    /// key, as proxmoxer sends `content` and `vms`) is its items joined
    /// by commas.
    #[rstest]
    #[case("POST", "/storage", json!({"storage": "n1", "type": "nfs", "content": ["images", "rootdir"]}), "content", json!("images,rootdir"))]
    #[case("PUT", "/pools", json!({"poolid": "p", "vms": ["101", 102]}), "vms", json!("101,102"))]
    // A string without a list format stays a list, and is refused.
    #[case("PUT", "/pools", json!({"poolid": "p", "comment": ["a", "b"]}), "comment", json!(["a", "b"]))]
    // A value Perl takes for false is not made a list.
    #[case("POST", "/cluster/sdn/fabrics/node/{fabric_id}", json!({"fabric_id": "f1", "interfaces": "0"}), "interfaces", json!("0"))]
    fn a_list_for_a_list_format_is_joined(
        #[case] method: &str,
        #[case] path: &str,
        #[case] given: Value,
        #[case] key: &str,
        #[case] want: Value,
    ) {
        let ep = spec(Release::V9_1)
            .endpoint(method, path)
            .expect("endpoint");
        let mut map: BTreeMap<String, Value> = serde_json::from_value(given).expect("object");
        normalize(ep, &mut map);
        assert_eq!(map[key], want);
    }

    #[test]
    fn a_joined_list_validates_and_a_list_for_a_plain_string_does_not() {
        let ep = spec(Release::V9_1)
            .endpoint("PUT", "/pools")
            .expect("endpoint");
        let mut map: BTreeMap<String, Value> =
            serde_json::from_value(json!({"poolid": "p", "vms": ["101", "102"]})).expect("object");
        normalize(ep, &mut map);
        assert!(validate(ep, &map).is_ok());
        let mut map: BTreeMap<String, Value> =
            serde_json::from_value(json!({"poolid": "p", "comment": ["a", "b"]})).expect("object");
        normalize(ep, &mut map);
        assert_eq!(
            validate(ep, &map)
                .expect_err("refused")
                .get("comment")
                .map(String::as_str),
            Some("type check ('string') failed - got ARRAY")
        );
    }

    /// 9.2's HA rules state their parameters as `allOf` groups with a
    /// `oneOf` picked by `type`: refusals as pve-common's strict oneOf
    /// names them.
    #[rstest]
    #[case::node_affinity(json!({"rule": "ha1", "type": "node-affinity", "resources": "vm:100", "nodes": "pve", "strict": "1"}), &[])]
    #[case::resource_affinity(json!({"rule": "ha1", "type": "resource-affinity", "resources": "vm:100,vm:101", "affinity": "negative"}), &[])]
    #[case::strict_not_for_resource_affinity(
        json!({"rule": "ha1", "type": "resource-affinity", "resources": "vm:100", "affinity": "positive", "strict": "1"}),
        &[("strict", UNKNOWN)]
    )]
    #[case::affinity_required_by_its_variant(
        json!({"rule": "ha1", "type": "resource-affinity", "resources": "vm:100"}),
        &[("oneOf[resource-affinity].affinity", "property is missing and it is not optional")]
    )]
    #[case::nodes_required_by_its_variant(
        json!({"rule": "ha1", "type": "node-affinity", "resources": "vm:100"}),
        &[("oneOf[node-affinity].nodes", "property is missing and it is not optional")]
    )]
    #[case::no_type_leaves_the_variant_s_keys_unknown(
        json!({"rule": "ha1", "resources": "vm:100"}),
        &[("resources", UNKNOWN), ("type", "property is missing and it is not optional")]
    )]
    #[case::unknown_type(
        json!({"rule": "ha1", "type": "bogus", "resources": "vm:100"}),
        &[("resources", UNKNOWN), ("type", "value 'bogus' does not have a value in the enumeration 'node-affinity, resource-affinity'")]
    )]
    #[case::rule_missing(
        json!({"type": "node-affinity", "resources": "vm:100", "nodes": "pve"}),
        &[("rule", "property is missing and it is not optional")]
    )]
    #[case::unknown_everywhere(
        json!({"rule": "ha1", "type": "node-affinity", "resources": "vm:100", "nodes": "pve", "colour": "red"}),
        &[("colour", UNKNOWN)]
    )]
    #[case::variant_checks_formats(
        json!({"rule": "ha1", "type": "node-affinity", "resources": "vm:100", "nodes": "pve", "strict": "maybe"}),
        &[("oneOf[node-affinity].strict", "type check ('boolean') failed - got 'maybe'")]
    )]
    fn ha_rules_one_of_9_2(#[case] params: Value, #[case] want: &[(&str, &str)]) {
        let got = run(Release::V9_2, "POST", "/cluster/ha/rules", params)
            .err()
            .unwrap_or_default();
        let want: Errors = want
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        assert_eq!(got, want);
    }

    /// 9.1 states the same call as one flat list: `strict` is a parameter
    /// there whatever the type (the handler refuses it).
    #[test]
    fn ha_rules_are_flat_on_9_1() {
        let r = run(
            Release::V9_1,
            "POST",
            "/cluster/ha/rules",
            json!({"rule": "ha1", "type": "resource-affinity", "resources": "vm:100",
                   "affinity": "positive", "strict": "1"}),
        );
        assert!(r.is_ok(), "{r:?}");
    }

    /// An update names the type too, and `delete`/`digest` live in a
    /// group of their own.
    #[test]
    fn ha_rule_update_9_2() {
        let ok = run(
            Release::V9_2,
            "PUT",
            "/cluster/ha/rules/{rule}",
            json!({"rule": "ha1", "type": "node-affinity", "delete": "comment", "strict": "0"}),
        );
        assert!(ok.is_ok(), "{ok:?}");
        let e = run(
            Release::V9_2,
            "PUT",
            "/cluster/ha/rules/{rule}",
            json!({"rule": "ha1", "comment": "x"}),
        )
        .expect_err("refused");
        assert_eq!(
            e.get("type").map(String::as_str),
            Some("property is missing and it is not optional")
        );
        assert_eq!(e.get("comment").map(String::as_str), Some(UNKNOWN));
    }

    /// Everything but validation sees the union of the groups' properties.
    #[test]
    fn an_all_of_list_shows_the_union_of_its_properties() {
        let spec = crate::spec(Release::V9_2);
        let ep = spec
            .endpoints
            .iter()
            .find(|e| e.path == "/cluster/ha/rules" && e.method == "POST")
            .expect("endpoint");
        let keys: Vec<&str> = ep
            .parameters
            .properties
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "affinity",
                "comment",
                "disable",
                "nodes",
                "resources",
                "rule",
                "strict",
                "type"
            ]
        );
        assert!(!ep.parameters.properties["type"].optional);
    }
}
