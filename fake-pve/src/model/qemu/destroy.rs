//! Destroying a VM (`qmdestroy`): its volumes, its config and what refers
//! to it (qemu-server `destroy_vm`).

use super::*;

impl VmOps<'_> {
    pub(in crate::model) fn destroy(
        &mut self,
        node: &str,
        vmid: u32,
        skiplock: bool,
        purge: bool,
        unreferenced: bool,
    ) -> EffectResult {
        let vm = self
            .guests
            .vm(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        if vm.config.get("protection").is_some_and(|p| p == "1") {
            return Err((
                vec![],
                format!("can't remove VM {vmid} - protection mode enabled"),
            ));
        }
        if vm.running() {
            return Err((vec![], format!("VM {vmid} is running - destroy failed")));
        }
        if !skiplock {
            vm.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        // `delete_ifaces_ipams_ips`: the IPAM lets go of the NICs' MACs.
        let macs: Vec<String> = vm
            .config
            .iter()
            .filter(|(k, _)| k.starts_with("net"))
            .filter_map(|(_, v)| crate::model::sdn::cluster::nic_bridge_mac(v))
            .map(|(_, mac)| mac)
            .collect();
        self.sdn.release_macs(&macs);
        let vm = self
            .guests
            .vm(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        let mut volids: Vec<String> = Vec::new();
        let confs = std::iter::once(&vm.config)
            .chain(std::iter::once(&vm.pending))
            .chain(vm.snapshots.values());
        for conf in confs {
            for (k, v) in conf {
                let file = if k.starts_with("unused") || k == "vmstate" {
                    v.as_str()
                } else if is_drive_key(k) {
                    drive_file(v)
                } else {
                    continue;
                };
                if self
                    .storage
                    .volume(file, node)
                    .is_some_and(|x| x.vmid == vmid)
                    && !volids.iter().any(|x| x == file)
                {
                    volids.push(file.to_string());
                }
            }
        }
        if unreferenced {
            for s in self.storage.cfg().iter().filter(|s| s.active_on(node)) {
                for v in self
                    .storage
                    .volumes()
                    .on(s, node)
                    .filter(|v| v.vmid == vmid)
                {
                    let id = v.volid();
                    if !volids.contains(&id) {
                        volids.push(id);
                    }
                }
            }
        }
        let mut lines = Vec::new();
        for v in volids {
            if let Some(l) = self.storage.free_volume(&v, node) {
                lines.extend(l);
            }
        }
        if purge {
            lines.push(format!("purging VM {vmid} from related configurations.."));
        }
        self.guests.remove(&vmid);
        self.access.remove_vm_access(vmid);
        self.firewall.remove_guest(vmid);
        Ok(lines)
    }
}
