//! The conformance runner: the Gherkin features in `features/`, played by
//! cucumber against an in-process fake-pve (every scenario its own server,
//! scenarios concurrently) or against a real PVE cluster, so that what
//! passes against the emulator is known to pass against PVE.
//!
//! Scenarios speak through `pve-client` as any automation would, and
//! every successful answer is checked against the official `returns`
//! schema of the release that answered.
//!
//! # Layout
//! - [`target`]: where the features run (fake-pve or a real cluster), from
//!   the command line and the `PVE_*` environment, with the reserved VMID
//!   range and the node, storage and bridge a real run may use.
//! - [`world`]: [`world::PveWorld`], the state of one scenario: its
//!   target, its clients, what the last call answered, and what it made
//!   (removed again after the scenario, even when it failed).
//! - [`raw`]: plain HTTP for what a typed client hides (missing
//!   credentials, CSRF tokens, header spellings, reason phrases).
//! - [`steps`]: step definitions, one module per API area, named after
//!   PVE's methods.
//! - [`runner`]: tag filtering by target and release, reports (human
//!   readable, JUnit XML on request) and the counts.

pub mod raw;
pub mod runner;
pub mod steps;
pub mod target;
pub mod world;

pub use runner::{Options, Summary, run};
pub use target::Target;
pub use world::PveWorld;
