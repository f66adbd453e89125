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
        for (i, v) in &t.native {
            let key = crate::types::Key {
                kind: v["kind"].as_str().unwrap_or_default().into(),
                name: v["metadata"]["name"].as_str().unwrap_or_default().into(),
            };
            let uid = objects[*i]["metadata"]["uid"].as_str();
            if let Some(owner) = w.owners.get(&key)
                && owner.as_deref() != uid
                && !conflicts.contains_key(i)
            {
                let from = format!(
                    "{}/{}",
                    objects[*i]["kind"].as_str().unwrap_or_default(),
                    objects[*i]["metadata"]["name"].as_str().unwrap_or_default()
                );
                conflicts.insert(
                    *i,
                    (
                        NAME_CONFLICT,
                        format!(
                            "{key} already exists in namespace {ns} and is not made from {from}: {from} is not applied and takes nothing over (rename it, or remove {key})"
                        ),
                    ),
                );
            }
        }
        // An object refused is not applied at all (a ProviderConfig none
        // of its sites' clusters when one of them is taken).
        let native: Vec<(usize, serde_json::Value)> = t
            .native
            .into_iter()
            .filter(|(i, _)| !conflicts.contains_key(i))
            .collect();
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
        let mut failed = std::collections::BTreeSet::new();
        let mut made: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (i, v) in native {
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
                failed.insert(i);
                continue;
            }
            made.entry(i).or_default().push(format!("{kind}/{name}"));
            applied += 1;
        }
        // Objects told before that they were not applied, and applied
        // now: their status says so.
        for (i, made) in made {
            if failed.contains(&i) {
                continue;
            }
            if let Some(o) = objects.get(i) {
                keep(
                    applied_again(client, &ns, o, &made).await,
                    "showing an object is applied",
                );
            }
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

/// The reason of the condition and Event of an object of another system
/// that cannot be translated.
pub const TRANSLATION_FAILED: &str = "TranslationFailed";

/// Tells an object of another system that it is not applied (`reason`:
/// its name is taken, [`NAME_CONFLICT`], or it cannot be translated,
/// `TranslationFailed`): a `Ready=False` condition with `reason` in its
/// status (in its system's shape for the kinds that become Machines,
/// [`STATUS_KINDS`]; `conditions` for the others: a Provider, a
/// ProviderConfig, a VMSnapshot...) and a Warning Event on it; both only
/// when its status does not say so already, so that a refusal is told
/// once, not at every sync.
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
    let (api_version, kind) = (
        o["apiVersion"].as_str().unwrap_or_default(),
        o["kind"].as_str().unwrap_or_default(),
    );
    let name = o["metadata"]["name"].as_str().unwrap_or_default();
    let told = o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["reason"] == reason && c["message"] == message);
    if told {
        return Ok(());
    }
    let mut st = MachineStatus {
        phase: crate::types::Phase::Error,
        ..MachineStatus::default()
    };
    crate::types::set_condition(
        &mut st.conditions,
        crate::types::Condition::new("Ready", false, reason, message),
        &crate::types::now_rfc3339(),
    );
    let status = crate::dialects::foreign_status(api_version, kind, &st)
        .unwrap_or_else(|| serde_json::json!({ "conditions": st.conditions }));
    write_foreign_status(client, ns, api_version, kind, name, &status).await?;
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

/// Server-side applies `status` on the status subresource of an object
/// of another system (nothing for a kind that is not one).
async fn write_foreign_status(
    client: &Client,
    ns: &str,
    api_version: &str,
    kind: &str,
    name: &str,
    status: &serde_json::Value,
) -> Result<(), kube::Error> {
    use kube::core::{ApiResource, DynamicObject};
    let Some(k) = crate::dialects::ForeignKind::of(api_version, kind) else {
        return Ok(());
    };
    let ar = ApiResource {
        group: k.group.into(),
        version: k.version.into(),
        api_version: api_version.into(),
        kind: kind.into(),
        plural: k.plural.into(),
    };
    let doc = serde_json::json!({ "apiVersion": api_version, "kind": kind, "status": status });
    Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar)
        .patch_status(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&doc),
        )
        .await?;
    Ok(())
}

/// An object that does not become a Machine, applied (as `made`) after
/// its status said it was not: its status says it is (`Ready=True`,
/// reason `Applied`). Objects that become Machines show the Machine's
/// status instead ([`foreign_statuses`]).
async fn applied_again(
    client: &Client,
    ns: &str,
    o: &serde_json::Value,
    made: &[String],
) -> Result<(), kube::Error> {
    let (api_version, kind) = (
        o["apiVersion"].as_str().unwrap_or_default(),
        o["kind"].as_str().unwrap_or_default(),
    );
    if crate::dialects::STATUS_KINDS
        .iter()
        .any(|(a, k, ..)| *a == api_version && *k == kind)
    {
        return Ok(());
    }
    let was_refused = o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| {
            c["type"] == "Ready"
                && c["status"] == "False"
                && (c["reason"] == NAME_CONFLICT || c["reason"] == TRANSLATION_FAILED)
        });
    if !was_refused {
        return Ok(());
    }
    let mut conditions = Vec::new();
    crate::types::set_condition(
        &mut conditions,
        crate::types::Condition::new(
            "Ready",
            true,
            "Applied",
            format!("applied as {}", made.join(", ")),
        ),
        &crate::types::now_rfc3339(),
    );
    let name = o["metadata"]["name"].as_str().unwrap_or_default();
    write_foreign_status(
        client,
        ns,
        api_version,
        kind,
        name,
        &serde_json::json!({ "conditions": conditions }),
    )
    .await
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
    for (i, o) in objects.iter().enumerate() {
        // Its name is another's: that Machine's status is not its own.
        if conflicts.contains_key(&i) {
            continue;
        }
        let (api_version, kind) = (
            o["apiVersion"].as_str().unwrap_or_default(),
            o["kind"].as_str().unwrap_or_default(),
        );
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
        write_foreign_status(client, ns, api_version, kind, name, &status).await?;
    }
    Ok(())
}
