//! A container's status and power state: start, stop, shutdown,
//! reboot, suspend, resume, and the addresses inside it.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Lxc, ct_path};
use crate::api::seg;
use crate::api::tasks::{TaskStatus, Upid};
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// A container's entry in `GET /nodes/{node}/lxc` (`vmlist`), and what
/// `GET .../status/current` (`vm_status`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtStatus {
    /// The VM ID.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub vmid: u64,
    /// `running` or `stopped`.
    pub status: String,
    /// The host name (`CT<vmid>` when none is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The config lock (`backup`, `create`, `snapshot`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// Whether it is a template.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub template: Option<bool>,
    /// Tags, `;`-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<String>,
    /// CPUs (`cores`, else `cpulimit`, else the host's).
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpus: Option<f64>,
    /// Memory in use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub mem: Option<u64>,
    /// Memory, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxmem: Option<u64>,
    /// Swap, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxswap: Option<u64>,
    /// Root file system size, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxdisk: Option<u64>,
    /// Seconds since start.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub uptime: Option<u64>,
    /// The init process ID, while running.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub pid: Option<u64>,
    /// Anything else PVE sent (`type`, `netin`, `diskread`, `ha`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CtStatus {
    /// Whether the container runs.
    pub fn is_running(&self) -> bool {
        self.status == "running"
    }
}

/// One interface of `GET .../interfaces` (`ip`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtInterface {
    /// The name inside the container (`eth0`).
    pub name: String,
    /// The MAC address.
    #[serde(rename = "hardware-address", default)]
    pub hardware_address: String,
    /// The first IPv4 address with its prefix (`10.0.0.2/24`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inet: Option<String>,
    /// The first IPv6 address with its prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inet6: Option<String>,
    /// Every address.
    #[serde(rename = "ip-addresses", default)]
    pub ip_addresses: Vec<Value>,
}

impl Lxc<'_> {
    /// `GET /nodes/{node}/lxc` (`vmlist`): the containers the caller may
    /// audit.
    ///
    /// # Errors
    /// As any call.
    pub async fn vmlist(&self, node: &str) -> Result<Vec<CtStatus>> {
        self.get(&format!("/nodes/{}/lxc", seg(node)), &Params::new())
            .await
    }

    /// `GET .../status/current` (`vm_status`).
    ///
    /// # Errors
    /// As [`Lxc::vm_config`].
    pub async fn vm_status(&self, node: &str, vmid: u32) -> Result<CtStatus> {
        self.get(&ct_path(node, vmid, "/status/current"), &Params::new())
            .await
    }

    /// `POST .../status/start` (`vm_start`): a `vzstart` task.
    ///
    /// # Errors
    /// `CT 100 already running`.
    pub async fn vm_start(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/start"),
            &Params::new(),
        )
        .await
    }

    /// `POST .../status/stop` (`vm_stop`): a `vzstop` task (hard stop).
    ///
    /// # Errors
    /// `CT 100 not running`.
    pub async fn vm_stop(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/stop"),
            &Params::new(),
        )
        .await
    }

    /// `POST .../status/shutdown` (`vm_shutdown`): a `vzshutdown` task;
    /// `force_stop` kills it when it does not stop within `timeout`.
    ///
    /// # Errors
    /// `CT 100 not running`.
    pub async fn vm_shutdown(
        &self,
        node: &str,
        vmid: u32,
        timeout: Option<u32>,
        force_stop: bool,
    ) -> Result<Upid> {
        let params = Params::new()
            .opt("timeout", timeout)
            .opt("forceStop", force_stop.then_some(true));
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/shutdown"),
            &params,
        )
        .await
    }

    /// `POST .../status/reboot` (`vm_reboot`): a `vzreboot` task.
    ///
    /// # Errors
    /// `VM 100 not running` (PVE's words) for a stopped container.
    pub async fn vm_reboot(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/reboot"),
            &Params::new(),
        )
        .await
    }

    /// `POST .../status/suspend` (`vm_suspend`): a `vzsuspend` task.
    ///
    /// # Errors
    /// `CT 100 not running`.
    pub async fn vm_suspend(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/suspend"),
            &Params::new(),
        )
        .await
    }

    /// `POST .../status/resume` (`vm_resume`): a `vzresume` task.
    ///
    /// # Errors
    /// `CT 100 already running`.
    pub async fn vm_resume(&self, node: &str, vmid: u32) -> Result<Upid> {
        self.task(
            Method::POST,
            &ct_path(node, vmid, "/status/resume"),
            &Params::new(),
        )
        .await
    }

    /// `GET .../interfaces` (`ip`): the addresses inside a running
    /// container; `None` when it is stopped.
    ///
    /// # Errors
    /// As [`Lxc::vm_config`].
    pub async fn ip(&self, node: &str, vmid: u32) -> Result<Option<Vec<CtInterface>>> {
        self.get(&ct_path(node, vmid, "/interfaces"), &Params::new())
            .await
    }

    and_wait! {
        /// [`Lxc::vm_start`], then waits for the task.
        vm_start_and_wait => vm_start(node: &str, vmid: u32);
        /// [`Lxc::vm_stop`], then waits for the task.
        vm_stop_and_wait => vm_stop(node: &str, vmid: u32);
        /// [`Lxc::vm_shutdown`], then waits for the task.
        vm_shutdown_and_wait => vm_shutdown(node: &str, vmid: u32, timeout: Option<u32>, force_stop: bool);
        /// [`Lxc::vm_reboot`], then waits for the task.
        vm_reboot_and_wait => vm_reboot(node: &str, vmid: u32);
        /// [`Lxc::vm_suspend`], then waits for the task.
        vm_suspend_and_wait => vm_suspend(node: &str, vmid: u32);
        /// [`Lxc::vm_resume`], then waits for the task.
        vm_resume_and_wait => vm_resume(node: &str, vmid: u32);
    }
}
