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
use crate::types::{API_VERSION, Key, Resource, SecretObject};

mod crossplane;
mod error;
mod kubernetes;
mod virtrigaud;
mod vitistack;

pub use crossplane::site_cluster;
pub use error::TranslateError;
pub use kubernetes::{
    FOREIGN_KINDS, ForeignKind, KubeTranslation, Refused, STATUS_KINDS, foreign_status,
    kubernetes_objects, kubernetes_translation,
};

use crossplane::{provider_config, proxmox_vm};
use virtrigaud::{VirtRigaud, check_class, check_image, policy};
use vitistack::{default_cluster, vitistack};

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
    pub fn default_cluster(&self) -> std::result::Result<String, TranslateError> {
        default_cluster(self)
    }
}

/// The translation of a directory's foreign documents.
#[derive(Debug, Default)]
pub struct Translated {
    /// The native objects, each with the file of the document it comes
    /// from and that document (`document N (Kind/name)`).
    pub found: Vec<(Resource, PathBuf, String)>,
    /// Documents that cannot be translated.
    pub errors: Vec<(PathBuf, Error)>,
    /// The objects of [`STATUS_KINDS`] the Machines among `found` come
    /// from, by the Machine: their statuses are written in their own
    /// shape too ([`foreign_status`]).
    pub origins: BTreeMap<Key, Origin>,
}

/// The object of another system a native object was made from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    /// `infra.virtrigaud.io/v1beta1`.
    pub api_version: String,
    /// `VirtualMachine`.
    pub kind: String,
    /// Its name.
    pub name: String,
}

/// An object that more than one document declares (the same kind and
/// name once translated: a native `Machine web` and VirtRigaud's
/// `VMClone web` both declare `Machine/web`). None of them is applied:
/// which one was meant is the user's to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The object they all declare.
    pub key: Key,
    /// Each document, with its file (`document N (Kind/name)`).
    pub docs: Vec<(PathBuf, String)>,
}

impl Duplicate {
    /// The report: the object and every document that declares it.
    pub fn message(&self) -> String {
        let docs: Vec<String> = self
            .docs
            .iter()
            .map(|(f, what)| format!("{} {what}", f.display()))
            .collect();
        format!(
            "{} is declared by {} documents ({}): none of them is applied, and what exists is left as it is, until only one declares it (rename or remove the others)",
            self.key,
            self.docs.len(),
            docs.join(", ")
        )
    }
}

/// Takes out of `found` every object declared more than once, or whose
/// key is in `refused` already (declared twice by documents taken out
/// before), and adds its documents to `refused`.
pub fn refuse_duplicates(
    found: Vec<(Resource, PathBuf, String)>,
    refused: &mut BTreeMap<Key, Vec<(PathBuf, String)>>,
) -> Vec<(Resource, PathBuf, String)> {
    let mut count: BTreeMap<Key, usize> = BTreeMap::new();
    for (r, ..) in &found {
        *count.entry(r.key()).or_default() += 1;
    }
    let mut keep = Vec::with_capacity(found.len());
    for (r, file, what) in found {
        let key = r.key();
        if count.get(&key).is_some_and(|n| *n > 1) || refused.contains_key(&key) {
            refused.entry(key).or_default().push((file, what));
        } else {
            keep.push((r, file, what));
        }
    }
    keep
}

type R<T> = std::result::Result<T, TranslateError>;

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
            Err(TranslateError::NotAMapping { at: at.into() })
        };
    };
    for k in m.keys() {
        if !known.contains(&k.as_str()) {
            return Err(TranslateError::UnknownField {
                at: at.into(),
                field: k.clone(),
                expected: known.iter().map(|k| (*k).to_string()).collect(),
            });
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
    Ok(serde_json::from_value::<Resource>(doc)?)
}

/// A Provider's or ProviderConfig's `spec.deleteOnRemoval`: whether
/// removing the document of one of its machines (or snapshots) deletes
/// it in standalone mode. Off unless `true`.
fn delete_on_removal(spec: &Value) -> R<bool> {
    match spec.get("deleteOnRemoval") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(TranslateError::invalid(
            "spec.deleteOnRemoval",
            "expected true or false",
        )),
    }
}

/// The clusters whose Provider (VirtRigaud) or ProviderConfig (Crossplane)
/// says `deleteOnRemoval: true`.
fn removal_deletes_clusters(docs: &[Doc]) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for d in docs {
        let v = &d.value;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        if !delete_on_removal(spec).unwrap_or(false) {
            continue;
        }
        match (api(v), kind(v)) {
            (VIRTRIGAUD, "Provider") => {
                out.insert(name(v).to_string());
            }
            (CROSSPLANE, "ProviderConfig") => {
                for site in spec
                    .get("sites")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(sname) = s(site, "name") {
                        out.insert(site_cluster(name(v), sname));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Sets [`crate::types::REMOVAL_DELETES_ANNOTATION`] on the objects of a
/// translation that a `deleteOnRemoval: true` covers (`eligible`: made
/// from VirtRigaud's or the Crossplane provider's documents), and takes
/// it off every other (a document's own annotations are copied).
fn mark_removal_deletes(
    found: &mut [(Resource, PathBuf, String)],
    eligible: &[bool],
    docs: &[Doc],
) {
    use crate::types::REMOVAL_DELETES_ANNOTATION;
    let clusters = removal_deletes_clusters(docs);
    let machine_cluster: BTreeMap<String, String> = found
        .iter()
        .filter_map(|(r, ..)| match r {
            Resource::Machine(m) => Some((m.metadata.name.clone(), m.spec.cluster.clone())),
            _ => None,
        })
        .collect();
    for ((r, ..), eligible) in found.iter_mut().zip(eligible) {
        let on = *eligible
            && match &*r {
                Resource::ProxmoxCluster(c) => clusters.contains(&c.metadata.name),
                Resource::Machine(m) => clusters.contains(&m.spec.cluster),
                Resource::MachineSnapshot(sn) => machine_cluster
                    .get(&sn.spec.machine)
                    .is_some_and(|c| clusters.contains(c)),
                _ => false,
            };
        let a = &mut r.metadata_mut().annotations;
        if on {
            a.insert(REMOVAL_DELETES_ANNOTATION.into(), "true".into());
        } else {
            a.remove(REMOVAL_DELETES_ANNOTATION);
        }
    }
}

/// Translates every foreign document of a directory.
///
/// A name that two documents of one kind give (two `VMClass small`) is
/// refused in both, and is not followed from the documents that refer
/// to it (which of the two was meant is unknown); two documents that
/// make the same native object are refused by [`refuse_duplicates`].
pub fn translate(docs: &[Doc], ctx: &Context) -> Translated {
    let mut out = Translated::default();
    let mut same: BTreeMap<(&str, &str, &str), Vec<&Doc>> = BTreeMap::new();
    for d in docs {
        same.entry((api(&d.value), kind(&d.value), name(&d.value)))
            .or_default()
            .push(d);
    }
    let twice = |d: &Doc| {
        same.get(&(api(&d.value), kind(&d.value), name(&d.value)))
            .is_some_and(|l| l.len() > 1)
    };
    let by = |api_version: &str, k: &str| -> BTreeMap<String, &Doc> {
        docs.iter()
            .filter(|d| api(&d.value) == api_version && kind(&d.value) == k && !twice(d))
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
    let mut eligible = Vec::new();
    for d in docs {
        let v = &d.value;
        // The kinds that make no object of their own are reported here;
        // the others by the objects they make.
        if twice(d) && matches!(kind(v), "VMClass" | "VMImage" | "VMPlacementPolicy") {
            let dup = Duplicate {
                key: Key {
                    kind: kind(v).into(),
                    name: name(v).into(),
                },
                docs: same
                    .get(&(api(v), kind(v), name(v)))
                    .into_iter()
                    .flatten()
                    .map(|d| (d.file.clone(), d.what.clone()))
                    .collect(),
            };
            out.errors.push((
                d.file.clone(),
                Error::Manifest {
                    path: d.file.display().to_string(),
                    message: dup.message(),
                },
            ));
            continue;
        }
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
            (a, k) => Err(TranslateError::UnknownKind {
                kind: k.into(),
                api_version: a.into(),
            }),
        };
        match r {
            Ok(list) => {
                for r in list {
                    eligible.push(matches!(api(v), VIRTRIGAUD | CROSSPLANE));
                    if matches!(r, Resource::Machine(_))
                        && STATUS_KINDS
                            .iter()
                            .any(|(a, k, ..)| *a == api(v) && *k == kind(v))
                    {
                        out.origins.insert(
                            r.key(),
                            Origin {
                                api_version: api(v).into(),
                                kind: kind(v).into(),
                                name: name(v).into(),
                            },
                        );
                    }
                    out.found.push((r, d.file.clone(), d.what.clone()));
                }
            }
            Err(m) => out.errors.push((
                d.file.clone(),
                Error::Manifest {
                    path: d.file.display().to_string(),
                    message: format!("{}: {m}", d.what),
                },
            )),
        }
    }
    mark_removal_deletes(&mut out.found, &eligible, docs);
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
