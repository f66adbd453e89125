//! A node's interfaces as `GET /nodes/{node}/network` answers them.

use serde_json::{Map, Value, json};

use crate::model::network::{Exists, IfaceItem, IfaceValue};

fn value(v: &IfaceValue) -> Value {
    match v {
        IfaceValue::Int(n) => json!(n),
        IfaceValue::Text(t) => json!(t),
        IfaceValue::List(l) => json!(l),
    }
}

/// An interface: its settings, then `exists`, `altnames`, `active` and
/// (in a list) `iface`.
pub(crate) fn iface(item: &IfaceItem, listed: bool) -> Value {
    let mut m: Map<String, Value> = item
        .conf
        .iter()
        .map(|(k, v)| (k.clone(), value(v)))
        .collect();
    match item.exists {
        Some(Exists::Yes) => {
            m.insert("exists".into(), json!(1));
        }
        Some(Exists::Unknown) => {
            m.insert("exists".into(), Value::Null);
        }
        None => {}
    }
    if let Some(alt) = &item.altname {
        m.insert("altnames".into(), json!([alt]));
    }
    if item.active {
        m.insert("active".into(), json!(1));
    }
    if listed {
        m.insert("iface".into(), json!(item.name));
    }
    Value::Object(m)
}

/// The interfaces of a list.
pub(crate) fn ifaces(items: &[IfaceItem]) -> Vec<Value> {
    items.iter().map(|i| iface(i, true)).collect()
}
