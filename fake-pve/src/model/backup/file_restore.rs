//! What PVE checks before it restores single files from a backup or
//! reads an import source's metadata (pve-storage
//! `API2/Storage/FileRestore.pm` `list`/`download`,
//! `API2/Storage/Status.pm` `get_import_metadata`): access to the volume
//! (`check_volume_access`) first, then whether the storage can do it;
//! then what `proxmox-file-restore` lists and extracts in the snapshot
//! (see `model::pbs::files`).

use crate::model::access::AuthId;
use crate::model::backup::BackupReader;
use crate::model::guest_perm::{check_volume_access, valid_storage_id};
use crate::model::storage::parse_volid;
use crate::model::{Error, Result};

/// FileRestore.pm's `$parse_volname_or_id`: the volume ID of `volume`
/// given with `storage` (a full volume ID of that storage, a
/// `backup/...` name, or a bare file name).
///
/// # Errors
/// 400 `volume: storage ID mismatch (<sid> != <storage>).`
pub fn restore_volid(storage: &str, volume: &str) -> Result<String> {
    if let Some((sid, _)) = parse_volid(volume).filter(|(sid, _)| valid_storage_id(sid)) {
        if sid != storage {
            return Err(Error::invalid(
                "volume",
                format!("storage ID mismatch ({sid} != {storage})."),
            ));
        }
        return Ok(volume.to_string());
    }
    if volume.starts_with("backup/") {
        Ok(format!("{storage}:{volume}"))
    } else {
        Ok(format!("{storage}:backup/{volume}"))
    }
}

impl<'a> BackupReader<'a> {
    /// The checks of a file-restore `list` or `download`: the storage
    /// exists, the caller may access the backup volume, and the storage
    /// is a Proxmox Backup Server. Answers the volume ID.
    ///
    /// # Errors
    /// Those of [`restore_volid`] and [`check_volume_access`];
    /// 400 `storage: Only PBS storages supported for file-restore.`
    pub fn check_file_restore(self, who: &AuthId, storage: &str, volume: &str) -> Result<String> {
        let volid = restore_volid(storage, volume)?;
        let kind = self.storage.existing(storage)?.kind.clone();
        check_volume_access(self.access, self.storage, who, None, &volid, Some("backup"))?;
        if kind != "pbs" {
            return Err(Error::invalid(
                "storage",
                "Only PBS storages supported for file-restore.",
            ));
        }
        Ok(volid)
    }

    /// The snapshot a file-restore call reads, with the path it names
    /// (`filepath`: `/`, or base64).
    ///
    /// # Errors
    /// The checks of [`Self::check_file_restore`]; the server's; a path
    /// that is not base64.
    fn file_restore_target(
        self,
        who: &AuthId,
        storage: &str,
        volume: &str,
        filepath: &str,
    ) -> Result<(&'a crate::model::pbs::Snapshot, String)> {
        let volid = self.check_file_restore(who, storage, volume)?;
        let s = self.storage.existing(storage)?;
        let name = parse_volid(&volid).map_or("", |(_, n)| n);
        crate::model::pbs::parse_volname(name).map_err(Error::failed)?;
        self.pbs
            .datastore(s)
            .map_err(|e| Error::failed(e.client_message()))?;
        let snap = self.pbs.snapshot(s, name).map_err(Error::failed)?;
        if let Some(e) = self
            .pbs
            .restore_key_error(storage, snap.fingerprint.as_deref())
        {
            return Err(Error::failed(format!(
                "proxmox-file-restore failed: Error: {e}"
            )));
        }
        let path = if filepath == "/" {
            "/".to_string()
        } else {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(filepath)
                .map_err(|e| {
                    Error::failed(format!("Failed base64-decoding path '{filepath}' - {e}"))
                })?;
            String::from_utf8_lossy(&bytes).into_owned()
        };
        Ok((snap, path))
    }

    /// `GET .../file-restore/list`: the entries under `filepath` (`/`:
    /// the snapshot's archives).
    ///
    /// # Errors
    /// Those of the checks and of `proxmox-file-restore list`.
    pub fn file_restore_list(
        self,
        who: &AuthId,
        storage: &str,
        volume: &str,
        filepath: &str,
    ) -> Result<Vec<crate::model::pbs::files::Entry>> {
        let (snap, path) = self.file_restore_target(who, storage, volume, filepath)?;
        crate::model::pbs::files::list(snap, &path).map_err(Error::failed)
    }

    /// `GET .../file-restore/download`: the file's name and bytes (a
    /// directory as a zip, or with `tar` a `tar.zst`).
    ///
    /// # Errors
    /// Those of the checks and of `proxmox-file-restore extract`.
    pub fn file_restore_download(
        self,
        who: &AuthId,
        storage: &str,
        volume: &str,
        filepath: &str,
        tar: bool,
    ) -> Result<(String, Vec<u8>)> {
        let (snap, path) = self.file_restore_target(who, storage, volume, filepath)?;
        let bytes = crate::model::pbs::files::extract(snap, &path, tar).map_err(Error::failed)?;
        Ok((path, bytes))
    }

    /// The check of `get_import_metadata`: access to `<storage>:<volume>`
    /// whatever its content type. Answers the volume ID.
    ///
    /// # Errors
    /// Those of [`check_volume_access`].
    pub fn check_import_metadata(
        self,
        who: &AuthId,
        storage: &str,
        volume: &str,
    ) -> Result<String> {
        let volid = format!("{storage}:{volume}");
        check_volume_access(self.access, self.storage, who, None, &volid, None)?;
        Ok(volid)
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case(
        "local",
        "local:backup/vzdump-qemu-100-2024_01_01-00_00_00.vma.zst",
        Ok("local:backup/vzdump-qemu-100-2024_01_01-00_00_00.vma.zst")
    )]
    #[case(
        "pbs",
        "backup/vm/100/2024-01-01T00:00:00Z",
        Ok("pbs:backup/vm/100/2024-01-01T00:00:00Z")
    )]
    #[case(
        "pbs",
        "vm/100/2024-01-01T00:00:00Z",
        Ok("pbs:backup/vm/100/2024-01-01T00:00:00Z")
    )]
    #[case(
        "local",
        "other:backup/x.vma",
        Err("storage ID mismatch (other != local).")
    )]
    fn volume_ids_as_file_restore_reads_them(
        #[case] storage: &str,
        #[case] volume: &str,
        #[case] want: Result<&str, &str>,
    ) {
        let got = restore_volid(storage, volume);
        match want {
            Ok(v) => assert_eq!(got, Ok(v.to_string())),
            Err(m) => assert_eq!(got, Err(Error::invalid("volume", m))),
        }
    }
}
