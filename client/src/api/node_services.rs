//! A node's own settings and services: its configuration, DNS, hosts,
//! time zone, systemd services, subscription, logs, network counters,
//! report and statistics (`/nodes/{node}/config`, `dns`, `hosts`,
//! `time`, `wakeonlan`, `services`, `subscription`, `syslog`, `journal`,
//! `netstat`, `report`, `rrddata`, `rrd`), and its APT repositories
//! (`apt/repositories`).

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// A node's own settings and services; see [`Client::node_services`].
#[derive(Debug, Clone, Copy)]
pub struct NodeServices<'a> {
    client: &'a Client,
}

impl Client {
    /// The calls about a node's own settings, services and logs.
    pub fn node_services(&self) -> NodeServices<'_> {
        NodeServices { client: self }
    }
}

/// `/etc/resolv.conf` as `GET /nodes/{node}/dns` gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dns {
    /// The search domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// First name server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns1: Option<String>,
    /// Second name server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns2: Option<String>,
    /// Third name server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns3: Option<String>,
}

/// `/etc/hosts` with its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EtcHosts {
    /// The file.
    pub data: String,
    /// Its SHA-1, to pass back when writing.
    #[serde(default)]
    pub digest: Option<String>,
}

/// The node's clock and zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeTime {
    /// The time zone (`Europe/Vienna`).
    pub timezone: String,
    /// Epoch seconds.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub time: i64,
    /// The local wall-clock time as if it were UTC, epoch seconds.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub localtime: i64,
}

/// One systemd unit of `GET /nodes/{node}/services`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceStatus {
    /// The API's service id (`pveproxy`).
    pub service: String,
    /// Its name.
    #[serde(default)]
    pub name: Option<String>,
    /// systemd's description.
    #[serde(default)]
    pub desc: Option<String>,
    /// systemd's `SubState` (`running`, `dead`, `exited`, ...).
    pub state: String,
    /// systemd's `ActiveState` (`active`, `inactive`, `failed`, ...).
    #[serde(rename = "active-state", default)]
    pub active_state: Option<String>,
    /// systemd's `UnitFileState` (`enabled`, `static`, `not-found`, ...).
    #[serde(rename = "unit-state", default)]
    pub unit_state: Option<String>,
}

impl ServiceStatus {
    /// Whether the unit is active.
    pub fn is_active(&self) -> bool {
        self.active_state.as_deref() == Some("active")
    }
}

/// `GET /nodes/{node}/subscription`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionInfo {
    /// `new`, `notfound`, `active`, `invalid`, `expired` or `suspended`.
    pub status: String,
    /// A human readable message.
    #[serde(default)]
    pub message: Option<String>,
    /// The key (with Sys.Audit).
    #[serde(default)]
    pub key: Option<String>,
    /// `c`, `b`, `s` or `p` while active.
    #[serde(default)]
    pub level: Option<String>,
    /// `YYYY-MM-DD`.
    #[serde(default)]
    pub nextduedate: Option<String>,
    /// The product.
    #[serde(default)]
    pub productname: Option<String>,
    /// The server id (with Sys.Audit).
    #[serde(default)]
    pub serverid: Option<String>,
    /// The node's sockets (with Sys.Audit).
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub sockets: Option<u64>,
    /// Everything else PVE sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One line of `GET /nodes/{node}/syslog`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyslogLine {
    /// Line number, 1-based.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub n: u64,
    /// The line.
    pub t: String,
}

/// What `GET /nodes/{node}/syslog` selects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyslogFilter {
    /// Lines to skip.
    pub start: Option<u64>,
    /// Lines to give (PVE's default 50).
    pub limit: Option<u64>,
    /// `YYYY-MM-DD[ HH:MM[:SS]]`, the node's local time.
    pub since: Option<String>,
    /// `YYYY-MM-DD[ HH:MM[:SS]]`, the node's local time.
    pub until: Option<String>,
    /// Only this service's lines.
    pub service: Option<String>,
}

/// What `GET /nodes/{node}/journal` selects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalFilter {
    /// Only the last this many entries.
    pub lastentries: Option<u64>,
    /// Epoch seconds.
    pub since: Option<u64>,
    /// Epoch seconds.
    pub until: Option<u64>,
    /// Only entries after this cursor (the last line of an earlier read).
    pub startcursor: Option<String>,
    /// Only entries before this cursor.
    pub endcursor: Option<String>,
}

/// One row of `GET /nodes/{node}/netstat`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetstatRow {
    /// The guest.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub vmid: u64,
    /// `net0`, ...
    pub dev: String,
    /// Bytes into the guest.
    #[serde(rename = "in", deserialize_with = "de::u64_lenient")]
    pub bytes_in: u64,
    /// Bytes out of the guest.
    #[serde(rename = "out", deserialize_with = "de::u64_lenient")]
    pub bytes_out: u64,
}

/// The node configuration options `PUT /nodes/{node}/config` sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeOptions {
    /// The description (a comment on top of the file).
    pub description: Option<String>,
    /// `[mac=]<MAC>[,bind-interface=..][,broadcast-address=..]`.
    pub wakeonlan: Option<String>,
    /// Seconds between the guests startall starts.
    pub startall_onboot_delay: Option<u64>,
    /// `acme` property string.
    pub acme: Option<String>,
    /// `acmedomain0` to `acmedomain5` property strings
    /// (`domain=..,plugin=..[,alias=..]`), by index.
    pub acmedomains: Vec<(u8, String)>,
    /// Options to remove.
    pub delete: Vec<String>,
    /// The digest the file must still have.
    pub digest: Option<String>,
}

/// `GET /nodes/{node}/rrd`: the graph PVE drew with rrdtool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RrdGraph {
    /// `/var/lib/rrdcached/db/<rrd>_<ds>_<ds>.png`.
    pub filename: String,
    /// The PNG's bytes, each as one character (PVE's JSON formatter).
    #[serde(default)]
    pub image: Option<String>,
}

/// `GET /nodes/{node}/apt/repositories` (`repositories`): the node's APT
/// sources as proxmox-apt reads them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AptRepositories {
    /// The files read.
    pub files: Vec<AptRepositoryFile>,
    /// The files that could not be read.
    #[serde(default)]
    pub errors: Vec<AptRepositoryError>,
    /// The common digest of the files (for `digest` of the changes).
    pub digest: String,
    /// Origins and warnings.
    #[serde(default)]
    pub infos: Vec<AptRepositoryInfo>,
    /// The standard Proxmox repositories and their status.
    #[serde(rename = "standard-repos", default)]
    pub standard_repos: Vec<AptStandardRepository>,
}

/// One file of [`AptRepositories`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AptRepositoryFile {
    /// Its path.
    pub path: String,
    /// `list` or `sources`.
    #[serde(rename = "file-type")]
    pub file_type: String,
    /// Its repositories, in file order (`index` of a change).
    pub repositories: Vec<AptRepository>,
    /// The SHA-256 of its text, as bytes.
    #[serde(default)]
    pub digest: Vec<u8>,
}

/// One repository of an [`AptRepositoryFile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AptRepository {
    /// `deb`, `deb-src`.
    pub types: Vec<String>,
    /// Its URIs.
    #[serde(rename = "URIs")]
    pub uris: Vec<String>,
    /// Its suites.
    pub suites: Vec<String>,
    /// Its components.
    #[serde(default)]
    pub components: Vec<String>,
    /// Other keys (`Signed-By`, `Enabled`).
    #[serde(default)]
    pub options: Vec<AptRepositoryOption>,
    /// The comment lines above it.
    #[serde(default)]
    pub comment: Option<String>,
    /// `list` or `sources`.
    pub file_type: String,
    /// Whether it is enabled.
    #[serde(deserialize_with = "de::bool01")]
    pub enabled: bool,
}

/// A key of an [`AptRepository`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AptRepositoryOption {
    /// The key.
    pub key: String,
    /// Its values.
    pub values: Vec<String>,
}

/// A file proxmox-apt could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AptRepositoryError {
    /// The file.
    pub path: String,
    /// Why.
    pub error: String,
}

/// An origin or a warning about one repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AptRepositoryInfo {
    /// The file.
    pub path: String,
    /// The repository's index in it.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub index: u64,
    /// The property it is about (`Suites`).
    #[serde(default)]
    pub property: Option<String>,
    /// `origin`, `warning`, `ignore-pre-upgrade-warning`.
    pub kind: String,
    /// The origin (`Debian`, `Proxmox`) or the warning.
    pub message: String,
}

/// A standard repository of [`AptRepositories`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AptStandardRepository {
    /// `enterprise`, `no-subscription`, `test`, `ceph-squid-enterprise`...
    pub handle: String,
    /// Its display name.
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
    /// `None` when it is not configured, else whether it is enabled.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub status: Option<bool>,
}

fn node_path(node: &str, rest: &str) -> String {
    format!("/nodes/{}/{rest}", seg(node))
}

impl NodeServices<'_> {
    /// `GET /nodes/{node}/config` (`get_config`): the options, with
    /// `digest` once the file was written; `property` selects one.
    ///
    /// # Errors
    /// As any call.
    pub async fn get_config(
        &self,
        node: &str,
        property: Option<&str>,
    ) -> Result<Map<String, Value>> {
        let params = Params::new().opt("property", property);
        self.client
            .call(Method::GET, &node_path(node, "config"), &params)
            .await
    }

    /// `PUT /nodes/{node}/config` (`set_options`).
    ///
    /// # Errors
    /// A stale digest; an ACME domain named twice.
    pub async fn set_options(&self, node: &str, opts: &NodeOptions) -> Result<()> {
        let delete = (!opts.delete.is_empty()).then(|| opts.delete.join(","));
        let mut params = Params::new()
            .opt("description", opts.description.as_deref())
            .opt("wakeonlan", opts.wakeonlan.as_deref())
            .opt("startall-onboot-delay", opts.startall_onboot_delay)
            .opt("acme", opts.acme.as_deref())
            .opt("delete", delete)
            .opt("digest", opts.digest.as_deref());
        for (i, d) in &opts.acmedomains {
            params.push(format!("acmedomain{i}"), d.as_str());
        }
        self.client
            .call(Method::PUT, &node_path(node, "config"), &params)
            .await
    }

    /// `GET /nodes/{node}/dns` (`dns`).
    ///
    /// # Errors
    /// As any call.
    pub async fn dns(&self, node: &str) -> Result<Dns> {
        self.client
            .call(Method::GET, &node_path(node, "dns"), &Params::new())
            .await
    }

    /// `PUT /nodes/{node}/dns` (`update_dns`): the servers given replace
    /// all of them.
    ///
    /// # Errors
    /// A server that is not an IP address.
    pub async fn update_dns(&self, node: &str, dns: &Dns) -> Result<()> {
        let params = Params::new()
            .set("search", dns.search.clone().unwrap_or_default())
            .opt("dns1", dns.dns1.as_deref())
            .opt("dns2", dns.dns2.as_deref())
            .opt("dns3", dns.dns3.as_deref());
        self.client
            .call(Method::PUT, &node_path(node, "dns"), &params)
            .await
    }

    /// `GET /nodes/{node}/hosts` (`get_etc_hosts`).
    ///
    /// # Errors
    /// As any call.
    pub async fn get_etc_hosts(&self, node: &str) -> Result<EtcHosts> {
        self.client
            .call(Method::GET, &node_path(node, "hosts"), &Params::new())
            .await
    }

    /// `POST /nodes/{node}/hosts` (`write_etc_hosts`).
    ///
    /// # Errors
    /// A stale digest; an address or host name PVE refuses.
    pub async fn write_etc_hosts(
        &self,
        node: &str,
        data: &str,
        digest: Option<&str>,
    ) -> Result<()> {
        let params = Params::new().set("data", data).opt("digest", digest);
        self.client
            .call(Method::POST, &node_path(node, "hosts"), &params)
            .await
    }

    /// `GET /nodes/{node}/time` (`time`).
    ///
    /// # Errors
    /// As any call.
    pub async fn time(&self, node: &str) -> Result<NodeTime> {
        self.client
            .call(Method::GET, &node_path(node, "time"), &Params::new())
            .await
    }

    /// `PUT /nodes/{node}/time` (`set_timezone`).
    ///
    /// # Errors
    /// An unknown zone (`No such timezone`).
    pub async fn set_timezone(&self, node: &str, timezone: &str) -> Result<()> {
        let params = Params::new().set("timezone", timezone);
        self.client
            .call(Method::PUT, &node_path(node, "time"), &params)
            .await
    }

    /// `POST /nodes/{node}/wakeonlan` (`wakeonlan`): the MAC the magic
    /// packet for `node` is made of.
    ///
    /// # Errors
    /// The local node; a node without a `wakeonlan` MAC.
    pub async fn wakeonlan(&self, node: &str) -> Result<String> {
        self.client
            .call(Method::POST, &node_path(node, "wakeonlan"), &Params::new())
            .await
    }

    /// `GET /nodes/{node}/services` (`index`): every unit.
    ///
    /// # Errors
    /// As any call.
    pub async fn services(&self, node: &str) -> Result<Vec<ServiceStatus>> {
        self.client
            .call(Method::GET, &node_path(node, "services"), &Params::new())
            .await
    }

    /// `GET /nodes/{node}/services/{service}/state` (`service_state`).
    ///
    /// # Errors
    /// A service the release does not list.
    pub async fn service_state(&self, node: &str, service: &str) -> Result<ServiceStatus> {
        let path = node_path(node, &format!("services/{}/state", seg(service)));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    async fn service_cmd(&self, node: &str, service: &str, cmd: &str) -> Result<Upid> {
        let path = node_path(node, &format!("services/{}/{cmd}", seg(service)));
        self.client.call(Method::POST, &path, &Params::new()).await
    }

    /// `POST .../services/{service}/start` (`service_start`): a
    /// `srvstart` task.
    ///
    /// # Errors
    /// As [`NodeServices::service_state`].
    pub async fn service_start(&self, node: &str, service: &str) -> Result<Upid> {
        self.service_cmd(node, service, "start").await
    }

    /// `POST .../services/{service}/stop` (`service_stop`): a `srvstop`
    /// task; it fails for pveproxy, pvedaemon and pve-cluster.
    ///
    /// # Errors
    /// As [`NodeServices::service_state`].
    pub async fn service_stop(&self, node: &str, service: &str) -> Result<Upid> {
        self.service_cmd(node, service, "stop").await
    }

    /// `POST .../services/{service}/restart` (`service_restart`).
    ///
    /// # Errors
    /// As [`NodeServices::service_state`].
    pub async fn service_restart(&self, node: &str, service: &str) -> Result<Upid> {
        self.service_cmd(node, service, "restart").await
    }

    /// `POST .../services/{service}/reload` (`service_reload`).
    ///
    /// # Errors
    /// As [`NodeServices::service_state`].
    pub async fn service_reload(&self, node: &str, service: &str) -> Result<Upid> {
        self.service_cmd(node, service, "reload").await
    }

    /// `GET /nodes/{node}/subscription` (`get`).
    ///
    /// # Errors
    /// As any call.
    pub async fn subscription(&self, node: &str) -> Result<SubscriptionInfo> {
        self.client
            .call(
                Method::GET,
                &node_path(node, "subscription"),
                &Params::new(),
            )
            .await
    }

    /// `PUT /nodes/{node}/subscription` (`set`): sets a key.
    ///
    /// # Errors
    /// A malformed key; one for fewer sockets than the node has.
    pub async fn set_subscription(&self, node: &str, key: &str) -> Result<()> {
        let params = Params::new().set("key", key);
        self.client
            .call(Method::PUT, &node_path(node, "subscription"), &params)
            .await
    }

    /// `POST /nodes/{node}/subscription` (`update`): checks the key again.
    ///
    /// # Errors
    /// As any call.
    pub async fn update_subscription(&self, node: &str, force: bool) -> Result<()> {
        let params = Params::new().opt("force", force.then_some(true));
        self.client
            .call(Method::POST, &node_path(node, "subscription"), &params)
            .await
    }

    /// `DELETE /nodes/{node}/subscription` (`delete`).
    ///
    /// # Errors
    /// As any call.
    pub async fn delete_subscription(&self, node: &str) -> Result<()> {
        self.client
            .call(
                Method::DELETE,
                &node_path(node, "subscription"),
                &Params::new(),
            )
            .await
    }

    /// `GET /nodes/{node}/syslog` (`syslog`): the lines and how many
    /// there are in all.
    ///
    /// # Errors
    /// [`crate::Error::Permission`] without Sys.Syslog.
    pub async fn syslog(&self, node: &str, f: &SyslogFilter) -> Result<(Vec<SyslogLine>, u64)> {
        let params = Params::new()
            .opt("start", f.start)
            .opt("limit", f.limit)
            .opt("since", f.since.as_deref())
            .opt("until", f.until.as_deref())
            .opt("service", f.service.as_deref());
        let (lines, total): (Vec<SyslogLine>, _) = self
            .client
            .call_with_total(Method::GET, &node_path(node, "syslog"), &params)
            .await?;
        let total = total.unwrap_or(lines.len() as u64);
        Ok((lines, total))
    }

    /// `GET /nodes/{node}/journal` (`journal`): the start cursor, the
    /// lines, the end cursor.
    ///
    /// # Errors
    /// As [`NodeServices::syslog`].
    pub async fn journal(&self, node: &str, f: &JournalFilter) -> Result<Vec<String>> {
        let params = Params::new()
            .opt("lastentries", f.lastentries)
            .opt("since", f.since)
            .opt("until", f.until)
            .opt("startcursor", f.startcursor.as_deref())
            .opt("endcursor", f.endcursor.as_deref());
        self.client
            .call(Method::GET, &node_path(node, "journal"), &params)
            .await
    }

    /// `GET /nodes/{node}/netstat` (`netstat`).
    ///
    /// # Errors
    /// As any call.
    pub async fn netstat(&self, node: &str) -> Result<Vec<NetstatRow>> {
        self.client
            .call(Method::GET, &node_path(node, "netstat"), &Params::new())
            .await
    }

    /// `GET /nodes/{node}/report` (`report`): `pvereport`'s text.
    ///
    /// # Errors
    /// As any call.
    pub async fn report(&self, node: &str) -> Result<String> {
        self.client
            .call(Method::GET, &node_path(node, "report"), &Params::new())
            .await
    }

    /// `GET /nodes/{node}/rrddata` (`rrddata`): the node's statistics
    /// series for `timeframe` (`hour`, `day`, ...).
    ///
    /// # Errors
    /// As any call.
    pub async fn rrddata(&self, node: &str, timeframe: &str) -> Result<Vec<Map<String, Value>>> {
        let params = Params::new().set("timeframe", timeframe);
        self.client
            .call(Method::GET, &node_path(node, "rrddata"), &params)
            .await
    }

    /// `GET /nodes/{node}/rrd` (`rrd`): the graph of `ds` (one or two data
    /// sources of the node's series) for `timeframe`.
    ///
    /// # Errors
    /// PVE's `RRD error: No DS called 'x' in '...'` for a data source the
    /// node's file does not have; a failure for more than two.
    pub async fn rrd(
        &self,
        node: &str,
        timeframe: &str,
        ds: &[&str],
        cf: Option<&str>,
    ) -> Result<RrdGraph> {
        let params = Params::new()
            .set("timeframe", timeframe)
            .set("ds", ds.join(","))
            .opt("cf", cf);
        self.client
            .call(Method::GET, &node_path(node, "rrd"), &params)
            .await
    }

    /// `GET /nodes/{node}/apt/repositories` (`repositories`).
    ///
    /// # Errors
    /// As any call.
    pub async fn repositories(&self, node: &str) -> Result<AptRepositories> {
        self.client
            .call(
                Method::GET,
                &node_path(node, "apt/repositories"),
                &Params::new(),
            )
            .await
    }

    /// `POST /nodes/{node}/apt/repositories` (`change_repository`):
    /// enables or disables the repository at `index` of the file `path`.
    ///
    /// # Errors
    /// `detected modified configuration ...` for a stale `digest`,
    /// `invalid path - x`, `invalid index - n`.
    pub async fn change_repository(
        &self,
        node: &str,
        path: &str,
        index: u64,
        enabled: Option<bool>,
        digest: Option<&str>,
    ) -> Result<()> {
        let params = Params::new()
            .set("path", path)
            .set("index", index)
            .opt("enabled", enabled)
            .opt("digest", digest);
        self.client
            .call(Method::POST, &node_path(node, "apt/repositories"), &params)
            .await
    }

    /// `PUT /nodes/{node}/apt/repositories` (`add_repository`): adds the
    /// standard repository `handle` (`no-subscription`, ...).
    ///
    /// # Errors
    /// An unknown handle; a stale `digest`.
    pub async fn add_repository(
        &self,
        node: &str,
        handle: &str,
        digest: Option<&str>,
    ) -> Result<()> {
        let params = Params::new().set("handle", handle).opt("digest", digest);
        self.client
            .call(Method::PUT, &node_path(node, "apt/repositories"), &params)
            .await
    }
}
