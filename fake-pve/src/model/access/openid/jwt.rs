//! ID tokens as a relying party checks them: a JWT signed with RS256 by
//! a key of the provider's JWKS, and an RSA public key's DER form (the
//! JWKS gives `n` and `e`; the signature check takes `RSAPublicKey`).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::Value;

/// Why an ID token is refused (openidconnect's `ClaimsVerificationError`
/// and `SignatureVerificationError`, as their messages read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not three base64url parts of JSON.
    #[error("Unsupported: invalid JWT")]
    Malformed,
    /// An algorithm other than RS256.
    #[error("Signature verification failed: Unsupported signature algorithm: {0}")]
    Algorithm(String),
    /// No key of the JWKS fits.
    #[error("Signature verification failed: No matching key found")]
    NoKey,
    /// The signature does not match.
    #[error("Signature verification failed: Crypto error: bad signature")]
    BadSignature,
    /// `iss` is another issuer.
    #[error("Invalid issuer: expected `{expected}`, found `{found}`")]
    Issuer {
        /// The issuer URL of the realm.
        expected: String,
        /// The token's `iss`.
        found: String,
    },
    /// `aud` names neither the client nor an accepted audience.
    #[error("Invalid audiences: `{0}` is not a trusted audience")]
    Audience(String),
    /// `exp` is past.
    #[error("Expired: ID token expired at {0}")]
    Expired(i64),
    /// `nonce` is missing or another.
    #[error("Invalid nonce: nonce mismatch")]
    Nonce,
}

/// The parts of `SEQUENCE { INTEGER n, INTEGER e }`, without the sign
/// bytes.
pub fn rsa_public_parts(der: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    fn tlv(buf: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        if *buf.first()? != tag {
            return None;
        }
        let first = *buf.get(1)?;
        let (len, skip) = if first < 0x80 {
            (usize::from(first), 2)
        } else {
            let n = usize::from(first & 0x7f);
            let mut len = 0usize;
            for b in buf.get(2..2 + n)? {
                len = (len << 8) | usize::from(*b);
            }
            (len, 2 + n)
        };
        let body = buf.get(skip..skip + len)?;
        Some((body, &buf[skip + len..]))
    }
    let strip = |v: &[u8]| {
        let start = v.iter().position(|b| *b != 0).unwrap_or(v.len());
        v[start..].to_vec()
    };
    let (seq, _) = tlv(der, 0x30)?;
    let (n, rest) = tlv(seq, 0x02)?;
    let (e, _) = tlv(rest, 0x02)?;
    Some((strip(n), strip(e)))
}

/// `RSAPublicKey` from its modulus and exponent (unsigned, big-endian).
pub fn rsa_public_der(n: &[u8], e: &[u8]) -> Vec<u8> {
    fn len(out: &mut Vec<u8>, n: usize) {
        if n < 0x80 {
            out.push(u8::try_from(n).unwrap_or(0));
        } else {
            let bytes: Vec<u8> = n
                .to_be_bytes()
                .into_iter()
                .skip_while(|b| *b == 0)
                .collect();
            out.push(0x80 | u8::try_from(bytes.len()).unwrap_or(0));
            out.extend(bytes);
        }
    }
    fn int(v: &[u8]) -> Vec<u8> {
        let mut body = Vec::with_capacity(v.len() + 1);
        if v.first().is_none_or(|b| *b & 0x80 != 0) {
            body.push(0);
        }
        body.extend_from_slice(v);
        let mut out = vec![0x02];
        len(&mut out, body.len());
        out.extend(body);
        out
    }
    let mut body = int(n);
    body.extend(int(e));
    let mut out = vec![0x30];
    len(&mut out, body.len());
    out.extend(body);
    out
}

fn part(s: &str) -> Result<Value, TokenError> {
    let bytes = B64.decode(s).map_err(|_| TokenError::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| TokenError::Malformed)
}

/// What the relying party expects of an ID token.
#[derive(Debug, Clone, Copy)]
pub struct Expect<'a> {
    /// The realm's issuer URL.
    pub issuer: &'a str,
    /// The realm's client ID.
    pub client_id: &'a str,
    /// The realm's other accepted audiences.
    pub audiences: &'a [String],
    /// The nonce of the login.
    pub nonce: &'a str,
    /// The time of the check.
    pub now: i64,
}

/// Checks an ID token against the JWKS and what the login expects, and
/// answers its claims.
///
/// # Errors
/// Why the token is refused.
pub fn verify(token: &str, jwks: &Value, want: Expect<'_>) -> Result<Value, TokenError> {
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    let header = part(h)?;
    let claims = part(p)?;
    let sig = B64.decode(s).map_err(|_| TokenError::Malformed)?;
    let alg = header["alg"].as_str().unwrap_or_default();
    if alg != "RS256" {
        return Err(TokenError::Algorithm(alg.to_string()));
    }
    let kid = header["kid"].as_str();
    let key = jwks["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|k| k["kty"] == "RSA")
        .find(|k| kid.is_none() || k["kid"].as_str() == kid)
        .ok_or(TokenError::NoKey)?;
    let b = |name: &str| {
        key[name]
            .as_str()
            .and_then(|v| B64.decode(v).ok())
            .ok_or(TokenError::NoKey)
    };
    let der = rsa_public_der(&b("n")?, &b("e")?);
    let input = format!("{h}.{p}");
    webpki_rsa_sha256()
        .verify_signature(&der, input.as_bytes(), &sig)
        .map_err(|_| TokenError::BadSignature)?;
    let iss = claims["iss"].as_str().unwrap_or_default();
    if iss != want.issuer {
        return Err(TokenError::Issuer {
            expected: want.issuer.to_string(),
            found: iss.to_string(),
        });
    }
    let auds: Vec<&str> = match &claims["aud"] {
        Value::String(a) => vec![a.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !auds.contains(&want.client_id) {
        return Err(TokenError::Audience(auds.join(", ")));
    }
    if let Some(other) = auds
        .iter()
        .find(|a| **a != want.client_id && !want.audiences.iter().any(|x| x == *a))
    {
        return Err(TokenError::Audience((*other).to_string()));
    }
    let exp = claims["exp"].as_i64().unwrap_or(0);
    if exp <= want.now {
        return Err(TokenError::Expired(exp));
    }
    if claims["nonce"].as_str() != Some(want.nonce) {
        return Err(TokenError::Nonce);
    }
    Ok(claims)
}

/// RSASSA-PKCS1-v1_5 with SHA-256, as the TLS stack checks it.
fn webpki_rsa_sha256() -> &'static dyn rustls::pki_types::SignatureVerificationAlgorithm {
    let algs = rustls::crypto::ring::default_provider().signature_verification_algorithms;
    algs.mapping
        .iter()
        .find(|(scheme, _)| *scheme == rustls::SignatureScheme::RSA_PKCS1_SHA256)
        .and_then(|(_, a)| a.first().copied())
        .expect("the TLS stack checks RSA signatures")
}
