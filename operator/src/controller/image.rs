//! Reconciling a MachineImage: the template exists, or is made.

use std::collections::BTreeSet;
use std::time::Instant;

use pve_client::api::qemu::ConfigView;
use tracing::Instrument;

use super::cluster::node_entries;
use super::observe::find_source;
use super::{Operator, World};
use crate::error::{Error, Result};
use crate::plan::{self, SourceState, Step};
use crate::types::{MachineImageSpec, MachineImageStatus, Object, now_rfc3339};
use crate::validate;

impl Operator {
    /// One reconcile of a MachineImage: the template exists, or is made.
    pub async fn reconcile_image(
        &self,
        world: &World,
        i: &Object<MachineImageSpec>,
        old: &MachineImageStatus,
    ) -> (MachineImageStatus, Option<Error>) {
        let start = Instant::now();
        let mut st = old.clone();
        st.last_updated = Some(now_rfc3339());
        let span = tracing::info_span!("image", image = i.metadata.name.as_str());
        let r = self.image_inner(world, i, &mut st).instrument(span).await;
        self.metrics
            .reconcile_duration("image", start.elapsed().as_secs_f64());
        match r {
            Ok(()) => (st, None),
            Err(e) => {
                self.metrics.error(e.error_type().as_str(), "image");
                st.ready = false;
                st.message = Some(e.to_string());
                (st, Some(e))
            }
        }
    }

    async fn image_inner(
        &self,
        world: &World,
        i: &Object<MachineImageSpec>,
        st: &mut MachineImageStatus,
    ) -> Result<()> {
        let errors = validate::validate_image(&i.metadata.name, &i.spec);
        if !errors.is_empty() {
            st.ready = false;
            st.message = Some(
                errors
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            return Ok(());
        }
        let pve = self.connect(world, &i.spec.cluster).await?;
        let name = validate::pve_name(i.spec.name.as_deref().unwrap_or(&i.metadata.name));
        for _ in 0..6 {
            let res = pve.resources().await?;
            if let Some(t) = &i.spec.template {
                match find_source(&res, t, false) {
                    SourceState::Found { node, vmid } => {
                        st.ready = true;
                        st.node = Some(node);
                        st.vmid = Some(vmid);
                        st.message = None;
                    }
                    SourceState::Missing(m) => {
                        st.ready = false;
                        st.message = Some(m);
                    }
                    SourceState::None => st.ready = false,
                }
                return Ok(());
            }
            // From a URL: a VM of this name with our mark, made a template.
            let mark = plan::ownership_mark(&i.spec.cluster, &format!("image/{}", i.metadata.name));
            let mut mine = None;
            for r in res
                .iter()
                .filter(|r| r.kind == "qemu" && r.name.as_deref() == Some(&name))
            {
                let (Some(node), Some(vmid)) = (r.node.clone(), r.vmid) else {
                    continue;
                };
                let cfg = pve
                    .client
                    .qemu()
                    .vm_config(&node, vmid as u32, &ConfigView::Pending)
                    .await?;
                if cfg
                    .description
                    .as_deref()
                    .is_some_and(|d| d.lines().any(|l| l.trim() == mark))
                {
                    mine = Some((node, vmid as u32, r.template == Some(true)));
                    break;
                }
            }
            let node = match (&mine, &i.spec.node) {
                (Some((n, _, _)), _) => n.clone(),
                (None, Some(n)) => n.clone(),
                (None, None) => node_entries(&res)
                    .into_iter()
                    .find(|n| n.ready)
                    .map(|n| n.name)
                    .ok_or_else(|| Error::Config("no online node".into()))?,
            };
            if let Some((node, vmid, true)) = &mine {
                st.ready = true;
                st.node = Some(node.clone());
                st.vmid = Some(*vmid);
                st.message = None;
                return Ok(());
            }
            let url = i.spec.url.clone().unwrap_or_default();
            let file = i
                .spec
                .file_name
                .clone()
                .unwrap_or_else(|| import_file_name(&url));
            let step = if let Some((node, vmid, false)) = mine {
                Step::Template { node, vmid }
            } else {
                let volid = format!("{}:import/{file}", i.spec.download_storage);
                let have = pve
                    .volids(&node, &i.spec.download_storage)
                    .await?
                    .contains(&volid);
                if have {
                    let used: BTreeSet<u32> = res
                        .iter()
                        .filter_map(|r| r.vmid.map(|v| v as u32))
                        .collect();
                    let vmid = match i.spec.vmid {
                        Some(v) => v,
                        None => plan::assign_vmid(&used)
                            .ok_or_else(|| Error::Config("no free VMID".into()))?,
                    };
                    Step::Create {
                        node: node.clone(),
                        vmid,
                        auto: i.spec.vmid.is_none(),
                        params: vec![
                            ("name".into(), name.clone()),
                            ("description".into(), mark.clone()),
                            ("tags".into(), plan::MARK_TAG.into()),
                            (
                                "scsi0".into(),
                                format!("{}:0,import-from={volid}", i.spec.storage),
                            ),
                            ("scsihw".into(), "virtio-scsi-single".into()),
                        ],
                    }
                } else {
                    Step::DownloadUrl {
                        node: node.clone(),
                        storage: i.spec.download_storage.clone(),
                        url: url.clone(),
                        filename: file.clone(),
                        checksum: i.spec.checksum.clone().map(|c| {
                            (
                                c,
                                i.spec
                                    .checksum_algorithm
                                    .clone()
                                    .unwrap_or_else(|| "sha256".into()),
                            )
                        }),
                    }
                }
            };
            st.message = Some(format!("{} in progress", step.name()));
            self.execute(&pve, &step).await?;
        }
        Ok(())
    }
}

/// The name a downloaded disk image gets in a storage's `import`
/// content: the URL's last segment, except that a cloud image's `.img`
/// (which PVE's `import` content does not take: it knows `.qcow2`,
/// `.raw`, `.vmdk`, `.ova`) is saved as the QCOW2 it is (Ubuntu's and
/// Debian's `.img` cloud images are QCOW2; give `fileName: x.raw` for a
/// raw one).
fn import_file_name(url: &str) -> String {
    let last = url
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .rsplit('/')
        .next()
        .unwrap_or_default();
    match last.strip_suffix(".img") {
        Some(stem) if !stem.is_empty() => format!("{stem}.qcow2"),
        _ => last.to_string(),
    }
}
