//! The resources of the systems this operator stands in for, read as
//! they are written and turned into its own: vitistack's Proxmox Operator
//! (`vitistack.io/v1alpha1` Machine, ProxmoxCluster, ProxmoxNode),
//! VirtRigaud's Proxmox provider (`infra.virtrigaud.io/v1beta1` Provider,
//! VirtualMachine, VMClass, VMImage, VMClone, VMSnapshot,
//! VMPlacementPolicy) and the Crossplane provider
//! (`proxmox.sankofa.nexus/v1alpha1` ProviderConfig, ProxmoxVM).
//!
//! A manifest directory may hold them beside the native documents. The
//! translation takes every foreign document of a directory at once,
//! because one resource names others (a VirtualMachine its Provider,
//! VMClass, VMImage and placement policy; a ProxmoxVM its ProviderConfig
//! and site): each becomes the native object that does what its system
//! documents (a VirtualMachine, a VMClone and a ProxmoxVM a Machine; a
//! Provider a ProxmoxCluster, a ProviderConfig one ProxmoxCluster per
//! site; a VMSnapshot a MachineSnapshot), under its own name. VMClass,
//! VMImage and VMPlacementPolicy are read into the machines that name
//! them. A field a system does not document is refused by name, as in
//! native documents; a reference that cannot be followed makes the
//! document unreadable (kept as it was, reported), never dropped.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::error::Error;
use crate::types::{API_VERSION, Resource, SecretObject};

/// vitistack's Proxmox Operator.
pub const VITISTACK: &str = "vitistack.io/v1alpha1";
/// VirtRigaud.
pub const VIRTRIGAUD: &str = "infra.virtrigaud.io/v1beta1";
/// The Crossplane provider for Proxmox.
pub const CROSSPLANE: &str = "proxmox.sankofa.nexus/v1alpha1";

/// VirtRigaud's network names and the bridges they stand for (its
/// "Network Bridge Mapping"); `vmbr*` names a bridge directly.
pub const NETWORK_BRIDGES: &[(&str, &str)] = &[
    ("lan", "vmbr0"),
    ("default", "vmbr0"),
    ("dmz", "vmbr1"),
    ("mgmt", "vmbr2"),
    ("management", "vmbr2"),
];

/// Whether documents of `api_version` are translated here.
pub fn is_foreign(api_version: &str) -> bool {
    matches!(api_version, VITISTACK | VIRTRIGAUD | CROSSPLANE)
}

/// A foreign document as read.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The document.
    pub value: Value,
    /// Its file.
    pub file: PathBuf,
    /// `document N (Kind/name)`, for messages.
    pub what: String,
}

/// What the translation may look at besides the documents.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// `PROXMOX_DEFAULT_CLUSTER`: the cluster of vitistack Machines.
    pub default_cluster: Option<String>,
    /// The native ProxmoxClusters of the directory.
    pub clusters: Vec<String>,
    /// The Secrets of the directory.
    pub secrets: BTreeMap<String, SecretObject>,
    /// The operator's `PVE_*` variables: a Provider's defaults (TLS trust,
    /// credentials when it names no Secret), as VirtRigaud's provider
    /// reads its environment; a cluster that says nothing of TLS trusts
    /// `PVE_CA_BUNDLE` or `PVE_INSECURE_SKIP_VERIFY`.
    pub env: BTreeMap<String, String>,
    /// Network names to bridges over [`NETWORK_BRIDGES`]
    /// (`PVE_OPERATOR_NETWORK_BRIDGES=lan=vmbr0,dmz=vmbr5`).
    pub bridges: BTreeMap<String, String>,
}

impl Context {
    /// The settings of the operator's environment: `PROXMOX_DEFAULT_CLUSTER`,
    /// the `PVE_*` variables, `PVE_OPERATOR_NETWORK_BRIDGES`
    /// (`name=bridge,...`).
    pub fn from_env(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut c = Self::default();
        for (k, v) in vars {
            if v.trim().is_empty() {
                continue;
            }
            if k == "PROXMOX_DEFAULT_CLUSTER" {
                c.default_cluster = Some(v.trim().to_string());
            } else if k == "PVE_OPERATOR_NETWORK_BRIDGES" {
                for pair in v.split([',', ';', ' ']).filter(|p| !p.is_empty()) {
                    if let Some((n, b)) = pair.split_once('=') {
                        c.bridges.insert(n.trim().to_string(), b.trim().to_string());
                    }
                }
            } else if k.starts_with("PVE_") {
                c.env.insert(k, v);
            }
        }
        c
    }

    /// The cluster of a machine that names none: `PROXMOX_DEFAULT_CLUSTER`,
    /// else the only ProxmoxCluster declared.
    ///
    /// # Errors
    /// No cluster, or several and no default.
    pub fn default_cluster(&self) -> std::result::Result<String, String> {
        default_cluster(self)
    }
}

/// The translation of a directory's foreign documents.
#[derive(Debug, Default)]
pub struct Translated {
    /// The native objects, with the file of the document they come from.
    pub found: Vec<(Resource, PathBuf)>,
    /// Documents that cannot be translated.
    pub errors: Vec<(PathBuf, Error)>,
}

type R<T> = std::result::Result<T, String>;

fn kind(v: &Value) -> &str {
    v.get("kind").and_then(Value::as_str).unwrap_or("")
}

fn api(v: &Value) -> &str {
    v.get("apiVersion").and_then(Value::as_str).unwrap_or("")
}

fn name(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Refuses the keys of `obj` (at `at`) that are not in `known`.
fn known(obj: &Value, at: &str, known: &[&str]) -> R<()> {
    let Some(m) = obj.as_object() else {
        return if obj.is_null() {
            Ok(())
        } else {
            Err(format!("{at}: expected a mapping"))
        };
    };
    for k in m.keys() {
        if !known.contains(&k.as_str()) {
            return Err(format!(
                "{at}: unknown field `{k}`, expected one of {}",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(())
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A string or a number as text (`"8Gi"`, `4096`).
fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn metadata(v: &Value) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(name(v)));
    for k in ["labels", "annotations"] {
        if let Some(x) = v.pointer(&format!("/metadata/{k}")) {
            m.insert(k.into(), x.clone());
        }
    }
    Value::Object(m)
}

fn native(kind: &str, v: &Value, spec: Value) -> R<Resource> {
    let doc = json!({
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": metadata(v),
        "spec": spec,
    });
    serde_json::from_value::<Resource>(doc).map_err(|e| e.to_string())
}

/// Translates every foreign document of a directory.
pub fn translate(docs: &[Doc], ctx: &Context) -> Translated {
    let mut out = Translated::default();
    let by = |api_version: &str, k: &str| -> BTreeMap<String, &Doc> {
        docs.iter()
            .filter(|d| api(&d.value) == api_version && kind(&d.value) == k)
            .map(|d| (name(&d.value).to_string(), d))
            .collect()
    };
    // vitistack Machines may go to a vitistack ProxmoxCluster.
    let mut ctx = ctx.clone();
    ctx.clusters
        .extend(by(VITISTACK, "ProxmoxCluster").into_keys());
    let ctx = &ctx;
    let vr = VirtRigaud {
        providers: by(VIRTRIGAUD, "Provider"),
        classes: by(VIRTRIGAUD, "VMClass"),
        images: by(VIRTRIGAUD, "VMImage"),
        policies: by(VIRTRIGAUD, "VMPlacementPolicy"),
        vms: by(VIRTRIGAUD, "VirtualMachine"),
        ctx,
    };
    let configs = by(CROSSPLANE, "ProviderConfig");
    for d in docs {
        let v = &d.value;
        let r: R<Vec<Resource>> = match (api(v), kind(v)) {
            (VITISTACK, k) => vitistack(k, v, ctx).map(|r| vec![r]),
            (VIRTRIGAUD, "Provider") => vr.provider(v).map(|r| vec![r]),
            (VIRTRIGAUD, "VirtualMachine") => vr.machine(v).map(|r| vec![r]),
            (VIRTRIGAUD, "VMClone") => vr.clone_vm(v).map(|r| vec![r]),
            (VIRTRIGAUD, "VMSnapshot") => vr.snapshot(v).map(|r| vec![r]),
            (VIRTRIGAUD, "VMClass") => check_class(v).map(|_| vec![]),
            (VIRTRIGAUD, "VMImage") => check_image(v).map(|_| vec![]),
            (VIRTRIGAUD, "VMPlacementPolicy") => policy(v).map(|_| vec![]),
            (CROSSPLANE, "ProviderConfig") => provider_config(v, ctx),
            (CROSSPLANE, "ProxmoxVM") => proxmox_vm(v, &configs).map(|r| vec![r]),
            (a, k) => Err(format!("kind {k} of {a} is not known")),
        };
        match r {
            Ok(list) => out
                .found
                .extend(list.into_iter().map(|r| (r, d.file.clone()))),
            Err(m) => out.errors.push((
                d.file.clone(),
                Error::Manifest {
                    path: d.file.display().to_string(),
                    message: format!("{}: {m}", d.what),
                },
            )),
        }
    }
    out
}

/// TLS settings a foreign cluster that says nothing of TLS takes from the
/// operator's environment.
fn env_tls(spec: &mut Map<String, Value>, env: &BTreeMap<String, String>) {
    if spec.contains_key("caCertificate") || spec.contains_key("insecureSkipTLSVerify") {
        return;
    }
    if let Some(ca) = env.get("PVE_CA_BUNDLE") {
        let src = if ca.contains("-----BEGIN") {
            json!({ "value": ca })
        } else {
            json!({ "file": ca })
        };
        spec.insert("caCertificate".into(), src);
    } else if let Some(v) = env.get("PVE_INSECURE_SKIP_VERIFY") {
        let yes = matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        );
        spec.insert("insecureSkipTLSVerify".into(), json!(yes));
    }
}

// ---------------------------------------------------------------------
// vitistack

/// vitistack's kinds are this operator's own but for a few fields:
/// Machine's `template` (the source), its cluster (none in the spec:
/// `PROXMOX_DEFAULT_CLUSTER`, else the only ProxmoxCluster), and a
/// ProxmoxCluster's certificates as strings.
fn vitistack(k: &str, v: &Value, ctx: &Context) -> R<Resource> {
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

fn default_cluster(ctx: &Context) -> R<String> {
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

// ---------------------------------------------------------------------
// VirtRigaud

struct VirtRigaud<'a> {
    providers: BTreeMap<String, &'a Doc>,
    classes: BTreeMap<String, &'a Doc>,
    images: BTreeMap<String, &'a Doc>,
    policies: BTreeMap<String, &'a Doc>,
    vms: BTreeMap<String, &'a Doc>,
    ctx: &'a Context,
}

fn check_class(v: &Value) -> R<()> {
    known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
    let spec = v.get("spec").unwrap_or(&Value::Null);
    known(spec, "spec", &["cpus", "memory", "spec", "storage"])?;
    if let Some(p) = spec.get("spec") {
        known(p, "spec.spec", &["machine", "bios"])?;
        if let Some(b) = s(p, "bios")
            && !matches!(b, "uefi" | "bios" | "ovmf" | "seabios")
        {
            return Err(format!(
                "spec.spec.bios: '{b}' is not one of uefi, bios (ovmf, seabios)"
            ));
        }
    }
    if let Some(st) = spec.get("storage") {
        known(st, "spec.storage", &["class", "type"])?;
        if let Some(t) = s(st, "type")
            && !matches!(t, "thin" | "thick")
        {
            return Err(format!("spec.storage.type: '{t}' is not thin or thick"));
        }
    }
    Ok(())
}

fn check_image(v: &Value) -> R<()> {
    known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
    let spec = v.get("spec").unwrap_or(&Value::Null);
    known(spec, "spec", &["source"])?;
    text(spec, "source")
        .map(|_| ())
        .ok_or_else(|| "spec.source: a template's name or VMID is required".into())
}

/// A VMPlacementPolicy as the native placement.
fn policy(v: &Value) -> R<Value> {
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
            .ok_or("spec.nodeSelector: expected a list of node names")?
            .iter()
            .map(|n| n.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or("spec.nodeSelector: expected a list of node names")?;
        p.insert("nodes".into(), json!(nodes));
    }
    if let Some(aa) = spec.get("antiAffinity") {
        let mut keys = Vec::new();
        for (i, t) in aa
            .as_array()
            .ok_or("spec.antiAffinity: expected a list")?
            .iter()
            .enumerate()
        {
            let at = format!("spec.antiAffinity[{i}]");
            known(t, &at, &["key", "operator", "values"])?;
            let key = s(t, "key").ok_or(format!("{at}.key is required"))?;
            if let Some(op) = s(t, "operator")
                && op != "In"
            {
                return Err(format!("{at}.operator: only In is supported, not '{op}'"));
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
    fn provider(&self, v: &Value) -> R<Resource> {
        known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        known(
            spec,
            "spec",
            &["type", "endpoint", "credentialSecretRef", "runtime"],
        )?;
        match s(spec, "type") {
            Some("proxmox") => {}
            Some(t) => return Err(format!("spec.type: '{t}' providers are not PVE")),
            None => return Err("spec.type: proxmox is required".into()),
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
                    return Err(format!("{at}: name and value are required"));
                };
                env.insert(k.to_string(), val);
            }
        }
        let endpoint = s(spec, "endpoint")
            .map(str::to_string)
            .or_else(|| env.get("PVE_ENDPOINT").cloned())
            .ok_or("endpoint is required")?;
        let mut out = Map::new();
        out.insert("endpoint".into(), json!(endpoint));
        let sec = |key: &str, secret: &str| json!({ "secretRef": { "name": secret, "key": key } });
        if let Some(r) = spec.get("credentialSecretRef") {
            known(r, "spec.credentialSecretRef", &["name", "namespace"])?;
            let secret = s(r, "name").ok_or("spec.credentialSecretRef.name is required")?;
            let data = &self
                .ctx
                .secrets
                .get(secret)
                .ok_or(format!("Secret '{secret}' not found"))?
                .string_data;
            if let Some(id) = data.get("token_id") {
                if !data.contains_key("token_secret") {
                    return Err(format!(
                        "Secret '{secret}' has token_id but no token_secret"
                    ));
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
                return Err(format!(
                    "Secret '{secret}' has neither token_id and token_secret nor username and password"
                ));
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
            return Err("no credentials: name a Secret in spec.credentialSecretRef or set PVE_TOKEN_ID and PVE_TOKEN_SECRET (or PVE_USERNAME and PVE_PASSWORD)".into());
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
        let d = self
            .classes
            .get(n)
            .ok_or(format!("VMClass '{n}' (classRef of {vm}) not found"))?;
        check_class(&d.value)?;
        Ok(d.value.get("spec").unwrap_or(&Value::Null))
    }

    /// A VirtualMachine as a Machine.
    fn machine(&self, v: &Value) -> R<Resource> {
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
                            .ok_or(format!("spec.{key}.name is required"))?
                            .to_string(),
                    ))
                }
            }
        };
        let provider = reference("providerRef")?.ok_or("spec.providerRef is required")?;
        if !self.providers.contains_key(&provider) && !self.ctx.clusters.contains(&provider) {
            return Err(format!(
                "Provider '{provider}' (providerRef of {vm}) not found"
            ));
        }
        let mut m = Map::new();
        m.insert("cluster".into(), json!(provider));
        let class_name = reference("classRef")?.ok_or("spec.classRef is required")?;
        let class = self.class(vm, &class_name)?;
        let mut storage = None;
        let mut provisioning = None;
        if let Some(c) = class.get("cpus") {
            m.insert("cpu".into(), json!({ "cores": c }));
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
            let d = self
                .images
                .get(&img)
                .ok_or(format!("VMImage '{img}' (imageRef of {vm}) not found"))?;
            check_image(&d.value)?;
            let src =
                text(d.value.get("spec").unwrap_or(&Value::Null), "source").unwrap_or_default();
            m.insert("source".into(), json!({ "template": src }));
        }
        if let Some(pol) = reference("placementRef")? {
            let d = self.policies.get(&pol).ok_or(format!(
                "VMPlacementPolicy '{pol}' (placementRef of {vm}) not found"
            ))?;
            m.insert("placement".into(), policy(&d.value)?);
        }
        match s(spec, "powerState") {
            None => {}
            Some(p @ ("On" | "Off")) => {
                m.insert("powerState".into(), json!(p));
            }
            Some(p) => return Err(format!("spec.powerState: '{p}' is not On or Off")),
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
                None => self.bridge_of(label).ok_or(format!(
                    "{at}: network '{label}' names no bridge (give bridge, or one of lan, dmz, mgmt, vmbrN)"
                ))?,
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
            let size = text(d, "size").ok_or(format!("{at}.size is required"))?;
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
    fn clone_vm(&self, v: &Value) -> R<Resource> {
        known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        known(spec, "spec", &["sourceVMRef", "linkedClone", "providerRef"])?;
        let r = spec
            .get("sourceVMRef")
            .ok_or("spec.sourceVMRef is required")?;
        known(r, "spec.sourceVMRef", &["name"])?;
        let src = s(r, "name").ok_or("spec.sourceVMRef.name is required")?;
        let linked = match spec.get("linkedClone") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err("spec.linkedClone: expected true or false".into()),
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
                    .ok_or(format!(
                        "VirtualMachine '{src}' (sourceVMRef) not found, and no single Provider to find a VM of that name in (give spec.providerRef)"
                    ))?;
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
    fn snapshot(&self, v: &Value) -> R<Resource> {
        known(v, "", &["apiVersion", "kind", "metadata", "spec"])?;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        known(spec, "spec", &["vmRef", "description", "includeMemory"])?;
        let r = spec.get("vmRef").ok_or("spec.vmRef is required")?;
        known(r, "spec.vmRef", &["name"])?;
        let vm = s(r, "name").ok_or("spec.vmRef.name is required")?;
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

// ---------------------------------------------------------------------
// Crossplane

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

fn provider_config(v: &Value, ctx: &Context) -> R<Vec<Resource>> {
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
fn proxmox_vm(v: &Value, configs: &BTreeMap<String, &Doc>) -> R<Resource> {
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

// ---------------------------------------------------------------------
// Kubernetes

/// A kind of the other systems, served as a custom resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForeignKind {
    /// `infra.virtrigaud.io`.
    pub group: &'static str,
    /// `v1beta1`.
    pub version: &'static str,
    /// `VirtualMachine`.
    pub kind: &'static str,
    /// `virtualmachines`.
    pub plural: &'static str,
}

const fn fk(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
) -> ForeignKind {
    ForeignKind {
        group,
        version,
        kind,
        plural,
    }
}

/// Every kind of the three systems, as the CRDs of `operator/config/crd/`
/// declare them (namespaced, schemas open: the operator checks the
/// fields, as in standalone mode).
pub const FOREIGN_KINDS: &[ForeignKind] = &[
    fk("vitistack.io", "v1alpha1", "Machine", "machines"),
    fk(
        "vitistack.io",
        "v1alpha1",
        "ProxmoxCluster",
        "proxmoxclusters",
    ),
    fk("vitistack.io", "v1alpha1", "ProxmoxNode", "proxmoxnodes"),
    fk("infra.virtrigaud.io", "v1beta1", "Provider", "providers"),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VirtualMachine",
        "virtualmachines",
    ),
    fk("infra.virtrigaud.io", "v1beta1", "VMClass", "vmclasses"),
    fk("infra.virtrigaud.io", "v1beta1", "VMImage", "vmimages"),
    fk("infra.virtrigaud.io", "v1beta1", "VMClone", "vmclones"),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VMSnapshot",
        "vmsnapshots",
    ),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VMPlacementPolicy",
        "vmplacementpolicies",
    ),
    fk(
        "proxmox.sankofa.nexus",
        "v1alpha1",
        "ProviderConfig",
        "providerconfigs",
    ),
    fk(
        "proxmox.sankofa.nexus",
        "v1alpha1",
        "ProxmoxVM",
        "proxmoxvms",
    ),
];

/// The kinds whose objects become Machines, with the `status` subresource
/// the operator writes on them: `(api version, kind, group, plural/status)`.
pub const STATUS_KINDS: &[(&str, &str, &str, &str)] = &[
    (VITISTACK, "Machine", "vitistack.io", "machines/status"),
    (
        VIRTRIGAUD,
        "VirtualMachine",
        "infra.virtrigaud.io",
        "virtualmachines/status",
    ),
    (
        VIRTRIGAUD,
        "VMClone",
        "infra.virtrigaud.io",
        "vmclones/status",
    ),
    (
        CROSSPLANE,
        "ProxmoxVM",
        "proxmox.sankofa.nexus",
        "proxmoxvms/status",
    ),
];

/// The status an object of another system shows for the Machine made
/// from it, in the fields its own documentation names: vitistack's
/// Machine (`phase`, `conditions`, `vmid`, `node`, `ipAddresses`,
/// `lastUpdated`), VirtRigaud's VirtualMachine and VMClone (`phase`,
/// `ipAddresses`, `conditions`, and `vmid`, `node` and `consoleURL`
/// for Describe), the Crossplane provider's ProxmoxVM (`vmId`, `state` as
/// PVE names it, `ipAddress`, `conditions`). `None` for other kinds.
pub fn foreign_status(
    api_version: &str,
    kind: &str,
    status: &crate::types::MachineStatus,
) -> Option<Value> {
    use crate::types::Phase;
    let conditions = serde_json::to_value(&status.conditions).unwrap_or_default();
    let mut out = match (api_version, kind) {
        (VITISTACK, "Machine") => json!({
            "phase": status.phase.as_str(),
            "conditions": conditions,
            "vmid": status.vmid,
            "node": status.node,
            "ipAddresses": status.ip_addresses,
            "lastUpdated": status.last_updated,
        }),
        (VIRTRIGAUD, "VirtualMachine" | "VMClone") => json!({
            "phase": status.phase.as_str(),
            "ipAddresses": status.ip_addresses,
            "conditions": conditions,
            "vmid": status.vmid,
            "node": status.node,
            "consoleURL": status.console.as_ref().map(|c| c.url.clone()),
        }),
        (CROSSPLANE, "ProxmoxVM") => json!({
            "vmId": status.vmid,
            "state": match status.phase {
                Phase::Running => "running",
                Phase::Stopped => "stopped",
                Phase::Suspended => "paused",
                Phase::Pending | Phase::Creating => "creating",
                Phase::Error => "error",
            },
            "ipAddress": status.ip_addresses.first(),
            "conditions": conditions,
        }),
        _ => return None,
    };
    if let Some(o) = out.as_object_mut() {
        o.retain(|_, v| !v.is_null());
    }
    Some(out)
}

/// The operator's own objects for one namespace's objects of the other
/// systems (`objects`: as the API server returns them, with
/// `metadata.uid`), ready for server-side apply: each in `namespace`,
/// owned by the object it comes from (so that deleting that object
/// deletes it, and a Machine's finalizer then its VM). With the messages
/// of the objects that cannot be translated (nothing is applied for
/// them: what they made stays as it is).
pub fn kubernetes_objects(
    objects: &[Value],
    namespace: &str,
    ctx: &Context,
) -> (Vec<Value>, Vec<String>) {
    let docs: Vec<Doc> = objects
        .iter()
        .enumerate()
        .map(|(i, v)| {
            // The status is the operator's own writing (foreign_status),
            // not part of what the object declares.
            let mut value = v.clone();
            if let Some(o) = value.as_object_mut() {
                o.remove("status");
            }
            Doc {
                value,
                file: PathBuf::from(i.to_string()),
                what: format!("{}/{}/{}", namespace, kind(v), name(v)),
            }
        })
        .collect();
    let t = translate(&docs, ctx);
    let mut out = Vec::new();
    for (r, file) in t.found {
        let Some(owner) = file
            .to_str()
            .and_then(|s| s.parse::<usize>().ok())
            .and_then(|i| objects.get(i))
        else {
            continue;
        };
        let Ok(mut v) = serde_json::to_value(&r) else {
            continue;
        };
        v["metadata"]["namespace"] = json!(namespace);
        if let Some(uid) = owner.pointer("/metadata/uid").and_then(Value::as_str) {
            v["metadata"]["ownerReferences"] = json!([{
                "apiVersion": api(owner),
                "kind": kind(owner),
                "name": name(owner),
                "uid": uid,
                "controller": true,
                "blockOwnerDeletion": true,
            }]);
        }
        out.push(v);
    }
    let errors = t
        .errors
        .into_iter()
        .map(|(_, e)| match e {
            Error::Manifest { message, .. } => message,
            other => other.to_string(),
        })
        .collect();
    (out, errors)
}
