//! The answers of `/cluster/metrics/server` as
//! `API2/Cluster/MetricServer.pm` writes them: `status.cfg`'s servers
//! turned into JSON, each option typed as its plugin declares it.

use serde_json::{Value, json};

use crate::model::PveVersion;
use crate::model::metrics::{Kind, Metrics, Server};

/// An option's value as its type declares it.
fn typed(s: &Server, version: PveVersion, name: &str, v: &str) -> Value {
    match s.kind_of(version, name) {
        Kind::Text => json!(v),
        Kind::Int => v.parse::<i64>().map_or_else(|_| json!(v), |n| json!(n)),
        Kind::Bool => json!(u8::from(v == "1")),
    }
}

/// The server as `GET /cluster/metrics/server/{id}` answers it.
pub fn server(s: &Server, version: PveVersion) -> Value {
    let mut v = json!({ "type": s.kind() });
    for (k, val) in s.options() {
        v[k] = typed(s, version, k, val);
    }
    v
}

/// `GET /cluster/metrics/server`: `id`, `disable` (0 unless set), `type`,
/// `server`, `port` of each server.
pub fn index(m: &Metrics) -> Vec<Value> {
    m.servers()
        .iter()
        .map(|(id, s)| {
            json!({
                "id": id,
                "disable": u8::from(s.option("disable") == Some("1")),
                "type": s.kind(),
                "server": s.option("server"),
                "port": s.option("port").and_then(|p| p.parse::<i64>().ok()),
            })
        })
        .collect()
}

/// `GET /cluster/metrics/export`: `{data: [...]}`, the metrics in their
/// rounds' order.
pub fn export(metrics: &[crate::model::metrics::export::Metric]) -> Value {
    json!({ "data": metrics })
}
