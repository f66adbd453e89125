//! Creating a container from an OS template: the checks made before
//! forking, the config with `lock: create`, and the `vzcreate` task's
//! effect (pve-container `API2/LXC.pm` `create_vm`, `LXC.pm`
//! `create_disks`, `LXC/Create.pm` `restore_archive`, `LXC/Setup`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::CtOps;
use super::schema::{
    self, canonical, detect_arch, detect_ostype, is_indexed_key, is_mount_key, is_storage_volume,
    mp_volume, new_disk,
};
use super::{Ct, LxcOp, lxc_worker};
use crate::model::qemu::EffectResult;
use crate::model::storage::parse_volid;
use crate::model::tasks::Worker;
use crate::model::{Context, Error, Result};

/// What a create request asks for.
#[derive(Debug, Clone, Default)]
pub struct CtCreateRequest {
    /// The VMID.
    pub vmid: u32,
    /// The node.
    pub node: String,
    /// The OS template volume (`local:vztmpl/...`).
    pub ostemplate: String,
    /// The default storage (`local` when not given).
    pub storage: Option<String>,
    /// Config keys as given (`rootfs`, `mpN`, `netN`, `hostname`, ...).
    pub config: BTreeMap<String, String>,
    /// `unprivileged` as given.
    pub unprivileged: Option<bool>,
    /// Whether root@pam asks (bind mounts need it).
    pub is_root: bool,
    /// `start=1`: as whom and how long that start takes.
    pub start: Option<(String, u64)>,
    /// `pool`: the pool the container joins.
    pub pool: Option<String>,
}

/// A `vzcreate` task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateJob {
    /// Config keys other than mount points, canonical.
    pub config: BTreeMap<String, String>,
    /// `rootfs` and `mpN` as given (new disks as `STORAGE:GiB`).
    pub mounts: BTreeMap<String, String>,
    /// The template volume.
    pub ostemplate: String,
    /// Start afterwards: as whom and how long that start takes.
    pub start: Option<(String, u64)>,
    /// A draw for the host keys' fingerprints.
    pub seed: u64,
    /// Pool to join.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
}

const NOT_CONFIG: &[&str] = &[
    "node",
    "vmid",
    "ostemplate",
    "password",
    "storage",
    "force",
    "restore",
    "unique",
    "pool",
    "ignore-unpack-errors",
    "ssh-public-keys",
    "bwlimit",
    "start",
    "ha-managed",
    "unprivileged",
];

impl CtOps<'_> {
    /// The synchronous part of `create_vm` for containers: refuses what
    /// PVE refuses before forking, registers the config with
    /// `lock: create` and answers the `vzcreate` worker.
    ///
    /// # Errors
    /// A taken VMID; mount points without `rootfs`; bind mounts by others
    /// than root; unknown, disabled or unavailable storages; storages
    /// without `rootdir`; an unknown template storage.
    pub fn create_ct(&mut self, req: CtCreateRequest, rq: &mut Context) -> Result<Worker> {
        let vmid = req.vmid;
        let version = self.version;
        if let Some((kind, node)) = self.guests.holder(vmid) {
            return Err(Error::exists(format!(
                "{kind} {vmid} already exists on node '{node}'"
            )));
        }
        let storage = req.storage.clone().unwrap_or_else(|| "local".into());
        // check_volume_access on the template.
        let Some((tsid, _)) = parse_volid(&req.ostemplate) else {
            return Err(Error::failed(format!(
                "unable to parse volume ID '{}'",
                req.ostemplate
            )));
        };
        self.storage.existing(tsid)?;
        let mut mounts = BTreeMap::new();
        let mut config = BTreeMap::new();
        for (k, v) in &req.config {
            if NOT_CONFIG.contains(&k.as_str()) {
                continue;
            }
            if is_mount_key(k) {
                let v = if new_disk(&format!("x:{v}")).is_some() && !v.contains(':') {
                    format!("{storage}:{v}")
                } else {
                    v.clone()
                };
                mounts.insert(k.clone(), v);
            } else if is_indexed_key(k, "unused") {
                // "ignoring 'unusedN', cannot create/restore with unused volume"
            } else {
                config.insert(k.clone(), v.clone());
            }
        }
        if !mounts.is_empty() && !mounts.contains_key("rootfs") {
            return Err(Error::failed(
                "mount points configured, but 'rootfs' not set - aborting",
            ));
        }
        let check_storage = |c: &CtOps<'_>, sid: &str| -> Result<()> {
            let s = c.storage.usable_storage(sid, &req.node)?;
            if !s.content.iter().any(|x| x == "rootdir") {
                return Err(Error::invalid(
                    "storage",
                    format!("storage '{sid}' does not support container directories"),
                ));
            }
            Ok(())
        };
        for (k, v) in &mounts {
            let vol = mp_volume(v).unwrap_or_default();
            if is_storage_volume(vol) {
                let sid = vol.split(':').next().unwrap_or_default();
                check_storage(self, sid)?;
            } else if !req.is_root {
                let _ = k;
                return Err(Error::failed(
                    "Only root can pass arbitrary filesystem paths.",
                ));
            }
        }
        if !mounts.contains_key("rootfs") {
            check_storage(self, &storage)?;
            mounts.insert("rootfs".into(), format!("{storage}:4"));
        }
        for (k, v) in &mut config {
            *v = canonical(version, k, v, Some(rq))?;
        }
        let unprivileged = req.unprivileged.unwrap_or(version.is_v9());
        if unprivileged {
            config.insert("unprivileged".into(), "1".into());
        }
        let seed = rq.next_u64();
        let mut lock = BTreeMap::new();
        lock.insert("lock".to_string(), "create".to_string());
        self.guests.insert_ct(Ct::new(vmid, &req.node, lock));
        Ok(lxc_worker(
            "vzcreate",
            vmid,
            LxcOp::Create(Box::new(CreateJob {
                config,
                mounts,
                ostemplate: req.ostemplate,
                start: req.start,
                seed,
                pool: req.pool,
            })),
        ))
    }

    /// The `vzcreate` task's work: allocate and format the volumes,
    /// extract the template, detect the OS, write the config with PVE's
    /// defaults; on failure free what was allocated and drop the config.
    pub(in crate::model) fn finish_ct_create(
        &mut self,
        vmid: u32,
        node: &str,
        job: CreateJob,
        end_ms: i64,
    ) -> EffectResult {
        let now = end_ms.div_euclid(1000);
        let version = self.version;
        let mut lines = Vec::new();
        let mut allocated = Vec::new();
        let mut conf = job.config.clone();
        let result = (|| -> Result<()> {
            // rootfs first, then the mount points in order.
            let mut keys: Vec<&String> = job.mounts.keys().collect();
            keys.sort_by_key(|k| (k.as_str() != "rootfs", k.len(), k.as_str().to_string()));
            for k in keys {
                let v = &job.mounts[k];
                let vol = mp_volume(v).unwrap_or_default().to_string();
                let printed = if let Some((sid, size)) = new_disk(&vol) {
                    let (volid, l) = self.alloc_ct_volume(sid, node, vmid, size, now)?;
                    allocated.push(volid.clone());
                    lines.extend(l);
                    schema::mp_with(version, k, v, &volid, size)?
                } else {
                    if is_storage_volume(&vol) && self.storage.volume(&vol, node).is_none() {
                        return Err(Error::failed(format!("volume '{vol}' does not exist")));
                    }
                    canonical(version, k, v, None)?
                };
                conf.insert(k.clone(), printed);
            }
            let tmpl = self.storage.volume(&job.ostemplate, node).cloned();
            let Some(tmpl) = tmpl else {
                return Err(Error::failed(format!(
                    "can't find file '{}'",
                    job.ostemplate
                )));
            };
            let oci = self.oci_config(&job.ostemplate, node);
            let detected = if let Some(image) = &oci {
                lines.push("Detected OCI archive".into());
                lines.extend(restore_oci_archive(version, image, &mut conf));
                image.ostype.clone().unwrap_or_else(|| "unmanaged".into())
            } else {
                let path = self.template_path(&job.ostemplate);
                lines.push(format!("extracting archive '{path}'"));
                let size = tmpl.size.max(1);
                lines.push(format!(
                    "Total bytes read: {size} ({}MiB, 181MiB/s)",
                    size >> 20
                ));
                let arch = detect_arch(&job.ostemplate);
                lines.push(format!("Detected container architecture: {arch}"));
                conf.insert("arch".into(), arch.to_string());
                detect_ostype(&job.ostemplate).to_string()
            };
            let detected = detected.as_str();
            if let Some(given) = conf.get("ostype")
                && given != detected
                && detected != "unmanaged"
            {
                lines.push(format!("got unexpected ostype ({given} != {detected})"));
            }
            conf.entry("ostype".into())
                .or_insert_with(|| detected.to_string());
            conf.entry("hostname".into())
                .or_insert_with(|| format!("CT{vmid}"));
            conf.entry("memory".into()).or_insert_with(|| "512".into());
            conf.entry("swap".into()).or_insert_with(|| "512".into());
            if oci.is_none() && conf.get("ostype").is_some_and(|o| o != "unmanaged") {
                let host = conf.get("hostname").cloned().unwrap_or_default();
                let mut rq = Context::new(end_ms, job.seed);
                for key in ["rsa", "ecdsa", "ed25519"] {
                    lines.push(format!(
                        "Creating SSH host key 'ssh_host_{key}_key' - this may take some time ..."
                    ));
                    lines.push(format!("done: SHA256:{} root@{host}", fingerprint(&mut rq)));
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            for v in &allocated {
                self.storage.free_volume(v, node);
            }
            self.guests.remove_ct(vmid);
            return Err((lines, format!("unable to create CT {vmid} - {e}")));
        }
        let Some(ct) = self.guests.ct_by_id_mut(vmid) else {
            for v in &allocated {
                self.storage.free_volume(v, node);
            }
            return Err((lines, format!("unable to create CT {vmid} - CT vanished")));
        };
        ct.config = conf;
        self.ct_made(vmid, job.pool.as_deref());
        Ok(lines)
    }

    /// What follows a container's creation or restore: its pool (the
    /// `vzstart` task `start=1` asks for is begun by the task's end).
    pub(in crate::model) fn ct_made(&mut self, vmid: u32, pool: Option<&str>) {
        if let Some(pool) = pool {
            self.access.pools_mut().add_vm(vmid, pool);
        }
    }

    /// The image config of a template volume that is an OCI archive
    /// (`archive_is_oci_format`).
    fn oci_config(&self, volid: &str, node: &str) -> Option<crate::model::oci::ImageConfig> {
        let (sid, name) = parse_volid(volid)?;
        let s = self.storage.find(sid)?;
        self.storage.volume_attrs(s, node, name).oci
    }

    /// The file a template volume is on the node (`.../template/cache/x`).
    pub(in crate::model) fn template_path(&self, volid: &str) -> String {
        let Some((sid, name)) = parse_volid(volid) else {
            return volid.to_string();
        };
        let base = self
            .storage
            .find(sid)
            .and_then(|s| s.options.get("path").cloned())
            .unwrap_or_else(|| "/var/lib/vz".into());
        let file = name.strip_prefix("vztmpl/").unwrap_or(name);
        format!("{base}/template/cache/{file}")
    }
}

/// `restore_oci_archive`: the image's config mapped onto the
/// container's (init command, console mode, host-managed networks,
/// environment), with the lines it prints. The image's `User`,
/// `WorkingDir` and `StopSignal` become raw `lxc.init.*` and
/// `lxc.signal.halt` keys on PVE, which fake-pve's config does not keep.
fn restore_oci_archive(
    version: crate::model::PveVersion,
    image: &crate::model::oci::ImageConfig,
    conf: &mut BTreeMap<String, String>,
) -> Vec<String> {
    let mut lines: Vec<String> = image
        .volumes
        .iter()
        .map(|p| format!("creating base directory for volume at {p}"))
        .collect();
    let init = image.init_cmd();
    if init.first().is_some_and(|c| c != "/sbin/init") {
        let quoted: Vec<String> = init
            .iter()
            .map(|a| crate::model::backup::jobs::shell_quote(a))
            .collect();
        conf.insert("entrypoint".into(), quoted.join(" "));
        conf.insert("cmode".into(), "console".into());
        let mut nets: Vec<String> = conf
            .keys()
            .filter(|k| {
                k.strip_prefix("net")
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .cloned()
            .collect();
        nets.sort_by_key(|k| k[3..].parse::<u32>().unwrap_or(0));
        for k in nets {
            let v = conf[&k].clone();
            if v.split(',').any(|p| p.starts_with("host-managed=")) {
                continue;
            }
            lines.push(format!(
                "Auto-Enabling host-managed network for network device {k}."
            ));
            let with = format!("{v},host-managed=1");
            let printed = canonical(version, &k, &with, None).unwrap_or(with);
            conf.insert(k, printed);
        }
    }
    if !image.env.is_empty() {
        conf.insert("env".into(), image.env.join("\0"));
    }
    conf.entry("arch".into())
        .or_insert_with(|| image.arch().to_string());
    lines
}

/// A host key fingerprint: 43 characters of unpadded base64.
fn fingerprint(rq: &mut Context) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..43)
        .map(|_| {
            #[allow(clippy::cast_possible_truncation)]
            let i = (rq.next_u64() % 64) as usize;
            ALPHABET[i] as char
        })
        .collect()
}
