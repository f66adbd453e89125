//! Remote migration: a VM or container moved to another cluster
//! (`remote_migrate_vm`), and the target's tunnel endpoint (`mtunnel`)
//! the migration's source opens there.

use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::lxc::Lxc;
use super::qemu::Qemu;
use super::seg;
use super::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::Params;

/// The request of `remote_migrate_vm`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteMigrate {
    /// `target-endpoint`: a `proxmox-remote` property string
    /// (`host=...,apitoken=PVEAPIToken=user@realm!token=SECRET,fingerprint=...`).
    pub target_endpoint: String,
    /// `target-storage`: the storage map (`source:target` pairs, or one
    /// storage for all).
    pub target_storage: String,
    /// `target-bridge`: the bridge map (`1`: each to itself).
    pub target_bridge: String,
    /// `target-vmid`: the guest's VMID there (else the same).
    pub target_vmid: Option<u32>,
    /// Live migration of a running VM.
    pub online: Option<bool>,
    /// Restart migration of a running container.
    pub restart: Option<bool>,
    /// The shutdown timeout of a restart migration, seconds.
    pub timeout: Option<u64>,
    /// Remove the guest here once it is there.
    pub delete: Option<bool>,
    /// Bandwidth limit, KiB/s.
    pub bwlimit: Option<u64>,
}

impl RemoteMigrate {
    /// A migration to `endpoint` with the storage and bridge maps PVE
    /// requires.
    pub fn new(endpoint: &str, storage: &str, bridge: &str) -> Self {
        Self {
            target_endpoint: endpoint.into(),
            target_storage: storage.into(),
            target_bridge: bridge.into(),
            ..Self::default()
        }
    }

    /// The guest's VMID there.
    #[must_use]
    pub fn target_vmid(mut self, vmid: u32) -> Self {
        self.target_vmid = Some(vmid);
        self
    }

    /// Live migration (a running VM).
    #[must_use]
    pub fn online(mut self, yes: bool) -> Self {
        self.online = Some(yes);
        self
    }

    /// Restart migration (a running container).
    #[must_use]
    pub fn restart(mut self, yes: bool) -> Self {
        self.restart = Some(yes);
        self
    }

    /// Remove the guest here once it is there.
    #[must_use]
    pub fn delete(mut self, yes: bool) -> Self {
        self.delete = Some(yes);
        self
    }

    fn params(&self) -> Params {
        Params::new()
            .set("target-endpoint", &self.target_endpoint)
            .set("target-storage", &self.target_storage)
            .set("target-bridge", &self.target_bridge)
            .opt("target-vmid", self.target_vmid)
            .opt("online", self.online)
            .opt("restart", self.restart)
            .opt("timeout", self.timeout)
            .opt("delete", self.delete)
            .opt("bwlimit", self.bwlimit)
    }
}

/// What `mtunnel` answers: the tunnel worker, its socket and a ticket
/// for `mtunnelwebsocket`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mtunnel {
    /// The `qmtunnel`/`vzmtunnel` task.
    pub upid: String,
    /// A `PVETUNNEL` ticket for the socket.
    pub ticket: String,
    /// The socket the worker listens on.
    pub socket: String,
}

/// The parameters of `mtunnel`.
fn mtunnel_params(storages: &[&str], bridges: &[&str]) -> Params {
    let list = |l: &[&str]| (!l.is_empty()).then(|| l.join(","));
    Params::new()
        .opt("storages", list(storages))
        .opt("bridges", list(bridges))
}

impl Qemu<'_> {
    /// `POST .../remote_migrate` (`remote_migrate_vm`): a `qmigrate`
    /// task that moves the VM to another cluster.
    ///
    /// # Errors
    /// The target's refusals before the task (`fingerprint '...' not
    /// verified, abort!`, `500 Can't connect to ...`), `remote migration
    /// requires explicit storage mapping!`, a lock.
    pub async fn remote_migrate_vm(
        &self,
        node: &str,
        vmid: u32,
        req: &RemoteMigrate,
    ) -> Result<Upid> {
        let path = format!("/nodes/{}/qemu/{vmid}/remote_migrate", seg(node));
        self.client.call(Method::POST, &path, &req.params()).await
    }

    /// `POST .../mtunnel` on the target (`mtunnel`): the guest's config
    /// made and locked `create`, the tunnel worker started.
    ///
    /// # Errors
    /// `vmid: unable to create empty VM config - ...`, a storage or
    /// bridge that is not there, a permission.
    pub async fn mtunnel(
        &self,
        node: &str,
        vmid: u32,
        storages: &[&str],
        bridges: &[&str],
    ) -> Result<Mtunnel> {
        let path = format!("/nodes/{}/qemu/{vmid}/mtunnel", seg(node));
        self.client
            .call(Method::POST, &path, &mtunnel_params(storages, bridges))
            .await
    }

    /// [`Qemu::remote_migrate_vm`], then waits for the task.
    ///
    /// # Errors
    /// As the call; a failed task is an
    /// [`Error::TaskFailed`](crate::Error::TaskFailed).
    pub async fn remote_migrate_vm_and_wait(
        &self,
        node: &str,
        vmid: u32,
        req: &RemoteMigrate,
    ) -> Result<TaskStatus> {
        let upid = self.remote_migrate_vm(node, vmid, req).await?;
        self.client.tasks().wait(&upid).await
    }
}

impl Lxc<'_> {
    /// `POST .../remote_migrate` (`remote_migrate_vm`): a `vzmigrate`
    /// task that moves the container to another cluster.
    ///
    /// # Errors
    /// As [`Qemu::remote_migrate_vm`]; `can't migrate running container
    /// without --online or --restart`.
    pub async fn remote_migrate_vm(
        &self,
        node: &str,
        vmid: u32,
        req: &RemoteMigrate,
    ) -> Result<Upid> {
        let path = format!("/nodes/{}/lxc/{vmid}/remote_migrate", seg(node));
        self.client.call(Method::POST, &path, &req.params()).await
    }

    /// `POST .../mtunnel` on the target (`mtunnel`).
    ///
    /// # Errors
    /// As [`Qemu::mtunnel`].
    pub async fn mtunnel(
        &self,
        node: &str,
        vmid: u32,
        storages: &[&str],
        bridges: &[&str],
    ) -> Result<Mtunnel> {
        let path = format!("/nodes/{}/lxc/{vmid}/mtunnel", seg(node));
        self.client
            .call(Method::POST, &path, &mtunnel_params(storages, bridges))
            .await
    }

    /// [`Lxc::remote_migrate_vm`], then waits for the task.
    ///
    /// # Errors
    /// As the call; a failed task is an
    /// [`Error::TaskFailed`](crate::Error::TaskFailed).
    pub async fn remote_migrate_vm_and_wait(
        &self,
        node: &str,
        vmid: u32,
        req: &RemoteMigrate,
    ) -> Result<TaskStatus> {
        let upid = self.remote_migrate_vm(node, vmid, req).await?;
        self.client.tasks().wait(&upid).await
    }
}
