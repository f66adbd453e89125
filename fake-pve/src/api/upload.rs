//! File uploads (`POST /nodes/{node}/storage/{storage}/upload`): the
//! multipart body is streamed, its file part counted and hashed but never
//! kept (only an OVA archive's manifest is read from it), as pveproxy spools it to `/var/tmp/pveupload-<hex>` and hands the
//! handler the other fields plus `tmpfilename`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::{Buf, BytesMut};
use http_body_util::BodyExt;
use sha2::Digest;

/// The largest upload accepted (the file part is not kept, only counted).
pub const MAX_UPLOAD: u64 = 64 << 30;
/// Uploads so far, so that each spool file name is new.
static SPOOLED: AtomicU64 = AtomicU64::new(0);

/// The largest non-file field.
const MAX_FIELD: usize = 64 << 10;

pub use crate::model::storage::content::UploadInfo;

/// Why an upload's body was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UploadError {
    /// Over [`MAX_UPLOAD`] (answered 501, as pveproxy does).
    #[error("for data too large")]
    TooLarge,
    /// Not a multipart body PVE can read (answered 400).
    #[error("{0}")]
    Malformed(&'static str),
    /// The body could not be read to its end.
    #[error("reading the upload failed: {0}")]
    Read(String),
}

/// Whether a request path is the upload call.
pub fn is_upload_path(path: &str) -> bool {
    // Most paths end otherwise: not split at all.
    if !path.trim_end_matches('/').ends_with("/upload") {
        return false;
    }
    // Seven segments at most are looked at: a path is not collected.
    let mut segs = path.split('/').filter(|s| !s.is_empty());
    let mut first = [""; 7];
    for slot in &mut first {
        match segs.next() {
            Some(s) => *slot = s,
            None => return false,
        }
    }
    segs.next().is_none() && matches!(first, ["api2", _, "nodes", _, "storage", _, "upload"])
}

/// The boundary of a `multipart/form-data` content type.
pub fn boundary(ctype: &str) -> Option<String> {
    let mut parts = ctype.split(';').map(str::trim);
    if !parts.next()?.eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    parts
        .find_map(|p| p.strip_prefix("boundary="))
        .map(|b| b.trim_matches('"').to_string())
        .filter(|b| !b.is_empty())
}

struct Hashers {
    md5: md5::Md5,
    sha1: sha1::Sha1,
    sha224: sha2::Sha224,
    sha256: sha2::Sha256,
    sha384: sha2::Sha384,
    sha512: sha2::Sha512,
}

impl Hashers {
    fn new() -> Self {
        Self {
            md5: md5::Md5::new(),
            sha1: sha1::Sha1::new(),
            sha224: sha2::Sha224::new(),
            sha256: sha2::Sha256::new(),
            sha384: sha2::Sha384::new(),
            sha512: sha2::Sha512::new(),
        }
    }

    fn update(&mut self, b: &[u8]) {
        self.md5.update(b);
        self.sha1.update(b);
        self.sha224.update(b);
        self.sha256.update(b);
        self.sha384.update(b);
        self.sha512.update(b);
    }

    fn finish(self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("md5".to_string(), hex::encode(self.md5.finalize())),
            ("sha1".to_string(), hex::encode(self.sha1.finalize())),
            ("sha224".to_string(), hex::encode(self.sha224.finalize())),
            ("sha256".to_string(), hex::encode(self.sha256.finalize())),
            ("sha384".to_string(), hex::encode(self.sha384.finalize())),
            ("sha512".to_string(), hex::encode(self.sha512.finalize())),
        ])
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// One part's headers: its field name and, for the file, its file name.
fn part_names(head: &str) -> (Option<String>, Option<String>) {
    let mut name = None;
    let mut filename = None;
    for line in head.split("\r\n") {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        if !k.trim().eq_ignore_ascii_case("content-disposition") {
            continue;
        }
        for p in v.split(';').map(str::trim) {
            if let Some(n) = p.strip_prefix("name=") {
                name = Some(n.trim_matches('"').to_string());
            } else if let Some(f) = p.strip_prefix("filename=") {
                filename = Some(f.trim_matches('"').to_string());
            }
        }
    }
    (name, filename)
}

/// Reads a multipart body (any body: the server's is axum's): the fields (the file part's name becomes
/// `filename` unless a `filename` field is given) and the file's size and
/// digests.
///
/// # Errors
/// A malformed body or one over [`MAX_UPLOAD`].
pub async fn read<B>(
    mut body: B,
    boundary: &str,
    pid: u32,
) -> Result<(BTreeMap<String, String>, UploadInfo), UploadError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let delim = format!("\r\n--{boundary}").into_bytes();
    let mut buf = BytesMut::new();
    // The first delimiter has no leading CRLF.
    buf.extend_from_slice(b"\r\n");
    let mut fields = BTreeMap::new();
    let mut hashers = Hashers::new();
    // An OVA's manifest is read as the file streams by.
    let mut tar = crate::model::storage::import::tar::TarScan::new();
    let mut size: u64 = 0;
    let mut saw_file = false;
    let mut total: u64 = 0;
    enum State {
        Preamble,
        Head,
        Body {
            name: Option<String>,
            file: bool,
            value: Vec<u8>,
        },
        Done,
    }
    let mut state = State::Preamble;
    let mut eof = false;
    loop {
        // Make progress on what is buffered.
        let progressed = match &mut state {
            State::Done => break,
            State::Preamble => match find(&buf, &delim) {
                Some(i) => {
                    buf.advance(i + delim.len());
                    state = State::Head;
                    true
                }
                None => {
                    // The preamble is not kept: only what may be the
                    // start of a delimiter straddling reads.
                    buf.advance(buf.len().saturating_sub(delim.len()));
                    false
                }
            },
            State::Head => {
                if buf.starts_with(b"--") {
                    state = State::Done;
                    continue;
                }
                match find(&buf, b"\r\n\r\n") {
                    Some(i) => {
                        let head = String::from_utf8_lossy(&buf[..i]).into_owned();
                        buf.advance(i + 4);
                        let (name, filename) = part_names(&head);
                        let file = filename.is_some();
                        if let Some(f) = filename {
                            saw_file = true;
                            fields.insert("filename".to_string(), f);
                        }
                        state = State::Body {
                            name,
                            file,
                            value: Vec::new(),
                        };
                        true
                    }
                    None => {
                        if buf.len() > MAX_FIELD {
                            return Err(UploadError::Malformed(
                                "multipart: part headers too large",
                            ));
                        }
                        false
                    }
                }
            }
            State::Body { name, file, value } => match find(&buf, &delim) {
                Some(i) => {
                    if *file {
                        hashers.update(&buf[..i]);
                        tar.feed(&buf[..i]);
                        size += i as u64;
                    } else {
                        value.extend_from_slice(&buf[..i]);
                        // The file part names the file; a text field of
                        // the same name does not override it.
                        if let Some(n) = name.take()
                            && !(n == "filename" && saw_file)
                        {
                            fields.insert(n, String::from_utf8_lossy(value).into_owned());
                        }
                    }
                    buf.advance(i + delim.len());
                    if buf.len() >= 2 && buf.starts_with(b"\r\n") {
                        buf.advance(2);
                    }
                    state = State::Head;
                    true
                }
                None => {
                    // Keep a delimiter's length back: it may straddle reads.
                    let keep = delim.len();
                    if buf.len() > keep {
                        let n = buf.len() - keep;
                        if *file {
                            hashers.update(&buf[..n]);
                            tar.feed(&buf[..n]);
                            size += n as u64;
                        } else {
                            value.extend_from_slice(&buf[..n]);
                            if value.len() > MAX_FIELD {
                                return Err(UploadError::Malformed("multipart: field too large"));
                            }
                        }
                        buf.advance(n);
                    }
                    false
                }
            },
        };
        if progressed {
            continue;
        }
        if eof {
            return Err(UploadError::Malformed("multipart: unexpected end of body"));
        }
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    total += data.len() as u64;
                    if total > MAX_UPLOAD {
                        return Err(UploadError::TooLarge);
                    }
                    buf.extend_from_slice(&data);
                }
            }
            Some(Err(e)) => return Err(UploadError::Read(e.to_string())),
            None => eof = true,
        }
    }
    if !saw_file {
        return Err(UploadError::Malformed("multipart: no file part"));
    }
    Ok((
        fields,
        UploadInfo {
            tmpfilename: format!(
                "/var/tmp/pveupload-{:032x}",
                (u128::from(pid) << 64 | u128::from(SPOOLED.fetch_add(1, Ordering::Relaxed)))
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ),
            size,
            digests: hashers.finish(),
            tar: tar.finish(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_and_paths() {
        assert_eq!(
            boundary("multipart/form-data; boundary=abc").as_deref(),
            Some("abc")
        );
        assert_eq!(
            boundary("multipart/form-data; boundary=\"x y\"").as_deref(),
            Some("x y")
        );
        assert_eq!(boundary("application/json"), None);
        assert!(is_upload_path("/api2/json/nodes/pve/storage/local/upload"));
        assert!(!is_upload_path(
            "/api2/json/nodes/pve/storage/local/content"
        ));
        assert!(is_upload_path(
            "//api2/json/nodes/pve/storage/local/upload/"
        ));
        assert!(is_upload_path(
            "/api2/json/nodes/pve/storage/local//upload//"
        ));
        assert!(!is_upload_path("/api2/json/nodes/pve/storage/local"));
        assert!(!is_upload_path("/api2/json/nodes/pve/storage/upload"));
        assert!(!is_upload_path(
            "/api2/json/nodes/pve/storage/local/reupload"
        ));
        assert!(!is_upload_path(
            "/api2/json/nodes/pve/storage/local/upload/more"
        ));
    }

    #[test]
    fn part_headers() {
        let (n, f) = part_names(
            "Content-Disposition: form-data; name=\"filename\"; filename=\"a.iso\"\r\nContent-Type: application/octet-stream",
        );
        assert_eq!(
            (n.as_deref(), f.as_deref()),
            (Some("filename"), Some("a.iso"))
        );
    }
}
