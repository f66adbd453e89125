//! The time zones a node can be set to, with their offsets and daylight
//! saving rules: a table of common zones of the tz database, not the
//! whole of it (fake-pve carries no zoneinfo files). A zone outside the
//! table is refused as PVE refuses a name without a zoneinfo file.

/// When a zone keeps daylight saving time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dst {
    /// Never.
    None,
    /// The EU's: last Sunday of March to last Sunday of October, 01:00 UTC.
    Eu,
    /// The USA's and Canada's: second Sunday of March to first Sunday of
    /// November, 02:00 local time.
    Us,
}

/// Zone name, standard offset in seconds east of UTC, DST rule.
const ZONES: &[(&str, i64, Dst)] = &[
    ("UTC", 0, Dst::None),
    ("Etc/UTC", 0, Dst::None),
    ("GMT", 0, Dst::None),
    ("Africa/Johannesburg", 7200, Dst::None),
    ("Africa/Lagos", 3600, Dst::None),
    ("Africa/Nairobi", 10_800, Dst::None),
    ("America/Chicago", -21_600, Dst::Us),
    ("America/Denver", -25_200, Dst::Us),
    ("America/Los_Angeles", -28_800, Dst::Us),
    ("America/New_York", -18_000, Dst::Us),
    ("America/Phoenix", -25_200, Dst::None),
    ("America/Sao_Paulo", -10_800, Dst::None),
    ("America/Toronto", -18_000, Dst::Us),
    ("America/Vancouver", -28_800, Dst::Us),
    ("Asia/Dubai", 14_400, Dst::None),
    ("Asia/Hong_Kong", 28_800, Dst::None),
    ("Asia/Kolkata", 19_800, Dst::None),
    ("Asia/Seoul", 32_400, Dst::None),
    ("Asia/Shanghai", 28_800, Dst::None),
    ("Asia/Singapore", 28_800, Dst::None),
    ("Asia/Tokyo", 32_400, Dst::None),
    ("Australia/Brisbane", 36_000, Dst::None),
    ("Europe/Amsterdam", 3600, Dst::Eu),
    ("Europe/Athens", 7200, Dst::Eu),
    ("Europe/Berlin", 3600, Dst::Eu),
    ("Europe/Brussels", 3600, Dst::Eu),
    ("Europe/Bucharest", 7200, Dst::Eu),
    ("Europe/Budapest", 3600, Dst::Eu),
    ("Europe/Copenhagen", 3600, Dst::Eu),
    ("Europe/Dublin", 0, Dst::Eu),
    ("Europe/Helsinki", 7200, Dst::Eu),
    ("Europe/Istanbul", 10_800, Dst::None),
    ("Europe/Kyiv", 7200, Dst::Eu),
    ("Europe/Lisbon", 0, Dst::Eu),
    ("Europe/London", 0, Dst::Eu),
    ("Europe/Madrid", 3600, Dst::Eu),
    ("Europe/Moscow", 10_800, Dst::None),
    ("Europe/Oslo", 3600, Dst::Eu),
    ("Europe/Paris", 3600, Dst::Eu),
    ("Europe/Prague", 3600, Dst::Eu),
    ("Europe/Rome", 3600, Dst::Eu),
    ("Europe/Stockholm", 3600, Dst::Eu),
    ("Europe/Vienna", 3600, Dst::Eu),
    ("Europe/Warsaw", 3600, Dst::Eu),
    ("Europe/Zurich", 3600, Dst::Eu),
];

/// Whether `zone` is a zone of the table.
pub fn find(zone: &str) -> Option<&'static str> {
    ZONES.iter().find(|(z, ..)| *z == zone).map(|(z, ..)| *z)
}

/// The epoch time of 00:00 UTC on the `nth` Sunday (1-based; 0 for the
/// last) of `month` in `year`.
fn sunday(year: i64, month: i64, nth: i64) -> i64 {
    use crate::model::storage::content::days_from_civil;
    let weekday = |days: i64| (days + 4).rem_euclid(7); // 0 = Sunday
    let day = if nth == 0 {
        let next = if month == 12 {
            days_from_civil(year + 1, 1, 1)
        } else {
            days_from_civil(year, month + 1, 1)
        };
        let last = next - 1;
        last - weekday(last)
    } else {
        let first = days_from_civil(year, month, 1);
        first + (7 - weekday(first)) % 7 + 7 * (nth - 1)
    };
    day * 86_400
}

/// Seconds east of UTC in `zone` at `now` (0 for a zone not in the table).
pub fn offset(zone: &str, now: i64) -> i64 {
    let Some(&(_, std, rule)) = ZONES.iter().find(|(z, ..)| *z == zone) else {
        return 0;
    };
    let year = crate::clock::civil(now + std).0;
    let summer = match rule {
        Dst::None => false,
        Dst::Eu => {
            let from = sunday(year, 3, 0) + 3600;
            let to = sunday(year, 10, 0) + 3600;
            (from..to).contains(&now)
        }
        Dst::Us => {
            let from = sunday(year, 3, 2) + 7200 - std;
            let to = sunday(year, 11, 1) + 7200 - (std + 3600);
            (from..to).contains(&now)
        }
    };
    if summer { std + 3600 } else { std }
}
