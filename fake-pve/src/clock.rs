//! Time as the emulator sees it.
//!
//! Everything that depends on time (ticket lifetimes, task durations, node
//! uptime) reads this clock instead of the system one, so that tests can
//! freeze it and move it forward instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A shared, cheap-to-clone clock measured in milliseconds since the epoch.
///
/// A *system* clock follows the wall clock plus an offset that
/// [`Clock::advance`] grows; a *manual* clock stands still until advanced.
#[derive(Clone, Debug)]
pub struct Clock {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    manual: bool,
    /// Manual: the current time. System: the offset added to the wall clock.
    millis: AtomicI64,
    /// Total milliseconds ever advanced, for `/_fake/clock`.
    advanced: AtomicU64,
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
        Self::new(false, 0)
    }

    /// A clock frozen at `epoch_secs` until [`Clock::advance`] moves it.
    pub fn manual(epoch_secs: i64) -> Self {
        Self::new(true, epoch_secs.saturating_mul(1000))
    }

    /// A frozen clock that starts at the current wall-clock time.
    pub fn manual_now() -> Self {
        Self::new(true, wall_millis())
    }

    fn new(manual: bool, millis: i64) -> Self {
        Self {
            inner: Arc::new(Inner {
                manual,
                millis: AtomicI64::new(millis),
                advanced: AtomicU64::new(0),
            }),
        }
    }

    /// Whether time only moves when advanced.
    pub fn is_manual(&self) -> bool {
        self.inner.manual
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_millis(&self) -> i64 {
        let v = self.inner.millis.load(Ordering::SeqCst);
        if self.inner.manual {
            v
        } else {
            wall_millis().saturating_add(v)
        }
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
        self.inner.millis.fetch_add(millis, Ordering::SeqCst);
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn system_clock_adds_offset() {
        let c = Clock::system();
        let before = c.now();
        c.advance(3600);
        assert!(c.now() >= before + 3600);
    }
}
