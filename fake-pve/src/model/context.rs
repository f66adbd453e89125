//! One request's instant and random draws, handed to the model.
//!
//! The request pipeline makes a [`Context`] for each request: the time
//! it runs at and a seed for every random draw it makes (MAC addresses,
//! UUIDs, token secrets, task durations). The model takes it as an
//! argument wherever it needs time or chance, so a request replayed from
//! the journal with the same time and seed gives the same world, and a
//! run whose seeds come from a fixed `--random-seed` repeats itself.

/// The instant and the random draws of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    now_ms: i64,
    draws: u64,
    journaled: bool,
}

/// SplitMix64's output function: a well-mixed draw from a counter.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Context {
    /// A request at `now_ms` (epoch milliseconds) drawing from `seed`.
    pub fn new(now_ms: i64, seed: u64) -> Self {
        Self {
            now_ms,
            draws: seed,
            journaled: false,
        }
    }

    /// A request that is (or was) journaled: as [`Context::new`], and its
    /// tasks' durations come from its seed too, so that a replay gives
    /// them the same length.
    pub fn journaled(now_ms: i64, seed: u64) -> Self {
        Self {
            journaled: true,
            ..Self::new(now_ms, seed)
        }
    }

    /// Whether the request is journaled.
    pub fn is_journaled(&self) -> bool {
        self.journaled
    }

    /// The request's time, epoch milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// The request's time, epoch seconds.
    pub fn now(&self) -> i64 {
        self.now_ms.div_euclid(1000)
    }

    /// The next random number.
    pub fn next_u64(&mut self) -> u64 {
        self.draws = self.draws.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix(self.draws)
    }

    /// A draw for a task's duration, only when the request is journaled
    /// (otherwise the latency profile draws from its own seeded stream).
    pub fn duration_draw(&mut self) -> Option<u64> {
        self.journaled.then(|| self.next_u64())
    }

    /// A random version 4 UUID.
    pub fn uuid_v4(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..].copy_from_slice(&b.to_le_bytes());
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }
}

/// Where request seeds come from: a stream of its own, seeded once
/// (`--random-seed`), so that a run's random draws repeat when its
/// requests do.
#[derive(Debug, Default)]
pub struct Seeds {
    next: std::sync::atomic::AtomicU64,
}

impl Seeds {
    /// A stream starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            next: std::sync::atomic::AtomicU64::new(seed),
        }
    }

    /// The next request's seed.
    pub fn draw(&self) -> u64 {
        let n = self
            .next
            .fetch_add(0x9E37_79B9_7F4A_7C15, std::sync::atomic::Ordering::Relaxed);
        splitmix(n ^ 0x5EED_5EED_5EED_5EED)
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[test]
    fn a_seed_repeats_its_draws() {
        let mut a = Context::new(5_000, 42);
        let mut b = Context::new(5_000, 42);
        assert_eq!(a.uuid_v4(), b.uuid_v4());
        assert_eq!(a.next_u64(), b.next_u64());
        assert_ne!(
            Context::new(5_000, 43).uuid_v4(),
            Context::new(5_000, 42).uuid_v4()
        );
    }

    #[test]
    fn uuids_are_version_4() {
        let u = Context::new(0, 1).uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
    }

    #[rstest]
    #[case(1_790_000_000_999, 1_790_000_000)]
    #[case(0, 0)]
    #[case(-1, -1)]
    fn seconds_round_down(#[case] ms: i64, #[case] secs: i64) {
        let c = Context::new(ms, 0);
        assert_eq!(c.now_ms(), ms);
        assert_eq!(c.now(), secs);
    }

    #[test]
    fn only_journaled_requests_draw_durations() {
        assert_eq!(Context::new(0, 7).duration_draw(), None);
        let d = Context::journaled(0, 7).duration_draw();
        assert_eq!(d, Context::journaled(0, 7).duration_draw());
        assert!(d.is_some());
    }

    #[test]
    fn seeds_repeat_from_the_same_start_and_differ_from_each_other() {
        let (a, b) = (Seeds::new(9), Seeds::new(9));
        let xs: Vec<u64> = (0..4).map(|_| a.draw()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.draw()).collect();
        assert_eq!(xs, ys);
        assert!(xs.windows(2).all(|w| w[0] != w[1]));
        assert_ne!(Seeds::new(10).draw(), xs[0]);
    }
}
