//! Credentials of a request (pve-manager `HTTPServer.pm::auth_handler`):
//! the ticket of a cookie or `Authorization` header, or an API token.
//! The keys that sign and check tickets are the model's
//! ([`crate::model::access::keys`]).

use http::HeaderMap;

pub use crate::model::access::keys::Keys;

/// The credentials a request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A ticket from the `PVEAuthCookie` cookie or `Authorization` header.
    Ticket(String),
    /// `PVEAPIToken=USER@REALM!TOKENID=SECRET`.
    Token {
        /// `USER@REALM!TOKENID`.
        authid: String,
        /// The secret.
        secret: String,
    },
    /// A malformed `PVEAPIToken` header.
    BadToken,
}

/// Reads the credentials of a request as PVE does: the `PVEAuthCookie`
/// cookie first, then a ticket in `Authorization`, and only without a
/// ticket an API token in `Authorization`.
pub fn credentials(headers: &HeaderMap) -> Option<Credentials> {
    let values = |name| {
        headers
            .get_all(name)
            .into_iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .map(str::trim)
    };
    if let Some(t) = values(http::header::COOKIE).find_map(|p| p.strip_prefix("PVEAuthCookie=")) {
        return Some(Credentials::Ticket(unescape(t)));
    }
    if let Some(t) =
        values(http::header::AUTHORIZATION).find_map(|p| p.strip_prefix("PVEAuthCookie="))
    {
        return Some(Credentials::Ticket(unescape(t)));
    }
    let token = values(http::header::AUTHORIZATION).find_map(|p| p.strip_prefix("PVEAPIToken"))?;
    match token.strip_prefix(['=', ' ']) {
        Some(rest) => Some(parse_token(rest.trim_start())),
        None => Some(Credentials::BadToken),
    }
}

/// `USER@REALM!TOKENID=SECRET`, split at the last `=` as PVE does.
fn parse_token(s: &str) -> Credentials {
    let Some((authid, secret)) = s.trim().rsplit_once('=') else {
        return Credentials::BadToken;
    };
    if authid.is_empty() {
        return Credentials::BadToken;
    }
    Credentials::Token {
        authid: authid.to_string(),
        secret: secret.to_string(),
    }
}

fn unescape(s: &str) -> String {
    super::percent_decoded(s.trim()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use rstest::rstest;

    #[rstest]
    #[case("PVEAPIToken=root@pam!ci=abc-123", Some(Credentials::Token { authid: "root@pam!ci".into(), secret: "abc-123".into() }))]
    #[case("PVEAPIToken root@pam!ci=abc", Some(Credentials::Token { authid: "root@pam!ci".into(), secret: "abc".into() }))]
    #[case("PVEAPIToken=root@pam!ci abc-123", Some(Credentials::BadToken))]
    #[case("PVEAPIToken=root@pam=abc", Some(Credentials::Token { authid: "root@pam".into(), secret: "abc".into() }))]
    #[case("PVEAPIToken=root@pam!ci", Some(Credentials::BadToken))]
    #[case("PVEAuthCookie=PVE%3Aroot%40pam%3A1::x", Some(Credentials::Ticket("PVE:root@pam:1::x".into())))]
    #[case("Bearer x", None)]
    fn authorization_headers(#[case] header: &str, #[case] want: Option<Credentials>) {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_str(header).expect("header"),
        );
        assert_eq!(credentials(&h), want);
    }

    #[test]
    fn cookie_raw_or_escaped() {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::COOKIE,
            HeaderValue::from_static("lang=en; PVEAuthCookie=PVE:root@pam:1::a+b/c="),
        );
        assert_eq!(
            credentials(&h),
            Some(Credentials::Ticket("PVE:root@pam:1::a+b/c=".into()))
        );
    }
}
