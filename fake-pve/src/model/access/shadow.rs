//! How passwords and API token secrets are kept.
//!
//! pve-access-control keeps a pve-realm password in `priv/shadow.cfg` as a
//! SHA-256 crypt(3) hash (`$5$<salt>$<hash>`, its `encrypt_pw`), and sets
//! a PAM user's the same way (`usermod -p`). fake-pve keeps every user's
//! password (and an LDAP or AD directory's) so: a login hashes what it is
//! given with the stored hash's salt and compares. An API token's secret
//! is kept as its SHA-256 (`sha256:<hex>`): what checking a secret needs,
//! and not the secret itself, which only the answer that created the token
//! carries.
//!
//! The hashes follow Ulrich Drepper's "Unix crypt using SHA-256 and
//! SHA-512" specification (`$5$` and `$6$`, `rounds=` optional), so a hash
//! from a real `shadow.cfg` or `/etc/shadow` works too.
//!
//! A journaled request that sets or checks a password is journaled with a
//! hash in the password's place (see [`Given`]), so the journal never
//! holds a password either.

use sha2::{Digest, Sha256, Sha512};

/// The alphabet of crypt(3)'s salts and hashes.
const ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// crypt(3)'s default number of rounds.
const DEFAULT_ROUNDS: u32 = 5000;

/// The longest salt crypt(3) takes.
const MAX_SALT: usize = 16;

/// The prefix of a kept token secret.
const TOKEN_DIGEST: &str = "sha256:";

/// A hash's parts: `$<id>$[rounds=<n>$]<salt>$<hash>`.
struct Parsed<'a> {
    id: u8,
    rounds: Option<u32>,
    salt: &'a str,
}

fn parse(s: &str) -> Option<Parsed<'_>> {
    let rest = s.strip_prefix('$')?;
    let (id, rest) = rest.split_once('$')?;
    let id = match id {
        "5" => 5,
        "6" => 6,
        _ => return None,
    };
    let (rounds, rest) = match rest.strip_prefix("rounds=") {
        Some(r) => {
            let (n, rest) = r.split_once('$')?;
            (Some(n.parse::<u32>().ok()?), rest)
        }
        None => (None, rest),
    };
    let (salt, hash) = rest.split_once('$')?;
    let len = if id == 5 { 43 } else { 86 };
    let ok = salt.len() <= MAX_SALT
        && !salt.contains(['$', ':', '\n'])
        && hash.len() == len
        && hash.bytes().all(|b| ALPHABET.contains(&b));
    ok.then_some(Parsed { id, rounds, salt })
}

/// Whether `s` is a SHA-256 or SHA-512 crypt(3) hash.
pub fn is_hash(s: &str) -> bool {
    parse(s).is_some()
}

/// The SHA-256 crypt(3) hash of `password` with `salt` (at most 16
/// characters of the crypt alphabet are used), as PVE's `encrypt_pw`
/// makes it.
pub fn hash(password: &str, salt: &str) -> String {
    let salt: String = salt
        .chars()
        .filter(|c| c.is_ascii() && ALPHABET.contains(&(*c as u8)))
        .take(MAX_SALT)
        .collect();
    crypt(password, 5, None, &salt)
}

/// `password` hashed as `stored` was: with its algorithm, rounds and salt.
fn rehash(password: &str, stored: &Parsed<'_>) -> String {
    crypt(password, stored.id, stored.rounds, stored.salt)
}

fn crypt(password: &str, id: u8, rounds: Option<u32>, salt: &str) -> String {
    let n = rounds.unwrap_or(DEFAULT_ROUNDS).clamp(1000, 999_999_999);
    let (pw, s) = (password.as_bytes(), salt.as_bytes());
    let (digest, order): (Vec<u8>, &[(usize, usize, usize)]) = if id == 6 {
        (sha_crypt::<Sha512>(pw, s, n), &SHA512_ORDER)
    } else {
        (sha_crypt::<Sha256>(pw, s, n), &SHA256_ORDER)
    };
    let mut out = format!("${id}$");
    if rounds.is_some() {
        out.push_str(&format!("rounds={n}$"));
    }
    out.push_str(salt);
    out.push('$');
    let last = order.len() - 1;
    for (i, &(a, b, c)) in order.iter().enumerate() {
        let byte = |k: usize| if k == usize::MAX { 0 } else { digest[k] };
        let w = (u32::from(byte(a)) << 16) | (u32::from(byte(b)) << 8) | u32::from(byte(c));
        let chars = if i < last {
            4
        } else if id == 6 {
            2
        } else {
            3
        };
        for k in 0..chars {
            out.push(ALPHABET[((w >> (6 * k)) & 0x3f) as usize] as char);
        }
    }
    out
}

/// No byte (the last group's missing ones).
const NONE: usize = usize::MAX;

/// The order crypt(3) writes a SHA-256 digest's bytes in, three at a time.
const SHA256_ORDER: [(usize, usize, usize); 11] = [
    (0, 10, 20),
    (21, 1, 11),
    (12, 22, 2),
    (3, 13, 23),
    (24, 4, 14),
    (15, 25, 5),
    (6, 16, 26),
    (27, 7, 17),
    (18, 28, 8),
    (9, 19, 29),
    (NONE, 31, 30),
];

/// The order crypt(3) writes a SHA-512 digest's bytes in.
const SHA512_ORDER: [(usize, usize, usize); 22] = [
    (0, 21, 42),
    (22, 43, 1),
    (44, 2, 23),
    (3, 24, 45),
    (25, 46, 4),
    (47, 5, 26),
    (6, 27, 48),
    (28, 49, 7),
    (50, 8, 29),
    (9, 30, 51),
    (31, 52, 10),
    (53, 11, 32),
    (12, 33, 54),
    (34, 55, 13),
    (56, 14, 35),
    (15, 36, 57),
    (37, 58, 16),
    (59, 17, 38),
    (18, 39, 60),
    (40, 61, 19),
    (62, 20, 41),
    (NONE, NONE, 63),
];

/// The digest of the specification's rounds.
fn sha_crypt<D: Digest + Clone>(pw: &[u8], salt: &[u8], rounds: u32) -> Vec<u8> {
    let size = <D as Digest>::output_size();
    let repeated =
        |block: &[u8], len: usize| -> Vec<u8> { block.iter().copied().cycle().take(len).collect() };
    let b = {
        let mut h = D::new();
        h.update(pw);
        h.update(salt);
        h.update(pw);
        h.finalize().to_vec()
    };
    let a = {
        let mut h = D::new();
        h.update(pw);
        h.update(salt);
        h.update(repeated(&b, pw.len()));
        let mut len = pw.len();
        while len > 0 {
            if len & 1 == 1 {
                h.update(&b);
            } else {
                h.update(pw);
            }
            len >>= 1;
        }
        h.finalize().to_vec()
    };
    let p = {
        let mut h = D::new();
        for _ in 0..pw.len() {
            h.update(pw);
        }
        repeated(&h.finalize(), pw.len())
    };
    let s = {
        let mut h = D::new();
        for _ in 0..16 + usize::from(a[0]) {
            h.update(salt);
        }
        repeated(&h.finalize(), salt.len())
    };
    let mut c = a;
    for r in 0..rounds {
        let mut h = D::new();
        if r % 2 == 1 {
            h.update(&p);
        } else {
            h.update(&c);
        }
        if r % 3 != 0 {
            h.update(&s);
        }
        if r % 7 != 0 {
            h.update(&p);
        }
        if r % 2 == 1 {
            h.update(&c);
        } else {
            h.update(&p);
        }
        c = h.finalize().to_vec();
    }
    debug_assert_eq!(c.len(), size);
    c
}

/// Compares without stopping at the first difference.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Whether `password` is the one `stored` keeps: a crypt(3) hash, or, in
/// a world not yet sealed (see [`super::Access::seal`]), the password
/// itself.
pub fn verify(stored: &str, password: &str) -> bool {
    match parse(stored) {
        Some(p) => same(rehash(password, &p).as_bytes(), stored.as_bytes()),
        None => same(stored.as_bytes(), password.as_bytes()),
    }
}

/// What the journal keeps in place of a password checked against
/// `stored`: the SHA-256 of the password hashed as `stored` is (43
/// characters of the crypt alphabet), so that a replay reaches the same
/// verdict without the password. `None` when nothing is stored.
pub fn check_form(stored: Option<&str>, password: &str) -> String {
    let hashed = match stored.and_then(parse) {
        Some(p) => rehash(password, &p),
        // Nothing to match: any form fails, as the password did.
        None => return "-".repeat(43),
    };
    encode(&Sha256::digest(hashed.as_bytes()))
}

fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 1);
    for chunk in bytes.chunks(3) {
        let w = chunk
            .iter()
            .enumerate()
            .fold(0u32, |w, (i, b)| w | (u32::from(*b) << (8 * i)));
        for k in 0..=chunk.len() {
            out.push(ALPHABET[((w >> (6 * k)) & 0x3f) as usize] as char);
        }
    }
    out
}

/// A password as a request gives it: in clear, or, in a request replayed
/// from the journal, in the form the journal keeps in its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Given<'a> {
    /// As the client sent it.
    Clear(&'a str),
    /// As journaled: for a password set, its hash; for one checked, its
    /// [`check_form`].
    Journaled(&'a str),
}

impl<'a> Given<'a> {
    /// `value`, journaled or not.
    pub fn new(value: &'a str, journaled: bool) -> Self {
        if journaled {
            Self::Journaled(value)
        } else {
            Self::Clear(value)
        }
    }

    /// Whether it is the password `stored` keeps (none: no password,
    /// nothing matches).
    pub fn matches(&self, stored: Option<&str>) -> bool {
        let Some(stored) = stored else {
            return false;
        };
        match *self {
            Self::Clear(pw) => verify(stored, pw),
            Self::Journaled(form) => {
                parse(stored).is_some()
                    && same(
                        encode(&Sha256::digest(stored.as_bytes())).as_bytes(),
                        form.as_bytes(),
                    )
            }
        }
    }

    /// The hash to keep for a password set: a clear one hashed with
    /// `salt`, a journaled one as it is.
    pub fn to_hash(self, salt: &str) -> String {
        match self {
            Self::Clear(pw) => hash(pw, salt),
            Self::Journaled(h) => h.to_string(),
        }
    }
}

/// A salt for `password` of `owner` (16 characters of the crypt
/// alphabet) made with the server's key: the same for the same password
/// of the same owner, so that hashing a document's password again gives
/// the same hash, and unlike another owner's or another server's.
pub fn keyed_salt(key: &crate::model::context::SecretKey, owner: &str, password: &str) -> String {
    key.mac(&[b"salt", owner.as_bytes(), password.as_bytes()])
        .iter()
        .take(MAX_SALT)
        .map(|b| ALPHABET[usize::from(b & 0x3f)] as char)
        .collect()
}

/// What is kept of an API token's secret.
pub fn token_digest(secret: &str) -> String {
    format!(
        "{TOKEN_DIGEST}{}",
        hex::encode(Sha256::digest(secret.as_bytes()))
    )
}

/// Whether `s` is a kept token secret ([`token_digest`]).
pub fn is_token_digest(s: &str) -> bool {
    s.strip_prefix(TOKEN_DIGEST)
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// Whether `secret` is the one `kept` keeps: a digest, or, in a world not
/// yet sealed, the secret itself.
pub fn token_matches(kept: &str, secret: &str) -> bool {
    if is_token_digest(kept) {
        same(token_digest(secret).as_bytes(), kept.as_bytes())
    } else {
        same(kept.as_bytes(), secret.as_bytes())
    }
}

/// A scenario's or state document's text with the passwords and token
/// secrets it gives in clear replaced by what [`super::Access::seal`]
/// keeps of them (which builds the same world); `None` when it gives none,
/// so that the text stays as it was written. JSON stays JSON; YAML is
/// written again as YAML (without its comments).
pub fn seal_document(text: &str, key: &crate::model::context::SecretKey) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    let mut v: serde_yaml::Value = serde_yaml::from_str(text).ok()?;
    let mut changed = false;
    if let Some(access) = v.get_mut("cluster").and_then(|c| c.get_mut("access")) {
        // A state document: users by userid, realms' directories.
        if let Some(users) = access.get_mut("users") {
            changed |= seal_users(users, key);
        }
        if let Some(map) = access
            .get_mut("realms")
            .and_then(|r| r.get_mut("realms"))
            .and_then(serde_yaml::Value::as_mapping_mut)
        {
            for (id, realm) in map.iter_mut() {
                let id = id.as_str().unwrap_or_default().to_string();
                changed |= seal_directory(realm, &id, key);
            }
        }
    } else {
        // A scenario: a list of users, a list of realms.
        if let Some(users) = v.get_mut("users") {
            changed |= seal_users(users, key);
        }
        if let Some(realms) = v
            .get_mut("realms")
            .and_then(serde_yaml::Value::as_sequence_mut)
        {
            for realm in realms {
                let id = realm
                    .get("realm")
                    .and_then(serde_yaml::Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                changed |= seal_directory(realm, &id, key);
            }
        }
    }
    if !changed {
        return None;
    }
    if text.trim_start().starts_with('{') {
        serde_json::to_string_pretty(&v).ok()
    } else {
        serde_yaml::to_string(&v).ok()
    }
}

/// The items of a list, or the values of a map.
fn items(v: &mut serde_yaml::Value) -> Vec<&mut serde_yaml::Value> {
    match v {
        serde_yaml::Value::Sequence(s) => s.iter_mut().collect(),
        serde_yaml::Value::Mapping(m) => m.values_mut().collect(),
        _ => Vec::new(),
    }
}

/// Hashes the clear `password` of `entry` (owned by `owner`) in place.
fn seal_password(
    entry: &mut serde_yaml::Value,
    owner: &str,
    key: &crate::model::context::SecretKey,
) -> bool {
    let Some(m) = entry.as_mapping_mut() else {
        return false;
    };
    let mut changed = false;
    for name in ["password", "password_hash"] {
        if let Some(serde_yaml::Value::String(pw)) = m.get_mut(name)
            && !is_hash(pw)
        {
            *pw = hash(pw, &keyed_salt(key, owner, pw));
            changed = true;
        }
    }
    changed
}

fn seal_users(users: &mut serde_yaml::Value, key: &crate::model::context::SecretKey) -> bool {
    let mut changed = false;
    for user in items(users) {
        let userid = user
            .get("userid")
            .and_then(serde_yaml::Value::as_str)
            .unwrap_or_default()
            .to_string();
        changed |= seal_password(user, &userid, key);
        let Some(tokens) = user.get_mut("tokens") else {
            continue;
        };
        for token in items(tokens) {
            let Some(m) = token.as_mapping_mut() else {
                continue;
            };
            for name in ["secret", "secret_hash"] {
                if let Some(serde_yaml::Value::String(secret)) = m.get_mut(name)
                    && !is_token_digest(secret)
                {
                    *secret = token_digest(secret);
                    changed = true;
                }
            }
        }
    }
    changed
}

fn seal_directory(
    realm: &mut serde_yaml::Value,
    id: &str,
    key: &crate::model::context::SecretKey,
) -> bool {
    let Some(users) = realm
        .get_mut("directory")
        .and_then(|d| d.get_mut("users"))
        .and_then(serde_yaml::Value::as_mapping_mut)
    else {
        return false;
    };
    let mut changed = false;
    for (name, user) in users.iter_mut() {
        let owner = format!("{}@{id}", name.as_str().unwrap_or_default());
        changed |= seal_password(user, &owner, key);
    }
    changed
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    // Vectors of the specification, and `openssl passwd -5/-6 -salt`.
    #[rstest]
    #[case(
        "Hello world!",
        "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
    )]
    #[case(
        "Hello world!",
        "$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"
    )]
    #[case(
        "This is just a test",
        "$5$rounds=5000$toolongsaltstrin$Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5"
    )]
    #[case(
        "Hello world!",
        "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"
    )]
    #[case(
        "Hello world!",
        "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."
    )]
    fn hashes_are_crypts(#[case] pw: &str, #[case] stored: &str) {
        let p = parse(stored).expect("a hash");
        assert_eq!(rehash(pw, &p), stored);
        assert!(verify(stored, pw));
        assert!(!verify(stored, "Hello world"));
    }

    #[test]
    fn a_new_hash_is_pves_kind() {
        let h = hash("password", "abcdefgh");
        assert!(h.starts_with("$5$abcdefgh$"), "{h}");
        assert_eq!(h.len(), 3 + 8 + 1 + 43);
        assert!(is_hash(&h));
        assert!(verify(&h, "password"));
        assert!(!verify(&h, "passwore"));
        // Characters outside the alphabet are left out of the salt.
        assert!(hash("x", "a+b:c").starts_with("$5$abc$"));
    }

    #[rstest]
    #[case("password", false)]
    #[case("$5$salt$short", false)]
    #[case("$1$salt$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5", false)]
    #[case("$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5", true)]
    fn hashes_are_told_from_passwords(#[case] s: &str, #[case] hashed: bool) {
        assert_eq!(is_hash(s), hashed);
    }

    #[test]
    fn a_journaled_check_reaches_the_clear_ones_verdict() {
        let stored = hash("right password", "NaCl");
        for pw in ["right password", "wrong password"] {
            let form = check_form(Some(&stored), pw);
            assert_eq!(form.len(), 43);
            assert!(!form.contains(pw));
            assert_eq!(
                Given::Journaled(&form).matches(Some(&stored)),
                Given::Clear(pw).matches(Some(&stored)),
                "{pw}"
            );
        }
        assert!(Given::Clear("right password").matches(Some(&stored)));
        let none = check_form(None, "right password");
        assert!(!Given::Journaled(&none).matches(Some(&stored)));
        assert!(!Given::Clear("x").matches(None));
    }

    #[test]
    fn a_set_password_is_kept_hashed() {
        let h = Given::Clear("s3cret-pw").to_hash("salty");
        assert!(verify(&h, "s3cret-pw"));
        assert_eq!(Given::Journaled(&h).to_hash("other"), h);
    }

    #[test]
    fn token_secrets_are_kept_as_digests() {
        let d = token_digest("4d4f3b1e-0000-4000-8000-000000000000");
        assert!(is_token_digest(&d));
        assert!(!is_token_digest("4d4f3b1e-0000-4000-8000-000000000000"));
        assert!(token_matches(&d, "4d4f3b1e-0000-4000-8000-000000000000"));
        assert!(!token_matches(&d, "4d4f3b1e-0000-4000-8000-000000000001"));
        // An unsealed world keeps the secret itself.
        assert!(token_matches("abc", "abc"));
    }
}
