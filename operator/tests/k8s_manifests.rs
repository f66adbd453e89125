//! The Kubernetes manifests under `operator/config/`: the committed CRDs
//! equal the generated ones, every object as written (and, with kubectl,
//! as every overlay renders it) reads into its Kubernetes type without
//! losing a field, and the RBAC covers every request of the operator.
#![allow(clippy::unwrap_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Secret, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use pve_operator::types::{Machine, MachineImage, MachineSnapshot, ProxmoxCluster, ProxmoxNode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config")
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
    out.sort();
}

fn documents(text: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| Value::deserialize_from(d))
        .filter(|v| !v.is_null())
        .collect()
}

trait FromDoc {
    fn deserialize_from(d: serde_yaml::Deserializer<'_>) -> Self;
}

impl FromDoc for Value {
    fn deserialize_from(d: serde_yaml::Deserializer<'_>) -> Self {
        serde::Deserialize::deserialize(d).unwrap()
    }
}

/// Whether everything `want` says is in `got` (`got` may add defaults).
fn covers(want: &Value, got: &Value, path: &str) -> Result<(), String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, v) in w {
                let gv = g
                    .get(k)
                    .ok_or_else(|| format!("{path}.{k}: unknown field"))?;
                covers(v, gv, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => w
            .iter()
            .zip(g)
            .enumerate()
            .try_for_each(|(i, (a, b))| covers(a, b, &format!("{path}[{i}]"))),
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => Ok(()),
        _ if want == got => Ok(()),
        _ => Err(format!("{path}: wrote {want}, reads as {got}")),
    }
}

fn typed<T: DeserializeOwned + Serialize>(v: &Value) -> Result<(), String> {
    let t: T = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    covers(v, &serde_json::to_value(&t).unwrap(), "")
}

/// Reads one object into its type; unknown kinds and lost fields fail.
fn check_object(v: &Value) -> Result<(), String> {
    let api = v["apiVersion"].as_str().unwrap_or_default();
    let kind = v["kind"].as_str().unwrap_or_default();
    match (api, kind) {
        ("v1", "Namespace") => typed::<Namespace>(v),
        ("v1", "ServiceAccount") => typed::<ServiceAccount>(v),
        ("v1", "Service") => typed::<Service>(v),
        ("v1", "Secret") => typed::<Secret>(v),
        ("apps/v1", "Deployment") => typed::<Deployment>(v),
        ("networking.k8s.io/v1", "NetworkPolicy") => typed::<NetworkPolicy>(v),
        ("policy/v1", "PodDisruptionBudget") => typed::<PodDisruptionBudget>(v),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => typed::<ClusterRole>(v),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => typed::<ClusterRoleBinding>(v),
        ("rbac.authorization.k8s.io/v1", "Role") => typed::<Role>(v),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => typed::<RoleBinding>(v),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            typed::<CustomResourceDefinition>(v)
        }
        ("pve.fake-pve.io/v1alpha1", "ProxmoxCluster") => typed::<ProxmoxCluster>(v),
        ("pve.fake-pve.io/v1alpha1", "ProxmoxNode") => typed::<ProxmoxNode>(v),
        ("pve.fake-pve.io/v1alpha1", "Machine") => {
            typed::<Machine>(v)?;
            let m: Machine = serde_json::from_value(v.clone()).unwrap();
            let name = m.spec.name.clone().unwrap_or_default();
            let errors = pve_operator::validate::validate_machine(
                if name.is_empty() { "machine" } else { &name },
                &m.spec,
            );
            if errors.is_empty() {
                Ok(())
            } else {
                Err(format!("invalid: {errors:?}"))
            }
        }
        ("pve.fake-pve.io/v1alpha1", "MachineSnapshot") => typed::<MachineSnapshot>(v),
        ("pve.fake-pve.io/v1alpha1", "MachineImage") => typed::<MachineImage>(v),
        _ => Err(format!("no type for {api} {kind}")),
    }
}

fn id(v: &Value) -> (String, String) {
    (
        v["kind"].as_str().unwrap_or_default().to_string(),
        v["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[test]
fn the_committed_crds_are_the_generated_ones() {
    let dir = config().join("crd");
    let mut want = pve_operator::crd::files().unwrap();
    want.push((
        "kustomization.yaml".into(),
        pve_operator::crd::kustomization(),
    ));
    for (name, text) in &want {
        let have = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        assert!(
            &have == text,
            "operator/config/crd/{name} is stale: run `cargo run -p pve-operator -- crd --write operator/config/crd`"
        );
    }
    let mut on_disk = Vec::new();
    yaml_files(&dir, &mut on_disk);
    assert_eq!(
        on_disk.len(),
        want.len(),
        "a file in config/crd/ that is not generated"
    );
    // `crd` prints the same CRDs as one stream.
    let stream = documents(&pve_operator::crd::yaml().unwrap());
    assert_eq!(
        stream.len(),
        5 + pve_operator::dialects::FOREIGN_KINDS.len()
    );
}

#[test]
fn the_crds_carry_status_printer_columns_and_the_validation_rules() {
    let crds = pve_operator::crd::crds();
    assert_eq!(crds.len(), 5);
    for c in &crds {
        let v = &c.spec.versions[0];
        assert!(
            v.subresources.as_ref().unwrap().status.is_some(),
            "{:?}",
            c.metadata.name
        );
        assert_eq!(c.spec.scope, "Namespaced");
    }
    let m = serde_json::to_value(&crds[2]).unwrap();
    let v = &m["spec"]["versions"][0];
    let cols: Vec<&str> = v["additionalPrinterColumns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["Phase", "Node", "VMID", "IP", "Age"]);
    let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let cpu = &spec["cpu"]["properties"];
    assert_eq!(
        (
            cpu["cores"]["minimum"].as_f64(),
            cpu["cores"]["maximum"].as_f64()
        ),
        (Some(1.0), Some(128.0))
    );
    assert_eq!(cpu["sockets"]["maximum"].as_f64(), Some(4.0));
    assert_eq!(cpu["threads"]["maximum"].as_f64(), Some(2.0));
    assert_eq!(spec["vmid"]["minimum"].as_f64(), Some(100.0));
    assert_eq!(spec["vmid"]["maximum"].as_f64(), Some(999_999_999.0));
    assert_eq!(spec["memory"]["x-kubernetes-int-or-string"], true);
    let disk = &spec["disks"]["items"]["properties"];
    assert_eq!(
        disk["bus"]["enum"],
        serde_json::json!(["scsi", "virtio", "sata", "ide"])
    );
    assert_eq!(
        disk["format"]["enum"],
        serde_json::json!(["raw", "qcow2", "vmdk"])
    );
    let nic = &spec["networks"]["items"]["properties"];
    assert_eq!(nic["vlan"]["maximum"].as_f64(), Some(4094.0));
    assert_eq!(spec["networks"]["maxItems"], 32);
    assert_eq!(
        spec["powerState"]["enum"],
        serde_json::json!(["On", "Off", "Suspended"])
    );
    assert_eq!(
        spec["deletionPolicy"]["enum"],
        serde_json::json!(["Delete", "Orphan"])
    );
    assert_eq!(spec["cluster"]["minLength"], 1);
}

#[test]
fn the_standalone_shape_is_the_custom_resources_shape() {
    // A standalone manifest is a custom resource as written.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests");
    let mut files = Vec::new();
    yaml_files(&dir, &mut files);
    let mut n = 0;
    for f in &files {
        for v in documents(&std::fs::read_to_string(f).unwrap()) {
            if v["apiVersion"] == "pve.fake-pve.io/v1alpha1" {
                check_object(&v).unwrap_or_else(|e| panic!("{}: {:?}: {e}", f.display(), id(&v)));
                n += 1;
            }
        }
    }
    assert!(n >= 4, "{n}");
}

/// Every object of the base, the samples and the overlays as written:
/// whole objects read into their types; strategic-merge patches name an
/// object of the base.
#[test]
fn every_object_as_written_reads_into_its_type() {
    let mut files = Vec::new();
    yaml_files(&config(), &mut files);
    let mut objects = Vec::new();
    let mut patches = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        for v in documents(&text) {
            if name == "kustomization.yaml" {
                assert_eq!(v["kind"], "Kustomization", "{}", f.display());
                for key in ["resources", "bases", "patchesStrategicMerge"] {
                    for r in v[key].as_array().into_iter().flatten() {
                        let p = f.parent().unwrap().join(r.as_str().unwrap());
                        assert!(
                            p.exists(),
                            "{}: {key} {} is missing",
                            f.display(),
                            p.display()
                        );
                    }
                }
            } else if name.ends_with("_patch.yaml") {
                patches.push((f.clone(), v));
            } else {
                check_object(&v).unwrap_or_else(|e| panic!("{}: {:?}: {e}", f.display(), id(&v)));
                objects.push(v);
            }
        }
    }
    assert!(objects.len() >= 20, "{}", objects.len());
    for (f, p) in &patches {
        assert!(
            objects.iter().any(|o| id(o) == id(p)),
            "{}: patches nothing: {:?}",
            f.display(),
            id(p)
        );
    }
}

fn kubectl() -> Option<String> {
    let k = std::env::var("FAKE_PVE_KUBECTL").unwrap_or_else(|_| "kubectl".into());
    let found = Command::new(&k)
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(k);
    }
    assert!(
        std::env::var("FAKE_PVE_REQUIRE_KUBECTL").as_deref() != Ok("1"),
        "kubectl not found (ci/setup-kubectl installs it)"
    );
    eprintln!("kubectl not found: the overlays are not rendered");
    None
}

fn render(kubectl: &str, dir: &str) -> Vec<Value> {
    let out = Command::new(kubectl)
        .arg("kustomize")
        .arg(config().join(dir))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl kustomize {dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    documents(&String::from_utf8(out.stdout).unwrap())
}

fn allows(rules: &[PolicyRule], r: &pve_operator::k8s::ApiRequest) -> bool {
    rules.iter().any(|rule| {
        let has = |list: &Option<Vec<String>>, x: &str| {
            list.as_ref()
                .is_some_and(|l| l.iter().any(|i| i == x || i == "*"))
        };
        has(&rule.api_groups, r.group)
            && has(&rule.resources, r.resource)
            && rule.verbs.iter().any(|v| v == r.verb || v == "*")
    })
}

/// RBAC of a rendered overlay covers every request of the operator:
/// cluster-wide ones through the ClusterRole bound to its service
/// account, the Lease through the Role in its namespace.
fn check_rbac(objects: &[Value]) {
    let of = |kind: &str| -> Vec<&Value> { objects.iter().filter(|o| o["kind"] == kind).collect() };
    let sa = of("ServiceAccount")[0];
    let (sa_name, ns) = (&sa["metadata"]["name"], &sa["metadata"]["namespace"]);
    let rules_of = |kind: &str, binding: &str| -> Vec<PolicyRule> {
        let mut out = Vec::new();
        for b in of(binding) {
            let bound = b["subjects"].as_array().into_iter().flatten().any(|s| {
                s["kind"] == "ServiceAccount" && &s["name"] == sa_name && &s["namespace"] == ns
            });
            if !bound {
                continue;
            }
            for r in of(kind) {
                if r["metadata"]["name"] == b["roleRef"]["name"] {
                    out.extend(
                        serde_json::from_value::<Vec<PolicyRule>>(r["rules"].clone()).unwrap(),
                    );
                }
            }
        }
        out
    };
    let cluster = rules_of("ClusterRole", "ClusterRoleBinding");
    let local = rules_of("Role", "RoleBinding");
    for r in pve_operator::k8s::requests() {
        let ok = allows(&cluster, &r) || (!r.cluster_wide && allows(&local, &r));
        assert!(ok, "RBAC does not allow {r:?}");
    }
}

#[test]
fn every_overlay_renders_into_typed_objects_with_the_rbac_the_operator_needs() {
    let Some(k) = kubectl() else { return };
    for dir in ["default", "overlays/dev", "overlays/production"] {
        let objects = render(&k, dir);
        for o in &objects {
            check_object(o).unwrap_or_else(|e| panic!("{dir}: {:?}: {e}", id(o)));
        }
        assert_eq!(
            objects
                .iter()
                .filter(|o| o["kind"] == "CustomResourceDefinition")
                .count(),
            5 + pve_operator::dialects::FOREIGN_KINDS.len(),
            "{dir}"
        );
        check_rbac(&objects);
        let deployment: Deployment = serde_json::from_value(
            objects
                .iter()
                .find(|o| id(o) == ("Deployment".into(), "pve-operator".into()))
                .unwrap()
                .clone(),
        )
        .unwrap();
        let spec = deployment.spec.unwrap();
        let pod = spec.template.spec.unwrap();
        let c = &pod.containers[0];
        assert_eq!(
            c.args.as_deref(),
            Some(&["run".to_string(), "--kubernetes".to_string()][..])
        );
        let probe = |p: &Option<k8s_openapi::api::core::v1::Probe>| {
            p.as_ref()
                .unwrap()
                .http_get
                .as_ref()
                .unwrap()
                .path
                .clone()
                .unwrap()
        };
        assert_eq!(
            (probe(&c.liveness_probe), probe(&c.readiness_probe)),
            ("/healthz".into(), "/readyz".into())
        );
        match dir {
            "overlays/production" => {
                assert_eq!(spec.replicas, Some(2));
                assert_eq!(
                    c.image.as_deref(),
                    Some("ghcr.io/fake-pve/pve-operator:0.1.0")
                );
                assert!(
                    pod.affinity.is_some()
                        && pod.tolerations.is_some()
                        && pod.node_selector.is_some()
                );
                // The patch kept the base's env and probes.
                assert!(
                    c.env
                        .as_ref()
                        .unwrap()
                        .iter()
                        .any(|e| e.name == "MAX_CONCURRENT_RECONCILES")
                );
            }
            "overlays/dev" => {
                assert_eq!(c.image.as_deref(), Some("pve-operator:dev"));
                let env = c.env.as_ref().unwrap();
                assert!(
                    env.iter().any(
                        |e| e.name == "RECONCILE_INTERVAL" && e.value.as_deref() == Some("10s")
                    )
                );
                assert!(
                    env.iter().any(|e| e.name == "POD_NAMESPACE"),
                    "the patch dropped the base's env"
                );
                assert!(
                    objects
                        .iter()
                        .any(|o| id(o) == ("Deployment".into(), "fake-pve".into()))
                );
                assert!(objects.iter().any(|o| o["kind"] == "Machine"));
            }
            _ => assert_eq!(spec.replicas, Some(1)),
        }
    }
}

// ---------------------------------------------------------------------
// The Helm chart (operator/charts/pve-operator), installed by Helm's own
// engine (helm-sdkpy, ci/setup-helm) into a loopback API server
// (tests/helm/install.py) that records what it receives.

fn chart() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("charts/pve-operator")
}

fn helm_python() -> Option<String> {
    if let Ok(p) = std::env::var("FAKE_PVE_HELM_PYTHON") {
        return Some(p);
    }
    assert!(
        std::env::var("FAKE_PVE_REQUIRE_HELM").as_deref() != Ok("1"),
        "FAKE_PVE_HELM_PYTHON is not set (ci/setup-helm prints it)"
    );
    eprintln!("FAKE_PVE_HELM_PYTHON is not set: the chart is not installed");
    None
}

/// `helm install RELEASE charts/pve-operator -n NAMESPACE` with `values`:
/// the objects the API server was sent, CRDs first.
fn helm_install(python: &str, release: &str, namespace: &str, values: &Value) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/helm/install.py");
    let out = Command::new(python)
        .arg(script)
        .arg(chart())
        .args([release, namespace, &values.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "helm install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["status"], "deployed", "{answer}");
    assert!(
        answer["lint"]["Errors"].is_null(),
        "helm lint: {}",
        answer["lint"]
    );
    assert!(
        answer["manifest"]
            .as_str()
            .unwrap()
            .contains("kind: Deployment")
    );
    answer["objects"].as_array().unwrap().clone()
}

/// The kustomize base's objects as written (no kubectl needed).
fn base_objects() -> Vec<Value> {
    let mut files = Vec::new();
    for dir in ["crd", "rbac", "manager", "prometheus", "network-policy"] {
        yaml_files(&config().join(dir), &mut files);
    }
    files
        .iter()
        .filter(|p| !p.ends_with("kustomization.yaml"))
        .flat_map(|p| documents(&std::fs::read_to_string(p).unwrap()))
        .collect()
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| id(o) == (kind.to_string(), name.to_string()))
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn manager(deployment: &Value) -> Value {
    let mut c = deployment["spec"]["template"]["spec"]["containers"][0].clone();
    c.as_object_mut().unwrap().remove("image");
    c
}

#[test]
fn the_helm_chart_installs_the_kustomize_base_s_objects() {
    let Some(python) = helm_python() else { return };
    let objects = helm_install(&python, "pve-operator", "pve-operator-system", &Value::Null);
    for o in &objects {
        check_object(o).unwrap_or_else(|e| panic!("{:?}: {e}", id(o)));
    }
    // The same objects by kind and name (Helm leaves the namespace to
    // `--create-namespace`), in the release's namespace.
    let base = base_objects();
    let mut want: Vec<_> = base
        .iter()
        .filter(|o| o["kind"] != "Namespace")
        .map(id)
        .collect();
    let mut got: Vec<_> = objects.iter().map(id).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    for o in objects
        .iter()
        .filter(|o| o["metadata"].get("namespace").is_some())
    {
        assert_eq!(
            o["metadata"]["namespace"],
            "pve-operator-system",
            "{:?}",
            id(o)
        );
    }
    // The CRDs are the generated ones, and the RBAC is the base's and
    // covers every request of the controller.
    for o in objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
    {
        let name = o["metadata"]["name"].as_str().unwrap();
        let committed = find(&base, "CustomResourceDefinition", name);
        // Equal both ways (a number as Helm sends it, 0 for 0.0).
        covers(&committed["spec"], &o["spec"], name).unwrap();
        covers(&o["spec"], &committed["spec"], name).unwrap();
    }
    check_rbac(&objects);
    for kind in ["ClusterRole", "Role"] {
        let name = if kind == "Role" {
            "pve-operator-leader-election"
        } else {
            "pve-operator"
        };
        assert_eq!(
            find(&objects, kind, name)["rules"],
            find(&base, kind, name)["rules"],
            "{kind} {name}"
        );
    }
    // The manager container: the base's args, env, ports, probes,
    // resources and security context; the published image at appVersion.
    let deployment = find(&objects, "Deployment", "pve-operator");
    let base_deployment = find(&base, "Deployment", "pve-operator");
    covers(&manager(base_deployment), &manager(deployment), "manager").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 1);
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "ghcr.io/fake-pve/pve-operator:0.1.0"
    );
    covers(
        &base_deployment["spec"]["template"]["spec"]["securityContext"],
        &deployment["spec"]["template"]["spec"]["securityContext"],
        "securityContext",
    )
    .unwrap();
    assert!(objects.iter().all(|o| o["kind"] != "PodDisruptionBudget"));
}

#[test]
fn the_helm_chart_s_values_give_the_production_overlay_and_the_pve_settings() {
    let Some(python) = helm_python() else { return };
    let patch: Value = documents(
        &std::fs::read_to_string(config().join("overlays/production/manager_patch.yaml")).unwrap(),
    )
    .remove(0);
    let pod = &patch["spec"]["template"]["spec"];
    let values = serde_json::json!({
        "replicaCount": 2,
        "image": { "tag": "0.1.1" },
        "nodeSelector": pod["nodeSelector"],
        "tolerations": pod["tolerations"],
        "affinity": pod["affinity"],
        "resources": pod["containers"][0]["resources"],
        "reconcileInterval": "10s",
        "pve": { "existingSecret": "pve-credentials", "defaultCluster": "lab" },
        "metrics": { "networkPolicy": { "enabled": false } },
    });
    let objects = helm_install(&python, "ops", "infra", &values);
    for o in &objects {
        check_object(o).unwrap_or_else(|e| panic!("{:?}: {e}", id(o)));
    }
    check_rbac(&objects);
    let d = find(&objects, "Deployment", "ops-pve-operator");
    assert_eq!(d["spec"]["replicas"], 2);
    let spec = &d["spec"]["template"]["spec"];
    for key in ["nodeSelector", "tolerations", "affinity"] {
        assert_eq!(spec[key], pod[key], "{key}");
    }
    let c = &spec["containers"][0];
    assert_eq!(c["image"], "ghcr.io/fake-pve/pve-operator:0.1.1");
    assert_eq!(c["resources"], pod["containers"][0]["resources"]);
    assert_eq!(c["envFrom"][0]["secretRef"]["name"], "pve-credentials");
    let env = |name: &str| {
        c["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .map(|e| e["value"].clone())
    };
    assert_eq!(env("PROXMOX_DEFAULT_CLUSTER"), Some("lab".into()));
    assert_eq!(env("RECONCILE_INTERVAL"), Some("10s".into()));
    assert_eq!(
        find(&objects, "ServiceAccount", "ops-pve-operator")["metadata"]["namespace"],
        "infra"
    );
    let pdb = find(&objects, "PodDisruptionBudget", "ops-pve-operator");
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    assert_eq!(
        pdb["spec"]["selector"]["matchLabels"],
        d["spec"]["selector"]["matchLabels"]
    );
    assert!(objects.iter().all(|o| o["kind"] != "NetworkPolicy"));
}
