//! A `pbs` storage's client-side encryption key (pve-storage
//! `PBSPlugin.pm`'s `on_add_hook`/`on_update_hook`, the key file
//! `/etc/pve/priv/storage/<id>.enc`) and what a restore makes of it
//! (proxmox-backup's manifest check).
//!
//! `storage.cfg` keeps only the key's fingerprint (`encryption-key`);
//! the key itself, a `proxmox-backup-client key create --kdf none` JSON
//! document, is kept per storage here, as the file beside the config.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::model::Context;
use crate::model::cluster::Storage;

/// `Value does not seems like a valid, JSON formatted encryption key!`.
pub const NOT_A_KEY: &str = "Value does not seems like a valid, JSON formatted encryption key!";

/// `'master-pubkey' can only be used together with 'encryption-key'`.
pub const MASTER_WITHOUT_KEY: &str =
    "'master-pubkey' can only be used together with 'encryption-key'";

/// A fingerprint as proxmox-backup prints one: 32 bytes in lower-case
/// hex, separated by colons.
fn fingerprint_of(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A new key as `proxmox-backup-client key create --kdf none` writes
/// it: 32 random bytes, no key derivation, and the key's fingerprint.
pub fn autogen(rq: &mut Context, now: i64) -> String {
    let mut data = Vec::with_capacity(32);
    for _ in 0..4 {
        data.extend(rq.secret_u64().to_le_bytes());
    }
    let fp = fingerprint_of(&Sha256::digest(&data));
    let t = super::rfc3339(now);
    let doc = serde_json::json!({
        "kdf": null,
        "created": t,
        "modified": t,
        "data": B64.encode(&data),
        "fingerprint": fp,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// What `storage.cfg`'s `encryption-key` becomes for a given key: its
/// `fingerprint`, or `1` for a key without one.
///
/// # Errors
/// [`NOT_A_KEY`]: not JSON, or no `data`.
pub fn cfg_value(key: &str) -> Result<String, &'static str> {
    let doc: Value = serde_json::from_str(key).map_err(|_| NOT_A_KEY)?;
    if doc.get("data").is_none() {
        return Err(NOT_A_KEY);
    }
    Ok(match doc.get("fingerprint") {
        Some(Value::String(fp)) if !fp.is_empty() => fp.clone(),
        _ => "1".into(),
    })
}

impl super::Pbs {
    /// The key file of storage `sid`, if there is one.
    pub fn key(&self, sid: &str) -> Option<&str> {
        self.keys.get(sid).map(String::as_str)
    }

    /// The fingerprint of storage `sid`'s key file, if there is one.
    pub fn key_fingerprint(&self, sid: &str) -> Option<String> {
        let doc: Value = serde_json::from_str(self.key(sid)?).ok()?;
        doc.get("fingerprint")?.as_str().map(str::to_string)
    }

    /// A scenario's storage that names a key's fingerprint has that key
    /// (a key file with that fingerprint).
    pub fn declare_key(&mut self, sid: &str, fingerprint: &str) {
        let doc = serde_json::json!({
            "kdf": null,
            "data": B64.encode(Sha256::digest(format!("fake-pve key {fingerprint}").as_bytes())),
            "fingerprint": fingerprint,
        });
        self.keys.insert(
            sid.to_string(),
            serde_json::to_string_pretty(&doc).unwrap_or_default(),
        );
    }

    /// `on_add_hook`: the key given (or `autogen`) is written to the key
    /// file and its fingerprint to `storage.cfg`; `master-pubkey` needs
    /// a key. Answers the key generated or given (the call's `config`).
    ///
    /// # Errors
    /// [`NOT_A_KEY`], [`MASTER_WITHOUT_KEY`].
    pub fn on_add_hook(
        &mut self,
        s: &mut Storage,
        key: Option<&str>,
        master_pubkey: bool,
        rq: &mut Context,
        now: i64,
    ) -> Result<Option<String>, &'static str> {
        let returned = match key {
            Some(k) => Some(self.set_key(s, k, rq, now)?),
            None => {
                self.keys.remove(&s.storage);
                None
            }
        };
        if master_pubkey {
            if !s.options.contains_key("encryption-key") {
                self.keys.remove(&s.storage);
                return Err(MASTER_WITHOUT_KEY);
            }
            s.options.insert("master-pubkey".into(), "1".into());
        }
        Ok(returned)
    }

    /// `on_update_hook`: a key given replaces the key file, a deleted
    /// `encryption-key` removes it; `master-pubkey` set or deleted.
    ///
    /// # Errors
    /// [`NOT_A_KEY`].
    pub fn on_update_hook(
        &mut self,
        s: &mut Storage,
        key: Option<Option<&str>>,
        master_pubkey: Option<bool>,
        rq: &mut Context,
        now: i64,
    ) -> Result<Option<String>, &'static str> {
        let returned = match key {
            Some(Some(k)) => Some(self.set_key(s, k, rq, now)?),
            Some(None) => {
                self.keys.remove(&s.storage);
                s.options.remove("encryption-key");
                None
            }
            None => None,
        };
        match master_pubkey {
            Some(true) => {
                s.options.insert("master-pubkey".into(), "1".into());
            }
            Some(false) => {
                s.options.remove("master-pubkey");
            }
            None => {}
        }
        Ok(returned)
    }

    /// `on_delete_hook`: the key file goes with the storage.
    pub fn on_delete_hook(&mut self, sid: &str) {
        self.keys.remove(sid);
    }

    fn set_key(
        &mut self,
        s: &mut Storage,
        given: &str,
        rq: &mut Context,
        now: i64,
    ) -> Result<String, &'static str> {
        let key = if given == "autogen" {
            autogen(rq, now)
        } else {
            given.to_string()
        };
        let value = cfg_value(&key)?;
        self.keys.insert(s.storage.clone(), key.clone());
        s.options.insert("encryption-key".into(), value);
        Ok(key)
    }

    /// What `proxmox-backup-client` makes of a snapshot encrypted with
    /// `fingerprint` when storage `sid` restores it (the manifest's
    /// `check_fingerprint`): `None` when its key matches.
    pub fn restore_key_error(&self, sid: &str, fingerprint: Option<&str>) -> Option<String> {
        let fp = fingerprint?;
        match self.key(sid) {
            None => Some(format!("missing key - manifest was created with key {fp}")),
            Some(_) => {
                let mine = self.key_fingerprint(sid).unwrap_or_default();
                (!mine.eq_ignore_ascii_case(fp)).then(|| {
                    format!("wrong key - manifest's key {fp} does not match provided key {mine}")
                })
            }
        }
    }

    /// `pbs_open_encryption_key`: a storage whose `storage.cfg` names a
    /// key it has no key file for cannot back up.
    pub fn missing_key_error(&self, s: &Storage) -> Option<String> {
        let fp = s.options.get("encryption-key")?;
        self.key(&s.storage)
            .is_none()
            .then(|| format!("encryption configured ('{fp}') but no encryption key file found!"))
    }

    /// The `--crypt-mode=...` options `proxmox-backup-client` runs with
    /// for storage `sid` (the key is passed as an open descriptor).
    pub fn crypt_args(&self, sid: &str) -> &'static str {
        if self.key(sid).is_some() {
            "--crypt-mode=encrypt --keyfd=14"
        } else {
            "--crypt-mode=none"
        }
    }
}

/// How `run_command` fails a `proxmox-backup-client restore` of
/// `files` from snapshot `name` (`backup/...` or `vm/...`) of storage `s`.
pub fn restore_command_failed(pbs: &super::Pbs, s: &Storage, name: &str, files: &str) -> String {
    let snap = name.strip_prefix("backup/").unwrap_or(name);
    let ns = super::storage_ns(s);
    let ns_arg = if ns.is_empty() {
        String::new()
    } else {
        format!(" --ns {ns}")
    };
    format!(
        "command '/usr/bin/proxmox-backup-client restore {} {snap} {files} --repository {}{ns_arg}' failed: exit code 255",
        pbs.crypt_args(&s.storage),
        super::repository(s)
    )
}
