//! What `proxmox-file-restore` sees in a snapshot (proxmox-backup
//! `proxmox-file-restore`, `pbs-datastore` `catalog.rs`
//! `ArchiveEntry`, `proxmox-restore-daemon` `api.rs`).
//!
//! At `/` it lists the snapshot's archives: a container's
//! `root.pxar.didx` (a directory) and a VM's `drive-*.img.fidx` (virtual
//! entries, `v`). In a `pxar` archive the catalog's tree; in a drive the
//! restore VM's buckets (`part`), their components (the partitions, as
//! directories with their size) and the file systems inside. The trees
//! are made from what the guest was: `/etc/hostname` holds a container's
//! `hostname`, a VM's `name`.

use std::collections::BTreeMap;

use super::Snapshot;

/// An entry of a listing (`ArchiveEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The full path (base64 on the wire).
    pub path: String,
    /// The last component.
    pub text: String,
    /// `d`, `f`, `l`, `h`, `b`, `c`, `p`, `s` or `v`.
    pub kind: char,
    /// Whether it has no children.
    pub leaf: bool,
    /// A file's size, an archive's or a partition's.
    pub size: Option<u64>,
    /// A file's mtime.
    pub mtime: Option<i64>,
}

/// A node of a file tree.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir(BTreeMap<String, Node>),
    File(Vec<u8>),
    Link(String),
}

fn dir<const N: usize>(entries: [(&str, Node); N]) -> Node {
    Node::Dir(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn file(text: impl Into<String>) -> Node {
    Node::File(text.into().into_bytes())
}

fn empty() -> Node {
    Node::Dir(BTreeMap::new())
}

/// A Debian root file system for a guest called `name`.
fn debian_root(name: &str, with_dev: bool) -> Node {
    let hosts = format!(
        "127.0.0.1 localhost.localdomain localhost\n127.0.1.1 {name}\n\n# The following lines are desirable for IPv6 capable hosts\n::1     localhost ip6-localhost ip6-loopback\nff02::1 ip6-allnodes\nff02::2 ip6-allrouters\n"
    );
    let os_release = "PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"13\"\nVERSION=\"13 (trixie)\"\nVERSION_CODENAME=trixie\nID=debian\n";
    let etc = dir([
        ("hostname", file(format!("{name}\n"))),
        ("hosts", file(hosts)),
        (
            "fstab",
            file("# <file system> <mount point> <type> <options> <dump> <pass>\n"),
        ),
        ("os-release", Node::Link("../usr/lib/os-release".into())),
        ("resolv.conf", file("nameserver 127.0.0.53\n")),
        (
            "passwd",
            file(
                "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            ),
        ),
        (
            "network",
            dir([(
                "interfaces",
                file("auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet dhcp\n"),
            )]),
        ),
        ("apt", dir([("sources.list.d", empty())])),
    ]);
    let mut root = match dir([
        ("bin", Node::Link("usr/bin".into())),
        ("boot", empty()),
        ("etc", etc),
        ("home", empty()),
        ("lib", Node::Link("usr/lib".into())),
        ("media", empty()),
        ("mnt", empty()),
        ("opt", empty()),
        (
            "root",
            dir([
                (
                    ".bashrc",
                    file("# ~/.bashrc: executed by bash(1) for non-login shells.\n"),
                ),
                (
                    ".profile",
                    file("# ~/.profile: executed by Bourne-compatible login shells.\n"),
                ),
            ]),
        ),
        ("sbin", Node::Link("usr/sbin".into())),
        ("srv", empty()),
        ("tmp", empty()),
        (
            "usr",
            dir([
                ("bin", empty()),
                ("lib", dir([("os-release", file(os_release))])),
                ("sbin", empty()),
                ("share", empty()),
            ]),
        ),
        (
            "var",
            dir([("log", empty()), ("lib", empty()), ("tmp", empty())]),
        ),
    ]) {
        Node::Dir(m) => m,
        _ => BTreeMap::new(),
    };
    if with_dev {
        for d in ["dev", "proc", "run", "sys"] {
            root.insert(d.into(), empty());
        }
    } else {
        root.insert("lost+found".into(), empty());
    }
    Node::Dir(root)
}

/// The name `/etc/hostname` holds.
fn guest_name(snap: &Snapshot) -> String {
    let c = &snap.archive.config;
    let key = if snap.btype == "ct" {
        "hostname"
    } else {
        "name"
    };
    c.get(key).cloned().unwrap_or_else(|| {
        if snap.btype == "ct" {
            format!("CT{}", snap.id)
        } else {
            format!("VM{}", snap.id)
        }
    })
}

/// A drive's partitions: the first drive holds the system, others one
/// data partition. Each partition: its size and its file system.
fn partitions(snap: &Snapshot, archive: &str) -> Vec<(String, u64, Node)> {
    let size = snap
        .files
        .iter()
        .find(|f| f.filename == archive)
        .map_or(0, |f| f.size);
    let first = snap
        .files
        .iter()
        .find(|f| f.filename.ends_with(".img.fidx"))
        .is_some_and(|f| f.filename == archive);
    if first {
        let efi = 512 << 20;
        vec![
            (
                "1".into(),
                size.saturating_sub(efi + (1 << 20)),
                debian_root(&guest_name(snap), false),
            ),
            (
                "15".into(),
                efi.min(size),
                dir([("EFI", dir([("debian", empty())]))]),
            ),
        ]
    } else {
        vec![(
            "1".into(),
            size.saturating_sub(1 << 20),
            dir([("lost+found", empty())]),
        )]
    }
}

/// Why a path cannot be listed or extracted.
pub type PathError = String;

fn lookup<'a>(mut node: &'a Node, comps: &[&str], shown: &str) -> Result<&'a Node, PathError> {
    for c in comps.iter().filter(|c| !c.is_empty()) {
        node = match node {
            Node::Dir(m) => m
                .get(*c)
                .ok_or_else(|| format!("no such file or directory: '{shown}'"))?,
            _ => return Err(format!("'{shown}' is not a directory")),
        };
    }
    Ok(node)
}

fn entry_of(path: &str, name: &str, node: &Node, mtime: i64) -> Entry {
    let (kind, leaf, size, mt) = match node {
        Node::Dir(_) => ('d', false, None, None),
        Node::File(b) => ('f', true, Some(b.len() as u64), Some(mtime)),
        Node::Link(_) => ('l', true, None, None),
    };
    Entry {
        path: path.to_string(),
        text: name.to_string(),
        kind,
        leaf,
        size,
        mtime: mt,
    }
}

fn children(prefix: &str, node: &Node, mtime: i64) -> Vec<Entry> {
    match node {
        Node::Dir(m) => m
            .iter()
            .map(|(n, v)| entry_of(&format!("{prefix}/{n}"), n, v, mtime))
            .collect(),
        _ => Vec::new(),
    }
}

/// What a path names inside a snapshot.
enum Resolved {
    /// The list of archives.
    Archives,
    /// A container archive's tree (path without the archive).
    Pxar(String, Node),
    /// A drive: its bucket types, or a bucket's components.
    Buckets(String),
    Components(String),
    /// A path inside a drive's partition.
    Vm(String, Node),
}

fn split_path(path: &str) -> Result<(String, Vec<String>), PathError> {
    let trimmed = path.trim_start_matches('/');
    let mut parts = trimmed.split('/');
    let archive = parts.next().unwrap_or_default().to_string();
    let rest = parts
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    if !archive.ends_with(".pxar.didx") && !archive.ends_with(".img.fidx") {
        return Err(format!("'{archive}' is not supported for file-restore"));
    }
    Ok((archive, rest))
}

fn resolve(snap: &Snapshot, path: &str) -> Result<Resolved, PathError> {
    if path == "/" {
        return Ok(Resolved::Archives);
    }
    let (archive, rest) = split_path(path)?;
    if !snap.files.iter().any(|f| f.filename == archive) {
        return Err(format!("unable to find file '{archive}' in manifest"));
    }
    if archive.ends_with(".pxar.didx") {
        let root = debian_root(&guest_name(snap), true);
        let comps: Vec<&str> = rest.iter().map(String::as_str).collect();
        let node = lookup(&root, &comps, &rest.join("/"))?.clone();
        let mut p = archive;
        for c in &rest {
            p.push('/');
            p.push_str(c);
        }
        return Ok(Resolved::Pxar(p, node));
    }
    match rest.as_slice() {
        [] => Ok(Resolved::Buckets(archive)),
        [b] if b == "part" => Ok(Resolved::Components(archive)),
        [b, ..] if b != "part" => Err(format!("invalid bucket type '{b}'")),
        [_, part, inner @ ..] => {
            let parts = partitions(snap, &archive);
            let (_, _, fs) = parts
                .iter()
                .find(|(n, ..)| n == part)
                .ok_or_else(|| format!("could not find component '{part}' in bucket 'part'"))?;
            let comps: Vec<&str> = inner.iter().map(String::as_str).collect();
            let node = lookup(fs, &comps, &inner.join("/"))?.clone();
            Ok(Resolved::Vm(format!("{archive}/{}", rest.join("/")), node))
        }
        _ => Err(format!("invalid path '{path}'")),
    }
}

/// `proxmox-file-restore list`: the entries under `path` (`/`: the
/// archives).
///
/// # Errors
/// A path outside the snapshot's archives and trees.
pub fn list(snap: &Snapshot, path: &str) -> Result<Vec<Entry>, PathError> {
    let mtime = snap.time;
    Ok(match resolve(snap, path)? {
        Resolved::Archives => snap
            .files
            .iter()
            .filter(|f| f.filename.ends_with(".pxar.didx") || f.filename.ends_with(".img.fidx"))
            .map(|f| Entry {
                path: format!("/{}", f.filename),
                text: f.filename.clone(),
                kind: if f.filename.ends_with(".pxar.didx") {
                    'd'
                } else {
                    'v'
                },
                leaf: false,
                size: Some(f.size),
                mtime: None,
            })
            .collect(),
        Resolved::Pxar(p, node) => match node {
            Node::Dir(_) => children(&p, &node, mtime),
            _ => {
                let inner = p.split_once('/').map_or("", |(_, r)| r);
                return Err(format!("'{inner}' is not a directory"));
            }
        },
        Resolved::Buckets(a) => vec![Entry {
            path: format!("{a}/part"),
            text: "part".into(),
            kind: 'v',
            leaf: false,
            size: None,
            mtime: None,
        }],
        Resolved::Components(a) => partitions(snap, &a)
            .into_iter()
            .map(|(n, size, _)| Entry {
                path: format!("{a}/part/{n}"),
                text: n,
                kind: 'd',
                leaf: false,
                size: Some(size),
                mtime: None,
            })
            .collect(),
        Resolved::Vm(p, node) => match &node {
            Node::Dir(_) => children(&p, &node, mtime),
            _ => {
                let name = p.rsplit('/').next().unwrap_or_default().to_string();
                vec![entry_of(&p, &name, &node, mtime)]
            }
        },
    })
}

/// What `extract` streams: a file's bytes, or a directory as a zip
/// (`tar`: a `tar.zst`).
///
/// # Errors
/// A path that names no file or directory of a guest.
pub fn extract(snap: &Snapshot, path: &str, tar: bool) -> Result<Vec<u8>, PathError> {
    let (name, node) = match resolve(snap, path)? {
        Resolved::Pxar(p, n) | Resolved::Vm(p, n) => (p, n),
        _ => return Err(format!("cannot extract '{path}'")),
    };
    let base = name.rsplit('/').next().unwrap_or_default().to_string();
    Ok(match &node {
        Node::File(b) => b.clone(),
        Node::Link(t) => t.clone().into_bytes(),
        Node::Dir(_) => {
            let mut flat = Vec::new();
            flatten(&base, &node, &mut flat);
            if tar {
                zstd_raw(&tar_archive(&flat, snap.time))
            } else {
                zip_archive(&flat, snap.time)
            }
        }
    })
}

/// A tree's entries in order: (path, `None` for a directory, else the
/// bytes).
fn flatten(prefix: &str, node: &Node, out: &mut Vec<(String, Option<Vec<u8>>)>) {
    match node {
        Node::Dir(m) => {
            out.push((format!("{prefix}/"), None));
            for (n, v) in m {
                flatten(&format!("{prefix}/{n}"), v, out);
            }
        }
        Node::File(b) => out.push((prefix.to_string(), Some(b.clone()))),
        Node::Link(_) => {}
    }
}

/// MS-DOS time and date of an epoch time.
fn dos_time(t: i64) -> (u16, u16) {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(t);
    let time = (h << 11) | (mi << 5) | (s / 2);
    let year = u32::try_from(y.max(1980) - 1980).unwrap_or(0);
    let date = (year << 9) | (mo << 5) | d;
    (
        u16::try_from(time).unwrap_or(0),
        u16::try_from(date).unwrap_or(0),
    )
}

/// A zip of stored (uncompressed) entries.
fn zip_archive(entries: &[(String, Option<Vec<u8>>)], mtime: i64) -> Vec<u8> {
    let (time, date) = dos_time(mtime);
    let mut out = Vec::new();
    let mut central = Vec::new();
    let mut count: u16 = 0;
    for (name, data) in entries {
        let bytes = data.as_deref().unwrap_or_default();
        let crc = crc32fast::hash(bytes);
        let size = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        let offset = u32::try_from(out.len()).unwrap_or(u32::MAX);
        let name_len = u16::try_from(name.len()).unwrap_or(u16::MAX);
        let header = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend_from_slice(&sig.to_le_bytes());
            if central {
                h.extend_from_slice(&0x031e_u16.to_le_bytes());
            }
            h.extend_from_slice(&20_u16.to_le_bytes());
            h.extend_from_slice(&0_u16.to_le_bytes());
            h.extend_from_slice(&0_u16.to_le_bytes());
            h.extend_from_slice(&time.to_le_bytes());
            h.extend_from_slice(&date.to_le_bytes());
            h.extend_from_slice(&crc.to_le_bytes());
            h.extend_from_slice(&size.to_le_bytes());
            h.extend_from_slice(&size.to_le_bytes());
            h.extend_from_slice(&name_len.to_le_bytes());
            h.extend_from_slice(&0_u16.to_le_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(bytes);
        let mut c = header(0x0201_4b50, true);
        let mode: u32 = if data.is_some() { 0o100_644 } else { 0o040_755 };
        c.extend_from_slice(&0_u16.to_le_bytes());
        c.extend_from_slice(&0_u16.to_le_bytes());
        c.extend_from_slice(&0_u16.to_le_bytes());
        c.extend_from_slice(&(mode << 16).to_le_bytes());
        c.extend_from_slice(&offset.to_le_bytes());
        c.extend_from_slice(name.as_bytes());
        central.extend(c);
        count = count.saturating_add(1);
    }
    let cd_offset = u32::try_from(out.len()).unwrap_or(u32::MAX);
    let cd_size = u32::try_from(central.len()).unwrap_or(u32::MAX);
    out.extend(central);
    out.extend_from_slice(&0x0605_4b50_u32.to_le_bytes());
    out.extend_from_slice(&0_u16.to_le_bytes());
    out.extend_from_slice(&0_u16.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0_u16.to_le_bytes());
    out
}

/// A ustar archive of files (`Some` data) and directories (`None`).
pub(crate) fn tar_archive(entries: &[(String, Option<Vec<u8>>)], mtime: i64) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in entries {
        let mut h = [0_u8; 512];
        let nb = name.as_bytes();
        h[..nb.len().min(100)].copy_from_slice(&nb[..nb.len().min(100)]);
        let octal = |h: &mut [u8; 512], at: usize, len: usize, v: u64| {
            let s = format!("{v:0w$o}", w = len - 1);
            h[at..at + len - 1].copy_from_slice(&s.as_bytes()[..len - 1]);
        };
        let size = data.as_ref().map_or(0, Vec::len) as u64;
        octal(&mut h, 100, 8, if data.is_some() { 0o644 } else { 0o755 });
        octal(&mut h, 108, 8, 0);
        octal(&mut h, 116, 8, 0);
        octal(&mut h, 124, 12, size);
        octal(&mut h, 136, 12, u64::try_from(mtime).unwrap_or(0));
        h[148..156].copy_from_slice(b"        ");
        h[156] = if data.is_some() { b'0' } else { b'5' };
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        let s = format!("{sum:06o}\0 ");
        h[148..156].copy_from_slice(s.as_bytes());
        out.extend_from_slice(&h);
        if let Some(d) = data {
            out.extend_from_slice(d);
            out.resize(out.len().div_ceil(512) * 512, 0);
        }
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// A zstd frame of raw (stored) blocks.
pub(crate) fn zstd_raw(data: &[u8]) -> Vec<u8> {
    const MAX_BLOCK: usize = 128 << 10;
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd];
    // Single segment, an 8-byte content size.
    out.push(0b1110_0000);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    let mut chunks: Vec<&[u8]> = data.chunks(MAX_BLOCK).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    let n = chunks.len();
    for (i, c) in chunks.into_iter().enumerate() {
        let last = u32::from(i + 1 == n);
        let header = (u32::try_from(c.len()).unwrap_or(0) << 3) | last;
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(c);
    }
    out
}
