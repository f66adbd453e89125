//! Load runs stated as features (`features/load/`): goose drives an
//! in-process fake-pve through `pve-loadtest`, and the steps read what it
//! measured. Latencies are in emulated time, as the documented table
//! states them.

use std::time::Duration;

use cucumber::{given, then, when};
use pve_loadtest::{Measured, Options, Outcome, Target};

use crate::world::PveWorld;

/// The load run of a scenario: how it is set up and what it measured.
#[derive(Debug, Default)]
pub struct LoadRun {
    profile: Option<String>,
    time_scale: Option<f64>,
    outcome: Option<Outcome>,
}

impl LoadRun {
    fn outcome(&self) -> &Outcome {
        self.outcome
            .as_ref()
            .expect("no load has run yet in this scenario")
    }

    /// The row of `name`: a PVE method (`create_vm`) or the table's
    /// operation (`Create VM`).
    fn row(&self, name: &str) -> &Measured {
        let o = self.outcome();
        o.rows
            .iter()
            .find(|m| m.row.method == name || m.row.op.eq_ignore_ascii_case(name))
            .unwrap_or_else(|| panic!("no operation '{name}' in the table:\n{}", o.table()))
    }
}

/// `800 ms`, `4.1 s`, `2 seconds` → milliseconds.
fn millis(text: &str) -> f64 {
    let t = text.trim();
    let (num, unit) = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or((t, ""), |i| t.split_at(i));
    let v: f64 = num
        .parse()
        .unwrap_or_else(|_| panic!("not a duration: '{text}'"));
    match unit.trim() {
        "ms" => v,
        "s" | "sec" | "second" | "seconds" => v * 1000.0,
        other => panic!("unknown unit '{other}' in '{text}' (ms or s)"),
    }
}

#[given(regex = r"^fake-pve with the (\w+) latency profile$")]
async fn profile(w: &mut PveWorld, name: String) {
    w.load.profile = Some(name);
}

#[given(regex = r"^emulated time runs (\d+(?:\.\d+)?) times faster than real time$")]
async fn time_scale(w: &mut PveWorld, scale: f64) {
    w.load.time_scale = Some(scale);
}

#[when(regex = r"^(\d+) users run (every operation|the VM lifecycle) for (\d+) seconds$")]
async fn run(w: &mut PveWorld, users: usize, what: String, secs: u64) {
    let profile = w.load.profile.clone().unwrap_or_else(|| "instant".into());
    let mut opts = Options {
        target: Target::InProcess { profile },
        users,
        run_time: secs,
        ..Options::default()
    };
    if let Some(s) = w.load.time_scale {
        opts.time_scale = s;
    }
    if what == "the VM lifecycle" {
        opts.scenarios = vec!["operator".into()];
    }
    // The run bounds itself (three times its run time and a minute); this
    // only guards the scenario against a runner that never returns.
    let bound = Duration::from_secs(secs * 3 + 90);
    let outcome = match tokio::time::timeout(bound, pve_loadtest::run(&opts)).await {
        Ok(run) => run.unwrap_or_else(|e| panic!("the load test failed to run: {e}")),
        Err(_) => panic!("the load test failed to run: the load did not end within {bound:?}"),
    };
    println!("{}", outcome.table());
    w.load.outcome = Some(outcome);
}

#[then("every operation was measured and none failed")]
async fn all_measured(w: &mut PveWorld) {
    let o = w.load.outcome();
    let table = o.table();
    for m in &o.rows {
        assert!(m.count > 0, "{} has no samples:\n{table}", m.row.op);
        assert!(
            m.p50_ms > 0.0 && m.p50_ms <= m.p95_ms,
            "{}: p50 {} and p95 {}:\n{table}",
            m.row.op,
            m.p50_ms,
            m.p95_ms
        );
    }
    assert_eq!(o.failed_requests, 0, "failed requests:\n{table}");
    assert_eq!(o.failed_transactions, 0, "failed operations:\n{table}");
}

#[then(regex = r"^the (p50|p95) of (.+) is within (\d+(?:\.\d+)?) % of (.+)$")]
async fn within(w: &mut PveWorld, which: String, name: String, pct: f64, expect: String) {
    let m = w.load.row(&name);
    let got = if which == "p50" { m.p50_ms } else { m.p95_ms };
    let want = millis(&expect);
    let off = (got - want).abs() / want * 100.0;
    assert!(
        off <= pct,
        "{which} of {name}: {got:.0} ms is {off:.1} % off {want:.0} ms (allowed {pct} %):\n{}",
        w.load.outcome().table()
    );
}

#[then(regex = r"^the (p50|p95) of (.+) is under (.+)$")]
async fn under(w: &mut PveWorld, which: String, name: String, limit: String) {
    let m = w.load.row(&name);
    let got = if which == "p50" { m.p50_ms } else { m.p95_ms };
    let max = millis(&limit);
    assert!(
        got < max,
        "{which} of {name}: {got:.1} ms, not under {max} ms:\n{}",
        w.load.outcome().table()
    );
}

#[then("every operation is within 10 % of its documented p50 and p95")]
async fn documented(w: &mut PveWorld) {
    let o = w.load.outcome();
    for m in &o.rows {
        assert_eq!(m.pass, Some(true), "{} FAILS:\n{}", m.row.op, o.table());
    }
}

#[cfg(test)]
mod tests {
    use super::millis;

    #[test]
    fn durations() {
        assert!((millis("4.1 s") - 4100.0).abs() < 1e-9);
        assert!((millis("800 ms") - 800.0).abs() < 1e-9);
        assert!((millis("2 seconds") - 2000.0).abs() < 1e-9);
    }
}
