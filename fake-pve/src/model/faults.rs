//! Fault injection: rules that make matching requests fail, slow down or
//! lose their connection, and matching tasks end in error, so that clients
//! can be tested against a PVE that misbehaves.
//!
//! A rule is plain JSON (`POST /_fake/faults` or a scenario's `faults:`):
//!
//! ```json
//! {"method": "GET", "path": "/nodes/pve/status", "status": 503,
//!  "message": "injected", "count": 1}
//! ```
//!
//! Matching: `method`, `path` (as under `/api2/json`; `*` matches within a
//! segment, `**` anything), `user` (a user or token id, or a user's name
//! for all its tokens) and `task_type` (for task faults). Effects: `status`
//! with `message` (PVE's envelope), `delay_ms`, `drop` (close the
//! connection without an answer) and `task_error` (the task ends with this
//! exit status). `probability` (0 to 1) and `count` (how many times at
//! most) bound a rule; the draw is deterministic for a given seed.

use serde::{Deserialize, Serialize};

/// One fault rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FaultRule {
    /// Assigned when the rule is added.
    #[serde(default)]
    pub id: u64,
    /// HTTP method to match (any when absent).
    #[serde(default)]
    pub method: Option<String>,
    /// Path pattern under `/api2/json` (any when absent).
    #[serde(default)]
    pub path: Option<String>,
    /// User or token id to match (any when absent).
    #[serde(default)]
    pub user: Option<String>,
    /// Task type to match; a rule with a task type only affects tasks.
    #[serde(default)]
    pub task_type: Option<String>,
    /// Answer with this status.
    #[serde(default)]
    pub status: Option<u16>,
    /// The message of that answer (default: `injected fault`).
    #[serde(default)]
    pub message: Option<String>,
    /// Delay the answer by this many milliseconds.
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Close the connection without answering.
    #[serde(default)]
    pub drop: bool,
    /// Make a matching task fail with this exit status.
    #[serde(default)]
    pub task_error: Option<String>,
    /// Chance to apply, 0 to 1 (default 1).
    #[serde(default)]
    pub probability: Option<f64>,
    /// Apply at most this many times (default: unlimited).
    #[serde(default)]
    pub count: Option<u64>,
    /// How often it applied so far.
    #[serde(default)]
    pub hits: u64,
}

/// What a request fault does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFault {
    /// The rule that fired.
    pub rule: u64,
    /// Wait this long first.
    pub delay_ms: u64,
    /// Then answer with this status and message, if any.
    pub status: Option<(u16, String)>,
    /// Or close the connection.
    pub drop: bool,
}

/// The rules in force, with a deterministic random source.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Faults {
    /// The rules, in the order they were added.
    pub(in crate::model) rules: Vec<FaultRule>,
    next_id: u64,
    rng: u64,
}

impl Default for Faults {
    fn default() -> Self {
        Self::new(0x5eed_f00d)
    }
}

/// Whether a `*`/`**` pattern matches a path.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let norm = |p: &str| {
        p.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let pat = norm(pattern);
    let segs = norm(path);
    fn go(p: &[String], s: &[String]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((first, rest)) if first == "**" => (0..=s.len()).any(|i| go(rest, &s[i..])),
            Some((first, rest)) => s
                .split_first()
                .is_some_and(|(seg, srest)| seg_matches(first, seg) && go(rest, srest)),
        }
    }
    go(&pat, &segs)
}

fn seg_matches(pattern: &str, seg: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == seg,
        Some((pre, post)) => {
            seg.len() >= pre.len() + post.len()
                && seg.starts_with(pre)
                && seg_matches_rest(post, &seg[pre.len()..])
        }
    }
}

fn seg_matches_rest(pattern: &str, rest: &str) -> bool {
    if !pattern.contains('*') {
        return rest.ends_with(pattern);
    }
    (0..=rest.len())
        .filter(|i| rest.is_char_boundary(*i))
        .any(|i| seg_matches(pattern, &rest[i..]))
}

fn user_matches(rule: Option<&String>, who: Option<&str>) -> bool {
    match (rule, who) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(r), Some(w)) => {
            r == w || (!r.contains('!') && w.split_once('!').is_some_and(|(u, _)| u == r))
        }
    }
}

impl Faults {
    /// No rules; `seed` fixes the random draws.
    pub fn new(seed: u64) -> Self {
        Self {
            rules: Vec::new(),
            next_id: 1,
            rng: seed | 1,
        }
    }

    /// Adds a rule and returns its id.
    ///
    /// # Errors
    /// A message when the rule has no effect or a bad probability.
    pub fn add(&mut self, mut rule: FaultRule) -> Result<u64, super::Error> {
        if rule.status.is_none()
            && rule.delay_ms.is_none()
            && !rule.drop
            && rule.task_error.is_none()
        {
            return Err(super::Error::failed(
                "a fault rule needs an effect: status, delay_ms, drop or task_error",
            ));
        }
        if rule.task_error.is_some() && rule.task_type.is_none() {
            return Err(super::Error::failed("task_error needs task_type"));
        }
        if let Some(p) = rule.probability
            && !(0.0..=1.0).contains(&p)
        {
            return Err(super::Error::failed(format!(
                "probability must be between 0 and 1, got {p}"
            )));
        }
        if let Some(s) = rule.status
            && !(100..=999).contains(&s)
        {
            return Err(super::Error::failed(format!(
                "status must be an HTTP status code, got {s}"
            )));
        }
        rule.id = self.next_id;
        rule.hits = 0;
        self.next_id += 1;
        self.rules.push(rule);
        Ok(self.next_id - 1)
    }

    /// The rules in force, in the order they were added, with their hits.
    pub fn rules(&self) -> &[FaultRule] {
        &self.rules
    }

    /// Removes one rule; `false` when there is none with that id.
    pub fn remove(&mut self, id: u64) -> bool {
        let before = self.rules.len();
        self.rules.retain(|r| r.id != id);
        before != self.rules.len()
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// Sets the seed of the random draws.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = seed | 1;
    }

    fn draw(&mut self) -> f64 {
        // xorshift64*: deterministic and good enough for coin flips.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Whether a rule that matched applies this time (probability and
    /// count), counting the hit when it does.
    fn fire(&mut self, i: usize) -> bool {
        if self.rules[i].count.is_some_and(|c| self.rules[i].hits >= c) {
            return false;
        }
        if let Some(p) = self.rules[i].probability
            && self.draw() >= p
        {
            return false;
        }
        self.rules[i].hits += 1;
        true
    }

    /// The fault for a request, if a rule applies.
    pub fn on_request(
        &mut self,
        method: &str,
        path: &str,
        who: Option<&str>,
    ) -> Option<RequestFault> {
        for i in 0..self.rules.len() {
            let r = &self.rules[i];
            let matches = r.task_type.is_none()
                && r.method
                    .as_deref()
                    .is_none_or(|m| m.eq_ignore_ascii_case(method))
                && r.path.as_deref().is_none_or(|p| path_matches(p, path))
                && user_matches(r.user.as_ref(), who);
            if matches && self.fire(i) {
                let r = &self.rules[i];
                return Some(RequestFault {
                    rule: r.id,
                    delay_ms: r.delay_ms.unwrap_or(0),
                    status: r.status.map(|s| {
                        (
                            s,
                            r.message.clone().unwrap_or_else(|| "injected fault".into()),
                        )
                    }),
                    drop: r.drop,
                });
            }
        }
        None
    }

    /// The exit status a new task of `kind` started by `who` must end
    /// with, if a rule applies.
    pub fn on_task(&mut self, kind: &str, who: &str) -> Option<(u64, String)> {
        for i in 0..self.rules.len() {
            let r = &self.rules[i];
            let matches = r.task_type.as_deref() == Some(kind)
                && r.task_error.is_some()
                && user_matches(r.user.as_ref(), Some(who));
            if matches && self.fire(i) {
                let r = &self.rules[i];
                return r.task_error.clone().map(|e| (r.id, e));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("/nodes/pve/status", "/nodes/pve/status", true)]
    #[case("/nodes/*/status", "/nodes/pve2/status", true)]
    #[case("/nodes/*/status", "/nodes/pve/qemu/100/status", false)]
    #[case("/nodes/**", "/nodes/pve/qemu/100/status/current", true)]
    #[case("/nodes/pve/qemu/1*", "/nodes/pve/qemu/100", true)]
    #[case("/nodes/pve/qemu/1*", "/nodes/pve/qemu/200", false)]
    #[case("/**/current", "/nodes/pve/qemu/100/status/current", true)]
    fn patterns(#[case] pattern: &str, #[case] path: &str, #[case] ok: bool) {
        assert_eq!(path_matches(pattern, path), ok, "{pattern} {path}");
    }

    #[test]
    fn counts_users_and_tasks() {
        let mut f = Faults::default();
        let id = f
            .add(FaultRule {
                method: Some("GET".into()),
                path: Some("/version".into()),
                user: Some("ci@pve".into()),
                status: Some(503),
                count: Some(2),
                ..FaultRule::default()
            })
            .expect("valid");
        assert!(f.on_request("GET", "/version", Some("root@pam")).is_none());
        let hit = f
            .on_request("GET", "/version", Some("ci@pve!runner"))
            .expect("token of ci");
        assert_eq!(
            (hit.rule, hit.status),
            (id, Some((503, "injected fault".into())))
        );
        assert!(f.on_request("GET", "/version", Some("ci@pve")).is_some());
        assert!(
            f.on_request("GET", "/version", Some("ci@pve")).is_none(),
            "count spent"
        );
        f.add(FaultRule {
            task_type: Some("qmstart".into()),
            task_error: Some("start failed: injected".into()),
            ..FaultRule::default()
        })
        .expect("valid");
        assert_eq!(
            f.on_task("qmstart", "root@pam").map(|(_, e)| e),
            Some("start failed: injected".into())
        );
        assert!(f.on_task("qmstop", "root@pam").is_none());
        assert!(f.remove(id));
        assert!(!f.remove(id));
        assert!(f.add(FaultRule::default()).is_err());
        assert!(
            f.add(FaultRule {
                status: Some(503),
                probability: Some(2.0),
                ..FaultRule::default()
            })
            .is_err()
        );
    }

    #[test]
    fn probability_is_deterministic_for_a_seed() {
        let run = |seed| {
            let mut f = Faults::new(seed);
            f.add(FaultRule {
                status: Some(500),
                probability: Some(0.3),
                ..FaultRule::default()
            })
            .expect("valid");
            (0..1000)
                .filter(|_| f.on_request("GET", "/version", None).is_some())
                .count()
        };
        assert_eq!(run(7), run(7));
        let n = run(7);
        assert!((200..400).contains(&n), "{n} of 1000 at p=0.3");
    }
}
