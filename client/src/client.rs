//! [`Client`]: the entry point. Typed calls hang off it by area
//! ([`Client::cluster`], [`Client::nodes`], [`Client::tasks`],
//! [`Client::access`], [`Client::version`]); [`Client::get`] and friends
//! reach anything not typed yet.

use std::sync::{Arc, OnceLock};

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::Value;

use pve_schema::{Release, Spec};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::transport::{Answer, Params, TicketInfo, Transport};

/// A PVE API client. Cheap to clone; clones share the connection pool and
/// the login session.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    transport: Transport,
    /// The release `/version` reported, once known.
    release: OnceLock<Release>,
}

/// Characters a raw path may not carry as they are.
const RAW_PATH: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

impl Client {
    /// A client for `config`. Nothing is sent yet: the first call logs in.
    ///
    /// # Errors
    /// [`Error::Config`] when the TLS settings cannot be used.
    pub fn new(config: Config) -> Result<Self> {
        let transport = Transport::new(&config)?;
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                transport,
                release: OnceLock::new(),
            }),
        })
    }

    /// A client for `config`, checked against the server: it logs in
    /// (with a password) and reads `/version`, so that an unreachable
    /// server or rejected credentials stop a program at start.
    ///
    /// # Errors
    /// [`Error::Network`], [`Error::Tls`] or [`Error::Timeout`] when the
    /// server cannot be reached; [`Error::Authentication`] when it refuses
    /// the credentials.
    pub async fn connect(config: Config) -> Result<Self> {
        let client = Self::new(config)?;
        client.inner.transport.login().await?;
        client.version().await?;
        Ok(client)
    }

    /// A client from the `PVE_*` environment variables, checked against
    /// the server (see [`Config::from_env`] and [`Client::connect`]).
    ///
    /// # Errors
    /// As [`Config::from_env`] and [`Client::connect`].
    pub async fn from_env() -> Result<Self> {
        Self::connect(Config::from_env()?).await
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Renews the login ticket now, with the current ticket as the
    /// password (as PVE allows). Does nothing with an API token.
    ///
    /// # Errors
    /// When PVE refuses the renewal and no password is configured, or
    /// cannot be reached.
    pub async fn renew_ticket(&self) -> Result<()> {
        self.inner.transport.renew().await
    }

    /// The PVE release whose schema describes the server: the one its
    /// `/version` reported ([`Client::connect`] and [`Client::version`]
    /// read it), else 9.2. See [`crate::schema::release_for`].
    pub fn release(&self) -> Release {
        self.known_release().unwrap_or(Release::V9_2)
    }

    /// The release the server reported, if the client has asked yet.
    pub fn known_release(&self) -> Option<Release> {
        self.inner.release.get().copied()
    }

    /// The embedded API schema of [`Client::release`].
    pub fn spec(&self) -> &'static Spec {
        pve_schema::spec(self.release())
    }

    /// Remembers the release `/version` reported.
    pub(crate) fn note_release(&self, release: &str) {
        let _ = self.inner.release.set(crate::schema::release_for(release));
    }

    /// Hands a successful answer to the configured observer.
    fn observe(&self, method: &Method, path: &str, answer: &Answer) {
        if let Some(o) = &self.inner.config.observer {
            (o.0)(method, path, answer);
        }
    }

    /// Hands a failure to the configured error observer.
    fn failed<T>(&self, method: &Method, path: &str, r: Result<T>) -> Result<T> {
        if let (Err(e), Some(o)) = (&r, &self.inner.config.error_observer) {
            (o.0)(method, path, e);
        }
        r
    }

    /// The ticket in use (user and issue time by PVE's clock), if any.
    pub async fn ticket_info(&self) -> Option<TicketInfo> {
        self.inner.transport.ticket_info().await
    }

    /// Any call: `path` is relative to `/api2/json` (`/nodes/pve/status`)
    /// and sent as given, apart from characters no URL path may hold.
    ///
    /// # Errors
    /// The [`Error`] PVE's answer or the network gives.
    pub async fn request(&self, method: Method, path: &str, params: &Params) -> Result<Answer> {
        let path = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("/{path}")
        };
        let path = percent_encoding::utf8_percent_encode(&path, RAW_PATH).to_string();
        let r = self
            .inner
            .transport
            .call(method.clone(), &path, params)
            .await;
        let answer = self.failed(&method, &path, r)?;
        self.observe(&method, &path, &answer);
        Ok(answer)
    }

    /// `GET path`: the `data` member.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn get(&self, path: &str, params: &Params) -> Result<Value> {
        Ok(self.request(Method::GET, path, params).await?.data)
    }

    /// `POST path` (PVE's `create`): the `data` member, often a task's
    /// UPID.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn post(&self, path: &str, params: &Params) -> Result<Value> {
        Ok(self.request(Method::POST, path, params).await?.data)
    }

    /// `PUT path` (PVE's `set`): the `data` member.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn put(&self, path: &str, params: &Params) -> Result<Value> {
        Ok(self.request(Method::PUT, path, params).await?.data)
    }

    /// `DELETE path`: the `data` member.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn delete(&self, path: &str, params: &Params) -> Result<Value> {
        Ok(self.request(Method::DELETE, path, params).await?.data)
    }

    /// One call through the transport, its failure and its answer shown
    /// to the observers.
    async fn answered(&self, method: Method, path: &str, params: &Params) -> Result<Answer> {
        let r = self
            .inner
            .transport
            .call(method.clone(), path, params)
            .await;
        let answer = self.failed(&method, path, r)?;
        self.observe(&method, path, &answer);
        Ok(answer)
    }

    /// A typed call: `path` must already be encoded (see
    /// [`crate::api::seg`]).
    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        params: &Params,
    ) -> Result<T> {
        let answer = self.answered(method, path, params).await?;
        decode(answer.data, path)
    }

    /// A download: the answer's bytes (an `application/octet-stream`
    /// answer), or the JSON `data` as text when the server answered JSON.
    pub(crate) async fn call_download(
        &self,
        method: Method,
        path: &str,
        params: &Params,
    ) -> Result<Vec<u8>> {
        let answer = self.answered(method, path, params).await?;
        Ok(match answer.download {
            Some(bytes) => bytes,
            None => match answer.data {
                Value::String(s) => s.into_bytes(),
                other => other.to_string().into_bytes(),
            },
        })
    }

    /// A typed `multipart/form-data` upload.
    pub(crate) async fn call_upload<T: DeserializeOwned>(
        &self,
        path: &str,
        fields: &[(String, String)],
        file_name: &str,
        data: &[u8],
    ) -> Result<T> {
        let r = self
            .inner
            .transport
            .upload(path, fields, file_name, data)
            .await;
        let answer = self.failed(&Method::POST, path, r)?;
        self.observe(&Method::POST, path, &answer);
        decode(answer.data, path)
    }

    /// A typed call that also returns `total`.
    pub(crate) async fn call_with_total<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        params: &Params,
    ) -> Result<(T, Option<u64>)> {
        let answer = self.answered(method, path, params).await?;
        Ok((decode(answer.data, path)?, answer.total))
    }

    /// A typed call that also returns the other top-level members
    /// (`extra`, as in [`Answer::extra`]).
    pub(crate) async fn call_with_extra<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        params: &Params,
    ) -> Result<(T, serde_json::Map<String, Value>)> {
        let answer = self.answered(method, path, params).await?;
        Ok((decode(answer.data, path)?, answer.extra))
    }
}

fn decode<T: DeserializeOwned>(data: Value, path: &str) -> Result<T> {
    serde_json::from_value(data).map_err(|e| Error::Decode {
        message: format!("{path}: {e}"),
    })
}
