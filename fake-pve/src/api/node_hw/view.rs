//! The answers of a node's disk, LVM, ZFS, directory and device calls
//! as pve-storage's `API2/Disks*.pm` and pve-manager's
//! `API2/Hardware/{PCI,USB}.pm` write them, of its QEMU capabilities
//! (qemu-server `API2/Qemu/{CPU,CPUFlags,Machine}.pm`), its packages
//! (pve-manager `API2/APT.pm`) and its certificates
//! (`API2/Certificates.pm`): the model's hardware turned into JSON, keys
//! in PVE's order.

use serde_json::{Value, json};

use crate::model::PveVersion;
use crate::model::ceph::osds::VolumeInfo;
use crate::model::node_hw::catalog::{self, CpuModel, Machine};
use crate::model::node_hw::certs::CertInfo;
use crate::model::node_hw::{Disk, DiskKind, DiskRow, MdevType, NodeHw, Partition};
use crate::model::node_hw::{PciDevice, UsbDevice};

/// The `disks/list` entry of a disk.
fn disk_entry(d: &Disk, skipsmart: bool, include_partitions: bool) -> Value {
    let (health, wearout) = if skipsmart {
        ("UNKNOWN".to_string(), json!("N/A"))
    } else {
        (
            d.health.clone(),
            match (d.kind.ssd_like(), d.wearout) {
                (true, Some(w)) => json!(w),
                _ => json!("N/A"),
            },
        )
    };
    let mut v = json!({
        "devpath": d.devpath,
        "vendor": d.vendor,
        "model": d.model,
        "size": d.size,
        "serial": d.serial,
        "gpt": u8::from(d.gpt),
        "rpm": d.rpm(),
        "type": d.kind.as_str(),
        "wwn": d.wwn,
        "health": health,
        "wearout": wearout,
        "by_id_link": d.by_id_link(),
        "osdid": -1,
        "osdid-list": null,
    });
    // `get_disks` sets `mounted` only on a mounted device (pve-storage's
    // "only set mounted property for mounted devices").
    if d.mounted {
        v["mounted"] = json!(1);
    }
    if let Some(u) = d.usage(include_partitions) {
        v["used"] = json!(u);
    }
    v
}

/// The `disks/list` entry of a partition (`include-partitions=1`).
fn partition_entry(p: &Partition, disk: &Disk) -> Value {
    let mut v = json!({
        "devpath": p.devpath,
        "parent": disk.devpath,
        "gpt": u8::from(disk.gpt),
        "type": "partition",
        "size": p.size,
        "osdid": -1,
        "osdid-list": null,
    });
    if p.mounted {
        v["mounted"] = json!(1);
    }
    if let Some(u) = p.usage() {
        v["used"] = json!(u);
    }
    v
}

/// `GET /nodes/{node}/disks/list` of a node without Ceph OSDs.
#[cfg(test)]
pub fn disks_list(
    hw: &NodeHw,
    kind: Option<&str>,
    skipsmart: bool,
    include_partitions: bool,
) -> Vec<Value> {
    disks_list_with_osds(hw, kind, skipsmart, include_partitions, &|_| None)
}

/// The Ceph members of a `disks/list` entry a device's own volumes give
/// (`$collect_ceph_info`): on a partition as `ceph-volume` tags them, on
/// a disk summed over it and its partitions.
fn ceph_members(v: &mut Value, infos: &[VolumeInfo], whole_disk: bool) {
    let ids: Vec<String> = infos
        .iter()
        .flat_map(|i| i.osdids.iter().map(u32::to_string))
        .collect();
    let last = infos.iter().rev().find(|i| !i.osdids.is_empty());
    let (db, wal): (u32, u32) = infos
        .iter()
        .map(|i| (i.db, i.wal))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if let Some(info) = last {
        // The ids come from a match of the LV's tags: strings.
        let list: Vec<String> = info.osdids.iter().map(u32::to_string).collect();
        v["osdid"] = json!(list.last());
        v["osdid-list"] = json!(if whole_disk { list } else { ids });
        v["bluestore"] = json!(1);
        if whole_disk {
            v["osdencrypted"] = json!(u8::from(infos.iter().any(|i| i.encrypted)));
        } else if info.encrypted {
            v["encrypted"] = json!(1);
        }
    }
    if db > 0 {
        v["db"] = json!(db);
    }
    if wal > 0 {
        v["wal"] = json!(wal);
    }
}

/// `GET /nodes/{node}/disks/list`: a device holding Ceph volumes (`ceph`
/// gives what `ceph-volume` knows of it) names its OSDs in `osdid` and
/// `osdid-list`, with `bluestore` and `osdencrypted`, and counts its
/// `block.db` and `block.wal` volumes in `db` and `wal`.
pub fn disks_list_with_osds(
    hw: &NodeHw,
    kind: Option<&str>,
    skipsmart: bool,
    include_partitions: bool,
    ceph: &dyn Fn(&str) -> Option<VolumeInfo>,
) -> Vec<Value> {
    hw.disks_list(kind, include_partitions)
        .into_iter()
        .map(|r| match r {
            DiskRow::Disk(d) => {
                let mut v = disk_entry(d, skipsmart, include_partitions);
                let mut infos: Vec<VolumeInfo> = d
                    .partitions
                    .iter()
                    .filter_map(|p| ceph(&p.devpath))
                    .collect();
                infos.extend(ceph(&d.devpath));
                ceph_members(&mut v, &infos, true);
                v
            }
            DiskRow::Partition(d, p) => {
                let mut v = partition_entry(p, d);
                if let Some(info) = ceph(&p.devpath) {
                    ceph_members(&mut v, &[info], false);
                }
                v
            }
        })
        .collect()
}

/// `GET /nodes/{node}/disks/smart` of a disk.
pub fn smart(d: &Disk, healthonly: bool) -> Value {
    if healthonly {
        return json!({ "health": d.health });
    }
    match d.kind {
        DiskKind::Nvme => {
            let used = 100 - d.wearout.unwrap_or(100).min(100);
            let text = format!(
                "\nSMART/Health Information (NVMe Log 0x02, NSID 0xffffffff)\nCritical Warning:                   0x00\nTemperature:                        36 Celsius\nAvailable Spare:                    100%\nAvailable Spare Threshold:          10%\nPercentage Used:                    {used}%\nData Units Read:                    1,299,288 [665 GB]\nData Units Written:                 5,592,478 [2.86 TB]\nHost Read Commands:                 30,360,807\nHost Write Commands:                470,356,196\nController Busy Time:               12\nPower Cycles:                       98\nPower On Hours:                     687\nUnsafe Shutdowns:                   21\nMedia and Data Integrity Errors:    0\nError Information Log Entries:      0\n"
            );
            let mut v = json!({ "health": d.health, "type": "text", "text": text });
            if let Some(w) = d.wearout {
                v["wearout"] = json!(w);
            }
            v
        }
        DiskKind::Usb => json!({ "health": d.health }),
        _ => {
            let attr = |id: u32, name: &str, flags: &str, value: u32, thresh: u32, raw: &str| {
                json!({
                    "id": format!("{id:>3}"),
                    "name": name,
                    "flags": flags,
                    "value": value,
                    "normalized": value,
                    "worst": value,
                    "threshold": thresh,
                    "fail": "-",
                    "raw": raw,
                })
            };
            let mut attributes = vec![
                attr(1, "Raw_Read_Error_Rate", "POSR-K", 100, 6, "0"),
                attr(5, "Reallocated_Sector_Ct", "PO--CK", 100, 10, "0"),
                attr(9, "Power_On_Hours", "-O--CK", 99, 0, "1309"),
                attr(12, "Power_Cycle_Count", "-O--CK", 100, 20, "98"),
            ];
            if d.kind == DiskKind::Ssd {
                let w = d.wearout.unwrap_or(100);
                attributes.push(attr(177, "Wear_Leveling_Count", "PO--C-", w, 0, "12"));
            }
            attributes.push(attr(194, "Temperature_Celsius", "-O---K", 64, 0, "36"));
            attributes.push(attr(199, "UDMA_CRC_Error_Count", "-OSRCK", 200, 0, "0"));
            json!({ "health": d.health, "type": "ata", "attributes": attributes })
        }
    }
}

/// `GET /nodes/{node}/disks/lvm`.
pub fn lvm(hw: &NodeHw) -> Value {
    let children: Vec<Value> = hw
        .vgs_by_name()
        .into_iter()
        .map(|vg| {
            json!({
                "name": vg.name,
                "size": vg.size(),
                "free": vg.free(),
                "lvcount": vg.lvcount,
                "leaf": 0,
                "children": vg.pvs.iter().map(|p| json!({
                    "name": p.name, "size": p.size, "free": p.free, "leaf": 1,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "leaf": 0, "children": children })
}

/// `GET /nodes/{node}/disks/lvmthin` (and `scan/lvmthin` for one VG).
pub fn thinpools(hw: &NodeHw, vg: Option<&str>) -> Vec<Value> {
    hw.thinpools_of(vg)
        .into_iter()
        .map(|t| {
            json!({
                "lv": t.lv,
                "vg": t.vg,
                "lv_size": t.lv_size,
                "used": 0,
                "metadata_size": t.metadata_size,
                "metadata_used": t.metadata_size / 100,
            })
        })
        .collect()
}

/// `GET /nodes/{node}/disks/zfs`.
pub fn zpools(hw: &NodeHw) -> Vec<Value> {
    hw.zpools_by_name()
        .into_iter()
        .map(|p| {
            let alloc = p.alloc();
            json!({
                "name": p.name,
                "size": p.size,
                "alloc": alloc,
                "free": p.size - alloc,
                "frag": 0,
                "dedup": 1.0,
                "health": "ONLINE",
            })
        })
        .collect()
}

/// `GET /nodes/{node}/disks/zfs/{name}`: `zpool status` as a tree.
///
/// # Errors
/// `zpool status` of a pool that does not exist.
pub fn zpool_detail(hw: &NodeHw, name: &str) -> crate::model::Result<Value> {
    let p = hw.zpool(name)?;
    let leaf = |dev: &String| json!({ "name": format!("{dev}-part1"), "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "msg": "", "leaf": 1 });
    let vdevs: Vec<Value> = match p.raidlevel.as_str() {
        "single" => p.devices.iter().map(leaf).collect(),
        "raid10" => p
            .devices
            .chunks(2)
            .enumerate()
            .map(|(i, pair)| {
                json!({ "name": format!("mirror-{i}"), "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "msg": "", "leaf": 0,
                    "children": pair.iter().map(leaf).collect::<Vec<_>>() })
            })
            .collect(),
        level => {
            let vname = match level {
                "raidz" => "raidz1",
                other => other,
            };
            vec![json!({ "name": format!("{vname}-0"), "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "msg": "", "leaf": 0,
                "children": p.devices.iter().map(leaf).collect::<Vec<_>>() })]
        }
    };
    Ok(json!({
        "name": p.name,
        "state": "ONLINE",
        "errors": "No known data errors",
        "leaf": 0,
        "children": [{
            "name": p.name, "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "msg": "", "leaf": 0,
            "children": vdevs,
        }],
    }))
}

/// `GET /nodes/{node}/disks/directory`.
pub fn mounts(hw: &NodeHw) -> Vec<Value> {
    hw.mounts_by_unit()
        .into_iter()
        .map(|m| {
            json!({
                "unitfile": crate::model::node_hw::MountUnit::unitfile(&m.name),
                "path": format!("/mnt/pve/{}", m.name),
                "device": m.what,
                "type": m.fstype,
                "options": "defaults",
            })
        })
        .collect()
}

/// `GET /nodes/{node}/scan/lvm`: the volume groups.
pub fn scan_lvm(hw: &NodeHw) -> Vec<Value> {
    hw.vgs_by_name()
        .into_iter()
        .map(|vg| json!({ "vg": vg.name, "size": vg.size(), "free": vg.free() }))
        .collect()
}

/// `GET /nodes/{node}/scan/zfs`: the pools' file systems.
pub fn scan_zfs(hw: &NodeHw) -> Vec<Value> {
    zpools(hw)
        .into_iter()
        .map(|p| json!({ "pool": p["name"], "size": p["free"], "free": p["free"] }))
        .collect()
}

/// A `hardware/pci` entry.
fn pci_entry(p: &PciDevice, verbose: bool) -> Value {
    let mut v = json!({
        "id": p.id,
        "class": p.class,
        "vendor": p.vendor,
        "device": p.device,
        "iommugroup": p.iommugroup,
    });
    if !p.mdev.is_empty() {
        v["mdev"] = json!(1);
    }
    if verbose {
        for (k, val) in [
            ("vendor_name", &p.vendor_name),
            ("device_name", &p.device_name),
            ("subsystem_vendor", &p.subsystem_vendor),
            ("subsystem_device", &p.subsystem_device),
            ("subsystem_vendor_name", &p.subsystem_vendor_name),
            ("subsystem_device_name", &p.subsystem_device_name),
        ] {
            if let Some(s) = val {
                v[k] = json!(s);
            }
        }
    }
    v
}

/// `GET /nodes/{node}/hardware/pci`.
pub fn pci_scan(hw: &NodeHw, blacklist: &[&str], verbose: bool) -> Vec<Value> {
    hw.pci_scan(blacklist)
        .into_iter()
        .map(|p| pci_entry(p, verbose))
        .collect()
}

/// `GET /nodes/{node}/hardware/pci/{id}/mdev`.
pub fn mdev_types(hw: &NodeHw, id: &str) -> Vec<Value> {
    hw.mdev_types(id)
        .into_iter()
        .map(|m: &MdevType| {
            let mut v =
                json!({ "type": m.kind, "available": m.available, "description": m.description });
            if let Some(n) = &m.name {
                v["name"] = json!(n);
            }
            v
        })
        .collect()
}

/// A `hardware/usb` entry.
fn usb_entry(u: &UsbDevice) -> Value {
    let mut v = json!({
        "busnum": u.busnum,
        "devnum": u.devnum,
        "port": u.port,
        "level": u.level,
        "usbpath": format!("{}-{}", u.busnum, u.port),
        "vendid": u.vendid,
        "prodid": u.prodid,
        "speed": u.speed,
        "class": u.class,
    });
    for (k, val) in [
        ("manufacturer", &u.manufacturer),
        ("product", &u.product),
        ("serial", &u.serial),
    ] {
        if let Some(s) = val {
            v[k] = json!(s);
        }
    }
    v
}

/// `GET /nodes/{node}/hardware/usb`.
pub fn usb_scan(hw: &NodeHw) -> Vec<Value> {
    hw.usb().iter().map(usb_entry).collect()
}

/// A model of `GET /nodes/{node}/capabilities/qemu/cpu`: no custom
/// models, so every one is `custom: 0`.
pub fn cpu_model(m: &CpuModel) -> Value {
    if m.builtin {
        json!({ "name": m.name, "custom": 0, "abstract": 1, "vendor": m.vendor })
    } else {
        json!({ "name": m.name, "custom": 0, "vendor": m.vendor })
    }
}

/// A flag of `GET /nodes/{node}/capabilities/qemu/cpu-flags`.
pub fn cpu_flag((name, description): &(&str, &str)) -> Value {
    json!({ "name": name, "description": description })
}

/// A machine type of `GET /nodes/{node}/capabilities/qemu/machines`.
pub fn machine(m: &Machine) -> Value {
    let (kind, qemu) = (m.kind, m.qemu);
    match m.revision {
        Some((rev, changes)) => json!({
            "id": format!("pc-{kind}-{qemu}{rev}"),
            "type": kind,
            "version": format!("{qemu}{rev}"),
            "changes": changes,
        }),
        None => json!({
            "id": format!("pc-{kind}-{qemu}"),
            "type": kind,
            "version": qemu,
        }),
    }
}

/// One `apt/versions` (or `apt/update`) entry as `assemble_pkginfo`
/// builds it.
pub fn package(
    name: &str,
    title: &str,
    origin: &str,
    section: &str,
    version: &str,
    old: Option<&str>,
) -> Value {
    let mut v = json!({
        "Package": name,
        "Title": title,
        "Origin": origin,
        "Description": title,
        "Section": section,
        "Arch": if section.ends_with("doc") || section.ends_with("perl") || section.ends_with("web") { "all" } else { "amd64" },
        "Priority": "optional",
        "Version": version,
    });
    if let Some(old) = old {
        v["OldVersion"] = json!(old);
    }
    v
}

/// `GET /nodes/{node}/apt/versions`: the installed packages, with the
/// running manager's version and kernel on their packages.
pub fn apt_versions(version: PveVersion) -> Vec<Value> {
    catalog::installed(version)
        .into_iter()
        .map(|(name, ver, origin, section, title)| {
            let mut e = package(&name, title, origin, section, ver, Some(ver));
            e["CurrentState"] = json!("Installed");
            if name == "pve-manager" {
                e["ManagerVersion"] = json!(format!("{}/{}", version.version(), version.repoid()));
            } else if name == "proxmox-ve" {
                e["RunningKernel"] = json!(catalog::kernel_release(version));
            }
            e
        })
        .collect()
}

/// A certificate of `GET /nodes/{node}/certificates/info` (and the
/// answer of an upload).
pub fn certificate(c: &CertInfo) -> Value {
    json!({
        "filename": c.filename,
        "fingerprint": c.fingerprint,
        "subject": c.subject,
        "issuer": c.issuer,
        "notbefore": c.notbefore,
        "notafter": c.notafter,
        "san": c.san,
        "pem": c.pem,
        "public-key-type": c.key_type,
        "public-key-bits": c.key_bits,
    })
}
