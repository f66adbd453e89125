//! Typed property strings: the `key=value,...` values of VM settings
//! such as `net0`, `scsi0` and `ipconfig0`, parsed and printed with
//! pve-schema's codec and the formats of the official schema, so that
//! what the client builds is what PVE would write in a config.
//!
//! ```
//! use pve_client::propstring::{Disk, IpConfig, NetworkDevice};
//!
//! let net = NetworkDevice {
//!     macaddr: Some("BC:24:11:2E:5A:01".into()),
//!     bridge: Some("vmbr0".into()),
//!     tag: Some(100),
//!     firewall: Some(true),
//!     ..NetworkDevice::new("virtio")
//! };
//! assert_eq!(net.to_string(), "virtio=BC:24:11:2E:5A:01,bridge=vmbr0,firewall=1,tag=100");
//!
//! let disk: Disk = "local-lvm:32,ssd=on,discard=on".parse()?;
//! assert_eq!(disk.ssd, Some(true));
//! assert_eq!(disk.to_string(), "local-lvm:32,discard=on,ssd=1");
//!
//! assert_eq!(IpConfig::dhcp().to_string(), "ip=dhcp");
//! let e = NetworkDevice::parse("virtio,tag=5000").unwrap_err();
//! assert_eq!(e.errors()["tag"], "value must have a maximum value of 4094");
//! # Ok::<(), pve_client::propstring::PropertyStringError>(())
//! ```
//!
//! The formats are those of PVE 9.1's `POST /nodes/{node}/qemu`
//! (`create_vm`); [`PropertyString::for_param`] picks another release or
//! parameter. Refusals carry PVE's messages as `parse_property_string`
//! words them outside a parameter (keys without the parameter's name):
//! `invalid key in comma-separated list property: colour`, or `format
//! error` with a message per key.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use pve_schema::{Format, Prop, Release, formats, propstring as codec, validate};

/// Why a property string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", KeyErrors(errors))]
pub struct PropertyStringError {
    message: String,
    errors: BTreeMap<String, String>,
}

struct KeyErrors<'a>(&'a BTreeMap<String, String>);

impl fmt::Display for KeyErrors<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { "; " })?;
            write!(f, "{k}: {v}")?;
        }
        Ok(())
    }
}

impl PropertyStringError {
    /// PVE's message without its trailing newline: `format error` when
    /// keys were refused (see [`PropertyStringError::errors`]), else what
    /// was wrong with the string as a whole.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Key to PVE's message about it (`tag` → `value must have a maximum
    /// value of 4094`), without trailing newlines.
    pub fn errors(&self) -> &BTreeMap<String, String> {
        &self.errors
    }

    fn whole(msg: &str) -> Self {
        Self {
            message: msg.trim_end().to_string(),
            errors: BTreeMap::new(),
        }
    }
}

/// Stands for the parameter name in pve-schema's messages, so that the
/// keys can be read back without it.
const PATH: &str = "\u{1}";

/// Reads `check_format`'s message (`format error\n<path>.<key>: <msg>\n...`)
/// back into per-key errors.
fn read_error(keys: &BTreeMap<String, Prop>, msg: &str) -> PropertyStringError {
    let Some(body) = msg.strip_prefix("format error\n") else {
        return PropertyStringError::whole(msg);
    };
    let marker = format!("{PATH}.");
    let mut errors: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in body.split_inclusive('\n') {
        let start = line
            .strip_prefix(&marker)
            .and_then(|rest| rest.split_once(": "))
            .filter(|(k, _)| keys.contains_key(*k));
        match start {
            Some((k, v)) => {
                errors.insert(k.to_string(), v.to_string());
                current = Some(k.to_string());
            }
            None => {
                if let Some(e) = current.as_ref().and_then(|k| errors.get_mut(k)) {
                    e.push_str(&line.replace(&marker, ""));
                }
            }
        }
    }
    for v in errors.values_mut() {
        *v = v.trim_end().to_string();
    }
    PropertyStringError {
        message: "format error".into(),
        errors,
    }
}

/// The keys of a property-string format.
fn keys_of(format: &Format) -> &BTreeMap<String, Prop> {
    static NONE: BTreeMap<String, Prop> = BTreeMap::new();
    match format {
        Format::Object(keys) => keys,
        Format::Named(_) => &NONE,
    }
}

/// Any property string, with the format that checks and prints it.
#[derive(Clone)]
pub struct PropertyString {
    format: &'static Format,
    values: BTreeMap<String, String>,
}

impl fmt::Debug for PropertyString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PropertyString").field(&self.values).finish()
    }
}

impl PartialEq for PropertyString {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl PropertyString {
    /// The format of `param` (`net0`, `scsi[n]`, `ipconfig2`, `agent`,
    /// ...) of `method` on `template` (`POST`, `/nodes/{node}/qemu`) in
    /// `release`; `None` when that parameter is no property string.
    pub fn for_param(
        release: Release,
        method: &str,
        template: &str,
        param: &str,
    ) -> Option<&'static Format> {
        let ep = pve_schema::spec(release).endpoint(method, template)?;
        let p = validate::lookup(&ep.parameters.properties, param)?;
        p.format.as_ref().filter(|f| matches!(f, Format::Object(_)))
    }

    /// The format of a `create_vm` parameter in PVE 9.1 (`net0`,
    /// `scsi0`, `ipconfig0`, `agent`, `efidisk0`, ...).
    pub fn qemu_format(param: &str) -> Option<&'static Format> {
        Self::for_param(Release::V9_1, "POST", "/nodes/{node}/qemu", param)
    }

    /// An empty property string of `format`.
    pub fn new(format: &'static Format) -> Self {
        Self {
            format,
            values: BTreeMap::new(),
        }
    }

    /// Parses and checks `text` as PVE does: a value without `key=` goes
    /// to the default key, aliases are resolved (`virtio=MAC` is
    /// `model=virtio,macaddr=MAC`), booleans become `1`/`0`, and every
    /// value is checked against its key's type, format and range.
    ///
    /// # Errors
    /// PVE's message for a malformed string, or `format error` with the
    /// refused keys.
    pub fn parse(format: &'static Format, text: &str) -> Result<Self, PropertyStringError> {
        let values = codec::parse(keys_of(format), text)
            .map_err(|e| PropertyStringError::whole(&e.to_string()))?;
        let ps = Self { format, values };
        ps.check()?;
        Ok(ps)
    }

    /// Checks the values as [`PropertyString::parse`] does.
    ///
    /// # Errors
    /// As [`PropertyString::parse`].
    pub fn check(&self) -> Result<(), PropertyStringError> {
        validate::check_format(self.format, &self.to_string(), PATH)
            .map_err(|e| read_error(keys_of(self.format), &e.to_string()))
    }

    /// The value of `key` (canonical, after aliases), as text.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// A boolean value (`1`/`0`, or any of PVE's spellings).
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(codec::parse_boolean)
    }

    /// Sets `key`; booleans become `1`/`0`.
    pub fn set(&mut self, key: impl Into<String>, value: impl crate::transport::ParamValue) {
        self.values.insert(key.into(), value.to_param());
    }

    /// Sets `key` when there is a value.
    pub fn set_opt<V: crate::transport::ParamValue>(&mut self, key: &str, value: Option<V>) {
        if let Some(v) = value {
            self.set(key, v);
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.values.remove(key)
    }

    /// Every key and value.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    /// The format.
    pub fn format(&self) -> &'static Format {
        self.format
    }

    /// The keys of the format that a typed struct does not model.
    fn rest(&self, modelled: &[&str]) -> BTreeMap<String, String> {
        self.values
            .iter()
            .filter(|(k, _)| !modelled.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl fmt::Display for PropertyString {
    /// PVE's canonical order: the default key (without `key=`), required
    /// keys, then the rest alphabetically.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&codec::print(keys_of(self.format), &self.values))
    }
}

/// The format of a `create_vm` parameter that the schema is known to
/// have (the client's tests check each one).
fn qemu(param: &str) -> &'static Format {
    static EMPTY: Format = Format::Named(String::new());
    PropertyString::qemu_format(param).unwrap_or(&EMPTY)
}

fn num<T: FromStr>(ps: &PropertyString, key: &str) -> Option<T> {
    ps.get(key).and_then(|v| v.parse().ok())
}

fn text_of(ps: &PropertyString, key: &str) -> Option<String> {
    ps.get(key).map(str::to_string)
}

/// `Display`, `FromStr` and `TryFrom<&str>` through `parse` and
/// `to_property_string`.
macro_rules! text_forms {
    ($t:ty) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_property_string(), f)
            }
        }

        impl FromStr for $t {
            type Err = PropertyStringError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }

        impl TryFrom<&str> for $t {
            type Error = PropertyStringError;

            fn try_from(s: &str) -> Result<Self, Self::Error> {
                Self::parse(s)
            }
        }
    };
}

/// A VM network device, `net[n]`:
/// `virtio=BC:24:11:2E:5A:01,bridge=vmbr0,firewall=1,tag=100`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NetworkDevice {
    /// The NIC model (`virtio`, `e1000`, `vmxnet3`, ...).
    pub model: String,
    /// The MAC address; PVE generates one when left out.
    pub macaddr: Option<String>,
    /// The bridge to attach to (`vmbr0`).
    pub bridge: Option<String>,
    /// The VLAN tag (1 - 4094).
    pub tag: Option<u16>,
    /// Whether the firewall applies.
    pub firewall: Option<bool>,
    /// MTU (1 - 65520; 1 means the bridge's).
    pub mtu: Option<u16>,
    /// Rate limit in MB/s.
    pub rate: Option<f64>,
    /// Packet queues (0 - 64).
    pub queues: Option<u8>,
    /// Whether the link is down.
    pub link_down: Option<bool>,
    /// VLAN trunks, `;`-separated IDs or ranges (`10;20-30`).
    pub trunks: Option<String>,
    /// Keys of later releases this struct does not model.
    pub extra: BTreeMap<String, String>,
}

const NET_KEYS: &[&str] = &[
    "model",
    "macaddr",
    "bridge",
    "tag",
    "firewall",
    "mtu",
    "rate",
    "queues",
    "link_down",
    "trunks",
];

impl NetworkDevice {
    /// A device of `model`, everything else unset.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }

    /// Parses a `net[n]` value.
    ///
    /// # Errors
    /// PVE's messages, as [`PropertyString::parse`].
    pub fn parse(text: &str) -> Result<Self, PropertyStringError> {
        let ps = PropertyString::parse(qemu("net0"), text)?;
        Ok(Self {
            model: text_or_default(&ps, "model"),
            macaddr: text_of(&ps, "macaddr"),
            bridge: text_of(&ps, "bridge"),
            tag: num(&ps, "tag"),
            firewall: ps.get_bool("firewall"),
            mtu: num(&ps, "mtu"),
            rate: num(&ps, "rate"),
            queues: num(&ps, "queues"),
            link_down: ps.get_bool("link_down"),
            trunks: text_of(&ps, "trunks"),
            extra: ps.rest(NET_KEYS),
        })
    }

    /// The generic form, to check ([`PropertyString::check`]) or print.
    pub fn to_property_string(&self) -> PropertyString {
        let mut ps = PropertyString::new(qemu("net0"));
        ps.set("model", &self.model);
        ps.set_opt("macaddr", self.macaddr.as_deref());
        ps.set_opt("bridge", self.bridge.as_deref());
        ps.set_opt("tag", self.tag);
        ps.set_opt("firewall", self.firewall);
        ps.set_opt("mtu", self.mtu);
        ps.set_opt("rate", self.rate);
        ps.set_opt("queues", self.queues);
        ps.set_opt("link_down", self.link_down);
        ps.set_opt("trunks", self.trunks.as_deref());
        for (k, v) in &self.extra {
            ps.set(k.clone(), v);
        }
        ps
    }
}

fn text_or_default(ps: &PropertyString, key: &str) -> String {
    ps.get(key).unwrap_or_default().to_string()
}

text_forms!(NetworkDevice);

/// A VM disk, `scsi[n]` (and, with the keys each bus has, `virtio[n]`,
/// `sata[n]`, `ide[n]`): `local-lvm:32,discard=on,iothread=1,ssd=1`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Disk {
    /// The volume (`local-lvm:vm-100-disk-0`), `STORAGE:SIZE_IN_GiB` to
    /// allocate a new one (`local-lvm:32`), `STORAGE:0` with
    /// `import_from`, an ISO for a CD-ROM, or `none`.
    pub file: String,
    /// The size PVE records (`32G`); informational, PVE sets it.
    pub size: Option<String>,
    /// `disk` (PVE's default) or `cdrom`.
    pub media: Option<String>,
    /// The image format (`raw`, `qcow2`, `vmdk`, ...).
    pub format: Option<String>,
    /// The cache mode (`none`, `writeback`, `writethrough`, `directsync`,
    /// `unsafe`).
    pub cache: Option<String>,
    /// Pass discard requests (`on`: true, `ignore`: false).
    pub discard: Option<bool>,
    /// Show the disk as an SSD.
    pub ssd: Option<bool>,
    /// A dedicated I/O thread (needs the `virtio-scsi-single` controller
    /// on SCSI).
    pub iothread: Option<bool>,
    /// Whether backups include it (PVE's default: yes).
    pub backup: Option<bool>,
    /// An image to import into the new volume (`local:import/disk.qcow2`
    /// or an absolute path).
    pub import_from: Option<String>,
    /// Every other key (`aio`, `iops_rd`, `mbps_wr`, `serial`, ...), as
    /// text.
    pub extra: BTreeMap<String, String>,
}

const DISK_KEYS: &[&str] = &[
    "file",
    "size",
    "media",
    "format",
    "cache",
    "discard",
    "ssd",
    "iothread",
    "backup",
    "import-from",
];

impl Disk {
    /// A disk on `file`, everything else unset.
    pub fn new(file: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            ..Self::default()
        }
    }

    /// Parses a `scsi[n]` value.
    ///
    /// # Errors
    /// PVE's messages, as [`PropertyString::parse`].
    pub fn parse(text: &str) -> Result<Self, PropertyStringError> {
        Self::parse_as("scsi0", text)
    }

    /// Parses the value of another disk parameter of `create_vm`
    /// (`virtio0`, `sata1`, `ide2`), checked with that bus's keys.
    ///
    /// # Errors
    /// PVE's messages, as [`PropertyString::parse`]; `param` must name a
    /// disk parameter.
    pub fn parse_as(param: &str, text: &str) -> Result<Self, PropertyStringError> {
        let format = PropertyString::qemu_format(param)
            .filter(|f| keys_of(f).contains_key("file"))
            .ok_or_else(|| {
                PropertyStringError::whole(&format!("'{param}' is no disk parameter"))
            })?;
        let ps = PropertyString::parse(format, text)?;
        Ok(Self {
            file: text_or_default(&ps, "file"),
            size: ps.get("size").map(codec::format_size),
            media: text_of(&ps, "media"),
            format: text_of(&ps, "format"),
            cache: text_of(&ps, "cache"),
            discard: ps.get("discard").map(|d| d == "on"),
            ssd: ps.get_bool("ssd"),
            iothread: ps.get_bool("iothread"),
            backup: ps.get_bool("backup"),
            import_from: text_of(&ps, "import-from"),
            extra: ps.rest(DISK_KEYS),
        })
    }

    /// The generic form (with the `scsi[n]` format), to check or print.
    pub fn to_property_string(&self) -> PropertyString {
        let mut ps = PropertyString::new(qemu("scsi0"));
        ps.set("file", &self.file);
        ps.set_opt("size", self.size.as_deref());
        ps.set_opt("media", self.media.as_deref());
        ps.set_opt("format", self.format.as_deref());
        ps.set_opt("cache", self.cache.as_deref());
        ps.set_opt(
            "discard",
            self.discard.map(|d| if d { "on" } else { "ignore" }),
        );
        ps.set_opt("ssd", self.ssd);
        ps.set_opt("iothread", self.iothread);
        ps.set_opt("backup", self.backup);
        ps.set_opt("import-from", self.import_from.as_deref());
        for (k, v) in &self.extra {
            ps.set(k.clone(), v);
        }
        ps
    }
}

text_forms!(Disk);

/// Cloud-init addresses of a VM interface, `ipconfig[n]`:
/// `ip=192.0.2.10/24,gw=192.0.2.1` or `ip=dhcp`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpConfig {
    /// `dhcp`, or an IPv4 address with its prefix length (`192.0.2.10/24`).
    pub ip: Option<String>,
    /// The IPv4 gateway (needs a static `ip`).
    pub gw: Option<String>,
    /// `dhcp`, `auto` (SLAAC), or an IPv6 address with its prefix length.
    pub ip6: Option<String>,
    /// The IPv6 gateway (needs a static `ip6`).
    pub gw6: Option<String>,
}

impl IpConfig {
    /// IPv4 by DHCP: `ip=dhcp`.
    pub fn dhcp() -> Self {
        Self {
            ip: Some("dhcp".into()),
            ..Self::default()
        }
    }

    /// A static IPv4 address (`192.0.2.10/24`) and optional gateway.
    pub fn static_v4(cidr: impl Into<String>, gw: Option<&str>) -> Self {
        Self {
            ip: Some(cidr.into()),
            gw: gw.map(str::to_string),
            ..Self::default()
        }
    }

    /// Whether IPv4 comes from DHCP. PVE also uses DHCP when neither
    /// `ip` nor `ip6` is set.
    pub fn is_dhcp(&self) -> bool {
        self.ip.as_deref() == Some("dhcp") || (self.ip.is_none() && self.ip6.is_none())
    }

    /// Parses an `ipconfig[n]` value. Besides the keys, the values are
    /// checked as PVE's formats do (`pve-ipv4-config`,
    /// `pve-ipv6-config`, `ipv4`, `ipv6`), which the schema only names.
    ///
    /// # Errors
    /// PVE's messages, as [`PropertyString::parse`].
    pub fn parse(text: &str) -> Result<Self, PropertyStringError> {
        let ps = PropertyString::parse(qemu("ipconfig0"), text)?;
        let mut errors = BTreeMap::new();
        let mut value = |key: &str, ok: &dyn Fn(&str) -> Result<(), IpConfigRefusal>| {
            let v = ps.get(key).map(str::to_string);
            if let Some(text) = &v
                && let Err(m) = ok(text)
            {
                errors.insert(
                    key.to_string(),
                    format!("invalid format - {}", m.to_string().trim_end()),
                );
            }
            v
        };
        let ip = value("ip", &|v| {
            if matches!(v, "dhcp" | "manual") || formats::check("CIDRv4", v).is_ok() {
                Ok(())
            } else {
                Err(IpConfigRefusal::Ipv4Config)
            }
        });
        let gw = value("gw", &|v| {
            formats::check("ipv4", v).map_err(IpConfigRefusal::Format)
        });
        let ip6 = value("ip6", &|v| {
            if matches!(v, "dhcp" | "auto" | "manual") || formats::check("CIDRv6", v).is_ok() {
                Ok(())
            } else {
                Err(IpConfigRefusal::Ipv6Config)
            }
        });
        let gw6 = value("gw6", &|v| {
            formats::check("ipv6", v).map_err(IpConfigRefusal::Format)
        });
        if !errors.is_empty() {
            return Err(PropertyStringError {
                message: "format error".into(),
                errors,
            });
        }
        Ok(Self { ip, gw, ip6, gw6 })
    }

    /// The generic form, to check or print.
    pub fn to_property_string(&self) -> PropertyString {
        let mut ps = PropertyString::new(qemu("ipconfig0"));
        ps.set_opt("ip", self.ip.as_deref());
        ps.set_opt("gw", self.gw.as_deref());
        ps.set_opt("ip6", self.ip6.as_deref());
        ps.set_opt("gw6", self.gw6.as_deref());
        ps
    }
}

text_forms!(IpConfig);

/// Why [`IpConfig::parse`] refuses one key's value; its text follows
/// `invalid format - ` in the key's message.
#[derive(Debug, thiserror::Error)]
enum IpConfigRefusal {
    /// `ip` is neither `dhcp`, `manual` nor an IPv4 CIDR.
    #[error("value does not look like a valid ipv4 network configuration")]
    Ipv4Config,
    /// `ip6` is neither `dhcp`, `auto`, `manual` nor an IPv6 CIDR.
    #[error("value does not look like a valid ipv6 network configuration")]
    Ipv6Config,
    /// A gateway that the schema's format (`ipv4`, `ipv6`) refuses, in
    /// its words.
    #[error("{0}")]
    Format(pve_schema::FormatError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn the_formats_exist_in_every_release() {
        for release in [Release::V8_4, Release::V9_1, Release::V9_2] {
            for param in [
                "net0",
                "net31",
                "scsi0",
                "scsi30",
                "ipconfig0",
                "virtio15",
                "sata5",
                "ide3",
            ] {
                assert!(
                    PropertyString::for_param(release, "POST", "/nodes/{node}/qemu", param)
                        .is_some(),
                    "{release:?} {param}"
                );
            }
            assert!(
                PropertyString::for_param(release, "POST", "/nodes/{node}/qemu", "net32").is_none()
            );
            assert!(
                PropertyString::for_param(release, "POST", "/nodes/{node}/qemu", "name").is_none()
            );
        }
    }

    #[rstest]
    #[case(
        "virtio=BC:24:11:2E:5A:01,bridge=vmbr0,firewall=1,tag=100",
        "virtio=BC:24:11:2E:5A:01,bridge=vmbr0,firewall=1,tag=100"
    )]
    #[case(
        "tag=100,firewall=on,bridge=vmbr0,virtio=BC:24:11:2E:5A:01",
        "virtio=BC:24:11:2E:5A:01,bridge=vmbr0,firewall=1,tag=100"
    )]
    #[case(
        "model=virtio,macaddr=BC:24:11:2E:5A:01,bridge=vmbr0",
        "virtio=BC:24:11:2E:5A:01,bridge=vmbr0"
    )]
    #[case("virtio,bridge=vmbr0", "virtio,bridge=vmbr0")]
    #[case(
        "bridge=vmbr1,model=e1000,link_down=yes,mtu=1,queues=4,rate=12.5,trunks=10;20-30",
        "e1000,bridge=vmbr1,link_down=1,mtu=1,queues=4,rate=12.5,trunks=10;20-30"
    )]
    fn network_devices_round_trip(#[case] given: &str, #[case] canonical: &str) {
        let n = NetworkDevice::parse(given).expect("valid");
        assert_eq!(n.to_string(), canonical);
        assert_eq!(NetworkDevice::parse(canonical).expect("valid"), n);
    }

    #[test]
    fn network_device_fields() {
        let n: NetworkDevice =
            "virtio=BC:24:11:2E:5A:01,bridge=vmbr0,firewall=1,tag=100,link_down=0"
                .parse()
                .expect("valid");
        assert_eq!(
            n,
            NetworkDevice {
                macaddr: Some("BC:24:11:2E:5A:01".into()),
                bridge: Some("vmbr0".into()),
                tag: Some(100),
                firewall: Some(true),
                link_down: Some(false),
                ..NetworkDevice::new("virtio")
            }
        );
        assert_eq!(NetworkDevice::new("vmxnet3").to_string(), "vmxnet3");
    }

    #[rstest]
    #[case("virtio,colour=red", "invalid key in comma-separated list property: colour", &[])]
    #[case("virtio,e1000", "duplicate key in comma-separated list property: model", &[])]
    #[case("virtio,bridge=vmbr0,bridge=vmbr1", "duplicate key in comma-separated list property: bridge", &[])]
    #[case("=x", "missing key in comma-separated list property", &[])]
    #[case("virtio,tag=5000", "format error", &[("tag", "value must have a maximum value of 4094")])]
    #[case("virtio,tag=0", "format error", &[("tag", "value must have a minimum value of 1")])]
    #[case("virtio,tag=ten", "format error", &[("tag", "type check ('integer') failed - got 'ten'")])]
    #[case("bridge=vmbr0", "format error", &[("model", "property is missing and it is not optional")])]
    #[case("rtl9000,bridge=vmbr0", "format error", &[("model", "value 'rtl9000' does not have a value in the enumeration 'e1000, e1000-82540em, e1000-82544gc, e1000-82545em, e1000e, i82551, i82557b, i82559er, ne2k_isa, ne2k_pci, pcnet, rtl8139, virtio, vmxnet3'")])]
    #[case("virtio,bridge=vm br", "format error", &[("bridge", "invalid format - invalid bridge ID 'vm br'")])]
    #[case("virtio=01:24:11:00:00:01", "format error", &[("macaddr", "invalid format - value does not look like a valid unicast MAC address")])]
    #[case("virtio,firewall=maybe", "format error", &[("firewall", "type check ('boolean') failed - got 'maybe'")])]
    #[case("virtio,trunks=10,20", "duplicate key in comma-separated list property: model", &[])]
    #[case("virtio,trunks=a;b", "format error", &[("trunks", "value does not match the regex pattern")])]
    #[case("virtio,tag=0,mtu=0", "format error", &[("mtu", "value must have a minimum value of 1"), ("tag", "value must have a minimum value of 1")])]
    fn network_device_refusals(
        #[case] given: &str,
        #[case] message: &str,
        #[case] errors: &[(&str, &str)],
    ) {
        let e = NetworkDevice::parse(given).expect_err("refused");
        assert_eq!(e.message(), message, "{e}");
        let want: BTreeMap<String, String> = errors
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(e.errors(), &want);
    }

    #[rstest]
    #[case("local-lvm:32,discard=on,ssd=1", "local-lvm:32,discard=on,ssd=1")]
    #[case("ssd=on,discard=on,file=local-lvm:32", "local-lvm:32,discard=on,ssd=1")]
    #[case(
        "volume=local-lvm:vm-100-disk-0,iothread=1,cache=writeback,size=34359738368",
        "local-lvm:vm-100-disk-0,cache=writeback,iothread=1,size=32G"
    )]
    #[case("local:iso/debian.iso,media=cdrom", "local:iso/debian.iso,media=cdrom")]
    #[case(
        "local-lvm:0,import-from=local:import/disk.qcow2,format=raw,backup=0",
        "local-lvm:0,backup=0,format=raw,import-from=local:import/disk.qcow2"
    )]
    #[case(
        "local-lvm:32,aio=io_uring,iops_rd=500,discard=ignore",
        "local-lvm:32,aio=io_uring,discard=ignore,iops_rd=500"
    )]
    fn disks_round_trip(#[case] given: &str, #[case] canonical: &str) {
        let d = Disk::parse(given).expect("valid");
        assert_eq!(d.to_string(), canonical);
        assert_eq!(Disk::parse(canonical).expect("valid"), d);
    }

    #[test]
    fn disk_fields() {
        let d: Disk = "local-lvm:vm-100-disk-0,aio=native,discard=on,iothread=1,size=32G,ssd=1"
            .parse()
            .expect("valid");
        assert_eq!(d.file, "local-lvm:vm-100-disk-0");
        assert_eq!(d.size.as_deref(), Some("32G"));
        assert_eq!(
            (d.discard, d.ssd, d.iothread),
            (Some(true), Some(true), Some(true))
        );
        assert_eq!(d.extra.get("aio").map(String::as_str), Some("native"));
        let built = Disk {
            discard: Some(true),
            ssd: Some(true),
            ..Disk::new("local-lvm:32")
        };
        assert_eq!(built.to_string(), "local-lvm:32,discard=on,ssd=1");
        // virtio disks have no `ssd`.
        let e = Disk::parse_as("virtio0", "local-lvm:32,ssd=1").expect_err("refused");
        assert_eq!(
            e.message(),
            "invalid key in comma-separated list property: ssd"
        );
        assert_eq!(
            Disk::parse_as("net0", "x").expect_err("no disk").message(),
            "'net0' is no disk parameter"
        );
    }

    #[rstest]
    #[case("local-lvm:32,cache=fast", &[("cache", "value 'fast' does not have a value in the enumeration 'none, writethrough, writeback, unsafe, directsync'")])]
    #[case("local-lvm:32,discard=yes", &[("discard", "value 'yes' does not have a value in the enumeration 'ignore, on'")])]
    #[case("local-lvm:32,size=32X", &[("size", "invalid format - value does not look like a valid disk size: 32X")])]
    #[case("local-lvm:32,media=floppy", &[("media", "value 'floppy' does not have a value in the enumeration 'cdrom, disk'")])]
    #[case("local-lvm:32,queues=1", &[("queues", "value must have a minimum value of 2")])]
    #[case("discard=on", &[("file", "property is missing and it is not optional")])]
    fn disk_refusals(#[case] given: &str, #[case] errors: &[(&str, &str)]) {
        let e = Disk::parse(given).expect_err("refused");
        assert_eq!(e.message(), "format error", "{e}");
        let want: BTreeMap<String, String> = errors
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(e.errors(), &want);
    }

    #[rstest]
    #[case("ip=dhcp", "ip=dhcp")]
    #[case("gw=192.0.2.1,ip=192.0.2.10/24", "gw=192.0.2.1,ip=192.0.2.10/24")]
    #[case("ip6=auto,ip=dhcp", "ip=dhcp,ip6=auto")]
    #[case(
        "ip6=2001:db8::10/64,gw6=2001:db8::1",
        "gw6=2001:db8::1,ip6=2001:db8::10/64"
    )]
    fn ip_configs_round_trip(#[case] given: &str, #[case] canonical: &str) {
        let c = IpConfig::parse(given).expect("valid");
        assert_eq!(c.to_string(), canonical);
        assert_eq!(IpConfig::parse(canonical).expect("valid"), c);
    }

    #[test]
    fn ip_config_helpers() {
        assert!(IpConfig::dhcp().is_dhcp());
        assert!(IpConfig::default().is_dhcp());
        let s = IpConfig::static_v4("192.0.2.10/24", Some("192.0.2.1"));
        assert!(!s.is_dhcp());
        assert_eq!(s.to_string(), "gw=192.0.2.1,ip=192.0.2.10/24");
    }

    #[rstest]
    #[case(
        "ip=192.0.2.10",
        "ip",
        "invalid format - value does not look like a valid ipv4 network configuration"
    )]
    #[case(
        "ip=dhcp,gw=192.0.2",
        "gw",
        "invalid format - value does not look like a valid IPv4 address"
    )]
    #[case(
        "ip6=slaac",
        "ip6",
        "invalid format - value does not look like a valid ipv6 network configuration"
    )]
    #[case(
        "ip6=2001:db8::10/64,gw6=zz::1",
        "gw6",
        "invalid format - value does not look like a valid IPv6 address"
    )]
    fn ip_config_refusals(#[case] given: &str, #[case] key: &str, #[case] msg: &str) {
        let e = IpConfig::parse(given).expect_err("refused");
        assert_eq!(e.message(), "format error");
        assert_eq!(e.errors().get(key).map(String::as_str), Some(msg), "{e}");
        let unknown = IpConfig::parse("ip=dhcp,mask=24").expect_err("refused");
        assert_eq!(
            unknown.message(),
            "invalid key in comma-separated list property: mask"
        );
    }

    #[test]
    fn generic_property_strings() {
        let agent = PropertyString::qemu_format("agent").expect("agent is a property string");
        let mut ps = PropertyString::parse(agent, "1,fstrim_cloned_disks=1").expect("valid");
        assert_eq!(ps.get_bool("enabled"), Some(true));
        ps.set("type", "virtio");
        assert_eq!(ps.to_string(), "1,fstrim_cloned_disks=1,type=virtio");
        ps.set("type", "carrier-pigeon");
        let e = ps.check().expect_err("refused");
        assert_eq!(e.errors().keys().collect::<Vec<_>>(), ["type"]);
        assert_eq!(ps.remove("type").as_deref(), Some("carrier-pigeon"));
        assert!(ps.check().is_ok());
        assert_eq!(
            e.to_string(),
            "format error: type: value 'carrier-pigeon' does not have a value in the enumeration 'virtio, isa'"
        );
    }
}
