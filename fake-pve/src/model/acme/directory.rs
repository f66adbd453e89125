//! The ACME directories PVE knows (`GET /cluster/acme/directories`) and
//! what fake-pve answers for a directory URL without any network: Let's
//! Encrypt's two directories are emulated (their `meta`, their URL
//! layout, the CA behind them: `crate::pki::acme_ca`); any other URL is
//! one the node cannot reach, refused with the error PVE's ACME client
//! (LWP) gives then.

use serde_json::{Value, json};

/// Let's Encrypt's production directory, PVE's default.
pub const LE_V2: &str = "https://acme-v02.api.letsencrypt.org/directory";
/// Let's Encrypt's staging directory.
pub const LE_STAGING: &str = "https://acme-staging-v02.api.letsencrypt.org/directory";

/// Let's Encrypt's subscriber agreement, the `termsOfService` of both
/// directories.
pub const TOS: &str = "https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf";

/// `GET /cluster/acme/directories`: the named directories, in PVE's order.
pub fn known() -> [(&'static str, &'static str); 2] {
    [
        ("Let's Encrypt V2", LE_V2),
        ("Let's Encrypt V2 Staging", LE_STAGING),
    ]
}

/// One of the emulated directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ca {
    /// `acme-v02.api.letsencrypt.org`.
    Production,
    /// `acme-staging-v02.api.letsencrypt.org`.
    Staging,
}

impl Ca {
    /// The directory a URL names.
    ///
    /// # Errors
    /// Any URL but Let's Encrypt's two: the error of a request the node
    /// cannot make (`Error: GET to <url>` and LWP's message).
    pub fn of(url: &str) -> Result<Self, String> {
        match url.trim_end_matches('/') {
            LE_V2 => Ok(Ca::Production),
            LE_STAGING => Ok(Ca::Staging),
            _ => Err(unreachable(url)),
        }
    }

    /// Whether this is the staging directory.
    pub fn staging(self) -> bool {
        self == Ca::Staging
    }

    fn base(self) -> &'static str {
        match self {
            Ca::Production => "https://acme-v02.api.letsencrypt.org",
            Ca::Staging => "https://acme-staging-v02.api.letsencrypt.org",
        }
    }

    /// The directory's `meta` object, as Let's Encrypt answers it.
    pub fn meta(self) -> Value {
        let website = match self {
            Ca::Production => "https://letsencrypt.org",
            Ca::Staging => "https://letsencrypt.org/docs/staging-environment/",
        };
        json!({
            "caaIdentities": ["letsencrypt.org"],
            "profiles": {
                "classic": "https://letsencrypt.org/docs/profiles#classic",
                "shortlived": "https://letsencrypt.org/docs/profiles#shortlived",
                "tlsserver": "https://letsencrypt.org/docs/profiles#tlsserver"
            },
            "termsOfService": TOS,
            "website": website,
        })
    }

    /// `newAccount`.
    pub fn new_account_url(self) -> String {
        format!("{}/acme/new-acct", self.base())
    }

    /// `newOrder`.
    pub fn new_order_url(self) -> String {
        format!("{}/acme/new-order", self.base())
    }

    /// `revokeCert`.
    pub fn revoke_url(self) -> String {
        format!("{}/acme/revoke-cert", self.base())
    }

    /// An account's URL (its `location`).
    pub fn account_url(self, account: u64) -> String {
        format!("{}/acme/acct/{account}", self.base())
    }

    /// An order's URL.
    pub fn order_url(self, account: u64, order: u64) -> String {
        format!("{}/acme/order/{account}/{order}", self.base())
    }

    /// An authorization's URL.
    pub fn authz_url(self, account: u64, authz: u64) -> String {
        format!("{}/acme/authz/{account}/{authz}", self.base())
    }
}

/// An ACME error document as Let's Encrypt answers it, after PVE's
/// `Error: <method> to <url>` line.
pub fn problem(method: &str, url: &str, kind: &str, detail: &str, status: u16) -> String {
    let doc = json!({ "type": format!("urn:ietf:params:acme:error:{kind}"), "detail": detail, "status": status });
    let body = serde_json::to_string_pretty(&doc).unwrap_or_default();
    format!("Error: {method} to {url}\n{body}")
}

/// The error of a directory the node cannot reach: LWP refuses plain
/// `http` (PVE's client allows `https` only); a host name does not
/// resolve (fake-pve's nodes have no network); an address refuses.
pub fn unreachable(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let lwp = if scheme != "https" {
        format!("Access to '{scheme}' URIs has been disabled")
    } else {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => {
                (h.to_string(), p.to_string())
            }
            _ => (authority.to_string(), "443".to_string()),
        };
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let why = if bare.parse::<std::net::IpAddr>().is_ok() {
            "Connection refused"
        } else {
            "Name or service not known"
        };
        format!("Can't connect to {host}:{port} ({why})")
    };
    format!("Error: GET to {url}\n{lwp}")
}

/// Why Let's Encrypt refuses to order for `domain`, if it does: a name
/// with one label or under a suffix that is no public one (`.invalid`,
/// `.local`, `.localhost`, `.test`, `.internal`, `.home.arpa`).
pub fn rejected_identifier(domain: &str) -> Option<String> {
    if !domain.contains('.') {
        return Some(format!(
            "Cannot issue for \"{domain}\": Domain name needs at least one dot"
        ));
    }
    let reserved = [
        "invalid",
        "local",
        "localhost",
        "test",
        "internal",
        "home.arpa",
    ];
    reserved
        .iter()
        .any(|s| domain.ends_with(&format!(".{s}")))
        .then(|| {
            format!(
                "Cannot issue for \"{domain}\": Domain name does not end with a valid public suffix (TLD)"
            )
        })
}
