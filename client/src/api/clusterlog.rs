//! Every node's recent tasks (`GET /cluster/tasks`) and the cluster log
//! (`GET /cluster/log`).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! for t in client.cluster_log().tasks().await? {
//!     println!("{} {} {:?}", t.node, t.upid, t.status);
//! }
//! let last = client.cluster_log().log(Some(10)).await?;
//! # let _ = last;
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The calls of this module; see [`Client::cluster_log`].
#[derive(Debug, Clone, Copy)]
pub struct ClusterLog<'a> {
    client: &'a Client,
}

impl Client {
    /// `/cluster/tasks` and `/cluster/log`.
    pub fn cluster_log(&self) -> ClusterLog<'_> {
        ClusterLog { client: self }
    }
}

/// A task as `/cluster/tasks` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterTask {
    /// The UPID.
    pub upid: String,
    /// The node it runs on.
    pub node: String,
    /// The task type (`qmstart`).
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The user (a token's user, with `tokenid` apart).
    #[serde(default)]
    pub user: String,
    /// Epoch seconds.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub starttime: Option<i64>,
    /// Epoch seconds, once finished.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub endtime: Option<i64>,
    /// `OK`, `WARNINGS: n` or the error, once finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Anything else (`id`, `pid`, `saved`, `tokenid`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry of the cluster log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterLogEntry {
    /// `<uid>:<node>`.
    pub id: String,
    /// Epoch seconds.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub time: i64,
    /// syslog priority (6 info, 3 err).
    #[serde(deserialize_with = "de::u64_lenient")]
    pub pri: u64,
    /// The node.
    pub node: String,
    /// The user the entry is about.
    pub user: String,
    /// The daemon (`pvedaemon`).
    pub tag: String,
    /// The text.
    pub msg: String,
}

impl ClusterLog<'_> {
    /// `GET /cluster/tasks` (`tasks`).
    ///
    /// # Errors
    /// As any call.
    pub async fn tasks(&self) -> Result<Vec<ClusterTask>> {
        self.client
            .call(Method::GET, "/cluster/tasks", &Params::new())
            .await
    }

    /// `GET /cluster/log` (`log`): the newest `max` entries (50 unless
    /// given), newest first.
    ///
    /// # Errors
    /// As any call.
    pub async fn log(&self, max: Option<u32>) -> Result<Vec<ClusterLogEntry>> {
        let params = Params::new().opt("max", max);
        self.client.call(Method::GET, "/cluster/log", &params).await
    }
}
