//! Property-string formats the schema only names (`format:
//! 'pve-qm-ipconfig'`) but describes in `typetext`
//! (`[gw=<GatewayIPv4>] [,gw6=<GatewayIPv6>] [,ip=<IPv4Format/CIDR>]`).
//!
//! PVE registers these formats in its sources; the schema carries only
//! their printed syntax. From it fake-pve derives the keys, which are
//! required, the default key, booleans (`<1|0>`), integers and plain
//! enumerations, so that unknown keys and bad values are refused as PVE
//! refuses them. Values the syntax does not pin down are accepted.

use std::collections::BTreeMap;

use super::Prop;

/// Splits at spaces outside brackets.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in text.chars() {
        match c {
            '[' | '<' | '(' | '{' => depth += 1,
            ']' | '>' | ')' | '}' => depth -= 1,
            _ => {}
        }
        if c == ' ' && depth <= 0 {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The index of the bracket closing the one at `open`.
fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '[' | '<' | '(' | '{' => depth += 1,
            ']' | '>' | ')' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first `=` outside brackets.
fn top_eq(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '[' | '<' | '(' | '{' => depth += 1,
            ']' | '>' | ')' | '}' => depth -= 1,
            '=' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

fn value_prop(value: &str) -> Prop {
    let inner = value
        .strip_prefix('<')
        .and_then(|v| v.strip_suffix('>'))
        .unwrap_or(value);
    let mut p = Prop::default();
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
            && !w.bytes().all(|c| c.is_ascii_digit() || c == b'-')
    };
    // Placeholders PVE prints for formats it registers by name.
    let named = match inner {
        "IPv4Format/CIDR" => Some("pve-ipv4-config"),
        "IPv6Format/CIDR" => Some("pve-ipv6-config"),
        "GatewayIPv4" => Some("ipv4"),
        "GatewayIPv6" => Some("ipv6"),
        _ => None,
    };
    if let Some(f) = named {
        p.kind = Some("string".into());
        p.format = Some(super::Format::Named(f.into()));
        return p;
    }
    if inner == "1|0" {
        p.kind = Some("boolean".into());
    } else if inner == "integer" || inner == "N" || inner == "\\d+" {
        p.kind = Some("integer".into());
    } else if inner.contains('|') && inner.split('|').all(word) {
        p.kind = Some("string".into());
        p.enumeration = Some(inner.split('|').map(|w| serde_json::json!(w)).collect());
    } else {
        p.kind = Some("string".into());
    }
    p
}

/// Derives a property-string format from a `typetext`; `None` when the
/// text describes no `key=value` syntax.
pub fn derive(typetext: &str) -> Option<BTreeMap<String, Prop>> {
    if !typetext.contains('=') {
        return None;
    }
    let mut keys = BTreeMap::new();
    for tok in tokens(typetext) {
        let mut t = tok.as_str();
        let mut optional = false;
        if t.starts_with('[') && closing(t, 0) == Some(t.len() - 1) {
            t = &t[1..t.len() - 1];
            optional = true;
        }
        let t = t.strip_prefix(',').unwrap_or(t);
        // `[key=]<value>`: the default key.
        if t.starts_with('[')
            && let Some(end) = closing(t, 0)
            && t[1..end].ends_with('=')
        {
            let key = &t[1..end - 1];
            let mut p = value_prop(&t[end + 1..]);
            p.optional = optional;
            p.default_key = true;
            keys.insert(key.to_string(), p);
            continue;
        }
        let eq = top_eq(t)?;
        let key = &t[..eq];
        if key.is_empty() || key.starts_with('<') {
            // `[,<model>=<macaddr>]`: an alias family the text cannot name.
            return None;
        }
        let mut p = value_prop(&t[eq + 1..]);
        p.optional = optional;
        keys.insert(key.to_string(), p);
    }
    (!keys.is_empty()).then_some(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipconfig_and_watchdog() {
        let f = derive("[gw=<GatewayIPv4>] [,gw6=<GatewayIPv6>] [,ip=<IPv4Format/CIDR>] [,ip6=<IPv6Format/CIDR>]")
            .expect("keys");
        assert_eq!(f.keys().collect::<Vec<_>>(), ["gw", "gw6", "ip", "ip6"]);
        assert!(f.values().all(|p| p.optional && !p.default_key));
        assert!(matches!(&f["ip"].format, Some(crate::Format::Named(n)) if n == "pve-ipv4-config"));
        assert!(matches!(&f["gw6"].format, Some(crate::Format::Named(n)) if n == "ipv6"));
        let w = derive("[[model=]<i6300esb|ib700>] [,action=<enum>]").expect("keys");
        assert!(w["model"].default_key && w["model"].optional);
        assert_eq!(w["model"].enumeration.as_ref().map(Vec::len), Some(2));
        assert!(w["action"].enumeration.is_none());
    }

    #[test]
    fn required_keys_booleans_and_nested_values() {
        let f =
            derive("[type=]<tdx-type> ,attestation=<1|0> [,vsock-cid=<integer>]").expect("keys");
        assert!(f["type"].default_key && !f["type"].optional);
        assert!(!f["attestation"].optional);
        assert_eq!(f["attestation"].kind.as_deref(), Some("boolean"));
        assert_eq!(f["vsock-cid"].kind.as_deref(), Some("integer"));
        let r = derive(
            "apitoken=<PVEAPIToken=user@realm!token=SECRET> ,host=<ADDRESS> [,port=<integer>]",
        )
        .expect("keys");
        assert_eq!(r.keys().collect::<Vec<_>>(), ["apitoken", "host", "port"]);
        let s = derive("[enable-new=<1|0>] [,remove-vanished=([acl];[properties];[entry])|none]")
            .expect("keys");
        assert!(s["remove-vanished"].enumeration.is_none());
        let c = derive("[[cputype=]<string>] [,phys-bits=<8-64|host>]").expect("keys");
        assert!(
            c["phys-bits"].enumeration.is_none(),
            "a range is no enumeration"
        );
        assert!(derive("<volume>").is_none());
        assert!(derive("[model=]<enum> [,<model>=<macaddr>]").is_none());
    }
}
