//! Time as the emulator sees it.
//!
//! Everything that depends on time (ticket lifetimes, task durations, node
//! uptime) reads this clock instead of the system one, so that tests can
//! freeze it and move it forward instead of sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// A shared, cheap-to-clone clock measured in milliseconds since the epoch.
///
/// A *system* clock follows the wall clock, at `scale` emulated seconds per
/// real second, plus whatever [`Clock::advance`] added; a *manual* clock
/// stands still until advanced.
#[derive(Clone, Debug)]
pub struct Clock {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    manual: bool,
    state: Mutex<Anchor>,
    /// Total milliseconds ever advanced, for `/_fake/clock`.
    advanced: AtomicU64,
}

/// Emulated time is `emul + (wall now - wall) * scale` (manual: `emul`).
#[derive(Debug, Clone, Copy)]
struct Anchor {
    wall: i64,
    emul: i64,
    scale: f64,
}

fn wall_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Clock {
    /// A clock that follows the system time.
    pub fn system() -> Self {
        let now = wall_millis();
        Self::new(false, now, now)
    }

    /// A frozen clock at `epoch_secs` until [`Clock::advance`] moves it.
    pub fn manual(epoch_secs: i64) -> Self {
        Self::new(true, 0, epoch_secs.saturating_mul(1000))
    }

    /// A frozen clock that starts at the current wall-clock time.
    pub fn manual_now() -> Self {
        Self::new(true, 0, wall_millis())
    }

    fn new(manual: bool, wall: i64, emul: i64) -> Self {
        Self {
            inner: Arc::new(Inner {
                manual,
                state: Mutex::new(Anchor {
                    wall,
                    emul,
                    scale: 1.0,
                }),
                advanced: AtomicU64::new(0),
            }),
        }
    }

    fn anchor(&self) -> std::sync::MutexGuard<'_, Anchor> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn at(a: &Anchor, manual: bool) -> i64 {
        if manual {
            a.emul
        } else {
            let real = wall_millis().saturating_sub(a.wall) as f64;
            a.emul.saturating_add((real * a.scale) as i64)
        }
    }

    /// Whether time only moves when advanced.
    pub fn is_manual(&self) -> bool {
        self.inner.manual
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_millis(&self) -> i64 {
        Self::at(&self.anchor(), self.inner.manual)
    }

    /// `{now, now_ms, manual, advanced_ms}`, as `/_fake/clock` shows it.
    pub fn view(&self) -> serde_json::Value {
        serde_json::json!({
            "now": self.now(),
            "now_ms": self.now_millis(),
            "manual": self.is_manual(),
            "advanced_ms": self.advanced_millis(),
        })
    }

    /// What a saved world keeps of the clock.
    pub fn saved(&self) -> SavedClock {
        let a = *self.anchor();
        SavedClock {
            now_ms: Self::at(&a, self.inner.manual),
            wall_ms: wall_millis(),
            scale: a.scale,
            advanced_ms: self.advanced_millis(),
        }
    }

    /// Takes the clock back to a saved state: a manual clock stands at the
    /// saved time; a system clock goes on from it, counting the time that
    /// passed since (at its speed).
    pub fn restore(&self, s: &SavedClock) {
        let mut a = self.anchor();
        *a = if self.inner.manual {
            Anchor {
                wall: 0,
                emul: s.now_ms,
                scale: s.scale,
            }
        } else {
            Anchor {
                wall: s.wall_ms,
                emul: s.now_ms,
                scale: s.scale,
            }
        };
        self.inner.advanced.store(s.advanced_ms, Ordering::SeqCst);
    }

    /// Whole seconds since the Unix epoch, as PVE stores times.
    pub fn now(&self) -> i64 {
        self.now_millis().div_euclid(1000)
    }

    /// Moves time forward by `millis` (negative values are ignored).
    pub fn advance_millis(&self, millis: i64) {
        if millis <= 0 {
            return;
        }
        let mut a = self.anchor();
        a.emul = a.emul.saturating_add(millis);
        self.inner
            .advanced
            .fetch_add(millis.unsigned_abs(), Ordering::SeqCst);
    }

    /// Moves time forward by whole seconds.
    pub fn advance(&self, secs: i64) {
        self.advance_millis(secs.saturating_mul(1000));
    }

    /// How far the clock has been advanced in total, in milliseconds.
    pub fn advanced_millis(&self) -> u64 {
        self.inner.advanced.load(Ordering::SeqCst)
    }

    /// Emulated seconds per real second (a manual clock ignores it).
    pub fn scale(&self) -> f64 {
        self.anchor().scale
    }

    /// Sets how fast a system clock runs, without a jump in time.
    pub fn set_scale(&self, scale: f64) {
        if !(scale.is_finite() && scale > 0.0) {
            return;
        }
        let mut a = self.anchor();
        let now = Self::at(&a, self.inner.manual);
        *a = Anchor {
            wall: wall_millis(),
            emul: now,
            scale,
        };
    }
}

/// A clock's state in a saved world.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedClock {
    /// Emulated time, epoch milliseconds.
    pub now_ms: i64,
    /// Wall-clock time it was saved at, epoch milliseconds.
    pub wall_ms: i64,
    /// Emulated seconds per real second.
    pub scale: f64,
    /// Milliseconds advanced in total.
    pub advanced_ms: u64,
}

/// A UTC calendar time: `(year, month, day, hour, minute, second,
/// weekday)` of an epoch time in seconds, the weekday counted from Sunday
/// (0). Howard Hinnant's `civil_from_days`.
pub fn civil(epoch: i64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let days = epoch.div_euclid(86_400);
    let secs = epoch.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let small = |v: i64| u32::try_from(v).unwrap_or(0);
    (
        year,
        small(month),
        small(day),
        small(secs / 3600),
        small(secs / 60 % 60),
        small(secs % 60),
        small((days + 4).rem_euclid(7)),
    )
}

/// Perl's `scalar(gmtime)` (and `scalar(localtime)` of a node in UTC):
/// `Mon Sep 21 14:13:20 2026`, the day of the month padded with a space.
pub fn ctime(epoch: i64) -> String {
    let (y, mo, d, h, mi, s, wd) = civil(epoch);
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = months[usize::try_from(mo).unwrap_or(1).saturating_sub(1) % 12];
    let w = days[usize::try_from(wd).unwrap_or(0) % 7];
    format!("{w} {m} {d:2} {h:02}:{mi:02}:{s:02} {y}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_as_perl_prints_it() {
        assert_eq!(ctime(1_790_000_000), "Mon Sep 21 14:13:20 2026");
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
    }

    #[test]
    fn manual_clock_stands_still_until_advanced() {
        let c = Clock::manual(1_700_000_000);
        assert_eq!(c.now(), 1_700_000_000);
        c.advance(7200);
        assert_eq!(c.now(), 1_700_007_200);
        c.advance(-5);
        assert_eq!(c.now(), 1_700_007_200);
        assert_eq!(c.advanced_millis(), 7_200_000);
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil(0), (1970, 1, 1, 0, 0, 0, 4));
        assert_eq!(civil(784_111_777), (1994, 11, 6, 8, 49, 37, 0));
        assert_eq!(civil(951_782_400), (2000, 2, 29, 0, 0, 0, 2));
        assert_eq!(civil(-1), (1969, 12, 31, 23, 59, 59, 3));
    }

    #[test]
    fn scale_changes_without_a_jump() {
        let c = Clock::system();
        let before = c.now_millis();
        c.set_scale(1000.0);
        let after = c.now_millis();
        assert!(
            after >= before && after - before < 60_000,
            "{before} {after}"
        );
        assert!((c.scale() - 1000.0).abs() < f64::EPSILON);
        c.set_scale(0.0);
        assert!(
            (c.scale() - 1000.0).abs() < f64::EPSILON,
            "nonsense ignored"
        );
    }

    #[test]
    fn system_clock_adds_offset() {
        let c = Clock::system();
        let before = c.now();
        c.advance(3600);
        assert!(c.now() >= before + 3600);
    }
}
