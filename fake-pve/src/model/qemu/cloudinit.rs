//! Cloud-init: the changes not yet in the generated ISO (`GET/PUT
//! .../cloudinit`, the `[special:cloudinit]` section) and the generated
//! files (`GET .../cloudinit/dump`), rendered as qemu-server
//! `QemuServer/Cloudinit.pm` renders them for `nocloud` and
//! `configdrive2`.

use std::collections::{BTreeMap, BTreeSet};

use super::{Error, Result, Vm, is_drive_key, is_windows, sha1_hex};
use crate::model::guests::Guests;
use crate::model::nodes::Nodes;

/// `cloudinit_pending_properties`: the cloud-init options, `name` and
/// every `netN`.
fn tracked(key: &str) -> bool {
    super::is_cloudinit_option(key)
        || key == "name"
        || key
            .strip_prefix("net")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the VM has a cloud-init drive (`has_cloudinit`).
pub(super) fn has_cloudinit(conf: &BTreeMap<String, String>) -> bool {
    conf.iter()
        .any(|(k, v)| is_drive_key(k) && v.contains("-cloudinit"))
}

/// `get_cloudinit_format`: `citype`, else `configdrive2` for Windows,
/// else `nocloud`.
fn format(conf: &BTreeMap<String, String>) -> &str {
    if let Some(t) = conf.get("citype") {
        return t;
    }
    if is_windows(conf.get("ostype")) {
        return "configdrive2";
    }
    "nocloud"
}

/// The value of `key=` in a property string, or its first bare value
/// for `default_key`.
fn prop<'a>(value: &'a str, key: &str) -> Option<&'a str> {
    value
        .split(',')
        .find_map(|p| p.strip_prefix(&format!("{key}=")[..]))
}

/// The MAC of a `netN` value (`virtio=BC:24:11:..`, or `macaddr=`).
fn mac_of(value: &str) -> Option<String> {
    value.split(',').find_map(|p| {
        let (_, v) = p.split_once('=')?;
        (v.len() == 17 && v.bytes().filter(|b| *b == b':').count() == 5).then(|| v.to_lowercase())
    })
}

/// `$ipv4_reverse_mask` for a prefix length.
fn netmask(prefix: &str) -> Option<String> {
    let p: u32 = prefix.parse().ok().filter(|p| *p <= 32)?;
    let m = if p == 0 { 0 } else { u32::MAX << (32 - p) };
    let b = m.to_be_bytes();
    Some(format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]))
}

/// `uri_unescape`.
fn uri_unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(h) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(h);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The node's `/etc/resolv.conf` as the emulator imagines it: the
/// gateway of its management network as the only name server.
fn host_dns(node_ip: &str) -> (Vec<String>, Vec<String>) {
    let ns = node_ip
        .rsplit_once('.')
        .map(|(net, _)| vec![format!("{net}.1")])
        .unwrap_or_default();
    (Vec::new(), ns)
}

/// `get_dns_conf`: search domains and name servers.
fn dns(conf: &BTreeMap<String, String>, node_ip: &str) -> (Vec<String>, Vec<String>) {
    let (host_search, host_ns) = host_dns(node_ip);
    let split = |s: &str| -> Vec<String> { s.split_whitespace().map(str::to_string).collect() };
    let search = conf.get("searchdomain").map_or(host_search, |s| split(s));
    let ns = conf.get("nameserver").map_or(host_ns, |s| split(s));
    (search, ns)
}

/// `cloudinit_userdata`.
fn userdata(conf: &BTreeMap<String, String>, vmid: u32, mask_password: bool) -> String {
    let mut hostname = conf
        .get("name")
        .cloned()
        .unwrap_or_else(|| format!("VM{vmid}"));
    let fqdn = if hostname.contains('.') {
        let f = hostname.clone();
        hostname = hostname.split('.').next().unwrap_or_default().to_string();
        f
    } else if let Some(search) = conf.get("searchdomain").filter(|s| !s.is_empty()) {
        format!("{hostname}.{search}")
    } else {
        hostname.clone()
    };
    let mut c = String::from("#cloud-config\n");
    c.push_str(&format!("hostname: {hostname}\n"));
    c.push_str("manage_etc_hosts: true\n");
    c.push_str(&format!("fqdn: {fqdn}\n"));
    let user = conf.get("ciuser");
    if let Some(u) = user {
        c.push_str(&format!("user: {u}\n"));
        if u == "root" {
            c.push_str("disable_root: False\n");
        }
    }
    if let Some(p) = conf.get("cipassword") {
        if mask_password {
            c.push_str("password: **********\n");
        } else {
            c.push_str(&format!("password: {p}\n"));
        }
    }
    if let Some(keys) = conf.get("sshkeys") {
        c.push_str("ssh_authorized_keys:\n");
        for k in uri_unescape(keys).split('\n') {
            let k = k.strip_suffix('\r').unwrap_or(k);
            if k.trim().is_empty() {
                continue;
            }
            c.push_str(&format!("  - {k}\n"));
        }
    }
    c.push_str("chpasswd:\n");
    c.push_str("  expire: False\n");
    if user.is_none_or(|u| u != "root") {
        c.push_str("users:\n");
        c.push_str("  - default\n");
    }
    if conf.get("ciupgrade").is_none_or(|u| u != "0") {
        c.push_str("package_upgrade: true\n");
    }
    c
}

/// The `netN` keys with an `ipconfigN`, in PVE's (string) sort order.
fn ifaces(conf: &BTreeMap<String, String>) -> Vec<(String, String, String)> {
    let mut keys: Vec<&String> = conf
        .keys()
        .filter(|k| {
            k.strip_prefix("net")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    keys.sort();
    keys.into_iter()
        .filter_map(|k| {
            let id = k.trim_start_matches("net").to_string();
            let ipc = conf
                .get(&format!("ipconfig{id}"))
                .filter(|v| !v.is_empty())?;
            Some((id, conf[k].clone(), ipc.clone()))
        })
        .collect()
}

/// `nocloud_network` (network config version 1).
fn nocloud_network(conf: &BTreeMap<String, String>, node_ip: &str) -> Result<String> {
    let mut c = String::from("version: 1\nconfig:\n");
    for (id, net, ipc) in ifaces(conf) {
        let i = "    ";
        let mac = mac_of(&net).ok_or_else(|| {
            Error::failed(format!("network interface 'net{id}' has no mac address"))
        })?;
        c.push_str(&format!(
            "{i}- type: physical\n{i}  name: eth{id}\n{i}  mac_address: '{mac}'\n{i}  subnets:\n"
        ));
        let i = "      ";
        if let Some(ip) = prop(&ipc, "ip") {
            if ip == "dhcp" {
                c.push_str(&format!("{i}- type: dhcp4\n"));
            } else {
                let (addr, mask) = split_ip4(ip)?;
                c.push_str(&format!(
                    "{i}- type: static\n{i}  address: '{addr}'\n{i}  netmask: '{mask}'\n"
                ));
                if let Some(gw) = prop(&ipc, "gw") {
                    c.push_str(&format!("{i}  gateway: '{gw}'\n"));
                }
            }
        }
        if let Some(ip) = prop(&ipc, "ip6") {
            match ip {
                "dhcp" => c.push_str(&format!("{i}- type: dhcp6\n")),
                "auto" => c.push_str(&format!("{i}- type: ipv6_slaac\n")),
                _ => {
                    c.push_str(&format!("{i}- type: static6\n{i}  address: '{ip}'\n"));
                    if let Some(gw) = prop(&ipc, "gw6") {
                        c.push_str(&format!("{i}  gateway: '{gw}'\n"));
                    }
                }
            }
        }
    }
    let i = "    ";
    let (search, ns) = dns(conf, node_ip);
    c.push_str(&format!("{i}- type: nameserver\n"));
    if !ns.is_empty() {
        c.push_str(&format!("{i}  address:\n"));
        for n in &ns {
            c.push_str(&format!("{i}  - '{n}'\n"));
        }
    }
    if !search.is_empty() {
        c.push_str(&format!("{i}  search:\n"));
        for s in &search {
            c.push_str(&format!("{i}  - '{s}'\n"));
        }
    }
    Ok(c)
}

/// `split_ip4`: address and dotted netmask.
fn split_ip4(ip: &str) -> Result<(String, String)> {
    let (addr, prefix) = ip
        .split_once('/')
        .ok_or_else(|| Error::failed(format!("not a CIDR: {ip}")))?;
    let mask = netmask(prefix).ok_or_else(|| Error::failed(format!("not a CIDR: {ip}")))?;
    Ok((addr.to_string(), mask))
}

/// `configdrive2_network` (ifupdown style).
fn configdrive2_network(conf: &BTreeMap<String, String>, node_ip: &str) -> Result<String> {
    let mut c = String::from("auto lo\niface lo inet loopback\n\n");
    let (search, ns) = dns(conf, node_ip);
    if !ns.is_empty() {
        c.push_str(&format!("        dns_nameservers {}\n", ns.join(" ")));
    }
    if !search.is_empty() {
        c.push_str(&format!("        dns_search {}\n", search.join(" ")));
    }
    for (id, _, ipc) in ifaces(conf) {
        let dev = format!("eth{id}");
        c.push_str(&format!("auto {dev}\n"));
        if let Some(ip) = prop(&ipc, "ip") {
            if ip == "dhcp" {
                c.push_str(&format!("iface {dev} inet dhcp\n"));
            } else {
                let (addr, mask) = split_ip4(ip)?;
                c.push_str(&format!(
                    "iface {dev} inet static\n        address {addr}\n        netmask {mask}\n"
                ));
                if let Some(gw) = prop(&ipc, "gw") {
                    c.push_str(&format!("        gateway {gw}\n"));
                }
            }
        }
        if let Some(ip) = prop(&ipc, "ip6") {
            if ip == "auto" || ip == "dhcp" {
                c.push_str(&format!("iface {dev} inet6 {ip}\n"));
            } else {
                let (addr, mask) = ip.split_once('/').unwrap_or((ip, ""));
                c.push_str(&format!(
                    "iface {dev} inet6 static\n        address {addr}\n        netmask {mask}\n"
                ));
                if let Some(gw) = prop(&ipc, "gw6") {
                    c.push_str(&format!("        gateway {gw}\n"));
                }
            }
        }
    }
    Ok(c)
}

/// An option of `GET .../cloudinit`: the value the drive holds, the one
/// pending, or its pending deletion.
#[derive(Debug)]
pub struct CloudinitItem<'a> {
    /// The option.
    pub key: &'a str,
    /// The value the drive holds.
    pub value: Option<&'a str>,
    /// The value not yet on the drive.
    pub pending: Option<&'a str>,
    /// Whether the option's deletion is pending.
    pub delete: bool,
}

/// A cloud-init value as `GET .../cloudinit` shows it: the password
/// hidden.
fn masked<'a>(key: &str, value: &'a str) -> &'a str {
    if key == "cipassword" {
        "**********"
    } else {
        value
    }
}

impl Guests {
    /// `$cloudinit_record_changed`: remembers in `[special:cloudinit]`
    /// what the ISO still holds when a running VM's tracked option
    /// changes.
    pub(in crate::model) fn record_ci_change(
        &mut self,
        vmid: u32,
        key: &str,
        old: Option<&str>,
        new: Option<&str>,
    ) {
        if !tracked(key) {
            return;
        }
        let Some(vm) = self.get_mut(&vmid) else {
            return;
        };
        let ci = &mut vm.ci_changes;
        let recorded = ci.get(key).cloned();
        let mut added: BTreeSet<String> = ci
            .remove("added")
            .unwrap_or_default()
            .split([',', ';', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        match (old, new) {
            (Some(old), Some(new)) => {
                if let Some(r) = &recorded {
                    if r == new {
                        ci.remove(key);
                        added.remove(key);
                    }
                } else if !added.contains(key) {
                    ci.insert(key.to_string(), old.to_string());
                }
            }
            (None, Some(new)) => {
                if let Some(r) = &recorded {
                    if r == new {
                        ci.remove(key);
                        added.remove(key);
                    }
                } else {
                    added.insert(key.to_string());
                }
            }
            (Some(old), None) => {
                if recorded.is_none() && !added.remove(key) {
                    ci.insert(key.to_string(), old.to_string());
                }
            }
            (None, None) => {}
        }
        if !added.is_empty() {
            let list: Vec<String> = added.into_iter().collect();
            ci.insert("added".into(), list.join(","));
        }
    }

    /// `cloudinit_pending`: `{key, value?, pending?, delete?}` per tracked
    /// option.
    ///
    /// # Errors
    /// A missing VM.
    pub fn cloudinit_pending(&self, node: &str, vmid: u32) -> Result<Vec<CloudinitItem<'_>>> {
        static NONE: BTreeMap<String, String> = BTreeMap::new();
        let vm = self.vm(node, vmid)?;
        let conf = &vm.config;
        // The section is only written while a cloud-init drive exists.
        let ci = if has_cloudinit(conf) {
            &vm.ci_changes
        } else {
            &NONE
        };
        let added = ci.get("added").map_or("", String::as_str);
        let added_keys = added.split([',', ';', ' ']).filter(|s| !s.is_empty());
        let mut out = Vec::new();
        for k in added_keys {
            out.push(CloudinitItem {
                key: k,
                value: None,
                pending: conf.get(k).map(|v| masked(k, v)),
                delete: false,
            });
        }
        for (k, v) in conf {
            if !super::is_cloudinit_option(k) || v.is_empty() {
                continue;
            }
            // PVE skips a key whose name occurs in `added` (a regex match).
            if added.contains(k.as_str()) {
                continue;
            }
            out.push(match ci.get(k) {
                Some(old) => CloudinitItem {
                    key: k,
                    value: Some(masked(k, old)),
                    pending: Some(masked(k, v)),
                    delete: false,
                },
                None => CloudinitItem {
                    key: k,
                    value: Some(masked(k, v)),
                    pending: None,
                    delete: false,
                },
            });
        }
        for k in ci.keys() {
            if k == "added" || conf.get(k).is_some_and(|v| !v.is_empty()) {
                continue;
            }
            out.push(CloudinitItem {
                key: k,
                value: None,
                pending: None,
                delete: true,
            });
        }
        Ok(out)
    }

    /// `cloudinit_update`: regenerates the drive, so nothing is pending.
    ///
    /// # Errors
    /// A missing or locked VM.
    pub fn cloudinit_update(&mut self, node: &str, vmid: u32) -> Result<()> {
        let vm = self.vm(node, vmid)?;
        vm.check_lock()?;
        if !has_cloudinit(&vm.config) {
            return Ok(());
        }
        if let Some(vm) = self.get_mut(&vmid) {
            vm.ci_changes.clear();
        }
        Ok(())
    }

    /// `dump_cloudinit_config` for `type` `user`, `network` or `meta`.
    ///
    /// # Errors
    /// A missing VM; an interface without MAC; a bad address.
    pub fn cloudinit_dump(
        &self,
        nodes: &Nodes,
        node: &str,
        vmid: u32,
        kind: &str,
        mask: bool,
    ) -> Result<String> {
        let vm = self.vm(node, vmid)?;
        let node_ip = nodes
            .iter()
            .find(|n| n.name == vm.node)
            .map(|n| n.ip.clone())
            .unwrap_or_default();
        dump(vm, kind, mask, &node_ip)
    }
}

fn dump(vm: &Vm, kind: &str, mask: bool, node_ip: &str) -> Result<String> {
    let conf = &vm.config;
    let nocloud = format(conf) == "nocloud";
    let network = |conf| {
        if nocloud {
            nocloud_network(conf, node_ip)
        } else {
            configdrive2_network(conf, node_ip)
        }
    };
    match kind {
        "user" => Ok(userdata(conf, vm.vmid, mask)),
        "network" => network(conf),
        _ => {
            let user = userdata(conf, vm.vmid, false);
            let net = network(conf)?;
            let uuid = sha1_hex(format!("{user}{net}").as_bytes());
            Ok(if nocloud {
                format!("instance-id: {uuid}\n")
            } else {
                format!(
                    "{{\n     \"uuid\": \"{uuid}\",\n     \"network_config\": {{ \"content_path\": \"/content/0000\" }}\n}}\n"
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(netmask("24").as_deref(), Some("255.255.255.0"));
        assert_eq!(netmask("0").as_deref(), Some("0.0.0.0"));
        assert_eq!(netmask("33"), None);
        assert_eq!(uri_unescape("ssh-ed25519%20AAA%0Ab"), "ssh-ed25519 AAA\nb");
        assert_eq!(
            mac_of("virtio=BC:24:11:AA:BB:CC,bridge=vmbr0").as_deref(),
            Some("bc:24:11:aa:bb:cc")
        );
        assert!(tracked("net0") && tracked("ipconfig3") && tracked("name"));
        assert!(!tracked("cores") && !tracked("network"));
    }
}
