//! PVE's calendar events (proxmox-time `CalendarEvent`, the format of
//! backup job and replication schedules), read in UTC:
//!
//! `[WEEKDAYS] [[YYYY-]MM-DD] [HH:MM[:SS]]`, each field a `*`, a value, a
//! list (`a,b`), a range (`a..b`) or a repetition (`start/step`,
//! `a..b/step`); weekdays `mon`..`sun` with lists and ranges; a single
//! time field means minutes (`*/15`); and the shorthands `minutely`,
//! `hourly`, `daily`, `weekly`, `monthly`, `yearly`/`annually`,
//! `quarterly`, `semiannually`.

/// One field: any value, or the values its items allow.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Any,
    Items(Vec<Item>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Value(u32),
    Range(u32, u32),
    Repeat {
        start: u32,
        end: Option<u32>,
        step: u32,
    },
}

impl Field {
    fn matches(&self, v: u32) -> bool {
        match self {
            Field::Any => true,
            Field::Items(items) => items.iter().any(|i| match i {
                Item::Value(x) => *x == v,
                Item::Range(a, b) => (*a..=*b).contains(&v),
                Item::Repeat { start, end, step } => {
                    v >= *start && end.is_none_or(|e| v <= e) && (v - start).is_multiple_of(*step)
                }
            }),
        }
    }

    fn parse(s: &str, max: u32) -> Option<Self> {
        if s == "*" {
            return Some(Field::Any);
        }
        let num = |t: &str| -> Option<u32> {
            let n: u32 = t.parse().ok()?;
            if n > max {
                return None;
            }
            Some(n)
        };
        let mut items = Vec::new();
        for part in s.split(',') {
            if let Some((range, step)) = part.split_once('/') {
                let step: u32 = step.parse().ok().filter(|s| *s > 0)?;
                let (start, end) = match range.split_once("..") {
                    Some((a, b)) => (num(a)?, Some(num(b)?)),
                    None if range == "*" => (0, None),
                    None => (num(range)?, None),
                };
                items.push(Item::Repeat { start, end, step });
            } else if let Some((a, b)) = part.split_once("..") {
                items.push(Item::Range(num(a)?, num(b)?));
            } else {
                items.push(Item::Value(num(part)?));
            }
        }
        Some(Field::Items(items))
    }
}

/// A calendar event that does not parse, displayed as the schema check
/// of `pve-calendar-event` words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid calendar event '{0}' - unable to parse calendar event")]
pub struct CalendarEventError(pub String);

/// A parsed calendar event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarEvent {
    /// Weekdays allowed, Monday = 0; empty for any.
    weekdays: Vec<u32>,
    years: Field,
    months: Field,
    days: Field,
    hours: Field,
    minutes: Field,
    seconds: Field,
}

const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

fn weekday(s: &str) -> Option<u32> {
    let s = s.to_ascii_lowercase();
    WEEKDAYS
        .iter()
        .position(|d| s.len() >= 3 && d.starts_with(&s[..3]))
        .and_then(|i| u32::try_from(i).ok())
}

impl CalendarEvent {
    /// Parses a calendar event.
    ///
    /// # Errors
    /// `invalid calendar event 'x' - unable to parse calendar event`, as
    /// the schema check of `pve-calendar-event` words it.
    pub fn parse(spec: &str) -> Result<Self, CalendarEventError> {
        Self::parse_inner(spec.trim()).ok_or_else(|| CalendarEventError(spec.to_string()))
    }

    /// The event, if `spec` follows the grammar.
    fn parse_inner(spec: &str) -> Option<Self> {
        let expanded = match spec {
            "minutely" => "*-*-* *:*:00",
            "hourly" => "*-*-* *:00:00",
            "daily" => "*-*-* 00:00:00",
            "weekly" => "mon *-*-* 00:00:00",
            "monthly" => "*-*-01 00:00:00",
            "yearly" | "annually" => "*-01-01 00:00:00",
            "quarterly" => "*-01,04,07,10-01 00:00:00",
            "semiannually" | "semi-annually" => "*-01,07-01 00:00:00",
            other => other,
        };
        if expanded.is_empty() {
            return None;
        }
        let mut ev = CalendarEvent {
            weekdays: Vec::new(),
            years: Field::Any,
            months: Field::Any,
            days: Field::Any,
            hours: Field::Any,
            minutes: Field::Any,
            seconds: Field::Items(vec![Item::Value(0)]),
        };
        let mut parts: Vec<&str> = expanded.split_whitespace().collect();
        // Weekdays come first.
        if let Some(first) = parts.first()
            && first
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
        {
            for item in first.split(',') {
                if let Some((a, b)) = item.split_once("..") {
                    let (a, b) = (weekday(a)?, weekday(b)?);
                    if a <= b {
                        ev.weekdays.extend(a..=b);
                    } else {
                        ev.weekdays.extend((a..7).chain(0..=b));
                    }
                } else {
                    ev.weekdays.push(weekday(item)?);
                }
            }
            parts.remove(0);
        }
        let mut has_date = false;
        let mut has_time = false;
        for part in parts {
            if part.contains('-') && !has_date && !has_time {
                let fields: Vec<&str> = part.split('-').collect();
                let (y, m, d) = match fields.as_slice() {
                    [y, m, d] => (Some(*y), *m, *d),
                    [m, d] => (None, *m, *d),
                    _ => return None,
                };
                if let Some(y) = y {
                    ev.years = Field::parse(y, 9999)?;
                }
                ev.months = Field::parse(m, 12)?;
                ev.days = Field::parse(d, 31)?;
                has_date = true;
            } else if !has_time {
                let fields: Vec<&str> = part.split(':').collect();
                match fields.as_slice() {
                    [m] => ev.minutes = Field::parse(m, 59)?,
                    [h, m] => {
                        ev.hours = Field::parse(h, 23)?;
                        ev.minutes = Field::parse(m, 59)?;
                    }
                    [h, m, s] => {
                        ev.hours = Field::parse(h, 23)?;
                        ev.minutes = Field::parse(m, 59)?;
                        ev.seconds = Field::parse(s, 59)?;
                    }
                    _ => return None,
                }
                has_time = true;
            } else {
                return None;
            }
        }
        if !has_time && (has_date || !ev.weekdays.is_empty()) {
            ev.hours = Field::Items(vec![Item::Value(0)]);
            ev.minutes = Field::Items(vec![Item::Value(0)]);
        }
        Some(ev)
    }

    /// The first time after `after` (epoch seconds, exclusive) the event
    /// happens, looking at most ten years ahead.
    pub fn next_after(&self, after: i64) -> Option<i64> {
        let start_day = after.div_euclid(86_400);
        for day in start_day..start_day + 3660 {
            let (y, mo, d, ..) = crate::clock::civil(day * 86_400);
            let wd = u32::try_from((day + 3).rem_euclid(7)).unwrap_or(0);
            if !(self.weekdays.is_empty() || self.weekdays.contains(&wd))
                || !self.years.matches(u32::try_from(y).unwrap_or(0))
                || !self.months.matches(mo)
                || !self.days.matches(d)
            {
                continue;
            }
            for h in (0..24).filter(|h| self.hours.matches(*h)) {
                for m in (0..60).filter(|m| self.minutes.matches(*m)) {
                    for s in (0..60).filter(|s| self.seconds.matches(*s)) {
                        let t = day * 86_400 + i64::from(h * 3600 + m * 60 + s);
                        if t > after {
                            return Some(t);
                        }
                    }
                }
            }
        }
        None
    }

    /// `GET /cluster/jobs/schedule-analyze`: the next `iterations` runs
    /// after `start`, each after the one before; fewer when the event
    /// stops happening.
    pub fn runs(&self, start: i64, iterations: usize) -> Vec<i64> {
        let mut out = Vec::with_capacity(iterations);
        let mut last = start;
        while out.len() < iterations {
            let Some(next) = self.next_after(last) else {
                break;
            };
            out.push(next);
            last = next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// 2026-09-21 (a Monday) 14:13:20 UTC.
    const T: i64 = 1_790_000_000;
    const DAY0: i64 = T - T % 86_400;

    fn at(days: i64, h: i64, m: i64) -> i64 {
        DAY0 + days * 86_400 + h * 3600 + m * 60
    }

    #[rstest]
    #[case("daily", at(1, 0, 0))]
    #[case("hourly", at(0, 15, 0))]
    #[case("minutely", at(0, 14, 14))]
    #[case("weekly", at(7, 0, 0))]
    #[case("monthly", DAY0 + 10 * 86_400)]
    #[case("sat 02:00", at(5, 2, 0))]
    #[case("mon..fri 21:30", at(0, 21, 30))]
    #[case("sat,sun 03:15", at(5, 3, 15))]
    #[case("*:0/15", at(0, 14, 15))]
    #[case("*/5", at(0, 14, 15))]
    #[case("12:05", at(1, 12, 5))]
    #[case("fri 12..13:5/20", at(4, 12, 5))]
    #[case("mon..wed 30/10", at(0, 14, 30))]
    #[case("*-10-01", DAY0 + 10 * 86_400)]
    #[case("2026-12-24 18:00", DAY0 + 94 * 86_400 + 18 * 3600)]
    #[case("sun 01:00", at(6, 1, 0))]
    fn next_events(#[case] spec: &str, #[case] want: i64) {
        let ev = CalendarEvent::parse(spec).expect("parses");
        assert_eq!(ev.next_after(T), Some(want), "{spec}");
    }

    #[rstest]
    #[case("foo 02:00")]
    #[case("25:00")]
    #[case("*:61")]
    #[case("*:0/0")]
    #[case("02:00 03:00")]
    fn bad_events(#[case] spec: &str) {
        assert!(CalendarEvent::parse(spec).is_err(), "{spec}");
    }

    #[rstest]
    #[case("hourly", 3, vec![at(0, 15, 0), at(0, 16, 0), at(0, 17, 0)])]
    #[case("sat,sun 03:15", 3, vec![at(5, 3, 15), at(6, 3, 15), at(12, 3, 15)])]
    #[case("2026-09-21 23:59", 5, vec![at(0, 23, 59)])]
    fn runs_follow_each_other(#[case] spec: &str, #[case] n: usize, #[case] want: Vec<i64>) {
        let ev = CalendarEvent::parse(spec).expect("parses");
        assert_eq!(ev.runs(T, n), want, "{spec}");
    }

    #[test]
    fn a_past_date_never_comes() {
        let ev = CalendarEvent::parse("2020-01-01").expect("parses");
        assert_eq!(ev.next_after(T), None);
    }
}
