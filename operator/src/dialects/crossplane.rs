//! The Crossplane provider (`proxmox.sankofa.nexus/v1alpha1`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{Context, Doc, R, env_tls, known, name, native, s, text};
use crate::types::Resource;

/// The ProxmoxCluster of one site of a ProviderConfig.
pub fn site_cluster(config: &str, site: &str) -> String {
    format!("{config}.{site}")
}

/// The credentials of a ProviderConfig: its Secret's key, a JSON object
/// with `username` and `password`, or `tokenID` (also `token_id`) and
/// `tokenSecret` (also `token_secret`, `secret`), or `token` as
/// `USER@REALM!ID=SECRET`.
fn crossplane_credentials(spec: &Value, ctx: &Context) -> R<Value> {
    let c = spec
        .get("credentials")
        .ok_or("spec.credentials is required")?;
    known(c, "spec.credentials", &["source", "secretRef"])?;
    match s(c, "source") {
        None | Some("Secret") => {}
        Some(o) => {
            return Err(format!(
                "spec.credentials.source: '{o}' is not supported (Secret)"
            ));
        }
    }
    let r = c
        .get("secretRef")
        .ok_or("spec.credentials.secretRef is required")?;
    known(
        r,
        "spec.credentials.secretRef",
        &["name", "namespace", "key"],
    )?;
    let secret = s(r, "name").ok_or("spec.credentials.secretRef.name is required")?;
    let key = s(r, "key").ok_or("spec.credentials.secretRef.key is required")?;
    let body = ctx
        .secrets
        .get(secret)
        .ok_or(format!("Secret '{secret}' not found"))?
        .string_data
        .get(key)
        .ok_or(format!("Secret '{secret}' has no key '{key}'"))?;
    let j: Value = serde_json::from_str(body)
        .map_err(|e| format!("Secret '{secret}' key '{key}': not JSON ({e})"))?;
    let pick = |names: &[&str]| names.iter().find_map(|n| s(&j, n).map(str::to_string));
    if let Some(t) = pick(&["token"]) {
        let t = t
            .trim_start_matches("PVEAPIToken=")
            .trim_start_matches("PVEAPIToken ");
        let (id, sec) = t.split_once('=').ok_or(format!(
            "Secret '{secret}': token is not USER@REALM!ID=SECRET"
        ))?;
        return Ok(json!({ "tokenID": id, "tokenSecret": { "value": sec } }));
    }
    if let (Some(id), Some(sec)) = (
        pick(&["tokenID", "token_id", "tokenId"]),
        pick(&["tokenSecret", "token_secret", "secret"]),
    ) {
        let mut out = json!({ "tokenID": id, "tokenSecret": { "value": sec } });
        if let Some(u) = pick(&["username"]) {
            out["username"] = json!(u);
        }
        return Ok(out);
    }
    if let (Some(u), Some(p)) = (pick(&["username"]), pick(&["password"])) {
        return Ok(json!({ "username": u, "password": { "value": p } }));
    }
    Err(format!(
        "Secret '{secret}' key '{key}': give username and password, or tokenID and tokenSecret"
    ))
}

pub(super) fn provider_config(v: &Value, ctx: &Context) -> R<Vec<Resource>> {
    known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
    let spec = v.get("spec").unwrap_or(&Value::Null);
    known(spec, "spec", &["credentials", "sites"])?;
    let creds = crossplane_credentials(spec, ctx)?;
    let config = name(v);
    let mut out = Vec::new();
    for (i, site) in spec
        .get("sites")
        .and_then(Value::as_array)
        .ok_or("spec.sites is required")?
        .iter()
        .enumerate()
    {
        let at = format!("spec.sites[{i}]");
        known(site, &at, &["name", "endpoint", "node"])?;
        let sname = s(site, "name").ok_or(format!("{at}.name is required"))?;
        let endpoint = s(site, "endpoint").ok_or(format!("{at}.endpoint is required"))?;
        let mut c = Map::new();
        c.insert("endpoint".into(), json!(endpoint));
        c.insert("credentials".into(), creds.clone());
        env_tls(&mut c, &ctx.env);
        let mut meta = v.clone();
        meta["metadata"] = json!({ "name": site_cluster(config, sname) });
        out.push(native("ProxmoxCluster", &meta, Value::Object(c))?);
    }
    Ok(out)
}

/// A ProxmoxVM as a Machine on the cluster of its site. `image` is a
/// template's VMID, an ISO volume (`storage:iso/x.iso`) or a template's
/// name; `memory` without a unit is MB and `disk` GB, as the provider
/// reads them.
pub(super) fn proxmox_vm(v: &Value, configs: &BTreeMap<String, &Doc>) -> R<Resource> {
    known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
    let spec = v.get("spec").unwrap_or(&Value::Null);
    known(spec, "spec", &["forProvider", "providerConfigRef"])?;
    let fp = spec
        .get("forProvider")
        .ok_or("spec.forProvider is required")?;
    known(
        fp,
        "spec.forProvider",
        &[
            "node", "name", "cpu", "memory", "disk", "storage", "network", "image", "site",
            "userData",
        ],
    )?;
    let config = spec
        .get("providerConfigRef")
        .and_then(|r| s(r, "name"))
        .unwrap_or("default");
    let pc = configs
        .get(config)
        .ok_or(format!("ProviderConfig '{config}' not found"))?;
    let site = s(fp, "site").ok_or("spec.forProvider.site is required")?;
    let sites = pc
        .value
        .pointer("/spec/sites")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let site_doc = sites
        .iter()
        .find(|x| s(x, "name") == Some(site))
        .ok_or(format!(
            "site '{site}' is not a site of ProviderConfig '{config}'"
        ))?;
    let mut m = Map::new();
    m.insert("cluster".into(), json!(site_cluster(config, site)));
    if let Some(n) = s(fp, "node").or_else(|| s(site_doc, "node")) {
        m.insert("node".into(), json!(n));
    }
    if let Some(n) = s(fp, "name") {
        m.insert("name".into(), json!(n));
    }
    let cores = fp.get("cpu").cloned().unwrap_or(json!(2));
    m.insert("cpu".into(), json!({ "cores": cores }));
    if let Some(mem) = text(fp, "memory") {
        m.insert("memory".into(), json!(mem));
    }
    let storage = s(fp, "storage").unwrap_or("local-lvm");
    if let Some(d) = text(fp, "disk") {
        m.insert("disks".into(), json!([{ "size": d, "storage": storage }]));
    }
    let bridge = s(fp, "network").unwrap_or("vmbr0");
    m.insert("networks".into(), json!([{ "bridge": bridge }]));
    let image = text(fp, "image").ok_or("spec.forProvider.image is required")?;
    let source = match crate::validate::parse_image(&image) {
        Ok(crate::validate::ImageRef::Volume { .. }) => json!({ "volume": image }),
        _ => json!({ "template": image }),
    };
    m.insert("source".into(), source);
    if let Some(u) = s(fp, "userData") {
        m.insert(
            "cloudInit".into(),
            json!({ "userData": u, "storage": storage }),
        );
    }
    native("Machine", v, Value::Object(m))
}
