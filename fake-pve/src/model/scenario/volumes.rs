//! Files on storages that no guest config names: ISO images, container
//! templates, backups, snippets and import sources, with their size,
//! format, creation time and, for backups, notes and protection.

use serde::Deserialize;

use super::{Scenario, ScenarioError, Size};
use crate::model::cluster::Cluster;
use crate::model::storage::content::{file_format, owner, vtype};
use crate::model::storage::{Volume, parse_volid, path_based};

/// A file volume of the scenario (`volumes:`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumeSpec {
    /// `<storage>:<content dir>/<file>` (`local:iso/debian-12.iso`,
    /// `local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst`).
    pub volid: String,
    /// The node whose storage holds it (a storage that is not shared);
    /// default the first node the storage is on.
    #[serde(default)]
    pub node: Option<String>,
    /// Bytes, or a number with K, M, G or T.
    #[serde(default)]
    pub size: Option<Size>,
    /// `iso`, `tzst`, `vma.zst`, ...; default: the file name's.
    #[serde(default)]
    pub format: Option<String>,
    /// Creation time, epoch seconds (a backup's comes from its name).
    #[serde(default)]
    pub ctime: Option<i64>,
    /// A backup's notes.
    #[serde(default)]
    pub notes: Option<String>,
    /// Whether a backup is protected.
    #[serde(default)]
    pub protected: bool,
}

/// Content types a `volumes:` entry may have (images come from guests).
const FILE_CONTENT: &[&str] = &["iso", "vztmpl", "backup", "snippets", "import"];

/// Size of a volume the scenario gives none: 512 MiB.
const DEFAULT_SIZE: u64 = 512 << 20;

impl Scenario {
    /// Records the scenario's file volumes on their storages.
    pub(super) fn build_volumes(
        &self,
        cluster: &mut Cluster,
        now: i64,
    ) -> Result<(), ScenarioError> {
        let first_node = cluster.nodes.members().first().map(|n| n.name.clone());
        for v in &self.volumes {
            let bad = |reason: String| self.err(&v.volid, format!("volumes: {reason}"));
            let Some((sid, name)) = parse_volid(&v.volid) else {
                return Err(bad(format!("'{}' is not a volume ID", v.volid)));
            };
            let ct = vtype(name);
            if !FILE_CONTENT.contains(&ct) {
                return Err(bad(format!(
                    "'{}' is no ISO image, template, backup, snippet or import file (guest disks come from the guests' configs)",
                    v.volid
                )));
            }
            let Ok(storage) = cluster.storage.existing(sid).cloned() else {
                return Err(bad(format!("storage '{sid}' does not exist")));
            };
            if !path_based(&storage.kind) {
                return Err(bad(format!(
                    "storage '{sid}' of type '{}' holds no files",
                    storage.kind
                )));
            }
            if !storage.content.iter().any(|c| c == ct) {
                return Err(bad(format!(
                    "storage '{sid}' does not support '{ct}' content"
                )));
            }
            let node = match &v.node {
                Some(n) => n.clone(),
                None => cluster
                    .nodes
                    .members()
                    .iter()
                    .map(|n| n.name.clone())
                    .find(|n| storage.active_on(n))
                    .or_else(|| first_node.clone())
                    .unwrap_or_default(),
            };
            if cluster.storage.usable_storage(sid, &node).is_err() {
                return Err(bad(format!(
                    "storage '{sid}' is not available on node '{node}'"
                )));
            }
            let file = name.split_once('/').map_or("", |(_, f)| f);
            let format = match &v.format {
                Some(f) => f.clone(),
                None => file_format(ct, file).ok_or_else(|| {
                    bad(format!("'{file}' has the wrong file extension for {ct}"))
                })?,
            };
            let mut vol = Volume {
                storage: sid.to_string(),
                name: name.to_string(),
                size: v.size.map_or(DEFAULT_SIZE, |s| s.0),
                format,
                vmid: 0,
                ctime: v.ctime.unwrap_or(now),
            };
            vol.vmid = owner(&vol).unwrap_or(0);
            cluster.storage.put_file_volume(&storage, &node, vol);
            if v.notes.is_some() || v.protected {
                cluster
                    .storage
                    .update_volume_attrs(sid, &node, name, v.notes.clone(), Some(v.protected))
                    .map_err(|e| bad(e.to_string()))?;
            }
        }
        Ok(())
    }
}
