//! Files on storages no guest config names: ISO images, container
//! templates, backups (with their notes and protection), snippets and
//! import sources, into the scenario's `volumes`.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::super::convert::{field, items, truthy};
use super::super::{Reader, TwinError};
use super::nodes::NodeStorages;
use crate::model::storage::content::vtype;
use crate::model::storage::path_based;

/// Content types whose volumes are files (images come from guests).
const FILES: &[&str] = &["iso", "vztmpl", "backup", "snippets", "import"];

/// The file volumes of each node's active file storages: a shared
/// storage's once, a local one's with its node.
pub(super) async fn volumes(reader: &Reader, listed: &NodeStorages) -> Result<Value, TwinError> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (node, storages) in listed {
        for st in storages {
            let (Some(sid), Some(kind)) = (field(st, "storage"), field(st, "type")) else {
                continue;
            };
            let content = field(st, "content").unwrap_or_default();
            if !path_based(&kind)
                || !content.split(',').any(|c| FILES.contains(&c))
                || st.get("active").is_some_and(|a| !truthy(Some(a)))
                || st.get("enabled").is_some_and(|a| !truthy(Some(a)))
            {
                continue;
            }
            let shared = truthy(st.get("shared"));
            if shared && !seen.insert(sid.clone()) {
                continue;
            }
            let base = format!("/nodes/{node}/storage/{sid}/content");
            for v in items(reader.get(&base).await?.as_ref()) {
                let Some(volid) = field(v, "volid") else {
                    continue;
                };
                let name = volid.split_once(':').map_or("", |(_, n)| n);
                if !FILES.contains(&vtype(name)) {
                    continue;
                }
                let mut m = Map::new();
                m.insert("volid".into(), json!(volid));
                if !shared {
                    m.insert("node".into(), json!(node));
                }
                for k in ["size", "ctime"] {
                    if let Some(n) = v[k].as_u64() {
                        m.insert(k.into(), json!(n));
                    }
                }
                if let Some(f) = field(v, "format") {
                    m.insert("format".into(), json!(f));
                }
                if truthy(v.get("protected")) {
                    m.insert("protected".into(), json!(true));
                }
                if v.get("notes").is_some() {
                    // The listing shows the first line: the volume all.
                    let one = reader
                        .get(&format!("{base}/{}", volid.replace('/', "%2F")))
                        .await?;
                    let notes = one.as_ref().and_then(|o| field(o, "notes"));
                    if let Some(n) = notes.or_else(|| field(v, "notes")) {
                        m.insert("notes".into(), json!(n));
                    }
                }
                out.push(Value::Object(m));
            }
        }
    }
    Ok(Value::Array(out))
}
