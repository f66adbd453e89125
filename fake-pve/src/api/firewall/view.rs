//! The firewall's answers: options, rules, aliases, IP sets and
//! security groups, each list entry carrying the list's digest as
//! `copy_list_with_digest` hands it out.

use serde_json::{Map, Value, json};

use crate::model::firewall::{Alias, ConfValue, Digested, FwOptions, IpRead, ReadRule, Section};

fn value(v: &ConfValue) -> Value {
    match v {
        ConfValue::Int(n) => json!(n),
        ConfValue::Text(t) => json!(t),
    }
}

/// `GET .../options`: the options set and their digest.
pub(crate) fn options(o: &FwOptions) -> Value {
    let mut m: Map<String, Value> = o
        .values
        .iter()
        .map(|(k, v)| (k.clone(), value(v)))
        .collect();
    m.insert("digest".into(), json!(o.digest));
    Value::Object(m)
}

/// A rule at `pos`, with the list's digest.
pub(crate) fn rule(r: &ReadRule, digest: &str, pos: usize) -> Value {
    let mut m: Map<String, Value> = r
        .fields
        .iter()
        .map(|(k, v)| (k.clone(), value(v)))
        .collect();
    if !r.errors.is_empty() {
        m.insert("errors".into(), json!(r.errors));
    }
    m.insert("digest".into(), json!(digest));
    m.insert("pos".into(), json!(pos));
    Value::Object(m)
}

/// `GET .../rules`.
pub(crate) fn rules(list: &Digested<ReadRule>) -> Value {
    list.items
        .iter()
        .enumerate()
        .map(|(pos, r)| rule(r, &list.digest, pos))
        .collect()
}

/// `GET .../aliases/{name}`.
pub(crate) fn alias(a: &Alias) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("cidr".into(), json!(a.cidr));
    if let Some(c) = &a.comment {
        m.insert("comment".into(), json!(c));
    }
    m.insert("ipversion".into(), json!(a.ipversion()));
    m.insert("name".into(), json!(a.name));
    m
}

/// `GET .../aliases`.
pub(crate) fn aliases(list: &Digested<&Alias>) -> Value {
    list.items
        .iter()
        .map(|a| {
            let mut m = alias(a);
            m.insert("digest".into(), json!(list.digest));
            Value::Object(m)
        })
        .collect()
}

/// `GET .../ipset` (`key` is `name`) or `GET .../groups` (`group`).
pub(crate) fn sections(list: &Digested<Section<'_>>, key: &str) -> Value {
    list.items
        .iter()
        .map(|s| {
            let mut m = Map::new();
            if let Some(c) = s.comment {
                m.insert("comment".into(), json!(c));
            }
            m.insert(key.into(), json!(s.name));
            m.insert("digest".into(), json!(list.digest));
            Value::Object(m)
        })
        .collect()
}

/// An entry of an IP set, with its set's digest.
pub(crate) fn ip(e: &IpRead<'_>, digest: &str) -> Value {
    let mut m = Map::new();
    m.insert("cidr".into(), json!(e.cidr));
    if let Some(c) = &e.entry.comment {
        m.insert("comment".into(), json!(c));
    }
    if e.entry.nomatch {
        m.insert("nomatch".into(), json!(1));
    }
    m.insert("digest".into(), json!(digest));
    if let Some(err) = &e.error {
        m.insert("errors".into(), json!({ "cidr": err }));
    }
    Value::Object(m)
}

/// `GET .../ipset/{name}`.
pub(crate) fn ips(list: &Digested<IpRead<'_>>) -> Value {
    list.items.iter().map(|e| ip(e, &list.digest)).collect()
}
