//! `datacenter.cfg`'s `tag-style` and how guests' tags are written under
//! it (`get_unique_tags`).

use rstest::rstest;
use serde_json::json;

use super::{World, lab, map, refused};
use crate::model::PveVersion;
use crate::model::datacenter::{Datacenter, TagStyle};
use crate::model::qemu::ConfigUpdate;

const GIVEN: &str = "web,Prod;db prod\tWeb;a1";

#[rstest]
// The default (no tag-style, or one without these keys): sorted
// case-insensitively, lower-cased, each once.
#[case("", "a1;db;prod;web")]
#[case("shape=dense", "a1;db;prod;web")]
#[case("color-map=prod:ff0000", "a1;db;prod;web")]
#[case("ordering=alphabetical", "a1;db;prod;web")]
#[case("case-sensitive=0", "a1;db;prod;web")]
// ordering=config: the given order, still lower-cased and unique.
#[case("ordering=config", "web;prod;db;a1")]
// case-sensitive: kept as written, `Prod` and `prod` are two tags,
// sorted by byte (upper case first).
#[case("case-sensitive=1", "Prod;Web;a1;db;prod;web")]
#[case("case-sensitive=true,ordering=alphabetical", "Prod;Web;a1;db;prod;web")]
#[case("case-sensitive=1,ordering=config", "web;Prod;db;prod;Web;a1")]
#[case(
    "ordering=config,case-sensitive=yes,shape=none",
    "web;Prod;db;prod;Web;a1"
)]
fn tags_under_each_style(#[case] style: &str, #[case] written: &str) {
    let mut dc = Datacenter::default();
    if !style.is_empty() {
        dc.set(PveVersion::V9_1, &map(&[("tag-style", style)]), &[])
            .expect("accepted");
    }
    assert_eq!(dc.tag_style(PveVersion::V9_1).unique_tags(GIVEN), written);
}

#[rstest]
fn duplicates_keep_their_first_place_in_config_order() {
    let style = TagStyle {
        case_sensitive: false,
        config_order: true,
    };
    assert_eq!(style.unique_tags("b;A;a;c;B"), "b;a;c");
    assert_eq!(style.unique_tags(" ; ,"), "");
    // Case-insensitive sorting is stable: `B` and `b` compare equal and
    // the first written wins after lower-casing (both become `b`).
    assert_eq!(TagStyle::default().unique_tags("b,A;a;c B"), "a;b;c");
}

#[rstest]
#[case(PveVersion::V8_4)]
#[case(PveVersion::V9_1)]
fn options_answer_the_tag_style_parsed(#[case] version: PveVersion) {
    let mut dc = Datacenter::default();
    assert_eq!(
        crate::api::cluster::options_view::options(&dc.options(version, true)),
        json!({"description": "", "mac_prefix": "BC:24:11"})
    );
    dc.set(
        version,
        &map(&[(
            "tag-style",
            "ordering=config,case-sensitive=on,color-map=prod:ff0000:ffffff;db:00ff00,shape=full",
        )]),
        &[],
    )
    .expect("accepted");
    let want = json!({
        "case-sensitive": 1,
        "ordering": "config",
        "color-map": "prod:ff0000:ffffff;db:00ff00",
        "shape": "full",
    });
    assert_eq!(
        crate::api::cluster::options_view::options(&dc.options(version, true))["tag-style"],
        want
    );
    // Without Sys.Audit only console and tag-style are answered.
    assert_eq!(
        crate::api::cluster::options_view::options(&dc.options(version, false)),
        json!({ "tag-style": want })
    );
    dc.set(version, &map(&[]), &["tag-style".into()])
        .expect("deleted");
    assert!(dc.is_empty());
    assert_eq!(dc.tag_style(version), TagStyle::default());
}

#[rstest]
fn a_bad_property_string_or_broken_next_id_bounds_change_nothing() {
    let mut dc = Datacenter::default();
    let (status, msg) = refused(dc.set(
        PveVersion::V9_1,
        &map(&[("tag-style", "ordering=config,ordering=config")]),
        &[],
    ));
    assert_eq!(status, 400, "{msg}");
    let (status, msg) = refused(dc.set(
        PveVersion::V9_1,
        &map(&[("keyboard", "de"), ("next-id", "lower=5000,upper=4000")]),
        &[],
    ));
    assert_eq!(
        (status, msg.as_str()),
        (500, "lower (5000) <= upper (4000) boundary rule broken")
    );
    assert!(dc.is_empty(), "nothing changed");
}

#[rstest]
#[case(PveVersion::V8_4)]
#[case(PveVersion::V9_2)]
fn every_option_is_kept_and_read_back_as_pve_parses_it(#[case] v: PveVersion) {
    let mut dc = Datacenter::default();
    dc.set(
        v,
        &map(&[
            ("keyboard", "de"),
            ("max_workers", "8"),
            ("migration", "type=insecure,network=10.1.0.0/16"),
            ("next-id", "lower=5000"),
            ("registered-tags", "prod;backup"),
            ("user-tag-access", "user-allow=list,user-allow-list=web;db"),
            ("console", "applet"),
            ("mac_prefix", "bc:24:11"),
            ("description", "lab\nsecond line"),
            ("bwlimit", "migration=1000"),
        ]),
        &[],
    )
    .expect("accepted");
    let got = crate::api::cluster::options_view::options(&dc.options(v, true));
    assert_eq!(
        got,
        json!({
            "bwlimit": "migration=1000",
            "console": "html5",
            "description": "lab\nsecond line\n",
            "keyboard": "de",
            "mac_prefix": "BC:24:11",
            "max_workers": "8",
            "migration": {"type": "insecure", "network": "10.1.0.0/16"},
            "next-id": {"lower": "5000"},
            "registered-tags": ["prod", "backup"],
            "user-tag-access": {"user-allow": "list", "user-allow-list": ["web", "db"]},
        })
    );
    // The default prefix is not written; the bounds and the tag rules
    // take effect.
    assert_eq!(dc.get("mac_prefix"), None);
    assert_eq!(dc.next_id_bounds(v), (5000, 1_000_000));
    let rules = dc.tag_access(v);
    assert_eq!(rules.registered, vec!["prod", "backup"]);
    assert_eq!(rules.user_allow, "list");
    // Rewritten by another change, the registered tags come back sorted.
    dc.set(v, &map(&[("language", "en")]), &["keyboard".into()])
        .expect("accepted");
    let got = crate::api::cluster::options_view::options(&dc.options(v, true));
    assert_eq!(got["registered-tags"], json!(["backup", "prod"]));
    assert!(got.get("keyboard").is_none());
    // Without Sys.Audit: console and tag-style only.
    assert_eq!(
        crate::api::cluster::options_view::options(&dc.options(v, false)),
        json!({"console": "html5"})
    );
}

#[rstest]
fn migration_unsecure_becomes_the_migration_type() {
    let v = PveVersion::V9_1;
    let mut dc = Datacenter::default();
    dc.set(v, &map(&[("migration_unsecure", "1")]), &[])
        .expect("accepted");
    assert_eq!(dc.get("migration"), Some("type=insecure"));
    assert_eq!(dc.get("migration_unsecure"), None);
    // Next to a migration setting it stays, and `migration` wins.
    dc.set(v, &map(&[("migration_unsecure", "0")]), &[])
        .expect("accepted");
    let got = crate::api::cluster::options_view::options(&dc.options(v, true));
    assert_eq!(got["migration"], json!({"type": "insecure"}));
    assert_eq!(got["migration_unsecure"], json!(0));
}

fn set_tags(lab: &mut World, tags: &str) -> Option<String> {
    let now = lab.now();
    let u = ConfigUpdate {
        set: map(&[("tags", tags)]),
        log: "update VM".into(),
        ..ConfigUpdate::default()
    };
    lab.c
        .vm_ops()
        .update_config("pve", 100, &u, now)
        .expect("applied");
    lab.conf(100, "tags")
}

#[rstest]
fn a_config_update_writes_tags_in_the_datacenter_style(mut lab: World) {
    assert_eq!(set_tags(&mut lab, GIVEN).as_deref(), Some("a1;db;prod;web"));
    let version = lab.c.version();
    lab.c
        .datacenter_mut()
        .set(
            version,
            &map(&[("tag-style", "case-sensitive=1,ordering=config")]),
            &[],
        )
        .expect("accepted");
    assert_eq!(
        set_tags(&mut lab, GIVEN).as_deref(),
        Some("web;Prod;db;prod;Web;a1")
    );
    // The style is part of the saved world.
    let saved: crate::model::Cluster =
        serde_json::from_value(serde_json::to_value(&lab.c).expect("saved")).expect("loaded");
    assert_eq!(saved.datacenter(), lab.c.datacenter());
}

#[rstest]
#[case(&[], (None, None))]
#[case(&[("migration", "secure")], (Some("secure"), None))]
#[case(&[("migration", "type=insecure,network=10.0.0.0/24")], (Some("insecure"), Some("10.0.0.0/24")))]
#[case(&[("migration", "network=fd00::/64")], (None, Some("fd00::/64")))]
#[case(&[("migration_unsecure", "1")], (Some("insecure"), None))]
#[case(&[("migration_unsecure", "0")], (Some("secure"), None))]
fn migration_reads_type_and_network(
    #[case] set: &[(&str, &str)],
    #[case] want: (Option<&str>, Option<&str>),
) {
    let mut dc = Datacenter::default();
    dc.set(PveVersion::V9_2, &map(set), &[]).expect("set");
    let (kind, network) = dc.migration();
    assert_eq!((kind.as_deref(), network.as_deref()), want);
}
