//! `/cluster`: status, resources, the next free VMID and the datacenter
//! options (`datacenter.cfg`).

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Client;
use crate::de;
use crate::error::{Error, Result};
use crate::transport::Params;

/// The `/cluster` area; see [`Client::cluster`].
#[derive(Debug, Clone, Copy)]
pub struct Cluster<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster` calls.
    pub fn cluster(&self) -> Cluster<'_> {
        Cluster { client: self }
    }
}

/// One entry of `/cluster/status`: the cluster itself (`type:
/// "cluster"`) or a node (`type: "node"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterStatusItem {
    /// `cluster` or `node/<name>`.
    pub id: String,
    /// The cluster's or node's name.
    pub name: String,
    /// `cluster` or `node`.
    #[serde(rename = "type")]
    pub kind: String,
    /// \[node\] its address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// \[node\] the subscription level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// \[node\] whether it is the node that answered.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub local: Option<bool>,
    /// \[node\] its corosync node ID.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub nodeid: Option<u64>,
    /// \[node\] whether it is online.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub online: Option<bool>,
    /// \[cluster\] the number of nodes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub nodes: Option<u64>,
    /// \[cluster\] whether it has quorum.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub quorate: Option<bool>,
    /// \[cluster\] the config version.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub version: Option<u64>,
    /// Anything else PVE sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `type` filter of `/cluster/resources`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceType {
    /// Guests (QEMU and LXC).
    Vm,
    /// Storages, one entry per node.
    Storage,
    /// Nodes.
    Node,
    /// SDN entries.
    Sdn,
}

impl ResourceType {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vm => "vm",
            Self::Storage => "storage",
            Self::Node => "node",
            Self::Sdn => "sdn",
        }
    }
}

/// One entry of `/cluster/resources`. Which fields are set depends on
/// `kind` (`qemu`, `lxc`, `node`, `storage`, `pool`, `sdn`, `network`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterResource {
    /// `qemu/100`, `node/pve`, `storage/pve/local`, ...
    pub id: String,
    /// The entry's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The node it lives on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// `running`, `stopped`, `online`, `available`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// \[guest\] its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// \[guest\] its VMID.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub vmid: Option<u64>,
    /// CPU use, a fraction of `maxcpu`.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpu: Option<f64>,
    /// CPUs.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub maxcpu: Option<f64>,
    /// Memory in use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub mem: Option<u64>,
    /// Memory, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxmem: Option<u64>,
    /// Disk in use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub disk: Option<u64>,
    /// Disk size, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxdisk: Option<u64>,
    /// Seconds since start.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub uptime: Option<u64>,
    /// \[guest\] whether it is a template.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub template: Option<bool>,
    /// \[guest\] its lock, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// \[guest\] its tags, `;`-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<String>,
    /// \[guest, pool\] its pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// \[storage\] its ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
    /// \[storage\] its plugin type (`dir`, `lvmthin`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugintype: Option<String>,
    /// \[storage\] the content types it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// \[storage\] whether it is shared.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub shared: Option<bool>,
    /// Anything else PVE sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Cluster<'_> {
    /// `GET /cluster/status` (`get_status`): the cluster and its nodes.
    ///
    /// # Errors
    /// [`Error::Permission`] without Sys.Audit on `/`.
    pub async fn get_status(&self) -> Result<Vec<ClusterStatusItem>> {
        self.client
            .call(Method::GET, "/cluster/status", &Params::new())
            .await
    }

    /// `GET /cluster/resources` (`resources`), optionally of one type.
    ///
    /// # Errors
    /// As any call.
    pub async fn resources(&self, kind: Option<ResourceType>) -> Result<Vec<ClusterResource>> {
        let params = Params::new().opt("type", kind.map(ResourceType::as_str));
        self.client
            .call(Method::GET, "/cluster/resources", &params)
            .await
    }

    /// `GET /cluster/nextid` (`nextid`): the lowest free VMID, or `vmid`
    /// itself if it is free. Nothing is reserved: two callers may get the
    /// same ID.
    ///
    /// # Errors
    /// [`Error::Validation`] (on `vmid`) when `vmid` is taken.
    pub async fn nextid(&self, vmid: Option<u32>) -> Result<u32> {
        let params = Params::new().opt("vmid", vmid);
        let v: Value = self
            .client
            .call(Method::GET, "/cluster/nextid", &params)
            .await?;
        // PVE answers a string although the schema says integer.
        let id = match &v {
            Value::String(s) => s.parse().ok(),
            Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
            _ => None,
        };
        id.ok_or_else(|| Error::Decode {
            message: format!("/cluster/nextid: not a VMID: {v}"),
        })
    }
}

/// `tag-style` of the datacenter options, as `GET /cluster/options`
/// answers it (parsed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TagStyle {
    /// Whether tags are compared (and kept) case-sensitively.
    #[serde(
        rename = "case-sensitive",
        default,
        deserialize_with = "de::opt_bool01",
        skip_serializing_if = "Option::is_none"
    )]
    pub case_sensitive: Option<bool>,
    /// `config` (as written) or `alphabetical` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering: Option<String>,
    /// The web interface's tag shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// The web interface's colours per tag.
    #[serde(rename = "color-map", default, skip_serializing_if = "Option::is_none")]
    pub color_map: Option<String>,
}

/// `GET /cluster/options`: the datacenter options the caller may read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatacenterOptions {
    /// How guests' tags are written and shown.
    #[serde(rename = "tag-style", default, skip_serializing_if = "Option::is_none")]
    pub tag_style: Option<TagStyle>,
    /// The tags the caller may set and see.
    #[serde(rename = "allowed-tags", default)]
    pub allowed_tags: Vec<String>,
    /// Anything else PVE sent (`description`, `mac_prefix`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Cluster<'_> {
    /// `GET /cluster/options` (`get_options`): everything with Sys.Audit
    /// on `/`, else only `console` and `tag-style`; `allowed-tags` always.
    ///
    /// # Errors
    /// As any call.
    pub async fn get_options(&self) -> Result<DatacenterOptions> {
        self.client
            .call(Method::GET, "/cluster/options", &Params::new())
            .await
    }

    /// `PUT /cluster/options` (`set_options`) for the tag style: a
    /// property string such as `case-sensitive=1,ordering=config`, or
    /// `None` to remove it.
    ///
    /// # Errors
    /// [`Error::Permission`] without Sys.Modify on `/`;
    /// [`Error::Validation`] for a malformed property string.
    pub async fn set_tag_style(&self, tag_style: Option<&str>) -> Result<()> {
        let params = match tag_style {
            Some(style) => Params::new().set("tag-style", style),
            None => Params::new().set("delete", "tag-style"),
        };
        let _: Value = self
            .client
            .call(Method::PUT, "/cluster/options", &params)
            .await?;
        Ok(())
    }

    /// `PUT /cluster/options` (`set_options`): each option as the string
    /// PVE writes (`("migration", "type=insecure")`, `("next-id",
    /// "lower=5000")`), then the options in `delete` removed.
    ///
    /// # Errors
    /// [`Error::Permission`] without Sys.Modify on `/`;
    /// [`Error::Validation`] for a malformed value; `lower (x) <= upper
    /// (y) boundary rule broken` for crossed `next-id` bounds.
    pub async fn set_options(&self, options: &[(&str, &str)], delete: &[&str]) -> Result<()> {
        let mut params =
            Params::new().opt("delete", (!delete.is_empty()).then(|| delete.join(",")));
        for (k, v) in options {
            params.push(*k, *v);
        }
        let _: Value = self
            .client
            .call(Method::PUT, "/cluster/options", &params)
            .await?;
        Ok(())
    }
}
