//! The appliance index: `GET /nodes/{node}/aplinfo` lists the container
//! templates PVE's `pveam` knows, `POST` downloads one into a storage's
//! `vztmpl` content (pve-manager `API2/Nodes.pm` `aplinfo`,
//! `apl_download`; `APLInfo.pm`).
//!
//! The list is built in: PVE's usual system templates of both releases.
//! Nothing is fetched; a download stores a volume of the listed size.

use crate::model::storage::{Storages, Volume};
use crate::model::tasks::{TaskEffect, VolumeChange, Worker};
use crate::model::{Error, Result};

/// One appliance of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appliance {
    /// `os`.
    pub os: &'static str,
    /// `package`.
    pub package: &'static str,
    /// `version`.
    pub version: &'static str,
    /// The file name (`template`).
    pub template: &'static str,
    /// `headline`.
    pub headline: &'static str,
    /// Size of the archive in bytes.
    pub size: u64,
}

/// The built-in appliance index (section `system`).
pub const APPLIANCES: &[Appliance] = &[
    Appliance {
        os: "alpine",
        package: "alpine-3.22-default",
        version: "3.22-20250617",
        template: "alpine-3.22-default_20250617_amd64.tar.xz",
        headline: "Alpine Linux 3.22 (standard)",
        size: 3_146_360,
    },
    Appliance {
        os: "almalinux",
        package: "almalinux-9-default",
        version: "9-20240911",
        template: "almalinux-9-default_20240911_amd64.tar.xz",
        headline: "AlmaLinux 9 (default)",
        size: 101_243_516,
    },
    Appliance {
        os: "archlinux",
        package: "archlinux-base",
        version: "20240911-1",
        template: "archlinux-base_20240911-1_amd64.tar.zst",
        headline: "ArchLinux base image",
        size: 183_524_140,
    },
    Appliance {
        os: "centos",
        package: "centos-9-stream-default",
        version: "9-20240828",
        template: "centos-9-stream-default_20240828_amd64.tar.xz",
        headline: "CentOS Stream 9 (default)",
        size: 108_532_940,
    },
    Appliance {
        os: "debian-12",
        package: "debian-12-standard",
        version: "12.7-1",
        template: "debian-12-standard_12.7-1_amd64.tar.zst",
        headline: "Debian 12 Bookworm (standard)",
        size: 126_089_548,
    },
    Appliance {
        os: "debian-13",
        package: "debian-13-standard",
        version: "13.1-2",
        template: "debian-13-standard_13.1-2_amd64.tar.zst",
        headline: "Debian 13 Trixie (standard)",
        size: 130_457_412,
    },
    Appliance {
        os: "fedora",
        package: "fedora-42-default",
        version: "42-20250428",
        template: "fedora-42-default_20250428_amd64.tar.xz",
        headline: "Fedora 42 (default)",
        size: 98_774_320,
    },
    Appliance {
        os: "rockylinux",
        package: "rockylinux-9-default",
        version: "9-20240912",
        template: "rockylinux-9-default_20240912_amd64.tar.xz",
        headline: "Rocky Linux 9 (default)",
        size: 105_412_832,
    },
    Appliance {
        os: "ubuntu-22.04",
        package: "ubuntu-22.04-standard",
        version: "22.04-1",
        template: "ubuntu-22.04-standard_22.04-1_amd64.tar.zst",
        headline: "Ubuntu 22.04 Jammy (standard)",
        size: 129_824_858,
    },
    Appliance {
        os: "ubuntu-24.04",
        package: "ubuntu-24.04-standard",
        version: "24.04-2",
        template: "ubuntu-24.04-standard_24.04-2_amd64.tar.zst",
        headline: "Ubuntu 24.04 Noble (standard)",
        size: 141_486_873,
    },
];

/// Where the appliances' archives are downloaded from.
pub const SOURCE: &str = "http://download.proxmox.com/images/system";

/// `POST /nodes/{node}/aplinfo`: the checks and the `download` task
/// that stores the template in `storage`.
///
/// # Errors
/// 400 `no such template`; storage refusals; a storage without
/// `vztmpl`.
pub fn apl_download(
    storages: &Storages,
    node: &str,
    storage: &str,
    template: &str,
    now: i64,
) -> Result<Worker> {
    let Some(apl) = APPLIANCES.iter().find(|a| a.template == template) else {
        return Err(Error::invalid("template", "no such template"));
    };
    let s = storages.usable_storage(storage, node)?;
    if !s.content.iter().any(|c| c == "vztmpl") {
        return Err(Error::failed(format!(
            "storage '{storage}' does not support templates"
        )));
    }
    let path = s.options.get("path").map_or("/var/lib/vz", String::as_str);
    let dest = format!("{path}/template/cache/{template}");
    let url = format!("{SOURCE}/{template}");
    let tmp = format!("{dest}.tmp.{}", 4000 + now.rem_euclid(1000));
    let volume = Volume {
        storage: s.storage.clone(),
        name: format!("vztmpl/{template}"),
        size: apl.size,
        format: crate::model::storage::content::file_format("vztmpl", template)
            .unwrap_or_else(|| "tzst".into()),
        vmid: 0,
        ctime: now,
    };
    Ok(Worker::new("download", template)
        .log(format!("starting template download from: {url}"))
        .log(format!("target file: {dest}"))
        .log(format!("downloading {url} to {tmp}"))
        .log(format!("Length: {}", apl.size))
        .log("calculating checksum...OK, checksum verified")
        .log(format!("download of '{url}' to '{dest}' finished"))
        .effect(TaskEffect::Volume {
            node: node.to_string(),
            change: VolumeChange::Put {
                volume,
                oci: None,
                ova: None,
            },
        }))
}
