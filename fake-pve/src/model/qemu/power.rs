//! Power state changes the VM tasks make when they end: start and
//! suspend (qemu-server `vm_start`, `vm_suspend`).

use super::*;

impl VmOps<'_> {
    /// `vm_start`: refusals, bridges, pending changes, then running.
    pub(in crate::model) fn power_on(
        &mut self,
        vmid: u32,
        skiplock: bool,
        end_ms: i64,
    ) -> EffectResult {
        let Some(vm) = self.guests.get(&vmid) else {
            return Err((vec![], format!("VM {vmid} does not exist")));
        };
        if vm.template() {
            return Err((vec![], "you can't start a vm if it's a template".into()));
        }
        let hibernated = vm.lock() == Some("suspended");
        if !skiplock && !hibernated {
            vm.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        if vm.running() {
            return Err((vec![], format!("VM {vmid} already running")));
        }
        let node = vm.node.clone();
        let bridges = crate::model::sdn::node_bridges(self.nodes, self.sdn, &node);
        let effective = vm.effective();
        for (k, v) in &effective {
            if !k.starts_with("net") || config_prop(self.version, k).is_none() {
                continue;
            }
            if let Some(b) = v.split(',').find_map(|p| p.strip_prefix("bridge="))
                && !bridges.iter().any(|x| x == b)
            {
                return Err((vec![], format!("bridge '{b}' does not exist")));
            }
        }
        // parse_hostpci, parse_usb_device, assert_virtiofs_config.
        let fs = crate::model::cluster::node_fs(self.hardware, self.storage.cfg(), &node);
        let hw = self.hardware.node(&node);
        let host = crate::model::mapping::check::Host {
            node: &node,
            hw: &hw,
            fs: &fs,
        };
        self.mappings
            .assert_startable(&effective, host)
            .map_err(|e| (vec![], e))?;
        let nics: Vec<(String, String)> = effective
            .iter()
            .filter(|(k, _)| k.starts_with("net") && config_prop(self.version, k).is_some())
            .filter_map(|(_, v)| crate::model::sdn::cluster::nic_bridge_mac(v))
            .collect();
        let name = effective.get("name").cloned();
        self.sdn
            .map_guest(vmid, name.as_deref(), &nics)
            .map_err(|e| (vec![], e.to_string()))?;
        let mut lines = Vec::new();
        if effective
            .iter()
            .any(|(k, v)| is_drive_key(k) && v.contains("-cloudinit"))
        {
            lines.push("generating cloud-init ISO".to_string());
        }
        self.apply_pending(vmid, &mut lines);
        // The start regenerates the cloud-init drive from the config.
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.ci_changes.clear();
        }
        if hibernated {
            let state = self.guests.get_mut(&vmid).and_then(|vm| {
                vm.config.remove("lock");
                vm.config.remove("runningmachine");
                vm.config.remove("runningcpu");
                vm.config.remove("vmstate")
            });
            if let Some(volid) = state {
                self.storage.free_volume(&volid, &node);
            }
        }
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.status = VmStatus::Running;
            vm.qmpstatus = None;
            vm.started_ms = Some(end_ms);
        }
        Ok(lines)
    }

    pub(in crate::model) fn suspend(
        &mut self,
        node: &str,
        vmid: u32,
        skiplock: bool,
        todisk: Option<&str>,
        now: i64,
    ) -> EffectResult {
        let version = self.version;
        let vm = self
            .guests
            .vm_mut(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        if !skiplock {
            vm.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        if !vm.running() {
            return Err((vec![], format!("VM {vmid} not running")));
        }
        let Some(sid) = todisk else {
            vm.qmpstatus = Some(QmpStatus::Paused);
            return Ok(vec![]);
        };
        let size = 2 * vm.maxmem() + (500 << 20);
        let machine = running_machine(version, &vm.config).into_owned();
        let date = ymd(now);
        let (volid, mut lines) = self
            .storage
            .alloc_volume(
                sid,
                node,
                vmid,
                &VolumeKind::State(format!("suspend-{date}")),
                None,
                size,
                now,
            )
            .map_err(|e| (vec![], e.to_string()))?;
        lines.push("suspend vm".into());
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config.insert("lock".into(), "suspended".into());
            vm.config.insert("vmstate".into(), volid);
            vm.config.insert("runningmachine".into(), machine);
            vm.config.insert(
                "runningcpu".into(),
                "kvm64,enforce,+kvm_pv_eoi,+kvm_pv_unhalt,+lahf_lm,+sep".into(),
            );
            power_off(vm);
        }
        Ok(lines)
    }
}
