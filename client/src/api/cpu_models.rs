//! PVE 9.2's `/cluster/qemu`: the custom CPU models of `cpu-models.conf`
//! and the CPU flags of the cluster's nodes.
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::cpu_models::CpuModelSpec;
//! let models = client.cpu_models();
//! let spec = CpuModelSpec {
//!     flags: Some("+aes;+avx2".into()),
//!     ..CpuModelSpec::reporting("Skylake-Server")
//! };
//! models.create("fast", &spec).await?;
//! let fast = models.info("custom-fast").await?;
//! # let _ = fast;
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::seg;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The `/cluster/qemu` calls; see [`Client::cpu_models`].
#[derive(Debug, Clone, Copy)]
pub struct CpuModels<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster/qemu` calls (PVE 9.2).
    pub fn cpu_models(&self) -> CpuModels<'_> {
        CpuModels { client: self }
    }
}

/// A custom model as the list and `info` give it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CustomCpuModel {
    /// `custom-<name>`, as a VM's `cpu` names it.
    pub cputype: String,
    /// The model and vendor the guest sees.
    #[serde(default)]
    pub reported_model: Option<String>,
    /// `+FLAG;-FLAG`.
    #[serde(default)]
    pub flags: Option<String>,
    /// Not identified as a KVM guest.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub hidden: Option<bool>,
    /// The Hyper-V vendor id.
    #[serde(default)]
    pub hv_vendor_id: Option<String>,
    /// The physical address bits reported (`8`-`64` or `host`).
    #[serde(default)]
    pub phys_bits: Option<String>,
    /// The physical address bits available to the guest.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub guest_phys_bits: Option<u64>,
    /// The highest basic CPUID leaf.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub level: Option<u64>,
    /// `cpu-models.conf`'s digest.
    #[serde(default)]
    pub digest: Option<String>,
}

/// What a create or an update sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuModelSpec {
    /// `reported-model` (required to create).
    pub reported_model: Option<String>,
    /// `flags`.
    pub flags: Option<String>,
    /// `hidden`.
    pub hidden: Option<bool>,
    /// `hv-vendor-id`.
    pub hv_vendor_id: Option<String>,
    /// `phys-bits`.
    pub phys_bits: Option<String>,
    /// `guest-phys-bits`.
    pub guest_phys_bits: Option<u64>,
    /// `level`.
    pub level: Option<u64>,
}

impl CpuModelSpec {
    /// A model that reports `model` to the guest, and nothing else set.
    pub fn reporting(model: &str) -> Self {
        Self {
            reported_model: Some(model.to_string()),
            ..Self::default()
        }
    }

    fn params(&self, params: Params) -> Params {
        params
            .opt("reported-model", self.reported_model.clone())
            .opt("flags", self.flags.clone())
            .opt("hidden", self.hidden)
            .opt("hv-vendor-id", self.hv_vendor_id.clone())
            .opt("phys-bits", self.phys_bits.clone())
            .opt("guest-phys-bits", self.guest_phys_bits)
            .opt("level", self.level)
    }
}

/// A CPU flag with the nodes that support it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CpuFlag {
    /// The flag (`aes`, `nested-virt`).
    pub name: String,
    /// What it does, where PVE says.
    #[serde(default)]
    pub description: Option<String>,
    /// The nodes whose CPU supports it.
    #[serde(default)]
    pub supported_on: Vec<String>,
}

impl CpuModels<'_> {
    /// `GET /cluster/qemu/cpu-flags` (`index`): every flag QEMU knows,
    /// with the nodes that support it under `accel` (`kvm`, `tcg`).
    ///
    /// # Errors
    /// 403 without `Sys.Audit` on `/nodes` or a `Mapping.*` privilege on
    /// `/mapping/cpu`.
    pub async fn cpu_flags(&self, accel: Option<&str>) -> Result<Vec<CpuFlag>> {
        let params = Params::new().opt("accel", accel);
        self.client
            .call(Method::GET, "/cluster/qemu/cpu-flags", &params)
            .await
    }

    /// `GET /cluster/qemu/custom-cpu-models` (`config`): the models the
    /// caller may see.
    ///
    /// # Errors
    /// Transport errors only.
    pub async fn config(&self) -> Result<Vec<CustomCpuModel>> {
        self.client
            .call(
                Method::GET,
                "/cluster/qemu/custom-cpu-models",
                &Params::new(),
            )
            .await
    }

    /// `POST /cluster/qemu/custom-cpu-models` (`create`): `name` with or
    /// without `custom-`.
    ///
    /// # Errors
    /// `custom CPU model 'x' already exists`; 400 without a
    /// `reported_model`.
    pub async fn create(&self, name: &str, spec: &CpuModelSpec) -> Result<()> {
        let params = spec.params(Params::new().set("cputype", name));
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/qemu/custom-cpu-models", &params)
            .await?;
        Ok(())
    }

    /// `GET /cluster/qemu/custom-cpu-models/{cputype}` (`info`): the
    /// properties set to a true value, and the digest.
    ///
    /// # Errors
    /// `Custom cputype 'x' not found`.
    pub async fn info(&self, name: &str) -> Result<CustomCpuModel> {
        let path = format!("/cluster/qemu/custom-cpu-models/{}", seg(name));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `PUT /cluster/qemu/custom-cpu-models/{cputype}` (`update`):
    /// `delete` names properties to remove; `digest` guards the file.
    ///
    /// # Errors
    /// `custom CPU model 'x' does not exist`, `cannot delete
    /// 'reported-model'`, a changed digest.
    pub async fn update(
        &self,
        name: &str,
        spec: &CpuModelSpec,
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let path = format!("/cluster/qemu/custom-cpu-models/{}", seg(name));
        let params = spec.params(
            Params::new()
                .opt("delete", (!delete.is_empty()).then(|| delete.join(",")))
                .opt("digest", digest),
        );
        let _: Value = self.client.call(Method::PUT, &path, &params).await?;
        Ok(())
    }

    /// `DELETE /cluster/qemu/custom-cpu-models/{cputype}` (`delete`):
    /// VMs that use the model keep naming it.
    ///
    /// # Errors
    /// `custom CPU model 'x' does not exist`.
    pub async fn delete(&self, name: &str) -> Result<()> {
        let path = format!("/cluster/qemu/custom-cpu-models/{}", seg(name));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }
}
