//! `/version` (schema name `version`).

use reqwest::Method;
use serde::{Deserialize, Serialize};

use crate::Client;
use crate::error::Result;
use crate::transport::Params;

/// What `/version` and `/nodes/{node}/version` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    /// The full pve-manager version (`9.1.5`).
    pub version: String,
    /// The release, `x.y` (`9.1`).
    pub release: String,
    /// The short git revision of pve-manager.
    pub repoid: String,
    /// The default console viewer, when the datacenter sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console: Option<String>,
}

impl Client {
    /// `GET /version` (`version`): the PVE release the endpoint runs.
    /// The client remembers the release, to use that release's schema
    /// ([`Client::release`]).
    ///
    /// # Errors
    /// As any call; `/version` needs authentication.
    pub async fn version(&self) -> Result<Version> {
        let v: Version = self.call(Method::GET, "/version", &Params::new()).await?;
        self.note_release(&v.release);
        Ok(v)
    }
}
