//! The Crossplane provider (`proxmox.sankofa.nexus/v1alpha1`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{Context, Doc, R, TranslateError, env_tls, known, name, native, s, text};
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
        .ok_or_else(|| TranslateError::required("spec.credentials"))?;
    known(c, "spec.credentials", &["source", "secretRef"])?;
    match s(c, "source") {
        None | Some("Secret") => {}
        Some(o) => {
            return Err(TranslateError::invalid(
                "spec.credentials.source",
                format!("'{o}' is not supported (Secret)"),
            ));
        }
    }
    let r = c
        .get("secretRef")
        .ok_or_else(|| TranslateError::required("spec.credentials.secretRef"))?;
    known(
        r,
        "spec.credentials.secretRef",
        &["name", "namespace", "key"],
    )?;
    let secret =
        s(r, "name").ok_or_else(|| TranslateError::required("spec.credentials.secretRef.name"))?;
    let key =
        s(r, "key").ok_or_else(|| TranslateError::required("spec.credentials.secretRef.key"))?;
    let body = ctx
        .secrets
        .get(secret)
        .ok_or_else(|| TranslateError::not_found(format!("Secret '{secret}'")))?
        .string_data
        .get(key)
        .ok_or_else(|| TranslateError::SecretKeyMissing {
            secret: secret.into(),
            key: key.into(),
        })?;
    let j: Value = serde_json::from_str(body).map_err(|source| TranslateError::SecretNotJson {
        secret: secret.into(),
        key: key.into(),
        source,
    })?;
    let pick = |names: &[&str]| names.iter().find_map(|n| s(&j, n).map(str::to_string));
    if let Some(t) = pick(&["token"]) {
        let t = t
            .trim_start_matches("PVEAPIToken=")
            .trim_start_matches("PVEAPIToken ");
        let (id, sec) = t
            .split_once('=')
            .ok_or_else(|| TranslateError::SecretTokenMalformed(secret.into()))?;
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
    Err(TranslateError::SecretKeyWithoutCredentials {
        secret: secret.into(),
        key: key.into(),
    })
}

pub(super) fn provider_config(v: &Value, ctx: &Context) -> R<Vec<Resource>> {
    known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
    let spec = v.get("spec").unwrap_or(&Value::Null);
    known(spec, "spec", &["credentials", "sites", "deleteOnRemoval"])?;
    super::delete_on_removal(spec)?;
    let creds = crossplane_credentials(spec, ctx)?;
    let config = name(v);
    let mut out = Vec::new();
    for (i, site) in spec
        .get("sites")
        .and_then(Value::as_array)
        .ok_or_else(|| TranslateError::required("spec.sites"))?
        .iter()
        .enumerate()
    {
        let at = format!("spec.sites[{i}]");
        known(site, &at, &["name", "endpoint", "node"])?;
        let sname =
            s(site, "name").ok_or_else(|| TranslateError::required(format!("{at}.name")))?;
        let endpoint = s(site, "endpoint")
            .ok_or_else(|| TranslateError::required(format!("{at}.endpoint")))?;
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
        .ok_or_else(|| TranslateError::required("spec.forProvider"))?;
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
        .ok_or_else(|| TranslateError::not_found(format!("ProviderConfig '{config}'")))?;
    let site = s(fp, "site").ok_or_else(|| TranslateError::required("spec.forProvider.site"))?;
    let sites = pc
        .value
        .pointer("/spec/sites")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let site_doc = sites
        .iter()
        .find(|x| s(x, "name") == Some(site))
        .ok_or_else(|| TranslateError::UnknownSite {
            site: site.into(),
            config: config.into(),
        })?;
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
    let image =
        text(fp, "image").ok_or_else(|| TranslateError::required("spec.forProvider.image"))?;
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
