//! A node's PCI and USB devices, into the scenario's `nodes[].pci` and
//! `nodes[].usb` (with a PCI device's mediated device types).

use serde_json::{Map, Value, json};

use super::super::convert::{field, items, truthy};
use super::super::{Reader, TwinError};

const PCI_TEXT: &[&str] = &[
    "id",
    "class",
    "vendor",
    "device",
    "vendor_name",
    "device_name",
    "subsystem_vendor",
    "subsystem_device",
    "subsystem_vendor_name",
    "subsystem_device_name",
];
const USB_NUMBERS: &[&str] = &["busnum", "devnum", "port", "level", "class"];
const USB_TEXT: &[&str] = &[
    "vendid",
    "prodid",
    "speed",
    "manufacturer",
    "product",
    "serial",
];

/// The devices of `node` into its spec `n`.
pub(super) async fn hardware(
    reader: &Reader,
    base: &str,
    n: &mut Map<String, Value>,
) -> Result<(), TwinError> {
    if let Some(list) = reader.get(&format!("{base}/hardware/pci")).await? {
        let mut out = Vec::new();
        for d in items(Some(&list)) {
            let mut m = Map::new();
            for k in PCI_TEXT {
                if let Some(v) = field(d, k) {
                    m.insert((*k).into(), json!(v));
                }
            }
            let Some(id) = field(d, "id") else { continue };
            if let Some(g) = d["iommugroup"].as_i64() {
                m.insert("iommugroup".into(), json!(g));
            }
            if truthy(d.get("mdev")) {
                let types = reader
                    .get(&format!("{base}/hardware/pci/{id}/mdev"))
                    .await?;
                let mdev: Vec<Value> = items(types.as_ref())
                    .iter()
                    .map(|t| {
                        let mut x = Map::new();
                        x.insert("type".into(), json!(field(t, "type").unwrap_or_default()));
                        x.insert(
                            "available".into(),
                            json!(t["available"].as_u64().unwrap_or(0)),
                        );
                        for k in ["name", "description"] {
                            if let Some(v) = field(t, k) {
                                x.insert(k.into(), json!(v));
                            }
                        }
                        Value::Object(x)
                    })
                    .collect();
                m.insert("mdev".into(), Value::Array(mdev));
            }
            out.push(Value::Object(m));
        }
        n.insert("pci".into(), Value::Array(out));
    }
    if let Some(list) = reader.get(&format!("{base}/hardware/usb")).await? {
        let mut out = Vec::new();
        for d in items(Some(&list)) {
            let mut m = Map::new();
            for k in USB_NUMBERS {
                if let Some(v) = d[*k].as_u64() {
                    m.insert((*k).into(), json!(v));
                }
            }
            for k in USB_TEXT {
                if let Some(v) = field(d, k) {
                    m.insert((*k).into(), json!(v));
                }
            }
            out.push(Value::Object(m));
        }
        n.insert("usb".into(), Value::Array(out));
    }
    Ok(())
}
