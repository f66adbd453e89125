//! Building a world from a scenario: nodes, storages (the defaults of a
//! fresh install merged with the scenario's), bridges and guests.

use super::*;

impl Scenario {
    /// Builds the cluster this scenario describes.
    ///
    /// # Errors
    /// Names that are invalid, duplicated or refer to nothing.
    pub fn build(
        &self,
        version: PveVersion,
        root_password: &str,
        now: i64,
    ) -> Result<Cluster, ScenarioError> {
        if let Some(world) = &self.world {
            if world.version != version {
                return Err(ScenarioError {
                    file: self.source.clone(),
                    line: None,
                    reason: crate::model::world::release_mismatch(world.version, version),
                });
            }
            return Ok((**world).clone());
        }
        if self.guests_in_text {
            // The guests went into the world this seed built first.
            let again = Self::read(&self.text, &self.source)?;
            return self.build_with(version, root_password, now, again.vms, again.containers);
        }
        self.build_with(
            version,
            root_password,
            now,
            self.vms.clone(),
            self.containers.clone(),
        )
    }

    /// Builds the world a server starts from, and the scenario it keeps
    /// to build it again (a reset). A scenario read from text hands its
    /// guests to the world and reads them from its text when it is built
    /// again: a million guests are not held twice, nor copied.
    ///
    /// # Errors
    /// As [`Scenario::build`].
    pub fn build_seed(
        mut self,
        version: PveVersion,
        root_password: &str,
        now: i64,
    ) -> Result<(Cluster, Self), ScenarioError> {
        if self.world.is_some() || !self.read_from_text || self.guests_in_text {
            let cluster = self.build(version, root_password, now)?;
            return Ok((cluster, self));
        }
        let vms = std::mem::take(&mut self.vms);
        let cts = std::mem::take(&mut self.containers);
        self.guests_in_text = true;
        let cluster = self.build_with(version, root_password, now, vms, cts)?;
        Ok((cluster, self))
    }

    /// [`Scenario::build`] with these guests.
    fn build_with(
        &self,
        version: PveVersion,
        root_password: &str,
        now: i64,
        vm_specs: Vec<VmSpec>,
        ct_specs: Vec<CtSpec>,
    ) -> Result<Cluster, ScenarioError> {
        for call in &self.setup {
            call.check()
                .map_err(|reason| self.err(&call.path, reason))?;
        }
        let mut nodes = Vec::new();
        let mut seen = BTreeSet::new();
        let clustered = self.cluster.is_some() || self.nodes.len() > 1;
        if let Some(c) = &self.cluster
            && !valid_name(c, 15)
        {
            return Err(self.err(c, format!("invalid cluster name '{c}'")));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if !valid_name(&n.name, 63) {
                return Err(self.err(&n.name, format!("invalid node name '{}'", n.name)));
            }
            if !seen.insert(n.name.clone()) {
                return Err(self.dup_err(&n.name, format!("duplicate node name '{}'", n.name)));
            }
            let bridges = n.bridges.clone().unwrap_or_else(|| vec!["vmbr0".into()]);
            for b in &bridges {
                if !valid_bridge(b) {
                    return Err(self.err(b, format!("invalid bridge name '{b}'")));
                }
            }
            let nics = n.nics.clone().unwrap_or_default();
            for nic in &nics {
                if !valid_nic(nic) || bridges.contains(nic) {
                    return Err(self.err(nic, format!("invalid NIC name '{nic}'")));
                }
            }
            if let Some(fp) = &n.fingerprint
                && !valid_fingerprint(fp)
            {
                return Err(self.err(fp, format!("node '{}': invalid fingerprint '{fp}'", n.name)));
            }
            let cpus = n.cpus.unwrap_or(8);
            if cpus == 0 {
                return Err(self.err(&n.name, format!("node '{}' needs at least one cpu", n.name)));
            }
            let idx = u32::try_from(i).unwrap_or(u32::MAX).saturating_add(1);
            nodes.push(Node {
                name: n.name.clone(),
                nodeid: if clustered { idx } else { 0 },
                ip: n
                    .ip
                    .clone()
                    .unwrap_or_else(|| format!("192.0.2.{}", 10 + i)),
                status: n.status,
                cpus,
                sockets: n.sockets.unwrap_or(1).max(1),
                cpu_model: "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz".into(),
                memory: n.memory.map_or(32 * GIB, |m| m.0),
                rootfs: n.disk.map_or(100 * GIB, |m| m.0),
                swap: 8 * GIB,
                level: n.level.clone().unwrap_or_default(),
                boot_time: now - 3 * 86_400 - 4_242 * i64::from(idx),
                ssl_fingerprint: n
                    .fingerprint
                    .clone()
                    .unwrap_or_else(|| fake_fingerprint(&n.name)),
                bridges,
                nics,
                back_at_ms: None,
            });
        }
        let storages = self.build_storages(&nodes)?;
        let access = self.build_access(version, root_password)?;
        // Looked up for every guest: a set, not a walk over the nodes.
        let node_names: std::collections::HashSet<String> =
            nodes.iter().map(|n| n.name.clone()).collect();
        let mut vms = BTreeMap::new();
        for v in vm_specs {
            if !(100..=999_999_999).contains(&v.vmid) {
                return Err(self.err(&v.vmid.to_string(), format!("invalid vmid {}", v.vmid)));
            }
            let node = v.node.unwrap_or_else(|| nodes[0].name.clone());
            if !node_names.contains(&node) {
                return Err(self.err(&node, format!("VM {}: unknown node '{node}'", v.vmid)));
            }
            let raw = v.status.as_deref().unwrap_or("stopped");
            let Some(status) = crate::model::qemu::VmStatus::parse(raw) else {
                return Err(self.err(
                    raw,
                    format!("VM {}: status must be running or stopped", v.vmid),
                ));
            };
            let mut config = v.config;
            if let Some(name) = v.name {
                config.insert("name".into(), name);
            }
            let mut vm = Vm::new(v.vmid, &node, status, config);
            vm.snapshots = self.snapshots_of("VM", v.vmid, &v.snapshots, &vm.config)?;
            vm.pending = v.pending;
            for k in v.pending_delete {
                match k.strip_prefix('!') {
                    Some(k) => vm.kind.pending_delete.insert(k.to_string(), true),
                    None => vm.kind.pending_delete.insert(k, false),
                };
            }
            if vms.insert(v.vmid, vm).is_some() {
                return Err(self.dup_err(&v.vmid.to_string(), format!("duplicate vmid {}", v.vmid)));
            }
        }
        let mut cts = BTreeMap::new();
        for c in ct_specs {
            if !(100..=999_999_999).contains(&c.vmid) {
                return Err(self.err(&c.vmid.to_string(), format!("invalid vmid {}", c.vmid)));
            }
            let node = c.node.unwrap_or_else(|| nodes[0].name.clone());
            if !node_names.contains(&node) {
                return Err(self.err(&node, format!("CT {}: unknown node '{node}'", c.vmid)));
            }
            let raw = c.status.as_deref().unwrap_or("stopped");
            let Some(status) = crate::model::qemu::VmStatus::parse(raw) else {
                return Err(self.err(
                    raw,
                    format!("CT {}: status must be running or stopped", c.vmid),
                ));
            };
            let mut config = c.config;
            if let Some(h) = c.hostname {
                config.insert("hostname".into(), h);
            }
            let mut ct = crate::model::lxc::Ct::seeded(c.vmid, &node, status, config);
            ct.snapshots = self.snapshots_of("CT", c.vmid, &c.snapshots, &ct.config)?;
            ct.pending = c.pending;
            ct.kind.pending_delete = c.pending_delete;
            if vms.contains_key(&c.vmid) || cts.insert(c.vmid, ct).is_some() {
                return Err(self.dup_err(&c.vmid.to_string(), format!("duplicate vmid {}", c.vmid)));
            }
        }
        for vmid in self.guests.keys() {
            if !vms.contains_key(vmid) && !cts.contains_key(vmid) {
                return Err(self.err(&vmid.to_string(), format!("guests: unknown VM {vmid}")));
            }
        }
        let mut cluster = Cluster::from(ClusterDoc {
            version,
            name: self.cluster.clone(),
            local_node: nodes[0].name.clone(),
            nodes,
            storages,
            vms,
            access,
            volumes: Default::default(),
            tasks: Vec::new(),
            next_pid: 4_000 + u32::try_from(now.rem_euclid(50_000)).unwrap_or(0),
            faults: Faults::default(),
            network: BTreeMap::new(),
            guests: self.guests.clone(),
            cts,
            backups: Default::default(),
            pbs: Default::default(),
            datacenter: Default::default(),
            sdn: Default::default(),
            firewall: Default::default(),
            ha: Default::default(),
            hardware: Default::default(),
            replication: Default::default(),
            metrics: Default::default(),
            corosync: Default::default(),
            node_services: Default::default(),
            cpu_models: Default::default(),
            ceph: Default::default(),
            acme: Default::default(),
            notifications: Default::default(),
            mappings: Default::default(),
        });
        // datacenter.cfg holds the tag rules the access model enforces.
        let rules = cluster.access.tag_access().clone();
        cluster.datacenter.declare_tag_access(&rules);
        for (name, model) in &self.cpu_models {
            cluster
                .cpu_models
                .declare(name, model.clone())
                .map_err(|e| self.err(name, format!("cpu_models: {e}")))?;
        }
        for (kind, ids) in &self.mappings {
            for (id, m) in ids {
                cluster
                    .mappings
                    .declare(*kind, id, m.clone())
                    .map_err(|e| self.err(id, format!("mappings: {e}")))?;
            }
        }
        for server in &self.pbs {
            cluster
                .pbs
                .declare(server.clone())
                .map_err(|e| self.err(&server.name, format!("pbs: {e}")))?;
        }
        // A `pbs` storage declared with a key's fingerprint has that key.
        let keyed: Vec<(String, String)> = cluster
            .storage
            .cfg()
            .iter()
            .filter(|s| s.kind == "pbs")
            .filter_map(|s| Some((s.storage.clone(), s.options.get("encryption-key")?.clone())))
            .collect();
        for (sid, fp) in keyed {
            cluster.pbs.declare_key(&sid, &fp);
        }
        for n in &self.nodes {
            cluster
                .hardware
                .seed(&n.name, &n.hardware())
                .map_err(|reason| self.err(&n.name, format!("node '{}': {reason}", n.name)))?;
        }
        for d in &self.downloads {
            if !d.url.starts_with("http://") && !d.url.starts_with("https://") {
                return Err(self.err(
                    &d.url,
                    format!("downloads: '{}' is not an http(s) URL", d.url),
                ));
            }
        }
        cluster.storage.volumes_mut().downloads = self.downloads.clone();
        self.build_volumes(&mut cluster, now)?;
        cluster.storage.volumes_mut().oci =
            crate::model::oci::Registry::new(self.oci_images.clone())
                .map_err(|reason| self.err("oci_images", format!("oci_images: {reason}")))?;
        // Ceph first: a pool's storage holds seeded guests' disks.
        self.build_ceph(&mut cluster, now, 0x63_65_70_68)?;
        crate::model::qemu::adopt_seed_vms(&mut cluster.guests, &mut cluster.storage, now);
        crate::model::lxc::status::adopt_seed_cts(&mut cluster.guests, &mut cluster.storage, now);
        self.build_node_services(&mut cluster, now)?;
        Ok(cluster)
    }

    /// A guest's snapshot sections, checked: valid names, and every
    /// `parent` (of a snapshot or of the current config) one of them.
    fn snapshots_of(
        &self,
        kind: &str,
        vmid: u32,
        specs: &BTreeMap<String, BTreeMap<String, serde_yaml::Value>>,
        config: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, BTreeMap<String, String>>, ScenarioError> {
        let mut out = BTreeMap::new();
        for (name, section) in specs {
            let valid = name.len() >= 2
                && name.len() <= 40
                && name.starts_with(|c: char| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid || name == "current" || name.eq_ignore_ascii_case("pending") {
                return Err(self.err(
                    name,
                    format!("{kind} {vmid}: invalid snapshot name '{name}'"),
                ));
            }
            let section: BTreeMap<String, String> = section
                .iter()
                .map(|(k, val)| (k.clone(), yaml_scalar(val)))
                .collect();
            out.insert(name.clone(), section);
        }
        let parents = out
            .values()
            .filter_map(|s| s.get("parent"))
            .chain(config.get("parent"));
        for p in parents {
            if !out.contains_key(p) {
                return Err(self.err(p, format!("{kind} {vmid}: parent '{p}' is not a snapshot")));
            }
        }
        Ok(out)
    }

    /// The nodes' own files, services and subscriptions.
    fn build_node_services(&self, cluster: &mut Cluster, now: i64) -> Result<(), ScenarioError> {
        use crate::model::node_services::{ServiceState, Subscription, services, subscription};
        let version = cluster.version();
        for n in &self.nodes {
            let sys_err = |e: crate::model::Error| {
                let msg = e
                    .errors()
                    .and_then(|m| m.values().next().cloned())
                    .unwrap_or_else(|| e.to_string());
                format!("node '{}': {msg}", n.name)
            };
            let level = n.level.clone().unwrap_or_default();
            if !level.is_empty() && !["c", "b", "s", "p"].contains(&level.as_str()) {
                return Err(self.err(
                    &level,
                    format!("node '{}': invalid level '{level}'", n.name),
                ));
            }
            let touched = n.dns.is_some()
                || n.hosts.is_some()
                || n.timezone.is_some()
                || !n.services.is_empty()
                || n.subscription.is_some()
                || !level.is_empty();
            if !touched {
                continue;
            }
            let sockets = cluster.nodes().get(&n.name).map_or(1, |x| x.sockets);
            let sys = cluster
                .node_services
                .sys_mut(&cluster.nodes, cluster.version, &n.name)
                .map_err(|e| self.err(&n.name, sys_err(e)))?;
            if let Some(d) = &n.dns {
                for ip in [&d.dns1, &d.dns2, &d.dns3].into_iter().flatten() {
                    if ip.parse::<std::net::IpAddr>().is_err() {
                        return Err(
                            self.err(ip, format!("node '{}': invalid name server '{ip}'", n.name))
                        );
                    }
                }
                sys.set_dns(
                    d.search.as_deref().unwrap_or(""),
                    [d.dns1.as_deref(), d.dns2.as_deref(), d.dns3.as_deref()],
                );
            }
            if let Some(h) = &n.hosts {
                sys.write_hosts(h, None)
                    .map_err(|e| self.err(&n.name, sys_err(e)))?;
            }
            if let Some(tz) = &n.timezone {
                sys.set_timezone(tz).map_err(|_| {
                    self.err(tz, format!("node '{}': unknown time zone '{tz}'", n.name))
                })?;
            }
            for (name, state) in &n.services {
                if services::unit(version, name).is_none() {
                    return Err(
                        self.err(name, format!("node '{}': unknown service '{name}'", n.name))
                    );
                }
                let Some(st) = ServiceState::parse(state) else {
                    return Err(self.err(
                        state,
                        format!(
                            "node '{}': service state must be running, stopped or failed",
                            n.name
                        ),
                    ));
                };
                sys.set_service_state(name, st);
            }
            let sub = match &n.subscription {
                None if level.is_empty() => None,
                None => Some(Subscription::activate(
                    &subscription::key_for(&n.name, sockets, &level),
                    sockets,
                    now,
                )),
                Some(spec) => {
                    let key = spec.key.clone().unwrap_or_else(|| {
                        let l = if level.is_empty() {
                            "c"
                        } else {
                            level.as_str()
                        };
                        subscription::key_for(&n.name, sockets, l)
                    });
                    let Some((n_sockets, _)) = subscription::parse_key(&key) else {
                        return Err(self.err(
                            &key,
                            format!("node '{}': Wrong subscription key format", n.name),
                        ));
                    };
                    let status = spec.status.clone().unwrap_or_else(|| "active".into());
                    if !["active", "new", "invalid", "expired", "suspended"]
                        .contains(&status.as_str())
                    {
                        return Err(self.err(
                            &status,
                            format!("node '{}': invalid subscription status '{status}'", n.name),
                        ));
                    }
                    let mut sub = Subscription::activate(&key, n_sockets, now)
                        .map_err(|e| self.err(&key, sys_err(e)))?
                        .with_status(&status, spec.message.clone());
                    if let Some(d) = &spec.nextduedate {
                        sub = sub.with_nextduedate(d.clone());
                    }
                    Some(Ok(sub))
                }
            };
            match sub {
                Some(Ok(s)) => crate::model::node_services::store_subscription(
                    &mut cluster.nodes,
                    &mut cluster.node_services,
                    cluster.version,
                    &n.name,
                    Some(s),
                ),
                Some(Err(e)) => return Err(self.err(&n.name, sys_err(e))),
                None => Ok(()),
            }
            .map_err(|e| self.err(&n.name, sys_err(e)))?;
        }
        Ok(())
    }

    fn build_storages(&self, nodes: &[Node]) -> Result<Vec<Storage>, ScenarioError> {
        let mut specs: Vec<(StorageSpec, Option<String>)> =
            self.storages.iter().map(|s| (s.clone(), None)).collect();
        for n in &self.nodes {
            specs.extend(n.storages.iter().map(|s| (s.clone(), Some(n.name.clone()))));
        }
        if specs.is_empty() {
            specs = default_storages().into_iter().map(|s| (s, None)).collect();
        }
        let mut out: Vec<Storage> = Vec::new();
        for (spec, owner) in specs {
            if !valid_storage_id(&spec.id) {
                return Err(self.err(&spec.id, format!("invalid storage id '{}'", spec.id)));
            }
            let Some(default_content) = default_content(&spec.kind) else {
                return Err(self.err(
                    &spec.kind,
                    format!(
                        "storage '{}': unknown storage type '{}'",
                        spec.id, spec.kind
                    ),
                ));
            };
            for n in spec.nodes.iter().flatten() {
                if !nodes.iter().any(|x| &x.name == n) {
                    return Err(self.err(n, format!("storage '{}': unknown node '{n}'", spec.id)));
                }
            }
            if let Some(existing) = out.iter_mut().find(|s| s.storage == spec.id) {
                match (&owner, &mut existing.nodes) {
                    (Some(o), Some(list)) if existing.kind == spec.kind => {
                        list.push(o.clone());
                        continue;
                    }
                    _ => {
                        return Err(
                            self.dup_err(&spec.id, format!("duplicate storage id '{}'", spec.id))
                        );
                    }
                }
            }
            let options = spec
                .options
                .iter()
                .map(|(k, v)| (k.clone(), yaml_scalar(v)))
                .collect();
            out.push(Storage {
                storage: spec.id.clone(),
                shared: spec.shared.unwrap_or(matches!(
                    spec.kind.as_str(),
                    "nfs" | "cifs" | "rbd" | "cephfs" | "pbs"
                )),
                content: spec
                    .content
                    .clone()
                    .unwrap_or_else(|| default_content.iter().map(|c| (*c).to_string()).collect()),
                nodes: owner.map(|o| vec![o]).or(spec.nodes.clone()),
                disable: spec.disable,
                total: spec.size.map_or(100 * GIB, |s| s.0),
                used: spec.used.map_or(0, |s| s.0),
                kind: spec.kind,
                options,
            });
        }
        Ok(out)
    }
}

fn default_storages() -> Vec<StorageSpec> {
    let spec = |id: &str, kind: &str, content: &[&str], opts: &[(&str, &str)]| StorageSpec {
        id: id.into(),
        kind: kind.into(),
        content: Some(content.iter().map(|c| (*c).to_string()).collect()),
        shared: Some(false),
        nodes: None,
        disable: false,
        size: None,
        used: None,
        options: opts
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_string(),
                    serde_yaml::Value::String((*v).to_string()),
                )
            })
            .collect(),
    };
    vec![
        spec(
            "local",
            "dir",
            &["iso", "vztmpl", "backup", "snippets"],
            &[("path", "/var/lib/vz")],
        ),
        spec(
            "local-lvm",
            "lvmthin",
            &["images", "rootdir"],
            &[("thinpool", "data"), ("vgname", "pve")],
        ),
    ]
}

/// The content types a storage type allows by default; `None` for an
/// unknown type.
fn default_content(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "dir" | "nfs" | "cifs" | "cephfs" | "glusterfs" => {
            &["images", "rootdir", "iso", "vztmpl", "backup", "snippets"]
        }
        "lvmthin" | "lvm" | "zfspool" | "rbd" | "iscsi" | "zfs" | "iscsidirect" | "esxi" => {
            &["images", "rootdir"]
        }
        "pbs" => &["backup"],
        _ => return None,
    })
}

/// Node and cluster names: letters, digits and `-`, not starting or ending
/// with `-`.
fn valid_name(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// `pve-storage-id`: a letter, then letters, digits, `-`, `_`, `.`.
fn valid_storage_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `pve-bridge-id`: a letter, then letters, digits, `-`, `_`, `.`; at most
/// 15 characters.
fn valid_bridge(s: &str) -> bool {
    s.len() <= 15 && valid_storage_id(s)
}

/// The stand-in fingerprint a node gets until its certificate is read:
/// the API shows its `pve-ssl.pem`'s instead (`api::node_hw`).
pub(crate) fn fake_fingerprint(name: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(format!("fake-pve node {name}").as_bytes());
    d.iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A SHA-256 fingerprint as PVE shows it: 32 hex pairs joined by `:`.
fn valid_fingerprint(fp: &str) -> bool {
    let pairs: Vec<&str> = fp.split(':').collect();
    pairs.len() == 32
        && pairs
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// A physical NIC's name as the kernel may give it: a letter, then
/// letters, digits, `_` or `-`, at most 15 characters (no VLAN dot).
fn valid_nic(name: &str) -> bool {
    name.len() <= 15
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
