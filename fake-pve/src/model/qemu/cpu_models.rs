//! Custom CPU models as qemu-server keeps them in
//! `/etc/pve/virtual-guest/cpu-models.conf` (`CPUConfig.pm`: a section
//! `cpu-model: <name>` per model), and as PVE 9.2's API changes them
//! (pve-manager `API2/Cluster/Qemu/CustomCPUModels.pm`). A VM names one
//! as `cpu: custom-<name>`; older releases read the file but have no API
//! to write it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::sha1_hex;
use crate::model::{Error, Result};

/// The message of a digest that no longer matches.
const MODIFIED: &str = "detected modified configuration - file changed by other user? Try again.";

/// qemu-server's default `reported-model`, written when none is given.
pub const DEFAULT_REPORTED_MODEL: &str = "kvm64";

/// The properties of a model (`$cpu_fmt`), in the file's order.
pub const PROPERTIES: &[&str] = &[
    "cputype",
    "flags",
    "guest-phys-bits",
    "hidden",
    "hv-vendor-id",
    "level",
    "phys-bits",
    "reported-model",
];

/// One custom model's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[serde(deny_unknown_fields)]
pub struct CpuModel {
    /// The model and vendor the guest sees (`kvm64` when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_model: Option<String>,
    /// `+FLAG;-FLAG`: any flag QEMU knows, not only the VM-specific ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
    /// Do not identify as a KVM guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
    /// The Hyper-V vendor id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hv_vendor_id: Option<String>,
    /// The physical address bits reported (`8`-`64` or `host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phys_bits: Option<String>,
    /// The physical address bits available to the guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_phys_bits: Option<u64>,
    /// The highest basic CPUID leaf (9.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u64>,
}

/// A property's value as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// A text value.
    Text(String),
    /// A number.
    Number(u64),
    /// A 0/1 flag.
    Flag(bool),
}

impl CpuModel {
    /// The set properties in the file's order, `cputype` aside.
    pub fn settings(&self) -> Vec<(&'static str, Setting)> {
        let text = |v: &Option<String>| v.clone().map(Setting::Text);
        [
            ("flags", text(&self.flags)),
            ("guest-phys-bits", self.guest_phys_bits.map(Setting::Number)),
            ("hidden", self.hidden.map(Setting::Flag)),
            ("hv-vendor-id", text(&self.hv_vendor_id)),
            ("level", self.level.map(Setting::Number)),
            ("phys-bits", text(&self.phys_bits)),
            ("reported-model", text(&self.reported_model)),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }

    /// Sets the given properties over the model's.
    fn merge(&mut self, given: CpuModel) {
        let CpuModel {
            reported_model,
            flags,
            hidden,
            hv_vendor_id,
            phys_bits,
            guest_phys_bits,
            level,
        } = given;
        self.reported_model = reported_model.or(self.reported_model.take());
        self.flags = flags.or(self.flags.take());
        self.hidden = hidden.or(self.hidden.take());
        self.hv_vendor_id = hv_vendor_id.or(self.hv_vendor_id.take());
        self.phys_bits = phys_bits.or(self.phys_bits.take());
        self.guest_phys_bits = guest_phys_bits.or(self.guest_phys_bits.take());
        self.level = level.or(self.level.take());
    }

    /// Whether the property is set.
    fn has(&self, key: &str) -> bool {
        key == "cputype" || self.settings().iter().any(|(k, _)| *k == key)
    }

    /// Removes a property.
    fn clear(&mut self, key: &str) {
        match key {
            "reported-model" => self.reported_model = None,
            "flags" => self.flags = None,
            "hidden" => self.hidden = None,
            "hv-vendor-id" => self.hv_vendor_id = None,
            "phys-bits" => self.phys_bits = None,
            "guest-phys-bits" => self.guest_phys_bits = None,
            "level" => self.level = None,
            _ => {}
        }
    }

    /// What `get_custom_model` gives: only the properties whose value
    /// Perl takes as true (a `hidden` or `level` of 0 is left out).
    pub fn truthy_settings(&self) -> Vec<(&'static str, Setting)> {
        self.settings()
            .into_iter()
            .filter(|(_, v)| match v {
                Setting::Text(t) => !t.is_empty() && t != "0",
                Setting::Number(n) => *n != 0,
                Setting::Flag(b) => *b,
            })
            .collect()
    }
}

/// `cpu-models.conf`: the custom models by name (without `custom-`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CpuModels {
    ids: BTreeMap<String, CpuModel>,
}

/// The name a call gives, without its optional `custom-` prefix.
pub fn bare(name: &str) -> &str {
    name.strip_prefix("custom-").unwrap_or(name)
}

/// `pve_verify_configid`.
fn verify_configid(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(Error::failed(format!("invalid configuration ID '{name}'")))
    }
}

impl CpuModels {
    /// Whether no custom model is defined.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Every model by name, sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &CpuModel)> {
        self.ids.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The names, without `custom-`.
    pub fn names(&self) -> Vec<String> {
        self.ids.keys().cloned().collect()
    }

    /// `cpu-models.conf` as written.
    pub fn cfg_text(&self) -> String {
        let mut out = String::new();
        for (name, m) in &self.ids {
            out.push_str(&format!("cpu-model: {name}\n"));
            for (k, v) in m.settings() {
                let v = match v {
                    Setting::Text(t) => t,
                    Setting::Number(n) => n.to_string(),
                    Setting::Flag(b) => u8::from(b).to_string(),
                };
                out.push_str(&format!("\t{k} {v}\n"));
            }
            out.push('\n');
        }
        out
    }

    /// The file's digest.
    pub fn digest(&self) -> String {
        sha1_hex(self.cfg_text().as_bytes())
    }

    /// `GET /cluster/qemu/custom-cpu-models/{cputype}`
    /// (`get_custom_model`).
    ///
    /// # Errors
    /// `Custom cputype 'x' not found`.
    pub fn info(&self, name: &str) -> Result<&CpuModel> {
        let name = bare(name);
        self.ids
            .get(name)
            .ok_or_else(|| Error::not_found(format!("Custom cputype '{name}' not found")))
    }

    /// `POST /cluster/qemu/custom-cpu-models`.
    ///
    /// # Errors
    /// `invalid configuration ID 'x'` (the name without its prefix),
    /// `custom CPU model 'x' already exists`.
    pub fn create(&mut self, name: &str, mut given: CpuModel) -> Result<()> {
        let name = bare(name);
        verify_configid(name)?;
        if self.ids.contains_key(name) {
            return Err(Error::exists(format!(
                "custom CPU model '{name}' already exists"
            )));
        }
        given
            .reported_model
            .get_or_insert_with(|| DEFAULT_REPORTED_MODEL.to_string());
        self.ids.insert(name.to_string(), given);
        Ok(())
    }

    /// `PUT /cluster/qemu/custom-cpu-models/{cputype}`: set, then delete.
    ///
    /// # Errors
    /// `cannot delete 'cputype'` / `'reported-model'`, `invalid
    /// configuration ID`, the digest check, `custom CPU model 'x' does
    /// not exist`, `no such option 'x'`, `cannot set and delete property
    /// 'x' at the same time!`.
    pub fn update(
        &mut self,
        name: &str,
        given: CpuModel,
        delete: &[String],
        digest: Option<&str>,
    ) -> Result<()> {
        for fixed in ["cputype", "reported-model"] {
            if delete.iter().any(|d| d == fixed) {
                return Err(Error::failed(format!("cannot delete '{fixed}'")));
            }
        }
        let name = bare(name);
        verify_configid(name)?;
        if let Some(d) = digest
            && d != self.digest()
        {
            return Err(Error::conflict(MODIFIED));
        }
        let Some(model) = self.ids.get(name) else {
            return Err(Error::not_found(format!(
                "custom CPU model '{name}' does not exist"
            )));
        };
        let mut model = model.clone();
        for k in delete {
            if !PROPERTIES.contains(&k.as_str()) {
                return Err(Error::failed(format!("no such option '{k}'")));
            }
            if given.has(k) {
                return Err(Error::failed(format!(
                    "cannot set and delete property '{k}' at the same time!"
                )));
            }
            model.clear(k);
        }
        model.merge(given);
        // The file always names the reported model.
        model
            .reported_model
            .get_or_insert_with(|| DEFAULT_REPORTED_MODEL.to_string());
        self.ids.insert(name.to_string(), model);
        Ok(())
    }

    /// `DELETE /cluster/qemu/custom-cpu-models/{cputype}`: PVE does not
    /// look for VMs that use the model.
    ///
    /// # Errors
    /// `custom CPU model 'x' does not exist`.
    pub fn delete(&mut self, name: &str) -> Result<()> {
        let name = bare(name);
        self.ids
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| Error::not_found(format!("custom CPU model '{name}' does not exist")))
    }

    /// A model a scenario declares, as the file would hold it.
    pub fn declare(&mut self, name: &str, mut model: CpuModel) -> Result<()> {
        let name = bare(name);
        verify_configid(name)?;
        model
            .reported_model
            .get_or_insert_with(|| DEFAULT_REPORTED_MODEL.to_string());
        self.ids.insert(name.to_string(), model);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    fn fast() -> CpuModel {
        CpuModel {
            reported_model: Some("Skylake-Server".into()),
            flags: Some("+avx2;-pcid".into()),
            hidden: Some(false),
            ..CpuModel::default()
        }
    }

    fn one() -> CpuModels {
        let mut m = CpuModels::default();
        m.create("custom-fast", fast()).expect("created");
        m
    }

    #[test]
    fn a_created_model_is_kept_without_its_prefix_and_written_as_the_file() {
        let m = one();
        assert_eq!(m.names(), vec!["fast".to_string()]);
        assert_eq!(
            m.cfg_text(),
            "cpu-model: fast\n\tflags +avx2;-pcid\n\thidden 0\n\treported-model Skylake-Server\n\n"
        );
        assert_eq!(m.digest().len(), 40);
        // `get_custom_model` leaves out what Perl takes as false.
        let info: Vec<&str> = m
            .info("fast")
            .expect("found")
            .truthy_settings()
            .iter()
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(info, vec!["flags", "reported-model"]);
    }

    #[test]
    fn the_reported_model_defaults_to_kvm64() {
        let mut m = CpuModels::default();
        m.create("plain", CpuModel::default()).expect("created");
        assert_eq!(
            m.info("custom-plain")
                .expect("found")
                .reported_model
                .as_deref(),
            Some("kvm64")
        );
    }

    #[rstest]
    #[case("custom-fast", "custom CPU model 'fast' already exists")]
    #[case("custom-1x", "invalid configuration ID '1x'")]
    #[case("custom-a", "invalid configuration ID 'a'")]
    fn creating_refuses(#[case] name: &str, #[case] msg: &str) {
        let mut m = one();
        let e = m.create(name, CpuModel::default()).expect_err("refused");
        assert_eq!(e.to_string(), msg);
        assert_eq!(m, one());
    }

    #[test]
    fn an_update_sets_then_deletes_and_moves_the_digest() {
        let mut m = one();
        let before = m.digest();
        let given = CpuModel {
            level: Some(30),
            ..CpuModel::default()
        };
        m.update("fast", given, &["flags".into()], Some(&before))
            .expect("updated");
        let model = m.info("fast").expect("found");
        assert_eq!(model.level, Some(30));
        assert_eq!(model.flags, None);
        assert_eq!(model.reported_model.as_deref(), Some("Skylake-Server"));
        assert_ne!(m.digest(), before);
    }

    #[rstest]
    #[case("fast", &["cputype"], None, "cannot delete 'cputype'")]
    #[case("fast", &["reported-model"], None, "cannot delete 'reported-model'")]
    #[case("fast", &["colour"], None, "no such option 'colour'")]
    #[case("fast", &["hidden"], None, "cannot set and delete property 'hidden' at the same time!")]
    #[case("slow", &[], None, "custom CPU model 'slow' does not exist")]
    #[case("fast", &[], Some("0000"), MODIFIED)]
    fn an_update_refuses(
        #[case] name: &str,
        #[case] delete: &[&str],
        #[case] digest: Option<&str>,
        #[case] msg: &str,
    ) {
        let mut m = one();
        let given = CpuModel {
            hidden: Some(true),
            ..CpuModel::default()
        };
        let delete: Vec<String> = delete.iter().map(|d| (*d).to_string()).collect();
        let e = m.update(name, given, &delete, digest).expect_err("refused");
        assert_eq!(e.to_string(), msg);
        assert_eq!(m, one());
    }

    #[test]
    fn deleting_needs_the_model() {
        let mut m = one();
        m.delete("custom-fast").expect("deleted");
        assert!(m.is_empty());
        let e = m.delete("fast").expect_err("gone");
        assert_eq!(e.to_string(), "custom CPU model 'fast' does not exist");
        assert_eq!(
            m.info("fast").expect_err("gone").to_string(),
            "Custom cputype 'fast' not found"
        );
    }
}
