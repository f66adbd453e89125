//! Carrying out a step in PVE.

use pve_client::api::qemu::{
    CloneVm, CreateVm, DestroyOptions, ResizeVm, ShutdownOptions, SnapshotOptions, StartOptions,
    StopOptions, SuspendOptions, UpdateVm,
};
use pve_client::api::storage::DownloadUrl;
use tracing::{Instrument, info};

use super::{Operator, Pve};
use crate::error::Result;
use crate::plan::Step;

impl Operator {
    /// Carries out one step.
    ///
    /// # Errors
    /// PVE's, and failed tasks.
    pub async fn execute(&self, pve: &Pve, step: &Step) -> Result<()> {
        // Instrumented, never entered: a guard held across `.await` would
        // lend this span to whatever else runs on the thread meanwhile.
        let span = tracing::info_span!("step", step = step.name());
        self.execute_step(pve, step).instrument(span).await
    }

    async fn execute_step(&self, pve: &Pve, step: &Step) -> Result<()> {
        let qemu = pve.client.qemu();
        match step {
            Step::Create {
                node, vmid, params, ..
            } => {
                let mut req = CreateVm::new(*vmid);
                for (k, v) in params {
                    req = req.set(k.clone(), v.as_str());
                }
                pve.wait(qemu.create_vm(node, &req).await?).await?;
                info!(
                    vmid = *vmid,
                    node = node.as_str(),
                    "Successfully created VM vmid={vmid} node={node}"
                );
            }
            Step::Clone {
                node,
                source,
                vmid,
                target,
                name,
                description,
                full,
                storage,
                ..
            } => {
                let req = CloneVm {
                    name: Some(name.clone()),
                    description: Some(description.clone()),
                    full: Some(*full),
                    target: target.clone(),
                    storage: storage.clone(),
                    ..CloneVm::new(*vmid)
                };
                pve.wait(qemu.clone_vm(node, *source, &req).await?).await?;
                let at = target.as_deref().unwrap_or(node);
                info!(
                    vmid = *vmid,
                    node = at,
                    source = *source,
                    "Successfully created VM vmid={vmid} node={at}"
                );
            }
            Step::Configure {
                node,
                vmid,
                set,
                delete,
            } => {
                let mut req = UpdateVm::new();
                for (k, v) in set {
                    req = req.set(k.clone(), v.as_str());
                }
                for k in delete {
                    req = req.delete(k);
                }
                qemu.update_vm(node, *vmid, &req).await?;
                info!(vmid = *vmid, keys = ?set.iter().map(|x| &x.0).collect::<Vec<_>>(), deleted = ?delete, "configured VM");
            }
            Step::Resize {
                node,
                vmid,
                disk,
                size,
            } => {
                let req = ResizeVm::new(disk, size);
                pve.wait(qemu.resize_vm(node, *vmid, &req).await?).await?;
                info!(
                    vmid = *vmid,
                    disk = disk.as_str(),
                    size = size.as_str(),
                    "resized disk"
                );
            }
            Step::Start { node, vmid } => {
                let upid = qemu.vm_start(node, *vmid, &StartOptions::default()).await?;
                pve.wait(upid).await?;
                info!(vmid = *vmid, node = node.as_str(), "started VM");
            }
            Step::Stop { node, vmid } => {
                let upid = qemu.vm_stop(node, *vmid, &StopOptions::default()).await?;
                pve.wait(upid).await?;
                info!(vmid = *vmid, node = node.as_str(), "stopped VM");
            }
            Step::Shutdown {
                node,
                vmid,
                timeout,
            } => {
                let opts = ShutdownOptions {
                    force_stop: Some(true),
                    timeout: Some(*timeout),
                    ..ShutdownOptions::default()
                };
                pve.wait(qemu.vm_shutdown(node, *vmid, &opts).await?)
                    .await?;
                info!(vmid = *vmid, node = node.as_str(), "shut VM down");
            }
            Step::Reboot { node, vmid } => {
                pve.wait(qemu.vm_reboot(node, *vmid, None).await?).await?;
                info!(vmid = *vmid, node = node.as_str(), "rebooted VM");
            }
            Step::Suspend { node, vmid } => {
                let opts = SuspendOptions::default();
                pve.wait(qemu.vm_suspend(node, *vmid, &opts).await?).await?;
                info!(vmid = *vmid, node = node.as_str(), "suspended VM");
            }
            Step::Resume { node, vmid } => {
                pve.wait(qemu.vm_resume(node, *vmid, false).await?).await?;
                info!(vmid = *vmid, node = node.as_str(), "resumed VM");
            }
            Step::Destroy { node, vmid } => {
                let opts = DestroyOptions {
                    purge: Some(true),
                    destroy_unreferenced_disks: Some(true),
                    ..DestroyOptions::default()
                };
                pve.wait(qemu.destroy_vm(node, *vmid, &opts).await?).await?;
                info!(
                    vmid = *vmid,
                    node = node.as_str(),
                    "Successfully deleted VM vmid={vmid} node={node}"
                );
            }
            Step::Snapshot {
                node,
                vmid,
                name,
                description,
                vmstate,
            } => {
                let opts = SnapshotOptions {
                    vmstate: vmstate.then_some(true),
                    description: description.clone(),
                };
                pve.wait(qemu.snapshot(node, *vmid, name, &opts).await?)
                    .await?;
                info!(vmid = *vmid, snapshot = name.as_str(), "took snapshot");
            }
            Step::Rollback { node, vmid, name } => {
                pve.wait(qemu.rollback(node, *vmid, name, false).await?)
                    .await?;
                info!(vmid = *vmid, snapshot = name.as_str(), "rolled back");
            }
            Step::DeleteSnapshot { node, vmid, name } => {
                pve.wait(qemu.delsnapshot(node, *vmid, name, false).await?)
                    .await?;
                info!(vmid = *vmid, snapshot = name.as_str(), "deleted snapshot");
            }
            Step::DownloadUrl {
                node,
                storage,
                url,
                filename,
                checksum,
            } => {
                let mut req = DownloadUrl::new(url, "import", filename);
                if let Some((sum, alg)) = checksum {
                    req = req.checksum(alg, sum);
                }
                let upid = pve
                    .client
                    .storage()
                    .download_url(node, storage, &req)
                    .await?;
                pve.wait(upid).await?;
                info!(
                    url = url.as_str(),
                    storage = storage.as_str(),
                    "downloaded image"
                );
            }
            Step::Template { node, vmid } => {
                pve.wait(qemu.template(node, *vmid, None).await?).await?;
                info!(vmid = *vmid, "turned VM into a template");
            }
        }
        Ok(())
    }
}
