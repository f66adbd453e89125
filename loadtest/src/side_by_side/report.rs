//! The comparison's figures and its Markdown report.

use std::time::Duration;

use super::{TARGET_BARE, TARGET_FAKEPVE, TARGET_LOG_COST, TARGET_WRITES};
use crate::throughput::Measured;

/// One server's figures.
#[derive(Debug, Clone)]
pub struct Row {
    /// What it is.
    pub name: String,
    /// What it achieved.
    pub measured: Measured,
    /// Its resident memory at the end, bytes.
    pub rss: Option<u64>,
    /// The processor time the server spent in its measured rounds (all
    /// its threads).
    pub cpu: Option<Cpu>,
    /// The processor time the load generator (this process) spent in the
    /// same rounds: on two cores it shares, it bounds the throughput too.
    pub client_cpu: Option<Cpu>,
    /// Requests per second in each measured round, in order.
    pub rounds: Vec<f64>,
}

/// Processor time: in the program itself and in the kernel on its
/// behalf (the sockets, TLS records' writes and reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cpu {
    /// User time.
    pub user: Duration,
    /// System time.
    pub system: Duration,
}

impl Cpu {
    /// Both together.
    pub fn total(self) -> Duration {
        self.user + self.system
    }

    /// What was spent between `self` and `later`.
    pub(super) fn until(self, later: Self) -> Self {
        Self {
            user: later.user.saturating_sub(self.user),
            system: later.system.saturating_sub(self.system),
        }
    }
}

impl std::ops::Add for Cpu {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self {
            user: self.user + o.user,
            system: self.system + o.system,
        }
    }
}

impl Row {
    /// The server's processor time per answered request, microseconds.
    pub fn cpu_per_request_us(&self) -> Option<f64> {
        self.per_request_us(self.cpu?.total())
    }

    /// The part of [`Row::cpu_per_request_us`] spent in the kernel.
    pub fn system_per_request_us(&self) -> Option<f64> {
        self.per_request_us(self.cpu?.system)
    }

    /// The load generator's processor time per answered request,
    /// microseconds.
    pub fn client_per_request_us(&self) -> Option<f64> {
        self.per_request_us(self.client_cpu?.total())
    }

    fn per_request_us(&self, d: Duration) -> Option<f64> {
        (self.measured.ok > 0).then(|| d.as_secs_f64() * 1e6 / self.measured.ok as f64)
    }
}

/// The comparison.
#[derive(Debug, Clone)]
pub struct Report {
    /// Connections used.
    pub connections: usize,
    /// fake-pve with the README's defaults, reads.
    pub fake_pve: Row,
    /// fake-pve without the access log, reads.
    pub no_log: Row,
    /// The bare server, reads.
    pub bare: Row,
    /// fakepve, reads.
    pub fakepve: Option<Row>,
    /// fake-pve with the README's defaults, the write mix.
    pub writes: Row,
    /// Access log lines fake-pve wrote.
    pub log_lines: usize,
    /// Whether it is the noise check (see [`Options::calibrate`](super::Options::calibrate)).
    pub calibrate: bool,
}

/// The lowest and highest of the rounds' own ratios of `a` to `b` (the
/// round's figures side by side, measured one after the other): how far
/// a single round strays, beside the ratio of the totals.
fn round_spread(a: &Row, b: &Row) -> Option<(f64, f64)> {
    a.rounds
        .iter()
        .zip(&b.rounds)
        .map(|(x, y)| ratio(*x, *y))
        .fold(None, |acc, r| match acc {
            None => Some((r, r)),
            Some((lo, hi)) => Some((f64::min(lo, r), f64::max(hi, r))),
        })
}

impl Report {
    fn rate(r: &Row) -> f64 {
        r.measured.per_second()
    }

    /// fake-pve (defaults) next to the bare server.
    pub fn to_bare(&self) -> f64 {
        ratio(Self::rate(&self.fake_pve), Self::rate(&self.bare))
    }

    /// What the access log costs: the share of the throughput without it
    /// that is lost with it.
    pub fn log_cost(&self) -> f64 {
        1.0 - ratio(Self::rate(&self.fake_pve), Self::rate(&self.no_log))
    }

    /// fake-pve (defaults) next to fakepve.
    pub fn to_fakepve(&self) -> Option<f64> {
        self.fakepve
            .as_ref()
            .map(|f| ratio(Self::rate(&self.fake_pve), Self::rate(f)))
    }

    /// The write mix next to the reads.
    pub fn writes_to_reads(&self) -> f64 {
        ratio(Self::rate(&self.writes), Self::rate(&self.fake_pve))
    }

    fn failed(&self) -> u64 {
        [&self.fake_pve, &self.no_log, &self.bare, &self.writes]
            .into_iter()
            .chain(self.fakepve.as_ref())
            .map(|r| r.measured.failed)
            .sum()
    }

    /// Whether every target is met (fakepve's only when it was measured;
    /// never in the noise check).
    pub fn passed(&self) -> bool {
        !self.calibrate
            && self.writes.measured.elapsed > Duration::ZERO
            && self.failed() == 0
            && self.to_bare() >= TARGET_BARE
            && self.log_cost() < TARGET_LOG_COST
            && self.writes_to_reads() >= TARGET_WRITES
            && self.to_fakepve().is_none_or(|x| x >= TARGET_FAKEPVE)
    }

    /// A Markdown report.
    pub fn table(&self) -> String {
        let mib =
            |b: Option<u64>| b.map_or("-".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0));
        let row = |r: &Row| {
            format!(
                "| {} | {} | {:.0} | {} | {} | {} | {} |\n",
                r.name,
                r.measured.ok,
                r.measured.per_second(),
                match (r.cpu_per_request_us(), r.system_per_request_us()) {
                    (Some(us), Some(sys)) => format!("{us:.1} µs ({sys:.1} in the kernel)"),
                    _ => "-".into(),
                },
                r.client_per_request_us()
                    .map_or("-".into(), |us| format!("{us:.1} µs")),
                r.measured.failed,
                mib(r.rss)
            )
        };
        let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
        let mut out = format!(
            "{} connections, TLS keep-alive, one request after the other on each\n\n\
             | server | requests | requests/s | server CPU per request | load generator CPU per request | failed | memory at the end |\n|---|---|---|---|---|---|---|\n",
            self.connections
        );
        for r in [&self.fake_pve, &self.no_log, &self.bare]
            .into_iter()
            .chain(self.fakepve.as_ref())
            .chain([&self.writes])
        {
            out.push_str(&row(r));
        }
        // How far the rounds' own ratios spread: " (rounds: 70 to 90 %)".
        let percent_spread = |a: &Row, b: &Row, cost: bool| {
            round_spread(a, b).map_or(String::new(), |(lo, hi)| {
                let (lo, hi) = if cost { (1.0 - hi, 1.0 - lo) } else { (lo, hi) };
                // (+ 0.0: a share that rounds to nothing is "0", not "-0".)
                let pct = |x: f64| (x * 100.0).round() + 0.0;
                format!(" (rounds: {:.0} to {:.0} %)", pct(lo), pct(hi))
            })
        };
        // A share that must reach its target: "- <who> reaches <x> % of
        // <what> (rounds: ...) (target <y> %): PASS".
        let reaches = |who: &str, share: f64, what: &str, spread: String, target: f64| {
            format!(
                "- {who} reaches {:.0} % of {what}{spread} (target {:.0} %): {}\n",
                share * 100.0,
                target * 100.0,
                verdict(share >= target)
            )
        };
        out.push('\n');
        out.push_str(&reaches(
            "fake-pve with its defaults",
            self.to_bare(),
            "the bare server",
            percent_spread(&self.fake_pve, &self.bare, false),
            TARGET_BARE,
        ));
        let log_spread = percent_spread(&self.fake_pve, &self.no_log, true);
        if self.calibrate {
            out.push_str(&format!(
                "- noise check: two servers alike, both with the README's defaults, differ by {:.1} %{log_spread}; the access log's comparison cannot tell apart less than that\n",
                self.log_cost() * 100.0,
            ));
        } else {
            out.push_str(&format!(
                "- the access log ({} lines written) costs {:.1} % of the throughput{log_spread} (target under {:.0} %): {}\n",
                self.log_lines,
                self.log_cost() * 100.0,
                TARGET_LOG_COST * 100.0,
                verdict(self.log_cost() < TARGET_LOG_COST)
            ));
        }
        match self.to_fakepve() {
            Some(x) => out.push_str(&format!(
                "- fake-pve answers {x:.1} times as many reads as fakepve{} (target {TARGET_FAKEPVE:.0}x): {}\n",
                self.fakepve
                    .as_ref()
                    .and_then(|f| round_spread(&self.fake_pve, f))
                    .map_or(String::new(), |(lo, hi)| format!(
                        " (rounds: {lo:.1} to {hi:.1})"
                    )),
                verdict(x >= TARGET_FAKEPVE)
            )),
            None => out.push_str("- fakepve not measured (no --fakepve)\n"),
        }
        out.push_str(&reaches(
            "the write mix",
            self.writes_to_reads(),
            "the reads' throughput",
            percent_spread(&self.writes, &self.fake_pve, false),
            TARGET_WRITES,
        ));
        out.push_str(&format!(
            "- failed requests: {}\n\nOverall: {}\n",
            self.failed(),
            verdict(self.passed())
        ));
        out
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, ok: u64) -> Row {
        rounds(name, ok, &[])
    }

    /// A row with the rates of its rounds.
    fn rounds(name: &str, ok: u64, each: &[f64]) -> Row {
        Row {
            name: name.into(),
            measured: Measured {
                ok,
                failed: 0,
                elapsed: Duration::from_secs(1),
            },
            rss: None,
            cpu: Some(Cpu {
                user: Duration::from_millis(ok / 200),
                system: Duration::from_millis(ok / 200),
            }),
            client_cpu: Some(Cpu {
                user: Duration::from_millis(ok / 100),
                system: Duration::ZERO,
            }),
            rounds: each.to_vec(),
        }
    }

    #[test]
    fn the_report_states_each_target_and_its_verdict() {
        let report = Report {
            connections: 64,
            fake_pve: row("fake-pve (README defaults)", 20_000),
            no_log: row("fake-pve --access-log off", 20_000),
            bare: row("bare axum, same bytes", 40_000),
            fakepve: Some(row("fakepve 0.5 (Python)", 1_000)),
            writes: row("fake-pve (README defaults), write mix", 10_000),
            log_lines: 20_000,
            calibrate: false,
        };
        let table = report.table();
        for line in [
            "| bare axum, same bytes | 40000 | 40000 | 10.0 µs (5.0 in the kernel) | 10.0 µs | 0 | - |",
            "- fake-pve with its defaults reaches 50 % of the bare server (target 75 %): FAIL",
            "- the access log (20000 lines written) costs 0.0 % of the throughput (target under 5 %): PASS",
            "- fake-pve answers 20.0 times as many reads as fakepve (target 12x): PASS",
            "- the write mix reaches 50 % of the reads' throughput (target 50 %): PASS",
            "Overall: FAIL",
        ] {
            assert!(table.contains(line), "{line}\nnot in\n{table}");
        }
        assert!(!report.passed());
    }

    /// Each comparison names how far its rounds' own ratios spread; the
    /// noise check states the difference between two servers alike and
    /// never passes.
    #[test]
    fn the_report_states_the_rounds_spread_and_the_noise_check() {
        let mut report = Report {
            connections: 64,
            fake_pve: rounds("fake-pve (README defaults)", 40_000, &[40_000.0, 36_000.0]),
            no_log: rounds("fake-pve --access-log off", 40_000, &[39_990.0, 40_000.0]),
            bare: rounds("bare axum, same bytes", 50_000, &[50_000.0, 40_000.0]),
            fakepve: Some(rounds("fakepve 0.5 (Python)", 2_000, &[2_000.0, 4_000.0])),
            writes: rounds(
                "fake-pve (README defaults), write mix",
                24_000,
                &[24_000.0, 18_000.0],
            ),
            log_lines: 40_000,
            calibrate: false,
        };
        let table = report.table();
        for line in [
            "- fake-pve with its defaults reaches 80 % of the bare server (rounds: 80 to 90 %) (target 75 %): PASS",
            "- the access log (40000 lines written) costs 0.0 % of the throughput (rounds: 0 to 10 %) (target under 5 %): PASS",
            "- fake-pve answers 20.0 times as many reads as fakepve (rounds: 9.0 to 20.0) (target 12x): PASS",
            "- the write mix reaches 60 % of the reads' throughput (rounds: 50 to 60 %) (target 50 %): PASS",
            "Overall: PASS",
        ] {
            assert!(table.contains(line), "{line}\nnot in\n{table}");
        }
        assert!(report.passed());
        report.calibrate = true;
        report.no_log.name = "fake-pve (README defaults), a second one".into();
        let table = report.table();
        assert!(
            table.contains("- noise check: two servers alike, both with the README's defaults, differ by 0.0 % (rounds: 0 to 10 %); the access log's comparison cannot tell apart less than that"),
            "{table}"
        );
        assert!(table.contains("Overall: FAIL"), "{table}");
        assert!(!report.passed());
    }
}
