//! Why a value breaks a rule: one error per kind of value, each message
//! the one the field reports.

use crate::types::Quantity;

/// Why a memory quantity is refused ([`super::parse_memory`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryError {
    /// Not a number with a unit.
    #[error("invalid memory format {0:?}: use a number with Ki, Mi, Gi, Ti, K, M, G or T")]
    Format(String),
    /// A unit memory does not take.
    #[error("invalid memory unit in {0:?}: use Ki, Mi, Gi, Ti, K, M, G or T")]
    Unit(String),
    /// Less than 128 MiB.
    #[error("memory {0} is below minimum of 128 MB")]
    BelowMinimum(Quantity),
    /// More than 2 TiB.
    #[error("memory {0} exceeds maximum of 2 TB")]
    AboveMaximum(Quantity),
}

/// Why a disk size is refused ([`super::parse_disk`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiskSizeError {
    /// Not a number with a unit.
    #[error("invalid disk size format {0:?}: use a number with Ti, Gi, Mi, T, G or M")]
    Format(String),
    /// A unit disk sizes do not take.
    #[error("invalid disk size unit in {0:?}: use Ti, Gi, Mi, T, G or M")]
    Unit(String),
    /// Less than 1 GiB.
    #[error("disk {0} is below minimum of 1 GB")]
    BelowMinimum(Quantity),
    /// More than 100 TiB.
    #[error("disk {0} exceeds maximum of 100 TB")]
    AboveMaximum(Quantity),
}

/// Why a VM name is refused ([`super::check_name`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// No name.
    #[error("VM name must not be empty")]
    Empty,
    /// Longer than 100 characters (the length).
    #[error("VM name is {0} characters long, the maximum is 100")]
    TooLong(usize),
    /// Other characters than letters, digits, `-`, `_`, `.` and spaces.
    #[error("VM name contains invalid characters")]
    InvalidCharacters,
    /// A space first or last.
    #[error("VM name cannot start or end with a space")]
    EdgeSpace,
}

/// A bridge name that is not one ([`super::check_bridge`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid network bridge name {0:?}: use letters, digits, '-' and '_'")]
pub struct BridgeNameError(pub String);

/// Why an image reference is refused ([`super::parse_image`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageRefError {
    /// No reference.
    #[error("image must not be empty")]
    Empty,
    /// Digits too many for a number.
    #[error("template VMID {0} is out of range")]
    VmidOverflow(String),
    /// A VMID outside 100-999999999.
    #[error("template VMID {0} is out of range 100-999999999")]
    VmidOutOfRange(String),
    /// `storage:path` malformed.
    #[error("invalid volume ID {0:?}: expected storage:path, as local:iso/ubuntu.iso")]
    VolumeId(String),
    /// A name longer than 255 characters (the length).
    #[error("image name is {0} characters long, the maximum is 255")]
    NameTooLong(usize),
    /// A name with whitespace or control characters.
    #[error("invalid image name {0:?}")]
    Name(String),
}
