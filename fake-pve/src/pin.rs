//! One request's instant and random draws, fixed while it runs.
//!
//! A request that can change the world runs alone (see
//! [`crate::persist`]) with the time it arrived and a seed of its own.
//! While it runs on this thread, [`crate::clock::Clock::now_millis`]
//! answers that time and every random draw of the model (MAC addresses,
//! UUIDs, token secrets, task durations) comes from that seed. Replaying
//! the request from the journal with the same time and seed gives the
//! same result.

use std::cell::Cell;

thread_local! {
    static NOW: Cell<Option<i64>> = const { Cell::new(None) };
    static RNG: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Runs `f` with the time fixed at `now_ms` (when given) and the random
/// draws seeded with `seed`.
pub fn run<R>(now_ms: Option<i64>, seed: u64, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<i64>, Option<u64>);
    impl Drop for Reset {
        fn drop(&mut self) {
            NOW.with(|n| n.set(self.0));
            RNG.with(|r| r.set(self.1));
        }
    }
    let _reset = Reset(NOW.with(Cell::get), RNG.with(Cell::get));
    NOW.with(|n| n.set(now_ms));
    RNG.with(|r| r.set(Some(seed)));
    f()
}

/// The fixed time of the running request, if any.
pub fn now() -> Option<i64> {
    NOW.with(Cell::get)
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The request's next draw if one runs; `None` otherwise.
pub fn seeded_u64() -> Option<u64> {
    RNG.with(|r| {
        let s = r.get()?;
        let next = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        r.set(Some(next));
        Some(splitmix(next))
    })
}

/// A random number: the request's draw, or the system's.
pub fn random_u64() -> u64 {
    seeded_u64().unwrap_or_else(rand::random)
}

/// A random version 4 UUID.
pub fn uuid_v4() -> String {
    let (a, b) = (random_u64(), random_u64());
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_le_bytes());
    bytes[8..].copy_from_slice(&b.to_le_bytes());
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_its_draws_and_the_pin_ends_with_the_call() {
        let a = run(Some(5), 42, || (now(), uuid_v4(), random_u64()));
        let b = run(Some(5), 42, || (now(), uuid_v4(), random_u64()));
        assert_eq!(a, b);
        assert_eq!(a.0, Some(5));
        assert_ne!(run(None, 43, uuid_v4), a.1);
        assert_eq!(now(), None);
        assert_eq!(seeded_u64(), None);
        let u = run(None, 1, uuid_v4);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
    }
}
