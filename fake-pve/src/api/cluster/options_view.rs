//! The answer of `GET /cluster/options` as `API2/Cluster.pm` writes it:
//! datacenter.cfg's options turned into JSON, booleans as 0/1.

use serde_json::{Map, Value, json};

use crate::model::datacenter::{OptionValue, Options, Prop, TagStyleProps};

/// A parsed property string as `parse_property_string` answers it.
fn props(p: &TagStyleProps) -> Value {
    p.iter()
        .map(|(k, v)| {
            let v = match v {
                Prop::Flag(b) => json!(u8::from(*b)),
                Prop::List(l) => json!(l),
                Prop::Text(t) => json!(t),
            };
            (k.clone(), v)
        })
        .collect::<Map<String, Value>>()
        .into()
}

/// datacenter.cfg's options (without `allowed-tags`).
pub fn options(o: &Options) -> Value {
    o.iter()
        .map(|(k, v)| {
            let v = match v {
                OptionValue::Parsed(p) => props(p),
                OptionValue::List(l) => json!(l),
                OptionValue::Flag(b) => json!(u8::from(*b)),
                OptionValue::Text(t) => json!(t),
            };
            (k.clone(), v)
        })
        .collect::<Map<String, Value>>()
        .into()
}

/// `GET /cluster/options`: the options, then `allowed-tags`.
pub fn options_with_tags(o: &Options, tags: &[String]) -> Value {
    let mut out = options(o);
    out["allowed-tags"] = json!(tags);
    out
}
