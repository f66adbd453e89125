//! The answers of `/cluster/mapping/{pci,usb,dir}`: a mapping as the
//! section config reads it back (`type`, the options, `map` as a list),
//! the file's digest, and the list's `check-node` findings.

use serde_json::{Map, Value, json};

use crate::model::mapping::check::Finding;
use crate::model::mapping::{Kind, Mapping};

/// `GET /cluster/mapping/{kind}/{id}`: the section's options, `type`
/// and the digest.
pub fn mapping(kind: Kind, m: &Mapping, digest: &str) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("type".into(), json!(kind.as_str()));
    if let Some(d) = &m.description {
        out.insert("description".into(), json!(d));
    }
    if let Some(b) = m.mdev {
        out.insert("mdev".into(), json!(u8::from(b)));
    }
    if let Some(b) = m.live_migration_capable {
        out.insert("live-migration-capable".into(), json!(u8::from(b)));
    }
    out.insert("map".into(), json!(m.map));
    out.insert("digest".into(), json!(digest));
    out
}

/// An entry of `GET /cluster/mapping/{kind}`: the mapping with its id,
/// and with `check-node` its findings (`errors` for USB, `checks` for
/// the others, as pve-manager names them).
pub fn list_entry(
    kind: Kind,
    id: &str,
    m: &Mapping,
    digest: &str,
    findings: Option<&[Finding]>,
) -> Value {
    let mut out = mapping(kind, m, digest);
    out.insert("id".into(), json!(id));
    if let Some(list) = findings {
        let key = if kind == Kind::Usb {
            "errors"
        } else {
            "checks"
        };
        let items: Vec<Value> = list
            .iter()
            .map(|f| json!({ "severity": f.severity, "message": f.message }))
            .collect();
        out.insert(key.into(), Value::Array(items));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::mapping::check::Finding;

    #[test]
    fn a_usb_list_entry_names_its_findings_errors() {
        let m = Mapping {
            map: vec!["node=pve1,id=0781:5583".into()],
            ..Mapping::default()
        };
        let f = [Finding {
            severity: "warning",
            message: "No mapping for node pve2.".into(),
        }];
        let usb = list_entry(Kind::Usb, "stick", &m, "d", Some(&f));
        assert_eq!(usb["errors"][0]["severity"], "warning");
        assert!(usb.get("checks").is_none());
        let pci = list_entry(Kind::Pci, "stick", &m, "d", None);
        assert!(pci.get("checks").is_none() && pci.get("errors").is_none());
        assert_eq!(pci["type"], "pci");
        assert_eq!(pci["id"], "stick");
    }
}
