//! What the node's disk, LVM, ZFS, directory and device calls answer,
//! read from its hardware.

use serde_json::{Value, json};

use super::{MountUnit, NodeHw, UsbDevice, Vg, Zpool};

impl NodeHw {
    /// `GET /nodes/{node}/disks/list`.
    pub fn disks_list(
        &self,
        kind: Option<&str>,
        skipsmart: bool,
        include_partitions: bool,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        for d in &self.disks {
            let entry = d.list_entry(skipsmart, include_partitions);
            let keep = match kind {
                Some("unused") => entry.get("used").is_none(),
                Some("journal_disks") => match entry["used"].as_str() {
                    None => true,
                    Some(u) => (u == "partitions" && d.gpt) || u == "LVM",
                },
                _ => true,
            };
            if keep {
                out.push((d.name().to_string(), entry));
            }
            if include_partitions {
                for p in &d.partitions {
                    let entry = p.list_entry(d);
                    let keep = match kind {
                        Some("unused") => entry.get("used").is_none(),
                        Some("journal_disks") => match entry["used"].as_str() {
                            None => true,
                            Some(u) => u == "LVM",
                        },
                        _ => true,
                    };
                    if keep {
                        out.push((p.devpath.trim_start_matches("/dev/").to_string(), entry));
                    }
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.into_iter().map(|(_, v)| v).collect()
    }

    /// `GET /nodes/{node}/disks/lvm`.
    pub fn lvm_view(&self) -> Value {
        let mut vgs: Vec<&Vg> = self.vgs.iter().collect();
        vgs.sort_by(|a, b| a.name.cmp(&b.name));
        let children: Vec<Value> = vgs
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
    pub fn thinpools_view(&self, vg: Option<&str>) -> Vec<Value> {
        self.thinpools
            .iter()
            .filter(|t| vg.is_none_or(|v| v == t.vg))
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
    pub fn zpools_view(&self) -> Vec<Value> {
        let mut pools: Vec<&Zpool> = self.zpools.iter().collect();
        pools.sort_by(|a, b| a.name.cmp(&b.name));
        pools
            .into_iter()
            .map(|p| {
                let alloc = 540_672 + 4096 * 128;
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
    pub fn zpool_detail(&self, name: &str) -> crate::model::Result<Value> {
        let Some(p) = self.zpools.iter().find(|p| p.name == name) else {
            return Err(crate::model::Error::failed(format!(
                "command '/sbin/zpool status -P {name}' failed: exit code 1"
            )));
        };
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
    pub fn mounts_view(&self) -> Vec<Value> {
        let mut mounts: Vec<&MountUnit> = self.mounts.iter().collect();
        mounts.sort_by(|a, b| MountUnit::unitfile(&a.name).cmp(&MountUnit::unitfile(&b.name)));
        mounts
            .into_iter()
            .map(|m| {
                json!({
                    "unitfile": MountUnit::unitfile(&m.name),
                    "path": format!("/mnt/pve/{}", m.name),
                    "device": m.what,
                    "type": m.fstype,
                    "options": "defaults",
                })
            })
            .collect()
    }

    /// `GET /nodes/{node}/scan/lvm`: the volume groups.
    pub fn scan_lvm(&self) -> Vec<Value> {
        let mut vgs: Vec<Value> = self
            .vgs
            .iter()
            .map(|vg| json!({ "vg": vg.name, "size": vg.size(), "free": vg.free() }))
            .collect();
        vgs.sort_by(|a, b| a["vg"].as_str().cmp(&b["vg"].as_str()));
        vgs
    }

    /// `GET /nodes/{node}/scan/zfs`: the pools' file systems.
    pub fn scan_zfs(&self) -> Vec<Value> {
        self.zpools_view()
            .into_iter()
            .map(|p| json!({ "pool": p["name"], "size": p["free"], "free": p["free"] }))
            .collect()
    }

    /// `GET /nodes/{node}/hardware/pci`: the devices whose class does
    /// not start with one of `blacklist`'s prefixes.
    pub fn pci_scan(&self, blacklist: &[&str], verbose: bool) -> Vec<Value> {
        self.pci
            .iter()
            .filter(|p| {
                let class = p.class.trim_start_matches("0x");
                !blacklist
                    .iter()
                    .any(|b| !b.is_empty() && class.starts_with(b))
            })
            .map(|p| p.entry(verbose))
            .collect()
    }

    /// `GET /nodes/{node}/hardware/pci/{id}/mdev`: a device's mediated
    /// device types (none for a device without); a mapping name finds
    /// no device (fake-pve has no resource mappings).
    pub fn mdev_types(&self, id: &str) -> Vec<Value> {
        let id = if id.len() == 7 {
            format!("0000:{id}")
        } else {
            id.to_string()
        };
        let mut types: Vec<Value> = self
            .pci
            .iter()
            .filter(|p| p.id.eq_ignore_ascii_case(&id))
            .flat_map(|p| p.mdev.iter())
            .map(|m| {
                let mut v = json!({ "type": m.kind, "available": m.available, "description": m.description });
                if let Some(n) = &m.name {
                    v["name"] = json!(n);
                }
                v
            })
            .collect();
        types.sort_by(|a, b| a["type"].as_str().cmp(&b["type"].as_str()));
        types
    }

    /// `GET /nodes/{node}/hardware/usb`.
    pub fn usb_scan(&self) -> Vec<Value> {
        self.usb.iter().map(UsbDevice::entry).collect()
    }
}
