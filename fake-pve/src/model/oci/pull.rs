//! The two calls that reach a registry: `query-oci-repo-tags` (skopeo
//! `list-tags`) and `oci-registry-pull` (skopeo `copy` into an
//! `oci-archive` in the storage's template directory, an
//! `ociregistrypull` task).

use super::registry::copy;
use super::{Reference, Registry};
use crate::model::backup::jobs::shell_quote;
use crate::model::storage::content::{encode_text, normalize_filename, volume_path};
use crate::model::storage::{Storages, Volume, path_based};
use crate::model::tasks::{TaskEffect, VolumeChange, Worker};
use crate::model::{Error, Result};

/// What `oci-registry-pull` asks.
#[derive(Debug, Clone)]
pub struct PullRequest {
    /// The node.
    pub node: String,
    /// The storage.
    pub storage: String,
    /// `[host/]repository:tag`.
    pub reference: String,
    /// The file name asked instead of the reference's.
    pub filename: Option<String>,
    /// The worker's process id (for the temporary file's name).
    pub pid: u32,
    /// Now, epoch seconds.
    pub now: i64,
    /// The time skopeo's messages carry (RFC 3339).
    pub stamp: String,
}

/// A failed command as `run_command` dies with it.
fn failed(cmd: &[&str]) -> String {
    let line: Vec<String> = cmd.iter().map(|a| shell_quote(a)).collect();
    format!("command '{}' failed: exit code 1", line.join(" "))
}

impl Registry {
    /// `GET /nodes/{node}/query-oci-repo-tags`: `skopeo list-tags`'s `Tags`.
    ///
    /// # Errors
    /// `command 'skopeo list-tags docker://REF' failed: exit code 1` when
    /// skopeo fails (its own message goes to the daemon's log).
    pub fn list_tags(&self, reference: &str) -> Result<Vec<String>> {
        let arg = format!("docker://{reference}");
        let fail = || Error::failed(failed(&["skopeo", "list-tags", &arg]));
        let r = Reference::parse(reference).map_err(|_| fail())?;
        self.tags(&r).map_err(|msg| {
            tracing::warn!("skopeo list-tags {arg}: {msg}");
            fail()
        })
    }
}

impl Storages {
    /// The `ociregistrypull` task, after the handler's checks in PVE's
    /// order; the archive appears when the task ends.
    ///
    /// # Errors
    /// `storage 'x' does not exist` (and the other checks of
    /// `storage_check_enabled`), `can't upload to storage type 'x', not a
    /// file based storage!`, `storage 'x' is not configured for
    /// content-type 'vztmpl'`, `refusing to override existing file 'f'`.
    pub fn oci_pull_task(&self, r: &PullRequest) -> Result<Worker> {
        let s = self.usable_storage(&r.storage, &r.node)?.clone();
        if !path_based(&s.kind) {
            return Err(Error::failed(format!(
                "can't upload to storage type '{}', not a file based storage!",
                s.kind
            )));
        }
        if !s.content.iter().any(|c| c == "vztmpl") {
            return Err(Error::failed(format!(
                "storage '{}' is not configured for content-type 'vztmpl'",
                r.storage
            )));
        }
        let base = r.filename.as_deref().unwrap_or(&r.reference);
        let file = format!("{}.tar", normalize_filename(base));
        let volname = format!("vztmpl/{file}");
        if self.volumes().get(&s, &r.node, &volname).is_some() {
            return Err(Error::failed(format!(
                "refusing to override existing file '{file}'"
            )));
        }
        let dest = volume_path(&s, &volname);
        let tmp = format!("{dest}.tmp.{}", r.pid);
        let source = format!("docker://{}", r.reference);
        let target = format!("oci-archive:{tmp}");
        let w = Worker::new("ociregistrypull", &encode_text(&file));
        let registry = &self.volumes().oci;
        let found = Reference::parse(&r.reference)
            .map_err(|e| e.to_string())
            .and_then(|reference| registry.image(&reference).cloned());
        let img = match found {
            Ok(img) => img,
            Err(msg) => {
                return Ok(w
                    .log(format!(
                        "time=\"{}\" level=fatal msg=\"initializing source {source}: {}\"",
                        r.stamp,
                        msg.replace('"', "\\\"")
                    ))
                    .fail(failed(&["skopeo", "copy", &source, &target])));
            }
        };
        let (lines, size, config) = copy(&img);
        let volume = Volume {
            storage: s.storage.clone(),
            name: volname,
            size,
            format: "tar".into(),
            vmid: 0,
            ctime: r.now,
        };
        let effect = TaskEffect::Volume {
            node: r.node.clone(),
            change: VolumeChange::Put {
                volume,
                oci: Some(Box::new(config)),
                ova: None,
            },
        };
        let mut w = w;
        for l in lines {
            w = w.log(l);
        }
        Ok(w.effect(effect))
    }
}
