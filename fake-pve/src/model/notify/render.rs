//! The part of Handlebars a webhook's URL, headers and body use:
//! `{{ path }}` (`title`, `message`, `severity`, `timestamp`,
//! `fields.<name>`, `secrets.<name>`), and the crate's helpers
//! `{{ json path }}`, `{{ escape path }}` and `{{ url-encode path }}`.
//! Nothing is HTML-escaped (the crate registers no escape function); a
//! path that leads nowhere renders as nothing. Block helpers (`{{#...}}`)
//! are refused.

use serde_json::Value;

/// The value at a dotted path (`fields.job-id`), if any.
fn lookup<'a>(data: &'a Value, path: &str) -> Option<&'a Value> {
    if path == "this" || path == "." {
        return Some(data);
    }
    path.split('.').try_fold(data, |v, key| v.get(key))
}

/// A value as Handlebars writes it.
fn plain(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// `escape`: the text made safe inside a JSON string.
fn escape(s: &str) -> String {
    let quoted = Value::String(s.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// `url-encode`: every byte but the unreserved ones percent-encoded.
fn url_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Renders `template` with `data`.
///
/// # Errors
/// The reason, for an unclosed expression, a block helper or an unknown
/// helper.
pub fn render(template: &str, data: &Value) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let (triple, after) = match after.strip_prefix('{') {
            Some(a) => (true, a),
            None => (false, after),
        };
        let close = if triple { "}}}" } else { "}}" };
        let end = after
            .find(close)
            .ok_or_else(|| "unclosed expression".to_string())?;
        let expr = after[..end]
            .trim()
            .trim_start_matches('~')
            .trim_end_matches('~')
            .trim();
        rest = &after[end + close.len()..];
        if expr.starts_with(['#', '/', '>', '^', '!']) {
            if expr.starts_with('!') {
                continue;
            }
            return Err(format!("unsupported expression '{{{{{expr}}}}}'"));
        }
        let mut words = expr.split_whitespace();
        let first = words.next().unwrap_or("");
        let text = match (first, words.next()) {
            (path, None) => plain(lookup(data, path)),
            ("json", Some(path)) => lookup(data, path).unwrap_or(&Value::Null).to_string(),
            ("escape", Some(path)) => escape(&plain(lookup(data, path))),
            ("url-encode", Some(path)) => url_encode(&plain(lookup(data, path))),
            (helper, Some(_)) => return Err(format!("helper not defined: \"{helper}\"")),
        };
        out.push_str(&text);
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn data() -> Value {
        json!({
            "title": "Test notification",
            "message": "line \"one\"\nline two",
            "severity": "info",
            "timestamp": 1_700_000_000,
            "fields": { "type": "vzdump", "job-id": "backup-1" },
            "secrets": { "token": "s3cr3t" },
        })
    }

    #[rstest]
    #[case("{{ title }}", "Test notification")]
    #[case("{{title}}: {{ severity }}", "Test notification: info")]
    #[case("{{ fields.job-id }}", "backup-1")]
    #[case("{{ fields.nothere }}", "")]
    #[case("{{ timestamp }}", "1700000000")]
    #[case(
        "{\"m\": \"{{ escape message }}\"}",
        "{\"m\": \"line \\\"one\\\"\\nline two\"}"
    )]
    #[case("{{ json fields }}", "{\"type\":\"vzdump\",\"job-id\":\"backup-1\"}")]
    #[case("?t={{ url-encode title }}", "?t=Test%20notification")]
    #[case("Bearer {{ secrets.token }}", "Bearer s3cr3t")]
    #[case("no template", "no template")]
    fn renders(#[case] template: &str, #[case] out: &str) {
        assert_eq!(render(template, &data()).expect("accepted"), out);
    }

    #[rstest]
    #[case("{{ title ")]
    #[case("{{#if title}}x{{/if}}")]
    #[case("{{ shout title }}")]
    fn refuses(#[case] template: &str) {
        assert!(render(template, &data()).is_err());
    }
}
