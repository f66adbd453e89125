//! ProxmoxCluster and ProxmoxNode statuses.

use std::time::Instant;

use pve_client::api::cluster::ClusterResource;
use tracing::warn;

use super::{Operator, World};
use crate::error::Error;
use crate::types::{
    NodeResources, NodeStatusEntry, Object, ProxmoxClusterStatus, ProxmoxNodeSpec,
    ProxmoxNodeStatus, Usage, now_rfc3339,
};

impl Operator {
    /// Checks a cluster: version, nodes, their use.
    pub async fn reconcile_cluster(&self, world: &World, name: &str) -> ProxmoxClusterStatus {
        let start = Instant::now();
        let mut st = ProxmoxClusterStatus {
            last_health_check: Some(now_rfc3339()),
            ..Default::default()
        };
        let r = async {
            let pve = self.connect(world, name).await?;
            let version = pve.version().await?;
            let res = pve.resources().await?;
            let missing = pve.missing_privileges().await;
            Ok::<_, Error>((version, res, missing))
        }
        .await;
        match r {
            Ok((version, res, missing)) => {
                st.ready = true;
                st.version = Some(version);
                match missing {
                    Ok(m) if !m.is_empty() => {
                        warn!(cluster = name, missing = %m.join(", "), "the operator's PVE user lacks privileges it uses");
                        st.message = Some(format!("missing PVE privileges: {}", m.join(", ")));
                        st.missing_privileges = m;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        st.message = Some(format!("cannot read the PVE privileges: {e}"));
                    }
                }
                st.nodes = node_entries(&res);
                let online = st.nodes.iter().filter(|n| n.ready).count() as u64;
                self.metrics.set_cluster(name, true, online);
            }
            Err(e) => {
                self.metrics.error(e.error_type().as_str(), "cluster");
                self.metrics.set_cluster(name, false, 0);
                if matches!(e.error_type(), crate::error::ErrorType::Authentication) {
                    self.drop_conn(name);
                }
                warn!(cluster = name, error = %e, "cluster health check failed");
                st.message = Some(e.to_string());
            }
        }
        self.metrics
            .reconcile_duration("cluster", start.elapsed().as_secs_f64());
        st
    }

    /// A ProxmoxNode's status, from the cluster's resources.
    pub async fn reconcile_node(
        &self,
        world: &World,
        n: &Object<ProxmoxNodeSpec>,
    ) -> ProxmoxNodeStatus {
        let start = Instant::now();
        let mut st = ProxmoxNodeStatus {
            last_updated: Some(now_rfc3339()),
            ..Default::default()
        };
        let r = async {
            let pve = self.connect(world, &n.spec.cluster).await?;
            pve.resources().await
        }
        .await;
        match r {
            Ok(res) => {
                if let Some(e) = node_entries(&res)
                    .into_iter()
                    .find(|e| e.name == n.spec.node_name)
                {
                    st.ready = e.ready;
                    st.resources = e.resources;
                    st.vm_count = e.vm_count;
                }
            }
            Err(e) => {
                self.metrics.error(e.error_type().as_str(), "node");
            }
        }
        self.metrics
            .reconcile_duration("node", start.elapsed().as_secs_f64());
        st
    }
}

/// Per-node entries from `/cluster/resources`.
pub(super) fn node_entries(res: &[ClusterResource]) -> Vec<NodeStatusEntry> {
    res.iter()
        .filter(|r| r.kind == "node")
        .map(|r| {
            let name = r.node.clone().unwrap_or_default();
            let vms: Vec<&ClusterResource> = res
                .iter()
                .filter(|g| g.kind == "qemu" && g.node.as_deref() == Some(name.as_str()))
                .collect();
            NodeStatusEntry {
                ready: r.status.as_deref() == Some("online"),
                resources: NodeResources {
                    cpu: Usage {
                        total: r.maxcpu.unwrap_or(0.0) as u64,
                        used: vms
                            .iter()
                            .filter(|g| matches!(g.status.as_deref(), Some("running" | "paused")))
                            .map(|g| g.maxcpu.unwrap_or(0.0) as u64)
                            .sum(),
                    },
                    memory: Usage {
                        total: r.maxmem.unwrap_or(0),
                        used: r.mem.unwrap_or(0),
                    },
                    storage: Usage {
                        total: r.maxdisk.unwrap_or(0),
                        used: r.disk.unwrap_or(0),
                    },
                },
                vm_count: vms.len() as u32,
                name,
            }
        })
        .collect()
}
