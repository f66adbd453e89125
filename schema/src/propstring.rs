//! Property strings: the `key=value,key=value` values of `net0`, `scsi0`,
//! `ipconfig0`, `memory` and friends (pve-common `JSONSchema.pm`
//! `parse_property_string` and `print_property_string`).
//!
//! Parsing follows PVE: a part without `=` goes to the format's default
//! key, aliases (`virtio=MAC` for `model=virtio,macaddr=MAC`) are mapped,
//! booleans accept `1/0/on/off/yes/no/true/false`, and the result is then
//! checked key by key. Printing puts the default key first, then required
//! keys, then the rest in alphabetical order, as PVE writes configs.

use std::collections::BTreeMap;

use super::Prop;

/// Why a property string does not parse (`parse_property_string`),
/// displayed as PVE's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PropStringError {
    /// A key given twice (or the default key given twice without `key=`).
    #[error("duplicate key in comma-separated list property: {0}\n")]
    DuplicateKey(String),
    /// A key whose key alias (`model` of `virtio=...`) is already set.
    #[error("key alias '{0}' is already defined\n")]
    KeyAliasDefined(String),
    /// A key already set through an alias.
    #[error("key '{0}' is already defined (via alias)\n")]
    AliasDefined(String),
    /// A key the format does not have.
    #[error("invalid key in comma-separated list property: {0}\n")]
    InvalidKey(String),
    /// A value without `key=` where the format has no default key.
    #[error("value without key, but schema does not define a default key\n")]
    NoDefaultKey,
    /// `=value` or `key=`.
    #[error("missing key in comma-separated list property\n")]
    MissingKey,
}

/// A parsed property string: canonical key to value, as text.
pub type Parsed = BTreeMap<String, String>;

/// PVE's `parse_boolean` spellings.
pub fn parse_boolean(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => Some(true),
        "0" | "off" | "no" | "false" => Some(false),
        _ => None,
    }
}

fn is_bool(p: &Prop) -> bool {
    p.kind.as_deref() == Some("boolean")
}

/// Splits a property string into keys and values, before the keys are
/// checked.
///
/// # Errors
/// PVE's message for a duplicate, unknown or missing key.
pub fn parse(format: &BTreeMap<String, Prop>, data: &str) -> Result<Parsed, PropStringError> {
    let mut res = Parsed::new();
    let mut default_key: Option<&str> = None;
    for part in data.split(',') {
        if part.trim().is_empty() {
            continue;
        }
        match part.split_once('=') {
            Some((k, v)) if !k.is_empty() && !v.is_empty() => {
                if res.contains_key(k) {
                    return Err(PropStringError::DuplicateKey(k.to_string()));
                }
                let mut key = k.to_string();
                let mut schema = format.get(k);
                if let Some(alias) = schema.and_then(|s| s.alias.as_deref()) {
                    if let Some(key_alias) = schema.and_then(|s| s.key_alias.as_deref()) {
                        if res.contains_key(key_alias) {
                            return Err(PropStringError::KeyAliasDefined(key_alias.to_string()));
                        }
                        res.insert(key_alias.to_string(), k.to_string());
                    }
                    key = alias.to_string();
                    schema = format.get(alias);
                    if res.contains_key(&key) {
                        return Err(PropStringError::AliasDefined(key));
                    }
                }
                let Some(schema) = schema else {
                    return Err(PropStringError::InvalidKey(key));
                };
                let value = if is_bool(schema) {
                    parse_boolean(v).map_or_else(
                        || v.to_string(),
                        |b| if b { "1".into() } else { "0".into() },
                    )
                } else {
                    v.to_string()
                };
                res.insert(key, value);
            }
            None => {
                if let Some(d) = default_key {
                    return Err(PropStringError::DuplicateKey(d.to_string()));
                }
                let Some((key, schema)) = format.iter().find(|(_, p)| p.default_key) else {
                    return Err(PropStringError::NoDefaultKey);
                };
                default_key = Some(key);
                if res.contains_key(key) {
                    return Err(PropStringError::DuplicateKey(key.clone()));
                }
                let value = if is_bool(schema) {
                    parse_boolean(part).map_or_else(
                        || part.to_string(),
                        |b| if b { "1".into() } else { "0".into() },
                    )
                } else {
                    part.to_string()
                };
                res.insert(key.clone(), value);
            }
            Some(_) => return Err(PropStringError::MissingKey),
        }
    }
    Ok(res)
}

/// Prints a property string in PVE's canonical order.
pub fn print(format: &BTreeMap<String, Prop>, data: &Parsed) -> String {
    let default_key = format
        .iter()
        .find(|(_, p)| p.default_key)
        .map(|(k, _)| k.as_str());
    // keyAlias: `model` is printed together with `macaddr` as `virtio=MAC`.
    let combine: BTreeMap<&str, &str> = format
        .values()
        .filter_map(|p| Some((p.key_alias.as_deref()?, p.alias.as_deref()?)))
        .collect();
    let mut done: Vec<&str> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    let mut add = |key: &str, is_default: bool, done: &mut Vec<&str>| {
        if done.contains(&key) {
            return;
        }
        let Some(value) = data.get(key) else {
            return;
        };
        if let Some(other) = combine.get(key)
            && let Some(ov) = data.get(*other)
        {
            out.push(format!("{value}={ov}"));
            return;
        }
        let value = match format.get(key).and_then(|p| match &p.format {
            Some(crate::Format::Named(f)) => Some(f.as_str()),
            _ => None,
        }) {
            Some("disk-size") => format_size(value),
            _ => value.clone(),
        };
        if is_default {
            out.push(value);
        } else {
            out.push(format!("{key}={value}"));
        }
    };
    if let Some(d) = default_key {
        add(d, true, &mut done);
        done.push(d);
        if let Some(o) = combine.get(d)
            && data.contains_key(d)
            && data.contains_key(*o)
        {
            done.push(o);
        }
    }
    let keys: Vec<&str> = data.keys().map(String::as_str).collect();
    for k in &keys {
        if format
            .get(*k)
            .is_some_and(|p| !p.optional && p.alias.is_none())
            && !done.contains(k)
        {
            add(k, false, &mut done);
            done.push(k);
        }
    }
    for k in &keys {
        if !done.contains(k) {
            add(k, false, &mut done);
            done.push(k);
        }
    }
    out.join(",")
}

/// PVE's `format_size`: bytes as the largest exact unit.
pub fn format_size(v: &str) -> String {
    let Ok(bytes) = v.parse::<u64>() else {
        return v.to_string();
    };
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Release;

    fn net_format() -> &'static BTreeMap<String, Prop> {
        let spec = crate::spec(Release::V9_1);
        let ep = spec
            .endpoint("POST", "/nodes/{node}/qemu")
            .expect("create_vm");
        match &ep.parameters.properties["net[n]"].format {
            Some(crate::Format::Object(f)) => f,
            _ => panic!("net[n] has an object format"),
        }
    }

    #[test]
    fn net_devices_round_trip() {
        let f = net_format();
        let p = parse(
            f,
            "virtio=BC:24:11:2E:5A:01,bridge=vmbr0,firewall=on,tag=100",
        )
        .expect("parses");
        assert_eq!(p["model"], "virtio");
        assert_eq!(p["macaddr"], "BC:24:11:2E:5A:01");
        assert_eq!(p["firewall"], "1");
        assert_eq!(
            print(f, &p),
            "virtio=BC:24:11:2E:5A:01,bridge=vmbr0,firewall=1,tag=100"
        );
        let p = parse(f, "bridge=vmbr0,model=e1000").expect("parses");
        assert_eq!(print(f, &p), "e1000,bridge=vmbr0");
        let p = parse(f, "virtio,bridge=vmbr1").expect("default key");
        assert_eq!(p["model"], "virtio");
    }

    #[test]
    fn property_string_refusals() {
        let f = net_format();
        assert_eq!(
            parse(f, "virtio,e1000").expect_err("refused").to_string(),
            "duplicate key in comma-separated list property: model\n"
        );
        assert_eq!(
            parse(f, "colour=red").expect_err("refused").to_string(),
            "invalid key in comma-separated list property: colour\n"
        );
        assert_eq!(
            parse(f, "bridge=vmbr0,bridge=vmbr1")
                .expect_err("refused")
                .to_string(),
            "duplicate key in comma-separated list property: bridge\n"
        );
        assert_eq!(
            parse(f, "=x").expect_err("refused").to_string(),
            "missing key in comma-separated list property\n"
        );
        assert_eq!(
            parse(f, "virtio=BC:24:11:2E:5A:01,macaddr=BC:24:11:2E:5A:02")
                .expect_err("refused")
                .to_string(),
            "duplicate key in comma-separated list property: macaddr\n"
        );
    }

    #[test]
    fn sizes_print_in_the_largest_unit() {
        assert_eq!(format_size("34359738368"), "32G");
        assert_eq!(format_size("1536"), "1536");
        assert_eq!(format_size("1048576"), "1M");
        assert_eq!(format_size("8G"), "8G");
    }
}
