//! A VM's cloud-init drive.

use reqwest::Method;
use serde_json::Value;

use super::{PendingItem, Qemu, vm_path};
use crate::error::Result;
use crate::transport::Params;

/// Which generated cloud-init file `cloudinit_generated_config_dump`
/// reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloudInitDump {
    /// `user-data`.
    User,
    /// `network-config`.
    Network,
    /// `meta-data`.
    Meta,
}

impl CloudInitDump {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Network => "network",
            Self::Meta => "meta",
        }
    }
}

impl Qemu<'_> {
    /// `GET .../cloudinit` (`cloudinit_pending`): the cloud-init keys
    /// with their value in the generated image (`value`) and the one it
    /// will get (`pending`, or `delete`).
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn cloudinit_pending(&self, node: &str, vmid: u32) -> Result<Vec<PendingItem>> {
        self.client
            .call(
                Method::GET,
                &vm_path(node, vmid, "/cloudinit"),
                &Params::new(),
            )
            .await
    }

    /// `PUT .../cloudinit` (`cloudinit_update`): regenerates the
    /// cloud-init drive with the pending values.
    ///
    /// # Errors
    /// A lock (`VM is locked (backup)`).
    pub async fn cloudinit_update(&self, node: &str, vmid: u32) -> Result<()> {
        let _: Value = self
            .client
            .call(
                Method::PUT,
                &vm_path(node, vmid, "/cloudinit"),
                &Params::new(),
            )
            .await?;
        Ok(())
    }

    /// `GET .../cloudinit/dump` (`cloudinit_generated_config_dump`): the
    /// generated `user-data`, `network-config` or `meta-data`.
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn cloudinit_generated_config_dump(
        &self,
        node: &str,
        vmid: u32,
        kind: CloudInitDump,
    ) -> Result<String> {
        let params = Params::new().set("type", kind.as_str());
        self.client
            .call(
                Method::GET,
                &vm_path(node, vmid, "/cloudinit/dump"),
                &params,
            )
            .await
    }
}
