//! ACME: accounts and challenge plugins (`/cluster/acme`), a node's
//! certificate ordered, renewed and revoked
//! (`/nodes/{node}/certificates/acme/certificate`). The account calls are
//! root@pam's; the plugins need `Sys.Modify` on `/`, the certificate
//! `Sys.Modify` on the node.
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! let acme = client.acme();
//! let upid = acme
//!     .register_account(&pve_client::api::acme::NewAccount {
//!         contact: "admin@example.com".into(),
//!         directory: Some(pve_client::api::acme::LE_STAGING.into()),
//!         tos_url: Some(acme.get_tos(Some(pve_client::api::acme::LE_STAGING)).await?.unwrap_or_default()),
//!         ..Default::default()
//!     })
//!     .await?;
//! client.tasks().wait(&upid).await?;
//! let order = acme.new_certificate("pve", false).await?;
//! client.tasks().wait(&order).await?;
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// Let's Encrypt's production directory (PVE's default).
pub const LE_V2: &str = "https://acme-v02.api.letsencrypt.org/directory";
/// Let's Encrypt's staging directory.
pub const LE_STAGING: &str = "https://acme-staging-v02.api.letsencrypt.org/directory";

/// The ACME calls; see [`Client::acme`].
#[derive(Debug, Clone, Copy)]
pub struct Acme<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster/acme` and node certificate ACME calls.
    pub fn acme(&self) -> Acme<'_> {
        Acme { client: self }
    }
}

/// What [`Acme::register_account`] registers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewAccount {
    /// The account's name (`default` when `None`).
    pub name: Option<String>,
    /// Contact email addresses, comma-separated.
    pub contact: String,
    /// The directory URL (Let's Encrypt's production one when `None`).
    pub directory: Option<String>,
    /// The terms of service agreed to.
    pub tos_url: Option<String>,
    /// External account binding: key id and HMAC key.
    pub eab: Option<(String, String)>,
}

/// `GET /cluster/acme/account/{name}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccountInfo {
    /// The account object the CA answered (`status`, `contact`, ...).
    #[serde(default)]
    pub account: Map<String, Value>,
    /// The directory URL.
    #[serde(default)]
    pub directory: Option<String>,
    /// The account's URL at the CA.
    #[serde(default)]
    pub location: Option<String>,
    /// The terms of service agreed to.
    #[serde(default)]
    pub tos: Option<String>,
}

/// A named directory (`GET /cluster/acme/directories`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Directory {
    /// `Let's Encrypt V2`, `Let's Encrypt V2 Staging`.
    pub name: String,
    /// Its URL.
    pub url: String,
}

/// A challenge plugin as `GET /cluster/acme/plugins` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plugin {
    /// The plugin's id.
    pub plugin: String,
    /// `dns` or `standalone`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The DNS API (`cf`, `ovh`, ...).
    #[serde(default)]
    pub api: Option<String>,
    /// The DNS API's `KEY=value` lines.
    #[serde(default)]
    pub data: Option<String>,
    /// The nodes it is for.
    #[serde(default)]
    pub nodes: Option<String>,
    /// Whether it is disabled.
    #[serde(default, deserialize_with = "de::bool01")]
    pub disable: bool,
    /// Seconds to wait before validation.
    #[serde(default, rename = "validation-delay", deserialize_with = "de::opt_u64")]
    pub validation_delay: Option<u64>,
    /// The digest of `plugins.cfg`.
    #[serde(default)]
    pub digest: String,
}

impl Acme<'_> {
    /// `GET /cluster/acme/account` (`account_index`): the account names.
    pub async fn account_index(&self) -> Result<Vec<String>> {
        let list: Vec<Map<String, Value>> = self
            .client
            .call(Method::GET, "/cluster/acme/account", &Params::new())
            .await?;
        Ok(list
            .iter()
            .filter_map(|m| m.get("name").and_then(Value::as_str).map(str::to_string))
            .collect())
    }

    /// `POST /cluster/acme/account` (`register_account`, task
    /// `acmeregister`).
    ///
    /// # Errors
    /// `ACME account config file 'x' already exists.` (on `name`).
    pub async fn register_account(&self, a: &NewAccount) -> Result<Upid> {
        let mut params = Params::new()
            .set("contact", a.contact.as_str())
            .opt("name", a.name.as_deref())
            .opt("directory", a.directory.as_deref())
            .opt("tos_url", a.tos_url.as_deref());
        if let Some((kid, key)) = &a.eab {
            params.push("eab-kid", kid.as_str());
            params.push("eab-hmac-key", key.as_str());
        }
        self.client
            .call(Method::POST, "/cluster/acme/account", &params)
            .await
    }

    /// `GET /cluster/acme/account/{name}` (`get_account`).
    pub async fn get_account(&self, name: &str) -> Result<AccountInfo> {
        let path = format!("/cluster/acme/account/{}", seg(name));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `PUT /cluster/acme/account/{name}` (`update_account`): new contacts
    /// (task `acmeupdate`), or none to refresh (`acmerefresh`).
    pub async fn update_account(&self, name: &str, contact: Option<&str>) -> Result<Upid> {
        let path = format!("/cluster/acme/account/{}", seg(name));
        let params = Params::new().opt("contact", contact);
        self.client.call(Method::PUT, &path, &params).await
    }

    /// `DELETE /cluster/acme/account/{name}` (`deactivate_account`, task
    /// `acmedeactivate`).
    pub async fn deactivate_account(&self, name: &str) -> Result<Upid> {
        let path = format!("/cluster/acme/account/{}", seg(name));
        self.client
            .call(Method::DELETE, &path, &Params::new())
            .await
    }

    /// `GET /cluster/acme/tos` (`get_tos`, deprecated for `meta`).
    pub async fn get_tos(&self, directory: Option<&str>) -> Result<Option<String>> {
        let params = Params::new().opt("directory", directory);
        self.client
            .call(Method::GET, "/cluster/acme/tos", &params)
            .await
    }

    /// `GET /cluster/acme/meta` (`get_meta`).
    pub async fn get_meta(&self, directory: Option<&str>) -> Result<Map<String, Value>> {
        let params = Params::new().opt("directory", directory);
        self.client
            .call(Method::GET, "/cluster/acme/meta", &params)
            .await
    }

    /// `GET /cluster/acme/directories` (`get_directories`).
    pub async fn get_directories(&self) -> Result<Vec<Directory>> {
        self.client
            .call(Method::GET, "/cluster/acme/directories", &Params::new())
            .await
    }

    /// `GET /cluster/acme/challenge-schema` (`challengeschema`).
    pub async fn challengeschema(&self) -> Result<Vec<Map<String, Value>>> {
        self.client
            .call(
                Method::GET,
                "/cluster/acme/challenge-schema",
                &Params::new(),
            )
            .await
    }

    /// `GET /cluster/acme/plugins` (`index`), of one `type` if given.
    pub async fn plugin_index(&self, kind: Option<&str>) -> Result<Vec<Plugin>> {
        let params = Params::new().opt("type", kind);
        self.client
            .call(Method::GET, "/cluster/acme/plugins", &params)
            .await
    }

    /// `GET /cluster/acme/plugins/{id}` (`get_plugin_config`).
    pub async fn get_plugin_config(&self, id: &str) -> Result<Plugin> {
        let path = format!("/cluster/acme/plugins/{}", seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/acme/plugins` (`add_plugin`); `data` is given as
    /// its `KEY=value` lines and sent base64-encoded.
    ///
    /// # Errors
    /// `ACME plugin ID 'x' already exists`, `unexpected property 'x'`.
    pub async fn add_plugin(
        &self,
        id: &str,
        kind: &str,
        api: Option<&str>,
        data: Option<&str>,
        options: &[(&str, &str)],
    ) -> Result<()> {
        let mut params = Params::new()
            .set("id", id)
            .set("type", kind)
            .opt("api", api)
            .opt("data", data.map(encode));
        for (k, v) in options {
            params.push(*k, *v);
        }
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/acme/plugins", &params)
            .await?;
        Ok(())
    }

    /// `PUT /cluster/acme/plugins/{id}` (`update_plugin`): `data` as its
    /// lines, other `options`, `delete` and the `digest` to check.
    pub async fn update_plugin(
        &self,
        id: &str,
        data: Option<&str>,
        options: &[(&str, &str)],
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let path = format!("/cluster/acme/plugins/{}", seg(id));
        let mut params = Params::new()
            .opt("data", data.map(encode))
            .opt("delete", (!delete.is_empty()).then(|| delete.join(",")))
            .opt("digest", digest);
        for (k, v) in options {
            params.push(*k, *v);
        }
        let _: Value = self.client.call(Method::PUT, &path, &params).await?;
        Ok(())
    }

    /// `DELETE /cluster/acme/plugins/{id}` (`delete_plugin`).
    pub async fn delete_plugin(&self, id: &str) -> Result<()> {
        let path = format!("/cluster/acme/plugins/{}", seg(id));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `POST /nodes/{node}/certificates/acme/certificate`
    /// (`new_certificate`, task `acmenewcert`).
    ///
    /// # Errors
    /// `Custom certificate exists but 'force' is not set.` (on `force`);
    /// 400 without ACME domains in the node's configuration.
    pub async fn new_certificate(&self, node: &str, force: bool) -> Result<Upid> {
        let path = format!("/nodes/{}/certificates/acme/certificate", seg(node));
        let params = Params::new().opt("force", force.then_some(true));
        self.client.call(Method::POST, &path, &params).await
    }

    /// `PUT /nodes/{node}/certificates/acme/certificate`
    /// (`renew_certificate`, task `acmerenew`): only within 30 days of
    /// the certificate's end unless `force`.
    pub async fn renew_certificate(&self, node: &str, force: bool) -> Result<Upid> {
        let path = format!("/nodes/{}/certificates/acme/certificate", seg(node));
        let params = Params::new().opt("force", force.then_some(true));
        self.client.call(Method::PUT, &path, &params).await
    }

    /// `DELETE /nodes/{node}/certificates/acme/certificate`
    /// (`revoke_certificate`, task `acmerevoke`).
    pub async fn revoke_certificate(&self, node: &str) -> Result<Upid> {
        let path = format!("/nodes/{}/certificates/acme/certificate", seg(node));
        self.client
            .call(Method::DELETE, &path, &Params::new())
            .await
    }
}

/// Base64 of a DNS plugin's data, as the API takes it.
fn encode(data: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}
