//! A node's disks, hardware, QEMU capabilities, packages, storage scans
//! and certificates (pve-storage `API2/Disks*.pm`, `API2/Storage/Scan.pm`;
//! pve-manager `API2/Hardware*.pm`, `API2/Capabilities.pm`, `API2/APT.pm`,
//! `API2/Certificates.pm`; qemu-server `API2/Qemu/{CPU,CPUFlags,Machine}.pm`).

pub mod view;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::node_hw::catalog;
use crate::model::node_hw::cluster::check_disk_storage;
use crate::model::node_hw::disks::DiskOp;
use crate::model::{Error, PveVersion, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/disks/list", disks_list),
        get("/nodes/{node}/disks/smart", smart),
        post("/nodes/{node}/disks/initgpt", initgpt),
        put("/nodes/{node}/disks/wipedisk", wipe_disk),
        get("/nodes/{node}/disks/zfs", zfs_index),
        post("/nodes/{node}/disks/zfs", zfs_create),
        get("/nodes/{node}/disks/zfs/{name}", zfs_detail),
        delete("/nodes/{node}/disks/zfs/{name}", zfs_delete),
        get("/nodes/{node}/disks/lvm", lvm_index),
        post("/nodes/{node}/disks/lvm", lvm_create),
        delete("/nodes/{node}/disks/lvm/{name}", lvm_delete),
        get("/nodes/{node}/disks/lvmthin", lvmthin_index),
        post("/nodes/{node}/disks/lvmthin", lvmthin_create),
        delete("/nodes/{node}/disks/lvmthin/{name}", lvmthin_delete),
        get("/nodes/{node}/disks/directory", directory_index),
        post("/nodes/{node}/disks/directory", directory_create),
        delete("/nodes/{node}/disks/directory/{name}", directory_delete),
        get("/nodes/{node}/capabilities/qemu/cpu", cpu_index),
        get("/nodes/{node}/capabilities/qemu/cpu-flags", cpu_flags_index),
        get("/nodes/{node}/capabilities/qemu/machines", machine_types),
        get(
            "/nodes/{node}/capabilities/qemu/migration",
            migration_capabilities,
        ),
        get("/nodes/{node}/hardware/pci", pci_scan),
        get(
            "/nodes/{node}/hardware/pci/{pci-id-or-mapping}/mdev",
            mdevscan,
        ),
        get("/nodes/{node}/hardware/usb", usbscan),
        get("/nodes/{node}/apt/update", list_updates),
        post("/nodes/{node}/apt/update", update_database),
        get("/nodes/{node}/apt/versions", versions),
        get("/nodes/{node}/apt/changelog", changelog),
        get("/nodes/{node}/scan/nfs", nfsscan),
        get("/nodes/{node}/scan/glusterfs", glusterfsscan),
        get("/nodes/{node}/scan/cifs", cifsscan),
        get("/nodes/{node}/scan/iscsi", iscsiscan),
        get("/nodes/{node}/scan/pbs", pbsscan),
        get("/nodes/{node}/scan/lvm", lvmscan),
        get("/nodes/{node}/scan/lvmthin", lvmthinscan),
        get("/nodes/{node}/scan/zfs", zfsscan),
        get("/nodes/{node}/certificates/info", certificates_info),
        post("/nodes/{node}/certificates/custom", upload_custom_cert),
        delete("/nodes/{node}/certificates/custom", remove_custom_cert),
    ]
}

fn flag(ctx: &Ctx<'_>, name: &str) -> Result<bool> {
    Ok(ctx.params.bool(name)?.unwrap_or(false))
}

/// The extra check of `add_storage=1` and `cleanup-config=1`.
fn check_storage_allocate(ctx: &Ctx<'_>) -> Result<()> {
    let who = ctx.who()?;
    ctx.with(|c| {
        c.access()
            .check_perm(who, "/storage", &["Datastore.Allocate"])
    })
}

/// Starts a disk task after the model's checks.
fn start(ctx: &Ctx<'_>, node: &str, op: DiskOp) -> Result<Reply> {
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let (kind, _) = op.task();
    let ms = ctx.task_ms(kind);
    let upid = ctx.with(|c| {
        check_disk_storage(&mut c.storage, node, &op)?;
        let worker = c.hardware.disk_worker(node, op);
        Ok::<_, Error>(c.start_task(node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `GET /nodes/{node}/disks/list`.
fn disks_list(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let skipsmart = flag(ctx, "skipsmart")?;
    let parts = flag(ctx, "include-partitions")?;
    let kind = ctx.params.str("type");
    let list = ctx.with(|c| {
        let ceph = c.ceph();
        view::disks_list_with_osds(
            &c.hardware().node(&node),
            kind.as_deref(),
            skipsmart,
            parts,
            &|dev| ceph.volume_info(&node, dev),
        )
    });
    Ok(Value::Array(list).into())
}

/// `GET /nodes/{node}/disks/smart`.
fn smart(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let disk = ctx.param("disk")?;
    let healthonly = flag(ctx, "healthonly")?;
    let v = ctx.with(|c| {
        let hw = c.hardware().node(&node);
        let (dev, _) = hw.verify_blockdev_path(&disk)?;
        let d = match dev {
            crate::model::node_hw::disks::Dev::Disk(i)
            | crate::model::node_hw::disks::Dev::Part(i, _) => &hw.disks()[i],
        };
        Ok::<_, Error>(view::smart(d, healthonly))
    })?;
    Ok(v.into())
}

/// `POST /nodes/{node}/disks/initgpt` (task `diskinit`).
fn initgpt(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let disk = ctx.param("disk")?;
    let path = ctx.with(|c| c.hardware().node(&node).check_initgpt(&disk))?;
    start(ctx, &node, DiskOp::InitGpt { disk: path })
}

/// `PUT /nodes/{node}/disks/wipedisk` (task `wipedisk`).
fn wipe_disk(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let disk = ctx.param("disk")?;
    let path = ctx.with(|c| c.hardware().node(&node).check_wipe(&disk))?;
    start(ctx, &node, DiskOp::Wipe { disk: path })
}

/// `GET /nodes/{node}/disks/zfs`.
fn zfs_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    Ok(Value::Array(ctx.with(|c| view::zpools(&c.hardware().node(&node)))).into())
}

/// `GET /nodes/{node}/disks/zfs/{name}`.
fn zfs_detail(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    Ok(ctx
        .with(|c| view::zpool_detail(&c.hardware().node(&node), &name))?
        .into())
}

/// `draid-config` as `data=<n>,spares=<n>`.
fn draid_config(text: &str) -> Result<(u32, u32)> {
    let (mut data, mut spares) = (0, 0);
    for part in text.split(',') {
        let (k, v) = part.split_once('=').unwrap_or(("data", part));
        let n: u32 = v.parse().map_err(|_| {
            Error::invalid(
                "draid-config",
                format!("invalid format - value '{v}' does not look like a valid integer"),
            )
        })?;
        match k {
            "data" => data = n,
            "spares" => spares = n,
            other => {
                return Err(Error::invalid(
                    "draid-config",
                    format!("invalid format - unknown property '{other}'"),
                ));
            }
        }
    }
    Ok((data, spares))
}

/// `POST /nodes/{node}/disks/zfs` (task `zfscreate`).
fn zfs_create(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    let raidlevel = ctx.param("raidlevel")?;
    let devices: Vec<String> = crate::spec::formats::split_list(&ctx.param("devices")?)
        .into_iter()
        .map(str::to_string)
        .collect();
    let add_storage = flag(ctx, "add_storage")?;
    let draid = ctx
        .params
        .str("draid-config")
        .map(|t| draid_config(&t))
        .transpose()?;
    let ashift = ctx.params.int("ashift", Some(9), Some(16))?.unwrap_or(12);
    let compression = ctx.params.str("compression").unwrap_or_else(|| "on".into());
    if add_storage {
        check_storage_allocate(ctx)?;
    }
    let paths = ctx.with(|c| {
        c.hardware()
            .node(&node)
            .check_zfs(&node, &name, &devices, &raidlevel, draid)
    })?;
    let draid = draid.map_or(String::new(), |(d, s)| {
        let mut out = String::new();
        if d > 0 {
            out.push_str(&format!(":{d}d"));
        }
        if s > 0 {
            out.push_str(&format!(":{s}s"));
        }
        out
    });
    start(
        ctx,
        &node,
        DiskOp::ZfsCreate {
            name,
            devices: paths,
            raidlevel,
            ashift: u8::try_from(ashift).unwrap_or(12),
            compression,
            draid,
            add_storage,
        },
    )
}

/// The flags of a removal; `cleanup-config` needs Datastore.Allocate.
fn cleanup_flags(ctx: &Ctx<'_>) -> Result<(bool, bool)> {
    let config = flag(ctx, "cleanup-config")?;
    let disks = flag(ctx, "cleanup-disks")?;
    if config {
        check_storage_allocate(ctx)?;
    }
    Ok((config, disks))
}

/// `DELETE /nodes/{node}/disks/zfs/{name}` (task `zfsremove`).
fn zfs_delete(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    let (cleanup_config, cleanup_disks) = cleanup_flags(ctx)?;
    start(
        ctx,
        &node,
        DiskOp::ZfsRemove {
            name,
            cleanup_config,
            cleanup_disks,
        },
    )
}

/// `GET /nodes/{node}/disks/lvm`.
fn lvm_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    Ok(ctx.with(|c| view::lvm(&c.hardware().node(&node))).into())
}

/// The device of a creation, checked.
fn device(ctx: &Ctx<'_>, node: &str) -> Result<String> {
    let device = ctx.param("device")?;
    ctx.with(|c| c.hardware().node(node).check_device(&device))
}

/// `POST /nodes/{node}/disks/lvm` (task `lvmcreate`).
fn lvm_create(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    let device = device(ctx, &node)?;
    let add_storage = flag(ctx, "add_storage")?;
    if add_storage {
        check_storage_allocate(ctx)?;
    }
    start(
        ctx,
        &node,
        DiskOp::LvmCreate {
            name,
            device,
            add_storage,
        },
    )
}

/// `DELETE /nodes/{node}/disks/lvm/{name}` (task `lvmremove`).
fn lvm_delete(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    let (cleanup_config, cleanup_disks) = cleanup_flags(ctx)?;
    start(
        ctx,
        &node,
        DiskOp::LvmRemove {
            name,
            cleanup_config,
            cleanup_disks,
        },
    )
}

/// `GET /nodes/{node}/disks/lvmthin`.
fn lvmthin_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    Ok(Value::Array(ctx.with(|c| view::thinpools(&c.hardware().node(&node), None))).into())
}

/// `POST /nodes/{node}/disks/lvmthin` (task `lvmthincreate`).
fn lvmthin_create(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    let device = device(ctx, &node)?;
    let add_storage = flag(ctx, "add_storage")?;
    if add_storage {
        check_storage_allocate(ctx)?;
    }
    start(
        ctx,
        &node,
        DiskOp::LvmThinCreate {
            name,
            device,
            add_storage,
        },
    )
}

/// `DELETE /nodes/{node}/disks/lvmthin/{name}` (task `lvmthinremove`).
fn lvmthin_delete(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let lv = ctx.param("name")?;
    let vg = ctx.param("volume-group")?;
    let (cleanup_config, cleanup_disks) = cleanup_flags(ctx)?;
    start(
        ctx,
        &node,
        DiskOp::LvmThinRemove {
            vg,
            lv,
            cleanup_config,
            cleanup_disks,
        },
    )
}

/// `GET /nodes/{node}/disks/directory`.
fn directory_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    Ok(Value::Array(ctx.with(|c| view::mounts(&c.hardware().node(&node)))).into())
}

/// `POST /nodes/{node}/disks/directory` (task `dircreate`).
fn directory_create(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    let device = device(ctx, &node)?;
    let filesystem = ctx
        .params
        .str("filesystem")
        .unwrap_or_else(|| "ext4".into());
    let add_storage = flag(ctx, "add_storage")?;
    let op = DiskOp::DirCreate {
        name: name.clone(),
        device,
        filesystem,
        add_storage,
    };
    if add_storage {
        check_storage_allocate(ctx)?;
        ctx.with(|c| check_disk_storage(&mut c.storage, &node, &op))?;
    }
    ctx.with(|c| c.hardware().node(&node).check_dir(&name))?;
    start(ctx, &node, op)
}

/// `DELETE /nodes/{node}/disks/directory/{name}` (task `dirremove`).
fn directory_delete(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    let (cleanup_config, cleanup_disks) = cleanup_flags(ctx)?;
    start(
        ctx,
        &node,
        DiskOp::DirRemove {
            name,
            cleanup_config,
            cleanup_disks,
        },
    )
}

/// `GET /nodes/{node}/capabilities/qemu/cpu`: the release's models, then
/// the custom ones the user may see.
fn cpu_index(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    let arch = ctx.params.str("arch").unwrap_or_else(|| "x86_64".into());
    let v = ctx.state.settings().version;
    let mut out: Vec<Value> = catalog::cpu_models(v, &arch)
        .iter()
        .map(view::cpu_model)
        .collect();
    out.extend(crate::api::qemu::cpu_models::custom_in_cpu_index(
        ctx, &arch,
    )?);
    Ok(Value::Array(out).into())
}

/// `GET /nodes/{node}/capabilities/qemu/cpu-flags` (9.x): the flags a
/// VM's `cpu` may set; on 9.2 with the nodes that support each under the
/// `accel` asked for.
fn cpu_flags_index(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    let arch = ctx.params.str("arch").unwrap_or_else(|| "x86_64".into());
    if ctx.state.settings().version == PveVersion::V9_2 {
        let accel = ctx.params.str("accel").unwrap_or_else(|| "kvm".into());
        let nodes = crate::api::qemu::cpu_models::member_names(ctx);
        return Ok(Value::Array(
            catalog::available_cpu_flags(&arch, &accel, true, &nodes)
                .iter()
                .map(crate::api::qemu::view::cpu_flag)
                .collect(),
        )
        .into());
    }
    Ok(Value::Array(
        catalog::cpu_flags(&arch)
            .iter()
            .map(view::cpu_flag)
            .collect(),
    )
    .into())
}

/// `GET /nodes/{node}/capabilities/qemu/machines`.
fn machine_types(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    if ctx.params.str("arch").is_some_and(|a| a == "aarch64") {
        return Err(Error::NotImplemented(format!(
            "Method 'GET /api2/json/nodes/{node}/capabilities/qemu/machines' is not emulated by fake-pve for arch 'aarch64'"
        )));
    }
    let v = ctx.state.settings().version;
    Ok(Value::Array(catalog::machines(v).iter().map(view::machine).collect()).into())
}

/// `GET /nodes/{node}/capabilities/qemu/migration` (9.x): the node's
/// QEMU can migrate the D-Bus VM state.
fn migration_capabilities(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    Ok(json!({ "has-dbus-vmstate": 1 }).into())
}

/// `GET /nodes/{node}/hardware/pci`.
fn pci_scan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let blacklist = ctx
        .params
        .str("pci-class-blacklist")
        .unwrap_or_else(|| "05;06;0b".into());
    let classes = crate::spec::formats::split_list(&blacklist);
    let verbose = ctx.params.bool("verbose")?.unwrap_or(true);
    Ok(
        Value::Array(ctx.with(|c| view::pci_scan(&c.hardware().node(&node), &classes, verbose)))
            .into(),
    )
}

/// `GET /nodes/{node}/hardware/pci/{pci-id-or-mapping}/mdev`.
fn mdevscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let id = ctx.param("pci-id-or-mapping")?;
    if !crate::model::node_hw::valid_pci_id(&id) {
        // A PCI mapping: the types of its single-device entries on this
        // node, each type once (the first device's), by type.
        return Ok(Value::Array(ctx.with(|c| {
            let hw = c.hardware().node(&node);
            let mut types: std::collections::BTreeMap<String, Value> =
                std::collections::BTreeMap::new();
            let entries = c
                .mappings()
                .find(crate::model::mapping::Kind::Pci, &id)
                .map(|m| m.on_node(&node))
                .unwrap_or_default();
            for e in entries {
                let Some(path) = e.path.filter(|p| !p.contains(';')) else {
                    continue;
                };
                for t in view::mdev_types(&hw, &path) {
                    let kind = t["type"].as_str().unwrap_or_default().to_string();
                    types.entry(kind).or_insert(t);
                }
            }
            types.into_values().collect()
        }))
        .into());
    }
    Ok(Value::Array(ctx.with(|c| view::mdev_types(&c.hardware().node(&node), &id))).into())
}

/// `GET /nodes/{node}/hardware/usb`.
fn usbscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    Ok(Value::Array(ctx.with(|c| view::usb_scan(&c.hardware().node(&node)))).into())
}

/// The updates a node knows of, as `apt/update` lists them.
fn update_list(ctx: &Ctx<'_>, node: &str) -> Vec<Value> {
    let v = ctx.state.settings().version;
    let installed = catalog::installed(v);
    let mut list: Vec<Value> = ctx.with(|c| {
        c.hardware()
            .node(node)
            .updates()
            .iter()
            .map(|u| {
                let known = installed.iter().find(|(n, ..)| *n == u.package);
                let (old, origin, section, title) = match known {
                    Some((_, ver, origin, section, title)) => {
                        (Some(*ver), *origin, *section, *title)
                    }
                    None => (None, "Proxmox", "admin", ""),
                };
                let title = u.title.as_deref().unwrap_or(title);
                view::package(&u.package, title, origin, section, &u.version, old)
            })
            .collect()
    });
    list.sort_by(|a, b| a["Package"].as_str().cmp(&b["Package"].as_str()));
    list
}

/// `GET /nodes/{node}/apt/update`.
fn list_updates(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    Ok(Value::Array(update_list(ctx, &node)).into())
}

/// `POST /nodes/{node}/apt/update` (task `aptupdate`): the package
/// lists are fetched again (nothing changes: the scenario's updates are
/// what the mirrors offer).
fn update_database(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let quiet = flag(ctx, "quiet")?;
    let notify = flag(ctx, "notify")?;
    let v = ctx.state.settings().version;
    if notify {
        // `pveupdate`'s daily run: the updates not notified before.
        let installed = catalog::installed(v);
        let now = ctx.now();
        ctx.with(|c| {
            let packages: Vec<(String, String, String)> = c
                .hardware()
                .node(&node)
                .updates()
                .iter()
                .map(|u| {
                    let old = installed
                        .iter()
                        .find(|(n, ..)| *n == u.package)
                        .map_or("", |(_, ver, ..)| *ver);
                    (u.package.clone(), old.to_string(), u.version.clone())
                })
                .collect();
            c.notify_updates(&node, &packages, now);
        });
    }
    let mut worker = crate::model::tasks::Worker::new("aptupdate", "");
    if !quiet {
        let (suite, enterprise) = if v.is_v9() {
            ("trixie", "pve-enterprise")
        } else {
            ("bookworm", "pve-enterprise")
        };
        worker = worker
            .log("starting apt-get update")
            .log(format!("Hit:1 http://deb.debian.org/debian {suite} InRelease"))
            .log(format!("Hit:2 http://deb.debian.org/debian {suite}-updates InRelease"))
            .log(format!("Hit:3 http://security.debian.org/debian-security {suite}-security InRelease"))
            .log(format!("Hit:4 https://enterprise.proxmox.com/debian/pve {suite} InRelease"))
            .log(format!("Get:5 https://enterprise.proxmox.com/debian/pve {suite}/{enterprise} amd64 Packages [512 kB]"))
            .log("Reading package lists...");
    }
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// `GET /nodes/{node}/apt/versions`.
fn versions(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    let v = ctx.state.settings().version;
    Ok(Value::Array(view::apt_versions(v)).into())
}

/// `GET /nodes/{node}/apt/changelog`: `apt-get changelog` of an
/// installed or updatable package; anything else is `apt-get`'s error
/// with its exit code, as PVE answers it.
fn changelog(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let name = ctx.param("name")?;
    let want = ctx.params.str("version");
    let v = ctx.state.settings().version;
    let installed = catalog::is_installed(v, &name);
    let update = ctx.with(|c| {
        c.hardware()
            .node(&node)
            .updates()
            .iter()
            .find(|u| u.package == name)
            .map(|u| u.version.clone())
    });
    let mut known: Vec<String> = installed.map(str::to_string).into_iter().collect();
    known.extend(update.clone());
    let version = match &want {
        Some(w) if !known.contains(w) => {
            return Ok(json!(format!(
                "E: Version '{w}' for '{name}' was not found\nRC: 100"
            ))
            .into());
        }
        Some(w) => w.clone(),
        None => match update.or(installed.map(str::to_string)) {
            Some(v) => v,
            None => {
                return Ok(json!(format!("E: Unable to locate package {name}\nRC: 100")).into());
            }
        },
    };
    let suite = if v.is_v9() { "trixie" } else { "bookworm" };
    Ok(json!(format!(
        "{name} ({version}) {suite}; urgency=medium\n\n  * update to {version}\n\n -- Proxmox Support Team <support@proxmox.com>  Mon, 17 Nov 2025 10:00:00 +0100\n\n"
    ))
    .into())
}

/// Whether `server` is an address (not a name to resolve).
fn is_address(server: &str) -> bool {
    server
        .trim_matches(['[', ']'])
        .parse::<std::net::IpAddr>()
        .is_ok()
}

/// `scan_nfs`: the exports of a declared server.
fn nfs_exports(ctx: &Ctx<'_>, node: &str, server: &str) -> Result<Vec<(String, String)>> {
    let exports = ctx.with(|c| c.hardware().node(node).scan().nfs.get(server).cloned());
    match exports {
        Some(list) => {
            let mut out: Vec<(String, String)> =
                list.into_iter().map(|e| (e.path, e.options)).collect();
            out.sort();
            Ok(out)
        }
        None if is_address(server) => Err(Error::failed(format!(
            "command '/sbin/showmount --no-headers --exports {server}' failed: exit code 1"
        ))),
        None => Err(Error::failed(format!(
            "unable to resolve address for server '{server}'"
        ))),
    }
}

/// `GET /nodes/{node}/scan/nfs`.
fn nfsscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let server = ctx.param("server")?;
    let list = nfs_exports(ctx, &node, &server)?
        .into_iter()
        .map(|(path, options)| json!({ "path": path, "options": options }))
        .collect();
    Ok(Value::Array(list).into())
}

/// `GET /nodes/{node}/scan/glusterfs` (8.x): the volumes are the
/// server's one-level NFS exports, as PVE asks showmount for them.
fn glusterfsscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let server = ctx.param("server")?;
    let list = nfs_exports(ctx, &node, &server)?
        .into_iter()
        .filter_map(|(path, _)| {
            let vol = path.strip_prefix('/')?;
            (!vol.is_empty() && !vol.contains(['/', ' '])).then(|| json!({ "volname": vol }))
        })
        .collect();
    Ok(Value::Array(list).into())
}

/// `GET /nodes/{node}/scan/cifs`.
fn cifsscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let server = ctx.param("server")?;
    let user = ctx.params.str("username");
    let password = ctx.params.str("password");
    let found = ctx.with(|c| c.hardware().node(&node).scan().cifs.get(&server).cloned());
    let Some(srv) = found else {
        if is_address(&server) {
            return Err(Error::failed(format!(
                "do_connect: Connection to {server} failed (Error NT_STATUS_HOST_UNREACHABLE)"
            )));
        }
        return Err(Error::failed(format!(
            "unable to resolve address for server '{server}'"
        )));
    };
    if let Some(want) = &srv.username
        && (user.as_ref() != Some(want) || password != srv.password)
    {
        return Err(Error::failed(
            "session setup failed: NT_STATUS_LOGON_FAILURE",
        ));
    }
    let mut shares: Vec<Value> = srv
        .shares
        .iter()
        .map(|s| json!({ "share": s.share, "description": s.description }))
        .collect();
    shares.sort_by(|a, b| a["share"].as_str().cmp(&b["share"].as_str()));
    Ok(Value::Array(shares).into())
}

/// `GET /nodes/{node}/scan/iscsi`: a portal that does not answer has no
/// targets (PVE skips it).
fn iscsiscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let portal = ctx.param("portal")?;
    let host = portal
        .rsplit_once(':')
        .filter(|(h, p)| !h.ends_with(':') && p.bytes().all(|b| b.is_ascii_digit()))
        .map_or(portal.as_str(), |(h, _)| h);
    let declared = ctx.with(|c| {
        let hw = c.hardware().node(&node);
        let scan = hw.scan();
        scan.iscsi
            .get(&portal)
            .or_else(|| scan.iscsi.get(host))
            .cloned()
    });
    let Some(targets) = declared else {
        if !is_address(host) {
            return Err(Error::failed(format!(
                "unable to parse/resolve portal address '{portal}'"
            )));
        }
        return Ok(json!([]).into());
    };
    let addr =
        if portal.contains(':') && !portal.starts_with('[') && portal.matches(':').count() == 1 {
            portal.clone()
        } else {
            format!("{host}:3260")
        };
    let mut targets = targets;
    targets.sort();
    Ok(Value::Array(
        targets
            .into_iter()
            .map(|t| json!({ "target": t, "portal": addr }))
            .collect(),
    )
    .into())
}

/// `GET /nodes/{node}/scan/pbs`.
fn pbsscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let server = ctx.param("server")?;
    let user = ctx.param("username")?;
    let password = ctx.param("password")?;
    let port = ctx
        .params
        .int("port", Some(1), Some(65535))?
        .unwrap_or(8007);
    let fingerprint = ctx.params.str("fingerprint");
    let found = ctx.with(|c| c.hardware().node(&node).scan().pbs.get(&server).cloned());
    let Some(srv) = found.filter(|_| port == 8007) else {
        return Err(Error::failed(format!(
            "error fetching datastores - 500 Can't connect to {server}:{port} (No route to host)"
        )));
    };
    if let (Some(want), Some(have)) = (&srv.fingerprint, &fingerprint)
        && !want.eq_ignore_ascii_case(have)
    {
        return Err(Error::failed(format!(
            "error fetching datastores - fingerprint '{have}' not verified, abort!"
        )));
    }
    if user != srv.username || password != srv.password {
        return Err(Error::failed(
            "error fetching datastores - 401 Unauthorized",
        ));
    }
    Ok(Value::Array(
        srv.datastores
            .iter()
            .map(|d| {
                let mut v = json!({ "store": d.store });
                if let Some(c) = &d.comment {
                    v["comment"] = json!(c);
                }
                v
            })
            .collect(),
    )
    .into())
}

/// `GET /nodes/{node}/scan/lvm`.
fn lvmscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    Ok(Value::Array(ctx.with(|c| view::scan_lvm(&c.hardware().node(&node)))).into())
}

/// `GET /nodes/{node}/scan/lvmthin`.
fn lvmthinscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vg = ctx.param("vg")?;
    Ok(Value::Array(ctx.with(|c| view::thinpools(&c.hardware().node(&node), Some(&vg)))).into())
}

/// `GET /nodes/{node}/scan/zfs`.
fn zfsscan(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    Ok(Value::Array(ctx.with(|c| view::scan_zfs(&c.hardware().node(&node)))).into())
}

/// The node's own certificate (`pve-ssl.pem`, made when first asked
/// for, naming its address and FQDN) and that FQDN.
///
/// # Errors
/// When the certificate cannot be made.
pub(crate) fn node_certificate(ctx: &Ctx<'_>, node: &str) -> Result<(crate::pki::Issued, String)> {
    let (ip, domain) = ctx.with(|c| {
        let ip = c
            .nodes()
            .get(node)
            .map(|n| n.ip.clone())
            .unwrap_or_default();
        let domain = c
            .node_services
            .sys(&c.nodes, c.version, node)
            .ok()
            .and_then(|s| s.search().map(str::to_string));
        (ip, domain)
    });
    let names = crate::pki::NodeNames {
        name: node,
        ip: &ip,
        domain: domain.as_deref(),
    };
    let cert = ctx
        .state
        .settings()
        .pki
        .node(&names, ctx.state.clock().now())
        .map_err(Error::failed)?;
    Ok((cert, names.fqdn()))
}

/// The `ssl_fingerprint` (`pve_fp`) `/nodes` and the join information
/// show for member `node`: a fingerprint the scenario gave it as it is,
/// else its `pve-ssl.pem`'s (the local node's is the served
/// certificate's already).
pub(crate) fn member_fingerprint(ctx: &Ctx<'_>, node: &str, shown: &str) -> String {
    if shown != crate::model::scenario::fake_fingerprint(node) {
        return shown.to_string();
    }
    node_certificate(ctx, node)
        .ok()
        .and_then(|(cert, _)| {
            crate::model::node_hw::certs::certificate_info(&cert.cert, crate::pki::NODE_FILE).ok()
        })
        .map_or_else(|| shown.to_string(), |info| info.fingerprint)
}

/// The cluster CA (`pve-root-ca.pem`).
///
/// # Errors
/// When it cannot be made.
pub(crate) fn cluster_ca(ctx: &Ctx<'_>) -> Result<crate::pki::Issued> {
    ctx.state
        .settings()
        .pki
        .ca(ctx.state.clock().now())
        .map_err(Error::failed)
}

/// `GET /nodes/{node}/certificates/info`: the cluster CA
/// (`pve-root-ca.pem`), the node's own certificate (`pve-ssl.pem`, made
/// when first asked for) and its custom one (`pveproxy-ssl.pem`: an
/// uploaded certificate, or on the local node the one fake-pve serves
/// when given `--cert`), in PVE's order.
fn certificates_info(ctx: &Ctx<'_>) -> Result<Reply> {
    use crate::model::node_hw::certs::certificate_info;
    let node = ctx.node()?;
    let (local, custom) = ctx.with(|c| {
        (
            c.nodes().local() == node,
            c.hardware().node(&node).custom_cert().cloned(),
        )
    });
    let settings = ctx.state.settings();
    let (own, _) = node_certificate(ctx, &node)?;
    let ca = cluster_ca(ctx)?;
    let mut out = vec![
        view::certificate(&certificate_info(&ca.cert, crate::pki::CA_FILE)?),
        view::certificate(&certificate_info(&own.cert, crate::pki::NODE_FILE)?),
    ];
    let proxy = match custom {
        Some(c) => Some(c.pem),
        None if local => settings.proxy_pem.clone(),
        None => None,
    };
    if let Some(pem) = proxy {
        out.push(view::certificate(&certificate_info(
            &pem,
            "pveproxy-ssl.pem",
        )?));
    }
    Ok(Value::Array(out).into())
}

/// `POST /nodes/{node}/certificates/custom`: kept as the node's
/// `pveproxy-ssl.pem`; with `restart` on the local node, served from then
/// on (pveproxy restarted), else from fake-pve's next start.
fn upload_custom_cert(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let certificates = ctx.param("certificates")?;
    let key = ctx.params.str("key");
    let force = flag(ctx, "force")?;
    let restart = flag(ctx, "restart")?;
    let (info, cert, local) = ctx.with(|c| {
        let local = c.nodes().local() == node;
        let hw = c.hardware_mut().node_mut(&node);
        let (cert, info) = crate::model::node_hw::certs::upload(
            hw.custom_cert(),
            &certificates,
            key.as_deref(),
            force,
        )?;
        hw.set_custom_cert(Some(cert.clone()));
        Ok::<_, Error>((info, cert, local))
    })?;
    if restart
        && local
        && let Some(served) = &ctx.state.settings().served
    {
        served
            .serve_pem(&cert.pem, &cert.key)
            .map_err(|e| Error::failed(format!("Setting certificate files failed - {e}")))?;
    }
    Ok(view::certificate(&info).into())
}

/// `DELETE /nodes/{node}/certificates/custom`: with `restart` on the
/// local node, the certificate it started with is served again.
fn remove_custom_cert(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let restart = flag(ctx, "restart")?;
    let local = ctx.with(|c| {
        c.hardware_mut().node_mut(&node).set_custom_cert(None);
        c.nodes().local() == node
    });
    if restart
        && local
        && let Some(served) = &ctx.state.settings().served
    {
        served.serve_first();
    }
    Ok(Value::Null.into())
}
