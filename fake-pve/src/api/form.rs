//! A form (`application/x-www-form-urlencoded` body or a query string)
//! read as pve-http-server's `decode_urlencoded` reads it: pairs split on
//! `&` and `;`, a key from the value at the first `=` and the value up to
//! the next one, `+` a space, `%XX` a byte; a key given twice is a list of
//! its values, and a key without `=` is undefined, dropping what it had
//! before (`k=` is the empty value).

use std::collections::BTreeMap;

use serde_json::Value;

/// `%XX` (either case) as its byte and `+` as a space; anything else as
/// it is.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
                out.push(hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Perl's `my ($k, $v) = split(/=/, $kv)`: assigned to two variables,
/// the split stops after three fields, so `k=a=b` has the value `a`,
/// `k=` the empty value and `k` none.
fn key_value(pair: &str) -> (&str, Option<&str>) {
    let mut fields = pair.splitn(3, '=');
    (fields.next().unwrap_or(""), fields.next())
}

/// The pairs of a form in order, each value `None` where the key has
/// none.
pub(crate) fn decode(data: &[u8]) -> BTreeMap<String, Option<Value>> {
    let mut res: BTreeMap<String, Option<Value>> = BTreeMap::new();
    let data = String::from_utf8_lossy(data);
    for pair in data.split(['&', ';']) {
        let (k, v) = key_value(pair);
        let k = unescape(k);
        let v = v.map(|v| {
            let v = Value::String(unescape(v));
            match res.remove(&k).flatten() {
                Some(Value::Array(mut list)) => {
                    list.push(v);
                    Value::Array(list)
                }
                Some(old) => Value::Array(vec![old, v]),
                None => v,
            }
        });
        res.insert(k, v);
    }
    res
}

/// The parameters given: the body's, each overridden by the query's
/// (`extract_params`); keys left undefined are not given.
pub(crate) fn merge(
    body: BTreeMap<String, Option<Value>>,
    query: BTreeMap<String, Option<Value>>,
) -> BTreeMap<String, Value> {
    let mut all = body;
    all.extend(query);
    all.into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::{Value, json};

    use super::{decode, merge};

    fn given(form: &str) -> Value {
        let map = merge(decode(form.as_bytes()), Default::default());
        Value::Object(map.into_iter().collect())
    }

    #[rstest]
    // proxmoxer (requests) and Ansible's proxmox_storage: a list as a
    // repeated key.
    #[case("storage=nfs1&type=nfs&content=images&content=rootdir",
        json!({"storage": "nfs1", "type": "nfs", "content": ["images", "rootdir"]}))]
    // proxmox_pool_member: three of them.
    #[case("vms=101&vms=102&vms=103", json!({"vms": ["101", "102", "103"]}))]
    // pvesh and the web UI: one value, escaped.
    #[case("net0=virtio%2Cbridge%3Dvmbr0&name=a+b", json!({"net0": "virtio,bridge=vmbr0", "name": "a b"}))]
    // `;` separates pairs as `&` does.
    #[case("a=1;b=2", json!({"a": "1", "b": "2"}))]
    // The value stops at the next `=`.
    #[case("description=x=y", json!({"description": "x"}))]
    // A key without `=` is not given, and drops what it had; `k=` is
    // the empty value (the web UI's `pci-class-blacklist=`).
    #[case("a=1&a&b=&c=3", json!({"b": "", "c": "3"}))]
    #[case("a=1&a=", json!({"a": ["1", ""]}))]
    #[case("pci-class-blacklist=", json!({"pci-class-blacklist": ""}))]
    // A broken escape stays as it is; bytes that are not UTF-8 are
    // replaced.
    #[case("a=100%25&b=%zz&c=%ff", json!({"a": "100%", "b": "%zz", "c": "\u{FFFD}"}))]
    #[case("", json!({}))]
    fn a_form_reads_as_pve_reads_it(#[case] form: &str, #[case] want: Value) {
        assert_eq!(given(form), want);
    }

    #[test]
    fn the_query_overrides_the_body() {
        let body = decode(b"a=1&b=2&c=3");
        let query = decode(b"a=9&a=8&b");
        let got = merge(body, query);
        assert_eq!(got.get("a"), Some(&json!(["9", "8"])));
        assert_eq!(got.get("b"), None);
        assert_eq!(got.get("c"), Some(&json!("3")));
    }
}
