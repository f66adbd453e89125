//! The firewall's configuration: rules and their positions, their
//! checks in PVE's words, security groups, aliases, IP sets, options
//! and digests.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};
use serde_json::{Value, json};

use super::{LAB, T0, World, qm_worker, refused};
use crate::api::firewall::view;
use crate::model::Result;
use crate::model::firewall::{Firewall, Level, RuleSet, RuleUpdate};
use crate::model::qemu::QemuOp;

fn props(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

/// The answers as the API writes them from the model's lists, for
/// checks on their members.
trait Answers {
    fn rules_a(&self, set: &RuleSet) -> Result<Vec<Value>>;
    fn rule_a(&self, set: &RuleSet, pos: usize) -> Result<Value>;
    fn groups_a(&self) -> Vec<Value>;
    fn aliases_a(&self, l: &Level) -> Vec<Value>;
    fn alias_a(&self, l: &Level, name: &str) -> Result<Value>;
    fn ipsets_a(&self, l: &Level) -> Vec<Value>;
    fn ipset_a(&self, l: &Level, name: &str) -> Result<Vec<Value>>;
    fn ip_a(&self, l: &Level, name: &str, cidr: &str) -> Result<Value>;
    fn options_a(&self, l: &Level, now: i64) -> Value;
}

fn array(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        other => panic!("not a list: {other}"),
    }
}

impl Answers for Firewall {
    fn rules_a(&self, set: &RuleSet) -> Result<Vec<Value>> {
        Ok(array(view::rules(&self.rules(set)?)))
    }
    fn rule_a(&self, set: &RuleSet, pos: usize) -> Result<Value> {
        let (r, digest) = self.rule(set, pos)?;
        Ok(view::rule(&r, &digest, pos))
    }
    fn groups_a(&self) -> Vec<Value> {
        array(view::sections(&self.groups(), "group"))
    }
    fn aliases_a(&self, l: &Level) -> Vec<Value> {
        array(view::aliases(&self.aliases(l)))
    }
    fn alias_a(&self, l: &Level, name: &str) -> Result<Value> {
        Ok(Value::Object(view::alias(self.alias(l, name)?)))
    }
    fn ipsets_a(&self, l: &Level) -> Vec<Value> {
        array(view::sections(&self.ipsets(l), "name"))
    }
    fn ipset_a(&self, l: &Level, name: &str) -> Result<Vec<Value>> {
        Ok(array(view::ips(&self.ipset(l, name)?)))
    }
    fn ip_a(&self, l: &Level, name: &str, cidr: &str) -> Result<Value> {
        let (e, digest) = self.ip(l, name, cidr)?;
        Ok(view::ip(&e, &digest))
    }
    fn options_a(&self, l: &Level, now: i64) -> Value {
        view::options(&self.options(l, now))
    }
}

const CLUSTER: RuleSet = RuleSet::Level(Level::Cluster);

fn vm() -> RuleSet {
    RuleSet::Level(Level::Vm(100))
}

/// A firewall with cluster alias `lan`, IP set `mgmt` and three cluster
/// rules: SSH on top, then HTTP, then a drop.
#[fixture]
fn fw() -> Firewall {
    let mut f = Firewall::default();
    f.create_alias(&Level::Cluster, "lan", "192.168.0.0/16", Some("office"))
        .expect("alias");
    f.create_ipset(&Level::Cluster, "mgmt", None, None, None)
        .expect("ipset");
    for (action, dport) in [("DROP", ""), ("ACCEPT", "80"), ("ACCEPT", "22")] {
        let mut p = vec![("type", "in"), ("action", action), ("enable", "1")];
        if !dport.is_empty() {
            p.push(("proto", "tcp"));
            p.push(("dport", dport));
        }
        f.create_rule(&CLUSTER, &props(&p)).expect("rule");
    }
    f
}

fn field(f: &Firewall, set: &RuleSet, key: &str) -> Vec<Value> {
    f.rules_a(set)
        .expect("rules")
        .iter()
        .map(|r| r.get(key).cloned().unwrap_or(Value::Null))
        .collect()
}

#[rstest]
fn a_new_rule_goes_on_top_and_positions_follow(fw: Firewall) {
    let rules = fw.rules_a(&CLUSTER).expect("rules");
    assert_eq!(
        field(&fw, &CLUSTER, "dport"),
        [json!("22"), json!("80"), Value::Null]
    );
    assert_eq!(field(&fw, &CLUSTER, "pos"), [json!(0), json!(1), json!(2)]);
    // one digest for the list
    assert_eq!(rules[0]["digest"], rules[2]["digest"]);
    assert_eq!(rules[0]["digest"].as_str().map(str::len), Some(40));
}

#[rstest]
fn a_rule_is_disabled_unless_enable_is_given() {
    let mut f = Firewall::default();
    f.create_rule(&CLUSTER, &props(&[("type", "out"), ("action", "ACCEPT")]))
        .expect("rule");
    let r = f.rule_a(&CLUSTER, 0).expect("rule");
    assert_eq!(r["enable"], json!(0));
    assert_eq!(r["type"], "out");
}

#[rstest]
#[case::down(0, 2, ["80", "22", ""])]
#[case::down_to_end(0, 9, ["80", "", "22"])]
#[case::up(2, 0, ["", "22", "80"])]
#[case::same(1, 1, ["22", "80", ""])]
fn moveto_places_the_rule_before_the_one_at_that_position(
    mut fw: Firewall,
    #[case] pos: usize,
    #[case] to: usize,
    #[case] want: [&str; 3],
) {
    let up = RuleUpdate {
        moveto: Some(to),
        ..RuleUpdate::default()
    };
    fw.update_rule(&CLUSTER, pos, &up).expect("move");
    let got: Vec<String> = field(&fw, &CLUSTER, "dport")
        .iter()
        .map(|v| v.as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(got, want);
}

#[rstest]
fn update_changes_and_deletes_properties(mut fw: Firewall) {
    let up = RuleUpdate {
        props: props(&[("comment", "web"), ("dport", "8080")]),
        delete: vec!["enable".into()],
        ..RuleUpdate::default()
    };
    fw.update_rule(&CLUSTER, 1, &up).expect("update");
    let r = fw.rule_a(&CLUSTER, 1).expect("rule");
    assert_eq!(r["dport"], "8080");
    assert_eq!(r["comment"], "web");
    // a rule without `enable` is written enabled
    assert_eq!(r["enable"], json!(1));
}

#[rstest]
#[case::type_("type", "unable to delete required property 'type'")]
#[case::unknown("foo", "no such property ('foo')")]
fn deleting_a_required_or_unknown_property_is_refused(
    mut fw: Firewall,
    #[case] what: &str,
    #[case] msg: &str,
) {
    let up = RuleUpdate {
        delete: vec![what.into()],
        ..RuleUpdate::default()
    };
    assert_eq!(
        refused(fw.update_rule(&CLUSTER, 0, &up)),
        (400, format!("delete: {msg}"))
    );
}

#[rstest]
fn delete_renumbers_and_a_bad_position_is_refused(mut fw: Firewall) {
    fw.delete_rule(&CLUSTER, 0, None).expect("delete");
    assert_eq!(field(&fw, &CLUSTER, "pos"), [json!(0), json!(1)]);
    assert_eq!(field(&fw, &CLUSTER, "dport")[0], "80");
    assert_eq!(
        refused(fw.delete_rule(&CLUSTER, 2, None)),
        (500, "no rule at position 2".into())
    );
    assert_eq!(
        refused(fw.rule_a(&CLUSTER, 5)),
        (500, "no rule at position 5".into())
    );
}

#[rstest]
fn a_stale_digest_is_refused(mut fw: Firewall) {
    let old = fw.rules_a(&CLUSTER).expect("rules")[0]["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    fw.delete_rule(&CLUSTER, 0, Some(&old))
        .expect("current digest");
    assert_eq!(
        refused(fw.delete_rule(&CLUSTER, 0, Some(&old))),
        (
            500,
            "detected modified configuration - file changed by other user? Try again.".into()
        )
    );
}

#[rstest]
#[case::macro_(&[("type", "in"), ("action", "ACCEPT"), ("macro", "NoSuch")], "macro: unknown macro 'NoSuch'")]
#[case::macro_conflict(&[("type", "in"), ("action", "ACCEPT"), ("macro", "SSH"), ("proto", "tcp"), ("dport", "2222")], "dport: parameter 'dport' already define in macro (value = '22')")]
#[case::alias(&[("type", "in"), ("action", "ACCEPT"), ("source", "nosuch")], "source: no such alias 'nosuch'")]
#[case::ipset(&[("type", "in"), ("action", "ACCEPT"), ("dest", "+nosuch")], "dest: no such ipset 'nosuch'")]
#[case::action(&[("type", "in"), ("action", "ALLOW")], "action: unknown action 'ALLOW'")]
#[case::forward_reject(&[("type", "forward"), ("action", "REJECT")], "action: cannot define REJECT rules on forward chain")]
#[case::dport_no_proto(&[("type", "in"), ("action", "ACCEPT"), ("dport", "22")], "proto: missing property - 'dport' requires this property")]
#[case::ports_icmp_type(&[("type", "in"), ("action", "ACCEPT"), ("proto", "udp"), ("icmp-type", "echo-request")], "proto: missing property - 'icmp-type' requires this property")]
#[case::icmp_type(&[("type", "in"), ("action", "ACCEPT"), ("proto", "icmp"), ("icmp-type", "neighbor-solicitation")], "icmp-type: invalid icmp-type 'neighbor-solicitation' for proto 'icmp'")]
#[case::no_ports(&[("type", "in"), ("action", "ACCEPT"), ("proto", "gre"), ("sport", "80")], "sport: protocol 'gre' does not support ports")]
#[case::mixed(&[("type", "in"), ("action", "ACCEPT"), ("proto", "icmpv6"), ("source", "10.0.0.1")], "source: detected mixed ipv4/ipv6 addresses in rule")]
#[case::type_(&[("action", "ACCEPT")], "type: missing property")]
fn bad_rules_are_refused_in_pves_words(
    mut fw: Firewall,
    #[case] p: &[(&str, &str)],
    #[case] msg: &str,
) {
    assert_eq!(
        refused(fw.create_rule(&CLUSTER, &props(p))),
        (400, msg.to_string())
    );
    assert_eq!(fw.rules_a(&CLUSTER).expect("rules").len(), 3);
}

#[rstest]
#[case::vm_iface(&[("type", "in"), ("action", "ACCEPT"), ("iface", "eth0")], "iface: value does not match the regex pattern 'net\\d+'")]
#[case::vm_forward(&[("type", "forward"), ("action", "ACCEPT")], "type: invalid rule type 'forward' for rule_env 'vm'")]
fn guest_rules_have_their_own_limits(
    mut fw: Firewall,
    #[case] p: &[(&str, &str)],
    #[case] msg: &str,
) {
    assert_eq!(
        refused(fw.create_rule(&vm(), &props(p))),
        (400, msg.to_string())
    );
}

#[rstest]
fn macros_take_pves_spelling_and_addresses_give_the_ip_version(mut fw: Firewall) {
    let p = props(&[
        ("type", "in"),
        ("action", "ACCEPT"),
        ("macro", "ssh"),
        ("source", "lan"),
        ("iface", "net0"),
    ]);
    fw.create_rule(&vm(), &p).expect("rule");
    let r = fw.rule_a(&vm(), 0).expect("rule");
    assert_eq!(r["macro"], "SSH");
    assert_eq!(r["ipversion"], json!(4));
    assert_eq!(r["source"], "lan");
}

#[rstest]
fn a_rule_whose_alias_went_away_shows_an_error(mut fw: Firewall) {
    let p = props(&[("type", "in"), ("action", "ACCEPT"), ("source", "lan")]);
    fw.create_rule(&CLUSTER, &p).expect("rule");
    fw.delete_alias(&Level::Cluster, "lan", None)
        .expect("PVE does not refuse an alias in use");
    let r = fw.rule_a(&CLUSTER, 0).expect("rule");
    assert_eq!(r["errors"], json!({ "source": "no such alias 'lan'" }));
}

#[rstest]
fn groups_are_lower_case_and_refused_twice(mut fw: Firewall) {
    fw.create_group("Web", Some("web servers"), None, None)
        .expect("group");
    let g = fw.groups_a();
    assert_eq!(g[0]["group"], "web");
    assert_eq!(g[0]["comment"], "web servers");
    assert_eq!(
        refused(fw.create_group("web", None, None, None)),
        (400, "group: Security group 'web' already exists".into())
    );
    assert_eq!(
        refused(fw.rules_a(&RuleSet::Group("Web".into()))),
        (500, "no such security group 'Web'".into())
    );
}

#[rstest]
fn group_rules_and_group_references(mut fw: Firewall) {
    fw.create_group("web", None, None, None).expect("group");
    let g = RuleSet::Group("web".into());
    fw.create_rule(
        &g,
        &props(&[("type", "in"), ("action", "ACCEPT"), ("macro", "HTTP")]),
    )
    .expect("rule in group");
    assert_eq!(
        refused(fw.create_rule(&g, &props(&[("type", "group"), ("action", "web")]))),
        (
            400,
            "type: invalid rule type 'group' for rule_env 'group'".into()
        )
    );
    fw.create_rule(
        &vm(),
        &props(&[("type", "group"), ("action", "web"), ("iface", "net0")]),
    )
    .expect("guest uses group");
    assert_eq!(
        refused(fw.delete_group("web")),
        (500, "Security group 'web' is not empty".into())
    );
    // renaming follows the rules that use the group
    fw.create_group("www", None, Some("web"), None)
        .expect("rename");
    assert_eq!(field(&fw, &vm(), "action"), [json!("www")]);
    assert_eq!(
        fw.rules_a(&RuleSet::Group("www".into()))
            .expect("rules")
            .len(),
        1
    );
    fw.delete_rule(&RuleSet::Group("www".into()), 0, None)
        .expect("empty it");
    fw.delete_group("www").expect("delete empty group");
    assert!(fw.groups_a().is_empty());
}

#[rstest]
fn aliases_keep_their_case_and_drop_host_lengths(mut fw: Firewall) {
    fw.create_alias(&Level::Vm(100), "Gateway", "10.0.0.1/32", None)
        .expect("alias");
    let a = fw.alias_a(&Level::Vm(100), "gateway").expect("alias");
    assert_eq!(a["name"], "Gateway");
    assert_eq!(a["cidr"], "10.0.0.1");
    assert_eq!(
        refused(fw.create_alias(&Level::Vm(100), "GATEWAY", "10.0.0.2", None)),
        (400, "name: alias 'GATEWAY' already exists".into())
    );
    fw.update_alias(
        &Level::Vm(100),
        "gateway",
        "10.0.0.254",
        None,
        Some("gw"),
        None,
    )
    .expect("rename");
    assert_eq!(fw.aliases_a(&Level::Vm(100))[0]["name"], "gw");
    assert_eq!(
        refused(fw.alias_a(&Level::Vm(100), "gateway")),
        (400, "name: no such alias".into())
    );
}

#[rstest]
fn ipset_entries_are_cleaned_sorted_and_unique(mut fw: Firewall) {
    let l = Level::Cluster;
    fw.add_ip(&l, "mgmt", "10.1.2.3/8", false, Some("ten"))
        .expect("network");
    fw.add_ip(&l, "mgmt", "10.0.0.5/32", true, None)
        .expect("host");
    fw.add_ip(&l, "mgmt", "lan", false, None).expect("alias");
    let cidrs: Vec<Value> = fw
        .ipset_a(&l, "mgmt")
        .expect("set")
        .iter()
        .map(|e| e["cidr"].clone())
        .collect();
    assert_eq!(
        cidrs,
        [json!("10.0.0.0/8"), json!("10.0.0.5"), json!("lan")]
    );
    assert_eq!(
        fw.ip_a(&l, "mgmt", "10.0.0.5").expect("ip")["nomatch"],
        json!(1)
    );
    assert_eq!(
        refused(fw.add_ip(&l, "mgmt", "10.9.9.9/8", false, None)),
        (400, "cidr: address '10.0.0.0/8' already exists".into())
    );
    assert_eq!(
        refused(fw.add_ip(&l, "mgmt", "0.0.0.0/0", false, None)),
        (
            400,
            "cidr: a zero prefix is not allowed in ipset entries".into()
        )
    );
    assert_eq!(
        refused(fw.add_ip(&l, "mgmt", "nosuch", false, None)),
        (500, "no such alias 'nosuch'".into())
    );
    assert_eq!(
        refused(fw.delete_ipset(&l, "mgmt", false)),
        (500, "IPSet 'mgmt' is not empty".into())
    );
    fw.delete_ipset(&l, "mgmt", true).expect("force");
    assert_eq!(
        refused(fw.ipset_a(&l, "mgmt")),
        (500, "no such IPSet 'mgmt'".into())
    );
}

#[rstest]
fn ipsets_rename_and_refuse_duplicates(mut fw: Firewall) {
    let l = Level::Cluster;
    assert_eq!(
        refused(fw.create_ipset(&l, "mgmt", None, None, None)),
        (400, "name: IPSet 'mgmt' already exists".into())
    );
    fw.create_ipset(&l, "admins", Some("ops"), Some("mgmt"), None)
        .expect("rename");
    let list = fw.ipsets_a(&l);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["name"], "admins");
    assert_eq!(list[0]["comment"], "ops");
    assert_eq!(
        refused(fw.create_ipset(&l, "x1", None, Some("nosuch"), None)),
        (400, "name: IPSet 'nosuch' does not exist".into())
    );
}

#[rstest]
fn options_keep_what_was_set_with_a_digest() {
    let mut f = Firewall::default();
    let l = Level::Vm(100);
    let empty = f.options_a(&l, T0);
    assert_eq!(
        empty,
        json!({ "digest": "da39a3ee5e6b4b0d3255bfef95601890afd80709" })
    );
    f.set_options(
        &l,
        &props(&[("enable", "1"), ("policy_in", "DROP")]),
        &[],
        None,
        T0,
    )
    .expect("set");
    let o = f.options_a(&l, T0);
    assert_eq!(o["enable"], json!(1));
    assert_eq!(o["policy_in"], "DROP");
    assert_eq!(
        refused(f.set_options(&l, &BTreeMap::new(), &["enable"], Some("0000"), T0)),
        (
            500,
            "detected modified configuration - file changed by other user? Try again.".into()
        )
    );
    assert_eq!(
        refused(f.set_options(&l, &BTreeMap::new(), &["nosuch"], None, T0)),
        (400, "delete: no such option 'nosuch'".into())
    );
    f.set_options(&l, &BTreeMap::new(), &["enable", "policy_in"], None, T0)
        .expect("delete");
    assert!(!f.has_guest(100), "an empty file is no file");
}

#[rstest]
fn a_cluster_enable_above_one_lapses_after_a_minute() {
    let mut f = Firewall::default();
    f.set_options(&Level::Cluster, &props(&[("enable", "2")]), &[], None, T0)
        .expect("set");
    assert_eq!(f.options_a(&Level::Cluster, T0 + 10)["enable"], json!(T0));
    assert_eq!(f.options_a(&Level::Cluster, T0 + 61)["enable"], json!(0));
}

#[rstest]
fn refs_and_guest_files(mut fw: Firewall) {
    fw.create_alias(&Level::Ct(101), "db", "10.0.0.9", None)
        .expect("alias");
    let refs = fw.refs(&Level::Ct(101), None);
    let names: Vec<(&str, &str)> = refs
        .iter()
        .map(|r| (r.reference.as_str(), r.scope))
        .collect();
    assert_eq!(names, [("+mgmt", "dc"), ("lan", "dc"), ("db", "guest")]);
    assert_eq!(fw.refs(&Level::Cluster, Some("alias")).len(), 1);
    fw.clone_guest(101, 102);
    assert!(fw.has_guest(102));
    fw.remove_guest(101);
    assert!(!fw.has_guest(101));
}

#[rstest]
fn macros_are_listed_with_descriptions() {
    let m = Firewall::macros();
    assert!(m.len() > 80);
    let ssh = m.iter().find(|e| e.name == "SSH").expect("SSH");
    assert_eq!(ssh.descr, "Secure shell traffic");
}

/// A world whose VM 100 has a rule and cluster alias `lan`.
#[fixture]
fn lab() -> World {
    let mut w = World::from_yaml(LAB);
    let fw = w.c.firewall_mut();
    fw.create_alias(&Level::Cluster, "lan", "10.0.0.0/8", None)
        .expect("alias");
    fw.create_rule(
        &vm(),
        &props(&[("type", "in"), ("action", "ACCEPT"), ("source", "lan")]),
    )
    .expect("rule");
    w
}

#[rstest]
fn a_saved_world_keeps_the_firewall(lab: World) {
    let doc = serde_json::to_value(&lab.c).expect("saved");
    assert_eq!(
        doc["firewall"]["guests"]["100"]["rules"][0]["source"],
        "lan"
    );
    let back: crate::model::Cluster = serde_json::from_value(doc).expect("loaded");
    assert_eq!(back.firewall(), lab.c.firewall());
    assert_eq!(
        back.firewall().rules_a(&vm()).expect("rules"),
        lab.c.firewall().rules_a(&vm()).expect("rules")
    );
}

#[rstest]
fn destroying_a_guest_removes_its_firewall_file(mut lab: World) {
    let op = QemuOp::Destroy {
        skiplock: false,
        purge: false,
        unreferenced: false,
    };
    lab.run("pve", qm_worker("qmdestroy", 100, op));
    assert!(!lab.c.firewall().has_guest(100));
    assert!(lab.c.firewall().rules_a(&vm()).expect("rules").is_empty());
    // the cluster's own file stays
    assert_eq!(lab.c.firewall().aliases_a(&Level::Cluster).len(), 1);
}

// ---- SDN VNet firewalls ------------------------------------------------------

fn vnet() -> RuleSet {
    RuleSet::Level(Level::Vnet("labnet".into()))
}

#[rstest]
#[case::in_(&[("type", "in"), ("action", "ACCEPT")], "type: invalid rule type 'in' for rule_env 'vnet'")]
#[case::out(&[("type", "out"), ("action", "DROP")], "type: invalid rule type 'out' for rule_env 'vnet'")]
#[case::reject(&[("type", "forward"), ("action", "REJECT")], "action: cannot define REJECT rules on forward chain")]
#[case::iface(&[("type", "forward"), ("action", "ACCEPT"), ("iface", "net0")], "type: parameter -i not allowed for this rule type")]
#[case::alias(&[("type", "forward"), ("action", "ACCEPT"), ("dest", "nosuch")], "dest: no such alias 'nosuch'")]
fn vnet_rules_are_forward_or_group_rules(
    mut fw: Firewall,
    #[case] p: &[(&str, &str)],
    #[case] msg: &str,
) {
    assert_eq!(
        refused(fw.create_rule(&vnet(), &props(p))),
        (400, msg.to_string())
    );
    assert!(fw.rules_a(&vnet()).expect("rules").is_empty());
}

#[rstest]
fn vnet_rules_see_the_cluster_aliases_and_keep_their_positions(mut fw: Firewall) {
    let set = vnet();
    fw.create_rule(
        &set,
        &props(&[
            ("type", "forward"),
            ("action", "ACCEPT"),
            ("source", "lan"),
            ("macro", "ssh"),
        ]),
    )
    .expect("forward rule");
    fw.create_rule(
        &set,
        &props(&[("type", "group"), ("action", "web"), ("enable", "1")]),
    )
    .expect("group rule");
    let rules = fw.rules_a(&set).expect("rules");
    assert_eq!(field(&fw, &set, "type"), [json!("group"), json!("forward")]);
    assert_eq!(rules[1]["macro"], "SSH");
    assert_eq!(rules[1]["ipversion"], 4);
    assert_eq!(rules[1]["enable"], 0);
    // The cluster's own rules are another list.
    assert_eq!(fw.rules_a(&CLUSTER).expect("rules").len(), 3);
    let digest = rules[0]["digest"].as_str().expect("digest").to_string();
    fw.delete_rule(&set, 0, Some(&digest)).expect("delete");
    assert_eq!(
        refused(fw.delete_rule(&set, 0, Some(&digest))),
        (
            500,
            "detected modified configuration - file changed by other user? Try again.".into()
        )
    );
    assert_eq!(refused(fw.rule_a(&set, 1)).1, "no rule at position 1");
}

#[rstest]
fn vnet_options_are_enable_and_the_forward_policy() {
    let mut fw = Firewall::default();
    let l = Level::Vnet("labnet".into());
    fw.set_options(
        &l,
        &props(&[
            ("enable", "true"),
            ("policy_forward", "DROP"),
            ("log_level_forward", "info"),
        ]),
        &[],
        None,
        T0,
    )
    .expect("options");
    let o = fw.options_a(&l, T0);
    assert_eq!(o["enable"], 1);
    assert_eq!(o["policy_forward"], "DROP");
    assert_eq!(
        fw.options_a(&Level::Vnet("other".into()), T0).get("enable"),
        None
    );
    assert_eq!(
        refused(fw.set_options(&l, &BTreeMap::new(), &["policy_in"], None, T0)),
        (400, "delete: no such option 'policy_in'".into())
    );
    let digest = o["digest"].as_str().expect("digest").to_string();
    fw.set_options(
        &l,
        &BTreeMap::new(),
        &["enable", "policy_forward", "log_level_forward"],
        Some(&digest),
        T0,
    )
    .expect("delete");
    assert!(fw.is_empty(), "an emptied VNet file is no file");
}
