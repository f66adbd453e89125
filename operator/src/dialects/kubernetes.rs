//! The other systems' kinds served as Kubernetes custom resources, the
//! statuses shown on them and the native objects made from them.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{CROSSPLANE, Context, Doc, VIRTRIGAUD, VITISTACK, api, kind, name, translate};
use crate::error::Error;

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
    /// Its status subresource (`virtualmachines/status`): where the
    /// operator says that an object is not applied, or shows the status
    /// of the Machine made from it.
    pub status: &'static str,
}

impl ForeignKind {
    /// `infra.virtrigaud.io/v1beta1`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// The kind of `api_version` named `kind`, if it is one.
    pub fn of(api_version: &str, kind: &str) -> Option<&'static Self> {
        FOREIGN_KINDS
            .iter()
            .find(|k| k.kind == kind && k.api_version() == api_version)
    }
}

const fn fk(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    status: &'static str,
) -> ForeignKind {
    ForeignKind {
        group,
        version,
        kind,
        plural,
        status,
    }
}

/// Every kind of the three systems, as the CRDs of `operator/config/crd/`
/// declare them (namespaced, schemas open: the operator checks the
/// fields, as in standalone mode).
pub const FOREIGN_KINDS: &[ForeignKind] = &[
    fk(
        "vitistack.io",
        "v1alpha1",
        "Machine",
        "machines",
        "machines/status",
    ),
    fk(
        "vitistack.io",
        "v1alpha1",
        "ProxmoxCluster",
        "proxmoxclusters",
        "proxmoxclusters/status",
    ),
    fk(
        "vitistack.io",
        "v1alpha1",
        "ProxmoxNode",
        "proxmoxnodes",
        "proxmoxnodes/status",
    ),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "Provider",
        "providers",
        "providers/status",
    ),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VirtualMachine",
        "virtualmachines",
        "virtualmachines/status",
    ),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VMClass",
        "vmclasses",
        "vmclasses/status",
    ),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VMImage",
        "vmimages",
        "vmimages/status",
    ),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VMClone",
        "vmclones",
        "vmclones/status",
    ),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VMSnapshot",
        "vmsnapshots",
        "vmsnapshots/status",
    ),
    fk(
        "infra.virtrigaud.io",
        "v1beta1",
        "VMPlacementPolicy",
        "vmplacementpolicies",
        "vmplacementpolicies/status",
    ),
    fk(
        "proxmox.sankofa.nexus",
        "v1alpha1",
        "ProviderConfig",
        "providerconfigs",
        "providerconfigs/status",
    ),
    fk(
        "proxmox.sankofa.nexus",
        "v1alpha1",
        "ProxmoxVM",
        "proxmoxvms",
        "proxmoxvms/status",
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
/// for Describe; `powerState` `On`, `Off` or `Suspended` and the
/// addresses as `ips` too, as its API's status names them), the Crossplane provider's ProxmoxVM (`vmId`, `state` as
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
            "powerState": match status.phase {
                Phase::Running => Some("On"),
                Phase::Stopped => Some("Off"),
                Phase::Suspended => Some("Suspended"),
                Phase::Pending | Phase::Creating | Phase::Error => None,
            },
            "ipAddresses": status.ip_addresses,
            "ips": status.ip_addresses,
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
    let t = kubernetes_translation(objects, namespace, ctx);
    (
        t.native.into_iter().map(|(_, v)| v).collect(),
        t.refused.into_iter().map(|r| r.message).collect(),
    )
}

/// What one namespace's objects of the other systems become
/// ([`kubernetes_translation`]).
#[derive(Debug, Default)]
pub struct KubeTranslation {
    /// The operator's own objects, each with the index (in the objects
    /// given) of the object it comes from.
    pub native: Vec<(usize, Value)>,
    /// The objects that are not applied, and why.
    pub refused: Vec<Refused>,
}

/// An object of another system that is not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Its index in the objects given.
    pub object: usize,
    /// `NameConflict` (another object declares the same name),
    /// `TranslationFailed` (it cannot be read).
    pub reason: &'static str,
    /// Why.
    pub message: String,
}

/// As [`kubernetes_objects`], saying which object each result is about.
/// Two objects that would make the same native object (VirtRigaud's
/// `VirtualMachine web` and Crossplane's `ProxmoxVM web` make
/// `Machine/web`) are both refused (`NameConflict`): neither is applied.
pub fn kubernetes_translation(
    objects: &[Value],
    namespace: &str,
    ctx: &Context,
) -> KubeTranslation {
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
    let index = |file: &std::path::Path| file.to_str().and_then(|s| s.parse::<usize>().ok());
    let t = translate(&docs, ctx);
    let mut refused_keys = std::collections::BTreeMap::new();
    let found = super::refuse_duplicates(t.found, &mut refused_keys);
    let mut out = KubeTranslation::default();
    for (key, docs) in refused_keys {
        let whats: Vec<&str> = docs.iter().map(|(_, w)| w.as_str()).collect();
        for (file, _) in &docs {
            let Some(i) = index(file) else {
                continue;
            };
            out.refused.push(Refused {
                object: i,
                reason: "NameConflict",
                message: format!(
                    "{key} is made from {} objects ({}): none of them is applied, and what exists is left as it is, until only one declares it (rename or remove the others)",
                    docs.len(),
                    whats.join(", ")
                ),
            });
        }
    }
    for (r, file, _) in found {
        let Some(i) = index(&file) else {
            continue;
        };
        let Some(owner) = objects.get(i) else {
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
        out.native.push((i, v));
    }
    for (file, e) in t.errors {
        let message = match e {
            Error::Manifest { message, .. } => message,
            other => other.to_string(),
        };
        out.refused.push(Refused {
            object: index(&file).unwrap_or(usize::MAX),
            reason: "TranslationFailed",
            message,
        });
    }
    out
}
