//! pve-operator: reconciles declared machines into Proxmox VE.
//!
//! Resources of the `pve.fake-pve.io/v1alpha1` group (ProxmoxCluster,
//! ProxmoxNode, Machine, MachineSnapshot, MachineImage) say what should
//! exist; the operator observes PVE through `pve-client`, plans the
//! difference with pure functions and carries it out one idempotent step
//! at a time. VMs carry an ownership mark (the `pve-operator` tag and a
//! `managed-by=pve-operator machine=CLUSTER/NAME` description), so a
//! restarted operator adopts what it made instead of creating it again.
//!
//! Standalone mode (the default) reads the resources from a directory of
//! YAML files and writes each object's status to a file beside it; the
//! same types would serve as Kubernetes custom resources.
//!
//! # Layout
//! - [`types`]: the resources and their statuses (serde), and the
//!   Kubernetes custom resources derived from them.
//! - [`crd`]: the CustomResourceDefinitions, as `pve-operator crd` prints.
//! - [`cloudinit`]: inline user data as PVE's cloud-init options.
//! - [`dialects`]: vitistack's, VirtRigaud's and the Crossplane
//!   provider's documents read as they are written and turned into these
//!   resources.
//! - [`validate`]: the Crossplane provider's validation rules, memory and
//!   disk quantities, image references.
//! - [`plan`]: `plan(desired, observed) -> steps`, node selection, VMID
//!   assignment, drift and the hot-plug matrix; pure, no I/O.
//! - [`controller`]: the executor: connections, observation, steps,
//!   status and conditions; snapshots and images.
//! - [`error`]: one error type, its classification and the requeue
//!   backoff.
//! - [`metrics`]: the Prometheus series of the operator reference.
//! - [`http`]: `/metrics`, `/healthz`, `/readyz`.
//! - [`k8s`]: the requests the operator makes on Kubernetes (RBAC).
//! - [`standalone`]: the manifest directory loop, status files,
//!   finalizers, the `status` table.
//! - `src/main.rs`: the `pve-operator` command (`run`, `status`, `check`).

pub mod cloudinit;
pub mod controller;
pub mod crd;
pub mod dialects;
pub mod error;
pub mod http;
pub mod k8s;
pub mod kubernetes;
pub mod metrics;
pub mod plan;
pub mod standalone;
pub mod types;
pub mod validate;

pub use controller::{Operator, World};
pub use error::{Backoff, Error, ErrorType, Result};
pub use standalone::{Options, Standalone};
