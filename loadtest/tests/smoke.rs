//! CI smoke: a short, bounded load against an in-process fake-pve on
//! loopback; every row of the table is measured and the numbers are sane.

use pve_loadtest::{Options, ROWS, Target};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_documented_load_fills_every_row() {
    let dir = std::env::temp_dir().join(format!("pve-loadtest-smoke-{}", std::process::id()));
    let opts = Options {
        target: Target::InProcess {
            profile: "documented".into(),
        },
        // 50x: the slowest documented p95 (6.8 s) is 136 ms of real time.
        time_scale: 50.0,
        poll_ms: 100.0,
        users: 7,
        run_time: 4,
        report_dir: Some(dir.clone()),
        ..Options::default()
    };
    let out = pve_loadtest::run(&opts).await.expect("the load test runs");
    let table = out.table();
    println!("{table}");
    assert_eq!(out.rows.len(), ROWS.len());
    assert_eq!(out.failed_transactions, 0, "{table}");
    assert_eq!(out.failed_requests, 0, "{table}");
    for (m, row) in out.rows.iter().zip(ROWS) {
        assert!(table.contains(row.op), "{} missing:\n{table}", row.op);
        assert!(m.count > 0, "{} has no samples:\n{table}", row.op);
        assert!(m.p50_ms > 0.0 && m.p50_ms <= m.p95_ms, "{table}");
        assert!(m.ops_min > 0.0, "{table}");
        assert!(m.pass.is_some(), "documented rows get a verdict");
        // Sane, not tight: at 50x every real millisecond of a loopback
        // round trip (on a busy CI machine) counts 50 times and samples are
        // few; the full run checks the 10 %.
        assert!(
            m.p50_ms > row.p50_ms * 0.5 && m.p50_ms < row.p50_ms * 5.0 + 1000.0,
            "{} p50 {} vs {}:\n{table}",
            row.op,
            m.p50_ms,
            row.p50_ms
        );
    }
    for f in ["report.html", "report.json", "report.md", "table.md"] {
        let meta = std::fs::metadata(dir.join(f)).expect("report written");
        assert!(meta.len() > 0, "{f} is empty");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
