//! What a node keeps about itself and the services it runs: its
//! configuration (`/etc/pve/nodes/<node>/config`), `/etc/resolv.conf`,
//! `/etc/hosts`, `/etc/timezone`, the systemd units PVE lets an
//! administrator start and stop, the subscription (`/etc/subscription`)
//! and the system log those changes write (pve-manager
//! `API2/Nodes.pm`, `API2/NodeConfig.pm`, `NodeConfig.pm`,
//! `API2/Services.pm`, `API2/Subscription.pm`; pve-common `INotify.pm`).
//!
//! A node that nothing was written to has the files of a fresh install;
//! they are kept here only once a scenario or a call sets them, so a
//! saved world of nodes left as installed carries nothing of this area.

pub mod apt_repos;
mod config;
pub mod logs;
mod ops;
pub mod services;
pub mod stats;
pub mod subscription;
pub mod tz;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use config::NodeConfig;
pub use logs::LogLine;
pub use ops::{NetRow, netstat, set_subscription_key, store_subscription, update_subscription};
pub use services::{ServiceAction, ServiceState};
pub use subscription::Subscription;

use super::chunked::Chunked;
use super::{Error, PveVersion, Result};

/// The message of a digest that no longer matches
/// (`PVE::Tools::assert_if_modified`).
pub const MODIFIED: &str =
    "detected modified configuration - file changed by other user? Try again.";

/// What a node's defaults are made from.
#[derive(Debug, Clone, Copy)]
pub struct Seed<'a> {
    /// The node name.
    pub name: &'a str,
    /// Its address (`/etc/hosts`).
    pub ip: &'a str,
    /// Whether it is a member of a cluster (corosync runs).
    pub clustered: bool,
    /// Its CPU sockets (a subscription key's count is checked against them).
    pub sockets: u32,
    /// The release (which services exist).
    pub version: PveVersion,
}

/// The DNS domain of a fresh install's host names.
pub const DOMAIN: &str = "example.com";

/// One node's own files and services.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSys {
    /// `/etc/pve/nodes/<node>/config`; `None` until written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config: Option<NodeConfig>,
    /// `search` of `/etc/resolv.conf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    search: Option<String>,
    /// Its `nameserver` lines, in order (PVE reads the first three).
    #[serde(default)]
    dns: Vec<String>,
    /// `/etc/hosts`.
    hosts: String,
    /// `/etc/timezone`.
    timezone: String,
    /// Services whose state differs from a fresh install's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    services: BTreeMap<String, ServiceState>,
    /// `/etc/subscription`; `None` when there is no key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subscription: Option<Subscription>,
    /// Lines the node's services wrote to its journal, oldest first.
    #[serde(default, skip_serializing_if = "Chunked::is_empty")]
    log: Chunked<LogLine>,
    /// The APT sources; `None` while they are the release's fresh ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    apt: Option<apt_repos::AptSources>,
}

impl NodeSys {
    /// The files of a fresh install of `seed`'s node.
    pub fn fresh(seed: Seed<'_>) -> Self {
        Self {
            config: None,
            search: Some(DOMAIN.into()),
            dns: vec!["192.0.2.1".into()],
            hosts: default_hosts(seed.name, seed.ip),
            timezone: "UTC".into(),
            services: BTreeMap::new(),
            subscription: None,
            log: Chunked::new(),
            apt: None,
        }
    }

    /// `/etc/pve/nodes/<node>/config`, once written.
    pub fn config(&self) -> Option<&NodeConfig> {
        self.config.as_ref()
    }

    /// `PUT /nodes/{node}/config`: sets `set`, then removes `delete`,
    /// after checking `digest` against the file's.
    ///
    /// # Errors
    /// A changed digest, a value with a newline, an ACME domain named
    /// twice or with a plugin not among `plugins`.
    pub fn set_config(
        &mut self,
        set: &BTreeMap<String, String>,
        delete: &[String],
        digest: Option<&str>,
        plugins: &std::collections::BTreeSet<String>,
    ) -> Result<()> {
        let mut conf = self.config.clone().unwrap_or_default();
        if let Some(d) = digest.filter(|d| !d.is_empty())
            && self.config.is_some()
            && d != conf.digest()
        {
            return Err(Error::conflict(MODIFIED));
        }
        conf.update(set, delete, plugins)?;
        self.config = Some(conf);
        Ok(())
    }

    /// The `wakeonlan` MAC of the node's configuration.
    pub fn wakeonlan_mac(&self) -> Option<String> {
        self.config.as_ref().and_then(NodeConfig::wakeonlan_mac)
    }

    /// `search` of `/etc/resolv.conf`.
    pub fn search(&self) -> Option<&str> {
        self.search.as_deref()
    }

    /// The name servers PVE reads (the first three).
    pub fn nameservers(&self) -> &[String] {
        &self.dns[..self.dns.len().min(3)]
    }

    /// `PUT /nodes/{node}/dns`: the name servers given replace all of
    /// them (a server named twice, or `0.0.0.0`, is written once or not
    /// at all, as `update_etc_resolv_conf` does).
    pub fn set_dns(&mut self, search: &str, servers: [Option<&str>; 3]) {
        self.search = (!search.is_empty()).then(|| search.to_string());
        let mut dns: Vec<String> = Vec::new();
        for ns in servers.into_iter().flatten() {
            if !ns.is_empty() && ns != "0.0.0.0" && !dns.iter().any(|d| d == ns) {
                dns.push(ns.to_string());
            }
        }
        self.dns = dns;
    }

    /// `/etc/hosts`.
    pub fn hosts(&self) -> &str {
        &self.hosts
    }

    /// The SHA-1 of `/etc/hosts`.
    pub fn hosts_digest(&self) -> String {
        super::qemu::sha1_hex(self.hosts.as_bytes())
    }

    /// `POST /nodes/{node}/hosts`: checks every line as
    /// `write_etc_hosts` does, then replaces the file.
    ///
    /// # Errors
    /// A changed digest, an address or host name PVE refuses.
    pub fn write_hosts(&mut self, data: &str, digest: Option<&str>) -> Result<()> {
        let current = super::qemu::sha1_hex(self.hosts.as_bytes());
        if let Some(d) = digest.filter(|d| !d.is_empty())
            && d != current
        {
            return Err(Error::failed(MODIFIED));
        }
        for line in data.split('\n') {
            let t = line.trim_start();
            if t.starts_with('#') || t.trim().is_empty() {
                continue;
            }
            let mut words = line.split_whitespace();
            let ip = words.next().unwrap_or_default();
            if ip.parse::<std::net::IpAddr>().is_err() || line.starts_with(char::is_whitespace) {
                let shown = if line.starts_with(char::is_whitespace) {
                    ""
                } else {
                    ip
                };
                return Err(Error::invalid("data", format!("Invalid IP '{shown}'")));
            }
            for name in words {
                if !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
                {
                    return Err(Error::invalid("data", format!("Invalid Hostname '{name}'")));
                }
            }
        }
        self.hosts = data.to_string();
        Ok(())
    }

    /// The time zone of `/etc/timezone`.
    pub fn timezone(&self) -> &str {
        &self.timezone
    }

    /// `PUT /nodes/{node}/time`.
    ///
    /// # Errors
    /// A zone fake-pve's zone table does not have (`No such timezone`).
    pub fn set_timezone(&mut self, zone: &str) -> Result<()> {
        if tz::find(zone).is_none() {
            return Err(Error::invalid("timezone", "No such timezone"));
        }
        self.timezone = zone.to_string();
        Ok(())
    }

    /// The local time of the node's zone at `now` (epoch seconds, as
    /// seconds since the epoch of the local calendar).
    pub fn localtime(&self, now: i64) -> i64 {
        now + tz::offset(&self.timezone, now)
    }

    /// The state of `unit` (a fresh install's unless it changed).
    pub fn service_state(&self, unit: &services::Unit, clustered: bool) -> ServiceState {
        self.services
            .get(unit.name)
            .copied()
            .unwrap_or_else(|| unit.initial(clustered))
    }

    /// Sets the state of `service`.
    pub fn set_service_state(&mut self, service: &str, state: ServiceState) {
        self.services.insert(service.to_string(), state);
    }

    /// The subscription, if a key is set.
    pub fn subscription(&self) -> Option<&Subscription> {
        self.subscription.as_ref()
    }

    /// Sets or removes the subscription.
    pub fn set_subscription(&mut self, sub: Option<Subscription>) {
        self.subscription = sub;
    }

    /// The lines the node's services wrote.
    pub fn log(&self) -> &Chunked<LogLine> {
        &self.log
    }

    /// The APT sources (a fresh install's of release `v` until changed).
    pub fn apt_sources(&self, v: PveVersion) -> std::borrow::Cow<'_, apt_repos::AptSources> {
        match &self.apt {
            Some(a) => std::borrow::Cow::Borrowed(a),
            None => std::borrow::Cow::Owned(apt_repos::AptSources::fresh(v)),
        }
    }

    /// The APT sources, to change (kept from now on).
    pub fn apt_sources_mut(&mut self, v: PveVersion) -> &mut apt_repos::AptSources {
        self.apt
            .get_or_insert_with(|| apt_repos::AptSources::fresh(v))
    }

    /// Adds lines to the journal.
    pub fn push_log(&mut self, lines: impl IntoIterator<Item = LogLine>) {
        self.log.extend(lines);
    }
}

/// The `/etc/hosts` the PVE installer writes.
pub fn default_hosts(name: &str, ip: &str) -> String {
    format!(
        "127.0.0.1 localhost.localdomain localhost\n\
         {ip} {name}.{DOMAIN} {name}\n\
         \n\
         # The following lines are desirable for IPv6 capable hosts\n\
         \n\
         ::1     ip6-localhost ip6-loopback\n\
         fe00::0 ip6-localnet\n\
         ff00::0 ip6-mcastprefix\n\
         ff02::1 ip6-allnodes\n\
         ff02::2 ip6-allrouters\n\
         ff02::3 ip6-allhosts\n"
    )
}

/// Every node's own files, by node name; a node not listed has a fresh
/// install's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeServices {
    nodes: BTreeMap<String, NodeSys>,
}

impl NodeServices {
    /// Whether every node is as installed (nothing to save).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The files of `seed`'s node, as kept or as installed.
    pub fn get(&self, seed: Seed<'_>) -> std::borrow::Cow<'_, NodeSys> {
        match self.nodes.get(seed.name) {
            Some(s) => std::borrow::Cow::Borrowed(s),
            None => std::borrow::Cow::Owned(NodeSys::fresh(seed)),
        }
    }

    /// The files of `seed`'s node, to change (kept from now on).
    pub fn get_mut(&mut self, seed: Seed<'_>) -> &mut NodeSys {
        self.nodes
            .entry(seed.name.to_string())
            .or_insert_with(|| NodeSys::fresh(seed))
    }

    /// Forgets a node (it left the cluster).
    pub fn remove(&mut self, name: &str) {
        self.nodes.remove(name);
    }
}
