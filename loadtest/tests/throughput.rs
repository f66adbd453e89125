//! CI smoke of the throughput comparison: a short, bounded run on
//! loopback where both servers answer every request. The figures
//! themselves are for `pve-throughput` in release mode (PERFORMANCE.md).

use std::time::Duration;

use pve_loadtest::throughput::{Options, PATH, compare};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_servers_answer_the_same_bytes_under_load() {
    let opts = Options {
        connections: 4,
        rounds: 1,
        round: Duration::from_millis(500),
        max_requests: 200,
        warm_up: Duration::from_millis(100),
    };
    let r = compare(&opts).await.expect("the comparison runs");
    let table = r.table();
    println!("{table}");
    assert!(r.body_len > 50, "{table}");
    assert!(r.fake_pve.ok > 0 && r.bare.ok > 0, "{table}");
    assert_eq!((r.fake_pve.failed, r.bare.failed), (0, 0), "{table}");
    assert!(r.fake_pve.ok <= 4 * 200 && r.bare.ok <= 4 * 200, "{table}");
    assert!(r.ratio() > 0.0, "{table}");
    assert!(table.contains(PATH) && table.contains("4 connections"));
    assert!(table.contains("PASS") || table.contains("FAIL"));
}
