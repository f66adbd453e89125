//! vitistack's Proxmox Operator (`vitistack.io/v1alpha1`).

use serde_json::{Value, json};

use super::{Context, R, TranslateError, VITISTACK, env_tls, native};
use crate::types::Resource;

/// vitistack's kinds are this operator's own but for a few fields:
/// Machine's `template` (the source), its cluster (none in the spec:
/// `PROXMOX_DEFAULT_CLUSTER`, else the only ProxmoxCluster), and a
/// ProxmoxCluster's certificates as strings.
pub(super) fn vitistack(k: &str, v: &Value, ctx: &Context) -> R<Resource> {
    let mut spec = v.get("spec").cloned().unwrap_or(json!({}));
    let Some(m) = spec.as_object_mut() else {
        return Err(TranslateError::NotAMapping { at: "spec".into() });
    };
    match k {
        "Machine" => {
            if m.contains_key("cluster") {
                return Err(TranslateError::invalid(
                    "spec",
                    "unknown field `cluster` (vitistack Machines go to PROXMOX_DEFAULT_CLUSTER)",
                ));
            }
            let cluster = default_cluster(ctx)?;
            m.insert("cluster".into(), json!(cluster));
            if let Some(t) = m.remove("template") {
                let t = match t {
                    Value::String(s) => s,
                    Value::Number(n) => n.to_string(),
                    _ => {
                        return Err(TranslateError::invalid(
                            "spec.template",
                            "expected a template's name or VMID",
                        ));
                    }
                };
                m.insert("source".into(), json!({ "template": t }));
            }
            native("Machine", v, spec)
        }
        "ProxmoxCluster" => {
            for key in ["caCertificate", "clientCertificate", "clientKey"] {
                if let Some(Value::String(pem)) = m.get(key).cloned() {
                    m.insert(key.into(), json!({ "value": pem }));
                }
            }
            env_tls(m, &ctx.env);
            native("ProxmoxCluster", v, spec)
        }
        "ProxmoxNode" => native("ProxmoxNode", v, spec),
        other => Err(TranslateError::UnknownKind {
            kind: other.into(),
            api_version: VITISTACK.into(),
        }),
    }
}

pub(super) fn default_cluster(ctx: &Context) -> R<String> {
    if let Some(c) = &ctx.default_cluster {
        return Ok(c.clone());
    }
    match ctx.clusters.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(TranslateError::NoCluster),
        _ => Err(TranslateError::SeveralClusters(ctx.clusters.clone())),
    }
}
