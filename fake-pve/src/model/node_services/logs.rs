//! A node's journal as `/nodes/{node}/syslog` (`journalctl -o short`
//! through pve-common's `dump_journal`) and `/nodes/{node}/journal`
//! (`mini-journalreader`) show it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::tz;

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    /// When, epoch seconds.
    pub t: i64,
    /// The syslog identifier with its pid (`pvedaemon[1190]`): most are
    /// the same few, not copied for each line.
    pub ident: Cow<'static, str>,
    /// The systemd unit it belongs to (the API's service id), for
    /// `--unit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Cow<'static, str>>,
    /// The message.
    pub msg: String,
}

impl LogLine {
    /// An entry.
    pub fn new(
        t: i64,
        ident: impl Into<Cow<'static, str>>,
        unit: Option<&'static str>,
        msg: impl Into<String>,
    ) -> Self {
        Self {
            t,
            ident: ident.into(),
            unit: unit.map(Cow::Borrowed),
            msg: msg.into(),
        }
    }

    /// The syslog identifier without its pid (`pvedaemon`).
    pub fn identifier(&self) -> &str {
        self.ident.split_once('[').map_or(&*self.ident, |(i, _)| i)
    }

    /// The pid in the identifier, if it names one (kernel messages do
    /// not).
    pub fn pid(&self) -> Option<u32> {
        let (_, rest) = self.ident.split_once('[')?;
        rest.strip_suffix(']')?.parse().ok()
    }

    /// The syslog priority: the kernel's boot line is a notice (5), what
    /// the services write here is informational (6).
    pub fn priority(&self) -> u8 {
        if self.identifier() == "kernel" { 5 } else { 6 }
    }

    /// Whether the entry passes the 9.2 filters of a journal query.
    fn passes(&self, q: &JournalQuery) -> bool {
        q.priority
            .is_none_or(|(lo, hi)| (lo..=hi).contains(&self.priority()))
            && q.service
                .as_deref()
                .is_none_or(|g| glob(g.as_bytes(), self.identifier().as_bytes()))
            && q.unit.as_deref().is_none_or(|u| {
                let u = u.strip_suffix(".service").unwrap_or(u);
                self.unit.as_deref() == Some(u)
            })
            && (!q.kernel || self.identifier() == "kernel")
    }

    /// The entry as `journalctl -o short` prints it, in `zone`'s time.
    pub fn render(&self, host: &str, zone: &str) -> String {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let (_, mo, d, h, mi, s, _) = crate::clock::civil(self.t + tz::offset(zone, self.t));
        let month = MONTHS[usize::try_from(mo.saturating_sub(1)).unwrap_or(0).min(11)];
        format!(
            "{month} {d:02} {h:02}:{mi:02}:{s:02} {host} {}: {}",
            self.ident, self.msg
        )
    }
}

/// Parses a `since`/`until` of the syslog call (`YYYY-MM-DD[ HH:MM[:SS]]`,
/// the node's local time) to epoch seconds.
pub fn parse_local(text: &str, zone: &str) -> Option<i64> {
    let (date, time) = text.split_once(' ').unwrap_or((text, "00:00:00"));
    let mut d = date.split('-').map(str::parse::<i64>);
    let (y, m, day) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let mut t = time.split(':').map(str::parse::<i64>);
    let (h, mi) = (t.next()?.ok()?, t.next()?.ok()?);
    let s = t.next().transpose().ok()?.unwrap_or(0);
    let local = crate::model::storage::content::days_from_civil(y, m, day) * 86_400
        + h * 3600
        + mi * 60
        + s;
    Some(local - tz::offset(zone, local))
}

/// What `GET /nodes/{node}/syslog` selects.
#[derive(Debug, Clone, Default)]
pub struct SyslogQuery {
    /// Lines to skip.
    pub start: u64,
    /// Lines to give (0 or none: 50).
    pub limit: u64,
    /// Only entries from then on (epoch seconds).
    pub since: Option<i64>,
    /// Only entries up to then (epoch seconds).
    pub until: Option<i64>,
    /// Only this service's entries.
    pub unit: Option<String>,
}

/// `dump_journal`: the lines selected, each with its number (`n`) and
/// text (`t`), and how many there are in all (with PVE's `no content`
/// line when there is none).
pub fn syslog(
    lines: &[LogLine],
    host: &str,
    zone: &str,
    q: &SyslogQuery,
) -> (u64, Vec<(u64, String)>) {
    let limit = if q.limit == 0 { 50 } else { q.limit };
    let selected = lines.iter().filter(|l| {
        q.since.is_none_or(|s| l.t >= s)
            && q.until.is_none_or(|u| l.t <= u)
            && q.unit
                .as_ref()
                .is_none_or(|u| l.unit.as_deref() == Some(u.as_str()))
    });
    let mut count = 0u64;
    let mut out = Vec::new();
    for l in selected {
        count += 1;
        if count <= q.start || out.len() as u64 >= limit {
            continue;
        }
        out.push((count, l.render(host, zone)));
    }
    if count == 0 {
        count = 1;
        out.push((1, "no content".to_string()));
    }
    (count, out)
}

/// What `GET /nodes/{node}/journal` selects.
#[derive(Debug, Clone, Default)]
pub struct JournalQuery {
    /// Only the last this many entries.
    pub lastentries: Option<u64>,
    /// Only entries from then on (epoch seconds).
    pub since: Option<i64>,
    /// Only entries up to then (epoch seconds).
    pub until: Option<i64>,
    /// Only entries after this cursor.
    pub startcursor: Option<String>,
    /// Only entries before this cursor.
    pub endcursor: Option<String>,
    /// 9.2: only priorities in this range (`3` is `0..=3`, `2..4` both
    /// ends).
    pub priority: Option<(u8, u8)>,
    /// 9.2: only identifiers matching this glob (`pve*`).
    pub service: Option<String>,
    /// 9.2: only this systemd unit's entries (`.service` implied).
    pub unit: Option<String>,
    /// 9.2: only kernel messages.
    pub kernel: bool,
}

impl JournalQuery {
    /// Parses 9.2's `priority` (`N` or `LOW..HIGH`, empty for none); the
    /// schema's pattern has checked it.
    pub fn priority_range(text: &str) -> Option<(u8, u8)> {
        let level = |t: &str| t.parse::<u8>().ok().filter(|n| *n <= 7);
        match text.split_once("..") {
            Some((a, b)) => {
                let (a, b) = (level(a)?, level(b)?);
                Some((a.min(b), a.max(b)))
            }
            None if text.is_empty() => None,
            None => Some((0, level(text)?)),
        }
    }
}

/// A shell glob (`*`, `?`, `[...]` with `!` or `^` to negate) over the
/// whole of `text`, as the journal's identifier filter matches.
fn glob(pat: &[u8], text: &[u8]) -> bool {
    match pat.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|i| glob(rest, &text[i..])),
        Some((b'?', rest)) => !text.is_empty() && glob(rest, &text[1..]),
        Some((b'[', rest)) => {
            let Some(end) = rest.iter().skip(1).position(|c| *c == b']').map(|p| p + 1) else {
                return text.first() == Some(&b'[') && glob(rest, &text[1..]);
            };
            let Some((&c, tail)) = text.split_first() else {
                return false;
            };
            let (neg, set) = match rest[..end].split_first() {
                Some((b'!' | b'^', set)) => (true, set),
                _ => (false, &rest[..end]),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= (set[i]..=set[i + 2]).contains(&c);
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != neg && glob(&rest[end + 1..], tail)
        }
        Some((c, rest)) => text.first() == Some(c) && glob(rest, &text[1..]),
    }
}

/// The cursor of the entry at `index`.
fn cursor(index: usize, t: i64) -> String {
    format!(
        "s=fa4ef00d5e7f4b0c9d2a6e1b3c5d7f90;i={index:x};t={:x}",
        t * 1_000_000
    )
}

/// The index a cursor names.
fn cursor_index(c: &str) -> Option<usize> {
    c.split(';')
        .find_map(|p| p.strip_prefix("i="))
        .and_then(|i| usize::from_str_radix(i, 16).ok())
}

/// The entries a journal query selects, each with its cursor, oldest
/// first.
pub fn pick<'a>(lines: &'a [LogLine], q: &JournalQuery) -> Vec<(String, &'a LogLine)> {
    let after = q.startcursor.as_deref().and_then(cursor_index);
    let before = q.endcursor.as_deref().and_then(cursor_index);
    let mut picked: Vec<(usize, &LogLine)> = lines
        .iter()
        .enumerate()
        .filter(|(i, l)| {
            q.since.is_none_or(|s| l.t >= s)
                && q.until.is_none_or(|u| l.t <= u)
                && after.is_none_or(|a| *i > a)
                && before.is_none_or(|b| *i < b)
                && l.passes(q)
        })
        .collect();
    if let Some(n) = q.lastentries.filter(|n| *n > 0) {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        if picked.len() > n {
            picked.drain(..picked.len() - n);
        }
    }
    picked
        .into_iter()
        .map(|(i, l)| (cursor(i, l.t), l))
        .collect()
}

/// `mini-journalreader -j`: the start cursor, the entries, the end cursor.
pub fn journal(lines: &[LogLine], host: &str, zone: &str, q: &JournalQuery) -> Vec<String> {
    let picked = pick(lines, q);
    let (Some(first), Some(last)) = (picked.first(), picked.last()) else {
        return Vec::new();
    };
    let mut out = vec![first.0.clone()];
    out.extend(picked.iter().map(|(_, l)| l.render(host, zone)));
    out.push(last.0.clone());
    out
}
