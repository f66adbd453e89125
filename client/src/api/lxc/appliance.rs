//! The appliance index (`/nodes/{node}/aplinfo`) containers' OS
//! templates come from.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Lxc;
use crate::api::seg;
use crate::api::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::Params;

/// One appliance of `GET /nodes/{node}/aplinfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Appliance {
    /// The file name to download (`debian-12-standard_12.7-1_amd64.tar.zst`).
    pub template: String,
    /// `lxc`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The OS.
    #[serde(default)]
    pub os: String,
    /// A one-line description.
    #[serde(default)]
    pub headline: String,
    /// Anything else PVE sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Lxc<'_> {
    /// `GET /nodes/{node}/aplinfo` (`aplinfo`): the appliance index.
    ///
    /// # Errors
    /// As any call.
    pub async fn aplinfo(&self, node: &str) -> Result<Vec<Appliance>> {
        self.get(&format!("/nodes/{}/aplinfo", seg(node)), &Params::new())
            .await
    }

    /// `POST /nodes/{node}/aplinfo` (`apl_download`): a `download` task
    /// that stores `template` in `storage`'s `vztmpl` content.
    ///
    /// # Errors
    /// `template: no such template`.
    pub async fn apl_download(&self, node: &str, storage: &str, template: &str) -> Result<Upid> {
        let params = Params::new()
            .set("storage", storage)
            .set("template", template);
        self.task(
            Method::POST,
            &format!("/nodes/{}/aplinfo", seg(node)),
            &params,
        )
        .await
    }

    and_wait! {
        /// [`Lxc::apl_download`], then waits for the task.
        apl_download_and_wait => apl_download(node: &str, storage: &str, template: &str);
    }
}
