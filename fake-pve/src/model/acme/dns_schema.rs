//! The DNS API plugins' data schemas (`proxmox-acme`'s
//! `dns-challenge-schema.json`), which `GET /cluster/acme/challenge-schema`
//! answers and which decide whether a DNS plugin's `data` lets the
//! emulated CA validate a domain. The plugin ids are the release's (the
//! `api` enum of its schema); the fields are known for the plugins below,
//! the others have an empty schema (their data is free-form).

use serde_json::{Value, json};

/// `(id, name, description, [(field, description, optional, default)])`.
type Entry = (
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static [(
        &'static str,
        Option<&'static str>,
        bool,
        Option<&'static str>,
    )],
);

const KNOWN: &[Entry] = &[
    (
        "acmedns",
        "acme-dns",
        None,
        &[
            (
                "ACMEDNS_PASSWORD",
                Some("The acme-dns password"),
                false,
                None,
            ),
            (
                "ACMEDNS_SUBDOMAIN",
                Some("The subdomain you got from acme-dns registration"),
                false,
                None,
            ),
            (
                "ACMEDNS_UPDATE_URL",
                Some("The API update endpoint"),
                false,
                None,
            ),
            ("ACMEDNS_USERNAME", Some("The acme-dns user"), false, None),
        ],
    ),
    (
        "active24",
        "Active24",
        None,
        &[("ACTIVE24_Token", Some("The API key"), false, None)],
    ),
    (
        "ad",
        "Alwaysdata",
        None,
        &[("AD_API_KEY", Some("The API key"), false, None)],
    ),
    (
        "ali",
        "Alibaba Cloud DNS",
        None,
        &[
            (
                "Ali_API",
                Some("The API endpoint"),
                true,
                Some("https://alidns.aliyuncs.com/"),
            ),
            ("Ali_Key", Some("The API Key"), false, None),
            ("Ali_Secret", Some("The API Secret"), false, None),
        ],
    ),
    (
        "aurora",
        "AuroraDNS",
        None,
        &[
            ("AURORA_Key", Some("The API Key"), false, None),
            ("AURORA_Secret", Some("The API Secret"), false, None),
        ],
    ),
    (
        "aws",
        "Amazon Route53 (AWS)",
        None,
        &[
            (
                "AWS_ACCESS_KEY_ID",
                Some("The AWS access-key ID"),
                false,
                None,
            ),
            (
                "AWS_SECRET_ACCESS_KEY",
                Some("The AWS access-key secret"),
                false,
                None,
            ),
        ],
    ),
    (
        "cf",
        "Cloudflare Managed DNS",
        Some("Either provide global account key and email, or CF API token and Account ID."),
        &[
            (
                "CF_Account_ID",
                Some("The new Cloudflare API Account ID"),
                true,
                None,
            ),
            (
                "CF_Email",
                Some("The Cloudflare Account EMail-Address"),
                true,
                None,
            ),
            ("CF_Key", Some("The Cloudflare Global API Key"), true, None),
            ("CF_Token", Some("The new Cloudflare API Token"), true, None),
            (
                "CF_Zone_ID",
                Some("For Zone restricted API Token"),
                true,
                None,
            ),
        ],
    ),
    (
        "dgon",
        "DigitalOcean DNS",
        None,
        &[("DO_API_KEY", Some("The DigitalOcean API Key"), false, None)],
    ),
    (
        "gd",
        "GoDaddy",
        None,
        &[
            ("GD_Key", Some("The GoDaddy API Key"), false, None),
            ("GD_Secret", Some("The GoDaddy API Secret"), false, None),
        ],
    ),
    (
        "inwx",
        "INWX",
        None,
        &[
            ("INWX_Password", Some("The INWX password"), false, None),
            ("INWX_User", Some("The INWX username"), false, None),
        ],
    ),
    (
        "kappernet",
        "kapper.net",
        None,
        &[
            (
                "KAPPERNETDNS_Key",
                Some("Your kapper.net API key"),
                false,
                None,
            ),
            (
                "KAPPERNETDNS_Secret",
                Some("Your kapper.net API secret"),
                false,
                None,
            ),
        ],
    ),
    (
        "ovh",
        "OVH",
        None,
        &[
            ("OVH_AK", Some("The application key."), false, None),
            ("OVH_AS", Some("The application secret."), false, None),
            ("OVH_CK", Some("The consumer key."), true, None),
            (
                "OVH_END_POINT",
                Some("The OVH endpoint"),
                true,
                Some("ovh-eu"),
            ),
        ],
    ),
    (
        "pdns",
        "PowerDNS server",
        None,
        &[
            ("PDNS_ServerId", None, false, None),
            ("PDNS_Token", None, false, None),
            ("PDNS_Ttl", None, false, None),
            ("PDNS_Url", Some("The PowerDNS API endpoint."), false, None),
        ],
    ),
    (
        "porkbun",
        "Porkbun",
        None,
        &[
            ("PORKBUN_API_KEY", Some("The API Key"), false, None),
            (
                "PORKBUN_SECRET_API_KEY",
                Some("The API Secret"),
                false,
                None,
            ),
        ],
    ),
    (
        "world4you",
        "World4You",
        None,
        &[
            (
                "WORLD4YOU_PASSWORD",
                Some("The World4You password"),
                false,
                None,
            ),
            (
                "WORLD4YOU_USERNAME",
                Some("The World4You customer id or package id"),
                false,
                None,
            ),
        ],
    ),
];

/// The schema of DNS plugin `id` (`{}` when its fields are not
/// described).
pub fn schema(id: &str) -> Value {
    let Some((_, name, description, fields)) = KNOWN.iter().find(|e| e.0 == id) else {
        return json!({});
    };
    let mut f = serde_json::Map::new();
    for (field, desc, optional, default) in *fields {
        let mut o = serde_json::Map::new();
        o.insert(
            "type".into(),
            json!(if field.ends_with("_Ttl") {
                "integer"
            } else {
                "string"
            }),
        );
        if let Some(d) = desc {
            o.insert("description".into(), json!(d));
        }
        if *optional && id != "cf" {
            o.insert("optional".into(), json!(1));
        }
        if let Some(d) = default {
            o.insert("default".into(), json!(d));
        }
        if id == "aws" {
            o.insert("name".into(), json!(field.trim_start_matches("AWS_")));
        }
        f.insert((*field).into(), Value::Object(o));
    }
    let mut out = serde_json::Map::new();
    out.insert("name".into(), json!(name));
    if let Some(d) = description {
        out.insert("description".into(), json!(d));
    }
    out.insert("fields".into(), Value::Object(f));
    Value::Object(out)
}

/// The fields a DNS plugin's data must set for the emulated CA to see
/// its TXT record: the required fields of its schema (for `cf`, a key
/// and email or a token and account id).
///
/// # Errors
/// The first field missing, as the plugin's own script reports it.
pub fn check_data(
    api: &str,
    data: &std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    if api == "cf" {
        let has = |k: &str| data.get(k).is_some_and(|v| !v.is_empty());
        if (has("CF_Key") && has("CF_Email")) || (has("CF_Token") && has("CF_Account_ID")) {
            return Ok(());
        }
        return Err("You didn't specify a Cloudflare api key and email yet.".to_string());
    }
    let Some((_, name, _, fields)) = KNOWN.iter().find(|e| e.0 == api) else {
        return Ok(());
    };
    for (field, _, optional, _) in *fields {
        if !optional && data.get(*field).is_none_or(String::is_empty) {
            return Err(format!("{name}: '{field}' is not set."));
        }
    }
    Ok(())
}
