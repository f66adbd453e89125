//! What the notification system sent: one [`Delivery`] per target a
//! notification reached. A webhook or gotify target whose URL is on a
//! loopback address gets the HTTP request PVE would send (made by the
//! server's dispatcher, which records the answer); every other delivery
//! is kept here only, marked as not delivered.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Entry, Kind, Notifications, decode_b64, key_value, render};

/// The most deliveries kept; the oldest go first.
const KEPT: usize = 1000;

/// A notification's severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// General information.
    Info,
    /// A noteworthy event.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// Unknown (forwarded system mail).
    Unknown,
}

impl Severity {
    /// The crate's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Notice => "notice",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Unknown => "unknown",
        }
    }

    /// A severity by its word.
    pub fn parse(s: &str) -> Option<Severity> {
        [
            Severity::Info,
            Severity::Notice,
            Severity::Warning,
            Severity::Error,
            Severity::Unknown,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }

    /// Gotify's priority for the severity.
    fn gotify_priority(self) -> u32 {
        match self {
            Severity::Info => 1,
            Severity::Notice | Severity::Unknown => 3,
            Severity::Warning => 5,
            Severity::Error => 9,
        }
    }
}

/// A notification: its severity, the template it is rendered from, its
/// rendered title and text, its metadata fields and its time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// The severity.
    pub severity: Severity,
    /// The template's name (`vzdump`, `replication`, `test` ...).
    pub template: String,
    /// The rendered subject.
    pub title: String,
    /// The rendered plain-text body.
    pub message: String,
    /// The metadata fields matchers look at (`type`, `hostname`,
    /// `job-id`).
    pub fields: BTreeMap<String, String>,
    /// When, epoch seconds.
    pub timestamp: i64,
}

impl Notification {
    /// `test_target`'s notification.
    pub fn test(target: &str, now: i64) -> Self {
        Self {
            severity: Severity::Info,
            template: "test".into(),
            title: "Test notification".into(),
            message: format!("This is a test of the notification target '{target}'."),
            fields: BTreeMap::new(),
            timestamp: now,
        }
    }
}

/// How a delivery went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The request is on its way.
    Pending,
    /// The receiver answered with a 2xx status.
    Delivered,
    /// The request failed or the receiver refused it.
    Failed,
    /// Kept in the outbox only (mail, or a URL not on loopback).
    NotDelivered,
}

/// An HTTP request a webhook or gotify target makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpRequest {
    /// `POST`, `PUT` or `GET`.
    pub method: String,
    /// The rendered URL.
    pub url: String,
    /// The rendered headers, in order.
    pub headers: Vec<(String, String)>,
    /// The rendered body.
    pub body: String,
    /// The secret values, masked in what is recorded of the answer.
    #[serde(skip)]
    pub masks: Vec<String>,
}

/// A request for the dispatcher to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Send {
    /// The delivery it is for.
    pub id: u64,
    /// The request.
    pub request: HttpRequest,
}

/// One notification to one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// Its number, from 1.
    pub id: u64,
    /// The target's name.
    pub target: String,
    /// The target's kind.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// The notification.
    pub notification: Notification,
    /// How it went.
    pub status: Status,
    /// The receiver's status code or the error; why it was not sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The HTTP request (webhook and gotify targets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<HttpRequest>,
    /// The mail (sendmail and smtp targets): recipients, sender, author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mail: Option<Value>,
}

/// The deliveries, newest last, and the requests still to make.
#[derive(Debug, Clone, Default)]
pub struct Outbox {
    deliveries: Vec<Delivery>,
    next: u64,
    pending: Vec<Send>,
}

impl Outbox {
    /// The deliveries, oldest first.
    pub fn deliveries(&self) -> &[Delivery] {
        &self.deliveries
    }

    /// Forgets every delivery.
    pub fn clear(&mut self) {
        self.deliveries.clear();
    }

    /// Records a delivery; one on loopback is queued for the dispatcher.
    pub(super) fn push(&mut self, (mut d, send): (Delivery, Option<HttpRequest>)) {
        self.next += 1;
        d.id = self.next;
        if let Some(request) = send {
            self.pending.push(Send { id: d.id, request });
        }
        self.deliveries.push(d);
        if self.deliveries.len() > KEPT {
            let extra = self.deliveries.len() - KEPT;
            self.deliveries.drain(..extra);
        }
    }

    /// The requests to make, taken.
    pub fn take_pending(&mut self) -> Vec<Send> {
        std::mem::take(&mut self.pending)
    }

    /// Records how a request went.
    pub fn settle(&mut self, id: u64, ok: bool, detail: String) {
        if let Some(d) = self.deliveries.iter_mut().find(|d| d.id == id) {
            d.status = if ok {
                Status::Delivered
            } else {
                Status::Failed
            };
            d.detail = Some(detail);
        }
    }
}

/// Whether a URL's host is a loopback address (`127.0.0.0/8`, `::1`,
/// `localhost`).
pub fn on_loopback(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "http" | "https") {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// The delivery of `n` to the target `name`, and the request to make
/// when it goes to loopback.
pub(super) fn prepare(
    cfg: &Notifications,
    name: &str,
    entry: &Entry,
    n: &Notification,
    email_of: &dyn Fn(&str) -> Option<String>,
) -> (Delivery, Option<HttpRequest>) {
    let mut d = Delivery {
        id: 0,
        target: name.to_string(),
        kind: entry.kind,
        notification: n.clone(),
        status: Status::NotDelivered,
        detail: None,
        request: None,
        mail: None,
    };
    let request = match entry.kind {
        Kind::Sendmail | Kind::Smtp => {
            let mut to = entry.list("mailto");
            to.extend(entry.list("mailto-user").iter().filter_map(|u| email_of(u)));
            let mut mail = json!({
                "to": to,
                "from": entry.text("from-address").unwrap_or("root"),
                "author": entry.text("author").unwrap_or("Proxmox VE"),
            });
            if entry.kind == Kind::Smtp {
                mail["server"] = json!(entry.text("server").unwrap_or(""));
            }
            d.mail = Some(mail);
            d.detail = Some("mail is kept in the outbox".into());
            None
        }
        Kind::Gotify => {
            let body = json!({
                "title": n.title,
                "message": n.message,
                "priority": n.severity.gotify_priority(),
                "extras": { "client::display": { "contentType": "text/markdown" } },
            })
            .to_string();
            Some(Ok(HttpRequest {
                method: "POST".into(),
                url: format!("{}/message", entry.text("server").unwrap_or("")),
                headers: vec![
                    ("Content-Type".into(), "application/json".into()),
                    (
                        "X-Gotify-Key".into(),
                        cfg.private_text(name, "token").unwrap_or_default(),
                    ),
                ],
                body,
                masks: cfg.private_text(name, "token").into_iter().collect(),
            }))
        }
        Kind::Webhook => Some(webhook_request(cfg, name, entry, n)),
        Kind::Matcher => None,
    };
    match request {
        None => (d, None),
        Some(Err(e)) => {
            d.status = Status::Failed;
            d.detail = Some(e);
            (d, None)
        }
        Some(Ok(r)) => {
            let send = on_loopback(&r.url);
            if send {
                d.status = Status::Pending;
            } else {
                d.detail = Some("not a loopback address: kept in the outbox".into());
            }
            // The secrets never show: not in the outbox either.
            let mut shown = r.clone();
            for secret in &r.masks {
                shown.url = shown.url.replace(secret, "<masked>");
                shown.body = shown.body.replace(secret, "<masked>");
                for (_, v) in &mut shown.headers {
                    *v = v.replace(secret, "<masked>");
                }
            }
            if entry.kind == Kind::Gotify {
                for (k, v) in &mut shown.headers {
                    if k == "X-Gotify-Key" {
                        *v = "<masked>".into();
                    }
                }
            }
            d.request = Some(shown);
            (d, send.then_some(r))
        }
    }
}

/// The request a webhook target makes: URL, headers and body rendered
/// with the notification's title, message, severity, timestamp, fields
/// and the target's secrets.
fn webhook_request(
    cfg: &Notifications,
    name: &str,
    entry: &Entry,
    n: &Notification,
) -> std::result::Result<HttpRequest, String> {
    let data = json!({
        "title": n.title,
        "message": n.message,
        "severity": n.severity.as_str(),
        "timestamp": n.timestamp,
        "fields": n.fields,
        "secrets": cfg.secrets(name),
    });
    let body_template = match entry.text("body") {
        Some(b) => decode_b64(b).ok_or("could not decode base64 value")?,
        None => String::new(),
    };
    let body = render::render(&body_template, &data)
        .map_err(|e| format!("failed to render webhook body: {e}"))?;
    let url = render::render(entry.text("url").unwrap_or(""), &data)
        .map_err(|e| format!("failed to render webhook url: {e}"))?;
    let mut headers = Vec::new();
    for h in entry.list("header") {
        let (hname, value) = key_value(&h);
        let value = value
            .as_deref()
            .and_then(decode_b64)
            .ok_or_else(|| format!("could not decode base64 value with key '{hname}'"))?;
        let value = render::render(&value, &data)
            .map_err(|e| format!("failed to render header value template: {value}: {e}"))?;
        headers.push((hname, value));
    }
    let method = entry.text("method").unwrap_or("post").to_ascii_uppercase();
    if !(method == "GET" && body.is_empty()) {
        headers.push(("Content-Length".into(), body.len().to_string()));
    }
    Ok(HttpRequest {
        method,
        url,
        headers,
        body,
        masks: cfg
            .secrets(name)
            .into_values()
            .filter(|s| !s.is_empty())
            .collect(),
    })
}
