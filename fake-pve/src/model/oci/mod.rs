//! OCI images: the container registries a node reaches and what PVE does
//! with them (pve-manager `API2/Nodes.pm` `query_oci_repo_tags`,
//! pve-storage `API2/Storage/Status.pm` `oci_registry_pull`, pve-container
//! `LXC/Create.pm` `archive_is_oci_format` and `restore_oci_archive`).
//!
//! PVE hands both calls to `skopeo`: `skopeo list-tags docker://REF` and
//! `skopeo copy docker://REF oci-archive:FILE`. fake-pve has no network
//! to other registries; it emulates them instead. A scenario (or
//! `PUT /_fake/oci-images`) declares the images the registries hold, each
//! by its reference with the configuration its image config carries
//! (entrypoint, command, environment, user, working directory, stop
//! signal, volumes) and its layers' sizes. A reference is read as skopeo
//! reads one: without a registry host it names Docker Hub
//! (`docker.io`, with `library/` before a single name). A registry
//! nobody declared is not reachable, as a node without its DNS name
//! finds it. The same images are served over the OCI distribution API
//! below `/v2/` (`crate::oci`), so any OCI client can pull them.
//!
//! A pulled archive is a vztmpl volume whose attributes keep the image's
//! config, for a container created from it to take it as
//! `restore_oci_archive` does.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::model::{Error, Result};

mod pull;
pub mod registry;
pub use pull::PullRequest;
pub use registry::{MANIFEST_TYPE, Registry, manifest};

/// The host a reference without one names (skopeo's Docker Hub).
pub const DOCKER_HUB: &str = "docker.io";

/// Where the layers of a declared image come from when it gives none:
/// one layer of this many bytes.
pub const DEFAULT_LAYER: u64 = 3 * 1024 * 1024;

/// A repository reference as skopeo reads it: registry host (with its
/// port), repository path, and the tag when one is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `registry.example:5000`, or [`DOCKER_HUB`].
    pub host: String,
    /// `library/alpine`.
    pub repository: String,
    /// `3.20`.
    pub tag: Option<String>,
}

impl Reference {
    /// Parses `[host[:port]/]path[:tag]` as the docker transport does: the
    /// first component is a host when it has a `.` or a `:` or is
    /// `localhost`; Docker Hub's single names live in `library/`.
    ///
    /// # Errors
    /// A reference without a repository.
    pub fn parse(reference: &str) -> Result<Self> {
        let (name, tag) = match reference.rsplit_once(':') {
            Some((n, t)) if !t.contains('/') => (n, Some(t.to_string())),
            _ => (reference, None),
        };
        let (host, path) = match name.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first.to_string(), rest.to_string())
            }
            _ => (DOCKER_HUB.to_string(), name.to_string()),
        };
        if path.is_empty() {
            return Err(Error::failed(format!(
                "invalid reference format: repository name must have at least one component in '{reference}'"
            )));
        }
        let host = match host.as_str() {
            "index.docker.io" | "registry-1.docker.io" => DOCKER_HUB.to_string(),
            _ => host,
        };
        let repository = if host == DOCKER_HUB && !path.contains('/') {
            format!("library/{path}")
        } else {
            path
        };
        Ok(Self {
            host,
            repository,
            tag,
        })
    }

    /// `host/repository` (skopeo's `Repository` of `list-tags`).
    pub fn name(&self) -> String {
        format!("{}/{}", self.host, self.repository)
    }

    /// The host skopeo connects to (Docker Hub's API is elsewhere).
    pub fn api_host(&self) -> &str {
        if self.host == DOCKER_HUB {
            "registry-1.docker.io"
        } else {
            &self.host
        }
    }
}

/// What an image's config gives a container (the keys of the OCI image
/// config's `config` that `restore_oci_archive` reads).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ImageConfig {
    /// `Entrypoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrypoint: Option<Vec<String>>,
    /// `Cmd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<Vec<String>>,
    /// `Env`, `NAME=value` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// `User` (`name`, `uid`, `name:group`, `uid:gid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// `WorkingDir`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// `StopSignal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_signal: Option<String>,
    /// The paths of `Volumes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<String>,
    /// The distribution PVE's setup detects in the extracted root file
    /// system (`alpine`, `debian`...); none makes the container
    /// `unmanaged`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ostype: Option<String>,
    /// `architecture` (default `amd64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
}

impl ImageConfig {
    /// The OCI image config document (`application/vnd.oci.image.config.v1+json`).
    pub fn document(&self, created: &str) -> Value {
        let mut config = serde_json::Map::new();
        if let Some(e) = &self.entrypoint {
            config.insert("Entrypoint".into(), json!(e));
        }
        if let Some(c) = &self.cmd {
            config.insert("Cmd".into(), json!(c));
        }
        if !self.env.is_empty() {
            config.insert("Env".into(), json!(self.env));
        }
        if let Some(u) = &self.user {
            config.insert("User".into(), json!(u));
        }
        if let Some(w) = &self.working_dir {
            config.insert("WorkingDir".into(), json!(w));
        }
        if let Some(s) = &self.stop_signal {
            config.insert("StopSignal".into(), json!(s));
        }
        if !self.volumes.is_empty() {
            let v: serde_json::Map<String, Value> = self
                .volumes
                .iter()
                .map(|p| (p.clone(), json!({})))
                .collect();
            config.insert("Volumes".into(), Value::Object(v));
        }
        json!({
            "architecture": self.arch(),
            "os": "linux",
            "created": created,
            "config": config,
        })
    }

    /// The image's architecture.
    pub fn arch(&self) -> &str {
        self.architecture.as_deref().unwrap_or("amd64")
    }

    /// The command the container runs as init: entrypoint, then command.
    pub fn init_cmd(&self) -> Vec<String> {
        let mut cmd = self.entrypoint.clone().unwrap_or_default();
        cmd.extend(self.cmd.clone().unwrap_or_default());
        cmd
    }
}

/// An image a registry holds, as a scenario declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Image {
    /// `[host[:port]/]repository:tag`.
    pub reference: String,
    /// The sizes of its layers in bytes (default one of 3 MiB).
    #[serde(
        default,
        deserialize_with = "sizes",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub layers: Vec<u64>,
    /// When it was built (RFC 3339; default `2026-01-01T00:00:00Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// Its config.
    #[serde(flatten)]
    pub config: ImageConfig,
}

fn sizes<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<u64>, D::Error> {
    let v: Vec<crate::model::scenario::Size> = Deserialize::deserialize(d)?;
    Ok(v.into_iter().map(|s| s.0).collect())
}

impl Image {
    /// Checks a declared image: a reference with a tag, sizes above zero.
    ///
    /// # Errors
    /// What is wrong with it.
    pub fn check(&self) -> std::result::Result<Reference, String> {
        let r = Reference::parse(&self.reference).map_err(|e| e.to_string())?;
        if r.tag.is_none() {
            return Err(format!("image '{}' has no tag", self.reference));
        }
        if self.layers.contains(&0) {
            return Err(format!("image '{}' has a layer of 0 bytes", self.reference));
        }
        Ok(r)
    }

    /// When it was built.
    pub fn created(&self) -> &str {
        self.created.as_deref().unwrap_or("2026-01-01T00:00:00Z")
    }

    /// Its layers' sizes.
    pub fn layer_sizes(&self) -> Vec<u64> {
        if self.layers.is_empty() {
            vec![DEFAULT_LAYER]
        } else {
            self.layers.clone()
        }
    }
}

/// `sha256:<hex>` of some bytes.
pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}
