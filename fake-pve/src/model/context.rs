//! One request's instant and random draws, handed to the model.
//!
//! The request pipeline makes a [`Context`] for each request: the time
//! it runs at and a seed for every random draw it makes (MAC addresses,
//! UUIDs, token secrets, task durations). The model takes it as an
//! argument wherever it needs time or chance, so a request replayed from
//! the journal with the same time and seed gives the same world, and a
//! run whose seeds come from a fixed `--random-seed` repeats itself.
//!
//! Secrets (API token secrets) are not drawn from the seed alone, which
//! the journal keeps: they come from the seed and a key of the server's
//! ([`SecretKey`], kept only in the data directory's `keys`), so that the
//! journal does not give them away and a replay draws them again.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The key secrets are drawn with (see [`Context::secret_uuid`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SecretKey(pub [u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

impl SecretKey {
    /// HMAC-SHA256 of `parts` (each followed by a zero byte) with this key.
    pub fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut m =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes any key length");
        for p in parts {
            m.update(p);
            m.update(&[0]);
        }
        m.finalize().into_bytes().into()
    }
}

/// The instant and the random draws of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    now_ms: i64,
    seed: u64,
    draws: u64,
    journaled: bool,
    /// The key secrets are drawn with; none: from the seed alone (a
    /// journal record of an older release).
    key: Option<SecretKey>,
    /// Secrets drawn so far.
    secrets: u64,
    /// The parameters a replayed request carries in the form the journal
    /// keeps in place of a password (see `access::shadow::Given`).
    sealed: Vec<String>,
    /// datacenter.cfg's `mac_prefix`, as the request found it (PVE's OUI
    /// when none is set).
    mac_prefix: Option<String>,
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
            seed,
            draws: seed,
            journaled: false,
            key: None,
            secrets: 0,
            sealed: Vec::new(),
            mac_prefix: None,
        }
    }

    /// Generated MAC addresses start with `prefix` (datacenter.cfg's
    /// `mac_prefix`).
    pub fn set_mac_prefix(&mut self, prefix: &str) {
        self.mac_prefix = Some(prefix.to_string());
    }

    /// A MAC address as `random_ether_addr` makes it: six random bytes,
    /// the first a locally administered unicast one, then the prefix
    /// (upper-cased) over its first characters.
    pub fn random_mac(&mut self) -> String {
        let b = self.next_u64().to_le_bytes();
        // The last three bytes are the draw's first (what follows the
        // usual three-byte prefix).
        let addr = format!(
            "{:02X}:{:02X}:{:02X}:{:02X}:{:02X}:{:02X}",
            (b[3] & 0xfe) | 2,
            b[4],
            b[5],
            b[0],
            b[1],
            b[2]
        );
        let prefix = self
            .mac_prefix
            .as_deref()
            .unwrap_or(super::datacenter::PROXMOX_OUI)
            .to_uppercase();
        let rest = addr.get(prefix.len()..).unwrap_or_default();
        format!("{prefix}{rest}")
    }

    /// Secrets drawn with `key` and the seed (see [`Context::secret_uuid`]).
    #[must_use]
    pub fn keyed(mut self, key: SecretKey) -> Self {
        self.key = Some(key);
        self
    }

    /// A replayed request whose parameters `names` carry the journal's
    /// form of a password rather than the password.
    #[must_use]
    pub fn sealed(mut self, names: Vec<String>) -> Self {
        self.sealed = names;
        self
    }

    /// Whether parameter `name` carries the journal's form of a password
    /// (see `access::shadow::Given`).
    pub fn is_sealed(&self, name: &str) -> bool {
        self.sealed.iter().any(|n| n == name)
    }

    /// A secret, as a version 4 UUID: drawn with the server's key and the
    /// seed, so that a replay draws it again while the seed alone (which
    /// the journal keeps) does not give it away; without a key, from the
    /// seed's draws.
    pub fn secret_uuid(&mut self) -> String {
        let Some(mac) = self.secret_draw() else {
            return self.uuid_v4();
        };
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&mac[..16]);
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }

    /// A secret number (TFA recovery keys), drawn as
    /// [`Context::secret_uuid`] is.
    pub fn secret_u64(&mut self) -> u64 {
        match self.secret_draw() {
            Some(mac) => u64::from_le_bytes(mac[..8].try_into().unwrap_or([0; 8])),
            None => self.next_u64(),
        }
    }

    fn secret_draw(&mut self) -> Option<[u8; 32]> {
        let key = self.key?;
        self.secrets += 1;
        Some(key.mac(&[
            b"secret",
            &self.seed.to_le_bytes(),
            &self.secrets.to_le_bytes(),
        ]))
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
    fn keyed_secrets_repeat_with_the_key_and_seed_only() {
        let (k1, k2) = (SecretKey([1; 32]), SecretKey([2; 32]));
        let a = Context::new(0, 5).keyed(k1).secret_uuid();
        assert_eq!(a, Context::new(9, 5).keyed(k1).secret_uuid());
        assert_ne!(a, Context::new(0, 5).keyed(k2).secret_uuid());
        assert_ne!(a, Context::new(0, 6).keyed(k1).secret_uuid());
        // Not what the seed's own draws give.
        assert_ne!(a, Context::new(0, 5).uuid_v4());
        assert_eq!(
            Context::new(0, 5).secret_uuid(),
            Context::new(0, 5).uuid_v4()
        );
        let mut c = Context::new(0, 5).keyed(k1);
        assert_ne!(c.secret_uuid(), c.secret_uuid());
        assert_eq!(&a[14..15], "4");
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
