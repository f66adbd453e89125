//! Guests to import (`import` content): what
//! `GET /nodes/{node}/storage/{storage}/import-metadata` answers for an
//! OVA archive or OVF manifest on a file storage (pve-storage
//! `Storage.pm` `get_import_metadata`, `Storage/DirPlugin.pm`
//! `get_import_metadata`, `GuestImport/OVF.pm`), and the size of a disk
//! inside an archive that `import-from` extracts (`GuestImport.pm`).
//!
//! An archive's bytes are not kept: when one is uploaded its tar is read
//! as it streams by ([`tar::TarScan`]) and only the manifest's text and
//! the member list stay with the volume ([`OvaContent`]); a downloaded
//! one takes the manifest the table of known URLs gives.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Storages;
use super::content::{file_format, volume_path};
use crate::model::{Error, Result};

pub mod ovf;
pub mod tar;
pub mod xml;

#[cfg(test)]
mod tests;

/// What an OVA archive holds, as far as PVE reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OvaContent {
    /// The text of its first `*.ovf` member, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ovf: Option<String>,
    /// Its regular files: name and size in bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<(String, u64)>,
}

impl OvaContent {
    /// An archive made of a manifest (`NAME.ovf`) and the files it
    /// references, with the sizes the manifest gives them.
    pub fn from_manifest(name: &str, ovf: &str) -> Self {
        let mut members = vec![(format!("{name}.ovf"), ovf.len() as u64)];
        members.extend(ovf::referenced_files(ovf));
        Self {
            ovf: Some(ovf.to_string()),
            members,
        }
    }
}

/// A disk of the answer: a volume to import, or `1` for the EFI disk a
/// guest with OVMF needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ImportDisk {
    /// `{ volid, size }`.
    Volume {
        /// `<storage>:import/<archive>.ova/<file>`.
        volid: String,
        /// Bytes, where the manifest gives a capacity.
        #[serde(skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    /// `efidisk0: 1`.
    Efi(u8),
}

/// A known issue of an import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportWarning {
    /// `ova-needs-extracting`, `efi-state-lost`...
    #[serde(rename = "type")]
    pub kind: String,
    /// The config key concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Its value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl ImportWarning {
    fn new(kind: &str) -> Self {
        Self {
            kind: kind.into(),
            key: None,
            value: None,
        }
    }
}

/// The answer of `import-metadata`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportMetadata {
    /// The volume name (`import/x.ova`).
    pub source: String,
    /// Parameters for `POST /nodes/{node}/qemu`.
    pub create_args: BTreeMap<String, String>,
    /// Disks by drive key.
    pub disks: BTreeMap<String, ImportDisk>,
    /// NICs by `net<N>`: `{ model }`.
    pub net: BTreeMap<String, String>,
    /// Known issues.
    pub warnings: Vec<ImportWarning>,
}

/// The storage types whose plugin has `get_import_metadata` for files
/// (`DirPlugin` and those that call it).
fn has_file_importer(kind: &str) -> bool {
    matches!(kind, "dir" | "nfs" | "cifs" | "cephfs" | "btrfs")
}

/// `$SAFE_CHAR_WITH_WHITESPACE_CLASS_RE+` followed by one of `exts`:
/// the extension found.
fn safe_name_with<'a>(name: &str, exts: &[&'a str]) -> Option<&'a str> {
    let (stem, ext) = name.rsplit_once('.')?;
    let ext = exts.iter().find(|e| **e == ext)?;
    (!stem.is_empty() && stem.chars().all(ovf::safe_char_ws)).then_some(*ext)
}

/// `parse_volname` of a file storage, as far as import needs it: the
/// content type and format of a volume name.
///
/// # Errors
/// `unable to parse directory volume name '...'`.
pub fn parse_volname(volname: &str) -> Result<(&'static str, String)> {
    let bad = || Error::failed(format!("unable to parse directory volume name '{volname}'"));
    let Some((dir, rest)) = volname.split_once('/') else {
        return Err(bad());
    };
    if dir.bytes().all(|b| b.is_ascii_digit()) && !dir.is_empty() {
        let file = rest.rsplit('/').next().unwrap_or(rest);
        let fmt = file.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
        if rest.chars().any(char::is_whitespace)
            || !["raw", "qcow2", "vmdk", "subvol"].contains(&fmt)
        {
            return Err(bad());
        }
        return Ok(("images", fmt.to_string()));
    }
    match dir {
        "iso" | "vztmpl" | "backup" if !rest.contains('/') => file_format(dir, rest)
            .map(|_| (super::content::vtype(volname), "raw".to_string()))
            .ok_or_else(bad),
        "snippets" if !rest.contains('/') && !rest.is_empty() => {
            Ok(("snippets", "raw".to_string()))
        }
        "import" => {
            if let Some((archive, inner)) = rest.split_once(".ova/")
                && safe_name_with(&format!("{archive}.ova"), &["ova"]).is_some()
                && let Some(fmt) = safe_name_with(inner, &["qcow2", "raw", "vmdk"])
            {
                return Ok(("import", format!("ova+{fmt}")));
            }
            safe_name_with(rest, &["ova", "ovf", "qcow2", "raw", "vmdk"])
                .map(|f| ("import", f.to_string()))
                .ok_or_else(bad)
        }
        _ => Err(bad()),
    }
}

impl Storages {
    /// What an OVA or OVF volume holds, if it is there.
    fn ova_content(&self, sid: &str, node: &str, volname: &str) -> Option<OvaContent> {
        let s = self.find(sid)?;
        self.volumes().get(s, node, volname)?;
        self.volume_attrs(s, node, volname).ova
    }

    /// `GET .../import-metadata` of volume `volname` of storage `sid`
    /// (PVE's `get_import_metadata` of a file storage).
    ///
    /// # Errors
    /// `storage 'x' does not exist`, `storage does not support the
    /// importer API`, 501 for an ESXi storage (not emulated), `unable to parse directory volume name '...'`,
    /// `invalid content type '...'`, `invalid format`; a missing archive
    /// or one without a manifest as `tar` fails; the manifest's errors.
    pub fn import_metadata(&self, sid: &str, node: &str, volname: &str) -> Result<ImportMetadata> {
        let s = self
            .find(sid)
            .ok_or_else(|| Error::failed(format!("storage '{sid}' does not exist")))?;
        if s.kind == "esxi" {
            // The ESXi plugin reads the host's VM configs through its
            // API: no host is emulated behind an `esxi` storage.
            return Err(Error::NotImplemented(format!(
                "Method 'GET /api2/json/nodes/{node}/storage/{sid}/import-metadata' is not emulated by fake-pve for ESXi storages"
            )));
        }
        if !has_file_importer(&s.kind) {
            return Err(Error::failed("storage does not support the importer API"));
        }
        let (vtype, fmt) = parse_volname(volname)?;
        if vtype != "import" {
            return Err(Error::failed(format!("invalid content type '{vtype}'")));
        }
        if fmt != "ova" && fmt != "ovf" {
            return Err(Error::failed("invalid format"));
        }
        let is_ova = fmt == "ova";
        let path = volume_path(s, volname);
        let content = self.ova_content(sid, node, volname);
        let text = match (is_ova, content.and_then(|c| c.ovf)) {
            (_, Some(t)) => t,
            (true, None) => {
                return Err(Error::failed(format!(
                    "command 'tar -xO --wildcards --occurrence=1 -f {path} '*.ovf'' failed: exit code 2"
                )));
            }
            (false, None) => {
                return Err(Error::failed(format!(
                    "unable to open file '{path}' - No such file or directory"
                )));
            }
        };
        let mut log = Vec::new();
        let parsed = ovf::parse(&text, &mut log).map_err(Error::failed)?;
        let mut warnings = Vec::new();
        if is_ova {
            warnings.push(ImportWarning::new("ova-needs-extracting"));
        }
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let mut disks = BTreeMap::new();
        for d in &parsed.disks {
            let (volid, size) = if is_ova {
                (format!("{sid}:{volname}/{}", d.path), d.virtual_size)
            } else {
                let inner = format!("import/{}", d.path);
                let Some(v) = self.volumes().get(s, node, &inner) else {
                    return Err(Error::failed(format!(
                        "error parsing {}, file seems not to exist at {dir}/{}",
                        d.path, d.path
                    )));
                };
                (format!("{sid}:{inner}"), Some(v.size))
            };
            disks.insert(d.address.clone(), ImportDisk::Volume { volid, size });
        }
        if parsed.qm.get("bios").is_some_and(|b| b == "ovmf") {
            disks.insert("efidisk0".into(), ImportDisk::Efi(1));
            warnings.push(ImportWarning {
                kind: "efi-state-lost".into(),
                key: Some("bios".into()),
                value: Some("ovmf".into()),
            });
        }
        Ok(ImportMetadata {
            source: volname.to_string(),
            create_args: parsed.qm,
            disks,
            net: parsed.net,
            warnings,
        })
    }

    /// The size of a disk inside an OVA archive (`<sid>:import/x.ova/
    /// disk.vmdk`) as extracting it gives: the capacity its manifest
    /// gives, else the member's size. `None` if the archive or the
    /// member is not there.
    pub fn ova_disk_size(&self, volid: &str, node: &str) -> Option<u64> {
        let (sid, name) = super::parse_volid(volid)?;
        let (archive, inner) = name.split_once(".ova/")?;
        let archive = format!("{archive}.ova");
        let content = self.ova_content(sid, node, &archive)?;
        let member = content.members.iter().find(|(n, _)| n == inner)?.1;
        let declared = content.ovf.as_deref().and_then(|t| {
            let parsed = ovf::parse(t, &mut Vec::new()).ok()?;
            parsed
                .disks
                .into_iter()
                .find(|d| d.path == inner)
                .and_then(|d| d.virtual_size)
        });
        Some(declared.unwrap_or(member))
    }
}
