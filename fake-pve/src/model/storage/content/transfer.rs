//! Getting files onto a storage: `download-url` from the table of known
//! URLs, uploads, and `query-url-metadata` (pve-storage
//! `API2/Storage/Status.pm`; pve-manager `Nodes.pm` `query_url_metadata`).

use super::*;

impl Storages {
    /// Checks of `download-url` made before the task starts; answers the
    /// normalised file name and the volume name.
    ///
    /// # Errors
    /// `can't upload to storage type 'x', not a file based storage!`,
    /// `storage 'x' is not configured for content-type 'y'`, 400
    /// `errors.filename`.
    pub fn download_check(
        &self,
        sid: &str,
        node: &str,
        content: &str,
        filename: &str,
    ) -> Result<(String, String)> {
        let s = self.usable_storage(sid, node)?;
        if !path_based(&s.kind) {
            return Err(Error::failed(format!(
                "can't upload to storage type '{}', not a file based storage!",
                s.kind
            )));
        }
        if !s.content.iter().any(|c| c == content) {
            return Err(Error::failed(format!(
                "storage '{sid}' is not configured for content-type '{content}'"
            )));
        }
        let file = checked_filename(content, filename)?;
        Ok((file.clone(), format!("{content}/{file}")))
    }

    /// The known URL, if any.
    pub fn known_url(&self, url: &str) -> Option<&KnownUrl> {
        self.volumes().downloads.iter().find(|k| k.url == url)
    }

    /// The task of `download-url`: its log and outcome; the volume
    /// appears when the task ends successfully.
    pub fn download_task(&self, r: &DownloadRequest) -> Result<Worker> {
        let (file, volname) = self.download_check(&r.storage, &r.node, &r.content, &r.filename)?;
        let s = self.usable_storage(&r.storage, &r.node)?.clone();
        let dest = volume_path(&s, &volname);
        let tmp = format!("{dest}.tmp_dwnl.{}", r.pid);
        let mut w = Worker::new("download", &encode_text(&file));
        if r.compression.is_some() && r.content != "iso" {
            return Ok(w.fail(format!("decompression not supported for {}", r.content)));
        }
        w = w.log(format!("downloading {} to {dest}", r.url));
        if self.volumes().get(&s, &r.node, &volname).is_some() {
            if let (Some(expect), Some(_)) = (&r.checksum, &r.checksum_algorithm) {
                let got = self.known_url(&r.url).and_then(|k| k.checksum.clone());
                let got = got.unwrap_or_else(|| expect.clone());
                if got.eq_ignore_ascii_case(expect) {
                    return Ok(w.log(
                        "calculating checksum of existing file...OK, got correct file already, no need to download",
                    ));
                }
                return Ok(w
                    .log("calculating checksum of existing file...")
                    .fail(format!(
                        "checksum mismatch: got '{got}' != expect '{expect}', aborting"
                    )));
            }
            return Ok(w.fail(format!("refusing to override existing file '{dest}'")));
        }
        let known = self.known_url(&r.url).cloned();
        if let Some(msg) = known.as_ref().and_then(|k| k.fail.clone()) {
            return Ok(w.fail(msg));
        }
        if r.verify_certificates && known.as_ref().is_some_and(|k| k.insecure) {
            // wget refuses a certificate it cannot verify (exit code 5).
            return Ok(w.fail(format!(
                "download failed: command 'wget --progress=dot:giga -O {tmp} {}' failed: exit code 5",
                r.url
            )));
        }
        let size = known
            .as_ref()
            .and_then(|k| k.size)
            .unwrap_or(DEFAULT_DOWNLOAD_SIZE);
        w = w
            .log(format!("Saving to: '{tmp}'"))
            .log(format!("Length: {size}"))
            .log(format!("'{tmp}' saved [{size}/{size}]"));
        if let (Some(expect), Some(alg)) = (&r.checksum, &r.checksum_algorithm) {
            let got = known
                .as_ref()
                .filter(|k| k.checksum_algorithm.as_deref().is_none_or(|a| a == alg))
                .and_then(|k| k.checksum.clone())
                .unwrap_or_else(|| expect.clone());
            if !got.eq_ignore_ascii_case(expect) {
                return Ok(w.log("calculating checksum...").fail(format!(
                    "checksum mismatch: got '{got}' != expect '{expect}'"
                )));
            }
            w = w.log("calculating checksum...OK, checksum verified");
        }
        if r.compression.is_some() {
            let dcom = format!("{dest}.tmp_dcom.{}", r.pid);
            w = w.log(format!("decompressing {tmp} to {dcom}"));
        }
        let format = file_format(&r.content, &file).unwrap_or_else(|| "raw".into());
        let ova = known
            .as_ref()
            .and_then(|k| k.ovf.as_deref())
            .filter(|_| format == "ova")
            .map(|t| {
                let stem = file.strip_suffix(".ova").unwrap_or(&file);
                crate::model::storage::import::OvaContent::from_manifest(stem, t)
            });
        let volume = Volume {
            storage: s.storage.clone(),
            name: volname,
            size,
            format,
            vmid: 0,
            ctime: r.now,
        };
        Ok(
            w.log_end(format!("download of '{}' to '{dest}' finished", r.url))
                .effect(put_effect_with(&r.node, volume, ova)),
        )
    }

    /// Checks of `upload` made before the task starts, in PVE's order;
    /// answers the normalised file name.
    ///
    /// # Errors
    /// `can't upload to storage type 'x'`, 400 `errors.filename` or
    /// `errors.content`, `storage 'x' does not support 'y' content`.
    pub fn upload_check(
        &self,
        sid: &str,
        node: &str,
        content: &str,
        filename: &str,
    ) -> Result<String> {
        let s = self.usable_storage(sid, node)?;
        if !path_based(&s.kind) {
            return Err(Error::failed(format!(
                "can't upload to storage type '{}'",
                s.kind
            )));
        }
        if !matches!(content, "iso" | "vztmpl" | "import") {
            return Err(Error::invalid(
                "content",
                format!("upload content type '{content}' not allowed"),
            ));
        }
        let file = checked_filename(content, filename)?;
        if !s.content.iter().any(|c| c == content) {
            return Err(Error::failed(format!(
                "storage '{sid}' does not support '{content}' content"
            )));
        }
        Ok(file)
    }

    /// The task of `upload` (`imgcopy`): the spooled file is copied into
    /// the storage; a volume of the same name is replaced.
    pub fn upload_task(&self, r: &UploadRequest) -> Result<Worker> {
        let file = self.upload_check(&r.storage, &r.node, &r.content, &r.filename)?;
        let s = self.usable_storage(&r.storage, &r.node)?.clone();
        let volname = format!("{}/{file}", r.content);
        let dest = volume_path(&s, &volname);
        let mut w =
            Worker::new("imgcopy", "").log(format!("starting file import from: {}", r.tmpfilename));
        if let Some((expect, got)) = &r.checksum {
            if !got.eq_ignore_ascii_case(expect) {
                return Ok(w.log("calculating checksum...").fail(format!(
                    "checksum mismatch: got '{got}' != expect '{expect}'"
                )));
            }
            w = w.log("calculating checksum...OK, checksum verified");
        }
        w = w
            .log(format!("target node: {}", r.node))
            .log(format!("target file: {dest}"))
            .log(format!("file size is: {}", r.size))
            .log(format!("command: cp -- {} {dest}", r.tmpfilename));
        let format = file_format(&r.content, &file).unwrap_or_else(|| "raw".into());
        let volume = Volume {
            storage: s.storage.clone(),
            name: volname,
            size: r.size,
            format,
            vmid: 0,
            ctime: r.now,
        };
        let ova = r.ova.clone().filter(|_| volume.format == "ova");
        Ok(w.log_end("finished file import successfully")
            .effect(put_effect_with(&r.node, volume, ova)))
    }

    /// `GET /nodes/{node}/query-url-metadata`.
    ///
    /// # Errors
    /// `invalid server response: '404 Not Found'` for a URL the table does
    /// not know or that fails.
    pub fn query_url_metadata(&self, url: &str, verify: bool) -> Result<UrlMetadata> {
        let Some(k) = self.known_url(url).filter(|k| k.fail.is_none()) else {
            return Err(Error::failed("invalid server response: '404 Not Found'"));
        };
        if verify && k.insecure {
            let host = url
                .split("://")
                .nth(1)
                .and_then(|r| r.split(['/', '?']).next())
                .unwrap_or_default();
            let host = if host.contains(':') {
                host.to_string()
            } else {
                format!("{host}:443")
            };
            return Err(Error::failed(format!(
                "invalid server response: '500 Can't connect to {host} (certificate verify failed)'"
            )));
        }
        let name = k.filename.clone().or_else(|| {
            let path = url.split('?').next().unwrap_or(url);
            let (_, last) = path.rsplit_once('/')?;
            (!last.is_empty()).then(|| last.to_string())
        });
        let mime = k.mimetype.clone().unwrap_or_else(|| {
            if url.to_ascii_lowercase().ends_with(".iso") {
                "application/x-iso9660-image".into()
            } else {
                "application/octet-stream".into()
            }
        });
        Ok(UrlMetadata {
            filename: name,
            size: k.size.filter(|s| *s > 0),
            mimetype: mime.split(';').next().unwrap_or_default().to_string(),
        })
    }
}
