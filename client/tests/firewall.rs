//! The firewall (`api::firewall`) against an in-process fake-pve: a
//! security group used by a VM's rule, aliases and IP sets as rule
//! references, options with their digest, rules moved and refused; every
//! answer checked against the schema.

mod common;

use common::{Mode, checked_client, start};
use pve_client::api::firewall::{RuleSpec, Scope};

const NODE: &str = "pve";

#[tokio::test]
async fn groups_aliases_ipsets_and_a_vms_rules() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let fw = pve.firewall();
    let web = Scope::Group("web".into());
    let vm = Scope::Qemu(NODE.into(), 100);

    fw.create_security_group("web", Some("web servers"))
        .await
        .expect("group");
    fw.create_rule(&web, &RuleSpec::new("in", "ACCEPT").macro_("http"))
        .await
        .expect("rule");
    fw.create_rule(
        &web,
        &RuleSpec::new("in", "ACCEPT").proto("tcp").dport("443"),
    )
    .await
    .expect("rule");
    let rules = fw.get_rules(&web).await.expect("rules");
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0].get("dport"), Some("443"), "a new rule is on top");
    assert_eq!(rules[1].get("macro"), Some("HTTP"), "PVE's spelling");
    assert_eq!(rules[1].pos, 1);
    fw.move_rule(&web, 0, 2).await.expect("move");
    assert_eq!(
        fw.get_rule(&web, 0).await.expect("rule").get("macro"),
        Some("HTTP")
    );
    let e = fw
        .create_rule(&web, &RuleSpec::new("in", "ACCEPT").macro_("Nope"))
        .await
        .expect_err("unknown macro");
    assert!(e.to_string().contains("unknown macro 'Nope'"), "{e}");

    fw.create_alias(&Scope::Cluster, "gw", "192.0.2.1/32", Some("gateway"))
        .await
        .expect("alias");
    assert_eq!(
        fw.read_alias(&Scope::Cluster, "gw")
            .await
            .expect("alias")
            .get("cidr"),
        Some("192.0.2.1")
    );
    fw.create_ipset(&vm, "peers", None).await.expect("ipset");
    fw.create_ip(&vm, "peers", "198.51.100.9/24", false, None)
        .await
        .expect("entry");
    fw.create_ip(&vm, "peers", "gw", true, Some("not the gateway"))
        .await
        .expect("alias entry");
    let entries = fw.get_ipset(&vm, "peers").await.expect("entries");
    let cidrs: Vec<_> = entries.iter().filter_map(|e| e.get("cidr")).collect();
    assert_eq!(cidrs, ["198.51.100.0/24", "gw"]);
    assert_eq!(
        fw.read_ip(&vm, "peers", "198.51.100.0/24")
            .await
            .expect("entry")
            .get("cidr"),
        Some("198.51.100.0/24")
    );

    let digest = fw.get_options(&vm).await.expect("options")["digest"]
        .as_str()
        .map(str::to_string);
    fw.set_options(
        &vm,
        &[("enable", "1"), ("policy_in", "DROP")],
        &[],
        digest.as_deref(),
    )
    .await
    .expect("options");
    let e = fw
        .set_options(&vm, &[("dhcp", "1")], &[], digest.as_deref())
        .await
        .expect_err("stale digest");
    assert!(
        e.to_string().contains("detected modified configuration"),
        "{e}"
    );

    fw.create_rule(
        &vm,
        &RuleSpec::new("group", "web").iface("net0").enable(true),
    )
    .await
    .expect("group rule");
    fw.create_rule(
        &vm,
        &RuleSpec::new("in", "ACCEPT").source("+peers").dest("gw"),
    )
    .await
    .expect("rule with references");
    let rules = fw.get_rules(&vm).await.expect("rules");
    assert_eq!(rules[0].ipversion, Some(4));
    assert_eq!(rules[1].kind, "group");
    let e = fw
        .create_rule(&vm, &RuleSpec::new("in", "ACCEPT").source("nosuch"))
        .await
        .expect_err("unknown alias");
    assert!(e.to_string().contains("no such alias 'nosuch'"), "{e}");
    fw.delete_rule(&vm, 0, Some(&rules[0].digest))
        .await
        .expect("delete");
    assert_eq!(fw.get_rules(&vm).await.expect("rules").len(), 1);

    let refs = fw.refs(&vm, None).await.expect("refs");
    assert!(refs.iter().any(|r| r.get("ref") == Some("+peers")));
    assert!(refs.iter().any(|r| r.get("ref") == Some("gw")));
    assert!(
        fw.get_macros()
            .await
            .expect("macros")
            .iter()
            .any(|m| m.name == "SSH")
    );
    assert_eq!(
        fw.log(&Scope::Node(NODE.into()), Some(10))
            .await
            .expect("log"),
        [(1, "no content".to_string())]
    );

    fw.delete_ipset(&vm, "peers", true).await.expect("ipset");
    fw.remove_alias(&Scope::Cluster, "gw").await.expect("alias");
    for _ in 0..2 {
        fw.delete_rule(&web, 0, None).await.expect("empty group");
    }
    fw.delete_security_group("web").await.expect("group");
    assert!(fw.list_security_groups().await.expect("groups").is_empty());
    let names = checked.names();
    assert!(names.iter().any(|n| n == "GET get_rules"), "{names:?}");
}
