//! Notifications (`/cluster/notifications`): the sendmail, gotify, smtp
//! and webhook targets, the matchers that route notifications to them,
//! and the test call.
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! let n = client.notifications();
//! n.create_webhook_endpoint("chat", &[("url", "http://127.0.0.1:9000/hook"), ("method", "post")])
//!     .await?;
//! n.create_matcher("failures", &[("match-severity", "error"), ("target", "chat")])
//!     .await?;
//! n.test_target("chat").await?;
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use crate::Client;
use crate::error::Result;
use crate::transport::Params;

/// The notification calls; see [`Client::notifications`].
#[derive(Debug, Clone, Copy)]
pub struct Notifications<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster/notifications` calls.
    pub fn notifications(&self) -> Notifications<'_> {
        Notifications { client: self }
    }
}

/// A target as `GET /cluster/notifications/targets` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotificationTarget {
    /// The name.
    pub name: String,
    /// `sendmail`, `gotify`, `smtp`, `webhook`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `user-created`, `builtin`, `modified-builtin`.
    pub origin: String,
    /// The comment, if any.
    #[serde(default)]
    pub comment: Option<String>,
    /// Whether it is disabled, when set.
    #[serde(default)]
    pub disable: Option<Value>,
}

/// The parameters of a call: the options given (a key given more than
/// once is a list, as `mailto` or `target`).
fn params(options: &[(&str, &str)]) -> Params {
    let mut p = Params::new();
    for (k, v) in options {
        p.push(*k, *v);
    }
    p
}

/// The path of an endpoint kind's list, or of one endpoint.
fn endpoint_path(kind: &str, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("/cluster/notifications/endpoints/{kind}/{}", seg(n)),
        None => format!("/cluster/notifications/endpoints/{kind}"),
    }
}

impl Notifications<'_> {
    /// `POST` of an endpoint of `kind` named `name`.
    async fn create_endpoint(
        &self,
        kind: &str,
        name: &str,
        options: &[(&str, &str)],
    ) -> Result<()> {
        let mut p = params(options);
        p.push("name", name);
        self.send(Method::POST, &endpoint_path(kind, None), p).await
    }

    async fn list(&self, path: &str) -> Result<Vec<Map<String, Value>>> {
        self.client.call(Method::GET, path, &Params::new()).await
    }

    async fn one(&self, path: &str) -> Result<Map<String, Value>> {
        self.client.call(Method::GET, path, &Params::new()).await
    }

    async fn send(&self, method: Method, path: &str, p: Params) -> Result<()> {
        let _: Value = self.client.call(method, path, &p).await?;
        Ok(())
    }

    /// `GET /cluster/notifications/targets` (`get_all_targets`).
    ///
    /// # Errors
    /// 403 without `Mapping.*` on `/mapping/notifications`.
    pub async fn get_all_targets(&self) -> Result<Vec<NotificationTarget>> {
        self.client
            .call(
                Method::GET,
                "/cluster/notifications/targets",
                &Params::new(),
            )
            .await
    }

    /// `POST /cluster/notifications/targets/{name}/test` (`test_target`).
    ///
    /// # Errors
    /// `notification target 'x' does not exist`.
    pub async fn test_target(&self, name: &str) -> Result<()> {
        let path = format!("/cluster/notifications/targets/{}/test", seg(name));
        self.send(Method::POST, &path, Params::new()).await
    }

    /// `GET /cluster/notifications/matcher-fields` (`get_matcher_fields`).
    ///
    /// # Errors
    /// 403 without `Mapping.Modify` or `Mapping.Audit`.
    pub async fn get_matcher_fields(&self) -> Result<Vec<Map<String, Value>>> {
        self.list("/cluster/notifications/matcher-fields").await
    }

    /// `GET /cluster/notifications/matcher-field-values`
    /// (`get_matcher_field_values`): `{field, value, comment?}`.
    ///
    /// # Errors
    /// 403 without `Mapping.Modify` or `Mapping.Audit`.
    pub async fn get_matcher_field_values(&self) -> Result<Vec<Map<String, Value>>> {
        self.list("/cluster/notifications/matcher-field-values")
            .await
    }

    /// `GET /cluster/notifications/matchers` (`get_matchers`).
    ///
    /// # Errors
    /// 403 without `Mapping.*` on `/mapping/notifications`.
    pub async fn get_matchers(&self) -> Result<Vec<Map<String, Value>>> {
        self.list("/cluster/notifications/matchers").await
    }

    /// `GET /cluster/notifications/matchers/{name}` (`get_matcher`), with
    /// the `digest`.
    ///
    /// # Errors
    /// `matcher 'x' not found`.
    pub async fn get_matcher(&self, name: &str) -> Result<Map<String, Value>> {
        self.one(&format!("/cluster/notifications/matchers/{}", seg(name)))
            .await
    }

    /// `POST /cluster/notifications/matchers` (`create_matcher`).
    ///
    /// # Errors
    /// `Cannot create 'x', an entity with the same name already exists`,
    /// `endpoint 'x' does not exist`.
    pub async fn create_matcher(&self, name: &str, options: &[(&str, &str)]) -> Result<()> {
        let mut p = params(options);
        p.push("name", name);
        self.send(Method::POST, "/cluster/notifications/matchers", p)
            .await
    }

    /// `PUT /cluster/notifications/matchers/{name}` (`update_matcher`);
    /// `delete` and `digest` go among the options.
    ///
    /// # Errors
    /// `matcher 'x' not found`, a stale digest.
    pub async fn update_matcher(&self, name: &str, options: &[(&str, &str)]) -> Result<()> {
        let path = format!("/cluster/notifications/matchers/{}", seg(name));
        self.send(Method::PUT, &path, params(options)).await
    }

    /// `DELETE /cluster/notifications/matchers/{name}` (`delete_matcher`).
    ///
    /// # Errors
    /// `matcher 'x' not found`.
    pub async fn delete_matcher(&self, name: &str) -> Result<()> {
        let path = format!("/cluster/notifications/matchers/{}", seg(name));
        self.send(Method::DELETE, &path, Params::new()).await
    }

    /// `GET /cluster/notifications/endpoints/gotify` (`get_gotify_endpoints`).
    ///
    /// # Errors
    /// 403 without `Mapping.*` on `/mapping/notifications`.
    pub async fn get_gotify_endpoints(&self) -> Result<Vec<Map<String, Value>>> {
        self.list(&endpoint_path("gotify", None)).await
    }

    /// `GET /cluster/notifications/endpoints/gotify/{name}` (`get_gotify_endpoint`), with the `digest`.
    ///
    /// # Errors
    /// `endpoint 'x' not found`.
    pub async fn get_gotify_endpoint(&self, name: &str) -> Result<Map<String, Value>> {
        self.one(&endpoint_path("gotify", Some(name))).await
    }

    /// `POST /cluster/notifications/endpoints/gotify` (`create_gotify_endpoint`): a Gotify target.
    ///
    /// # Errors
    /// `Cannot create 'x', an entity with the same name already exists`.
    pub async fn create_gotify_endpoint(&self, name: &str, options: &[(&str, &str)]) -> Result<()> {
        self.create_endpoint("gotify", name, options).await
    }

    /// `PUT /cluster/notifications/endpoints/gotify/{name}` (`update_gotify_endpoint`); `delete` and
    /// `digest` go among the options.
    ///
    /// # Errors
    /// `endpoint 'x' not found`, a stale digest.
    pub async fn update_gotify_endpoint(&self, name: &str, options: &[(&str, &str)]) -> Result<()> {
        self.send(
            Method::PUT,
            &endpoint_path("gotify", Some(name)),
            params(options),
        )
        .await
    }

    /// `DELETE /cluster/notifications/endpoints/gotify/{name}` (`delete_gotify_endpoint`); a built-in is
    /// reset to its default.
    ///
    /// # Errors
    /// `endpoint 'x' not found`, `cannot delete 'x', referenced by: m`.
    pub async fn delete_gotify_endpoint(&self, name: &str) -> Result<()> {
        self.send(
            Method::DELETE,
            &endpoint_path("gotify", Some(name)),
            Params::new(),
        )
        .await
    }

    /// `GET /cluster/notifications/endpoints/sendmail` (`get_sendmail_endpoints`).
    ///
    /// # Errors
    /// 403 without `Mapping.*` on `/mapping/notifications`.
    pub async fn get_sendmail_endpoints(&self) -> Result<Vec<Map<String, Value>>> {
        self.list(&endpoint_path("sendmail", None)).await
    }

    /// `GET /cluster/notifications/endpoints/sendmail/{name}` (`get_sendmail_endpoint`), with the `digest`.
    ///
    /// # Errors
    /// `endpoint 'x' not found`.
    pub async fn get_sendmail_endpoint(&self, name: &str) -> Result<Map<String, Value>> {
        self.one(&endpoint_path("sendmail", Some(name))).await
    }

    /// `POST /cluster/notifications/endpoints/sendmail` (`create_sendmail_endpoint`): a sendmail target.
    ///
    /// # Errors
    /// `Cannot create 'x', an entity with the same name already exists`.
    pub async fn create_sendmail_endpoint(
        &self,
        name: &str,
        options: &[(&str, &str)],
    ) -> Result<()> {
        self.create_endpoint("sendmail", name, options).await
    }

    /// `PUT /cluster/notifications/endpoints/sendmail/{name}` (`update_sendmail_endpoint`); `delete` and
    /// `digest` go among the options.
    ///
    /// # Errors
    /// `endpoint 'x' not found`, a stale digest.
    pub async fn update_sendmail_endpoint(
        &self,
        name: &str,
        options: &[(&str, &str)],
    ) -> Result<()> {
        self.send(
            Method::PUT,
            &endpoint_path("sendmail", Some(name)),
            params(options),
        )
        .await
    }

    /// `DELETE /cluster/notifications/endpoints/sendmail/{name}` (`delete_sendmail_endpoint`); a built-in is
    /// reset to its default.
    ///
    /// # Errors
    /// `endpoint 'x' not found`, `cannot delete 'x', referenced by: m`.
    pub async fn delete_sendmail_endpoint(&self, name: &str) -> Result<()> {
        self.send(
            Method::DELETE,
            &endpoint_path("sendmail", Some(name)),
            Params::new(),
        )
        .await
    }

    /// `GET /cluster/notifications/endpoints/smtp` (`get_smtp_endpoints`).
    ///
    /// # Errors
    /// 403 without `Mapping.*` on `/mapping/notifications`.
    pub async fn get_smtp_endpoints(&self) -> Result<Vec<Map<String, Value>>> {
        self.list(&endpoint_path("smtp", None)).await
    }

    /// `GET /cluster/notifications/endpoints/smtp/{name}` (`get_smtp_endpoint`), with the `digest`.
    ///
    /// # Errors
    /// `endpoint 'x' not found`.
    pub async fn get_smtp_endpoint(&self, name: &str) -> Result<Map<String, Value>> {
        self.one(&endpoint_path("smtp", Some(name))).await
    }

    /// `POST /cluster/notifications/endpoints/smtp` (`create_smtp_endpoint`): a SMTP target.
    ///
    /// # Errors
    /// `Cannot create 'x', an entity with the same name already exists`.
    pub async fn create_smtp_endpoint(&self, name: &str, options: &[(&str, &str)]) -> Result<()> {
        self.create_endpoint("smtp", name, options).await
    }

    /// `PUT /cluster/notifications/endpoints/smtp/{name}` (`update_smtp_endpoint`); `delete` and
    /// `digest` go among the options.
    ///
    /// # Errors
    /// `endpoint 'x' not found`, a stale digest.
    pub async fn update_smtp_endpoint(&self, name: &str, options: &[(&str, &str)]) -> Result<()> {
        self.send(
            Method::PUT,
            &endpoint_path("smtp", Some(name)),
            params(options),
        )
        .await
    }

    /// `DELETE /cluster/notifications/endpoints/smtp/{name}` (`delete_smtp_endpoint`); a built-in is
    /// reset to its default.
    ///
    /// # Errors
    /// `endpoint 'x' not found`, `cannot delete 'x', referenced by: m`.
    pub async fn delete_smtp_endpoint(&self, name: &str) -> Result<()> {
        self.send(
            Method::DELETE,
            &endpoint_path("smtp", Some(name)),
            Params::new(),
        )
        .await
    }

    /// `GET /cluster/notifications/endpoints/webhook` (`get_webhook_endpoints`).
    ///
    /// # Errors
    /// 403 without `Mapping.*` on `/mapping/notifications`.
    pub async fn get_webhook_endpoints(&self) -> Result<Vec<Map<String, Value>>> {
        self.list(&endpoint_path("webhook", None)).await
    }

    /// `GET /cluster/notifications/endpoints/webhook/{name}` (`get_webhook_endpoint`), with the `digest`.
    ///
    /// # Errors
    /// `endpoint 'x' not found`.
    pub async fn get_webhook_endpoint(&self, name: &str) -> Result<Map<String, Value>> {
        self.one(&endpoint_path("webhook", Some(name))).await
    }

    /// `POST /cluster/notifications/endpoints/webhook` (`create_webhook_endpoint`): a webhook target.
    ///
    /// # Errors
    /// `Cannot create 'x', an entity with the same name already exists`.
    pub async fn create_webhook_endpoint(
        &self,
        name: &str,
        options: &[(&str, &str)],
    ) -> Result<()> {
        self.create_endpoint("webhook", name, options).await
    }

    /// `PUT /cluster/notifications/endpoints/webhook/{name}` (`update_webhook_endpoint`); `delete` and
    /// `digest` go among the options.
    ///
    /// # Errors
    /// `endpoint 'x' not found`, a stale digest.
    pub async fn update_webhook_endpoint(
        &self,
        name: &str,
        options: &[(&str, &str)],
    ) -> Result<()> {
        self.send(
            Method::PUT,
            &endpoint_path("webhook", Some(name)),
            params(options),
        )
        .await
    }

    /// `DELETE /cluster/notifications/endpoints/webhook/{name}` (`delete_webhook_endpoint`); a built-in is
    /// reset to its default.
    ///
    /// # Errors
    /// `endpoint 'x' not found`, `cannot delete 'x', referenced by: m`.
    pub async fn delete_webhook_endpoint(&self, name: &str) -> Result<()> {
        self.send(
            Method::DELETE,
            &endpoint_path("webhook", Some(name)),
            Params::new(),
        )
        .await
    }
}
