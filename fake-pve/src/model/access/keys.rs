//! The cluster's signing keys (PVE's `authkey.key`, pve-common
//! `Ticket.pm`): tickets, CSRF tokens and the key secrets are drawn with.
//!
//! A ticket reads `PVE:<userid>:<8 hex digits of its time>::<signature>`
//! and lives two hours; the CSRF token that goes with it reads
//! `<8 hex digits>:<signature>`. Signatures are HMAC-SHA256 with keys made
//! at start, so tickets from one fake-pve process are not valid in another.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How long a ticket or CSRF token is valid, in seconds.
pub const TICKET_LIFETIME: i64 = 7200;
/// How far in the future a ticket's time may lie (clock skew), in seconds.
const MAX_SKEW: i64 = 300;

/// The signing keys of one server, and the key its secrets are drawn
/// with (derived from the ticket key: it is kept nowhere but in `keys`).
#[derive(Clone)]
pub struct Keys {
    ticket: [u8; 32],
    csrf: [u8; 32],
    secret: crate::model::context::SecretKey,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys(..)")
    }
}

impl Keys {
    fn of(ticket: [u8; 32], csrf: [u8; 32]) -> Self {
        let secret = crate::model::context::SecretKey(
            Self::mac(&ticket, "fake-pve secrets")
                .try_into()
                .unwrap_or([0; 32]),
        );
        Self {
            ticket,
            csrf,
            secret,
        }
    }

    /// Fresh keys from the operating system's random source.
    pub fn random() -> Self {
        Self::of(rand::random(), rand::random())
    }

    /// Keys that follow from `seed` (an explicit `--random-seed`: runs
    /// with the same seed sign alike, on purpose).
    pub fn from_seed(seed: u64) -> Self {
        use sha2::Digest;
        let key = |label: &str| -> [u8; 32] {
            Sha256::new()
                .chain_update(label.as_bytes())
                .chain_update(seed.to_le_bytes())
                .finalize()
                .into()
        };
        Self::of(key("fake-pve ticket key"), key("fake-pve csrf key"))
    }

    /// The key secrets are drawn with and password salts made with.
    pub fn secret(&self) -> crate::model::context::SecretKey {
        self.secret
    }

    /// The keys as text, to keep them in a data directory.
    pub fn to_text(&self) -> String {
        format!("{}\n{}\n", hex::encode(self.ticket), hex::encode(self.csrf))
    }

    /// Keys saved with [`Keys::to_text`].
    pub fn from_text(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        let mut key =
            || -> Option<[u8; 32]> { hex::decode(lines.next()?.trim()).ok()?.try_into().ok() };
        let ticket = key()?;
        Some(Self::of(ticket, key()?))
    }

    fn mac(key: &[u8], data: &str) -> Vec<u8> {
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
        m.update(data.as_bytes());
        m.finalize().into_bytes().to_vec()
    }

    /// A ticket for `userid` made at `time`.
    pub fn ticket(&self, userid: &str, time: i64) -> String {
        let plain = format!("PVE:{userid}:{time:08X}");
        let sig = STANDARD.encode(Self::mac(&self.ticket, &plain));
        format!("{plain}::{sig}")
    }

    /// A half-authenticated ticket of a login that awaits its second
    /// factor: `PVE:!tfa!<challenge, ':' escaped>:<time>::<signature>`,
    /// signed with the user id as additional data, so that it names no
    /// user and no other user can answer it.
    pub fn tfa_ticket(&self, challenge: &str, userid: &str, time: i64) -> String {
        let plain = format!("PVE:!tfa!{}:{time:08X}", challenge.replace(':', "%3A"));
        let sig = STANDARD.encode(Self::mac(&self.ticket, &format!("{plain}:{userid}")));
        format!("{plain}::{sig}")
    }

    /// Checks a ticket made by [`Keys::tfa_ticket`] for `userid` at `now`
    /// and returns its challenge.
    pub fn verify_tfa_ticket(&self, ticket: &str, userid: &str, now: i64) -> Option<String> {
        let (plain, sig) = ticket.split_once("::")?;
        let rest = plain.strip_prefix("PVE:!tfa!")?;
        let (data, time_hex) = rest.rsplit_once(':')?;
        if time_hex.len() != 8 {
            return None;
        }
        let time = i64::from_str_radix(time_hex, 16).ok()?;
        let want = STANDARD.encode(Self::mac(&self.ticket, &format!("{plain}:{userid}")));
        if !constant_eq(want.as_bytes(), sig.as_bytes()) {
            return None;
        }
        (-MAX_SKEW..=TICKET_LIFETIME)
            .contains(&(now - time))
            .then(|| data.replace("%3A", ":"))
    }

    /// Checks a ticket at `now` and returns its user and time.
    pub fn verify_ticket(&self, ticket: &str, now: i64) -> Option<(String, i64)> {
        let (userid, time) = self.signed_ticket(ticket)?;
        let age = now - time;
        (-MAX_SKEW..=TICKET_LIFETIME)
            .contains(&age)
            .then_some((userid, time))
    }

    /// The user and time of a ticket signed with this key, whatever its
    /// age. A client sends the same ticket with each request: each worker
    /// keeps the last [`SIGNED_KEPT`] tickets it found signed, with their
    /// key, and checks a ticket's signature only once.
    fn signed_ticket(&self, ticket: &str) -> Option<(String, i64)> {
        thread_local! {
            static SIGNED: std::cell::RefCell<std::collections::VecDeque<SignedTicket>> =
                const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
        }
        let kept = SIGNED.with(|s| {
            s.borrow()
                .iter()
                .find(|k| k.key == self.ticket && k.ticket == ticket)
                .map(|k| (k.userid.clone(), k.time))
        });
        if kept.is_some() {
            return kept;
        }
        let (plain, sig) = ticket.split_once("::")?;
        let rest = plain.strip_prefix("PVE:")?;
        let (userid, time_hex) = rest.rsplit_once(':')?;
        if time_hex.len() != 8 {
            return None;
        }
        let time = i64::from_str_radix(time_hex, 16).ok()?;
        let want = STANDARD.encode(Self::mac(&self.ticket, plain));
        if !constant_eq(want.as_bytes(), sig.as_bytes()) {
            return None;
        }
        SIGNED.with(|s| {
            keep(
                &mut s.borrow_mut(),
                SignedTicket {
                    key: self.ticket,
                    ticket: ticket.to_owned(),
                    userid: userid.to_owned(),
                    time,
                },
            );
        });
        Some((userid.to_string(), time))
    }

    /// A short-lived ticket (pve-access-control's VNC and tunnel tickets):
    /// `<prefix>:<8 hex digits of its time>::<signature>`, signed with
    /// `secret_data` (`<user>:<path>[:<port>]`) as additional data, so that
    /// it names neither the user nor the path it is good for.
    pub fn short_ticket(&self, prefix: &str, secret_data: &str, time: i64) -> String {
        let plain = format!("{prefix}:{time:08X}");
        let sig = STANDARD.encode(Self::mac(&self.ticket, &format!("{plain}:{secret_data}")));
        format!("{plain}::{sig}")
    }

    /// Whether `ticket` is a [`Keys::short_ticket`] of `prefix` signed for
    /// `secret_data` and of an age between -20 and 40 seconds at `now`,
    /// both excluded (`verify_rsa_ticket` with PVE's short-lived bounds).
    pub fn verify_short_ticket(
        &self,
        prefix: &str,
        ticket: &str,
        secret_data: &str,
        now: i64,
    ) -> bool {
        let Some((plain, sig)) = ticket.split_once("::") else {
            return false;
        };
        let Some(stamp) = plain.strip_prefix(prefix).and_then(|r| r.strip_prefix(':')) else {
            return false;
        };
        if stamp.len() != 8
            || !stamp
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        {
            return false;
        }
        let Ok(time) = i64::from_str_radix(stamp, 16) else {
            return false;
        };
        let want = STANDARD.encode(Self::mac(&self.ticket, &format!("{plain}:{secret_data}")));
        let age = now - time;
        constant_eq(want.as_bytes(), sig.as_bytes()) && age > -20 && age < 40
    }

    /// The signature of a SPICE proxy ticket's plain part
    /// (`pvespiceproxy:<time>:<vmid>:<node>[:<port>]`): 40 lower-case hex
    /// digits, made with the CSRF key as PVE makes it with its CSRF
    /// secret.
    pub fn spice_signature(&self, plain: &str) -> String {
        let mac = Self::mac(&self.csrf, plain);
        hex::encode(&mac[..20])
    }

    /// The CSRF prevention token for `userid` made at `time`.
    pub fn csrf(&self, userid: &str, time: i64) -> String {
        let stamp = format!("{time:08X}");
        let sig = STANDARD_NO_PAD.encode(Self::mac(&self.csrf, &format!("{stamp}:{userid}")));
        format!("{stamp}:{sig}")
    }

    /// Checks a CSRF token for `userid` at `now`.
    pub fn verify_csrf(&self, token: &str, userid: &str, now: i64) -> bool {
        let Some((stamp, sig)) = token.split_once(':') else {
            return false;
        };
        let Ok(time) = i64::from_str_radix(stamp, 16) else {
            return false;
        };
        if stamp.len() != 8 {
            return false;
        }
        let age = now - time;
        (-MAX_SKEW..=TICKET_LIFETIME).contains(&age) && self.csrf_signed(token, userid, stamp, sig)
    }

    /// Whether `token` (`stamp:sig`) is signed for `userid` with this
    /// key. As with tickets, each worker keeps the last
    /// [`SIGNED_KEPT`] tokens it found signed and checks a token's
    /// signature only once.
    fn csrf_signed(&self, token: &str, userid: &str, stamp: &str, sig: &str) -> bool {
        thread_local! {
            static SIGNED: std::cell::RefCell<std::collections::VecDeque<SignedCsrf>> =
                const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
        }
        let kept = SIGNED.with(|s| {
            s.borrow()
                .iter()
                .any(|k| k.key == self.csrf && k.token == token && k.userid == userid)
        });
        if kept {
            return true;
        }
        let want = STANDARD_NO_PAD.encode(Self::mac(&self.csrf, &format!("{stamp}:{userid}")));
        if !constant_eq(want.as_bytes(), sig.as_bytes()) {
            return false;
        }
        SIGNED.with(|s| {
            keep(
                &mut s.borrow_mut(),
                SignedCsrf {
                    key: self.csrf,
                    token: token.to_owned(),
                    userid: userid.to_owned(),
                },
            );
        });
        true
    }
}

/// A CSRF token found signed for `userid` with the key `key`.
struct SignedCsrf {
    key: [u8; 32],
    token: String,
    userid: String,
}

/// How many signed tickets each worker keeps ([`Keys::verify_ticket`]).
const SIGNED_KEPT: usize = 16;

/// Puts `signed` first among what a worker keeps, the oldest dropped
/// past [`SIGNED_KEPT`].
fn keep<T>(kept: &mut std::collections::VecDeque<T>, signed: T) {
    if kept.len() >= SIGNED_KEPT {
        kept.pop_back();
    }
    kept.push_front(signed);
}

/// A ticket found signed with the ticket key `key`.
struct SignedTicket {
    key: [u8; 32],
    ticket: String,
    userid: String,
    time: i64,
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_live_two_hours() {
        let k = Keys::random();
        let t = k.ticket("root@pam", 1_000_000);
        assert!(t.starts_with("PVE:root@pam:000F4240::"), "{t}");
        assert_eq!(
            k.verify_ticket(&t, 1_000_000),
            Some(("root@pam".into(), 1_000_000))
        );
        assert!(k.verify_ticket(&t, 1_000_000 + 7200).is_some());
        assert!(k.verify_ticket(&t, 1_000_000 + 7201).is_none());
        assert!(k.verify_ticket(&t, 1_000_000 - 301).is_none());
        assert!(Keys::random().verify_ticket(&t, 1_000_000).is_none());
        let forged = t.replace("root@pam", "root@pve");
        assert!(k.verify_ticket(&forged, 1_000_000).is_none());
    }

    #[rstest::rstest]
    #[case(0, true)]
    #[case(39, true)]
    #[case(40, false)]
    #[case(-19, true)]
    #[case(-20, false)]
    fn short_tickets_live_under_forty_seconds(#[case] age: i64, #[case] valid: bool) {
        let k = Keys::random();
        let t = k.short_ticket("PVEVNC", "root@pam:/vms/100:5900", 1_000_000);
        assert!(t.starts_with("PVEVNC:000F4240::"), "{t}");
        assert_eq!(
            k.verify_short_ticket("PVEVNC", &t, "root@pam:/vms/100:5900", 1_000_000 + age),
            valid
        );
    }

    #[rstest::rstest]
    #[case("PVEVNC", "alice@pve:/vms/100:5900")]
    #[case("PVEVNC", "root@pam:/vms/101:5900")]
    #[case("PVEVNC", "root@pam:/vms/100:5901")]
    #[case("PVETUNNEL", "root@pam:/vms/100:5900")]
    fn short_tickets_hold_for_their_user_path_and_port(#[case] prefix: &str, #[case] data: &str) {
        let k = Keys::random();
        let t = k.short_ticket("PVEVNC", "root@pam:/vms/100:5900", 1_000_000);
        assert!(!k.verify_short_ticket(prefix, &t, data, 1_000_000));
        assert!(!Keys::random().verify_short_ticket(
            "PVEVNC",
            &t,
            "root@pam:/vms/100:5900",
            1_000_000
        ));
    }

    #[test]
    fn tfa_tickets_bind_the_user_and_grant_nothing() {
        let k = Keys::random();
        let t = k.tfa_ticket(r#"{"totp":true}"#, "alice@pve", 1_000_000);
        assert!(
            t.starts_with(r#"PVE:!tfa!{"totp"%3Atrue}:000F4240::"#),
            "{t}"
        );
        assert_eq!(
            k.verify_tfa_ticket(&t, "alice@pve", 1_000_100).as_deref(),
            Some(r#"{"totp":true}"#)
        );
        assert!(k.verify_tfa_ticket(&t, "bob@pve", 1_000_100).is_none());
        assert!(k.verify_ticket(&t, 1_000_100).is_none());
        let plain = k.ticket("alice@pve", 1_000_000);
        assert!(
            k.verify_tfa_ticket(&plain, "alice@pve", 1_000_000)
                .is_none()
        );
    }

    #[test]
    fn csrf_tokens_bind_the_user() {
        let k = Keys::random();
        let c = k.csrf("root@pam", 1_000_000);
        assert!(k.verify_csrf(&c, "root@pam", 1_000_100));
        assert!(!k.verify_csrf(&c, "bob@pve", 1_000_100));
        assert!(!k.verify_csrf(&c, "root@pam", 1_000_000 + 7201));
        assert!(!k.verify_csrf("garbage", "root@pam", 1_000_000));
        // Checked again once kept: still for its user and its key only,
        // and still aged.
        assert!(k.verify_csrf(&c, "root@pam", 1_000_200));
        assert!(!k.verify_csrf(&c, "bob@pve", 1_000_200));
        assert!(!k.verify_csrf(&c, "root@pam", 1_000_000 + 7201));
        assert!(!Keys::random().verify_csrf(&c, "root@pam", 1_000_200));
    }
}
