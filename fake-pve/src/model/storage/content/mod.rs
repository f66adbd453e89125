//! What a storage holds besides VM images: ISO images, container
//! templates, backups, snippets and import sources, with their
//! attributes (notes, protection), and the volume calls of
//! `/nodes/{node}/storage/{storage}/content` and `.../download-url`
//! (pve-storage `API2/Storage/Content.pm`, `API2/Storage/Status.pm`,
//! `Storage.pm`, `Storage/Plugin.pm`, `Storage/DirPlugin.pm`; pve-common
//! `Tools.pm::download_file_from_url`; pve-manager `Nodes.pm`
//! `query_url_metadata`).
//!
//! The emulator has no network: the URLs it "downloads" come from a table
//! (a scenario's `downloads:`, `/_fake/downloads`) that says how large
//! each file is, its checksum, and which downloads fail.

use serde::{Deserialize, Serialize};

use super::Storages;
use super::{Volume, parse_volid, path_based};
use crate::model::cluster::Storage;
use crate::model::tasks::{TaskEffect, TaskFailure, VolumeChange, Worker};
use crate::model::{Error, Result};

mod transfer;

/// The content types in the order `volume_list` walks them.
pub const CONTENT_TYPES: [&str; 7] = [
    "rootdir", "images", "vztmpl", "iso", "backup", "snippets", "import",
];

/// The size of a downloaded file whose URL the table does not know.
pub const DEFAULT_DOWNLOAD_SIZE: u64 = 512 << 20;

/// What an upload left behind: its size and digests, as the handler sees
/// the spooled file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UploadInfo {
    /// The spool file name PVE would use.
    pub tmpfilename: String,
    /// Bytes of the file part.
    pub size: u64,
    /// Hex digests by PVE's `checksum-algorithm` names.
    pub digests: std::collections::BTreeMap<String, String>,
    /// What the file holds if it is a tar archive (an OVA): its
    /// manifest and members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tar: Option<crate::model::storage::import::OvaContent>,
}

/// Attributes of a volume besides its size (`notes`, `protected`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeAttrs {
    /// The notes file of a backup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Whether a `.protected` file exists.
    #[serde(default)]
    pub protected: bool,
    /// The image config of an OCI archive pulled from a registry (what
    /// `archive_is_oci_format` finds in the tar and
    /// `restore_oci_archive` reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<crate::model::oci::ImageConfig>,
    /// What an OVA archive holds (its manifest and members).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ova: Option<crate::model::storage::import::OvaContent>,
}

/// A URL the emulated network knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownUrl {
    /// The URL, exactly as clients send it.
    pub url: String,
    /// Size in bytes (the `Content-Length`).
    #[serde(default)]
    pub size: Option<u64>,
    /// The file's digest with `checksum-algorithm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// `md5`, `sha1`, `sha224`, `sha256`, `sha384` or `sha512`.
    #[serde(
        default,
        rename = "checksum-algorithm",
        skip_serializing_if = "Option::is_none"
    )]
    pub checksum_algorithm: Option<String>,
    /// The name from `Content-Disposition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The `Content-Type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mimetype: Option<String>,
    /// The server's certificate is not trusted: downloads fail unless
    /// `verify-certificates=0`.
    #[serde(default)]
    pub insecure: bool,
    /// The error a download of it ends with (`download failed: ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail: Option<String>,
    /// For an OVA archive: the text of the OVF manifest inside (the
    /// archive then holds it and the files it references).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ovf: Option<String>,
}

/// A row of `GET /nodes/{node}/storage/{storage}/content`: a VM or
/// container image, or a file (ISO, template, backup, snippet...), each
/// with its keys in PVE's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ContentItem {
    /// An image (`images` or `rootdir`).
    Image(ImageItem),
    /// A file of a path-based storage.
    File(FileItem),
    /// A snapshot on a Proxmox Backup Server.
    Pbs(crate::model::pbs::content::PbsItem),
}

impl ContentItem {
    /// The volume ID.
    pub fn volid(&self) -> &str {
        match self {
            Self::Image(i) => &i.volid,
            Self::File(f) => &f.volid,
            Self::Pbs(p) => &p.volid,
        }
    }

    /// The content type.
    pub fn content(&self) -> &'static str {
        match self {
            Self::Image(i) => i.content,
            Self::File(f) => f.content,
            Self::Pbs(_) => "backup",
        }
    }
}

/// An image in a content listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageItem {
    /// The volume ID.
    pub volid: String,
    /// `images`, or `rootdir` for a container's.
    pub content: &'static str,
    /// `raw`, `qcow2`, `subvol`...
    pub format: String,
    /// Bytes; none where only an upper bound is known (9.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// 9.2: instead of `size`, the logical volume's size of a qcow2
    /// volume on LVM that is not active (`list_images` does not activate
    /// it to read the image's size).
    #[serde(rename = "approximate-size", skip_serializing_if = "Option::is_none")]
    pub approximate_size: Option<u64>,
    /// The owner.
    pub vmid: u32,
    /// Creation time, epoch seconds.
    pub ctime: i64,
    /// 0 on path-based storages (no usage is computed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<u64>,
}

/// A file in a content listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileItem {
    /// The volume ID.
    pub volid: String,
    /// `iso`, `vztmpl`, `backup`, `snippets`, `import`.
    pub content: &'static str,
    /// The file's format (`iso`, `tgz`, `vma.zst`...).
    pub format: String,
    /// Bytes.
    pub size: u64,
    /// Creation time (a backup's from its name), epoch seconds.
    pub ctime: i64,
    /// A backup's guest type (`qemu`, `lxc`, `unknown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtype: Option<String>,
    /// A backup's guest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vmid: Option<u32>,
    /// A backup's notes, first line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// 1 for a protected backup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protected: Option<u8>,
}

/// `GET .../content/{volume}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VolumeInfo {
    /// The path on the node (or the device).
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Bytes used (0 for images).
    pub used: u64,
    /// The format.
    pub format: String,
    /// A backup's notes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// A backup's protection, 0 or 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protected: Option<u8>,
}

/// `GET /nodes/{node}/query-url-metadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UrlMetadata {
    /// The file name the server gives, or the URL's last part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Bytes, where the server says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The MIME type, without parameters.
    pub mimetype: String,
}

/// The content type of a volume name (`iso/x.iso` is `iso`,
/// `100/vm-100-disk-0.qcow2` and `vm-100-disk-0` are `images`).
pub fn vtype(name: &str) -> &'static str {
    match name.split_once('/').map(|(d, _)| d) {
        Some("iso") => "iso",
        Some("vztmpl") => "vztmpl",
        Some("backup") => "backup",
        Some("snippets") => "snippets",
        Some("import") => "import",
        _ => "images",
    }
}

/// The file extension rules of PVE (`$ISO_EXT_RE_0`, `$VZTMPL_EXT_RE_1`,
/// `$BACKUP_EXT_RE_2`, `$IMPORT_EXT_RE_1`): the format of a file name of
/// content type `ct`, or `None` if the name does not fit.
pub fn file_format(ct: &str, file: &str) -> Option<String> {
    let lower = file.to_ascii_lowercase();
    match ct {
        "iso" => (lower.ends_with(".iso") || lower.ends_with(".img")).then(|| "iso".into()),
        "vztmpl" => {
            if lower.ends_with(".tar") {
                return Some("tar".into());
            }
            ["gz", "xz", "zst", "bz2"]
                .iter()
                .find(|c| lower.ends_with(&format!(".tar.{c}")))
                .map(|c| format!("t{c}"))
        }
        "backup" => {
            if file.ends_with(".tgz") {
                return Some("tgz".into());
            }
            for base in ["tar", "vma"] {
                if file.ends_with(&format!(".{base}")) {
                    return Some(base.into());
                }
                for c in ["gz", "lzo", "zst", "bz2"] {
                    if file.ends_with(&format!(".{base}.{c}")) {
                        return Some(format!("{base}.{c}"));
                    }
                }
            }
            None
        }
        "snippets" => Some("snippet".into()),
        "import" => {
            let safe = file
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.+=_".contains(&b));
            let ext = file.rsplit_once('.').map(|(_, e)| e)?;
            (safe && ["ova", "ovf", "qcow2", "raw", "vmdk"].contains(&ext)).then(|| ext.into())
        }
        _ => None,
    }
}

/// `archive_info` of a backup name: subtype, owner and time from a
/// standard `vzdump-<type>-<vmid>-YYYY_MM_DD-hh_mm_ss` name.
pub(crate) fn backup_info(file: &str) -> (Option<String>, Option<u32>, Option<i64>) {
    let Some(rest) = file.strip_prefix("vzdump-") else {
        return (None, None, None);
    };
    let Some((kind, rest)) = rest.split_once('-') else {
        return (None, None, None);
    };
    if !["lxc", "openvz", "qemu"].contains(&kind) {
        return (None, None, None);
    }
    let mut parts = rest.splitn(3, '-');
    let vmid = parts
        .next()
        .filter(|v| (3..=9).contains(&v.len()) && !v.starts_with('0'))
        .and_then(|v| v.parse::<u32>().ok());
    let ctime = parts.next().zip(parts.next()).and_then(|(d, t)| {
        let t = t.get(..8)?;
        let num = |s: &str| s.parse::<i64>().ok();
        let d: Vec<i64> = d.split('_').filter_map(num).collect();
        let t: Vec<i64> = t.split('_').filter_map(num).collect();
        let ([y, mo, da], [h, mi, s]) = (d.as_slice(), t.as_slice()) else {
            return None;
        };
        Some(days_from_civil(*y, *mo, *da) * 86_400 + h * 3600 + mi * 60 + s)
    });
    (Some(kind.to_string()), vmid, ctime)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The owner of a volume as `parse_volname` finds it.
pub fn owner(vol: &Volume) -> Option<u32> {
    match vtype(&vol.name) {
        "images" => Some(vol.vmid),
        "backup" => vol.name.split_once('/').and_then(|(_, f)| backup_info(f).1),
        _ => None,
    }
}

/// The Perl class of a storage type, as PVE names it in messages.
fn plugin_class(kind: &str) -> String {
    let name = match kind {
        "dir" => "DirPlugin",
        "nfs" => "NFSPlugin",
        "cifs" => "CIFSPlugin",
        "cephfs" => "CephFSPlugin",
        "btrfs" => "BTRFSPlugin",
        "lvm" => "LVMPlugin",
        "lvmthin" => "LvmThinPlugin",
        "zfspool" => "ZFSPoolPlugin",
        "zfs" => "ZFSPlugin",
        "rbd" => "RBDPlugin",
        "iscsi" => "ISCSIPlugin",
        "pbs" => "PBSPlugin",
        _ => "Plugin",
    };
    format!("PVE::Storage::{name}")
}

/// The subdirectory of a content type under a directory storage's path.
pub fn subdir(ct: &str) -> &'static str {
    match ct {
        "iso" => "template/iso",
        "vztmpl" => "template/cache",
        "backup" => "dump",
        "snippets" => "snippets",
        "import" => "import",
        "rootdir" => "private",
        _ => "images",
    }
}

fn storage_path(s: &Storage) -> &str {
    s.options.get("path").map_or("/var/lib/vz", String::as_str)
}

/// The path of a volume (`PVE::Storage::path`).
pub fn volume_path(s: &Storage, name: &str) -> String {
    let ct = vtype(name);
    if path_based(&s.kind) {
        let file = if ct == "images" {
            name
        } else {
            name.split_once('/').map_or(name, |(_, f)| f)
        };
        return format!("{}/{}/{file}", storage_path(s), subdir(ct));
    }
    match s.kind.as_str() {
        "zfspool" => format!(
            "/dev/zvol/{}/{name}",
            s.options.get("pool").map_or("rpool/data", String::as_str)
        ),
        "rbd" => format!(
            "rbd:{}/{name}",
            s.options.get("pool").map_or("rbd", String::as_str)
        ),
        _ => format!(
            "/dev/{}/{name}",
            s.options.get("vgname").map_or("pve", String::as_str)
        ),
    }
}

/// `real_volume_id` of `Content.pm`: a volume name alone or a full
/// volume ID of the same storage.
///
/// # Errors
/// 400 `errors.volume`: `storage ID mismatch (a != b)`, `unable to parse
/// volume ID 'x'`.
pub fn real_volume_id(sid: &str, volume: &str) -> Result<(String, String)> {
    if volume.contains(':') {
        let Some((s, n)) = parse_volid(volume) else {
            return Err(Error::invalid(
                "volume",
                format!("unable to parse volume ID '{volume}'\n"),
            ));
        };
        if s != sid {
            return Err(Error::invalid(
                "volume",
                format!("storage ID mismatch ({s} != {sid})\n"),
            ));
        }
        return Ok((s.to_string(), n.to_string()));
    }
    Ok((sid.to_string(), volume.to_string()))
}

fn attr_key(s: &Storage, node: &str, name: &str) -> String {
    let scope = if s.shared { "" } else { node };
    format!("{scope}|{}:{name}", s.storage)
}

/// What the `upload` task needs.
#[derive(Debug, Clone)]
pub struct UploadRequest {
    /// The node.
    pub node: String,
    /// The storage.
    pub storage: String,
    /// `iso`, `vztmpl` or `import`.
    pub content: String,
    /// The file name as sent.
    pub filename: String,
    /// The spool file.
    pub tmpfilename: String,
    /// Bytes of the file.
    pub size: u64,
    /// What the file holds if it is a tar archive.
    pub ova: Option<crate::model::storage::import::OvaContent>,
    /// The expected and the actual digest, when a checksum was sent.
    pub checksum: Option<(String, String)>,
    /// Creation time of the volume.
    pub now: i64,
}

/// What `download-url` asks for.
#[derive(Debug, Clone)]
pub struct DownloadRequest {
    /// The node.
    pub node: String,
    /// The storage.
    pub storage: String,
    /// `iso`, `vztmpl` or `import`.
    pub content: String,
    /// The file name as given.
    pub filename: String,
    /// The URL.
    pub url: String,
    /// The expected digest.
    pub checksum: Option<String>,
    /// Its algorithm.
    pub checksum_algorithm: Option<String>,
    /// `gz`, `lzo`, `zst` or `bz2`.
    pub compression: Option<String>,
    /// Whether wget checks the certificate.
    pub verify_certificates: bool,
    /// Process id the worker will have (for the temporary file name).
    pub pid: u32,
    /// Now, epoch seconds.
    pub now: i64,
}

impl Storages {
    /// The attributes of a volume.
    pub fn volume_attrs(&self, s: &Storage, node: &str, name: &str) -> VolumeAttrs {
        self.volumes()
            .attrs
            .get(&attr_key(s, node, name))
            .cloned()
            .unwrap_or_default()
    }

    fn set_volume_attrs(&mut self, s: &Storage, node: &str, name: &str, a: VolumeAttrs) {
        let key = attr_key(s, node, name);
        if a == VolumeAttrs::default() {
            self.volumes_mut().attrs.remove(&key);
        } else {
            self.volumes_mut().attrs.insert(key, a);
        }
    }

    /// Records a file volume (an ISO, a template, a backup...) and drops
    /// attributes a former volume of that name left.
    pub fn put_file_volume(&mut self, s: &Storage, node: &str, vol: Volume) {
        self.set_volume_attrs(s, node, &vol.name.clone(), VolumeAttrs::default());
        self.volumes_mut().insert(s, node, vol);
    }

    /// `GET /nodes/{node}/storage/{storage}/content`, as `volume_list`
    /// builds it: only the content types the storage is configured for,
    /// sorted case-insensitively by volid.
    ///
    /// # Errors
    /// `storage 'x' does not exist`, `... is disabled`, `... is not
    /// available on node 'n'`.
    pub fn content_list(
        &self,
        sid: &str,
        node: &str,
        content: Option<&str>,
        vmid: Option<u32>,
        is_ct: &dyn Fn(u32) -> bool,
    ) -> Result<Vec<ContentItem>> {
        let s = self.usable_storage(sid, node)?;
        let wanted: Vec<&str> = CONTENT_TYPES
            .iter()
            .copied()
            .filter(|ct| content.is_none_or(|c| c == *ct))
            .filter(|ct| s.content.iter().any(|x| x == ct))
            .collect();
        let mut items = Vec::new();
        if wanted.contains(&"images") || wanted.contains(&"rootdir") {
            // Images as the image listing shows them: a container's are
            // `rootdir`, listed only where that content is wanted.
            items.extend(
                self.image_content(sid, node, vmid, is_ct)?
                    .into_iter()
                    .filter(|v| parse_volid(v.volid()).is_some_and(|(_, n)| vtype(n) == "images"))
                    .filter(|v| wanted.contains(&v.content())),
            );
        }
        if path_based(&s.kind) {
            for vol in self.volumes().on(s, node) {
                let ct = vtype(&vol.name);
                if ct == "images" || !wanted.contains(&ct) {
                    continue;
                }
                if vmid.is_some() && matches!(ct, "iso" | "vztmpl") {
                    continue;
                }
                let file = vol.name.split_once('/').map_or("", |(_, f)| f);
                let mut item = FileItem {
                    volid: vol.volid(),
                    content: ct,
                    format: vol.format.clone(),
                    size: vol.size,
                    ctime: vol.ctime,
                    subtype: None,
                    vmid: None,
                    notes: None,
                    protected: None,
                };
                if ct == "backup" {
                    if let Some(id) = vmid
                        && !file.contains(&format!("-{id}-"))
                    {
                        continue;
                    }
                    let (kind, owner, ctime) = backup_info(file);
                    item.subtype = Some(kind.unwrap_or_else(|| "unknown".into()));
                    if let Some(t) = ctime {
                        item.ctime = t;
                    }
                    item.vmid = vmid.or(owner);
                    let a = self.volume_attrs(s, node, &vol.name);
                    item.notes = a
                        .notes
                        .filter(|n| !n.is_empty())
                        .map(|n| n.lines().next().unwrap_or_default().to_string());
                    item.protected = a.protected.then_some(1);
                }
                items.push(ContentItem::File(item));
            }
        }
        items.sort_by_key(|v| v.volid().to_lowercase());
        Ok(items)
    }

    /// `GET .../content/{volume}`: `path`, `size`, `used`, `format`, and
    /// for backups `notes` and `protected`.
    ///
    /// # Errors
    /// The storage checks; `volume_size_info on 'x' failed - no format`.
    pub fn volume_info(&self, sid: &str, node: &str, name: &str) -> Result<VolumeInfo> {
        let s = self.usable_storage(sid, node)?;
        let Some(vol) = self.volumes().get(s, node, name) else {
            return Err(Error::failed(format!(
                "volume_size_info on '{sid}:{name}' failed - no format"
            )));
        };
        let ct = vtype(name);
        let mut v = VolumeInfo {
            path: volume_path(s, name),
            size: vol.size,
            used: if ct == "images" { 0 } else { vol.size },
            format: vol.format.clone(),
            notes: None,
            protected: None,
        };
        if path_based(&s.kind) && ct == "backup" {
            let a = self.volume_attrs(s, node, name);
            v.notes = Some(a.notes.unwrap_or_default());
            v.protected = Some(u8::from(a.protected));
        }
        Ok(v)
    }

    /// `PUT .../content/{volume}`: `notes`, then `protected`, as the
    /// storage plugin allows them.
    ///
    /// # Errors
    /// `only backups can have notes`, `only backups support attribute
    /// 'protected'`, `volume notes are not supported for <class> ...`,
    /// `attribute 'protected' is not supported for storage type 'x'`.
    pub fn update_volume_attrs(
        &mut self,
        sid: &str,
        node: &str,
        name: &str,
        notes: Option<String>,
        protected: Option<bool>,
    ) -> Result<()> {
        let s = self.usable_storage(sid, node)?.clone();
        if self.volumes().get(&s, node, name).is_none() {
            return Err(Error::failed(format!(
                "volume_size_info on '{sid}:{name}' failed - no format"
            )));
        }
        let backup = vtype(name) == "backup";
        let mut a = self.volume_attrs(&s, node, name);
        if let Some(n) = notes {
            if !path_based(&s.kind) {
                return Err(Error::failed(format!(
                    "volume notes are not supported for {} at /usr/share/perl5/PVE/Storage/Plugin.pm line 1300.",
                    plugin_class(&s.kind)
                )));
            }
            if !backup {
                return Err(Error::failed("only backups can have notes"));
            }
            a.notes = (!n.is_empty()).then_some(n);
            self.set_volume_attrs(&s, node, name, a.clone());
        }
        if let Some(p) = protected {
            if !path_based(&s.kind) {
                return Err(Error::failed(format!(
                    "attribute 'protected' is not supported for storage type '{}'",
                    s.kind
                )));
            }
            if !backup {
                return Err(Error::failed("only backups support attribute 'protected'"));
            }
            a.protected = p;
            self.set_volume_attrs(&s, node, name, a);
        }
        Ok(())
    }

    /// The task id of `imgdel` for a volume (`<owner>@<sid>` or `<sid>`)
    /// and what the removal would log or fail with.
    ///
    /// # Errors
    /// The storage checks.
    pub fn plan_volume_delete(
        &self,
        sid: &str,
        node: &str,
        name: &str,
    ) -> Result<(String, std::result::Result<Vec<String>, TaskFailure>)> {
        let s = self.usable_storage(sid, node)?;
        let vol = self.volumes().get(s, node, name);
        let owner = match vol {
            Some(v) => owner(v),
            None if vtype(name) == "images" => {
                name.split(['/', '-']).find_map(|p| p.parse::<u32>().ok())
            }
            None => None,
        };
        let id = owner.map_or_else(|| sid.to_string(), |o| format!("{o}@{sid}"));
        let volid = format!("{sid}:{name}");
        let Some(_) = vol else {
            if path_based(&s.kind) {
                return Ok((
                    id,
                    Ok(vec![
                        format!("disk image '{}' does not exist", volume_path(s, name)),
                        format!("Removed volume '{volid}'"),
                    ]),
                ));
            }
            let vg = s.options.get("vgname").map_or("pve", String::as_str);
            return Ok((
                id,
                Err(TaskFailure(format!(
                    "lvremove '{vg}/{name}' error:   Failed to find logical volume \"{vg}/{name}\""
                ))),
            ));
        };
        if self.volume_attrs(s, node, name).protected {
            let msg = format!("cannot remove protected volume '{name}' on '{sid}'");
            return Ok((id, Err(TaskFailure(msg))));
        }
        let mut lines = match s.kind.as_str() {
            "lvm" | "lvmthin" => vec![format!("  Logical volume \"{name}\" successfully removed.")],
            _ => Vec::new(),
        };
        lines.push(format!("Removed volume '{volid}'"));
        Ok((id, Ok(lines)))
    }

    /// Applies what a finished storage task does. A storage removed while
    /// the task ran takes the change with it.
    pub fn apply_volume_change(&mut self, node: &str, change: VolumeChange) {
        match change {
            VolumeChange::Put { volume, oci, ova } => {
                let s = self.cfg().iter().find(|s| s.storage == volume.storage);
                if let Some(s) = s.cloned() {
                    let name = volume.name.clone();
                    self.put_file_volume(&s, node, volume);
                    if oci.is_some() || ova.is_some() {
                        let attrs = VolumeAttrs {
                            oci: oci.map(|c| *c),
                            ova: ova.map(|c| *c),
                            ..VolumeAttrs::default()
                        };
                        self.set_volume_attrs(&s, node, &name, attrs);
                    }
                }
            }
            VolumeChange::Drop { storage, name } => {
                self.drop_volume(&storage, node, &name);
            }
        }
    }

    /// Removes a volume and its attributes.
    pub fn drop_volume(&mut self, sid: &str, node: &str, name: &str) {
        let Some(s) = self.cfg().iter().find(|s| s.storage == sid).cloned() else {
            return;
        };
        self.volumes_mut().remove(&s, node, name);
        self.set_volume_attrs(&s, node, name, VolumeAttrs::default());
    }

    /// `POST .../content`: `vdisk_alloc` with a given name; `size` in KiB.
    ///
    /// # Errors
    /// The storage checks and PVE's name rules and capacity refusals.
    #[allow(clippy::too_many_arguments)]
    pub fn alloc_named_volume(
        &mut self,
        sid: &str,
        node: &str,
        vmid: u32,
        name: &str,
        format: Option<&str>,
        size_kib: u64,
        now: i64,
    ) -> Result<String> {
        let s = self.usable_storage(sid, node)?.clone();
        let size = size_kib.saturating_mul(1024);
        let free = s.total.saturating_sub(self.used(&s, node));
        let is_path = path_based(&s.kind);
        let fmt = match format {
            Some(f) => f.to_string(),
            None if is_path => s
                .options
                .get("format")
                .cloned()
                .unwrap_or_else(|| "raw".into()),
            None => "raw".into(),
        };
        let volname = if is_path {
            let parsed = parse_name_dir(name)?;
            if parsed != fmt {
                return Err(Error::failed(format!(
                    "illegal name '{name}' - wrong extension for format ('{parsed} != '{fmt}')"
                )));
            }
            let volname = format!("{vmid}/{name}");
            if self.volumes().get(&s, node, &volname).is_some() {
                return Err(Error::exists(format!(
                    "disk image '{}' already exists",
                    volume_path(&s, &volname)
                )));
            }
            volname
        } else {
            // 9.x: qcow2 on thick LVM, as a volume chain
            // (`alloc_lvm_image`, `verify_volname_format`)
            let lvm_qcow2 = s.kind == "lvm" && fmt == "qcow2";
            if lvm_qcow2 {
                if s.options
                    .get("snapshot-as-volume-chain")
                    .is_none_or(|v| v != "1")
                {
                    return Err(Error::failed(
                        "snapshot-as-volume-chain option need to be enabled to use qcow2 format",
                    ));
                }
                if !name.ends_with(".qcow2") {
                    return Err(Error::failed(format!(
                        "volume name '{name}' does not match requested format 'qcow2' (did you mean '{name}.qcow2'?)"
                    )));
                }
            }
            if fmt != "raw" && !lvm_qcow2 {
                return Err(Error::failed(format!(
                    "unsupported format '{fmt}' at /usr/share/perl5/PVE/Storage/{}.pm line 101.",
                    plugin_class(&s.kind).trim_start_matches("PVE::Storage::")
                )));
            }
            let prefix = format!("vm-{vmid}-");
            let ok = name.starts_with(&prefix)
                || (s.kind != "lvmthin" && name.starts_with(&format!("base-{vmid}-")));
            if !ok {
                return Err(Error::failed(format!(
                    "illegal name '{name}' - should be 'vm-{vmid}-*'"
                )));
            }
            let vg = s.options.get("vgname").map_or("pve", String::as_str);
            if self.volumes().get(&s, node, name).is_some() {
                return Err(Error::exists(match s.kind.as_str() {
                    "lvm" | "lvmthin" => format!(
                        "lvcreate '{vg}/{name}' error:   Logical Volume \"{name}\" already exists in volume group \"{vg}\""
                    ),
                    _ => format!("volume '{sid}:{name}' already exists"),
                }));
            }
            match s.kind.as_str() {
                "lvm" if size > free => {
                    return Err(Error::failed(format!(
                        "not enough free space ({free} < {size_kib})"
                    )));
                }
                "zfspool" if s.options.get("sparse").is_none_or(|v| v != "1") && size > free => {
                    let pool = s.options.get("pool").map_or("rpool/data", String::as_str);
                    return Err(Error::failed(format!(
                        "zfs error: cannot create '{pool}/{name}': out of space"
                    )));
                }
                _ => {}
            }
            name.to_string()
        };
        let vol = Volume {
            storage: s.storage.clone(),
            name: volname,
            size,
            format: fmt,
            vmid,
            ctime: now,
        };
        let volid = vol.volid();
        self.put_file_volume(&s, node, vol);
        Ok(volid)
    }
}
/// The normalised name of a file `download-url` or `upload` stores as
/// `content` (`iso`, `vztmpl` or `import`).
///
/// # Errors
/// 400 `errors.filename`: `wrong file extension`, or for `import`
/// `invalid filename or wrong extension`.
/// The effect of a task that writes `volume` on `node`.
pub fn put_effect(node: &str, volume: Volume) -> TaskEffect {
    put_effect_with(node, volume, None)
}

/// The effect of a task that writes `volume` on `node`, with what an OVA
/// archive holds.
pub fn put_effect_with(
    node: &str,
    volume: Volume,
    ova: Option<crate::model::storage::import::OvaContent>,
) -> TaskEffect {
    TaskEffect::Volume {
        node: node.to_string(),
        change: VolumeChange::Put {
            volume,
            oci: None,
            ova: ova.map(Box::new),
        },
    }
}

fn checked_filename(content: &str, filename: &str) -> Result<String> {
    let file = normalize_filename(filename);
    if content == "import" {
        if file_format("import", &file).is_none_or(|f| f == "ovf") {
            return Err(Error::invalid(
                "filename",
                "invalid filename or wrong extension",
            ));
        }
    } else if file_format(content, &file).is_none() || file.len() <= 4 {
        return Err(Error::invalid("filename", "wrong file extension"));
    }
    Ok(file)
}

/// `normalize_content_filename`: no path, and only `[a-zA-Z0-9_.-]`.
pub fn normalize_filename(f: &str) -> String {
    let f = f.trim_end_matches('\n');
    let f = f.rsplit(['/', '\\']).next().unwrap_or(f);
    f.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `encode_text` for a task id: `:`, `%` and control characters escaped.
pub(crate) fn encode_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == ':' || c == '%' || c.is_control() {
                format!("%{:02X}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `parse_name_dir`: the format of an image file name.
fn parse_name_dir(name: &str) -> Result<String> {
    let bad = || Error::failed(format!("unable to parse volume filename '{name}'"));
    if name.contains('/') || name.chars().any(char::is_whitespace) {
        return Err(bad());
    }
    if name.starts_with("snap-") && name.ends_with(".qcow2") {
        return Err(Error::failed(format!(
            "'{name}' is a snapshot filename, not a volume!"
        )));
    }
    let (stem, ext) = name.rsplit_once('.').ok_or_else(bad)?;
    if stem.is_empty() || !["raw", "qcow2", "vmdk", "subvol"].contains(&ext) {
        return Err(bad());
    }
    Ok(ext.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("iso", "debian.iso", Some("iso"))]
    #[case("iso", "DEBIAN.IMG", Some("iso"))]
    #[case("iso", "debian.qcow2", None)]
    #[case("vztmpl", "debian-12.tar.zst", Some("tzst"))]
    #[case("vztmpl", "alpine.tar", Some("tar"))]
    #[case("vztmpl", "alpine.zip", None)]
    #[case(
        "backup",
        "vzdump-qemu-100-2025_01_02-03_04_05.vma.zst",
        Some("vma.zst")
    )]
    #[case("import", "disk.vmdk", Some("vmdk"))]
    #[case("import", "my disk.vmdk", None)]
    fn formats(#[case] ct: &str, #[case] file: &str, #[case] want: Option<&str>) {
        assert_eq!(file_format(ct, file).as_deref(), want);
    }

    #[test]
    fn backup_names() {
        let (kind, vmid, ctime) = backup_info("vzdump-qemu-100-2025_01_02-03_04_05.vma.zst");
        assert_eq!(kind.as_deref(), Some("qemu"));
        assert_eq!(vmid, Some(100));
        assert_eq!(ctime, Some(1_735_787_045));
        assert_eq!(backup_info("other.vma").0, None);
    }

    #[test]
    fn filenames_are_normalised() {
        assert_eq!(normalize_filename("../a b/c:d.iso"), "c_d.iso");
        assert_eq!(encode_text("a:b%c"), "a%3Ab%25c");
    }
}
