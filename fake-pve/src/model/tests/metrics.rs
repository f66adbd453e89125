//! Metric servers (`status.cfg`): each plugin type's options, the
//! refusals of `check_config`, and the update's `delete` rules.

use rstest::rstest;

use super::{map, refused};
use crate::api::metrics::view;
use crate::model::PveVersion;
use crate::model::Result;
use crate::model::metrics::Metrics;

const V9: PveVersion = PveVersion::V9_1;

/// `GET /cluster/metrics/server/{id}`'s answer.
fn read(m: &Metrics, v: PveVersion, id: &str) -> Result<serde_json::Value> {
    m.read(id).map(|s| view::server(s, v))
}

fn with_graphite() -> Metrics {
    let mut m = Metrics::default();
    m.create(
        V9,
        "g1",
        "graphite",
        map(&[("server", "192.0.2.5"), ("port", "2003"), ("proto", "tcp")]),
    )
    .expect("created");
    m
}

#[test]
fn servers_are_listed_and_read_typed() {
    let mut m = with_graphite();
    m.create(
        V9,
        "influx",
        "influxdb",
        map(&[
            ("server", "db.example"),
            ("port", "8086"),
            ("influxdbproto", "https"),
            ("token", "t0ken"),
            ("verify-certificate", "0"),
            ("disable", "1"),
        ]),
    )
    .expect("created");
    let idx = view::index(&m);
    assert_eq!(idx.len(), 2);
    assert_eq!(idx[0]["id"], "g1");
    assert_eq!(idx[0]["disable"], 0);
    assert_eq!(idx[0]["port"], 2003);
    assert_eq!(idx[1]["disable"], 1);
    let r = read(&m, V9, "influx").expect("reads");
    assert_eq!(r["type"], "influxdb");
    assert_eq!(r["verify-certificate"], 0);
    assert_eq!(r["port"], 8086);
    assert!(r.get("token").is_none(), "the token is never read back");
    assert!(m.has_token("influx"));
    assert_eq!(
        refused(read(&m, V9, "nope")),
        (500, "status server entry 'nope' does not exist".into())
    );
}

#[rstest]
#[case("graphite", &[("port", "2003")], "missing value for required option 'server'")]
#[case("influxdb", &[("server", "a")], "missing value for required option 'port'")]
#[case("graphite", &[("server", "a"), ("bucket", "b")], "unexpected property 'bucket'")]
#[case("influxdb", &[("server", "a"), ("port", "1"), ("proto", "udp")], "unexpected property 'proto'")]
fn create_refusals(#[case] kind: &str, #[case] opts: &[(&str, &str)], #[case] msg: &str) {
    let mut m = Metrics::default();
    assert_eq!(
        refused(m.create(V9, "x", kind, map(opts))),
        (500, msg.into())
    );
}

#[test]
fn opentelemetry_is_9x_only() {
    let mut m = Metrics::default();
    let opts = map(&[("server", "otel.example"), ("port", "4318")]);
    m.create(V9, "o", "opentelemetry", opts.clone())
        .expect("9.1 has it");
    let mut old = Metrics::default();
    assert_eq!(
        refused(old.create(PveVersion::V8_4, "o", "opentelemetry", opts)).1,
        "unknown section type 'opentelemetry'"
    );
}

#[test]
fn an_id_is_taken_once() {
    let mut m = with_graphite();
    assert_eq!(
        refused(m.create(V9, "g1", "graphite", map(&[("server", "b")]))).1,
        "Metric server 'g1' already exists"
    );
}

#[rstest]
#[case(&[], &["server"], "unable to delete required option 'server'")]
#[case(&[], &["bogus"], "no such option 'bogus'")]
#[case(&[("path", "pve")], &["path"], "cannot set and delete property 'path' at the same time!")]
#[case(&[("bucket", "b")], &[], "unexpected property 'bucket'")]
fn update_refusals(#[case] set: &[(&str, &str)], #[case] delete: &[&str], #[case] msg: &str) {
    let mut m = with_graphite();
    let delete: Vec<String> = delete.iter().map(|s| (*s).to_string()).collect();
    assert_eq!(refused(m.update(V9, "g1", map(set), &delete, None)).1, msg);
}

#[test]
fn update_sets_deletes_and_checks_the_digest() {
    let mut m = with_graphite();
    let digest = m.digest();
    m.update(
        V9,
        "g1",
        map(&[("path", "proxmox"), ("timeout", "3")]),
        &["proto".into()],
        Some(&digest),
    )
    .expect("updated");
    let r = read(&m, V9, "g1").expect("reads");
    assert_eq!(r["path"], "proxmox");
    assert_eq!(r["timeout"], 3);
    assert!(r.get("proto").is_none());
    assert_eq!(
        refused(m.update(V9, "g1", map(&[]), &[], Some(&digest))).1,
        "detected modified configuration - file changed by other user? Try again."
    );
    assert_eq!(
        refused(m.update(V9, "zz", map(&[]), &[], None)).1,
        "no such server 'zz'"
    );
}

#[test]
fn deleting_a_missing_server_fails_on_its_missing_type() {
    let mut m = with_graphite();
    m.delete("g1").expect("deleted");
    assert!(m.is_empty());
    assert_eq!(refused(m.delete("g1")).1, "unknown section type ''");
}

mod export {
    use rstest::rstest;
    use serde_json::Value;

    use crate::model::metrics::export::ExportQuery;
    use crate::model::tests::{CLUSTER, LAB, T0, World};

    fn export(w: &World, local: &str, q: &ExportQuery) -> Vec<Value> {
        crate::api::metrics::view::export(
            &super::sources(&w.c)
                .metrics_export(local, q, T0 * 1000)
                .expect("export"),
        )["data"]
            .as_array()
            .expect("list")
            .clone()
    }

    fn find<'a>(data: &'a [Value], id: &str, metric: &str) -> Vec<&'a Value> {
        data.iter()
            .filter(|m| m["id"] == id && m["metric"] == metric)
            .collect()
    }

    #[test]
    fn the_newest_round_has_the_node_guests_and_storages() {
        let w = World::from_yaml(LAB);
        let data = export(&w, "pve", &ExportQuery::default());
        let times: Vec<i64> = data
            .iter()
            .map(|m| m["timestamp"].as_i64().expect("time"))
            .collect();
        assert!(times.windows(2).all(|p| p[0] == p[1]), "one round");
        assert_eq!(find(&data, "node/pve", "cpu_max")[0]["value"], 16);
        assert_eq!(find(&data, "node/pve", "net_in")[0]["type"], "derive");
        // A stopped VM has its sizes only, a running one its load too.
        assert!(find(&data, "qemu/100", "cpu_current").is_empty());
        assert_eq!(find(&data, "qemu/100", "uptime")[0]["value"], 0);
        assert_eq!(find(&data, "qemu/101", "cpu_current").len(), 1);
        assert_eq!(find(&data, "storage/pve/local-lvm", "disk_total").len(), 1);
    }

    #[rstest]
    #[case::all(None, 181)]
    #[case::last_minute(Some(T0 - 60), 6)]
    #[case::just_ahead(Some(T0 + 5), 0)]
    fn history_is_thirty_minutes_of_rounds(#[case] start: Option<i64>, #[case] rounds: usize) {
        let w = World::from_yaml(LAB);
        let q = ExportQuery {
            history: true,
            start_time: start,
            ..ExportQuery::default()
        };
        let data = export(&w, "pve", &q);
        let uptimes = find(&data, "node/pve", "uptime");
        assert_eq!(uptimes.len(), rounds);
        // Oldest first, 10 s apart.
        if rounds > 1 {
            let a = uptimes[0]["timestamp"].as_i64().expect("t");
            let b = uptimes[1]["timestamp"].as_i64().expect("t");
            assert_eq!(b - a, 10);
        }
    }

    #[test]
    fn a_start_time_without_history_filters_the_newest_round() {
        let w = World::from_yaml(LAB);
        let q = ExportQuery {
            start_time: Some(T0 - 3600),
            ..ExportQuery::default()
        };
        assert_eq!(find(&export(&w, "pve", &q), "node/pve", "uptime").len(), 1);
    }

    #[rstest]
    #[case::cluster(false, &[], &["node/pve1", "node/pve2"])]
    #[case::local(true, &[], &["node/pve1"])]
    #[case::listed(true, &["pve2"], &["node/pve2"])]
    fn members_answer_for_themselves(
        #[case] local_only: bool,
        #[case] list: &[&str],
        #[case] want: &[&str],
    ) {
        let w = World::from_yaml(CLUSTER);
        let q = ExportQuery {
            local_only,
            node_list: list.iter().map(|s| (*s).to_string()).collect(),
            ..ExportQuery::default()
        };
        let data = export(&w, "pve1", &q);
        let mut ids: Vec<&str> = data
            .iter()
            .filter_map(|m| m["id"].as_str())
            .filter(|id| id.starts_with("node/"))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        // The offline pve3 is skipped.
        assert_eq!(ids, want);
    }

    #[test]
    fn unknown_nodes_are_refused() {
        let w = World::from_yaml(CLUSTER);
        let q = ExportQuery {
            node_list: vec!["pve2".into(), "x".into(), "y".into()],
            ..ExportQuery::default()
        };
        let err = super::sources(&w.c)
            .metrics_export("pve1", &q, T0 * 1000)
            .expect_err("refused");
        assert_eq!(
            err.to_string(),
            "Requested node-list contains unknown nodes - x, y"
        );
    }
}

/// What the export reads of the world.
fn sources(c: &crate::model::Cluster) -> crate::model::metrics::export::Export<'_> {
    crate::model::metrics::export::Export {
        nodes: &c.nodes,
        guests: &c.guests,
        storage: &c.storage,
        version: c.version,
    }
}
