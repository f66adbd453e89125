//! `/nodes/{node}/network`: a node's interfaces (bridges, bonds, VLANs).
//!
//! Changes go to a pending `interfaces.new`; `reload_network_config`
//! applies them (a `srvreload` task) and `revert_network_changes` drops
//! them.
//!
//! ```
//! use pve_client::api::network::NetworkOptions;
//!
//! let bridge = NetworkOptions {
//!     cidr: Some("192.0.2.1/24".into()),
//!     bridge_ports: Some("eno2".into()),
//!     bridge_vlan_aware: Some(true),
//!     autostart: Some(true),
//!     ..NetworkOptions::default()
//! };
//! # let _ = bridge;
//! ```

use std::collections::BTreeMap;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::{TaskStatus, Upid};
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::{ParamValue, Params};

/// The node network area; see [`Client::network`].
#[derive(Debug, Clone, Copy)]
pub struct Network<'a> {
    client: &'a Client,
}

impl Client {
    /// The node network calls.
    pub fn network(&self) -> Network<'_> {
        Network { client: self }
    }
}

/// An interface, as `GET /nodes/{node}/network` lists it and `GET
/// .../network/{iface}` reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkInterface {
    /// The name (`vmbr0`, `bond0`, `eno1.100`); left out by
    /// `network_config`.
    #[serde(default)]
    pub iface: String,
    /// `bridge`, `bond`, `eth`, `vlan`, `alias`, `OVSBridge`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// Whether it is up.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub active: Option<bool>,
    /// Whether it comes up at boot.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub autostart: Option<bool>,
    /// Whether the device exists (physical NICs).
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub exists: Option<bool>,
    /// `static`, `manual`, `dhcp`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The IPv6 method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method6: Option<String>,
    /// The IPv4 address and prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr: Option<String>,
    /// The IPv4 address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The IPv4 netmask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netmask: Option<String>,
    /// The IPv4 gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    /// The IPv6 address and prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr6: Option<String>,
    /// The IPv6 gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway6: Option<String>,
    /// A bridge's ports (space-separated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge_ports: Option<String>,
    /// Whether a bridge is VLAN-aware.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub bridge_vlan_aware: Option<bool>,
    /// A VLAN-aware bridge's VLANs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge_vids: Option<String>,
    /// A bond's members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slaves: Option<String>,
    /// A bond's mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bond_mode: Option<String>,
    /// A VLAN's ID.
    #[serde(rename = "vlan-id", default, deserialize_with = "de::opt_u64")]
    pub vlan_id: Option<u64>,
    /// A VLAN's device.
    #[serde(
        rename = "vlan-raw-device",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub vlan_raw_device: Option<String>,
    /// MTU.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub mtu: Option<u64>,
    /// The comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comments: Option<String>,
    /// `inet`, `inet6`.
    #[serde(default, deserialize_with = "de::list")]
    pub families: Vec<String>,
    /// Anything else PVE sent (`priority`, `options`, `ovs_*`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The settings of `create_network` and `update_network`; unset fields
/// are left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetworkOptions {
    /// Bring it up at boot.
    pub autostart: Option<bool>,
    /// IPv4 address and prefix (`192.0.2.1/24`).
    pub cidr: Option<String>,
    /// IPv4 gateway.
    pub gateway: Option<String>,
    /// IPv6 address and prefix.
    pub cidr6: Option<String>,
    /// IPv6 gateway.
    pub gateway6: Option<String>,
    /// A bridge's ports (space-separated).
    pub bridge_ports: Option<String>,
    /// Make a bridge VLAN-aware.
    pub bridge_vlan_aware: Option<bool>,
    /// A VLAN-aware bridge's VLANs (`2-4094`).
    pub bridge_vids: Option<String>,
    /// A bond's members (space-separated).
    pub slaves: Option<String>,
    /// A bond's mode (`balance-rr`, `active-backup`, `802.3ad`, ...).
    pub bond_mode: Option<String>,
    /// A VLAN's ID.
    pub vlan_id: Option<u16>,
    /// A VLAN's device.
    pub vlan_raw_device: Option<String>,
    /// MTU.
    pub mtu: Option<u32>,
    /// A comment.
    pub comments: Option<String>,
    /// Any other parameter (`bond_xmit_hash_policy`, `ovs_*`, ...).
    pub extra: BTreeMap<String, String>,
    /// \[update\] settings to delete.
    pub delete: Vec<String>,
}

impl NetworkOptions {
    /// Sets any other parameter.
    #[must_use]
    pub fn set(mut self, key: &str, value: impl ParamValue) -> Self {
        self.extra.insert(key.into(), value.to_param());
        self
    }

    fn params(&self, iface: &str, kind: &str) -> Params {
        let mut p = Params::new()
            .set("iface", iface)
            .set("type", kind)
            .opt("autostart", self.autostart)
            .opt("cidr", self.cidr.as_deref())
            .opt("gateway", self.gateway.as_deref())
            .opt("cidr6", self.cidr6.as_deref())
            .opt("gateway6", self.gateway6.as_deref())
            .opt("bridge_ports", self.bridge_ports.as_deref())
            .opt("bridge_vlan_aware", self.bridge_vlan_aware)
            .opt("bridge_vids", self.bridge_vids.as_deref())
            .opt("slaves", self.slaves.as_deref())
            .opt("bond_mode", self.bond_mode.as_deref())
            .opt("vlan-id", self.vlan_id)
            .opt("vlan-raw-device", self.vlan_raw_device.as_deref())
            .opt("mtu", self.mtu)
            .opt("comments", self.comments.as_deref());
        for (k, v) in &self.extra {
            p.push(k.clone(), v);
        }
        if !self.delete.is_empty() {
            p.push("delete", self.delete.join(","));
        }
        p
    }
}

/// What `GET /nodes/{node}/network` answers in full: the interfaces and
/// the top-level `changes`.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkIndex {
    /// The interfaces, with pending changes applied.
    pub interfaces: Vec<NetworkInterface>,
    /// The pending changes as a unified diff of `/etc/network/interfaces`
    /// against `interfaces.new`; `None` when nothing is pending.
    pub changes: Option<String>,
}

fn net_path(node: &str, iface: Option<&str>) -> String {
    match iface {
        Some(i) => format!("/nodes/{}/network/{}", seg(node), seg(i)),
        None => format!("/nodes/{}/network", seg(node)),
    }
}

impl Network<'_> {
    /// `GET /nodes/{node}/network` (`index`): the interfaces, with
    /// pending changes applied; of type `kind` if given (`bridge`,
    /// `any_bridge`, `any_local_bridge`, ...).
    ///
    /// # Errors
    /// As any call.
    pub async fn index(&self, node: &str, kind: Option<&str>) -> Result<Vec<NetworkInterface>> {
        let params = Params::new().opt("type", kind);
        self.client
            .call(Method::GET, &net_path(node, None), &params)
            .await
    }

    /// `GET /nodes/{node}/network` (`index`) with the answer's top-level
    /// `changes` member: the pending changes as a diff, if any.
    ///
    /// # Errors
    /// As [`Network::index`].
    pub async fn index_with_changes(&self, node: &str, kind: Option<&str>) -> Result<NetworkIndex> {
        let params = Params::new().opt("type", kind);
        let (interfaces, extra): (Vec<NetworkInterface>, _) = self
            .client
            .call_with_extra(Method::GET, &net_path(node, None), &params)
            .await?;
        let changes = extra
            .get("changes")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        Ok(NetworkIndex {
            interfaces,
            changes,
        })
    }

    /// `GET /nodes/{node}/network/{iface}` (`network_config`).
    ///
    /// # Errors
    /// [`crate::Error::Validation`] (`iface`: `interface does not exist`).
    pub async fn network_config(&self, node: &str, iface: &str) -> Result<NetworkInterface> {
        let mut i: NetworkInterface = self
            .client
            .call(Method::GET, &net_path(node, Some(iface)), &Params::new())
            .await?;
        if i.iface.is_empty() {
            i.iface = iface.to_string();
        }
        Ok(i)
    }

    /// `POST /nodes/{node}/network` (`create_network`): a pending new
    /// interface `iface` of type `kind`.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] (`iface`: `interface already
    /// exists`) and PVE's checks of the settings.
    pub async fn create_network(
        &self,
        node: &str,
        iface: &str,
        kind: &str,
        opts: &NetworkOptions,
    ) -> Result<()> {
        let _: Value = self
            .client
            .call(
                Method::POST,
                &net_path(node, None),
                &opts.params(iface, kind),
            )
            .await?;
        Ok(())
    }

    /// `PUT /nodes/{node}/network/{iface}` (`update_network`): a pending
    /// change (PVE wants the type again).
    ///
    /// # Errors
    /// [`crate::Error::Validation`] (`iface`: `interface does not exist`)
    /// and PVE's checks of the settings.
    pub async fn update_network(
        &self,
        node: &str,
        iface: &str,
        kind: &str,
        opts: &NetworkOptions,
    ) -> Result<()> {
        let mut params = opts.params(iface, kind);
        // The path names the interface; the body must not repeat it.
        params = params
            .pairs()
            .iter()
            .filter(|(k, _)| k != "iface")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let _: Value = self
            .client
            .call(Method::PUT, &net_path(node, Some(iface)), &params)
            .await?;
        Ok(())
    }

    /// `DELETE /nodes/{node}/network/{iface}` (`delete_network`): a
    /// pending removal.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] (`iface`: `interface does not exist`).
    pub async fn delete_network(&self, node: &str, iface: &str) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::DELETE, &net_path(node, Some(iface)), &Params::new())
            .await?;
        Ok(())
    }

    /// `PUT /nodes/{node}/network` (`reload_network_config`): applies
    /// the pending changes in a `srvreload` task.
    ///
    /// # Errors
    /// As any call.
    pub async fn reload_network_config(&self, node: &str) -> Result<Upid> {
        self.client
            .call(Method::PUT, &net_path(node, None), &Params::new())
            .await
    }

    /// [`Network::reload_network_config`], then waits for the task.
    ///
    /// # Errors
    /// As [`Network::reload_network_config`] and
    /// [`crate::api::tasks::Tasks::wait`].
    pub async fn reload_network_config_and_wait(&self, node: &str) -> Result<TaskStatus> {
        let upid = self.reload_network_config(node).await?;
        self.client.tasks().wait(&upid).await
    }

    /// `DELETE /nodes/{node}/network` (`revert_network_changes`): drops
    /// the pending changes.
    ///
    /// # Errors
    /// As any call.
    pub async fn revert_network_changes(&self, node: &str) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::DELETE, &net_path(node, None), &Params::new())
            .await?;
        Ok(())
    }
}
