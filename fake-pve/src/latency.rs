//! Latency profiles: how long tasks run and how long requests take, so
//! that fake-pve can answer as fast as CI wants or as slowly as a real PVE.
//!
//! A duration is fixed (`qmstart: 800`) or log-normal through its median
//! and 95th percentile (`qmcreate: {p50_ms: 2300, p95_ms: 4100}`). Draws
//! are deterministic for a seed. Built-in profiles: `instant` (tasks end at
//! once, the default) and `documented` (the load-test targets: create
//! 2.3 s / 4.1 s, start 0.8 s / 1.2 s, ...). Custom profiles are YAML:
//!
//! ```yaml
//! name: slow-lab
//! default_task: 500
//! tasks: { qmcreate: { p50_ms: 2300, p95_ms: 4100 }, qmstart: 800 }
//! requests: { vm_status: { p50_ms: 120, p95_ms: 200 } }
//! ```
//!
//! Task durations are in emulated time; `time_scale` (emulated seconds per
//! real second) speeds the system clock up or slows it down, and request
//! latencies are slept for in real time divided by the scale.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// A duration: fixed, or log-normal through a median and a 95th percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Dist {
    /// Always this many milliseconds.
    Fixed(u64),
    /// Log-normal.
    LogNormal {
        /// Median, milliseconds.
        p50_ms: f64,
        /// 95th percentile, milliseconds.
        p95_ms: f64,
    },
}

/// z of the 95th percentile of the standard normal distribution.
const Z95: f64 = 1.644_853_626_951_472_2;

impl Dist {
    /// The duration at quantile `u` (0 < u < 1).
    pub fn at(&self, u: f64) -> u64 {
        match *self {
            Dist::Fixed(ms) => ms,
            Dist::LogNormal { p50_ms, p95_ms } => {
                if p50_ms <= 0.0 {
                    return 0;
                }
                let mu = p50_ms.ln();
                let sigma = ((p95_ms.max(p50_ms)).ln() - mu) / Z95;
                (mu + sigma * inverse_normal(u)).exp().round() as u64
            }
        }
    }

    /// The median.
    pub fn median(&self) -> u64 {
        self.at(0.5)
    }
}

/// The inverse of the standard normal CDF (Acklam's rational
/// approximation, relative error below 1.2e-9).
pub fn inverse_normal(p: f64) -> f64 {
    const A: [f64; 6] = [
        -39.696_830_286_653_76,
        220.946_098_424_520_5,
        -275.928_510_446_968_7,
        138.357_751_867_269,
        -30.664_798_066_147_16,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -54.476_098_798_224_06,
        161.585_836_858_040_9,
        -155.698_979_859_886_6,
        66.801_311_887_719_72,
        -13.280_681_552_885_72,
    ];
    const C: [f64; 6] = [
        -0.007_784_894_002_430_293,
        -0.322_396_458_041_136_5,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        0.007_784_695_709_041_462,
        0.322_467_129_070_039_8,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    let low = 0.024_25;
    if p < low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -inverse_normal(1.0 - p)
    }
}

/// A latency profile that does not parse or makes no sense, with what
/// is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LatencyError(pub String);

/// A latency profile.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    /// `instant`, `documented`, or a custom name.
    #[serde(default = "instant_name")]
    pub name: String,
    /// Duration of task types not listed, in milliseconds.
    #[serde(default)]
    pub default_ms: u64,
    /// A distribution for task types not listed (wins over `default_ms`).
    #[serde(default)]
    pub default_task: Option<Dist>,
    /// Durations by task type (`qmcreate`, `qmstart`, ...).
    #[serde(default)]
    pub tasks: BTreeMap<String, Dist>,
    /// Latency added to requests, by PVE method name (`vm_status`,
    /// `update_vm`, ...; `*` for every request).
    #[serde(default)]
    pub requests: BTreeMap<String, Dist>,
    /// Emulated seconds per real second (the system clock's speed).
    #[serde(default = "one")]
    pub time_scale: f64,
    /// Seed of the draws.
    #[serde(default)]
    pub seed: u64,
    #[serde(skip)]
    draws: Arc<AtomicU64>,
}

fn instant_name() -> String {
    "instant".into()
}

fn one() -> f64 {
    1.0
}

impl Default for Latency {
    fn default() -> Self {
        Self::instant()
    }
}

impl PartialEq for Latency {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.default_ms == o.default_ms
            && self.default_task == o.default_task
            && self.tasks == o.tasks
            && self.requests == o.requests
            && self.time_scale == o.time_scale
            && self.seed == o.seed
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Latency {
    /// Tasks end at once, requests are not delayed.
    pub fn instant() -> Self {
        Self {
            name: instant_name(),
            default_ms: 0,
            default_task: None,
            tasks: BTreeMap::new(),
            requests: BTreeMap::new(),
            time_scale: 1.0,
            seed: 0,
            draws: Arc::default(),
        }
    }

    /// The timings published as load-test targets for PVE providers
    /// ("measured against a fake PVE server"): median and 95th percentile
    /// per operation.
    pub fn documented() -> Self {
        let d = |p50: f64, p95: f64| Dist::LogNormal {
            p50_ms: p50,
            p95_ms: p95,
        };
        let mut l = Self::instant();
        l.name = "documented".into();
        l.tasks = BTreeMap::from([
            ("qmcreate".to_string(), d(2300.0, 4100.0)),
            ("qmstart".to_string(), d(800.0, 1200.0)),
            ("qmshutdown".to_string(), d(650.0, 1100.0)),
            ("qmstop".to_string(), d(650.0, 1100.0)),
            ("qmconfig".to_string(), d(1800.0, 3200.0)),
            ("qmsnapshot".to_string(), d(3500.0, 6800.0)),
            ("qmclone".to_string(), d(1900.0, 3400.0)),
        ]);
        l.requests = BTreeMap::from([
            ("vm_status".to_string(), d(120.0, 200.0)),
            ("update_vm".to_string(), d(1800.0, 3200.0)),
        ]);
        l
    }

    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Option<Self> {
        match name {
            "instant" => Some(Self::instant()),
            "documented" => Some(Self::documented()),
            _ => None,
        }
    }

    /// A profile from YAML (or JSON).
    ///
    /// # Errors
    /// The parser's message, with its line.
    pub fn from_yaml(text: &str) -> Result<Self, LatencyError> {
        crate::model::scenario::nesting::check(text)
            .map_err(|e| LatencyError(format!("line {}: {e}", e.line)))?;
        let l: Self = serde_yaml::from_str(text).map_err(|e| LatencyError(e.to_string()))?;
        l.check()?;
        Ok(l)
    }

    /// Refuses nonsense: a scale that is not positive, a p95 below its p50.
    ///
    /// # Errors
    /// What is wrong.
    pub fn check(&self) -> Result<(), LatencyError> {
        if !(self.time_scale.is_finite() && self.time_scale > 0.0) {
            return Err(LatencyError(format!(
                "time_scale must be positive, got {}",
                self.time_scale
            )));
        }
        for (k, d) in self
            .tasks
            .iter()
            .chain(&self.requests)
            .chain(self.default_task.iter().map(|d| (&self.name, d)))
        {
            if let Dist::LogNormal { p50_ms, p95_ms } = d
                && (p50_ms.is_nan() || *p50_ms < 0.0 || p95_ms.is_nan() || p95_ms < p50_ms)
            {
                return Err(LatencyError(format!(
                    "{k}: need 0 <= p50_ms <= p95_ms, got {p50_ms} and {p95_ms}"
                )));
            }
        }
        Ok(())
    }

    fn draw(&self, key: &str) -> f64 {
        let n = self.draws.fetch_add(1, Ordering::Relaxed);
        let h = key
            .bytes()
            .fold(self.seed ^ 0xA5A5_5A5A, |h, b| splitmix(h ^ u64::from(b)));
        let x = splitmix(h ^ splitmix(n));
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// How long a task of `kind` runs, in emulated milliseconds: drawn
    /// from `draw` when given (a journaled request's own draw, see
    /// `model::Context::duration_draw`, so that replaying it
    /// gives the task the same duration), else from the profile's seeded
    /// stream.
    pub fn task_ms(&self, kind: &str, draw: Option<u64>) -> u64 {
        match self.tasks.get(kind).or(self.default_task.as_ref()) {
            Some(d) => match draw {
                Some(x) => d.at(((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64),
                None => d.at(self.draw(kind)),
            },
            None => self.default_ms,
        }
    }

    /// The latency of a request to the PVE method `name`, in real
    /// milliseconds (scaled by `time_scale`); 0 when none is configured.
    pub fn request_ms(&self, name: &str) -> u64 {
        match self.requests.get(name).or_else(|| self.requests.get("*")) {
            Some(d) => (d.at(self.draw(name)) as f64 / self.time_scale).round() as u64,
            None => 0,
        }
    }

    /// A profile from the JSON of `PUT /_fake/latency`: `{"profile":
    /// "documented"}` (with optional `time_scale` and `seed`) picks a
    /// built-in one; anything else is a whole profile.
    ///
    /// # Errors
    /// What is wrong with it.
    pub fn from_json(v: serde_json::Value) -> Result<Self, LatencyError> {
        if let Some(name) = v.get("profile").and_then(serde_json::Value::as_str) {
            let mut l = Self::builtin(name).ok_or_else(|| {
                LatencyError(format!("unknown profile '{name}' (instant or documented)"))
            })?;
            if let Some(extra) = v.as_object().and_then(|o| {
                o.keys()
                    .find(|k| !["profile", "time_scale", "seed"].contains(&k.as_str()))
            }) {
                return Err(LatencyError(format!(
                    "unknown field `{extra}` next to `profile`"
                )));
            }
            if let Some(t) = v.get("time_scale") {
                l.time_scale = t
                    .as_f64()
                    .ok_or_else(|| LatencyError("time_scale must be a number".into()))?;
            }
            if let Some(s) = v.get("seed") {
                l.seed = s
                    .as_u64()
                    .ok_or_else(|| LatencyError("seed must be a whole number".into()))?;
            }
            l.check()?;
            return Ok(l);
        }
        let l: Self = serde_json::from_value(v).map_err(|e| LatencyError(e.to_string()))?;
        l.check()?;
        Ok(l)
    }

    /// Sets the fixed duration of one task type.
    pub fn set_task_ms(&mut self, kind: &str, ms: u64) {
        self.tasks.insert(kind.to_string(), Dist::Fixed(ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn percentile(mut v: Vec<u64>, p: f64) -> f64 {
        v.sort_unstable();
        v[((v.len() as f64 - 1.0) * p).round() as usize] as f64
    }

    #[test]
    fn documented_profile_has_its_percentiles() {
        let l = Latency::documented();
        for (kind, p50, p95) in [
            ("qmcreate", 2300.0, 4100.0),
            ("qmstart", 800.0, 1200.0),
            ("qmclone", 1900.0, 3400.0),
        ] {
            let v: Vec<u64> = (0..20_000).map(|_| l.task_ms(kind, None)).collect();
            let (m, n) = (percentile(v.clone(), 0.5), percentile(v, 0.95));
            assert!((m - p50).abs() / p50 < 0.05, "{kind} p50 {m} vs {p50}");
            assert!((n - p95).abs() / p95 < 0.05, "{kind} p95 {n} vs {p95}");
        }
        assert_eq!(l.task_ms("vzdump", None), 0);
    }

    #[test]
    fn draws_repeat_for_a_seed() {
        let a = Latency::documented();
        let b = Latency::documented();
        let va: Vec<u64> = (0..50).map(|_| a.task_ms("qmstart", None)).collect();
        let vb: Vec<u64> = (0..50).map(|_| b.task_ms("qmstart", None)).collect();
        assert_eq!(va, vb);
        let mut c = Latency::documented();
        c.seed = 42;
        let vc: Vec<u64> = (0..50).map(|_| c.task_ms("qmstart", None)).collect();
        assert_ne!(va, vc);
    }

    #[test]
    fn yaml_profiles() {
        let l = Latency::from_yaml("name: lab\ndefault_ms: 5\ntasks: {qmstart: 800, qmcreate: {p50_ms: 10, p95_ms: 20}}\nrequests: {vm_status: 100}\ntime_scale: 10\n")
            .expect("valid");
        assert_eq!(l.task_ms("qmstart", None), 800);
        assert_eq!(l.task_ms("other", None), 5);
        assert_eq!(l.request_ms("vm_status"), 10, "100 ms at 10x");
        assert!(Latency::from_yaml("tasks: {qmstart: {p50_ms: 10, p95_ms: 5}}").is_err());
        assert!(Latency::from_yaml("time_scale: 0").is_err());
        assert!(Latency::from_yaml("colour: red").is_err());
    }

    #[test]
    fn inverse_normal_is_accurate() {
        assert!((inverse_normal(0.5)).abs() < 1e-9);
        assert!((inverse_normal(0.95) - Z95).abs() < 1e-6);
        assert!((inverse_normal(0.01) + 2.326_347_874).abs() < 1e-6);
    }
}
