//! What 9.2's WireGuard fabrics add to [`super::fabrics`], as
//! proxmox-ve-config (`sdn/fabric/section_config/protocol/wireguard.rs`)
//! and pve-network (`API2/Network/SDN/Fabrics/FabricNode.pm`,
//! `Network/SDN/WireGuard.pm`) define it: a node's role (`internal`, a
//! node of the cluster with WireGuard interfaces and their peers, or
//! `external`, a peer outside it known by its public key and endpoint),
//! the interfaces' and peers' property strings, endpoints, and the
//! private keys of the interfaces (`priv/wg-keys.cfg`), one per node and
//! interface, made when an interface first appears and kept until an
//! apply finds it gone.

use std::collections::BTreeMap;
use std::net::IpAddr;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use super::net::Cidr;
use crate::model::{Context, Error, Result};

/// A WireGuard node's role (`WireGuardNode`, tagged by `role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A node of the cluster: interfaces, peers.
    Internal,
    /// A peer outside the cluster: public key, endpoint.
    External,
}

impl Role {
    /// The role a call names (the schema has checked the value).
    ///
    /// # Errors
    /// `missing field `role`` when none is given.
    pub fn of(v: Option<&str>) -> Result<Self> {
        match v {
            Some("internal") => Ok(Role::Internal),
            Some("external") => Ok(Role::External),
            Some(other) => Err(Error::failed(format!(
                "unknown variant `{other}`, expected `internal` or `external`"
            ))),
            None => Err(Error::failed("missing field `role`")),
        }
    }
}

/// The keys and values of a property string, by key (a value without a
/// key under `default`).
fn props<'a>(s: &'a str, default: &'a str) -> BTreeMap<&'a str, &'a str> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((default, p)))
        .collect()
}

/// A value of a property string, or serde's refusal of a missing field.
fn required<'a>(kv: &BTreeMap<&str, &'a str>, k: &str) -> Result<&'a str> {
    kv.get(k)
        .copied()
        .ok_or_else(|| Error::failed(format!("missing field `{k}`")))
}

/// Whether `s` matches `^[a-zA-Z0-9][a-zA-Z0-9-]{0,max}[a-zA-Z0-9]?$`.
fn name_like(s: &str, max: usize) -> bool {
    let b = s.as_bytes();
    let Some((first, rest)) = b.split_first() else {
        return false;
    };
    let rest = match rest.split_last() {
        Some((last, mid)) if last.is_ascii_alphanumeric() => mid,
        _ => rest,
    };
    first.is_ascii_alphanumeric()
        && rest.len() <= max
        && rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

/// A WireGuard interface name (`WireGuardInterfaceName`): at most eight
/// characters, letters, digits and inner dashes.
fn iface_name(s: &str) -> Result<&str> {
    if name_like(s, 6) {
        Ok(s)
    } else {
        Err(Error::failed("value does not match the regex pattern"))
    }
}

/// A node ID (`NodeId`, a host name).
fn node_id(s: &str) -> Result<&str> {
    if name_like(s, 61) {
        Ok(s)
    } else {
        Err(Error::failed("value does not match the regex pattern"))
    }
}

/// A host name as `HostnameOrIpAddr` takes it: dot-separated labels of
/// letters, digits and inner dashes.
fn hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.starts_with(|c: char| c.is_ascii_alphanumeric())
                && l.ends_with(|c: char| c.is_ascii_alphanumeric())
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// A host without port (`HostnameOrIpAddr`): an address in its
/// canonical text, or a host name as given.
///
/// # Errors
/// `invalid hostname or IP address: '<s>'`.
pub fn host(s: &str) -> Result<String> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Ok(ip.to_string());
    }
    if hostname(s) {
        return Ok(s.to_string());
    }
    Err(Error::failed(format!(
        "invalid hostname or IP address: '{s}'"
    )))
}

/// A host and port (`ServiceEndpoint`), printed as the crate prints it
/// (an IPv6 address in brackets).
///
/// # Errors
/// The crate's `ParseError`s.
pub fn service_endpoint(s: &str) -> Result<String> {
    let (host_part, port) = s
        .rsplit_once(':')
        .ok_or_else(|| Error::failed("host and port must be separated by a colon"))?;
    if host_part.is_empty() {
        return Err(Error::failed("host part missing"));
    }
    let trimmed = host_part.trim_matches(['[', ']']);
    let h = host(trimmed).map_err(|e| e.map_message(|m| format!("invalid host: {m}")))?;
    let port: u16 = port
        .parse()
        .map_err(|e: std::num::ParseIntError| Error::failed(format!("invalid port: {e}")))?;
    if trimmed.parse::<std::net::Ipv6Addr>().is_ok() {
        Ok(format!("[{h}]:{port}"))
    } else {
        Ok(format!("{h}:{port}"))
    }
}

/// A public key (`PublicKey`): 32 bytes, base64-encoded.
///
/// # Errors
/// `base64 decode: ...`, `expected 32 bytes, got <n>`.
pub fn public_key(s: &str) -> Result<String> {
    let bytes = STANDARD
        .decode(s)
        .map_err(|e| Error::failed(format!("base64 decode: {e}")))?;
    if bytes.len() != 32 {
        return Err(Error::failed(format!(
            "expected 32 bytes, got {}",
            bytes.len()
        )));
    }
    Ok(STANDARD.encode(bytes))
}

/// A CIDR of one family as the crate prints it (the address as given).
fn cidr_of(v: &str, v4: bool) -> Result<String> {
    let c = Cidr::parse(v).filter(|c| c.is_v4() == v4).ok_or_else(|| {
        Error::failed(format!(
            "invalid {} CIDR '{v}'",
            if v4 { "IPv4" } else { "IPv6" }
        ))
    })?;
    Ok(format!("{}/{}", c.addr, c.prefix))
}

/// An entry of `allowed_ips` (`Cidr`, either family).
///
/// # Errors
/// `invalid CIDR '<v>'` (the schema's `FullRangeCIDR` refuses first).
pub fn allowed_ip(v: &str) -> Result<String> {
    let c = Cidr::parse(v).ok_or_else(|| Error::failed(format!("invalid CIDR '{v}'")))?;
    Ok(format!("{}/{}", c.addr, c.prefix))
}

/// An interface as a call gives it (`WireGuardInterfaceCreateProperties`,
/// parsed by `parse_wireguard_create_interface`): a name, the port it
/// listens on, its addresses; a `public_key` given is dropped, the key
/// being the one of the interface's private key.
#[derive(Debug, Clone, PartialEq)]
pub struct NewInterface {
    /// The interface name.
    pub name: String,
    listen_port: u16,
    ip: Option<String>,
    ip6: Option<String>,
}

impl NewInterface {
    /// Parses an interface property string.
    ///
    /// # Errors
    /// A missing name or port, a port that is not a 16-bit number, an
    /// address of the wrong family.
    pub fn parse(s: &str) -> Result<Self> {
        let kv = props(s, "name");
        let name = iface_name(required(&kv, "name")?)?.to_string();
        let port = kv.get("listen_port").ok_or_else(|| {
            Error::failed("listen_port: property is missing and it is not optional")
        })?;
        let listen_port = port.parse::<u16>().map_err(|_| {
            Error::failed(format!(
                "listen_port: invalid value '{port}', expected an integer between 0 and 65535"
            ))
        })?;
        Ok(Self {
            name,
            listen_port,
            ip: kv.get("ip").map(|v| cidr_of(v, true)).transpose()?,
            ip6: kv.get("ip6").map(|v| cidr_of(v, false)).transpose()?,
        })
    }

    /// The interface with its public key as the crate prints it
    /// (`print_wireguard_interface`): `name`, `listen_port`,
    /// `public_key`, `ip`, `ip6`.
    pub fn print(&self, public_key: &str) -> String {
        let mut out = format!(
            "name={},listen_port={},public_key={public_key}",
            self.name, self.listen_port
        );
        if let Some(ip) = &self.ip {
            out.push_str(&format!(",ip={ip}"));
        }
        if let Some(ip) = &self.ip6 {
            out.push_str(&format!(",ip6={ip}"));
        }
        out
    }
}

/// An interface as stored (printed by [`NewInterface::print`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// The interface name.
    pub name: String,
    /// The port it listens on.
    pub listen_port: String,
    /// Its IPv4 address, if any.
    pub ip: Option<String>,
    /// Its IPv6 address, if any.
    pub ip6: Option<String>,
}

impl Interface {
    /// The members of a stored interface.
    pub fn of(s: &str) -> Self {
        let kv = props(s, "name");
        let get = |k: &str| kv.get(k).map(|v| (*v).to_string());
        Self {
            name: get("name").unwrap_or_default(),
            listen_port: get("listen_port").unwrap_or_default(),
            ip: get("ip"),
            ip6: get("ip6"),
        }
    }
}

/// A peer of an internal node (`WireGuardNodePeer`, tagged by `type`),
/// as the crate prints it: `type`, `node`, for an internal peer the
/// other node's interface `node_iface`, the local interface `iface`,
/// `endpoint` (an internal peer's without port, an external peer's with
/// it), `skip_route_generation`.
///
/// # Errors
/// A missing `type`, `node`, `node_iface` or `iface`, a bad name or
/// endpoint.
pub fn peer(s: &str) -> Result<String> {
    let kv = props(s, "type");
    let kind = required(&kv, "type")?;
    let internal = match kind {
        "internal" => true,
        "external" => false,
        other => {
            return Err(Error::failed(format!(
                "unknown variant `{other}`, expected `internal` or `external`"
            )));
        }
    };
    let node = node_id(required(&kv, "node")?)?;
    let node_iface = if internal {
        Some(iface_name(required(&kv, "node_iface")?)?)
    } else {
        None
    };
    let iface = iface_name(required(&kv, "iface")?)?;
    let endpoint = kv
        .get("endpoint")
        .map(|e| {
            if internal {
                host(e)
            } else {
                service_endpoint(e)
            }
        })
        .transpose()?;
    let mut out = format!("type={kind},node={node}");
    if let Some(n) = node_iface {
        out.push_str(&format!(",node_iface={n}"));
    }
    out.push_str(&format!(",iface={iface}"));
    if let Some(e) = endpoint {
        out.push_str(&format!(",endpoint={e}"));
    }
    if let Some(v) = kv.get("skip_route_generation") {
        let on = matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on");
        out.push_str(&format!(",skip_route_generation={on}"));
    }
    Ok(out)
}

/// The members of a stored peer: whether it is internal, the node, the
/// other node's interface (internal peers), the local interface.
pub fn peer_refs(s: &str) -> (bool, String, Option<String>, String) {
    let kv = props(s, "type");
    let get = |k: &str| kv.get(k).map(|v| (*v).to_string());
    (
        kv.get("type") == Some(&"internal"),
        get("node").unwrap_or_default(),
        get("node_iface"),
        get("iface").unwrap_or_default(),
    )
}

/// The private keys of the WireGuard interfaces (`priv/wg-keys.cfg`):
/// base64 by node, then interface name. Never shown by the API.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PrivateKeys {
    keys: BTreeMap<String, BTreeMap<String, String>>,
}

/// The public key of a private key (X25519 with the base point, as
/// `x25519_dalek::PublicKey::from(&StaticSecret)` computes it; the
/// private key is clamped on the way).
fn public_of(private: &[u8]) -> String {
    use aws_lc_rs::agreement::{PrivateKey, X25519};
    let public = PrivateKey::from_private_key(&X25519, private)
        .ok()
        .and_then(|k| k.compute_public_key().ok())
        .map(|p| p.as_ref().to_vec())
        .unwrap_or_default();
    STANDARD.encode(public)
}

impl PrivateKeys {
    /// Whether no key is kept.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// `upsert`: the public key of the interface's private key, which is
    /// made (32 random bytes, `StaticSecret::random`) if there is none.
    pub fn upsert(&mut self, node: &str, iface: &str, rq: &mut Context) -> String {
        let key = self
            .keys
            .entry(node.to_string())
            .or_default()
            .entry(iface.to_string())
            .or_insert_with(|| {
                let bytes: Vec<u8> = (0..4).flat_map(|_| rq.next_u64().to_le_bytes()).collect();
                STANDARD.encode(bytes)
            });
        public_of(&STANDARD.decode(key.as_bytes()).unwrap_or_default())
    }

    /// `cleanup` after an apply: the keys of interfaces no internal node
    /// of the applied fabrics has any more go (`(node, interface)` pairs
    /// that are still there stay).
    pub fn cleanup(&mut self, keep: &[(String, String)]) {
        for (node, ifaces) in &mut self.keys {
            ifaces.retain(|i, _| keep.iter().any(|(n, k)| n == node && k == i));
        }
        self.keys.retain(|_, ifaces| !ifaces.is_empty());
    }

    /// Whether a key is kept for an interface.
    #[cfg(test)]
    pub fn has(&self, node: &str, iface: &str) -> bool {
        self.keys.get(node).is_some_and(|i| i.contains_key(iface))
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    /// proxmox-wireguard's test key: the bytes 32 to 63, whose public
    /// key its tests print.
    #[test]
    fn a_public_key_is_x25519_of_the_private_one() {
        let private: Vec<u8> = (32..64).collect();
        assert_eq!(
            public_of(&private),
            "NYBy1jZYgNGu6jKa35EhODhR7SGijjt16WXQ0s0WYlQ="
        );
    }

    #[rstest]
    #[case("10.0.0.1:51820", Ok("10.0.0.1:51820"))]
    #[case("[FD00::1]:51820", Ok("[fd00::1]:51820"))]
    #[case("wg.example.com:51820", Ok("wg.example.com:51820"))]
    #[case("10.0.0.1", Err("host and port must be separated by a colon"))]
    #[case(":51820", Err("host part missing"))]
    #[case(
        "10.0.0.1:70000",
        Err("invalid port: number too large to fit in target type")
    )]
    #[case(
        "bad_host:1",
        Err("invalid host: invalid hostname or IP address: 'bad_host'")
    )]
    fn endpoints_are_host_and_port(#[case] given: &str, #[case] want: Result<&str, &str>) {
        let got = service_endpoint(given).map_err(|e| e.to_string());
        match want {
            Ok(w) => assert_eq!(got.as_deref(), Ok(w)),
            Err(w) => assert!(got.as_ref().is_err_and(|e| e.contains(w)), "{got:?}"),
        }
    }

    #[rstest]
    #[case(
        "type=internal,node=pve2,node_iface=wg0,iface=wg1",
        Ok("type=internal,node=pve2,node_iface=wg0,iface=wg1")
    )]
    #[case(
        "iface=wg0,node=ext,type=external,endpoint=[::1]:51820,skip_route_generation=1",
        Ok("type=external,node=ext,iface=wg0,endpoint=[::1]:51820,skip_route_generation=true")
    )]
    #[case("type=internal,node=pve2,iface=wg1", Err("missing field `node_iface`"))]
    #[case("node=pve2,iface=wg1", Err("missing field `type`"))]
    #[case(
        "type=external,node=ext,iface=toolongname",
        Err("value does not match the regex pattern")
    )]
    #[case(
        "type=internal,node=pve2,node_iface=wg0,iface=wg1,endpoint=10.0.0.1:5",
        Err("invalid hostname or IP address: '10.0.0.1:5'")
    )]
    fn peers_print_in_the_crate_s_order(#[case] given: &str, #[case] want: Result<&str, &str>) {
        let got = peer(given).map_err(|e| e.to_string());
        match want {
            Ok(w) => assert_eq!(got.as_deref(), Ok(w)),
            Err(w) => assert!(got.as_ref().is_err_and(|e| e.contains(w)), "{got:?}"),
        }
    }

    #[test]
    fn a_key_is_made_once_and_cleaned_up_after_an_apply() {
        let mut keys = PrivateKeys::default();
        let mut rq = crate::model::tests::rq();
        let a = keys.upsert("pve", "wg0", &mut rq);
        assert_eq!(a.len(), 44);
        assert_eq!(keys.upsert("pve", "wg0", &mut rq), a);
        let b = keys.upsert("pve", "wg1", &mut rq);
        assert_ne!(a, b);
        keys.cleanup(&[("pve".into(), "wg1".into())]);
        assert!(!keys.has("pve", "wg0") && keys.has("pve", "wg1"));
        keys.cleanup(&[]);
        assert!(keys.is_empty());
    }

    #[rstest]
    #[case("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", Ok(()))]
    #[case("AAECAw==", Err("expected 32 bytes, got 4"))]
    #[case("not base64!", Err("base64 decode: "))]
    fn public_keys_are_32_bytes_of_base64(#[case] given: &str, #[case] want: Result<(), &str>) {
        let got = public_key(given).map_err(|e| e.to_string());
        match want {
            Ok(()) => assert_eq!(got.as_deref(), Ok(given)),
            Err(w) => assert!(got.as_ref().is_err_and(|e| e.contains(w)), "{got:?}"),
        }
    }
}
