//! A matcher's rules as `proxmox-notify` evaluates them: `match-field`
//! (`exact:<field>=<v>[,<v>...]` or `regex:<field>=<re>`),
//! `match-severity` (`info,notice,warning,error,unknown`),
//! `match-calendar` (a daily duration such as `mon..fri 8:00-17:30`),
//! combined by `mode` (`all`, the default, or `any`) and turned round by
//! `invert-match`. A matcher without any rule always matches.

use regex::Regex;

use super::{Entry, Notification, Severity};
use crate::model::{Error, Result};

/// One `match-field` statement.
#[derive(Debug, Clone)]
enum Field {
    /// The field has one of the values.
    Exact { field: String, values: Vec<String> },
    /// The field's value matches the expression.
    Regex { field: String, re: Regex },
}

/// One `match-calendar` statement: the week days (none: every day) and
/// the time of day from `start` (inclusive) to `end` (exclusive), in
/// minutes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Daily {
    days: Vec<u32>,
    start: u32,
    end: u32,
}

/// A parsed matcher.
#[derive(Debug, Clone)]
pub struct Matcher {
    fields: Vec<Field>,
    severities: Vec<Vec<Severity>>,
    calendars: Vec<Daily>,
    any: bool,
    invert: bool,
    targets: Vec<String>,
}

/// The crate's word for a statement it cannot read.
fn invalid_field(s: &str) -> Error {
    Error::failed(format!("invalid match-field statement: {s}"))
}

/// A `SAFE_ID` (letters, digits, `-`, `_`, `.`, starting with a letter or
/// digit).
fn safe_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn parse_field(s: &str) -> Result<Field> {
    let (kind, rest) = s.split_once(':').ok_or_else(|| invalid_field(s))?;
    let (field, value) = rest.split_once('=').ok_or_else(|| invalid_field(s))?;
    if !safe_id(field) {
        return Err(invalid_field(s));
    }
    match kind {
        "exact" => Ok(Field::Exact {
            field: field.to_string(),
            values: value.split(',').map(|v| v.trim().to_string()).collect(),
        }),
        "regex" => Regex::new(value)
            .map(|re| Field::Regex {
                field: field.to_string(),
                re,
            })
            .map_err(|e| Error::failed(format!("invalid regex: {e}"))),
        _ => Err(invalid_field(s)),
    }
}

fn parse_severities(s: &str) -> Result<Vec<Severity>> {
    s.split(',')
        .map(|p| {
            Severity::parse(p.trim())
                .ok_or_else(|| Error::failed(format!("invalid severity {}", p.trim())))
        })
        .collect()
}

/// `H` or `H:MM` as minutes of the day (24:00 at most).
fn hm(s: &str) -> Option<u32> {
    let (h, m) = match s.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h, m),
        Some(_) => return None,
        None => (s, "0"),
    };
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h <= 24 && m < 60 && h * 60 + m <= 24 * 60).then_some(h * 60 + m)
}

const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn day(s: &str) -> Option<u32> {
    DAYS.iter()
        .position(|d| *d == s)
        .and_then(|i| u32::try_from(i).ok())
}

fn parse_daily(s: &str) -> Result<Daily> {
    let fail = || Error::failed(format!("could not parse schedule: {s}"));
    let s = s.trim();
    let (days_part, times) = if s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s.split_once(char::is_whitespace).ok_or_else(fail)?
    } else {
        ("", s)
    };
    let mut days = Vec::new();
    if !days_part.is_empty() {
        for range in days_part.split(',') {
            match range.split_once("..") {
                Some((a, b)) => {
                    let (a, b) = (day(a).ok_or_else(fail)?, day(b).ok_or_else(fail)?);
                    let mut d = a;
                    loop {
                        days.push(d);
                        if d == b {
                            break;
                        }
                        d = (d + 1) % 7;
                    }
                }
                None => days.push(day(range).ok_or_else(fail)?),
            }
        }
    }
    let (start, end) = times.split_once('-').ok_or_else(fail)?;
    let (start, end) = (
        hm(start.trim()).ok_or_else(fail)?,
        hm(end.trim()).ok_or_else(fail)?,
    );
    if start > end {
        return Err(fail());
    }
    Ok(Daily { days, start, end })
}

impl Daily {
    /// Whether the instant (epoch seconds, the node's time taken as UTC)
    /// falls in the duration.
    fn matches(&self, epoch: i64) -> bool {
        let days = epoch.div_euclid(86_400);
        // 1970-01-01 was a Thursday.
        let weekday = u32::try_from((days + 4).rem_euclid(7)).unwrap_or(0);
        let minute = u32::try_from(epoch.rem_euclid(86_400) / 60).unwrap_or(0);
        (self.days.is_empty() || self.days.len() >= 7 || self.days.contains(&weekday))
            && minute >= self.start
            && minute < self.end
    }
}

impl Field {
    fn matches(&self, n: &Notification) -> bool {
        match self {
            Field::Exact { field, values } => {
                n.fields.get(field).is_some_and(|v| values.contains(v))
            }
            Field::Regex { field, re } => n.fields.get(field).is_some_and(|v| re.is_match(v)),
        }
    }
}

impl Matcher {
    /// Reads a matcher's section.
    ///
    /// # Errors
    /// 500 with the crate's message for a statement it cannot read.
    pub fn from_entry(e: &Entry) -> Result<Self> {
        Ok(Self {
            fields: e
                .list("match-field")
                .iter()
                .map(|s| parse_field(s))
                .collect::<Result<_>>()?,
            severities: e
                .list("match-severity")
                .iter()
                .map(|s| parse_severities(s))
                .collect::<Result<_>>()?,
            calendars: e
                .list("match-calendar")
                .iter()
                .map(|s| parse_daily(s))
                .collect::<Result<_>>()?,
            any: e.text("mode") == Some("any"),
            invert: e.flag("invert-match"),
            targets: e.list("target"),
        })
    }

    /// Combines results by the mode, starting from its neutral element.
    fn combine(&self, results: impl Iterator<Item = bool>) -> bool {
        let mut acc = !self.any;
        for r in results {
            acc = if self.any { acc || r } else { acc && r };
        }
        acc
    }

    /// The targets to notify, if the matcher matches.
    pub fn targets_for(&self, n: &Notification) -> Option<&[String]> {
        let mut groups = Vec::new();
        if !self.severities.is_empty() {
            groups.push(self.combine(self.severities.iter().map(|s| s.contains(&n.severity))));
        }
        if !self.fields.is_empty() {
            groups.push(self.combine(self.fields.iter().map(|f| f.matches(n))));
        }
        if !self.calendars.is_empty() {
            groups.push(self.combine(self.calendars.iter().map(|c| c.matches(n.timestamp))));
        }
        let none = groups.is_empty();
        let matched = self.combine(groups.into_iter());
        (matched != self.invert || none).then_some(self.targets.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rstest::rstest;
    use serde_json::{Value, json};

    use super::*;
    use crate::model::notify::Kind;

    fn matcher(props: Value) -> Result<Matcher> {
        let props: BTreeMap<String, Value> = serde_json::from_value(props).expect("accepted");
        Matcher::from_entry(&Entry {
            kind: Kind::Matcher,
            props,
        })
    }

    fn note(severity: Severity, fields: &[(&str, &str)], ts: i64) -> Notification {
        let mut n = Notification::test("t", ts);
        n.severity = severity;
        n.fields = fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        n
    }

    // 2026-11-30 is a Monday; 10:00 UTC.
    const MONDAY_10: i64 = 1_796_032_800;

    #[rstest]
    #[case(json!({}), true)]
    #[case(json!({"match-severity": ["error"]}), true)]
    #[case(json!({"match-severity": ["info,notice"]}), false)]
    #[case(json!({"match-field": ["exact:type=vzdump"]}), true)]
    #[case(json!({"match-field": ["exact:type=replication,vzdump"]}), true)]
    #[case(json!({"match-field": ["exact:type=replication"]}), false)]
    #[case(json!({"match-field": ["regex:job-id=^backup-"]}), true)]
    #[case(json!({"match-field": ["exact:missing=x"]}), false)]
    #[case(json!({"match-field": ["exact:type=vzdump"], "match-severity": ["info"]}), false)]
    #[case(json!({"mode": "any", "match-field": ["exact:type=vzdump"], "match-severity": ["info"]}), true)]
    #[case(json!({"match-severity": ["error"], "invert-match": true}), false)]
    #[case(json!({"invert-match": true}), true)]
    #[case(json!({"match-calendar": ["mon 9-11"]}), true)]
    #[case(json!({"match-calendar": ["tue..sun 9-11"]}), false)]
    #[case(json!({"match-calendar": ["10:30-12:00"]}), false)]
    fn rules_select_or_not(#[case] props: Value, #[case] matches: bool) {
        let mut props = props;
        props["target"] = json!(["t1"]);
        let m = matcher(props).expect("accepted");
        let n = note(
            Severity::Error,
            &[("type", "vzdump"), ("job-id", "backup-1a2b")],
            MONDAY_10,
        );
        assert_eq!(m.targets_for(&n).is_some(), matches);
    }

    #[rstest]
    #[case("foo=bar")]
    #[case("fuzzy:type=x")]
    #[case("exact:type")]
    #[case("regex:type=(")]
    fn unreadable_field_statements_are_refused(#[case] s: &str) {
        assert!(matcher(json!({"match-field": [s]})).is_err());
    }

    #[rstest]
    #[case("mon..fri 8:00-17:30", vec![1, 2, 3, 4, 5], 480, 1050)]
    #[case("sat,sun 0-24", vec![6, 0], 0, 1440)]
    #[case("12-13", vec![], 720, 780)]
    fn daily_durations_parse(
        #[case] s: &str,
        #[case] days: Vec<u32>,
        #[case] start: u32,
        #[case] end: u32,
    ) {
        assert_eq!(
            parse_daily(s).expect("accepted"),
            Daily { days, start, end }
        );
    }

    #[rstest]
    #[case("13-12")]
    #[case("funday 1-2")]
    #[case("8:5-9")]
    fn bad_durations_are_refused(#[case] s: &str) {
        assert!(parse_daily(s).is_err());
    }
}
