use super::*;

#[test]
fn rfc3339_formats_known_dates() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(1_790_000_000), "2026-09-21T14:13:20Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
}

#[test]
fn a_machine_manifest_reads_with_defaults() {
    let y = r"
apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: web-1, labels: { tenant-id: acme } }
spec:
  cluster: lab
  cpu: { cores: 2 }
  memory: 4Gi
  disks: [{ size: 20G }]
  networks: [{ bridge: vmbr0, vlan: 100 }]
";
    let r: Resource = serde_yaml::from_str(y).expect("parses");
    let Resource::Machine(m) = r else {
        panic!("not a machine")
    };
    assert_eq!(m.spec.cpu.sockets, 1);
    assert_eq!(m.spec.memory, Quantity::Str("4Gi".into()));
    assert_eq!(m.spec.disks[0].storage, "local-lvm");
    assert_eq!(m.spec.disks[0].bus, "scsi");
    assert_eq!(m.spec.networks[0].model, "virtio");
    assert_eq!(m.spec.power_state, PowerState::On);
    assert_eq!(m.spec.deletion_policy, DeletionPolicy::Delete);
    assert!(m.spec.agent && m.spec.balloon && !m.spec.protection);
}

/// Issue #16: misspelt or foreign fields were dropped silently (a
/// blank VM made instead of vitistack's `spec.template` clone).
#[rstest::rstest]
#[case("  memroy: 2Gi\n", "unknown field `memroy`")]
#[case("  cpu: { cors: 4 }\n", "unknown field `cors`")]
#[case("  template: { name: ubuntu }\n", "unknown field `template`")]
#[case("  disks: [{ size: 4G, sotrage: fast }]\n", "unknown field `sotrage`")]
#[case("  source: { templat: ubuntu }\n", "unknown field `templat`")]
#[case("  networks: [{ bridge: vmbr0, vlna: 5 }]\n", "unknown field `vlna`")]
fn unknown_fields_are_refused_by_name(#[case] extra: &str, #[case] want: &str) {
    let y = format!(
        "apiVersion: pve.fake-pve.io/v1alpha1\nkind: Machine\nmetadata: {{ name: w }}\nspec:\n  cluster: lab\n{extra}"
    );
    let e = serde_yaml::from_str::<Resource>(&y)
        .expect_err("refused")
        .to_string();
    assert!(e.contains(want), "{e}");
}

#[test]
fn aliases_and_kubernetes_metadata_still_read() {
    let y = r"
apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: w, namespace: default, annotations: { a: b } }
spec:
  cluster: lab
  cpu: { cores: 2, threadsPerCore: 1 }
  disks: [{ size: 4G, type: virtio }]
";
    let r: Resource = serde_yaml::from_str(y).expect("parses");
    assert_eq!(r.key().name, "w");
    let y = r"
apiVersion: pve.fake-pve.io/v1alpha1
kind: ProxmoxCluster
metadata: { name: lab }
spec:
  endpoint: https://pve:8006
  networks: [vmbr0]
  credentials: { username: root@pam, password: { value: x } }
";
    serde_yaml::from_str::<Resource>(y).expect("parses");
}

#[test]
fn token_ids_are_completed_with_the_user() {
    let c = ClusterCredentials {
        username: "operator@pve".into(),
        token_id: Some("ci".into()),
        ..Default::default()
    };
    assert_eq!(c.full_token_id().as_deref(), Some("operator@pve!ci"));
    let c = ClusterCredentials {
        token_id: Some("a@pve!b".into()),
        ..Default::default()
    };
    assert_eq!(c.full_token_id().as_deref(), Some("a@pve!b"));
}

/// Issue #44: a Secret written with `data:` (base64, as `kubectl create
/// secret` writes it) was read as empty.
#[test]
fn a_secret_reads_data_and_string_data_as_kubernetes_merges_them() {
    let y = r"
apiVersion: v1
kind: Secret
type: Opaque
immutable: true
metadata: { name: pve-creds }
data:
  password: c2VjcmV0
  username: cm9vdEBwYW0=
stringData:
  username: admin@pve
";
    let Resource::Secret(s) = serde_yaml::from_str::<Resource>(y).expect("parses") else {
        panic!("not a secret")
    };
    assert_eq!(s.string_data["password"], "secret");
    assert_eq!(s.string_data["username"], "admin@pve", "stringData wins");
    // Read on its own (a Secret the controller fetched), with its kind.
    let alone: SecretObject = serde_yaml::from_str(y).expect("parses alone");
    assert_eq!(alone, s);
    let e = serde_yaml::from_str::<SecretObject>(
        "apiVersion: v1\nkind: Machine\nmetadata: { name: c }\n",
    )
    .expect_err("refused")
    .to_string();
    assert!(e.contains("expected kind `Secret`, found `Machine`"), "{e}");
}

#[rstest::rstest]
#[case(
    "data: { password: '!!not base64' }",
    "Secret 'c': data.password is not valid base64"
)]
#[case(
    "data: { password: '/w==' }",
    "Secret 'c': data.password is not UTF-8 text once decoded"
)]
#[case("strngData: { password: x }", "unknown field `strngData`")]
fn a_bad_secret_is_refused_by_name(#[case] body: &str, #[case] want: &str) {
    let y = format!("apiVersion: v1\nkind: Secret\nmetadata: {{ name: c }}\n{body}\n");
    let e = serde_yaml::from_str::<Resource>(&y)
        .expect_err("refused")
        .to_string();
    assert!(e.contains(want), "{e}");
}
