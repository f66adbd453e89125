//! The answers of the console calls.

use serde_json::{Map, Value, json};

/// The answer of a VNC or terminal proxy call: `user`, `ticket`, `port`,
/// `upid`, then the CA (`cert`) and the VNC `password` where the call
/// gives them.
pub fn proxy(
    user: &str,
    ticket: &str,
    port: u16,
    upid: &str,
    cert: Option<&str>,
    password: Option<&str>,
) -> Value {
    let mut out = Map::new();
    out.insert("user".into(), json!(user));
    out.insert("ticket".into(), json!(ticket));
    out.insert("port".into(), json!(port));
    out.insert("upid".into(), json!(upid));
    if let Some(c) = cert {
        out.insert("cert".into(), json!(c));
    }
    if let Some(p) = password {
        out.insert("password".into(), json!(p));
    }
    Value::Object(out)
}

/// The node a SPICE connection goes through.
#[derive(Debug, Clone)]
pub struct SpiceHost {
    /// Its FQDN (`hostname -f`), the default proxy.
    pub fqdn: String,
    /// The subject of its `pve-ssl.pem`, one line (`/OU=.../CN=...`).
    pub subject: String,
    /// The cluster CA, PEM.
    pub ca: String,
}

/// What a remote-viewer file says.
#[derive(Debug, Clone)]
pub struct RemoteViewer<'a> {
    /// The window title.
    pub title: &'a str,
    /// The SPICE proxy's host (`proxy`, or the node's FQDN).
    pub proxy_host: &'a str,
    /// The proxy ticket the viewer gives as its host.
    pub proxy_ticket: &'a str,
    /// The TLS port behind the proxy.
    pub port: u16,
    /// The one-time password.
    pub password: &'a str,
    /// The node.
    pub host: &'a SpiceHost,
}

/// `remote_viewer_config`'s settings: the subject with `,` between its
/// parts (as remote-viewer wants it), the CA on one line with `\n` for
/// its line ends, an IPv6 proxy in brackets, port 3128.
pub fn remote_viewer(rv: &RemoteViewer<'_>) -> Value {
    let subject = subject_for_viewer(&rv.host.subject);
    let ca = rv.host.ca.replace('\n', "\\n");
    let proxy = if rv.proxy_host.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{}]", rv.proxy_host)
    } else {
        rv.proxy_host.to_string()
    };
    json!({
        "secure-attention": "Ctrl+Alt+Ins",
        "toggle-fullscreen": "Shift+F11",
        "release-cursor": "Ctrl+Alt+R",
        "type": "spice",
        "title": rv.title,
        "host": rv.proxy_ticket,
        "proxy": format!("http://{proxy}:3128"),
        "tls-port": rv.port,
        "host-subject": subject,
        "ca": ca,
        "password": rv.password,
        "delete-this-file": 1,
    })
}

/// An OpenSSL one-line subject (`/OU=a/O=b/CN=c`) as remote-viewer reads
/// it (`OU=a,O=b,CN=c`).
pub fn subject_for_viewer(subject: &str) -> String {
    let s = subject.strip_prefix('/').unwrap_or(subject);
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('/') {
        let (head, tail) = rest.split_at(i);
        out.push_str(head);
        let after = &tail[1..];
        // A `/` starts a new part only before `<word>=`.
        let starts_part = after.find('=').is_some_and(|eq| {
            eq > 0
                && after[..eq]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        out.push(if starts_part { ',' } else { '/' });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A settings object in the `spiceconfig` format: `[virt-viewer]` and a
/// `key=value` line for each setting.
pub fn spiceconfig(data: &Value) -> Option<String> {
    let obj = data.as_object()?;
    let mut out = String::from("[virt-viewer]\n");
    for (k, v) in obj {
        let text = match v {
            Value::Null => continue,
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.push_str(&format!("{k}={text}\n"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    #[rstest]
    #[case(
        "/OU=PVE Cluster Node/O=Proxmox Virtual Environment/CN=pve.example.com",
        "OU=PVE Cluster Node,O=Proxmox Virtual Environment,CN=pve.example.com"
    )]
    #[case("/CN=a/b", "CN=a/b")]
    #[case("CN=pve", "CN=pve")]
    fn subjects_are_written_as_remote_viewer_reads_them(#[case] given: &str, #[case] want: &str) {
        assert_eq!(subject_for_viewer(given), want);
    }

    #[test]
    fn a_viewer_file_has_the_ca_on_one_line_and_a_bracketed_ipv6_proxy() {
        let host = SpiceHost {
            fqdn: "pve.example.com".into(),
            subject: "/CN=pve.example.com".into(),
            ca: "-----BEGIN CERTIFICATE-----\nAB\n-----END CERTIFICATE-----\n".into(),
        };
        let v = remote_viewer(&RemoteViewer {
            title: "VM 100 - web",
            proxy_host: "fd00::1",
            proxy_ticket: "pvespiceproxy:00000001:100:pve:61000::ab",
            port: 61000,
            password: "secret",
            host: &host,
        });
        assert_eq!(v["proxy"], "http://[fd00::1]:3128");
        assert_eq!(
            v["ca"],
            "-----BEGIN CERTIFICATE-----\\nAB\\n-----END CERTIFICATE-----\\n"
        );
        assert_eq!(v["host-subject"], "CN=pve.example.com");
        assert_eq!(v["tls-port"], 61000);
        let text = spiceconfig(&v).expect("present");
        assert!(text.starts_with("[virt-viewer]\n"), "{text}");
        assert!(text.contains("\ntype=spice\n"), "{text}");
        assert!(text.contains("\ndelete-this-file=1\n"), "{text}");
        assert_eq!(spiceconfig(&json!([1])), None);
    }
}
