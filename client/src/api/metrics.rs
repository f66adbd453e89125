//! External metric servers (`/cluster/metrics/server`): Graphite,
//! InfluxDB and, on 9.x, OpenTelemetry; and the metrics pvestatd keeps
//! (`/cluster/metrics/export`).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! let m = client.metrics();
//! m.create("graphite1", "graphite", &[("server", "192.0.2.10"), ("port", "2003")])
//!     .await?;
//! let servers = m.server_index().await?;
//! # let _ = servers;
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The metric server calls; see [`Client::metrics`].
#[derive(Debug, Clone, Copy)]
pub struct Metrics<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster/metrics` calls.
    pub fn metrics(&self) -> Metrics<'_> {
        Metrics { client: self }
    }
}

/// A server as `GET /cluster/metrics/server` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricServer {
    /// The id.
    pub id: String,
    /// `graphite`, `influxdb`, `opentelemetry`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The server's name or address.
    #[serde(default)]
    pub server: String,
    /// Its port, when set.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub port: Option<u64>,
    /// Whether it is disabled.
    #[serde(default, deserialize_with = "de::bool01")]
    pub disable: bool,
}

impl Metrics<'_> {
    /// `GET /cluster/metrics/server` (`server_index`).
    ///
    /// # Errors
    /// 403 without `Sys.Audit` on `/`.
    pub async fn server_index(&self) -> Result<Vec<MetricServer>> {
        self.client
            .call(Method::GET, "/cluster/metrics/server", &Params::new())
            .await
    }

    /// `GET /cluster/metrics/server/{id}` (`read`): `type` and the options
    /// that are set (never the InfluxDB token).
    ///
    /// # Errors
    /// `status server entry 'x' does not exist`.
    pub async fn read(&self, id: &str) -> Result<Map<String, Value>> {
        let path = format!("/cluster/metrics/server/{}", seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/metrics/server/{id}` (`create`) with the plugin's
    /// options (`server` and `port` always).
    ///
    /// # Errors
    /// `Metric server 'x' already exists`, `unexpected property 'x'`.
    pub async fn create(&self, id: &str, kind: &str, options: &[(&str, &str)]) -> Result<()> {
        let path = format!("/cluster/metrics/server/{}", seg(id));
        let mut params = Params::new().set("type", kind);
        for (k, v) in options {
            params.push(*k, *v);
        }
        let _: Value = self.client.call(Method::POST, &path, &params).await?;
        Ok(())
    }

    /// `PUT /cluster/metrics/server/{id}` (`update`): PVE wants `server`
    /// and `port` with every update; `delete` lists options to remove.
    ///
    /// # Errors
    /// `no such server 'x'`, `unable to delete required option 'x'`.
    pub async fn update(&self, id: &str, options: &[(&str, &str)], delete: &[&str]) -> Result<()> {
        let path = format!("/cluster/metrics/server/{}", seg(id));
        let mut params =
            Params::new().opt("delete", (!delete.is_empty()).then(|| delete.join(",")));
        for (k, v) in options {
            params.push(*k, *v);
        }
        let _: Value = self.client.call(Method::PUT, &path, &params).await?;
        Ok(())
    }

    /// `DELETE /cluster/metrics/server/{id}` (`delete`).
    ///
    /// # Errors
    /// `unknown section type ''` for a server that does not exist.
    pub async fn delete(&self, id: &str) -> Result<()> {
        let path = format!("/cluster/metrics/server/{}", seg(id));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /cluster/metrics/export` (`export`): the metrics pvestatd
    /// cached, oldest first.
    ///
    /// # Errors
    /// `Requested node-list contains unknown nodes - x` (9.x); on 8.4 a
    /// `node_list` is refused as a parameter the schema does not have.
    pub async fn export(&self, q: &ExportQuery) -> Result<Vec<Metric>> {
        let params = Params::new()
            .opt("local-only", q.local_only.then_some(true))
            .opt(
                "node-list",
                (!q.node_list.is_empty()).then(|| q.node_list.join(",")),
            )
            .opt("start-time", q.start_time)
            .opt("history", q.history.then_some(true));
        let answer: ExportAnswer = self
            .client
            .call(Method::GET, "/cluster/metrics/export", &params)
            .await?;
        Ok(answer.data)
    }
}

/// What [`Metrics::export`] asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportQuery {
    /// Only the node that answers, not the other members.
    pub local_only: bool,
    /// Only these nodes (9.x).
    pub node_list: Vec<String>,
    /// Only metrics after this time (epoch seconds).
    pub start_time: Option<i64>,
    /// The cached history too (30 minutes), not only the newest round.
    pub history: bool,
}

#[derive(Debug, Deserialize)]
struct ExportAnswer {
    data: Vec<Metric>,
}

/// One metric of [`Metrics::export`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// `cpu_current`, `mem_used`, `net_in`, ...
    pub metric: String,
    /// `node/<node>`, `qemu/<vmid>`, `lxc/<vmid>`, `storage/<node>/<sid>`.
    pub id: String,
    /// When pvestatd read it (epoch seconds).
    #[serde(deserialize_with = "de::i64_lenient")]
    pub timestamp: i64,
    /// `gauge`, `counter` or `derive`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The value.
    #[serde(deserialize_with = "de::f64_lenient")]
    pub value: f64,
}
