//! A VM's status and power state: start, stop, shutdown, reboot,
//! reset, suspend, resume, and key presses.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Qemu, vm_path};
use crate::api::seg;
use crate::api::tasks::{TaskStatus, Upid};
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// A VM's entry in `GET /nodes/{node}/qemu` (`vmlist`), and what `GET
/// .../status/current` (`vm_status`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VmStatus {
    /// The VM ID.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub vmid: u64,
    /// `running` or `stopped`.
    pub status: String,
    /// The name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// QEMU's own state (`running`, `paused`, `prelaunch`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qmpstatus: Option<String>,
    /// The config lock (`backup`, `clone`, `suspended`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// Whether it is a template.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub template: Option<bool>,
    /// \[status\] whether the agent is enabled in the config.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub agent: Option<bool>,
    /// Tags, `;`-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<String>,
    /// CPU use, a fraction of `cpus`.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpu: Option<f64>,
    /// CPUs.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpus: Option<f64>,
    /// Memory in use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub mem: Option<u64>,
    /// Memory, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxmem: Option<u64>,
    /// Root disk size, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxdisk: Option<u64>,
    /// Seconds since start.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub uptime: Option<u64>,
    /// The QEMU process ID, while running.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub pid: Option<u64>,
    /// \[status\] the HA state (`{"managed": 0}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ha: Option<Value>,
    /// Anything else PVE sent (`netin`, `diskread`, `pressure*`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl VmStatus {
    /// Whether the VM runs (paused VMs run too; see `qmpstatus`).
    pub fn is_running(&self) -> bool {
        self.status == "running"
    }

    /// Whether QEMU reports the VM paused.
    pub fn is_paused(&self) -> bool {
        self.qmpstatus.as_deref() == Some("paused")
    }
}

/// Options of `vm_start`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartOptions {
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
    /// Seconds to wait (default: max(30, 10 per GiB of memory)).
    pub timeout: Option<u32>,
    /// The QEMU machine type.
    pub machine: Option<String>,
}

/// Options of `vm_stop`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopOptions {
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
    /// Seconds to wait.
    pub timeout: Option<u32>,
    /// Keep the disks active (root only).
    pub keep_active: Option<bool>,
    /// Abort a running shutdown task first.
    pub overrule_shutdown: Option<bool>,
}

/// Options of `vm_shutdown`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShutdownOptions {
    /// Stop the VM when it does not shut down in time.
    pub force_stop: Option<bool>,
    /// Seconds to wait for the guest (qemu-server waits 60 by default).
    pub timeout: Option<u32>,
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
    /// Keep the disks active (root only).
    pub keep_active: Option<bool>,
}

/// Options of `vm_suspend`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuspendOptions {
    /// Hibernate: save the state to disk and stop (`qmsuspend`);
    /// otherwise pause (`qmpause`).
    pub todisk: Option<bool>,
    /// The storage for the state with `todisk`.
    pub statestorage: Option<String>,
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
}

impl Qemu<'_> {
    /// `GET /nodes/{node}/qemu` (`vmlist`): the VMs of a node the caller
    /// may audit; `full` adds the figures a running VM's `status` has.
    ///
    /// # Errors
    /// As any call.
    pub async fn vmlist(&self, node: &str, full: bool) -> Result<Vec<VmStatus>> {
        let path = format!("/nodes/{}/qemu", seg(node));
        let params = Params::new().opt("full", full.then_some(true));
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET .../status/current` (`vm_status`).
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn vm_status(&self, node: &str, vmid: u32) -> Result<VmStatus> {
        self.client
            .call(
                Method::GET,
                &vm_path(node, vmid, "/status/current"),
                &Params::new(),
            )
            .await
    }

    /// `POST .../status/start` (`vm_start`): a `qmstart` task, which
    /// fails with `VM 100 already running` for a running VM.
    ///
    /// # Errors
    /// As any call.
    pub async fn vm_start(&self, node: &str, vmid: u32, opts: &StartOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("skiplock", opts.skiplock)
            .opt("timeout", opts.timeout)
            .opt("machine", opts.machine.as_deref());
        self.task(Method::POST, &vm_path(node, vmid, "/status/start"), &params)
            .await
    }

    /// `POST .../status/stop` (`vm_stop`): a `qmstop` task (hard stop).
    ///
    /// # Errors
    /// As any call.
    pub async fn vm_stop(&self, node: &str, vmid: u32, opts: &StopOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("skiplock", opts.skiplock)
            .opt("timeout", opts.timeout)
            .opt("keepActive", opts.keep_active)
            .opt("overrule-shutdown", opts.overrule_shutdown);
        self.task(Method::POST, &vm_path(node, vmid, "/status/stop"), &params)
            .await
    }

    /// `POST .../status/shutdown` (`vm_shutdown`): a `qmshutdown` task
    /// (ACPI or agent shutdown).
    ///
    /// # Errors
    /// `VM is paused - cannot shutdown` without `force_stop`.
    pub async fn vm_shutdown(&self, node: &str, vmid: u32, opts: &ShutdownOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("forceStop", opts.force_stop)
            .opt("timeout", opts.timeout)
            .opt("skiplock", opts.skiplock)
            .opt("keepActive", opts.keep_active);
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/status/shutdown"),
            &params,
        )
        .await
    }

    /// `POST .../status/reboot` (`vm_reboot`): a `qmreboot` task.
    ///
    /// # Errors
    /// `VM 100 not running` for a stopped VM.
    pub async fn vm_reboot(&self, node: &str, vmid: u32, timeout: Option<u32>) -> Result<Upid> {
        let params = Params::new().opt("timeout", timeout);
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/status/reboot"),
            &params,
        )
        .await
    }

    /// `POST .../status/reset` (`vm_reset`): a `qmreset` task.
    ///
    /// # Errors
    /// `VM 100 not running` for a stopped VM.
    pub async fn vm_reset(&self, node: &str, vmid: u32, skiplock: bool) -> Result<Upid> {
        let params = Params::new().opt("skiplock", skiplock.then_some(true));
        self.task(Method::POST, &vm_path(node, vmid, "/status/reset"), &params)
            .await
    }

    /// `POST .../status/suspend` (`vm_suspend`): a `qmpause` task, or
    /// `qmsuspend` (hibernation) with `todisk`.
    ///
    /// # Errors
    /// `VM 100 not running` for a stopped VM.
    pub async fn vm_suspend(&self, node: &str, vmid: u32, opts: &SuspendOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("todisk", opts.todisk)
            .opt("statestorage", opts.statestorage.as_deref())
            .opt("skiplock", opts.skiplock);
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/status/suspend"),
            &params,
        )
        .await
    }

    /// `POST .../status/resume` (`vm_resume`): a `qmresume` task.
    ///
    /// # Errors
    /// `VM 100 not running` for a stopped VM that is not hibernated.
    pub async fn vm_resume(&self, node: &str, vmid: u32, skiplock: bool) -> Result<Upid> {
        let params = Params::new().opt("skiplock", skiplock.then_some(true));
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/status/resume"),
            &params,
        )
        .await
    }

    /// `PUT .../sendkey` (`vm_sendkey`): a key press (`ctrl-alt-delete`).
    ///
    /// # Errors
    /// `VM 100 not running`.
    pub async fn vm_sendkey(&self, node: &str, vmid: u32, key: &str, skiplock: bool) -> Result<()> {
        let params = Params::new()
            .set("key", key)
            .opt("skiplock", skiplock.then_some(true));
        let _: Value = self
            .client
            .call(Method::PUT, &vm_path(node, vmid, "/sendkey"), &params)
            .await?;
        Ok(())
    }

    /// `POST .../monitor` (`monitor`): a command line for the VM's QEMU
    /// monitor, answered with its output (lines end in `\r\n`), or
    /// `ERROR: VM 100 not running` as text.
    ///
    /// # Errors
    /// `root-only command 'x'`, a missing `Sys.Modify` on `/` for a
    /// command that changes the VM.
    pub async fn monitor(&self, node: &str, vmid: u32, command: &str) -> Result<String> {
        let params = Params::new().set("command", command);
        self.client
            .call(Method::POST, &vm_path(node, vmid, "/monitor"), &params)
            .await
    }

    /// `POST .../dbus-vmstate` (`dbus_vmstate`, 9.x): starts (`start`)
    /// or stops (`stop`) the dbus-vmstate helper of a VM running on
    /// `node`, which a migration uses to carry its conntrack state.
    ///
    /// # Errors
    /// `VM 100 not running locally on node 'x'` (parameter `node`);
    /// `VM.Migrate` missing on the VM.
    pub async fn dbus_vmstate(&self, node: &str, vmid: u32, action: &str) -> Result<()> {
        let params = Params::new().set("action", action);
        let _: Value = self
            .client
            .call(Method::POST, &vm_path(node, vmid, "/dbus-vmstate"), &params)
            .await?;
        Ok(())
    }

    and_wait! {
        /// [`Qemu::vm_start`], then waits for the task.
        vm_start_and_wait => vm_start(node: &str, vmid: u32, opts: &StartOptions);
        /// [`Qemu::vm_stop`], then waits for the task.
        vm_stop_and_wait => vm_stop(node: &str, vmid: u32, opts: &StopOptions);
        /// [`Qemu::vm_shutdown`], then waits for the task.
        vm_shutdown_and_wait => vm_shutdown(node: &str, vmid: u32, opts: &ShutdownOptions);
        /// [`Qemu::vm_reboot`], then waits for the task.
        vm_reboot_and_wait => vm_reboot(node: &str, vmid: u32, timeout: Option<u32>);
        /// [`Qemu::vm_reset`], then waits for the task.
        vm_reset_and_wait => vm_reset(node: &str, vmid: u32, skiplock: bool);
        /// [`Qemu::vm_suspend`], then waits for the task.
        vm_suspend_and_wait => vm_suspend(node: &str, vmid: u32, opts: &SuspendOptions);
        /// [`Qemu::vm_resume`], then waits for the task.
        vm_resume_and_wait => vm_resume(node: &str, vmid: u32, skiplock: bool);
    }
}
