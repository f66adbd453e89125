//! The documented table ([`ROWS`]) and what a run measured next to it
//! ([`Outcome`]).

use std::fmt::Write as _;

/// One row of the documented table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// The operation, as the table names it.
    pub op: &'static str,
    /// The PVE method that starts it.
    pub method: &'static str,
    /// Documented median, milliseconds.
    pub p50_ms: f64,
    /// Documented 95th percentile, milliseconds.
    pub p95_ms: f64,
    /// Documented throughput, operations per minute.
    pub ops_min: f64,
}

const fn row(op: &'static str, method: &'static str, p50: f64, p95: f64, ops: f64) -> Row {
    Row {
        op,
        method,
        p50_ms: p50,
        p95_ms: p95,
        ops_min: ops,
    }
}

/// The VirtRigaud "Load Test Results" table.
pub const ROWS: [Row; 7] = [
    row("Create VM", "create_vm", 2300.0, 4100.0, 12.0),
    row("Power On", "vm_start", 800.0, 1200.0, 45.0),
    row("Power Off", "vm_stop", 650.0, 1100.0, 50.0),
    row("Describe", "vm_status", 120.0, 200.0, 200.0),
    row("Reconfigure CPU", "update_vm_async", 1800.0, 3200.0, 15.0),
    row(
        "Snapshot Create (with memory)",
        "snapshot",
        3500.0,
        6800.0,
        8.0,
    ),
    row("Clone (linked)", "clone_vm", 1900.0, 3400.0, 12.0),
];

pub(crate) const CREATE: usize = 0;
pub(crate) const START: usize = 1;
pub(crate) const STOP: usize = 2;
pub(crate) const DESCRIBE: usize = 3;
pub(crate) const RECONFIGURE: usize = 4;
pub(crate) const SNAPSHOT: usize = 5;
pub(crate) const CLONE: usize = 6;

/// The tolerance of the comparison: 10 % of the documented figure.
pub const TOLERANCE: f64 = 0.10;

/// One measured row.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The documented row.
    pub row: Row,
    /// Samples.
    pub count: usize,
    /// Measured median, emulated milliseconds.
    pub p50_ms: f64,
    /// Measured 95th percentile, emulated milliseconds.
    pub p95_ms: f64,
    /// Operations per emulated minute.
    pub ops_min: f64,
    /// Within [`TOLERANCE`] of both documented figures (none when not
    /// compared: the `instant` profile).
    pub pass: Option<bool>,
}

/// What a run gave.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The profile (or `external`).
    pub profile: String,
    /// The time scale used.
    pub time_scale: f64,
    /// One per row of [`ROWS`].
    pub rows: Vec<Measured>,
    /// Wall-clock duration of the load, seconds.
    pub seconds: f64,
    /// Requests goose made.
    pub requests: usize,
    /// Requests that failed.
    pub failed_requests: usize,
    /// Transactions that failed (operations that did not end `OK`).
    pub failed_transactions: usize,
}

impl Outcome {
    /// Every compared row passed.
    pub fn passed(&self) -> bool {
        self.rows.iter().all(|r| r.pass != Some(false))
    }

    /// The table, in Markdown.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let compared = self.rows.iter().any(|r| r.pass.is_some());
        let _ = writeln!(
            s,
            "profile {} | time scale {} | {:.1} s | {} requests, {} failed | {} failed transactions",
            self.profile,
            self.time_scale,
            self.seconds,
            self.requests,
            self.failed_requests,
            self.failed_transactions
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "| operation | documented p50/p95 | measured p50/p95 | n | throughput (documented) | verdict |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for m in &self.rows {
            let verdict = match m.pass {
                Some(p) => format!(
                    "{} ({:+.1} % / {:+.1} %)",
                    if p { "PASS" } else { "FAIL" },
                    deviation(m.p50_ms, m.row.p50_ms) * 100.0,
                    deviation(m.p95_ms, m.row.p95_ms) * 100.0
                ),
                None if compared => "-".into(),
                None => "- (emulator cost)".into(),
            };
            let _ = writeln!(
                s,
                "| {} | {} / {} | {} / {} | {} | {:.1} ops/min ({}) | {} |",
                m.row.op,
                ms(m.row.p50_ms),
                ms(m.row.p95_ms),
                ms(m.p50_ms),
                ms(m.p95_ms),
                m.count,
                m.ops_min,
                m.row.ops_min,
                verdict
            );
        }
        s
    }
}

pub(crate) fn deviation(measured: f64, documented: f64) -> f64 {
    (measured - documented) / documented
}

fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} s", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// The nearest-rank percentile of sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.95), 95.0);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    #[test]
    fn verdicts_in_the_table() {
        let m = |row: Row, p50: f64, p95: f64, pass| Measured {
            row,
            count: 10,
            p50_ms: p50,
            p95_ms: p95,
            ops_min: 1.0,
            pass,
        };
        let out = Outcome {
            profile: "documented".into(),
            time_scale: 5.0,
            rows: vec![
                m(ROWS[0], 2300.0, 4100.0, Some(true)),
                m(ROWS[3], 140.0, 200.0, Some(false)),
            ],
            seconds: 1.0,
            requests: 2,
            failed_requests: 0,
            failed_transactions: 0,
        };
        let t = out.table();
        assert!(
            t.contains("| Create VM | 2.30 s / 4.10 s | 2.30 s / 4.10 s |"),
            "{t}"
        );
        assert!(t.contains("FAIL (+16.7 % / +0.0 %)"), "{t}");
        assert!(!out.passed());
    }
}
