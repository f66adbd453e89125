//! [`Outcome`]: what a call answered, as a client observes it.

use std::collections::BTreeMap;

use pve_client::Category;
use serde_json::Value;

use crate::raw::RawReply;

/// What a call answered, as a client observes it.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// `GET /nodes`, for messages.
    pub request: String,
    /// The HTTP status (200 for a success; 0 when nothing answered).
    pub status: u16,
    /// The `data` member.
    pub data: Value,
    /// The top-level `total`, where PVE sends one.
    pub total: Option<u64>,
    /// PVE's message on failure, without its trailing newline.
    pub message: String,
    /// Per-parameter messages of a 400, without trailing newlines.
    pub errors: BTreeMap<String, String>,
    /// The client's error category, for calls made through `pve-client`.
    pub category: Option<Category>,
    /// The status line's reason phrase, for raw calls.
    pub reason: Option<String>,
    /// The body as sent, for raw calls.
    pub body: Option<String>,
}

impl Outcome {
    pub(super) fn from_client(request: String, r: pve_client::Result<pve_client::Answer>) -> Self {
        match r {
            Ok(a) => Self {
                request,
                status: 200,
                // A download's bytes are kept as text.
                data: match a.download {
                    Some(bytes) => {
                        serde_json::Value::String(String::from_utf8_lossy(&bytes).into_owned())
                    }
                    None => a.data,
                },
                total: a.total,
                ..Self::default()
            },
            Err(e) => Self {
                request,
                status: e.status().unwrap_or(0),
                message: e.message().to_string(),
                errors: e.param_errors().cloned().unwrap_or_default(),
                category: Some(e.category()),
                ..Self::default()
            },
        }
    }

    pub(super) fn from_raw(request: String, r: RawReply) -> Self {
        let json = r.json();
        let get = |k: &str| json.as_ref().and_then(|j| j.get(k)).cloned();
        let message = get("message")
            .and_then(|m| m.as_str().map(|s| s.trim_end().to_string()))
            .unwrap_or_else(|| {
                if r.status == 200 {
                    String::new()
                } else {
                    r.reason.clone()
                }
            });
        let errors = get("errors")
            .and_then(|e| e.as_object().cloned())
            .map(|o| {
                o.into_iter()
                    .map(|(k, v)| {
                        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        (k, text.trim_end().to_string())
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            request,
            status: r.status,
            data: get("data").unwrap_or(Value::Null),
            total: get("total").and_then(|t| {
                t.as_u64()
                    .or_else(|| t.as_str().and_then(|s| s.parse().ok()))
            }),
            message,
            errors,
            category: None,
            reason: Some(r.reason),
            body: Some(r.text),
        }
    }

    /// Whether the call succeeded.
    pub fn ok(&self) -> bool {
        self.status == 200 && self.message.is_empty()
    }
}
