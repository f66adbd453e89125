//! The Kubernetes side of the operator: what it asks of the API server.
//!
//! The controller ([`crate::kubernetes`]) keeps this contract: the RBAC of
//! `operator/config/rbac/` is checked against it (tests/k8s_manifests.rs),
//! and the controller's requests against a mocked API server
//! (tests/kubernetes.rs).

/// One kind of request: API group (`""` for the core group), resource
/// (with `/status` for the subresource) and verb, as RBAC names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiRequest {
    /// `pve.fake-pve.io`, `""`, `coordination.k8s.io`, ...
    pub group: &'static str,
    /// `machines`, `machines/status`, `secrets`, `leases`, ...
    pub resource: &'static str,
    /// `get`, `list`, `watch`, `patch`, `create`, `update`.
    pub verb: &'static str,
    /// Cluster-wide (a ClusterRole) or only in the operator's namespace.
    pub cluster_wide: bool,
}

/// The custom resources, by plural.
pub const KINDS: &[&str] = &[
    "proxmoxclusters",
    "proxmoxnodes",
    "machines",
    "machinesnapshots",
    "machineimages",
];

const fn req(group: &'static str, resource: &'static str, verb: &'static str) -> ApiRequest {
    ApiRequest {
        group,
        resource,
        verb,
        cluster_wide: true,
    }
}

const fn local(group: &'static str, resource: &'static str, verb: &'static str) -> ApiRequest {
    ApiRequest {
        group,
        resource,
        verb,
        cluster_wide: false,
    }
}

/// Every request the operator makes on Kubernetes besides the custom
/// resources' own (see [`requests`]): Secrets it reads credentials from
/// (watched, so a rotated password takes effect), Events it records, and
/// the Lease of leader election in its own namespace.
pub const OTHER_REQUESTS: &[ApiRequest] = &[
    req("", "secrets", "get"),
    req("", "secrets", "list"),
    req("", "secrets", "watch"),
    req("events.k8s.io", "events", "create"),
    req("events.k8s.io", "events", "patch"),
    local("coordination.k8s.io", "leases", "get"),
    local("coordination.k8s.io", "leases", "create"),
    local("coordination.k8s.io", "leases", "update"),
];

/// Every request of the operator: for each custom resource list and
/// watch (the reflector), get, patch (finalizers, server-side apply) and
/// patch of `/status`; then [`OTHER_REQUESTS`].
pub fn requests() -> Vec<ApiRequest> {
    let mut out = Vec::new();
    for k in KINDS {
        for verb in ["get", "list", "watch", "patch"] {
            out.push(req("pve.fake-pve.io", k, verb));
        }
    }
    for (k, s) in KINDS.iter().zip([
        "proxmoxclusters/status",
        "proxmoxnodes/status",
        "machines/status",
        "machinesnapshots/status",
        "machineimages/status",
    ]) {
        debug_assert!(s.starts_with(k));
        out.push(req("pve.fake-pve.io", s, "patch"));
    }
    out.extend_from_slice(OTHER_REQUESTS);
    // The other systems' kinds are listed, and the objects made from them
    // applied (server-side apply, which may create).
    for k in crate::dialects::FOREIGN_KINDS {
        out.push(req(k.group, k.plural, "list"));
    }
    // Their statuses: the Machine's for those that became Machines, and
    // for each why it is not applied, when it is not.
    for k in crate::dialects::FOREIGN_KINDS {
        out.push(req(k.group, k.status, "patch"));
    }
    for k in [
        "proxmoxclusters",
        "proxmoxnodes",
        "machines",
        "machinesnapshots",
    ] {
        out.push(req("pve.fake-pve.io", k, "create"));
    }
    out
}
