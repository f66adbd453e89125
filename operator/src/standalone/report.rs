//! What the `status` and `check` commands print from the directory: the
//! machines' table and the documents that cannot be used.

use super::*;

pub(super) fn js<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The `status` command's table: machines with phase, node, VMID and IPs.
pub fn status_table(dir: &Path) -> String {
    status_table_with(dir, &Context::default())
}

/// As [`status_table`], reading the documents as [`load_dir_with`] does.
pub fn status_table_with(dir: &Path, ctx: &Context) -> String {
    let mut rows = vec![[
        "NAME".to_string(),
        "PHASE".into(),
        "NODE".into(),
        "VMID".into(),
        "IPS".into(),
        "MESSAGE".into(),
    ]];
    for (e, _) in read_statuses(dir) {
        // The other systems' objects show the same Machine's status.
        if e.kind != "Machine" || e.api_version.is_some() {
            continue;
        }
        let st: MachineStatus = serde_json::from_value(e.status).unwrap_or_default();
        // Every condition that is not met, why it is not ready first
        // (then a change that waits for a power cycle, a refused shrink,
        // cloud-init that PVE cannot express, ...).
        let mut unmet: Vec<&crate::types::Condition> =
            st.conditions.iter().filter(|c| !c.is_true()).collect();
        unmet.sort_by_key(|c| c.kind != "Ready");
        let msg = unmet
            .iter()
            .map(|c| {
                if c.message.is_empty() {
                    format!("{} {}", c.kind, c.reason)
                } else {
                    format!("{} {}: {}", c.kind, c.reason, c.message)
                }
            })
            .collect::<Vec<_>>()
            .join("; ");
        let phase = st.phase.as_str().to_string();
        rows.push([
            e.name,
            phase,
            st.node.unwrap_or_else(|| "-".into()),
            st.vmid.map_or_else(|| "-".into(), |v| v.to_string()),
            if st.ip_addresses.is_empty() {
                "-".into()
            } else {
                st.ip_addresses.join(",")
            },
            msg,
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 5 {
                    c.clone()
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    // What the operator cannot read is what it leaves alone: say so.
    match load_dir_with(dir, ctx) {
        Ok(l) => {
            for (_, e) in l.errors {
                out.push_str(&format!("error: {e}\n"));
            }
        }
        Err(e) => out.push_str(&format!("error: {e}\n")),
    }
    out
}

/// The Machines and MachineImages of `found` whose cluster `run` would
/// not find: neither declared among `found` nor the cluster the
/// operator's `PVE_*` variables give (`env_cluster`, named
/// `PVE_CLUSTER_NAME`), each with why, as `check` reports them.
pub fn unknown_clusters(found: &[Resource], env_cluster: Option<&str>) -> Vec<String> {
    let declared: BTreeSet<&str> = found
        .iter()
        .filter_map(|r| match r {
            Resource::ProxmoxCluster(c) => Some(c.metadata.name.as_str()),
            _ => None,
        })
        .chain(env_cluster)
        .collect();
    let mut out = Vec::new();
    for r in found {
        let cluster = match r {
            Resource::Machine(m) => m.spec.cluster.as_str(),
            Resource::MachineImage(i) => i.spec.cluster.as_str(),
            _ => continue,
        };
        if cluster.is_empty() || declared.contains(cluster) {
            continue;
        }
        let env = match env_cluster {
            Some(e) => format!("the PVE_* variables give '{e}'"),
            None => "no PVE_ENDPOINT gives one".to_string(),
        };
        out.push(format!(
            "{}: spec.cluster: ProxmoxCluster '{cluster}' is not declared, and {env} (PVE_CLUSTER_NAME)",
            r.key()
        ));
    }
    out
}

/// Loads a directory once, for `pve-operator check`: every resource read
/// and every error (all of them, not the first).
///
/// # Errors
/// The directory cannot be listed.
pub fn check_dir(dir: &Path) -> Result<(Vec<Resource>, Vec<Error>)> {
    check_dir_with(dir, &Context::default())
}

/// As [`check_dir`], with the settings of [`load_dir_with`].
///
/// # Errors
/// As [`check_dir`].
pub fn check_dir_with(dir: &Path, ctx: &Context) -> Result<(Vec<Resource>, Vec<Error>)> {
    let l = load_dir_with(dir, ctx)?;
    Ok((
        l.found.into_iter().map(|(r, _)| r).collect(),
        l.errors.into_iter().map(|(_, e)| e).collect(),
    ))
}
