//! The typed API, one module per PVE area. Method names are PVE's own
//! (the schema's `name`, as fake-pve's handlers use them), so that one
//! grep finds the emulator's handler, the client method and the
//! conformance step of a call.

pub mod access;
pub mod acme;
pub mod agent;
pub mod backup;
pub mod ceph;
pub mod cluster;
pub mod clusterconfig;
pub mod clusterlog;
pub mod console;
pub mod cpu_models;
pub mod firewall;
pub mod ha;
pub mod lxc;
pub mod mapping;
pub mod metrics;
pub mod network;
pub mod node_hw;
pub mod node_power;
pub mod node_services;
pub mod nodes;
pub mod notifications;
pub mod oci;
pub mod pools;
pub mod qemu;
pub mod realms;
pub mod remote_migrate;
pub mod replication;
pub mod sdn;
pub mod storage;
pub mod storage_import;
pub mod tasks;
pub mod tfa;
pub mod version;

/// Characters left as they are in a path segment.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes one path segment (a node name, a UPID, a user ID).
pub fn seg(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, SEGMENT).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn segments_are_encoded() {
        assert_eq!(
            super::seg("UPID:pve:0000:root@pam!ci:"),
            "UPID%3Apve%3A0000%3Aroot%40pam%21ci%3A"
        );
        assert_eq!(super::seg("pve-1"), "pve-1");
    }
}
