//! [`Pve`]: a connected client and the reads the operator makes with it.

use std::collections::BTreeMap;

use pve_client::Client;
use pve_client::api::cluster::ClusterResource;
use pve_client::api::tasks::Upid;
use serde_json::Value;

use super::REQUIRED_PRIVILEGES;
use crate::error::Result;
use crate::plan;

/// A VM's config as `GET .../pending` lists it.
#[derive(Debug, Default)]
pub(super) struct VmState {
    /// As `GET .../config` shows it.
    pub(super) config: BTreeMap<String, String>,
    /// The pending changes.
    pub(super) pending: BTreeMap<String, String>,
    /// The values in force of the keys with a pending change.
    pub(super) in_force: BTreeMap<String, String>,
}

/// A connected client. Every request goes through pve-client's typed
/// calls, named after PVE's methods; the client's observers count them in
/// the metrics (see [`Operator::connect`](super::Operator::connect)).
#[derive(Clone)]
pub struct Pve {
    pub(super) client: Client,
}

impl Pve {
    /// Waits for a task.
    pub(super) async fn wait(&self, upid: Upid) -> Result<()> {
        self.client.tasks().wait(&upid).await?;
        Ok(())
    }

    /// `GET /version` (`version`).
    pub(super) async fn version(&self) -> Result<String> {
        Ok(self.client.version().await?.version)
    }

    /// `GET /cluster/resources` (`resources`).
    pub(super) async fn resources(&self) -> Result<Vec<ClusterResource>> {
        Ok(self.client.cluster().resources(None).await?)
    }

    /// `GET .../pending` (`vm_pending`): the config as `GET .../config`
    /// shows it (pending values applied, pending deletions gone), the
    /// pending changes (`key -> value`, `key -> ""` for a deletion) and
    /// the values they replace.
    pub(super) async fn vm_state(&self, node: &str, vmid: u32) -> Result<VmState> {
        let items = self.client.qemu().vm_pending(node, vmid).await?;
        let mut st = VmState::default();
        for i in items {
            if i.key == "digest" {
                continue;
            }
            let pending_delete = i.delete.is_some_and(|d| d > 0);
            if (pending_delete || i.pending.is_some())
                && let Some(v) = &i.value
            {
                st.in_force.insert(i.key.clone(), text(v));
            }
            if pending_delete {
                st.pending.insert(i.key.clone(), String::new());
                continue;
            }
            if let Some(p) = &i.pending {
                st.pending.insert(i.key.clone(), text(p));
                st.config.insert(i.key.clone(), text(p));
            } else if let Some(v) = &i.value {
                st.config.insert(i.key.clone(), text(v));
            }
        }
        Ok(st)
    }

    /// `GET .../status/current` (`vm_status`): whether it is paused.
    pub(super) async fn paused(&self, node: &str, vmid: u32) -> Result<bool> {
        Ok(self.client.qemu().vm_status(node, vmid).await?.is_paused())
    }

    /// `GET .../agent/network-get-interfaces`: the usable addresses.
    pub(super) async fn agent_ips(&self, node: &str, vmid: u32) -> Result<Vec<String>> {
        let ifaces = self
            .client
            .agent()
            .network_get_interfaces(node, vmid)
            .await?;
        Ok(plan::agent_ips(
            &serde_json::to_value(ifaces).unwrap_or(Value::Null),
        ))
    }

    /// `GET /access/permissions` (`permissions`) on the bridge's
    /// `/sdn/zones/localnetwork/{bridge}`: whether the caller has SDN.Use
    /// there (PVE hides and refuses a bridge without it).
    pub(super) async fn may_use_bridge(&self, bridge: &str) -> Result<bool> {
        let path = format!("/sdn/zones/localnetwork/{bridge}");
        let perms = self.client.access().permissions(None, Some(&path)).await?;
        Ok(perms.values().any(|p| p.contains_key("SDN.Use")))
    }

    /// `GET /access/permissions` (`permissions`): the privileges of
    /// [`REQUIRED_PRIVILEGES`] the caller lacks, as `PRIV on PATH`.
    pub(super) async fn missing_privileges(&self) -> Result<Vec<String>> {
        let mut missing = Vec::new();
        for (path, privs) in REQUIRED_PRIVILEGES {
            let perms = self.client.access().permissions(None, Some(path)).await?;
            let have = |p: &str| perms.values().any(|m| m.contains_key(p));
            for p in *privs {
                // `A|B`: either (VM.Monitor became the guest-agent
                // privileges in PVE 9).
                if !p.split('|').any(have) {
                    missing.push(format!("{p} on {path}"));
                }
            }
        }
        Ok(missing)
    }

    /// `GET /nodes/{node}/storage/{storage}/status` (`read_status`): the
    /// storage's PVE type.
    pub(super) async fn storage_type(&self, node: &str, storage: &str) -> Result<String> {
        Ok(self.client.storage().read_status(node, storage).await?.kind)
    }

    /// `GET /storage/{storage}` (`read`): the storage's options (`sparse`,
    /// `preallocation`, ...); `None` when the caller may not read them
    /// (PVE asks Datastore.Allocate) or the call fails.
    pub(super) async fn storage_options(
        &self,
        storage: &str,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        self.client
            .storage()
            .read(storage)
            .await
            .ok()
            .map(|c| c.extra)
    }

    /// `GET /nodes/{node}/network` (`index`): the bridges.
    pub(super) async fn bridges(&self, node: &str) -> Result<Vec<String>> {
        Ok(self
            .client
            .network()
            .index(node, None)
            .await?
            .into_iter()
            .filter(|i| matches!(i.kind.as_str(), "bridge" | "OVSBridge"))
            .map(|i| i.iface)
            .collect())
    }

    /// `GET .../snapshot` (`snapshot_list`): the names, without `current`.
    pub(super) async fn snapshot_names(&self, node: &str, vmid: u32) -> Result<Vec<String>> {
        Ok(self
            .client
            .qemu()
            .snapshot_list(node, vmid)
            .await?
            .into_iter()
            .map(|s| s.name)
            .filter(|n| n != "current")
            .collect())
    }

    /// `GET .../storage/{storage}/content` (`index`): the volume IDs.
    pub(super) async fn volids(&self, node: &str, storage: &str) -> Result<Vec<String>> {
        Ok(self
            .client
            .storage_content()
            .index(node, storage, &Default::default())
            .await?
            .into_iter()
            .map(|c| c.volid)
            .collect())
    }

    /// `GET .../storage/{storage}/content/{volume}` (`info`).
    pub(super) async fn volume_info(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
    ) -> Result<pve_client::api::storage::VolumeInfo> {
        Ok(self
            .client
            .storage_content()
            .info(node, storage, volume)
            .await?)
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
