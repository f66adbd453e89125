//! External metric servers as pve-manager keeps them in `status.cfg`
//! (`PVE/Status/Plugin.pm`, `Graphite.pm`, `InfluxDB.pm`, 9.x
//! `OpenTelemetry.pm`; `API2/Cluster/MetricServer.pm`): a section per
//! server, each type with its own options, checked as `SectionConfig`'s
//! `check_config` checks them. An InfluxDB `token` is kept apart (PVE
//! writes it under `priv/metricserver/`) and never read back.

pub mod export;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::qemu::sha1_hex;
use super::{Error, PveVersion, Result};

/// The message of a digest that no longer matches.
pub const MODIFIED: &str =
    "detected modified configuration - file changed by other user? Try again.";

/// How an option's value is typed in the answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    Text,
    /// An integer (a string when it does not parse).
    Int,
    /// A 0/1 flag.
    Bool,
}

/// The options of a plugin type: name, required, kind.
fn options(kind: &str, version: PveVersion) -> Option<&'static [(&'static str, bool, Kind)]> {
    const GRAPHITE: &[(&str, bool, Kind)] = &[
        ("server", true, Kind::Text),
        ("port", false, Kind::Int),
        ("mtu", false, Kind::Int),
        ("proto", false, Kind::Text),
        ("timeout", false, Kind::Int),
        ("path", false, Kind::Text),
        ("disable", false, Kind::Bool),
    ];
    const INFLUXDB: &[(&str, bool, Kind)] = &[
        ("server", true, Kind::Text),
        ("port", true, Kind::Int),
        ("mtu", false, Kind::Int),
        ("disable", false, Kind::Bool),
        ("organization", false, Kind::Text),
        ("bucket", false, Kind::Text),
        ("token", false, Kind::Text),
        ("influxdbproto", false, Kind::Text),
        ("timeout", false, Kind::Int),
        ("max-body-size", false, Kind::Int),
        ("api-path-prefix", false, Kind::Text),
        ("verify-certificate", false, Kind::Bool),
    ];
    const OTEL: &[(&str, bool, Kind)] = &[
        ("server", true, Kind::Text),
        ("port", false, Kind::Int),
        ("disable", false, Kind::Bool),
        ("otel-protocol", false, Kind::Text),
        ("otel-path", false, Kind::Text),
        ("otel-timeout", false, Kind::Int),
        ("otel-headers", false, Kind::Text),
        ("otel-verify-ssl", false, Kind::Bool),
        ("otel-max-body-size", false, Kind::Int),
        ("otel-resource-attributes", false, Kind::Text),
        ("otel-compression", false, Kind::Text),
    ];
    match kind {
        "graphite" => Some(GRAPHITE),
        "influxdb" => Some(INFLUXDB),
        "opentelemetry" if version.is_v9() => Some(OTEL),
        _ => None,
    }
}

/// One metric server of `status.cfg`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Server {
    #[serde(rename = "type")]
    kind: String,
    /// Options as written in the file.
    options: BTreeMap<String, String>,
}

impl Server {
    /// The plugin type.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// An option as written.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    /// How the option `name` is typed in the answers (text unless the
    /// type knows it).
    pub fn kind_of(&self, version: PveVersion, name: &str) -> Kind {
        options(&self.kind, version)
            .and_then(|o| o.iter().find(|(n, ..)| *n == name))
            .map_or(Kind::Text, |(_, _, k)| *k)
    }

    /// The options as written, by name.
    pub fn options(&self) -> &BTreeMap<String, String> {
        &self.options
    }
}

/// `status.cfg` and the servers' tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    #[serde(default)]
    servers: BTreeMap<String, Server>,
    /// `priv/metricserver/<id>.pw`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    tokens: BTreeMap<String, String>,
}

/// `check_config`: every option known to the type, the required ones
/// there on create. Answers the options as they are written.
fn check_config(
    kind: &str,
    version: PveVersion,
    given: &BTreeMap<String, String>,
    create: bool,
) -> Result<BTreeMap<String, String>> {
    let opts = options(kind, version)
        .ok_or_else(|| Error::failed(format!("unknown section type '{kind}'")))?;
    for k in given.keys() {
        if !opts.iter().any(|(n, ..)| n == k) {
            return Err(Error::failed(format!("unexpected property '{k}'")));
        }
    }
    if create {
        let mut required: Vec<&str> = opts
            .iter()
            .filter(|(_, req, _)| *req)
            .map(|(n, ..)| *n)
            .collect();
        required.sort_unstable();
        for k in required {
            if !given.contains_key(k) {
                return Err(Error::failed(format!(
                    "missing value for required option '{k}'"
                )));
            }
        }
    }
    Ok(given
        .iter()
        .map(|(k, v)| {
            let kind = opts
                .iter()
                .find(|(n, ..)| n == k)
                .map_or(Kind::Text, |(_, _, k)| *k);
            let v = match kind {
                Kind::Bool => {
                    if matches!(v.as_str(), "1" | "true" | "yes" | "on") {
                        "1".to_string()
                    } else {
                        "0".to_string()
                    }
                }
                _ => v.clone(),
            };
            (k.clone(), v)
        })
        .collect())
}

impl Metrics {
    /// Whether no server is configured (saved worlds leave it out).
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.tokens.is_empty()
    }

    /// The servers by id.
    pub fn servers(&self) -> &BTreeMap<String, Server> {
        &self.servers
    }

    /// `status.cfg` as written.
    pub fn cfg_text(&self) -> String {
        let mut out = String::new();
        for (id, s) in &self.servers {
            out.push_str(&format!("{}: {id}\n", s.kind));
            for (k, v) in &s.options {
                out.push_str(&format!("\t{k} {v}\n"));
            }
            out.push('\n');
        }
        out
    }

    /// The file's digest.
    pub fn digest(&self) -> String {
        sha1_hex(self.cfg_text().as_bytes())
    }

    /// `GET /cluster/metrics/server/{id}`.
    ///
    /// # Errors
    /// `status server entry 'x' does not exist`.
    pub fn read(&self, id: &str) -> Result<&Server> {
        self.servers
            .get(id)
            .ok_or_else(|| Error::not_found(format!("status server entry '{id}' does not exist")))
    }

    /// `POST /cluster/metrics/server/{id}`.
    ///
    /// # Errors
    /// `Metric server 'x' already exists`, `unexpected property 'x'`,
    /// `missing value for required option 'x'`.
    pub fn create(
        &mut self,
        version: PveVersion,
        id: &str,
        kind: &str,
        mut given: BTreeMap<String, String>,
    ) -> Result<()> {
        if self.servers.contains_key(id) {
            return Err(Error::exists(format!(
                "Metric server '{id}' already exists"
            )));
        }
        let token = given.remove("token");
        let mut opts = check_config(kind, version, &given, true)?;
        if let Some(t) = token {
            if kind != "influxdb" {
                return Err(Error::failed("unexpected property 'token'"));
            }
            self.tokens.insert(id.to_string(), t);
        }
        opts.remove("token");
        self.servers.insert(
            id.to_string(),
            Server {
                kind: kind.to_string(),
                options: opts,
            },
        );
        Ok(())
    }

    /// `PUT /cluster/metrics/server/{id}`: set, then delete.
    ///
    /// # Errors
    /// The digest check, `no such server 'x'`, `unexpected property`,
    /// `no such option 'x'`, `unable to delete required option 'x'`,
    /// `cannot set and delete property 'x' at the same time!`.
    pub fn update(
        &mut self,
        version: PveVersion,
        id: &str,
        mut given: BTreeMap<String, String>,
        delete: &[String],
        digest: Option<&str>,
    ) -> Result<()> {
        if let Some(d) = digest
            && d != self.digest()
        {
            return Err(Error::conflict(MODIFIED));
        }
        let Some(server) = self.servers.get(id) else {
            return Err(Error::not_found(format!("no such server '{id}'")));
        };
        let kind = server.kind.clone();
        let token = given.remove("token");
        let opts = check_config(&kind, version, &given, false)?;
        if token.is_some() && kind != "influxdb" {
            return Err(Error::failed("unexpected property 'token'"));
        }
        let known = options(&kind, version).unwrap_or(&[]);
        let mut server = server.clone();
        server.options.extend(opts.clone());
        for k in delete {
            let Some((_, required, _)) = known.iter().find(|(n, ..)| n == k) else {
                return Err(Error::failed(format!("no such option '{k}'")));
            };
            if *required {
                return Err(Error::failed(format!(
                    "unable to delete required option '{k}'"
                )));
            }
            if opts.contains_key(k) || (k == "token" && token.is_some()) {
                return Err(Error::failed(format!(
                    "cannot set and delete property '{k}' at the same time!"
                )));
            }
            server.options.remove(k);
            if k == "token" {
                self.tokens.remove(id);
            }
        }
        if let Some(t) = token {
            self.tokens.insert(id.to_string(), t);
        }
        self.servers.insert(id.to_string(), server);
        Ok(())
    }

    /// `DELETE /cluster/metrics/server/{id}`.
    ///
    /// # Errors
    /// `unknown section type ''` for a server that does not exist (PVE
    /// looks up the plugin of the missing entry's type).
    pub fn delete(&mut self, id: &str) -> Result<()> {
        if self.servers.remove(id).is_none() {
            return Err(Error::failed("unknown section type ''"));
        }
        self.tokens.remove(id);
        Ok(())
    }

    /// Whether a token is kept for the server.
    pub fn has_token(&self, id: &str) -> bool {
        self.tokens.contains_key(id)
    }
}
