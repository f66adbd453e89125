//! vitistack's Proxmox Operator (`vitistack.io/v1alpha1`).

use serde_json::{Value, json};

use super::{Context, R, VITISTACK, env_tls, native};
use crate::types::Resource;

/// vitistack's kinds are this operator's own but for a few fields:
/// Machine's `template` (the source), its cluster (none in the spec:
/// `PROXMOX_DEFAULT_CLUSTER`, else the only ProxmoxCluster), and a
/// ProxmoxCluster's certificates as strings.
pub(super) fn vitistack(k: &str, v: &Value, ctx: &Context) -> R<Resource> {
    let mut spec = v.get("spec").cloned().unwrap_or(json!({}));
    let Some(m) = spec.as_object_mut() else {
        return Err("spec: expected a mapping".into());
    };
    match k {
        "Machine" => {
            if m.contains_key("cluster") {
                return Err("spec: unknown field `cluster` (vitistack Machines go to PROXMOX_DEFAULT_CLUSTER)".into());
            }
            let cluster = default_cluster(ctx)?;
            m.insert("cluster".into(), json!(cluster));
            if let Some(t) = m.remove("template") {
                let t = match t {
                    Value::String(s) => s,
                    Value::Number(n) => n.to_string(),
                    _ => return Err("spec.template: expected a template's name or VMID".into()),
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
        other => Err(format!("kind {other} of {VITISTACK} is not known")),
    }
}

pub(super) fn default_cluster(ctx: &Context) -> R<String> {
    if let Some(c) = &ctx.default_cluster {
        return Ok(c.clone());
    }
    match ctx.clusters.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(
            "no ProxmoxCluster to put the machine on: declare one or set PROXMOX_DEFAULT_CLUSTER"
                .into(),
        ),
        _ => Err(format!(
            "several ProxmoxClusters ({}): set PROXMOX_DEFAULT_CLUSTER to the one machines go to",
            ctx.clusters.join(", ")
        )),
    }
}
