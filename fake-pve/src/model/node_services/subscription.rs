//! `/etc/subscription` as pve-manager's `API2/Subscription.pm` reads and
//! writes it. Keys are `pve<sockets><level>-<10 hex digits>`; fake-pve
//! reaches no shop, so a well-formed key for enough sockets checks out as
//! an active subscription for a year from the day it is set.

use serde::{Deserialize, Serialize};

use super::{Error, Result};

/// Where PVE sends buyers.
pub const URL: &str = "https://www.proxmox.com/en/proxmox-virtual-environment/pricing";

/// One node's subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    key: String,
    status: String,
    checktime: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    regdate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nextduedate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    productname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// The sockets and level of a key (`parse_key`).
pub fn parse_key(key: &str) -> Option<(u32, char)> {
    let rest = key.strip_prefix("pve")?;
    let mut chars = rest.chars();
    let sockets = chars.next()?.to_digit(10)?;
    let level = chars.next()?;
    let serial = chars.as_str().strip_prefix('-')?;
    let ok = [1, 2, 4, 8].contains(&sockets)
        && "cbsp".contains(level)
        && serial.len() == 10
        && serial
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    ok.then_some((sockets, level))
}

/// The level's name in the product name.
fn level_name(level: char) -> &'static str {
    match level {
        'c' => "Community",
        'b' => "Basic",
        's' => "Standard",
        _ => "Premium",
    }
}

/// The server id of a node: 32 upper-case hex digits PVE derives from
/// its hardware addresses (here from its name).
pub fn server_id(node: &str) -> String {
    use md5::{Digest, Md5};
    hex::encode_upper(Md5::digest(format!("fake-pve-{node}").as_bytes()))
}

/// A key for `level` fit for a node of `sockets` sockets, its serial
/// derived from `node`.
pub fn key_for(node: &str, sockets: u32, level: &str) -> String {
    let n = [1, 2, 4, 8]
        .into_iter()
        .find(|n| *n >= sockets)
        .unwrap_or(8);
    let serial = &super::super::qemu::sha1_hex(node.as_bytes())[..10];
    format!("pve{n}{level}-{serial}")
}

/// `check_key`: the key's format and its sockets against the node's.
///
/// # Errors
/// `Wrong subscription key format`, `wrong number of sockets (k < n)`.
pub fn check_key(key: &str, sockets: u32) -> Result<(u32, char)> {
    let (n, level) =
        parse_key(key).ok_or_else(|| Error::failed("Wrong subscription key format"))?;
    if n < sockets {
        return Err(Error::failed(format!(
            "wrong number of sockets ({n} < {sockets})"
        )));
    }
    Ok((n, level))
}

impl Subscription {
    /// A key that checked out at `now`: active for a year.
    ///
    /// # Errors
    /// As [`check_key`].
    pub fn activate(key: &str, sockets: u32, now: i64) -> Result<Self> {
        let (n, level) = check_key(key, sockets)?;
        let ymd = super::super::qemu::ymd;
        Ok(Self {
            key: key.to_string(),
            status: "active".into(),
            checktime: now,
            regdate: Some(format!("{} 00:00:00", ymd(now))),
            nextduedate: Some(ymd(now + 365 * 86_400)),
            productname: Some(format!(
                "Proxmox VE {} Subscription {n} CPU{}/year",
                level_name(level),
                if n == 1 { "" } else { "s" }
            )),
            message: None,
        })
    }

    /// A subscription in another state (a scenario's `expired`,
    /// `suspended`, `invalid` or `new` key).
    pub fn with_status(mut self, status: &str, message: Option<String>) -> Self {
        status.clone_into(&mut self.status);
        if status == "new" {
            self.regdate = None;
            self.nextduedate = None;
            self.productname = None;
        }
        self.message = message;
        self
    }

    /// Sets the due date (`YYYY-MM-DD`).
    pub fn with_nextduedate(mut self, date: String) -> Self {
        self.nextduedate = Some(date);
        self
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// `active`, `new`, `invalid`, `expired` or `suspended`.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// The level `pvestatd` reports: the key's while the subscription is
    /// active, none otherwise.
    pub fn level(&self) -> Option<String> {
        (self.status == "active")
            .then(|| parse_key(&self.key).map(|(_, l)| l.to_string()))
            .flatten()
    }

    /// `read_etc_subscription` on a node of `sockets` sockets: an active
    /// key for fewer sockets reads as invalid.
    pub fn checked(&self, sockets: u32) -> Self {
        let mut s = self.clone();
        if s.status == "active"
            && let Err(e) = check_key(&s.key, sockets)
        {
            s.status = "invalid".into();
            s.message = Some(e.to_string());
        }
        s
    }

    /// When the key was last checked (epoch seconds).
    pub fn checktime(&self) -> i64 {
        self.checktime
    }

    /// `regdate`.
    pub fn regdate(&self) -> Option<&str> {
        self.regdate.as_deref()
    }

    /// `nextduedate`.
    pub fn nextduedate(&self) -> Option<&str> {
        self.nextduedate.as_deref()
    }

    /// `productname`.
    pub fn productname(&self) -> Option<&str> {
        self.productname.as_deref()
    }

    /// Why the key is not active, if it is not.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// `POST /nodes/{node}/subscription`: checks the key again, unless it
    /// was checked in the last day and `force` is not set.
    ///
    /// # Errors
    /// As [`check_key`].
    pub fn update(&mut self, sockets: u32, force: bool, now: i64) -> Result<()> {
        let checked = self.checked(sockets);
        if !force && checked.status == "active" && now - self.checktime < 86_400 {
            return Ok(());
        }
        check_key(&self.key, sockets)?;
        if self.status == "new" || self.status == "invalid" {
            *self = Self::activate(&self.key, sockets, now)?;
        } else {
            self.checktime = now;
        }
        Ok(())
    }
}
