//! The manifest directory read: which files are manifests, the documents
//! they hold, and the status files written beside them.

use super::*;

/// The status file of a manifest.
pub fn status_path(manifest: &Path) -> PathBuf {
    let stem = manifest
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    manifest.with_file_name(format!("{stem}.status.yaml"))
}

fn is_manifest(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    (name.ends_with(".yaml") || name.ends_with(".yml"))
        && !name.ends_with(".status.yaml")
        && !name.starts_with('.')
}

/// What one read of a manifest directory found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every resource read, with its file (sorted by file).
    pub found: Vec<(Resource, PathBuf)>,
    /// The files that could not be read whole, each with its errors: the
    /// objects they held before are kept as they were, not removed.
    pub errors: Vec<(PathBuf, Error)>,
    /// The objects more than one document declares (also in `errors`,
    /// once per file): none of those documents is in `found`.
    pub duplicates: Vec<crate::dialects::Duplicate>,
    /// The other systems' objects the Machines of `found` were made
    /// from, where their statuses have a shape of their own.
    pub origins: BTreeMap<Key, crate::dialects::Origin>,
}

/// `Kind/name` of a document that did not parse, when it says so.
fn doc_identity(v: &serde_yaml::Value) -> Option<String> {
    let kind = v.get("kind")?.as_str()?;
    let name = v.get("metadata")?.get("name")?.as_str()?;
    Some(format!("{kind}/{name}"))
}

/// Reads every resource of a directory's manifests (sorted by file),
/// with the errors of the files that could not be read whole.
///
/// # Errors
/// The directory itself cannot be listed (missing, unreadable): then
/// nothing is known, and nothing may be taken as removed.
pub fn load_dir(dir: &Path) -> Result<Loaded> {
    load_dir_with(dir, &Context::default())
}

/// As [`load_dir`], with the settings the translation of the other
/// systems' documents takes (see [`crate::dialects`]).
///
/// # Errors
/// As [`load_dir`].
pub fn load_dir_with(dir: &Path, ctx: &Context) -> Result<Loaded> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::Manifest {
            path: dir.display().to_string(),
            message: format!("cannot read the manifest directory: {e}"),
        })?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| is_manifest(p))
        .collect();
    files.sort();
    let mut out = Loaded::default();
    let mut found: Vec<(Resource, PathBuf, String)> = Vec::new();
    let mut foreign = Vec::new();
    for f in files {
        let bad = |message: String| Error::Manifest {
            path: f.display().to_string(),
            message,
        };
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                out.errors.push((f.clone(), bad(e.to_string())));
                continue;
            }
        };
        for (i, doc) in serde_yaml::Deserializer::from_str(&text).enumerate() {
            let v = match serde_yaml::Value::deserialize(doc) {
                Ok(serde_yaml::Value::Null) => continue,
                Ok(v) => v,
                Err(e) => {
                    out.errors.push((f.clone(), bad(e.to_string())));
                    break;
                }
            };
            let what = doc_identity(&v).map_or_else(
                || format!("document {}", i + 1),
                |k| format!("document {} ({k})", i + 1),
            );
            let api_version = v
                .get("apiVersion")
                .and_then(|a| a.as_str())
                .unwrap_or("")
                .to_string();
            if crate::dialects::is_foreign(&api_version) {
                match serde_json::to_value(&v) {
                    Ok(value) => foreign.push(crate::dialects::Doc {
                        value,
                        file: f.clone(),
                        what,
                    }),
                    Err(e) => out.errors.push((f.clone(), bad(format!("{what}: {e}")))),
                }
                continue;
            }
            match serde_yaml::from_value::<Resource>(v) {
                Ok(r) => {
                    let want = if matches!(r, Resource::Secret(_)) {
                        "v1"
                    } else {
                        API_VERSION
                    };
                    if r.api_version() != want {
                        let m = format!(
                            "{what}: apiVersion {} of {} should be {want}",
                            r.api_version(),
                            r.kind()
                        );
                        out.errors.push((f.clone(), bad(m)));
                        continue;
                    }
                    if r.metadata()
                        .annotations
                        .contains_key(crate::types::REMOVAL_DELETES_ANNOTATION)
                    {
                        let m = format!(
                            "{what}: the annotation {} is the operator's own (from a VirtRigaud Provider's or a Crossplane ProviderConfig's deleteOnRemoval): remove it (the annotation {}: \"true\" deletes)",
                            crate::types::REMOVAL_DELETES_ANNOTATION,
                            crate::types::DELETE_ANNOTATION
                        );
                        out.errors.push((f.clone(), bad(m)));
                        continue;
                    }
                    found.push((r, f.clone(), what));
                }
                Err(e) => out.errors.push((f.clone(), bad(format!("{what}: {e}")))),
            }
        }
    }
    // A name declared twice is nobody's: neither document is followed
    // (nor the translations that would lean on a doubled Secret or
    // cluster), and each says so.
    let mut refused = BTreeMap::new();
    let mut found = crate::dialects::refuse_duplicates(found, &mut refused);
    let mut ctx = ctx.clone();
    for (r, ..) in &found {
        match r {
            Resource::ProxmoxCluster(c) => ctx.clusters.push(c.metadata.name.clone()),
            Resource::Secret(s) => {
                ctx.secrets.insert(s.metadata.name.clone(), s.clone());
            }
            _ => {}
        }
    }
    // Machines that name no cluster go to the default one.
    for (r, ..) in &mut found {
        if let Resource::Machine(m) = r
            && m.spec.cluster.is_empty()
            && let Ok(c) = ctx.default_cluster()
        {
            m.spec.cluster = c;
        }
    }
    if !foreign.is_empty() {
        let t = crate::dialects::translate(&foreign, &ctx);
        out.origins = t.origins;
        found.extend(t.found);
        out.errors.extend(t.errors);
        found = crate::dialects::refuse_duplicates(found, &mut refused);
    }
    for (key, docs) in refused {
        let dup = crate::dialects::Duplicate { key, docs };
        let message = dup.message();
        let files: BTreeSet<&PathBuf> = dup.docs.iter().map(|(f, _)| f).collect();
        for f in files {
            out.errors.push((
                f.clone(),
                Error::Manifest {
                    path: f.display().to_string(),
                    message: message.clone(),
                },
            ));
        }
        out.duplicates.push(dup);
    }
    out.origins
        .retain(|k, _| found.iter().any(|(r, ..)| r.key() == *k));
    out.found = found.into_iter().map(|(r, f, _)| (r, f)).collect();
    out.found.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// Every status entry of a directory, with its status file.
pub fn read_statuses(dir: &Path) -> Vec<(StatusEntry, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".status.yaml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let Ok(t) = std::fs::read_to_string(&f) else {
            continue;
        };
        match serde_yaml::from_str::<Vec<StatusEntry>>(&t) {
            Ok(list) => out.extend(list.into_iter().map(|e| (e, f.clone()))),
            Err(e) => warn!(file = %f.display(), error = %e, "unreadable status file"),
        }
    }
    out
}

pub(super) fn manifest_of(status_file: &Path) -> PathBuf {
    let s = status_file.to_string_lossy();
    PathBuf::from(s.trim_end_matches(".status.yaml").to_string() + ".yaml")
}
