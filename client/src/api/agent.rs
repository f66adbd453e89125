//! `/nodes/{node}/qemu/{vmid}/agent`: the QEMU guest agent inside a VM.
//!
//! PVE answers most commands as `{"result": ...}`; the calls here unwrap
//! `result`. Before the guest answers, PVE checks that the config enables
//! the agent (`No QEMU guest agent configured`), that the VM runs (`VM 100
//! is not running`) and that the agent answers (`QEMU guest agent is not
//! running`); each refusal is a [`crate::Error::Server`] with that
//! message.
//!
//! [`Agent::ip_addresses`] gives a VM's usable addresses: those of
//! `network-get-interfaces` without loopback and link-local ones.

use std::net::IpAddr;

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use crate::Client;
use crate::de;
use crate::error::{Error, Result};
use crate::transport::Params;

/// The guest agent area; see [`Client::agent`].
#[derive(Debug, Clone, Copy)]
pub struct Agent<'a> {
    client: &'a Client,
}

impl Client {
    /// The guest agent calls.
    pub fn agent(&self) -> Agent<'_> {
        Agent { client: self }
    }
}

/// One address of a guest interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestIpAddress {
    /// The address as the guest reports it.
    #[serde(rename = "ip-address")]
    pub ip_address: String,
    /// `ipv4` or `ipv6`.
    #[serde(rename = "ip-address-type")]
    pub ip_address_type: String,
    /// The prefix length.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub prefix: Option<u64>,
}

impl GuestIpAddress {
    /// The address, if it parses (an IPv6 zone such as `%eth0` is
    /// dropped).
    pub fn ip(&self) -> Option<IpAddr> {
        let text = self.ip_address.split('%').next().unwrap_or_default();
        text.parse().ok()
    }

    /// Whether it is neither loopback (`127.0.0.0/8`, `::1`) nor
    /// link-local (`169.254.0.0/16`, `fe80::/10`), nor unparsable: the
    /// addresses worth reporting.
    pub fn is_usable(&self) -> bool {
        self.ip().is_some_and(is_usable)
    }
}

/// Whether `ip` is neither loopback, link-local nor unspecified.
pub fn is_usable(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !(v4.is_loopback() || v4.is_link_local() || v4.is_unspecified()),
        IpAddr::V6(v6) => {
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            !(v6.is_loopback() || link_local || v6.is_unspecified())
        }
    }
}

/// One interface of `network-get-interfaces`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestInterface {
    /// The guest's name for it (`lo`, `ens18`, `Ethernet`).
    pub name: String,
    /// The MAC address.
    #[serde(
        rename = "hardware-address",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub hardware_address: Option<String>,
    /// Its addresses.
    #[serde(
        rename = "ip-addresses",
        default,
        deserialize_with = "de::null_default"
    )]
    pub ip_addresses: Vec<GuestIpAddress>,
    /// Traffic counters (`rx-bytes`, `tx-packets`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics: Option<Map<String, Value>>,
}

impl GuestInterface {
    /// Whether it is the loopback interface (by its MAC of zeros or only
    /// loopback addresses).
    pub fn is_loopback(&self) -> bool {
        self.name == "lo"
            || self.hardware_address.as_deref() == Some("00:00:00:00:00:00")
            || (!self.ip_addresses.is_empty()
                && self
                    .ip_addresses
                    .iter()
                    .all(|a| a.ip().is_some_and(|ip| ip.is_loopback())))
    }

    /// Its usable addresses (see [`GuestIpAddress::is_usable`]).
    pub fn usable_addresses(&self) -> Vec<IpAddr> {
        self.ip_addresses
            .iter()
            .filter(|a| a.is_usable())
            .filter_map(GuestIpAddress::ip)
            .collect()
    }
}

/// The usable addresses of all interfaces, in the guest's order, without
/// duplicates: IPv4 and IPv6, neither loopback nor link-local.
pub fn usable_addresses(ifaces: &[GuestInterface]) -> Vec<IpAddr> {
    let mut out: Vec<IpAddr> = Vec::new();
    for ip in ifaces.iter().flat_map(GuestInterface::usable_addresses) {
        if !out.contains(&ip) {
            out.push(ip);
        }
    }
    out
}

/// A command of `info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportedCommand {
    /// `guest-ping`, ...
    pub name: String,
    /// Whether the agent runs it.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub enabled: Option<bool>,
    /// Whether it answers.
    #[serde(
        rename = "success-response",
        default,
        deserialize_with = "de::opt_bool01"
    )]
    pub success_response: Option<bool>,
}

/// What `info` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// The qemu-ga version.
    pub version: String,
    /// The commands it knows.
    #[serde(default)]
    pub supported_commands: Vec<SupportedCommand>,
}

/// What `get-osinfo` answers (every key optional, as in qemu-ga).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsInfo {
    /// `debian`, `mswindows`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The OS name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The full name and version.
    #[serde(
        rename = "pretty-name",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub pretty_name: Option<String>,
    /// The version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The kernel release.
    #[serde(
        rename = "kernel-release",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub kernel_release: Option<String>,
    /// The architecture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// Anything else (`version-id`, `variant`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What `get-timezone` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timezone {
    /// The zone name, when the guest knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Seconds east of UTC.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub offset: i64,
}

/// A user logged in to the guest (`get-users`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestUser {
    /// The user name.
    pub user: String,
    /// When the login happened, epoch seconds.
    #[serde(rename = "login-time", default, deserialize_with = "de::opt_f64")]
    pub login_time: Option<f64>,
    /// The Windows domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
}

/// A virtual CPU (`get-vcpus`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestCpu {
    /// The CPU's number.
    #[serde(rename = "logical-id", deserialize_with = "de::u64_lenient")]
    pub logical_id: u64,
    /// Whether it is online.
    #[serde(deserialize_with = "de::bool01")]
    pub online: bool,
    /// Whether the guest may take it offline.
    #[serde(rename = "can-offline", default, deserialize_with = "de::opt_bool01")]
    pub can_offline: Option<bool>,
}

/// A memory block (`get-memory-blocks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryBlock {
    /// Its physical index.
    #[serde(rename = "phys-index", deserialize_with = "de::u64_lenient")]
    pub phys_index: u64,
    /// Whether it is online.
    #[serde(deserialize_with = "de::bool01")]
    pub online: bool,
    /// Whether the guest may take it offline.
    #[serde(rename = "can-offline", default, deserialize_with = "de::opt_bool01")]
    pub can_offline: Option<bool>,
}

/// A mounted file system (`get-fsinfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestFilesystem {
    /// The device name.
    pub name: String,
    /// Where it is mounted.
    pub mountpoint: String,
    /// The file system type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Size, bytes.
    #[serde(rename = "total-bytes", default, deserialize_with = "de::opt_u64")]
    pub total_bytes: Option<u64>,
    /// In use, bytes.
    #[serde(rename = "used-bytes", default, deserialize_with = "de::opt_u64")]
    pub used_bytes: Option<u64>,
    /// Anything else (`disk`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What `exec-status` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecStatus {
    /// Whether the process ended.
    #[serde(deserialize_with = "de::bool01")]
    pub exited: bool,
    /// Its exit code, once ended.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub exitcode: Option<i64>,
    /// The signal that ended it.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub signal: Option<i64>,
    /// Its standard output.
    #[serde(rename = "out-data", default, skip_serializing_if = "Option::is_none")]
    pub out_data: Option<String>,
    /// Its standard error.
    #[serde(rename = "err-data", default, skip_serializing_if = "Option::is_none")]
    pub err_data: Option<String>,
    /// Whether the output was cut.
    #[serde(rename = "out-truncated", default, deserialize_with = "de::opt_bool01")]
    pub out_truncated: Option<bool>,
    /// Whether the error output was cut.
    #[serde(rename = "err-truncated", default, deserialize_with = "de::opt_bool01")]
    pub err_truncated: Option<bool>,
}

/// What `file-read` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileContent {
    /// The content (text, or base64 with `decode` off).
    pub content: String,
    /// Whether PVE stopped before the end (16 MiB at most).
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub truncated: Option<bool>,
    /// Bytes read (9.x).
    #[serde(rename = "bytes-read", default, deserialize_with = "de::opt_u64")]
    pub bytes_read: Option<u64>,
}

/// Options of `file-read`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileReadOptions {
    /// Bytes to read (9.x).
    pub count: Option<u64>,
    /// From this offset (9.x).
    pub offset: Option<u64>,
    /// Decode to text (PVE's default); off answers base64.
    pub decode: Option<bool>,
}

#[derive(Deserialize)]
struct Wrapped<T> {
    result: T,
}

fn agent_path(node: &str, vmid: u32, cmd: &str) -> String {
    format!("/nodes/{}/qemu/{vmid}/agent/{cmd}", seg(node))
}

impl Agent<'_> {
    /// A command answered as `{"result": T}`.
    async fn result<T: DeserializeOwned>(
        &self,
        method: Method,
        node: &str,
        vmid: u32,
        cmd: &str,
    ) -> Result<T> {
        let w: Wrapped<T> = self
            .client
            .call(method, &agent_path(node, vmid, cmd), &Params::new())
            .await?;
        Ok(w.result)
    }

    /// A command whose answer carries nothing of use.
    async fn unit(&self, method: Method, node: &str, vmid: u32, cmd: &str) -> Result<()> {
        let _: Value = self
            .client
            .call(method, &agent_path(node, vmid, cmd), &Params::new())
            .await?;
        Ok(())
    }

    /// `POST .../agent` (`agent`): any command by name (`ping`,
    /// `get-host-name`, ...), its `result` as JSON.
    ///
    /// # Errors
    /// The agent checks (see the module); `Agent error: ...` from the
    /// guest.
    pub async fn agent(&self, node: &str, vmid: u32, command: &str) -> Result<Value> {
        let path = format!("/nodes/{}/qemu/{vmid}/agent", seg(node));
        let params = Params::new().set("command", command);
        let w: Wrapped<Value> = self.client.call(Method::POST, &path, &params).await?;
        Ok(w.result)
    }

    /// `POST .../agent/ping` (`ping`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn ping(&self, node: &str, vmid: u32) -> Result<()> {
        self.unit(Method::POST, node, vmid, "ping").await
    }

    /// `GET .../agent/info` (`info`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn info(&self, node: &str, vmid: u32) -> Result<AgentInfo> {
        self.result(Method::GET, node, vmid, "info").await
    }

    /// `GET .../agent/get-time` (`get-time`): the guest's clock, in
    /// nanoseconds since the epoch.
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_time(&self, node: &str, vmid: u32) -> Result<i64> {
        let v: Value = self.result(Method::GET, node, vmid, "get-time").await?;
        v.as_i64()
            .or_else(|| v.as_f64().map(|f| f as i64))
            .ok_or_else(|| Error::Decode {
                message: format!("get-time: expected nanoseconds, got {v}"),
            })
    }

    /// `GET .../agent/network-get-interfaces` (`network-get-interfaces`):
    /// every interface with its addresses, loopback included; see
    /// [`usable_addresses`] and [`Agent::ip_addresses`].
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn network_get_interfaces(
        &self,
        node: &str,
        vmid: u32,
    ) -> Result<Vec<GuestInterface>> {
        self.result(Method::GET, node, vmid, "network-get-interfaces")
            .await
    }

    /// The VM's usable addresses: those of
    /// [`Agent::network_get_interfaces`] without loopback (`127.0.0.1`,
    /// `::1`) and link-local (`169.254.x.x`, `fe80::`) ones, as the
    /// operator reports them in `status.ipAddresses`.
    ///
    /// # Errors
    /// As [`Agent::network_get_interfaces`].
    pub async fn ip_addresses(&self, node: &str, vmid: u32) -> Result<Vec<IpAddr>> {
        Ok(usable_addresses(
            &self.network_get_interfaces(node, vmid).await?,
        ))
    }

    /// `GET .../agent/get-vcpus` (`get-vcpus`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_vcpus(&self, node: &str, vmid: u32) -> Result<Vec<GuestCpu>> {
        self.result(Method::GET, node, vmid, "get-vcpus").await
    }

    /// `GET .../agent/get-fsinfo` (`get-fsinfo`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_fsinfo(&self, node: &str, vmid: u32) -> Result<Vec<GuestFilesystem>> {
        self.result(Method::GET, node, vmid, "get-fsinfo").await
    }

    /// `GET .../agent/get-memory-blocks` (`get-memory-blocks`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_memory_blocks(&self, node: &str, vmid: u32) -> Result<Vec<MemoryBlock>> {
        self.result(Method::GET, node, vmid, "get-memory-blocks")
            .await
    }

    /// `GET .../agent/get-memory-block-info` (`get-memory-block-info`):
    /// the size of a memory block, bytes.
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_memory_block_info(&self, node: &str, vmid: u32) -> Result<u64> {
        #[derive(Deserialize)]
        struct Info {
            #[serde(deserialize_with = "de::u64_lenient")]
            size: u64,
        }
        let i: Info = self
            .result(Method::GET, node, vmid, "get-memory-block-info")
            .await?;
        Ok(i.size)
    }

    /// `GET .../agent/get-host-name` (`get-host-name`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_host_name(&self, node: &str, vmid: u32) -> Result<String> {
        #[derive(Deserialize)]
        struct Host {
            #[serde(rename = "host-name")]
            host_name: String,
        }
        let h: Host = self
            .result(Method::GET, node, vmid, "get-host-name")
            .await?;
        Ok(h.host_name)
    }

    /// `GET .../agent/get-osinfo` (`get-osinfo`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_osinfo(&self, node: &str, vmid: u32) -> Result<OsInfo> {
        self.result(Method::GET, node, vmid, "get-osinfo").await
    }

    /// `GET .../agent/get-users` (`get-users`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_users(&self, node: &str, vmid: u32) -> Result<Vec<GuestUser>> {
        self.result(Method::GET, node, vmid, "get-users").await
    }

    /// `GET .../agent/get-timezone` (`get-timezone`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn get_timezone(&self, node: &str, vmid: u32) -> Result<Timezone> {
        self.result(Method::GET, node, vmid, "get-timezone").await
    }

    /// `POST .../agent/fsfreeze-status` (`fsfreeze-status`): `frozen` or
    /// `thawed`.
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn fsfreeze_status(&self, node: &str, vmid: u32) -> Result<String> {
        self.result(Method::POST, node, vmid, "fsfreeze-status")
            .await
    }

    /// `POST .../agent/fsfreeze-freeze` (`fsfreeze-freeze`): the number
    /// of file systems frozen.
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn fsfreeze_freeze(&self, node: &str, vmid: u32) -> Result<u64> {
        self.result(Method::POST, node, vmid, "fsfreeze-freeze")
            .await
    }

    /// `POST .../agent/fsfreeze-thaw` (`fsfreeze-thaw`): the number of
    /// file systems thawed.
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn fsfreeze_thaw(&self, node: &str, vmid: u32) -> Result<u64> {
        self.result(Method::POST, node, vmid, "fsfreeze-thaw").await
    }

    /// `POST .../agent/fstrim` (`fstrim`): qemu-ga's answer (`paths`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn fstrim(&self, node: &str, vmid: u32) -> Result<Value> {
        self.result(Method::POST, node, vmid, "fstrim").await
    }

    /// `POST .../agent/suspend-disk` (`suspend-disk`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn suspend_disk(&self, node: &str, vmid: u32) -> Result<()> {
        self.unit(Method::POST, node, vmid, "suspend-disk").await
    }

    /// `POST .../agent/suspend-ram` (`suspend-ram`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn suspend_ram(&self, node: &str, vmid: u32) -> Result<()> {
        self.unit(Method::POST, node, vmid, "suspend-ram").await
    }

    /// `POST .../agent/suspend-hybrid` (`suspend-hybrid`).
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn suspend_hybrid(&self, node: &str, vmid: u32) -> Result<()> {
        self.unit(Method::POST, node, vmid, "suspend-hybrid").await
    }

    /// `POST .../agent/shutdown` (`shutdown`): asks the guest to shut
    /// down.
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn shutdown(&self, node: &str, vmid: u32) -> Result<()> {
        self.unit(Method::POST, node, vmid, "shutdown").await
    }

    /// `POST .../agent/exec` (`exec`): starts `command` (program and
    /// arguments) with optional standard input; answers the guest's pid
    /// for [`Agent::exec_status`].
    ///
    /// # Errors
    /// The agent checks (see the module); `Agent error: ...`.
    pub async fn exec(
        &self,
        node: &str,
        vmid: u32,
        command: &[&str],
        input_data: Option<&str>,
    ) -> Result<u64> {
        #[derive(Deserialize)]
        struct Pid {
            #[serde(deserialize_with = "de::u64_lenient")]
            pid: u64,
        }
        let params = Params::new()
            .array("command", command)
            .opt("input-data", input_data);
        let p: Pid = self
            .client
            .call(Method::POST, &agent_path(node, vmid, "exec"), &params)
            .await?;
        Ok(p.pid)
    }

    /// `GET .../agent/exec-status` (`exec-status`).
    ///
    /// # Errors
    /// The agent checks (see the module); an unknown pid.
    pub async fn exec_status(&self, node: &str, vmid: u32, pid: u64) -> Result<ExecStatus> {
        let params = Params::new().set("pid", pid);
        self.client
            .call(Method::GET, &agent_path(node, vmid, "exec-status"), &params)
            .await
    }

    /// `GET .../agent/file-read` (`file-read`).
    ///
    /// # Errors
    /// The agent checks (see the module); `Agent error: ...` for a
    /// missing file.
    pub async fn file_read(
        &self,
        node: &str,
        vmid: u32,
        file: &str,
        opts: &FileReadOptions,
    ) -> Result<FileContent> {
        let params = Params::new()
            .set("file", file)
            .opt("count", opts.count)
            .opt("offset", opts.offset)
            .opt("decode", opts.decode);
        self.client
            .call(Method::GET, &agent_path(node, vmid, "file-read"), &params)
            .await
    }

    /// `POST .../agent/file-write` (`file-write`): writes `content`;
    /// with `encode` off, `content` must already be base64.
    ///
    /// # Errors
    /// The agent checks (see the module).
    pub async fn file_write(
        &self,
        node: &str,
        vmid: u32,
        file: &str,
        content: &str,
        encode: Option<bool>,
    ) -> Result<()> {
        let params = Params::new()
            .set("file", file)
            .set("content", content)
            .opt("encode", encode);
        let _: Value = self
            .client
            .call(Method::POST, &agent_path(node, vmid, "file-write"), &params)
            .await?;
        Ok(())
    }

    /// `POST .../agent/set-user-password` (`set-user-password`);
    /// `crypted` when `password` is already crypt(3)-hashed.
    ///
    /// # Errors
    /// The agent checks (see the module); `Agent error: ...` for an
    /// unknown user.
    pub async fn set_user_password(
        &self,
        node: &str,
        vmid: u32,
        username: &str,
        password: &str,
        crypted: bool,
    ) -> Result<()> {
        let params = Params::new()
            .set("username", username)
            .set("password", password)
            .opt("crypted", crypted.then_some(true));
        let _: Value = self
            .client
            .call(
                Method::POST,
                &agent_path(node, vmid, "set-user-password"),
                &params,
            )
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn loopback_and_link_local_are_filtered() {
        let ifaces: Vec<GuestInterface> = serde_json::from_value(json!([
            {"name": "lo", "hardware-address": "00:00:00:00:00:00", "ip-addresses": [
                {"ip-address": "127.0.0.1", "ip-address-type": "ipv4", "prefix": 8},
                {"ip-address": "::1", "ip-address-type": "ipv6", "prefix": 128}]},
            {"name": "ens18", "hardware-address": "bc:24:11:00:00:01", "ip-addresses": [
                {"ip-address": "192.168.1.100", "ip-address-type": "ipv4", "prefix": 24},
                {"ip-address": "169.254.3.4", "ip-address-type": "ipv4", "prefix": 16},
                {"ip-address": "fd00::1234", "ip-address-type": "ipv6", "prefix": 64},
                {"ip-address": "fe80::be24:11ff:fe00:1%ens18", "ip-address-type": "ipv6", "prefix": 64}]},
            {"name": "docker0", "ip-addresses": null},
        ]))
        .expect("interfaces");
        assert!(ifaces[0].is_loopback());
        assert!(!ifaces[1].is_loopback());
        let ips: Vec<String> = usable_addresses(&ifaces)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(ips, ["192.168.1.100", "fd00::1234"]);
        assert_eq!(
            ifaces[1].ip_addresses[3].ip().map(|i| i.to_string()),
            Some("fe80::be24:11ff:fe00:1".into())
        );
    }
}
