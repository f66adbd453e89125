//! The corosync configuration (`/cluster/config`): its node list, totem
//! section, join information, making a cluster of a standalone node,
//! putting a member into it and taking one out, and joining a standalone
//! node to a cluster.
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! let cfg = client.cluster_config();
//! if cfg.nodes().await?.is_empty() {
//!     let upid = cfg.create("lab", &[]).await?;
//!     client.tasks().wait(&upid).await?;
//! }
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::seg;
use super::tasks::Upid;
use crate::error::Result;
use crate::transport::Params;
use crate::{Client, Secret};

/// The calls of this module; see [`Client::cluster_config`].
#[derive(Debug, Clone, Copy)]
pub struct ClusterConfig<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster/config` calls.
    pub fn cluster_config(&self) -> ClusterConfig<'_> {
        ClusterConfig { client: self }
    }
}

impl ClusterConfig<'_> {
    /// `GET /cluster/config/nodes` (`nodes`): `node`, `name`, `nodeid`,
    /// `quorum_votes`, `ringN_addr` of each member; empty on a
    /// standalone node.
    ///
    /// # Errors
    /// 403 without `Sys.Audit` on `/`.
    pub async fn nodes(&self) -> Result<Vec<Map<String, Value>>> {
        self.client
            .call(Method::GET, "/cluster/config/nodes", &Params::new())
            .await
    }

    /// `GET /cluster/config/totem` (`totem`): `null` on a standalone node.
    ///
    /// # Errors
    /// 403 without `Sys.Audit` on `/`.
    pub async fn totem(&self) -> Result<Value> {
        self.client
            .call(Method::GET, "/cluster/config/totem", &Params::new())
            .await
    }

    /// `GET /cluster/config/join` (`join_info`).
    ///
    /// # Errors
    /// 424 `node is not in a cluster, no join info available!`.
    pub async fn join_info(&self, node: Option<&str>) -> Result<Map<String, Value>> {
        let params = Params::new().opt("node", node);
        self.client
            .call(Method::GET, "/cluster/config/join", &params)
            .await
    }

    /// `GET /cluster/config/apiversion` (`join_api_version`).
    ///
    /// # Errors
    /// 403 without `Sys.Audit` on `/`.
    pub async fn join_api_version(&self) -> Result<u64> {
        self.client
            .call(Method::GET, "/cluster/config/apiversion", &Params::new())
            .await
    }

    /// `GET /cluster/config/qdevice` (`status`).
    ///
    /// # Errors
    /// 403 without `Sys.Audit` on `/`.
    pub async fn qdevice_status(&self) -> Result<Map<String, Value>> {
        self.client
            .call(Method::GET, "/cluster/config/qdevice", &Params::new())
            .await
    }

    /// `POST /cluster/config` (`create`, root@pam only): a
    /// `clustercreate` task; `links` as `(n, address)`.
    ///
    /// # Errors
    /// `cluster config '/etc/pve/corosync.conf' already exists`.
    pub async fn create(&self, clustername: &str, links: &[(u32, &str)]) -> Result<Upid> {
        let mut params = Params::new().set("clustername", clustername);
        for (n, addr) in links {
            params.push(format!("link{n}"), *addr);
        }
        self.client
            .call(Method::POST, "/cluster/config", &params)
            .await
    }

    /// `DELETE /cluster/config/nodes/{node}` (`delnode`, root@pam only):
    /// the member named `node` (or by its link 0 or link 1 address)
    /// leaves the node list; its guests' configs stay.
    ///
    /// # Errors
    /// `Cannot delete myself from cluster!`, `cluster not ready - no
    /// quorum?`, `Node/IP: x is not a known host of the cluster.`.
    pub async fn delnode(&self, node: &str) -> Result<()> {
        let path = format!("/cluster/config/nodes/{}", seg(node));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `POST /cluster/config/nodes/{node}` (`addnode`, root@pam only):
    /// `node` enters the node list with `links` as `(n, address)` (or
    /// the request's `new_node_ip` on a one-link cluster); answers the new
    /// `corosync.conf` and the cluster's auth key.
    ///
    /// # Errors
    /// `corosync: address 'a' already used on link ringN_addr by node
    /// 'x'`, `corosync: link N exists in cluster config but wasn't
    /// specified for new node` (and the reverse), `no links and no
    /// fallback ip (new_node_ip) given, cannot join cluster`, `can't add
    /// existing node 'x'`, `cluster not ready - no quorum?`.
    pub async fn addnode(
        &self,
        node: &str,
        links: &[(u32, &str)],
        req: &AddNodeRequest,
    ) -> Result<AddedNode> {
        let path = format!("/cluster/config/nodes/{}", seg(node));
        let mut params = Params::new()
            .opt("new_node_ip", req.new_node_ip.as_deref())
            .opt("nodeid", req.nodeid)
            .opt("votes", req.votes)
            .opt("apiversion", req.apiversion);
        if req.force {
            params.push("force", true);
        }
        for (n, addr) in links {
            params.push(format!("link{n}"), *addr);
        }
        self.client.call(Method::POST, &path, &params).await
    }
}

impl ClusterConfig<'_> {
    /// `POST /cluster/config/join` (`join`, root@pam only): this node
    /// joins the cluster `req.hostname` belongs to (`pvecm add`): a
    /// `clusterjoin` task that logs in there as root@pam (its
    /// certificate trusted by `req.fingerprint` alone), asks the
    /// cluster's `addnode` and finishes locally. Wait for it with
    /// [`crate::api::tasks::Tasks::wait`].
    ///
    /// # Errors
    /// 403 for anyone but root@pam; 400 for a malformed parameter. The
    /// join's own refusals end the task: `Check if node may join a
    /// cluster failed!`, `fingerprint '...' not verified, abort!`, `401
    /// authentication failure`, `Cluster join aborted!`.
    pub async fn join(&self, req: &JoinRequest) -> Result<Upid> {
        let mut params = Params::new()
            .set("hostname", req.hostname.as_str())
            .set("fingerprint", req.fingerprint.as_str())
            .set("password", req.password.expose())
            .opt("nodeid", req.nodeid)
            .opt("votes", req.votes)
            .opt("force", req.force);
        for (n, addr) in &req.links {
            params.push(format!("link{n}"), addr.as_str());
        }
        self.client
            .call(Method::POST, "/cluster/config/join", &params)
            .await
    }
}

/// The parameters of [`ClusterConfig::join`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinRequest {
    /// `hostname`: a member of the cluster (its host name or address).
    pub hostname: String,
    /// `fingerprint`: the SHA-256 fingerprint of its certificate
    /// (`AB:CD:...`, as `GET /cluster/config/join` gives its `pve_fp`).
    pub fingerprint: String,
    /// `password`: root@pam's password on the cluster.
    pub password: Secret,
    /// `nodeid` (the lowest free one unless given).
    pub nodeid: Option<u64>,
    /// `votes` (1 unless given).
    pub votes: Option<u64>,
    /// `force`: join despite `assert_joinable`'s findings.
    pub force: Option<bool>,
    /// `linkN` as `(n, address)` (the node's address on link 0 when
    /// none is given).
    pub links: Vec<(u32, String)>,
}

impl JoinRequest {
    /// Joins through `hostname`, its certificate's `fingerprint`, as
    /// root@pam with `password`.
    pub fn new(
        hostname: impl Into<String>,
        fingerprint: impl Into<String>,
        password: impl Into<Secret>,
    ) -> Self {
        Self {
            hostname: hostname.into(),
            fingerprint: fingerprint.into(),
            password: password.into(),
            nodeid: None,
            votes: None,
            force: None,
            links: Vec::new(),
        }
    }
}

/// The optional parameters of [`ClusterConfig::addnode`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddNodeRequest {
    /// `new_node_ip`: link 0's address when no links are given.
    pub new_node_ip: Option<String>,
    /// `nodeid` (the lowest free one unless given).
    pub nodeid: Option<u64>,
    /// `votes` (1 unless given).
    pub votes: Option<u64>,
    /// `apiversion`: the joining node's join API version.
    pub apiversion: Option<u64>,
    /// `force`: overwrite a listed node with the same votes and node id.
    pub force: bool,
}

/// The answer of [`ClusterConfig::addnode`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AddedNode {
    /// The new `corosync.conf`.
    pub corosync_conf: String,
    /// `/etc/corosync/authkey`.
    pub corosync_authkey: String,
    /// `verify_conf`'s warnings.
    #[serde(default)]
    pub warnings: Vec<String>,
}
