//! Guests to import: an OVA archive built from a manifest and uploaded
//! as `import` content, and `import-metadata` of a volume.

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::Params;
use pve_client::api::seg;

use super::vm::remember_upid;
use crate::world::{Made, PveWorld};

/// A ustar archive: the manifest as `<stem>.ovf`, then each file it
/// references (`ovf:href="..."`) with a little filler.
fn ova(stem: &str, ovf: &str) -> Vec<u8> {
    let mut members = vec![(format!("{stem}.ovf"), ovf.as_bytes().to_vec())];
    for part in ovf.split("ovf:href=\"").skip(1) {
        if let Some((href, _)) = part.split_once('"') {
            members.push((href.to_string(), b"disk image stand-in\n".repeat(8)));
        }
    }
    let mut out = Vec::new();
    for (name, data) in members {
        let mut h = [0u8; 512];
        let n = name.len().min(100);
        h[..n].copy_from_slice(&name.as_bytes()[..n]);
        h[100..107].copy_from_slice(b"0000644");
        h[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(&data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

#[when(expr = "I upload an OVA {string} to storage {string} with the manifest:")]
async fn upload_ova(w: &mut PveWorld, step: &Step, file: String, storage: String) {
    let sid = w.expand(&storage);
    let file = w.expand(&file);
    let stem = file.strip_suffix(".ova").unwrap_or(&file).to_string();
    let manifest = w.expand(step.docstring.as_deref().unwrap_or_default());
    w.made(Made::Volume(sid.clone(), format!("{sid}:import/{file}")));
    let req = pve_client::api::storage::Upload::new("import", &file, ova(&stem, &manifest));
    w.call_upload(&sid, &req).await;
    remember_upid(w);
}

#[when(expr = "I read the import metadata of {string} on storage {string}")]
async fn get_import_metadata(w: &mut PveWorld, volume: String, storage: String) {
    let path = format!(
        "/nodes/{}/storage/{}/import-metadata",
        seg(&w.target().node),
        seg(&w.expand(&storage))
    );
    let params = Params::new().set("volume", w.expand(&volume).as_str());
    w.call(pve_client::Method::GET, &path, params).await;
}
