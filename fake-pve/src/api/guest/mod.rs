//! What the answers of `/nodes/{node}/qemu` and `/nodes/{node}/lxc`
//! share: the views of the guest core (snapshots).

pub mod view;
