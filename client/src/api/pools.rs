//! `/pools`: resource pools and their members.
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::pools::PoolUpdate;
//!
//! client.pools().create_pool("prod", Some("Production")).await?;
//! client
//!     .pools()
//!     .update_pool("prod", &PoolUpdate::default().vms(&[100]).storage(&["local"]))
//!     .await?;
//! let pool = client.pools().read_pool("prod", None).await?;
//! # let _ = pool;
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

/// The `/pools` area; see [`Client::pools`].
#[derive(Debug, Clone, Copy)]
pub struct Pools<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/pools` calls.
    pub fn pools(&self) -> Pools<'_> {
        Pools { client: self }
    }
}

/// A pool as `GET /pools` lists it, or with its members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pool {
    /// The pool ID (`prod`, `prod/web`).
    #[serde(default)]
    pub poolid: String,
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Its members, when read with its ID.
    #[serde(default)]
    pub members: Vec<PoolMember>,
}

/// A member of a pool: a guest or a storage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolMember {
    /// `qemu/100`, `storage/pve/local`.
    pub id: String,
    /// `qemu`, `lxc` or `storage`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The node.
    #[serde(default)]
    pub node: String,
    /// \[guest\] its VMID.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub vmid: Option<u64>,
    /// \[storage\] its ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
    /// The figures `/cluster/resources` shows.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The request of `update_pool`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolUpdate {
    /// A new comment.
    pub comment: Option<String>,
    /// Guests to add (or remove).
    pub vms: Vec<u32>,
    /// Storages to add (or remove).
    pub storage: Vec<String>,
    /// Move guests from their pool.
    pub allow_move: bool,
    /// Remove the members instead.
    pub delete: bool,
}

impl PoolUpdate {
    /// Sets the comment.
    #[must_use]
    pub fn comment(mut self, comment: &str) -> Self {
        self.comment = Some(comment.into());
        self
    }

    /// The guests.
    #[must_use]
    pub fn vms(mut self, vms: &[u32]) -> Self {
        self.vms = vms.to_vec();
        self
    }

    /// The storages.
    #[must_use]
    pub fn storage(mut self, storage: &[&str]) -> Self {
        self.storage = storage.iter().map(|s| (*s).to_string()).collect();
        self
    }

    /// Takes guests from the pool they are in.
    #[must_use]
    pub fn allow_move(mut self, yes: bool) -> Self {
        self.allow_move = yes;
        self
    }

    /// Removes the members named instead of adding them.
    #[must_use]
    pub fn delete(mut self, yes: bool) -> Self {
        self.delete = yes;
        self
    }

    fn params(&self, poolid: &str) -> Params {
        let join = |v: Vec<String>| (!v.is_empty()).then(|| v.join(","));
        Params::new()
            .set("poolid", poolid)
            .opt("comment", self.comment.as_deref())
            .opt("vms", join(self.vms.iter().map(u32::to_string).collect()))
            .opt("storage", join(self.storage.clone()))
            .opt("allow-move", self.allow_move.then_some(true))
            .opt("delete", self.delete.then_some(true))
    }
}

impl Pools<'_> {
    /// `GET /pools` (`index`): the pools the caller may audit.
    ///
    /// # Errors
    /// As any call.
    pub async fn index(&self) -> Result<Vec<Pool>> {
        self.client
            .call(Method::GET, "/pools", &Params::new())
            .await
    }

    /// `GET /pools?poolid=` (`read_pool`, the form nested pools need):
    /// the pool with its members, of one `kind` (`qemu`, `lxc`,
    /// `storage`) if given.
    ///
    /// # Errors
    /// `pool 'x' does not exist`.
    pub async fn read_pool(&self, poolid: &str, kind: Option<&str>) -> Result<Pool> {
        let params = Params::new().set("poolid", poolid).opt("type", kind);
        let mut list: Vec<Pool> = self.client.call(Method::GET, "/pools", &params).await?;
        Ok(list.pop().unwrap_or(Pool {
            poolid: poolid.into(),
            comment: None,
            members: Vec::new(),
        }))
    }

    /// `POST /pools` (`create_pool`).
    ///
    /// # Errors
    /// `create pool failed: pool 'x' already exists`, a missing parent.
    pub async fn create_pool(&self, poolid: &str, comment: Option<&str>) -> Result<()> {
        let params = Params::new().set("poolid", poolid).opt("comment", comment);
        let _: Value = self.client.call(Method::POST, "/pools", &params).await?;
        Ok(())
    }

    /// `PUT /pools` (`update_pool`): comment and members.
    ///
    /// # Errors
    /// `update pools failed: VM 100 is already a pool member`, ...
    pub async fn update_pool(&self, poolid: &str, req: &PoolUpdate) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::PUT, "/pools", &req.params(poolid))
            .await?;
        Ok(())
    }

    /// `DELETE /pools` (`delete_pool`): only an empty pool.
    ///
    /// # Errors
    /// `delete pool failed: pool 'x' is not empty (contains VM 100)`.
    pub async fn delete_pool(&self, poolid: &str) -> Result<()> {
        let params = Params::new().set("poolid", poolid);
        let _: Value = self.client.call(Method::DELETE, "/pools", &params).await?;
        Ok(())
    }
}
