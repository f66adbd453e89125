//! Parameter validation checked against each release's spec.

use super::*;
use crate::Release;
use crate::spec;
use rstest::rstest;
use serde_json::json;

fn run(version: Release, method: &str, path: &str, params: Value) -> Result<(), Errors> {
    let ep = spec(version).endpoint(method, path).expect("endpoint");
    let map: BTreeMap<String, Value> = serde_json::from_value(params).expect("object");
    validate(ep, &map)
}

fn err(params: Value) -> Errors {
    run(Release::V9_1, "POST", "/nodes/{node}/qemu", params).expect_err("refused")
}

#[test]
fn a_good_create_passes() {
    run(
        Release::V9_1,
        "POST",
        "/nodes/{node}/qemu",
        json!({"node": "pve", "vmid": "100", "name": "web", "memory": "2048", "cores": "2",
               "net0": "virtio,bridge=vmbr0,firewall=1", "scsi0": "local-lvm:32,discard=on,ssd=1",
               "ostype": "l26", "onboot": "1", "agent": "1", "ipconfig0": "ip=dhcp"}),
    )
    .expect("valid");
}

#[rstest]
#[case(json!({"node": "pve"}), "vmid", "property is missing and it is not optional")]
#[case(json!({"node": "pve", "vmid": "abc"}), "vmid", "type check ('integer') failed - got 'abc'")]
#[case(json!({"node": "pve", "vmid": "99"}), "vmid", "invalid format - value does not look like a valid VM ID\n")]
#[case(json!({"node": "pve", "vmid": 100, "cores": "0"}), "cores", "value must have a minimum value of 1")]
#[case(json!({"node": "pve", "vmid": 100, "onboot": "yes"}), "onboot", "type check ('boolean') failed - got 'yes'")]
#[case(json!({"node": "pve", "vmid": 100, "onboot": [1]}), "onboot", "type check ('boolean') failed - got ARRAY")]
#[case(json!({"node": "pve", "vmid": 100, "ostype": "dos"}), "ostype", "value 'dos' does not have a value in the enumeration 'other, wxp, w2k, w2k3, w2k8, wvista, win7, win8, win10, win11, l24, l26, solaris'")]
#[case(json!({"node": "pve", "vmid": 100, "colour": "red"}), "colour", "property is not defined in schema and the schema does not allow additional properties")]
#[case(json!({"node": "pve", "vmid": 100, "net32": "virtio"}), "net32", "property is not defined in schema and the schema does not allow additional properties")]
#[case(json!({"node": "pve", "vmid": 100, "net01": "virtio"}), "net01", "property is not defined in schema and the schema does not allow additional properties")]
#[case(json!({"node": "pve", "vmid": 100, "net0": "virtio,colour=red"}), "net0", "invalid format - invalid key in comma-separated list property: colour\n")]
#[case(json!({"node": "pve", "vmid": 100, "net0": "virtio,bridge=vm br"}), "net0", "invalid format - format error\nnet0.bridge: invalid format - invalid bridge ID 'vm br'\n\n")]
#[case(json!({"node": "pve", "vmid": 100, "net0": "virtio,tag=5000"}), "net0", "invalid format - format error\nnet0.tag: value must have a maximum value of 4094\n")]
#[case(json!({"node": "pve", "vmid": 100, "net0": "bridge=vmbr0"}), "net0", "invalid format - format error\nnet0.model: property is missing and it is not optional\n")]
#[case(json!({"node": "pve", "vmid": 100, "name": "a b"}), "name", "invalid format - value does not look like a valid DNS name\n")]
#[case(json!({"node": "pve", "vmid": 100, "ipconfig0": "ip=garbage"}), "ipconfig0", "invalid format - format error\nipconfig0.ip: invalid format - value does not look like a valid ipv4 network configuration\n\n")]
#[case(json!({"node": "pve", "vmid": 100, "ipconfig0": "mtu=9000"}), "ipconfig0", "invalid format - invalid key in comma-separated list property: mtu\n")]
fn create_vm_refusals(#[case] params: Value, #[case] key: &str, #[case] msg: &str) {
    let e = err(params);
    assert_eq!(e.get(key).map(String::as_str), Some(msg), "{e:?}");
}

/// The properties checked whether given or not are exactly those
/// the schema does not let be left out, or whose variants depend on
/// another property.
#[rstest]
#[case(Release::V8_4, "POST", "/nodes/{node}/qemu", &["node", "vmid"])]
#[case(Release::V9_1, "POST", "/nodes/{node}/qemu", &["node", "vmid"])]
#[case(Release::V9_1, "PUT", "/nodes/{node}/qemu/{vmid}/config", &["node", "vmid"])]
#[case(Release::V9_1, "POST", "/nodes/{node}/qemu/{vmid}/status/start", &["node", "vmid"])]
#[case(Release::V9_1, "POST", "/access/ticket", &["password", "username"])]
#[case(Release::V9_1, "GET", "/version", &[])]
fn a_method_s_always_checked_properties(
    #[case] version: Release,
    #[case] method: &str,
    #[case] path: &str,
    #[case] expected: &[&str],
) {
    let ep = spec(version).endpoint(method, path).expect("endpoint");
    assert_eq!(ep.parameters.always_checked(), expected);
    let by_scan: Vec<&str> = ep
        .parameters
        .properties
        .iter()
        .filter(|(k, p)| !k.ends_with("[n]") && (!p.optional || p.one_of.is_some()))
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(by_scan, expected);
}

#[test]
fn registered_formats_pass_when_valid() {
    run(
        Release::V9_1,
        "POST",
        "/nodes/{node}/qemu",
        json!({"node": "pve", "vmid": "100", "cpu": "host,flags=+aes;-pcid",
               "boot": "order=scsi0;ide2;net0", "startup": "order=1,up=30",
               "cdrom": "local:iso/debian.iso", "hotplug": "network,disk",
               "watchdog": "i6300esb,action=reset", "rng0": "source=/dev/urandom",
               "affinity": "0-3", "bootdisk": "scsi0", "ipconfig0": "ip=10.0.0.5/24,gw=10.0.0.1"}),
    )
    .expect("valid");
    run(
        Release::V8_4,
        "POST",
        "/nodes/{node}/qemu",
        json!({"node": "pve", "vmid": "100", "cpu": "x86-64-v2-AES"}),
    )
    .expect("valid");
}

#[rstest]
#[case(json!({"node": "pve", "vmid": 100, "boot": "order=scsi0;foo"}), "boot", "invalid format - format error\nboot.order: invalid format - invalid boot device 'foo'\n\n")]
#[case(json!({"node": "pve", "vmid": 100, "startup": "order=1,up=x"}), "startup", "invalid format - unable to parse startup options\n")]
#[case(json!({"node": "pve", "vmid": 100, "cpu": "host,flags=+avx2"}), "cpu", "invalid format - VM-specific CPU flags must be a subset of: nested-virt, md-clear, pcid, spec-ctrl, ssbd, ibpb, virt-ssbd, amd-ssbd, amd-no-ssb, pdpe1gb, hv-tlbflush, hv-evmcs, aes\n")]
#[case(json!({"node": "pve", "vmid": 100, "cpu": "host,flags=aes"}), "cpu", "invalid format - format error\ncpu.flags: value does not match the regex pattern\n")]
#[case(json!({"node": "pve", "vmid": 100, "cpu": "host,colour=red"}), "cpu", "invalid format - invalid key in comma-separated list property: colour\n")]
#[case(json!({"node": "pve", "vmid": 100, "cdrom": "debian.iso"}), "cdrom", "invalid format - format error\ncdrom.file: invalid format - unable to parse volume ID 'debian.iso'\n\n")]
#[case(json!({"node": "pve", "vmid": 100, "hotplug": "gpu"}), "hotplug", "invalid format - unable to parse hotplug option\n")]
#[case(json!({"node": "pve", "vmid": 100, "affinity": "3-1"}), "affinity", "invalid format - unable to parse cpuset option\n")]
#[case(json!({"node": "pve", "vmid": 100, "ipconfig0": "gw=10.0.0.1"}), "ipconfig0", "invalid format - format error\nipconfig0.ip: missing property required by 'ipconfig0.gw'\n")]
fn registered_format_refusals(#[case] params: Value, #[case] key: &str, #[case] msg: &str) {
    let e = err(params);
    assert_eq!(e.get(key).map(String::as_str), Some(msg), "{e:?}");
}

/// The models and the qemu-server a `cpu` is checked against, as
/// fake-pve hands them over for a 9.2 world with one custom model.
fn nine_two() -> crate::registered::CpuContext {
    crate::registered::CpuContext {
        models: vec!["host".into(), "EPYC-Turin".into()],
        custom: vec!["fast".into()],
        qemu_server_9_2: true,
    }
}

#[rstest]
#[case("custom-fast,flags=+aes", None)]
#[case("EPYC-Turin,level=30", None)]
#[case(
    "custom-slow",
    Some("invalid format - Custom cputype 'slow' not found\n")
)]
#[case(
    "Skylake-Server",
    Some(
        "invalid format - Built-in cputype 'Skylake-Server' is not defined (missing 'custom-' prefix?)\n"
    )
)]
#[case(
    "host,flags=+avx2",
    Some(
        "invalid format - VM-specific CPU flags must be a subset of: aes, amd-no-ssb, amd-ssbd, hv-evmcs, hv-tlbflush, ibpb, md-clear, nested-virt, pcid, pdpe1gb, spec-ctrl, ssbd, virt-ssbd\n"
    )
)]
fn the_cpu_is_checked_against_the_world_s_models(#[case] cpu: &str, #[case] refusal: Option<&str>) {
    let params = json!({"node": "pve", "vmid": 100, "cpu": cpu});
    let got = crate::registered::with_cpu_context(nine_two(), || {
        run(Release::V9_1, "POST", "/nodes/{node}/qemu", params)
    });
    match refusal {
        None => got.expect("valid"),
        Some(msg) => {
            let e = got.expect_err("refused");
            assert_eq!(e.get("cpu").map(String::as_str), Some(msg), "{e:?}");
        }
    }
}

#[test]
fn level_is_a_key_of_9_2_only() {
    let e = err(json!({"node": "pve", "vmid": 100, "cpu": "host,level=30"}));
    assert_eq!(
        e.get("cpu").map(String::as_str),
        Some("invalid format - invalid key in comma-separated list property: level\n")
    );
    // The context goes when the validation ends.
    let params = json!({"node": "pve", "vmid": 100, "cpu": "custom-fast"});
    crate::registered::with_cpu_context(nine_two(), || {
        run(Release::V9_1, "POST", "/nodes/{node}/qemu", params.clone())
    })
    .expect("valid");
    assert!(run(Release::V9_1, "POST", "/nodes/{node}/qemu", params).is_err());
}

#[rstest]
#[case("POST", "/cluster/firewall/rules", json!({"action": "ACCEPT", "type": "in", "dport": "90:80"}), "dport", "invalid format - backwards range '90:80' not allowed, did you mean '80:90'?\n")]
#[case("POST", "/cluster/backup", json!({"schedule": "every day", "all": 1}), "schedule", "invalid format - invalid calendar event 'every day' - unable to parse calendar event\n")]
#[case("PUT", "/access/roles/{roleid}", json!({"roleid": "r", "privs": "VM.Audit,VM.Fly"}), "privs", "invalid format - invalid privilege 'VM.Fly'\n")]
#[case("POST", "/nodes/{node}/vzdump", json!({"node": "pve", "fleecing": "enabled=1"}), "fleecing", "invalid format - 'storage' parameter is required when 'enabled' is set\n")]
fn other_endpoints_refuse(
    #[case] method: &str,
    #[case] path: &str,
    #[case] params: Value,
    #[case] key: &str,
    #[case] msg: &str,
) {
    let e = run(Release::V9_1, method, path, params).expect_err("refused");
    assert_eq!(e.get(key).map(String::as_str), Some(msg), "{e:?}");
}

#[test]
fn several_errors_at_once() {
    let e = err(json!({"node": "-x", "vmid": "x", "cores": "many"}));
    assert_eq!(e.len(), 3, "{e:?}");
}

#[test]
fn versions_differ() {
    // `max-workers` exists on startall only since 9.x.
    let p = json!({"node": "pve", "max-workers": "4"});
    assert!(run(Release::V9_1, "POST", "/nodes/{node}/startall", p.clone()).is_ok());
    assert!(run(Release::V8_4, "POST", "/nodes/{node}/startall", p).is_err());
}

#[rstest]
#[case("1", true)]
#[case("-2.5", true)]
#[case("1.", true)]
#[case(".5", true)]
#[case("1e3", true)]
#[case("1e", false)]
#[case("abc", false)]
#[case("", false)]
fn perl_numbers(#[case] v: &str, #[case] ok: bool) {
    assert_eq!(is_number(v), ok);
}

/// A parameter whose schema depends on `protocol` (`type-property`,
/// `oneOf`): only the protocol's variant is checked.
#[rstest]
#[case("openfabric", json!(["hello_interval"]), None)]
#[case(
    "openfabric",
    json!(["area"]),
    Some(("delete[0]", "value 'area' does not have a value in the enumeration 'hello_interval, csnp_interval'"))
)]
#[case("ospf", json!(["area"]), None)]
#[case(
    "ospf",
    json!(["csnp_interval"]),
    Some(("delete[0]", "value 'csnp_interval' does not have a value in the enumeration 'area'"))
)]
fn type_property_variants(
    #[case] protocol: &str,
    #[case] delete: Value,
    #[case] want: Option<(&str, &str)>,
) {
    let r = run(
        Release::V9_1,
        "PUT",
        "/cluster/sdn/fabrics/fabric/{id}",
        json!({"id": "f1", "protocol": protocol, "delete": delete}),
    );
    match want {
        None => assert!(r.is_ok(), "{r:?}"),
        Some((k, msg)) => assert_eq!(
            r.expect_err("refused").get(k).map(String::as_str),
            Some(msg)
        ),
    }
}

#[test]
fn a_variant_checks_its_property_strings() {
    let r = run(
        Release::V9_1,
        "POST",
        "/cluster/sdn/fabrics/node/{fabric_id}",
        json!({"fabric_id": "f1", "node_id": "pve", "protocol": "ospf",
               "interfaces": ["name=ens19,hello_multiplier=3"]}),
    );
    let e = r.expect_err("refused");
    assert!(
        e.get("interfaces[0]")
            .is_some_and(|m| m.contains("hello_multiplier")),
        "{e:?}"
    );
    let ok = run(
        Release::V9_1,
        "POST",
        "/cluster/sdn/fabrics/node/{fabric_id}",
        json!({"fabric_id": "f1", "node_id": "pve", "protocol": "openfabric",
               "interfaces": ["name=ens19,hello_multiplier=3"]}),
    );
    assert!(ok.is_ok(), "{ok:?}");
}

/// The fabrics' methods leave `additionalProperties` unset, so they
/// take other parameters (`lock-token` on a delete); the others do
/// not.
#[test]
fn unset_additional_properties_allow_others() {
    let r = run(
        Release::V9_1,
        "DELETE",
        "/cluster/sdn/fabrics/fabric/{id}",
        json!({"id": "f1", "lock-token": "x"}),
    );
    assert!(r.is_ok(), "{r:?}");
    let r = run(
        Release::V9_1,
        "DELETE",
        "/cluster/sdn/zones/{zone}",
        json!({"zone": "z1", "bogus": "x"}),
    );
    assert_eq!(
        r.expect_err("refused").get("bogus").map(String::as_str),
        Some(UNKNOWN)
    );
}

/// A single form value of an array parameter is a list of one.
#[test]
fn a_single_value_of_a_list_is_a_list_of_one() {
    let ep = spec(Release::V9_1)
        .endpoint("POST", "/cluster/sdn/fabrics/node/{fabric_id}")
        .expect("endpoint");
    let mut map: BTreeMap<String, Value> = serde_json::from_value(json!({
        "fabric_id": "f1", "node_id": "pve", "protocol": "openfabric",
        "interfaces": "name=ens19"
    }))
    .expect("object");
    assert!(validate(ep, &map).is_err());
    normalize(ep, &mut map);
    assert_eq!(map["interfaces"], json!(["name=ens19"]));
    assert!(validate(ep, &map).is_ok());
}

/// A list given for a string of a `-list` format (a form's repeated
/// key, as proxmoxer sends `content` and `vms`) is its items joined
/// by commas.
#[rstest]
#[case("POST", "/storage", json!({"storage": "n1", "type": "nfs", "content": ["images", "rootdir"]}), "content", json!("images,rootdir"))]
#[case("PUT", "/pools", json!({"poolid": "p", "vms": ["101", 102]}), "vms", json!("101,102"))]
// A string without a list format stays a list, and is refused.
#[case("PUT", "/pools", json!({"poolid": "p", "comment": ["a", "b"]}), "comment", json!(["a", "b"]))]
// A value Perl takes for false is not made a list.
#[case("POST", "/cluster/sdn/fabrics/node/{fabric_id}", json!({"fabric_id": "f1", "interfaces": "0"}), "interfaces", json!("0"))]
fn a_list_for_a_list_format_is_joined(
    #[case] method: &str,
    #[case] path: &str,
    #[case] given: Value,
    #[case] key: &str,
    #[case] want: Value,
) {
    let ep = spec(Release::V9_1)
        .endpoint(method, path)
        .expect("endpoint");
    let mut map: BTreeMap<String, Value> = serde_json::from_value(given).expect("object");
    normalize(ep, &mut map);
    assert_eq!(map[key], want);
}

#[test]
fn a_joined_list_validates_and_a_list_for_a_plain_string_does_not() {
    let ep = spec(Release::V9_1)
        .endpoint("PUT", "/pools")
        .expect("endpoint");
    let mut map: BTreeMap<String, Value> =
        serde_json::from_value(json!({"poolid": "p", "vms": ["101", "102"]})).expect("object");
    normalize(ep, &mut map);
    assert!(validate(ep, &map).is_ok());
    let mut map: BTreeMap<String, Value> =
        serde_json::from_value(json!({"poolid": "p", "comment": ["a", "b"]})).expect("object");
    normalize(ep, &mut map);
    assert_eq!(
        validate(ep, &map)
            .expect_err("refused")
            .get("comment")
            .map(String::as_str),
        Some("type check ('string') failed - got ARRAY")
    );
}

/// 9.2's HA rules state their parameters as `allOf` groups with a
/// `oneOf` picked by `type`: refusals as pve-common's strict oneOf
/// names them.
#[rstest]
#[case::node_affinity(json!({"rule": "ha1", "type": "node-affinity", "resources": "vm:100", "nodes": "pve", "strict": "1"}), &[])]
#[case::resource_affinity(json!({"rule": "ha1", "type": "resource-affinity", "resources": "vm:100,vm:101", "affinity": "negative"}), &[])]
#[case::strict_not_for_resource_affinity(
    json!({"rule": "ha1", "type": "resource-affinity", "resources": "vm:100", "affinity": "positive", "strict": "1"}),
    &[("strict", UNKNOWN)]
)]
#[case::affinity_required_by_its_variant(
    json!({"rule": "ha1", "type": "resource-affinity", "resources": "vm:100"}),
    &[("oneOf[resource-affinity].affinity", "property is missing and it is not optional")]
)]
#[case::nodes_required_by_its_variant(
    json!({"rule": "ha1", "type": "node-affinity", "resources": "vm:100"}),
    &[("oneOf[node-affinity].nodes", "property is missing and it is not optional")]
)]
#[case::no_type_leaves_the_variant_s_keys_unknown(
    json!({"rule": "ha1", "resources": "vm:100"}),
    &[("resources", UNKNOWN), ("type", "property is missing and it is not optional")]
)]
#[case::unknown_type(
    json!({"rule": "ha1", "type": "bogus", "resources": "vm:100"}),
    &[("resources", UNKNOWN), ("type", "value 'bogus' does not have a value in the enumeration 'node-affinity, resource-affinity'")]
)]
#[case::rule_missing(
    json!({"type": "node-affinity", "resources": "vm:100", "nodes": "pve"}),
    &[("rule", "property is missing and it is not optional")]
)]
#[case::unknown_everywhere(
    json!({"rule": "ha1", "type": "node-affinity", "resources": "vm:100", "nodes": "pve", "colour": "red"}),
    &[("colour", UNKNOWN)]
)]
#[case::variant_checks_formats(
    json!({"rule": "ha1", "type": "node-affinity", "resources": "vm:100", "nodes": "pve", "strict": "maybe"}),
    &[("oneOf[node-affinity].strict", "type check ('boolean') failed - got 'maybe'")]
)]
fn ha_rules_one_of_9_2(#[case] params: Value, #[case] want: &[(&str, &str)]) {
    let got = run(Release::V9_2, "POST", "/cluster/ha/rules", params)
        .err()
        .unwrap_or_default();
    let want: Errors = want
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    assert_eq!(got, want);
}

/// 9.1 states the same call as one flat list: `strict` is a parameter
/// there whatever the type (the handler refuses it).
#[test]
fn ha_rules_are_flat_on_9_1() {
    let r = run(
        Release::V9_1,
        "POST",
        "/cluster/ha/rules",
        json!({"rule": "ha1", "type": "resource-affinity", "resources": "vm:100",
               "affinity": "positive", "strict": "1"}),
    );
    assert!(r.is_ok(), "{r:?}");
}

/// An update names the type too, and `delete`/`digest` live in a
/// group of their own.
#[test]
fn ha_rule_update_9_2() {
    let ok = run(
        Release::V9_2,
        "PUT",
        "/cluster/ha/rules/{rule}",
        json!({"rule": "ha1", "type": "node-affinity", "delete": "comment", "strict": "0"}),
    );
    assert!(ok.is_ok(), "{ok:?}");
    let e = run(
        Release::V9_2,
        "PUT",
        "/cluster/ha/rules/{rule}",
        json!({"rule": "ha1", "comment": "x"}),
    )
    .expect_err("refused");
    assert_eq!(
        e.get("type").map(String::as_str),
        Some("property is missing and it is not optional")
    );
    assert_eq!(e.get("comment").map(String::as_str), Some(UNKNOWN));
}

/// Everything but validation sees the union of the groups' properties.
#[test]
fn an_all_of_list_shows_the_union_of_its_properties() {
    let spec = crate::spec(Release::V9_2);
    let ep = spec
        .endpoints
        .iter()
        .find(|e| e.path == "/cluster/ha/rules" && e.method == "POST")
        .expect("endpoint");
    let keys: Vec<&str> = ep
        .parameters
        .properties
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "affinity",
            "comment",
            "disable",
            "nodes",
            "resources",
            "rule",
            "strict",
            "type"
        ]
    );
    assert!(!ep.parameters.properties["type"].optional);
}
