//! VirtRigaud's Proxmox provider (`infra.virtrigaud.io/v1beta1`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{
    Context, Doc, NETWORK_BRIDGES, R, TranslateError, env_tls, known, name, native, s, text,
};
use crate::types::Resource;

pub(super) struct VirtRigaud<'a> {
    pub(super) providers: BTreeMap<String, &'a Doc>,
    pub(super) classes: BTreeMap<String, &'a Doc>,
    pub(super) images: BTreeMap<String, &'a Doc>,
    pub(super) policies: BTreeMap<String, &'a Doc>,
    pub(super) vms: BTreeMap<String, &'a Doc>,
    pub(super) ctx: &'a Context,
}

pub(super) fn check_class(v: &Value) -> R<()> {
    known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
    let spec = v.get("spec").unwrap_or(&Value::Null);
    known(spec, "spec", &["cpus", "memory", "spec", "storage"])?;
    if let Some(p) = spec.get("spec") {
        known(p, "spec.spec", &["machine", "bios"])?;
        if let Some(b) = s(p, "bios")
            && !matches!(b, "uefi" | "bios" | "ovmf" | "seabios")
        {
            return Err(TranslateError::invalid(
                "spec.spec.bios",
                format!("'{b}' is not one of uefi, bios (ovmf, seabios)"),
            ));
        }
    }
    if let Some(st) = spec.get("storage") {
        known(st, "spec.storage", &["class", "type"])?;
        if let Some(t) = s(st, "type")
            && !matches!(t, "thin" | "thick")
        {
            return Err(TranslateError::invalid(
                "spec.storage.type",
                format!("'{t}' is not thin or thick"),
            ));
        }
    }
    Ok(())
}

pub(super) fn check_image(v: &Value) -> R<()> {
    known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
    let spec = v.get("spec").unwrap_or(&Value::Null);
    known(spec, "spec", &["source"])?;
    text(spec, "source").map(|_| ()).ok_or_else(|| {
        TranslateError::invalid("spec.source", "a template's name or VMID is required")
    })
}

fn not_node_names() -> TranslateError {
    TranslateError::invalid("spec.nodeSelector", "expected a list of node names")
}

/// A VMPlacementPolicy as the native placement.
pub(super) fn policy(v: &Value) -> R<Value> {
    known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
    let spec = v.get("spec").unwrap_or(&Value::Null);
    known(
        spec,
        "spec",
        &["nodeSelector", "antiAffinity", "constraints"],
    )?;
    let mut p = Map::new();
    if let Some(ns) = spec.get("nodeSelector") {
        let nodes: Vec<String> = ns
            .as_array()
            .ok_or_else(not_node_names)?
            .iter()
            .map(|n| n.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(not_node_names)?;
        p.insert("nodes".into(), json!(nodes));
    }
    if let Some(aa) = spec.get("antiAffinity") {
        let mut keys = Vec::new();
        for (i, t) in aa
            .as_array()
            .ok_or_else(|| TranslateError::invalid("spec.antiAffinity", "expected a list"))?
            .iter()
            .enumerate()
        {
            let at = format!("spec.antiAffinity[{i}]");
            known(t, &at, &["key", "operator", "values"])?;
            let key = s(t, "key").ok_or_else(|| TranslateError::required(format!("{at}.key")))?;
            if let Some(op) = s(t, "operator")
                && op != "In"
            {
                return Err(TranslateError::invalid(
                    format!("{at}.operator"),
                    format!("only In is supported, not '{op}'"),
                ));
            }
            let values: Vec<String> = t
                .get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            keys.push(json!({ "key": key, "values": values }));
        }
        p.insert("antiAffinityTerms".into(), json!(keys));
    }
    if let Some(c) = spec.get("constraints") {
        known(c, "spec.constraints", &["maxVMsPerNode", "minFreeMemory"])?;
        if let Some(n) = c.get("maxVMsPerNode") {
            p.insert("maxVMsPerNode".into(), n.clone());
        }
        if let Some(m) = c.get("minFreeMemory") {
            p.insert("minFreeMemory".into(), m.clone());
        }
    }
    Ok(Value::Object(p))
}

impl VirtRigaud<'_> {
    /// A Provider as a ProxmoxCluster of the same name: its endpoint, the
    /// credentials of its Secret (`token_id` and `token_secret`, or
    /// `username` and `password`; `ca.crt`), `runtime.env`'s
    /// `PVE_INSECURE_SKIP_VERIFY`, `PVE_CA_BUNDLE` and `PVE_NODE_SELECTOR`.
    /// Without a Secret, the credentials are the operator's `PVE_*`
    /// variables. `runtime.mode`, `image` and `service` describe
    /// VirtRigaud's provider pod, which this operator is: not used.
    pub(super) fn provider(&self, v: &Value) -> R<Resource> {
        known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        known(
            spec,
            "spec",
            &[
                "type",
                "endpoint",
                "credentialSecretRef",
                "runtime",
                "deleteOnRemoval",
            ],
        )?;
        super::delete_on_removal(spec)?;
        match s(spec, "type") {
            Some("proxmox") => {}
            Some(t) => {
                return Err(TranslateError::invalid(
                    "spec.type",
                    format!("'{t}' providers are not PVE"),
                ));
            }
            None => return Err(TranslateError::invalid("spec.type", "proxmox is required")),
        }
        let mut env = self.ctx.env.clone();
        if let Some(rt) = spec.get("runtime") {
            known(rt, "spec.runtime", &["mode", "image", "service", "env"])?;
            for (i, e) in rt
                .get("env")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let at = format!("spec.runtime.env[{i}]");
                known(e, &at, &["name", "value"])?;
                let (Some(k), Some(val)) = (s(e, "name"), text(e, "value")) else {
                    return Err(TranslateError::invalid(at, "name and value are required"));
                };
                env.insert(k.to_string(), val);
            }
        }
        let endpoint = s(spec, "endpoint")
            .map(str::to_string)
            .or_else(|| env.get("PVE_ENDPOINT").cloned())
            .ok_or_else(|| TranslateError::required("endpoint"))?;
        let mut out = Map::new();
        out.insert("endpoint".into(), json!(endpoint));
        let sec = |key: &str, secret: &str| json!({ "secretRef": { "name": secret, "key": key } });
        if let Some(r) = spec.get("credentialSecretRef") {
            known(r, "spec.credentialSecretRef", &["name", "namespace"])?;
            let secret = s(r, "name")
                .ok_or_else(|| TranslateError::required("spec.credentialSecretRef.name"))?;
            let data = &self
                .ctx
                .secrets
                .get(secret)
                .ok_or_else(|| TranslateError::not_found(format!("Secret '{secret}'")))?
                .string_data;
            if let Some(id) = data.get("token_id") {
                if !data.contains_key("token_secret") {
                    return Err(TranslateError::SecretTokenWithoutSecret(secret.into()));
                }
                out.insert(
                    "credentials".into(),
                    json!({ "tokenID": id, "tokenSecret": sec("token_secret", secret) }),
                );
            } else if let Some(u) = data.get("username") {
                out.insert(
                    "credentials".into(),
                    json!({ "username": u, "password": sec("password", secret) }),
                );
            } else {
                return Err(TranslateError::SecretWithoutCredentials(secret.into()));
            }
            if data.contains_key("ca.crt") {
                out.insert("caCertificate".into(), sec("ca.crt", secret));
            }
        } else if let (Some(id), Some(secret)) =
            (env.get("PVE_TOKEN_ID"), env.get("PVE_TOKEN_SECRET"))
        {
            out.insert(
                "credentials".into(),
                json!({ "tokenID": id, "tokenSecret": { "value": secret } }),
            );
        } else if let (Some(u), Some(p)) = (env.get("PVE_USERNAME"), env.get("PVE_PASSWORD")) {
            out.insert(
                "credentials".into(),
                json!({ "username": u, "password": { "value": p } }),
            );
        } else {
            return Err(TranslateError::NoCredentials);
        }
        if let Some(sel) = env.get("PVE_NODE_SELECTOR") {
            let nodes: Vec<&str> = sel
                .split([',', ';', ' '])
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .collect();
            out.insert("nodes".into(), json!(nodes));
        }
        env_tls(&mut out, &env);
        native("ProxmoxCluster", v, Value::Object(out))
    }

    fn class(&self, vm: &str, n: &str) -> R<&Value> {
        let d = self.classes.get(n).ok_or_else(|| {
            TranslateError::not_found(format!("VMClass '{n}' (classRef of {vm})"))
        })?;
        check_class(&d.value)?;
        Ok(d.value.get("spec").unwrap_or(&Value::Null))
    }

    /// A VirtualMachine as a Machine.
    pub(super) fn machine(&self, v: &Value) -> R<Resource> {
        let spec = self.machine_spec(v)?;
        native("Machine", v, spec)
    }

    fn machine_spec(&self, v: &Value) -> R<Value> {
        known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
        let vm = name(v);
        let spec = v.get("spec").unwrap_or(&Value::Null);
        known(
            spec,
            "spec",
            &[
                "providerRef",
                "classRef",
                "imageRef",
                "placementRef",
                "powerState",
                "networks",
                "disks",
                "userData",
            ],
        )?;
        let reference = |key: &str| -> R<Option<String>> {
            match spec.get(key) {
                None => Ok(None),
                Some(r) => {
                    known(r, &format!("spec.{key}"), &["name"])?;
                    Ok(Some(
                        s(r, "name")
                            .ok_or_else(|| TranslateError::required(format!("spec.{key}.name")))?
                            .to_string(),
                    ))
                }
            }
        };
        let provider = reference("providerRef")?
            .ok_or_else(|| TranslateError::required("spec.providerRef"))?;
        if !self.providers.contains_key(&provider) && !self.ctx.clusters.contains(&provider) {
            return Err(TranslateError::not_found(format!(
                "Provider '{provider}' (providerRef of {vm})"
            )));
        }
        let mut m = Map::new();
        m.insert("cluster".into(), json!(provider));
        let class_name =
            reference("classRef")?.ok_or_else(|| TranslateError::required("spec.classRef"))?;
        let class = self.class(vm, &class_name)?;
        let mut storage = None;
        let mut provisioning = None;
        if let Some(c) = class.get("cpus") {
            // VirtRigaud hot-plugs vCPUs: the VM has room for them (as
            // many cores as its node's CPUs), `cpus` of them plugged.
            m.insert("cpu".into(), json!({ "cores": c, "coresFromNode": true }));
        }
        if let Some(mem) = text(class, "memory") {
            m.insert("memory".into(), json!(mem));
        }
        if let Some(p) = class.get("spec") {
            if let Some(x) = s(p, "machine") {
                m.insert("machine".into(), json!(x));
            }
            if let Some(b) = s(p, "bios") {
                m.insert("bios".into(), json!(b));
            }
        }
        if let Some(st) = class.get("storage") {
            storage = s(st, "class").map(str::to_string);
            provisioning = s(st, "type").map(str::to_string);
        }
        if let Some(img) = reference("imageRef")? {
            let d = self.images.get(&img).ok_or_else(|| {
                TranslateError::not_found(format!("VMImage '{img}' (imageRef of {vm})"))
            })?;
            check_image(&d.value)?;
            let src =
                text(d.value.get("spec").unwrap_or(&Value::Null), "source").unwrap_or_default();
            m.insert("source".into(), json!({ "template": src }));
        }
        if let Some(pol) = reference("placementRef")? {
            let d = self.policies.get(&pol).ok_or_else(|| {
                TranslateError::not_found(format!(
                    "VMPlacementPolicy '{pol}' (placementRef of {vm})"
                ))
            })?;
            m.insert("placement".into(), policy(&d.value)?);
        }
        match s(spec, "powerState") {
            None => {}
            Some(p @ ("On" | "Off")) => {
                m.insert("powerState".into(), json!(p));
            }
            Some(p) => {
                return Err(TranslateError::invalid(
                    "spec.powerState",
                    format!("'{p}' is not On or Off"),
                ));
            }
        }
        let mut dns: Vec<Value> = Vec::new();
        let mut nets = Vec::new();
        for (i, n) in spec
            .get("networks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("spec.networks[{i}]");
            known(n, &at, &["name", "bridge", "vlan", "mac", "staticIP"])?;
            let label = s(n, "name").unwrap_or("");
            let bridge = match s(n, "bridge") {
                Some(b) => b.to_string(),
                None => self.bridge_of(label).ok_or_else(|| {
                    TranslateError::invalid(
                        &at,
                        format!(
                            "network '{label}' names no bridge (give bridge, or one of lan, dmz, mgmt, vmbrN)"
                        ),
                    )
                })?,
            };
            let mut x = Map::new();
            if !label.is_empty() {
                x.insert("name".into(), json!(label));
            }
            x.insert("bridge".into(), json!(bridge));
            if let Some(t) = n.get("vlan") {
                x.insert("vlan".into(), t.clone());
            }
            if let Some(mac) = s(n, "mac") {
                x.insert("macAddress".into(), json!(mac));
            }
            if let Some(ip) = n.get("staticIP") {
                known(
                    ip,
                    &format!("{at}.staticIP"),
                    &["address", "gateway", "dns"],
                )?;
                if let Some(a) = s(ip, "address") {
                    x.insert("ip".into(), json!(a));
                }
                if let Some(g) = s(ip, "gateway") {
                    x.insert("gateway".into(), json!(g));
                }
                for d in ip
                    .get("dns")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if !dns.contains(d) {
                        dns.push(d.clone());
                    }
                }
            }
            nets.push(Value::Object(x));
        }
        if !nets.is_empty() {
            m.insert("networks".into(), json!(nets));
        }
        let mut disks = Vec::new();
        for (i, d) in spec
            .get("disks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("spec.disks[{i}]");
            known(d, &at, &["name", "size"])?;
            let size =
                text(d, "size").ok_or_else(|| TranslateError::required(format!("{at}.size")))?;
            let mut x = json!({ "size": size });
            if let Some(n) = s(d, "name") {
                x["name"] = json!(n);
            }
            if let Some(st) = &storage {
                x["storage"] = json!(st);
            }
            if let Some(p) = &provisioning {
                x["provisioning"] = json!(p);
            }
            disks.push(x);
        }
        if !disks.is_empty() {
            m.insert("disks".into(), json!(disks));
        }
        let mut ci = Map::new();
        if let Some(u) = spec.get("userData") {
            known(u, "spec.userData", &["cloudInit"])?;
            if let Some(c) = u.get("cloudInit") {
                known(c, "spec.userData.cloudInit", &["inline"])?;
                if let Some(t) = s(c, "inline") {
                    ci.insert("userData".into(), json!(t));
                }
            }
        }
        if !dns.is_empty() {
            ci.insert("dns".into(), json!(dns));
        }
        if let Some(st) = &storage
            && !ci.is_empty()
        {
            ci.insert("storage".into(), json!(st));
        }
        if !ci.is_empty() {
            m.insert("cloudInit".into(), Value::Object(ci));
        }
        Ok(Value::Object(m))
    }

    fn bridge_of(&self, label: &str) -> Option<String> {
        if let Some(b) = self.ctx.bridges.get(label) {
            return Some(b.clone());
        }
        if let Some((_, b)) = NETWORK_BRIDGES.iter().find(|(n, _)| *n == label) {
            return Some((*b).to_string());
        }
        label.starts_with("vmbr").then(|| label.to_string())
    }

    /// A VMClone as a Machine cloned from its source: a declared
    /// VirtualMachine (its VM, with its class, networks and disks), else a
    /// VM or template PVE has by that name, whose CPU, memory and NICs the
    /// clone keeps. A linked clone (the default) needs a template;
    /// `linkedClone: false` copies any VM.
    pub(super) fn clone_vm(&self, v: &Value) -> R<Resource> {
        known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        known(spec, "spec", &["sourceVMRef", "linkedClone", "providerRef"])?;
        let r = spec
            .get("sourceVMRef")
            .ok_or_else(|| TranslateError::required("spec.sourceVMRef"))?;
        known(r, "spec.sourceVMRef", &["name"])?;
        let src = s(r, "name").ok_or_else(|| TranslateError::required("spec.sourceVMRef.name"))?;
        let linked = match spec.get("linkedClone") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(TranslateError::invalid(
                    "spec.linkedClone",
                    "expected true or false",
                ));
            }
        };
        let declared = self.vms.get(src);
        let mut m = match declared {
            Some(d) => {
                let mut m = self.machine_spec(&d.value)?;
                // The clone is the source's copy, not a clone of its image.
                m["source"] = Value::Null;
                m
            }
            None => {
                let provider = spec
                    .get("providerRef")
                    .and_then(|p| s(p, "name"))
                    .map(str::to_string)
                    .or_else(|| self.only_provider())
                    .ok_or_else(|| TranslateError::CloneSourceNotFound(src.into()))?;
                json!({ "cluster": provider })
            }
        };
        if let Some(p) = spec.get("providerRef") {
            known(p, "spec.providerRef", &["name"])?;
        }
        m["source"] = json!({ "template": validate_name(src), "linked": linked });
        if declared.is_none() {
            // Nothing says what the source has: the clone keeps it.
            m["source"]["keepHardware"] = json!(true);
        }
        if let Some(o) = m.as_object_mut() {
            o.retain(|_, x| !x.is_null());
        }
        native("Machine", v, m)
    }

    fn only_provider(&self) -> Option<String> {
        let mut all: Vec<&String> = self.providers.keys().collect();
        all.extend(self.ctx.clusters.iter());
        match all.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        }
    }

    /// A VMSnapshot as a MachineSnapshot of the VirtualMachine it names.
    pub(super) fn snapshot(&self, v: &Value) -> R<Resource> {
        known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        known(spec, "spec", &["vmRef", "description", "includeMemory"])?;
        let r = spec
            .get("vmRef")
            .ok_or_else(|| TranslateError::required("spec.vmRef"))?;
        known(r, "spec.vmRef", &["name"])?;
        let vm = s(r, "name").ok_or_else(|| TranslateError::required("spec.vmRef.name"))?;
        let mut m = json!({ "machine": vm });
        if let Some(d) = s(spec, "description") {
            m["description"] = json!(d);
        }
        if let Some(b) = spec.get("includeMemory") {
            m["includeMemory"] = b.clone();
        }
        native("MachineSnapshot", v, m)
    }
}

/// The VM name PVE holds for a VirtualMachine's name.
fn validate_name(n: &str) -> String {
    crate::validate::pve_name(n)
}
