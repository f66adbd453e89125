//! What a scenario made, and its removal after the scenario: guests,
//! volumes, security groups and the rest, newest first.

use std::time::Duration;

use pve_client::{Client, Method, Params};

use super::{ADMIN, PveWorld, VM_BLOCKS};

/// Something a scenario made, removed again after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Made {
    /// A user (with its tokens and ACL entries).
    User(String),
    /// A group.
    Group(String),
    /// A role.
    Role(String),
    /// An API token: user, token ID.
    Token(String, String),
    /// An ACL entry: path, role, `users`/`groups`/`tokens`, who.
    Acl {
        /// The ACL path.
        path: String,
        /// The role.
        role: String,
        /// `users`, `groups` or `tokens`.
        kind: String,
        /// The user, group or token.
        who: String,
    },
    /// A VM (stopped, then destroyed with `purge`).
    Vm(u32),
    /// A container (stopped, then destroyed with `purge`).
    Ct(u32),
    /// A storage definition.
    Storage(String),
    /// A volume allocated (or downloaded) on a storage of the test node:
    /// storage ID, full volume ID.
    Volume(String, String),
    /// A resource pool (removed once its guests are gone).
    Pool(String),
    /// A backup job.
    BackupJob(String),
    /// An authentication realm (`/access/domains`).
    Realm(String),
    /// A realm sync job.
    RealmSyncJob(String),
    /// An SDN zone (removed from the pending configuration).
    SdnZone(String),
    /// An SDN VNet.
    SdnVnet(String),
    /// An SDN subnet: VNet, subnet ID (`<zone>-<cidr>`).
    SdnSubnet(String, String),
    /// An SDN controller.
    SdnController(String),
    /// An SDN fabric (9.x; removed with its nodes).
    SdnFabric(String),
    /// An SDN prefix list (9.2).
    SdnPrefixList(String),
    /// An SDN route map entry (9.2): route map, order.
    SdnRouteMapEntry(String, u16),
    /// A firewall security group (emptied, then removed).
    FwGroup(String),
    /// A cluster firewall alias.
    FwAlias(String),
    /// A cluster firewall IP set (removed with its entries).
    FwIpset(String),
    /// An HA resource (`vm:<vmid>` of one of the scenario's VMs).
    HaResource(String),
    /// An HA group (8.x).
    HaGroup(String),
    /// An HA rule (9.x).
    HaRule(String),
    /// A custom CPU model (9.2), by its name without `custom-`.
    CpuModel(String),
    /// An ACME challenge plugin.
    AcmePlugin(String),
    /// An ACME account (deactivated after the scenario).
    AcmeAccount(String),
    /// A resource mapping: kind (`pci`, `usb`, `dir`), id.
    Mapping(String, String),
}

impl PveWorld {
    /// Remembers something to remove after the scenario.
    pub fn made(&mut self, m: Made) {
        if !self.made.contains(&m) {
            self.made.push(m);
        }
    }

    /// Forgets something the scenario removed itself.
    pub fn unmade(&mut self, m: &Made) {
        self.made.retain(|x| x != m);
    }

    /// Removes everything the scenario made, newest first, as the
    /// administrator. Called after every scenario, failed or not; what is
    /// already gone is fine, anything else is reported.
    pub async fn cleanup(&mut self) -> Vec<String> {
        let problems = self.remove_made().await;
        if let Some(b) = self.vm_block.take() {
            VM_BLOCKS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(&b);
        }
        problems
    }

    async fn remove_made(&mut self) -> Vec<String> {
        let Some(admin) = self.clients.get(ADMIN).cloned() else {
            return Vec::new();
        };
        if let Some(fake) = &self.fake {
            // Let whatever tasks the scenario left running end (well
            // within the tickets' two hours).
            fake.clock().advance(600);
        }
        let as_root = self.admin_principal == "root@pam";
        let mut problems = Vec::new();
        while let Some(m) = self.made.pop() {
            let seg = pve_client::api::seg;
            let (method, path, params) = match &m {
                Made::Vm(vmid) => {
                    let node = self.target().node.clone();
                    if let Err(e) = remove_vm(&admin, &node, *vmid, as_root).await {
                        problems.push(format!("cleaning up VM {vmid}: {e}"));
                    }
                    continue;
                }
                Made::Ct(vmid) => {
                    let node = self.target().node.clone();
                    if let Err(e) = remove_ct(&admin, &node, *vmid).await {
                        problems.push(format!("cleaning up CT {vmid}: {e}"));
                    }
                    continue;
                }
                Made::Volume(sid, volid) => {
                    let node = self.target().node.clone();
                    if let Err(e) = remove_volume(&admin, &node, sid, volid).await {
                        problems.push(format!("cleaning up volume {volid}: {e}"));
                    }
                    continue;
                }
                Made::Storage(id) => (
                    Method::DELETE,
                    format!("/storage/{}", seg(id)),
                    Params::new(),
                ),
                Made::Pool(id) => (
                    Method::DELETE,
                    "/pools".to_string(),
                    Params::new().set("poolid", id.as_str()),
                ),
                Made::BackupJob(id) => (
                    Method::DELETE,
                    format!("/cluster/backup/{}", seg(id)),
                    Params::new(),
                ),
                Made::Realm(id) => (
                    Method::DELETE,
                    format!("/access/domains/{}", seg(id)),
                    Params::new(),
                ),
                Made::RealmSyncJob(id) => (
                    Method::DELETE,
                    format!("/cluster/jobs/realm-sync/{}", seg(id)),
                    Params::new(),
                ),
                Made::SdnZone(id) => (
                    Method::DELETE,
                    format!("/cluster/sdn/zones/{}", seg(id)),
                    Params::new(),
                ),
                Made::SdnVnet(id) => {
                    // A VNet's firewall file outlives the VNet in PVE.
                    if self.sdn_applied {
                        clear_vnet_firewall(&admin, id).await;
                    }
                    (
                        Method::DELETE,
                        format!("/cluster/sdn/vnets/{}", seg(id)),
                        Params::new(),
                    )
                }
                Made::SdnSubnet(vnet, id) => (
                    Method::DELETE,
                    format!("/cluster/sdn/vnets/{}/subnets/{}", seg(vnet), seg(id)),
                    Params::new(),
                ),
                Made::SdnController(id) => (
                    Method::DELETE,
                    format!("/cluster/sdn/controllers/{}", seg(id)),
                    Params::new(),
                ),
                Made::SdnFabric(id) => (
                    Method::DELETE,
                    format!("/cluster/sdn/fabrics/fabric/{}", seg(id)),
                    Params::new(),
                ),
                Made::SdnPrefixList(id) => (
                    Method::DELETE,
                    format!("/cluster/sdn/prefix-lists/{}", seg(id)),
                    Params::new(),
                ),
                Made::SdnRouteMapEntry(rm, order) => (
                    Method::DELETE,
                    format!("/cluster/sdn/route-maps/entries/{}/entry/{order}", seg(rm)),
                    Params::new(),
                ),
                Made::FwGroup(g) => {
                    if let Err(e) = remove_fw_group(&admin, g).await {
                        problems.push(format!("cleaning up security group {g}: {e}"));
                    }
                    continue;
                }
                Made::FwAlias(a) => (
                    Method::DELETE,
                    format!("/cluster/firewall/aliases/{}", seg(a)),
                    Params::new(),
                ),
                Made::FwIpset(n) => (
                    Method::DELETE,
                    format!("/cluster/firewall/ipset/{}", seg(n)),
                    Params::new().set("force", true),
                ),
                Made::HaResource(sid) => (
                    Method::DELETE,
                    format!("/cluster/ha/resources/{}", seg(sid)),
                    Params::new(),
                ),
                Made::HaGroup(id) => (
                    Method::DELETE,
                    format!("/cluster/ha/groups/{}", seg(id)),
                    Params::new(),
                ),
                Made::HaRule(id) => (
                    Method::DELETE,
                    format!("/cluster/ha/rules/{}", seg(id)),
                    Params::new(),
                ),
                Made::CpuModel(id) => (
                    Method::DELETE,
                    format!("/cluster/qemu/custom-cpu-models/{}", seg(id)),
                    Params::new(),
                ),
                Made::AcmePlugin(id) => (
                    Method::DELETE,
                    format!("/cluster/acme/plugins/{}", seg(id)),
                    Params::new(),
                ),
                // Deactivation is a task; its file is renamed out of the
                // list.
                Made::AcmeAccount(name) => (
                    Method::DELETE,
                    format!("/cluster/acme/account/{}", seg(name)),
                    Params::new(),
                ),
                Made::Mapping(kind, id) => (
                    Method::DELETE,
                    format!("/cluster/mapping/{}/{}", seg(kind), seg(id)),
                    Params::new(),
                ),
                Made::User(u) => (
                    Method::DELETE,
                    format!("/access/users/{}", seg(u)),
                    Params::new(),
                ),
                Made::Group(g) => (
                    Method::DELETE,
                    format!("/access/groups/{}", seg(g)),
                    Params::new(),
                ),
                Made::Role(r) => (
                    Method::DELETE,
                    format!("/access/roles/{}", seg(r)),
                    Params::new(),
                ),
                Made::Token(u, t) => (
                    Method::DELETE,
                    format!("/access/users/{}/token/{}", seg(u), seg(t)),
                    Params::new(),
                ),
                Made::Acl {
                    path,
                    role,
                    kind,
                    who,
                } => (
                    Method::PUT,
                    "/access/acl".to_string(),
                    Params::new()
                        .set("path", path.as_str())
                        .set("roles", role.as_str())
                        .set(kind.as_str(), who.as_str())
                        .set("delete", true),
                ),
            };
            if let Err(e) = admin.request(method, &path, &params).await
                && !gone(&e.to_string())
            {
                problems.push(format!("cleaning up {m:?}: {e}"));
            }
        }
        if self.sdn_applied {
            // The removals above are pending until applied again.
            self.sdn_applied = false;
            match admin
                .request(Method::PUT, "/cluster/sdn", &Params::new())
                .await
            {
                Ok(v) => {
                    let upid = v.data.as_str().unwrap_or_default().to_string();
                    if let Err(e) = wait_task(&admin, &upid).await {
                        problems.push(format!("applying the SDN removals: {e}"));
                    }
                }
                Err(e) => problems.push(format!("applying the SDN removals: {e}")),
            }
        }
        problems
    }
}

/// Whether a message says that what was asked for is gone.
fn gone(msg: &str) -> bool {
    let msg = msg.to_lowercase();
    msg.contains("does not exist")
        || msg.contains("no such")
        || msg.contains("not found")
        || msg.contains("not ha managed")
        || msg.contains("could not find")
        || msg.contains("have been migrated to rules")
}

/// Why [`wait_task`] gave up on a task.
#[derive(Debug, thiserror::Error)]
pub enum TaskWaitError {
    /// Its status could not be read.
    #[error("status of {upid}: {source}")]
    Status {
        /// The task.
        upid: String,
        /// What the call answered.
        source: pve_client::Error,
    },
    /// It did not end within five minutes.
    #[error("{upid} still runs after 5 minutes")]
    Timeout {
        /// The task.
        upid: String,
    },
}

/// Why removing something a scenario made failed: the step that failed,
/// with PVE's answer or the task's exit status.
#[derive(Debug, thiserror::Error)]
pub enum CleanupError {
    /// Its configuration could not be read.
    #[error("reading its config: {0}")]
    ReadConfig(#[source] pve_client::Error),
    /// Its status could not be read.
    #[error("reading its status: {0}")]
    ReadStatus(#[source] pve_client::Error),
    /// PVE refused to stop it.
    #[error("stopping it: {0}")]
    Stop(#[source] pve_client::Error),
    /// The stop task ended with this exit status.
    #[error("stopping it: {0}")]
    StopTask(String),
    /// PVE refused to remove its protection.
    #[error("removing its protection: {0}")]
    Unprotect(#[source] pve_client::Error),
    /// PVE refused to destroy it.
    #[error("destroying it: {0}")]
    Destroy(#[source] pve_client::Error),
    /// The destroy task ended with this exit status.
    #[error("destroying it: {0}")]
    DestroyTask(String),
    /// PVE refused to delete it.
    #[error("deleting it: {0}")]
    Delete(#[source] pve_client::Error),
    /// The delete task ended with this exit status.
    #[error("deleting it: {0}")]
    DeleteTask(String),
    /// A security group's rules could not be read.
    #[error("reading its rules: {0}")]
    ReadRules(#[source] pve_client::Error),
    /// PVE refused to delete one of a security group's rules.
    #[error("deleting a rule: {0}")]
    DeleteRule(#[source] pve_client::Error),
    /// A task it waited for did not end.
    #[error(transparent)]
    Task(#[from] TaskWaitError),
}

/// Waits for a task to end (polling every 200 ms, at most five minutes)
/// and answers its exit status.
///
/// # Errors
/// When its status cannot be read or it does not end in time.
pub async fn wait_task(client: &Client, upid: &str) -> Result<String, TaskWaitError> {
    let node = upid.split(':').nth(1).unwrap_or_default();
    let path = format!(
        "/nodes/{}/tasks/{}/status",
        pve_client::api::seg(node),
        pve_client::api::seg(upid)
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        let st =
            client
                .get(&path, &Params::new())
                .await
                .map_err(|source| TaskWaitError::Status {
                    upid: upid.to_string(),
                    source,
                })?;
        if st["status"] != "running" {
            return Ok(st["exitstatus"].as_str().unwrap_or_default().to_string());
        }
        if std::time::Instant::now() > deadline {
            return Err(TaskWaitError::Timeout {
                upid: upid.to_string(),
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Stops and destroys VM `vmid` on `node` with `purge` (and its
/// unreferenced disks), after taking its protection away; a VM that is
/// already gone is fine. root@pam also skips locks; anyone else waits up
/// to a minute for a lock to go.
///
/// # Errors
/// What PVE answered when it refused, or a task's error.
pub async fn remove_vm(
    client: &Client,
    node: &str,
    vmid: u32,
    as_root: bool,
) -> Result<(), CleanupError> {
    let base = format!("/nodes/{}/qemu/{vmid}", pve_client::api::seg(node));
    let skip = |p: Params| if as_root { p.set("skiplock", true) } else { p };
    let config = match client.get(&format!("{base}/config"), &Params::new()).await {
        Ok(c) => c,
        Err(e) if gone(e.message()) => return Ok(()),
        Err(e) => return Err(CleanupError::ReadConfig(e)),
    };
    let status = client
        .get(&format!("{base}/status/current"), &Params::new())
        .await
        .map_err(CleanupError::ReadStatus)?;
    if status["status"] == "running" {
        let upid = client
            .post(&format!("{base}/status/stop"), &skip(Params::new()))
            .await
            .map_err(CleanupError::Stop)?;
        let exit = wait_task(client, upid.as_str().unwrap_or_default()).await?;
        if exit != "OK" {
            return Err(CleanupError::StopTask(exit));
        }
    }
    if config["protection"] == 1 {
        client
            .put(
                &format!("{base}/config"),
                &skip(Params::new().set("delete", "protection")),
            )
            .await
            .map_err(CleanupError::Unprotect)?;
    }
    let params = skip(
        Params::new()
            .set("purge", true)
            .set("destroy-unreferenced-disks", true),
    );
    let mut tries = 0;
    let upid = loop {
        match client.delete(&base, &params).await {
            Ok(u) => break u,
            Err(e) if gone(e.message()) => return Ok(()),
            Err(e) if e.message().contains("is locked") && tries < 60 => {
                tries += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(CleanupError::Destroy(e)),
        }
    };
    let exit = wait_task(client, upid.as_str().unwrap_or_default()).await?;
    if exit == "OK" {
        Ok(())
    } else {
        Err(CleanupError::DestroyTask(exit))
    }
}

/// Stops and destroys container `vmid` on `node` with `purge`, after
/// taking its protection away; a container that is already gone is fine.
///
/// # Errors
/// What PVE answered when it refused, or a task's error.
pub async fn remove_ct(client: &Client, node: &str, vmid: u32) -> Result<(), CleanupError> {
    let base = format!("/nodes/{}/lxc/{vmid}", pve_client::api::seg(node));
    let config = match client.get(&format!("{base}/config"), &Params::new()).await {
        Ok(c) => c,
        Err(e) if gone(e.message()) => return Ok(()),
        Err(e) => return Err(CleanupError::ReadConfig(e)),
    };
    let status = client
        .get(&format!("{base}/status/current"), &Params::new())
        .await
        .map_err(CleanupError::ReadStatus)?;
    if status["status"] == "running" {
        let upid = client
            .post(&format!("{base}/status/stop"), &Params::new())
            .await
            .map_err(CleanupError::Stop)?;
        let exit = wait_task(client, upid.as_str().unwrap_or_default()).await?;
        if exit != "OK" {
            return Err(CleanupError::StopTask(exit));
        }
    }
    if config["protection"] == 1 {
        client
            .put(
                &format!("{base}/config"),
                &Params::new().set("delete", "protection"),
            )
            .await
            .map_err(CleanupError::Unprotect)?;
    }
    let params = Params::new().set("purge", true);
    let mut tries = 0;
    let upid = loop {
        match client.delete(&base, &params).await {
            Ok(u) => break u,
            Err(e) if gone(e.message()) => return Ok(()),
            Err(e) if e.message().contains("is locked") && tries < 60 => {
                tries += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(CleanupError::Destroy(e)),
        }
    };
    let exit = wait_task(client, upid.as_str().unwrap_or_default()).await?;
    if exit == "OK" {
        Ok(())
    } else {
        Err(CleanupError::DestroyTask(exit))
    }
}

/// Deletes volume `volid` of storage `sid` on `node` and waits for the
/// `imgdel` task; a volume that is already gone (or a storage that no
/// longer answers for it) is fine.
///
/// # Errors
/// What PVE answered when it refused, or the task's error.
pub async fn remove_volume(
    client: &Client,
    node: &str,
    sid: &str,
    volid: &str,
) -> Result<(), CleanupError> {
    let seg = pve_client::api::seg;
    let path = format!(
        "/nodes/{}/storage/{}/content/{}",
        seg(node),
        seg(sid),
        seg(volid)
    );
    if client.get(&path, &Params::new()).await.is_err() {
        return Ok(());
    }
    let upid = match client.delete(&path, &Params::new()).await {
        Ok(u) => u,
        Err(e) if gone(e.message()) => return Ok(()),
        Err(e) => return Err(CleanupError::Delete(e)),
    };
    let Some(upid) = upid.as_str() else {
        return Ok(());
    };
    let exit = wait_task(client, upid).await?;
    if exit == "OK" || gone(&exit) {
        Ok(())
    } else {
        Err(CleanupError::DeleteTask(exit))
    }
}
/// Removes a security group: its rules first (PVE removes only an empty
/// group), then the group.
///
/// # Errors
/// When a call fails for another reason than the group being gone.
pub async fn remove_fw_group(client: &Client, group: &str) -> Result<(), CleanupError> {
    let path = format!("/cluster/firewall/groups/{}", pve_client::api::seg(group));
    let rules = match client.get(&path, &Params::new()).await {
        Ok(r) => r,
        Err(e) if gone(e.message()) => return Ok(()),
        Err(e) => return Err(CleanupError::ReadRules(e)),
    };
    for _ in rules.as_array().map_or(&[][..], Vec::as_slice) {
        client
            .delete(&format!("{path}/0"), &Params::new())
            .await
            .map_err(CleanupError::DeleteRule)?;
    }
    client
        .delete(&path, &Params::new())
        .await
        .map_err(CleanupError::Delete)?;
    Ok(())
}

/// Empties the firewall of an applied VNet (its rules and options), so
/// that no `sdn/firewall/<vnet>.fw` outlives the scenario. A VNet that was
/// never applied has no firewall to reach: the errors are left unsaid.
pub async fn clear_vnet_firewall(client: &Client, vnet: &str) {
    let path = format!("/cluster/sdn/vnets/{}/firewall", pve_client::api::seg(vnet));
    let Ok(rules) = client.get(&format!("{path}/rules"), &Params::new()).await else {
        return;
    };
    for _ in rules.as_array().map_or(&[][..], Vec::as_slice) {
        let _ = client
            .delete(&format!("{path}/rules/0"), &Params::new())
            .await;
    }
    let _ = client
        .put(
            &format!("{path}/options"),
            &Params::new().set("delete", "enable,policy_forward,log_level_forward"),
        )
        .await;
}
