//! Node power and the calls on many guests: `POST /nodes/{node}/status`
//! (`node_cmd`), `POST /nodes/{node}/execute`, `suspendall`,
//! `migrateall` (pve-manager `API2/Nodes.pm`) and the cluster's bulk
//! actions on guests (9.x, `/cluster/bulk-action/guest/*`).

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::nodes::Nodes;
use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::error::Result;
use crate::transport::Params;

/// What `node_cmd` asks of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerCommand {
    /// `reboot`.
    Reboot,
    /// `shutdown`.
    Shutdown,
}

impl PowerCommand {
    fn as_str(self) -> &'static str {
        match self {
            Self::Reboot => "reboot",
            Self::Shutdown => "shutdown",
        }
    }
}

/// One call of an `execute` batch: a path below `/nodes/{node}/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    /// The path, relative to the node (`qemu/100/config`).
    pub path: String,
    /// `GET`, `POST`, `PUT` or `DELETE`.
    pub method: String,
    /// The call's parameters.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub args: Map<String, Value>,
}

/// The answer to one command of an `execute` batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandResult {
    /// The HTTP status the call would have had.
    pub status: u16,
    /// Its data, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Its error message, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The refused parameters, on a 400.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Map<String, Value>>,
}

/// Options of `migrateall`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrateAll {
    /// Parallel migrations (else datacenter.cfg's `max_workers`, which
    /// must then be set).
    pub max_workers: Option<u32>,
    /// Only these guests.
    pub vms: Vec<u32>,
    /// Migrate local disks of running VMs too.
    pub with_local_disks: Option<bool>,
}

/// Options of the cluster's bulk actions (`vms` empty: all guests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkOptions {
    /// Only these guests.
    pub vms: Vec<u32>,
    /// Tasks at once (default 4; 1 for `migrate`).
    pub max_workers: Option<u32>,
    /// `start`: VMs' start timeout; `shutdown`: the shutdown timeout of
    /// guests without their own `down`.
    pub timeout: Option<u32>,
    /// `shutdown`: hard-stop guests that do not shut down in time
    /// (default on).
    pub force_stop: Option<bool>,
    /// `suspend`: to disk.
    pub to_disk: Option<bool>,
    /// `suspend` to disk: the storage of the state.
    pub statestorage: Option<String>,
    /// `migrate`: migrate running guests online (containers restart).
    pub online: Option<bool>,
    /// `migrate`: local disks of running VMs too.
    pub with_local_disks: Option<bool>,
}

fn vm_list(vms: &[u32]) -> Option<String> {
    (!vms.is_empty()).then(|| vms.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
}

impl Nodes<'_> {
    /// `POST /nodes/{node}/status` (`node_cmd`): reboots or shuts the
    /// node down (Sys.PowerMgmt on the node).
    ///
    /// # Errors
    /// As any call; a network error (595) for a node already down.
    pub async fn node_cmd(&self, node: &str, command: PowerCommand) -> Result<()> {
        let params = Params::new().set("command", command.as_str());
        let path = format!("/nodes/{}/status", seg(node));
        let _: Value = self.client().call(Method::POST, &path, &params).await?;
        Ok(())
    }

    /// `POST /nodes/{node}/execute` (`execute`, root@pam only): runs the
    /// commands in order, each answered on its own.
    ///
    /// # Errors
    /// As any call; a failed command is an answer, not an error.
    pub async fn execute(&self, node: &str, commands: &[Command]) -> Result<Vec<CommandResult>> {
        let text = serde_json::to_string(commands).unwrap_or_else(|_| "[]".into());
        let params = Params::new().set("commands", text);
        let path = format!("/nodes/{}/execute", seg(node));
        self.client().call(Method::POST, &path, &params).await
    }

    /// `POST /nodes/{node}/suspendall` (`suspendall`): suspends the
    /// node's running VMs to disk in a task.
    ///
    /// # Errors
    /// As any call.
    pub async fn suspendall(
        &self,
        node: &str,
        vms: &[u32],
        max_workers: Option<u32>,
    ) -> Result<Upid> {
        let params = Params::new()
            .opt("vms", vm_list(vms))
            .opt("max-workers", max_workers);
        let path = format!("/nodes/{}/suspendall", seg(node));
        self.client().call(Method::POST, &path, &params).await
    }

    /// `POST /nodes/{node}/migrateall` (`migrateall`): migrates the
    /// node's guests to `target` in a task.
    ///
    /// # Errors
    /// As any call; an error when neither `max_workers` nor
    /// datacenter.cfg's `max_workers` is set.
    pub async fn migrateall(&self, node: &str, target: &str, opts: &MigrateAll) -> Result<Upid> {
        let params = Params::new()
            .set("target", target)
            .opt("maxworkers", opts.max_workers)
            .opt("vms", vm_list(&opts.vms))
            .opt("with-local-disks", opts.with_local_disks);
        let path = format!("/nodes/{}/migrateall", seg(node));
        self.client().call(Method::POST, &path, &params).await
    }
}

/// The cluster's bulk actions on guests (9.x); see
/// [`Client::bulk_guests`].
#[derive(Debug, Clone, Copy)]
pub struct BulkGuests<'a> {
    client: &'a Client,
}

impl Client {
    /// `/cluster/bulk-action/guest` (9.x).
    pub fn bulk_guests(&self) -> BulkGuests<'_> {
        BulkGuests { client: self }
    }
}

impl BulkGuests<'_> {
    async fn post(&self, action: &str, params: Params, opts: &BulkOptions) -> Result<Upid> {
        let params = params
            .array("vms", &opts.vms)
            .opt("max-workers", opts.max_workers);
        let path = format!("/cluster/bulk-action/guest/{action}");
        self.client.call(Method::POST, &path, &params).await
    }

    /// `POST /cluster/bulk-action/guest/start` (`start`): starts (or
    /// resumes) the guests in a `bulk-start` task.
    ///
    /// # Errors
    /// As any call.
    pub async fn start(&self, opts: &BulkOptions) -> Result<Upid> {
        self.post("start", Params::new().opt("timeout", opts.timeout), opts)
            .await
    }

    /// `POST /cluster/bulk-action/guest/shutdown` (`shutdown`).
    ///
    /// # Errors
    /// As any call.
    pub async fn shutdown(&self, opts: &BulkOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("timeout", opts.timeout)
            .opt("force-stop", opts.force_stop);
        self.post("shutdown", params, opts).await
    }

    /// `POST /cluster/bulk-action/guest/suspend` (`suspend`).
    ///
    /// # Errors
    /// As any call.
    pub async fn suspend(&self, opts: &BulkOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("to-disk", opts.to_disk)
            .opt("statestorage", opts.statestorage.clone());
        self.post("suspend", params, opts).await
    }

    /// `POST /cluster/bulk-action/guest/migrate` (`migrate`) to `target`.
    ///
    /// # Errors
    /// As any call.
    pub async fn migrate(&self, target: &str, opts: &BulkOptions) -> Result<Upid> {
        let params = Params::new()
            .set("target", target)
            .opt("online", opts.online)
            .opt("with-local-disks", opts.with_local_disks);
        self.post("migrate", params, opts).await
    }
}
