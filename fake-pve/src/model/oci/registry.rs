//! The emulated registries: the images declared, their manifests and
//! blobs as the OCI distribution API serves them, and what skopeo makes
//! of a reference (its tags; an image copied into an `oci-archive`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Image, ImageConfig, Reference, digest};

/// The most bytes one declared layer may have: its blob is made and
/// hashed whenever it is served or pulled.
pub const MAX_LAYER: u64 = 256 * 1024 * 1024;

/// `application/vnd.oci.image.manifest.v1+json`.
pub const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// `application/vnd.oci.image.config.v1+json`.
pub const CONFIG_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// `application/vnd.oci.image.layer.v1.tar+gzip`.
pub const LAYER_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// The images of every emulated registry, in the order declared (the
/// order `tags/list` answers a repository's tags in).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Registry {
    images: Vec<Image>,
}

/// A blob a registry serves: its media type and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// Its media type.
    pub media_type: &'static str,
    /// Its content.
    pub bytes: Vec<u8>,
}

/// What skopeo finds for a reference: why it fails, in its words.
pub type Found<'a> = std::result::Result<&'a Image, String>;

impl Registry {
    /// The registries holding `images`.
    ///
    /// # Errors
    /// The first image that is not well declared, and why.
    pub fn new(images: Vec<Image>) -> std::result::Result<Self, String> {
        for (i, img) in images.iter().enumerate() {
            img.check()?;
            if img.layer_sizes().iter().any(|s| *s > MAX_LAYER) {
                return Err(format!(
                    "image '{}' has a layer over {MAX_LAYER} bytes",
                    img.reference
                ));
            }
            let r = Reference::parse(&img.reference).map_err(|e| e.to_string())?;
            if images[..i]
                .iter()
                .any(|o| Reference::parse(&o.reference).ok().as_ref() == Some(&r))
            {
                return Err(format!("image '{}' is declared twice", img.reference));
            }
        }
        Ok(Self { images })
    }

    /// The images declared.
    pub fn images(&self) -> &[Image] {
        &self.images
    }

    /// Whether any image lives on `host`.
    pub fn knows_host(&self, host: &str) -> bool {
        self.parsed().any(|(r, _)| r.host == host)
    }

    fn parsed(&self) -> impl Iterator<Item = (Reference, &Image)> {
        self.images
            .iter()
            .filter_map(|i| Reference::parse(&i.reference).ok().map(|r| (r, i)))
    }

    /// The tags of a repository, in the registry's order.
    ///
    /// # Errors
    /// skopeo's message for an unreachable registry or an unknown
    /// repository.
    pub fn tags(&self, r: &Reference) -> std::result::Result<Vec<String>, String> {
        self.reachable(r)?;
        let tags: Vec<String> = self
            .parsed()
            .filter(|(p, _)| p.host == r.host && p.repository == r.repository)
            .filter_map(|(p, _)| p.tag)
            .collect();
        if tags.is_empty() {
            return Err(
                "Error listing repository tags: fetching tags list: repository name not known to registry"
                    .to_string(),
            );
        }
        Ok(tags)
    }

    fn reachable(&self, r: &Reference) -> std::result::Result<(), String> {
        if self.knows_host(&r.host) {
            return Ok(());
        }
        let api = r.api_host();
        let host = api.rsplit_once(':').map_or(api, |(h, _)| h);
        Err(format!(
            "pinging container registry {api}: Get \"https://{api}/v2/\": dial tcp: lookup {host}: no such host"
        ))
    }

    /// The image a tagged reference names.
    ///
    /// # Errors
    /// skopeo's message (after `initializing source docker://REF: `) for
    /// an unreachable registry or a missing repository or tag.
    pub fn image(&self, r: &Reference) -> Found<'_> {
        self.reachable(r)?;
        let tag = r.tag.clone().unwrap_or_else(|| "latest".into());
        self.parsed()
            .find(|(p, _)| {
                p.host == r.host && p.repository == r.repository && p.tag.as_deref() == Some(&tag)
            })
            .map(|(_, i)| i)
            .ok_or_else(|| format!("reading manifest {tag} in {}: manifest unknown", r.name()))
    }

    /// The image of `repository` on `host` whose manifest is `reference`
    /// (a tag or the manifest's digest), for the distribution API.
    pub fn manifest_of(&self, host: &str, repository: &str, reference: &str) -> Option<&Image> {
        self.parsed()
            .filter(|(p, _)| p.host == host && p.repository == repository)
            .find(|(p, i)| {
                p.tag.as_deref() == Some(reference)
                    || (reference.starts_with("sha256:") && digest(&manifest(i)) == reference)
            })
            .map(|(_, i)| i)
    }

    /// The tags of `repository` on `host`, for the distribution API.
    pub fn repo_tags(&self, host: &str, repository: &str) -> Option<Vec<String>> {
        let tags: Vec<String> = self
            .parsed()
            .filter(|(p, _)| p.host == host && p.repository == repository)
            .filter_map(|(p, _)| p.tag)
            .collect();
        (!tags.is_empty()).then_some(tags)
    }

    /// A blob of `repository` on `host` by its digest.
    pub fn blob(&self, host: &str, repository: &str, want: &str) -> Option<Blob> {
        self.parsed()
            .filter(|(p, _)| p.host == host && p.repository == repository)
            .find_map(|(_, i)| {
                let config = config_blob(i);
                if digest(&config) == want {
                    return Some(Blob {
                        media_type: CONFIG_TYPE,
                        bytes: config,
                    });
                }
                layers(i)
                    .into_iter()
                    .find(|l| digest(l) == want)
                    .map(|bytes| Blob {
                        media_type: LAYER_TYPE,
                        bytes,
                    })
            })
    }
}

/// The bytes of an image's config blob.
pub fn config_blob(img: &Image) -> Vec<u8> {
    img.config.document(img.created()).to_string().into_bytes()
}

/// The bytes of an image's layers: made from its reference, so the same
/// image always has the same digests.
pub fn layers(img: &Image) -> Vec<Vec<u8>> {
    img.layer_sizes()
        .iter()
        .enumerate()
        .map(|(n, size)| {
            let seed = sha2::Digest::finalize(sha2::Digest::chain_update(
                <sha2::Sha256 as sha2::Digest>::new(),
                format!("{}#{n}", img.reference),
            ));
            let mut x = u64::from_le_bytes(seed[..8].try_into().unwrap_or([1; 8])) | 1;
            let len = usize::try_from(*size).unwrap_or(0);
            let mut out = Vec::with_capacity(len + 8);
            while out.len() < len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                out.extend_from_slice(&x.to_le_bytes());
            }
            out.truncate(len);
            out
        })
        .collect()
}

/// The bytes of an image's manifest.
pub fn manifest(img: &Image) -> Vec<u8> {
    manifest_of_blobs(&config_blob(img), &layers(img))
}

/// The manifest of a config blob and layers.
fn manifest_of_blobs(config: &[u8], layers: &[Vec<u8>]) -> Vec<u8> {
    let layers: Vec<Value> = layers
        .iter()
        .map(|l| json!({ "mediaType": LAYER_TYPE, "digest": digest(l), "size": l.len() }))
        .collect();
    json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "config": { "mediaType": CONFIG_TYPE, "digest": digest(config), "size": config.len() },
        "layers": layers,
    })
    .to_string()
    .into_bytes()
}

/// What `skopeo copy` writes: its output lines and the `oci-archive`'s
/// size (a tar of `oci-layout`, `index.json` and `blobs/sha256/*`, as
/// Go's archive/tar writes it: a 512-byte header per entry, data padded
/// to 512 bytes, two zero blocks at the end).
pub fn copy(img: &Image) -> (Vec<String>, u64, ImageConfig) {
    let config = config_blob(img);
    let layers = layers(img);
    let manifest = manifest_of_blobs(&config, &layers);
    let mut lines = vec!["Getting image source signatures".to_string()];
    for l in &layers {
        lines.push(format!("Copying blob {}", digest(l)));
    }
    lines.push(format!("Copying config {}", digest(&config)));
    lines.push("Writing manifest to image destination".to_string());
    let index = json!({
        "schemaVersion": 2,
        "manifests": [{ "mediaType": MANIFEST_TYPE, "digest": digest(&manifest), "size": manifest.len() }],
    })
    .to_string();
    let entry = |len: u64| 512 + len.div_ceil(512) * 512;
    let layout = r#"{"imageLayoutVersion": "1.0.0"}"#.len() as u64;
    let mut size = entry(layout) + entry(index.len() as u64) + 2 * 512;
    size += entry(manifest.len() as u64) + entry(config.len() as u64);
    size += layers.iter().map(|l| entry(l.len() as u64)).sum::<u64>();
    size += 1024;
    (lines, size, img.config.clone())
}
