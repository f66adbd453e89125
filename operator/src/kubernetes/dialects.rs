//! The other systems' objects (Crossplane, VirtRigaud, vitistack) on
//! Kubernetes: translated into native objects, refused where a name is
//! taken, and their statuses written back in their own shape.

use super::*;

/// Reads the other systems' objects (vitistack's, VirtRigaud's, the
/// Crossplane provider's; kinds whose CRD is not installed are skipped)
/// and server-side applies the operator's own objects made from them
/// ([`crate::dialects::kubernetes_objects`]), owned by them: the
/// controllers above then do the work, and deleting such an object
/// deletes what was made from it (a Machine through its finalizer). An
/// object that cannot be translated changes nothing and is told so
/// (`TranslationFailed`); one whose name is taken (by an object of the
/// operator's own kinds it does not control, or by another such object
/// making the same one) is not applied, takes nothing over, and is told
/// so ([`NAME_CONFLICT`]): a condition in its status and a Warning Event
/// ([`refused`]).
///
/// # Errors
/// The API server refusing a list; or, after every other object was
/// told, shown and applied, the first apply (or status, or Event) it
/// refused: one failure does not keep the others from being sent.
pub async fn sync_dialects(
    client: &Client,
    worlds: &dyn WorldSource,
    settings: &crate::dialects::Context,
) -> Result<usize, kube::Error> {
    use kube::core::{ApiResource, DynamicObject};
    let mut by_ns: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for k in crate::dialects::FOREIGN_KINDS {
        let ar = ApiResource {
            group: k.group.into(),
            version: k.version.into(),
            api_version: format!("{}/{}", k.group, k.version),
            kind: k.kind.into(),
            plural: k.plural.into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        let list = match api.list(&kube::api::ListParams::default()).await {
            Ok(l) => l,
            Err(kube::Error::Api(e)) if e.code == 404 => continue,
            Err(e) => return Err(e),
        };
        for o in list.items {
            let ns = o
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            let Ok(mut v) = serde_json::to_value(&o) else {
                continue;
            };
            v["apiVersion"] = serde_json::json!(ar.api_version);
            v["kind"] = serde_json::json!(k.kind);
            by_ns.entry(ns).or_default().push(v);
        }
    }
    let mut applied = 0;
    let mut first_error: Option<kube::Error> = None;
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: MANAGER.into(),
            instance: None,
        },
    );
    for (ns, objects) in by_ns {
        let w = worlds.world(&ns);
        let mut ctx = settings.clone();
        ctx.clusters = w.clusters.keys().cloned().collect();
        ctx.secrets = w.secrets.clone();
        let t = crate::dialects::kubernetes_translation(&objects, &ns, &ctx);
        // Objects whose name is taken: by another of these objects, or by
        // an object of the operator's own kinds that they do not control
        // (made by hand, or from another object). Nothing is applied for
        // them, nothing is taken over; they say so.
        let mut conflicts: BTreeMap<usize, (&'static str, String)> = BTreeMap::new();
        for r in &t.refused {
            conflicts.insert(r.object, (r.reason, r.message.clone()));
        }
        let mut native = Vec::new();
        for (i, v) in t.native {
            let key = crate::types::Key {
                kind: v["kind"].as_str().unwrap_or_default().into(),
                name: v["metadata"]["name"].as_str().unwrap_or_default().into(),
            };
            let uid = objects[i]["metadata"]["uid"].as_str();
            match w.owners.get(&key) {
                Some(owner) if owner.as_deref() != uid => {
                    let from = format!(
                        "{}/{}",
                        objects[i]["kind"].as_str().unwrap_or_default(),
                        key.name
                    );
                    conflicts.insert(
                        i,
                        (
                            NAME_CONFLICT,
                            format!(
                                "{key} already exists in namespace {ns} and is not made from {from}: {from} is not applied and takes nothing over (rename it, or remove {key})"
                            ),
                        ),
                    );
                }
                _ => native.push((i, v)),
            }
        }
        // One failure is logged and does not keep the others from being
        // told, shown or applied; the first is returned after them.
        let mut keep = |r: Result<(), kube::Error>, what: &str| {
            if let Err(e) = r {
                warn!(namespace = %ns, "{what}: {e}");
                first_error.get_or_insert(e);
            }
        };
        for (i, (reason, message)) in &conflicts {
            if let Some(o) = objects.get(*i) {
                warn!(namespace = %ns, "not applied: {message}");
                keep(
                    refused(client, &recorder, &ns, o, reason, message).await,
                    "telling an object it is not applied",
                );
            }
        }
        // What the Machines made from them show, on the objects themselves
        // (`kubectl get virtualmachine` shows the phase and addresses).
        let shown = foreign_statuses(client, &ns, &objects, &w, &conflicts).await;
        keep(shown, "showing a status");
        for (_, v) in native {
            let name = v["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let pp = PatchParams::apply(MANAGER).force();
            let patch = Patch::Apply(&v);
            let kind = v["kind"].as_str().unwrap_or_default().to_string();
            let r = match kind.as_str() {
                "Machine" => Api::<Machine>::namespaced(client.clone(), &ns)
                    .patch(&name, &pp, &patch)
                    .await
                    .map(drop),
                "ProxmoxCluster" => Api::<ProxmoxCluster>::namespaced(client.clone(), &ns)
                    .patch(&name, &pp, &patch)
                    .await
                    .map(drop),
                "ProxmoxNode" => Api::<ProxmoxNode>::namespaced(client.clone(), &ns)
                    .patch(&name, &pp, &patch)
                    .await
                    .map(drop),
                "MachineSnapshot" => Api::<MachineSnapshot>::namespaced(client.clone(), &ns)
                    .patch(&name, &pp, &patch)
                    .await
                    .map(drop),
                _ => continue,
            };
            if r.is_err() {
                keep(r, &format!("applying {kind}/{name}"));
                continue;
            }
            applied += 1;
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(applied),
    }
}

/// The reason of the condition and Event of an object of another system
/// whose name is taken.
pub const NAME_CONFLICT: &str = "NameConflict";

/// Tells an object of another system that it is not applied (`reason`:
/// its name is taken, [`NAME_CONFLICT`], or it cannot be translated,
/// `TranslationFailed`): a `Ready=False` condition with `reason` in its
/// status, for
/// the kinds whose status the operator writes ([`STATUS_KINDS`]), and a
/// Warning Event on it; both only when its status does not say so
/// already (for the other kinds: once per run of the operator), so that
/// a refusal is told once, not at every sync.
///
/// [`STATUS_KINDS`]: crate::dialects::STATUS_KINDS
pub(super) async fn refused(
    client: &Client,
    recorder: &Recorder,
    ns: &str,
    o: &serde_json::Value,
    reason: &str,
    message: &str,
) -> Result<(), kube::Error> {
    use kube::core::{ApiResource, DynamicObject};
    let (api_version, kind) = (
        o["apiVersion"].as_str().unwrap_or_default(),
        o["kind"].as_str().unwrap_or_default(),
    );
    let name = o["metadata"]["name"].as_str().unwrap_or_default();
    let status_kind = crate::dialects::STATUS_KINDS
        .iter()
        .find(|(a, k, ..)| *a == api_version && *k == kind);
    let told = if status_kind.is_some() {
        o["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["reason"] == reason && c["message"] == message)
    } else {
        // Kinds whose status the operator does not write: told once per
        // run of the operator.
        static TOLD: std::sync::OnceLock<std::sync::Mutex<std::collections::BTreeSet<String>>> =
            std::sync::OnceLock::new();
        let uid = o["metadata"]["uid"].as_str().unwrap_or_default();
        let mut told = TOLD
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        !told.insert(format!("{uid}\n{message}"))
    };
    if told {
        return Ok(());
    }
    if let Some(&(_, _, group, status_of)) = status_kind {
        let mut st = MachineStatus {
            phase: crate::types::Phase::Error,
            ..MachineStatus::default()
        };
        crate::types::set_condition(
            &mut st.conditions,
            crate::types::Condition::new("Ready", false, reason, message),
            &crate::types::now_rfc3339(),
        );
        if let Some(status) = crate::dialects::foreign_status(api_version, kind, &st) {
            let ar = ApiResource {
                group: group.into(),
                version: api_version.rsplit('/').next().unwrap_or_default().into(),
                api_version: api_version.into(),
                kind: kind.into(),
                plural: status_of.trim_end_matches("/status").into(),
            };
            let doc =
                serde_json::json!({ "apiVersion": api_version, "kind": kind, "status": status });
            Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar)
                .patch_status(
                    name,
                    &PatchParams::apply(MANAGER).force(),
                    &Patch::Apply(&doc),
                )
                .await?;
        }
    }
    let reference = k8s_openapi::api::core::v1::ObjectReference {
        api_version: Some(api_version.into()),
        kind: Some(kind.into()),
        name: Some(name.into()),
        namespace: Some(ns.into()),
        uid: o["metadata"]["uid"].as_str().map(str::to_string),
        ..Default::default()
    };
    let ev = KubeEvent {
        type_: EventType::Warning,
        reason: reason.into(),
        note: Some(message.into()),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(e) = recorder.publish(&ev, &reference).await {
        warn!("cannot record an event: {e}");
    }
    Ok(())
}

/// Writes on each object of another system that became a Machine the
/// status of that Machine ([`crate::dialects::foreign_status`]), by
/// server-side apply on its status subresource, when it differs from what
/// the object shows. A Machine not reconciled yet writes nothing.
pub(super) async fn foreign_statuses(
    client: &Client,
    ns: &str,
    objects: &[serde_json::Value],
    w: &World,
    conflicts: &BTreeMap<usize, (&'static str, String)>,
) -> Result<(), kube::Error> {
    use kube::core::{ApiResource, DynamicObject};
    for (i, o) in objects.iter().enumerate() {
        // Its name is another's: that Machine's status is not its own.
        if conflicts.contains_key(&i) {
            continue;
        }
        let (api_version, kind) = (
            o["apiVersion"].as_str().unwrap_or_default(),
            o["kind"].as_str().unwrap_or_default(),
        );
        let Some(&(_, _, group, status_of)) = crate::dialects::STATUS_KINDS
            .iter()
            .find(|(a, k, ..)| *a == api_version && *k == kind)
        else {
            continue;
        };
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        let Some((_, st)) = w.machines.get(name) else {
            continue;
        };
        if st.vmid.is_none() && st.conditions.is_empty() {
            continue;
        }
        let Some(status) = crate::dialects::foreign_status(api_version, kind, st) else {
            continue;
        };
        if o.get("status") == Some(&status) {
            continue;
        }
        let ar = ApiResource {
            group: group.into(),
            version: api_version.rsplit('/').next().unwrap_or_default().into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: status_of.trim_end_matches("/status").into(),
        };
        let doc = serde_json::json!({ "apiVersion": api_version, "kind": kind, "status": status });
        Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar)
            .patch_status(
                name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&doc),
            )
            .await?;
    }
    Ok(())
}
