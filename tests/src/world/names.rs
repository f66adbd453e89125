//! The names a scenario gives what it makes (users, groups, roles,
//! storages, SDN objects, VMIDs), and the placeholders of a feature's
//! text.

use super::{FAKE_T0, PveWorld, VM_BLOCK};

impl PveWorld {
    /// The scenario's prefix for what it makes (`cnf1a2b3c7`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The user ID for a name in a feature: `alice` is the scenario's own
    /// `<prefix>-alice@pve`; a full ID (`root@pam`) stays as it is.
    pub fn userid(&self, name: &str) -> String {
        if name.contains('@') {
            name.to_string()
        } else {
            format!("{}-{name}@pve", self.prefix)
        }
    }

    /// The full token ID for `alice!ci` (or `root@pam!ci`).
    pub fn tokenid(&self, name: &str) -> String {
        match name.split_once('!') {
            Some((user, token)) => format!("{}!{token}", self.userid(user)),
            None => panic!("a token is named USER!TOKEN, not '{name}'"),
        }
    }

    /// The group ID for a name in a feature.
    pub fn groupid(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// The role ID for a name in a feature; PVE's built-in roles (and
    /// `NoAccess`, `Administrator`) stay as they are.
    pub fn roleid(&self, name: &str) -> String {
        if name.starts_with("PVE") || name == "NoAccess" || name == "Administrator" {
            name.to_string()
        } else {
            format!("{}-{name}", self.prefix)
        }
    }

    /// The VMID `{vmN}` stands for: the N-th of the reserved range.
    ///
    /// # Panics
    /// When it falls outside the range.
    pub fn vm(&self, n: u32) -> u32 {
        assert!(
            (1..=VM_BLOCK).contains(&n),
            "{{vm{n}}}: a scenario has {{vm1}} to {{vm{VM_BLOCK}}}"
        );
        let id = self.vm_base + n - 1;
        self.guard_vmid(id);
        id
    }

    /// The scenario's SDN tag: four base-36 characters drawn from its
    /// prefix. SDN IDs are short (zones and VNets at most 8 characters,
    /// letters and digits only), so they cannot carry the whole prefix.
    pub fn sdn_tag(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.prefix.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
        (0..4)
            .map(|i| char::from(digits[usize::try_from((h >> (i * 8)) % 36).unwrap_or(0)]))
            .collect()
    }

    /// The SDN ID for a name in a feature: `kind` (`z` for zones, `v`
    /// for VNets, `c` for controllers, `f` for fabrics, `p` for prefix
    /// lists, `r` for route maps), the scenario's [`Self::sdn_tag`],
    /// then at most three letters or digits of the name.
    pub fn sdnid(&self, kind: char, name: &str) -> String {
        let tail: String = name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(3)
            .collect();
        format!("{kind}{}{tail}", self.sdn_tag())
    }

    /// Whether an SDN ID is one of this scenario's.
    pub fn sdn_mine(&self, id: &str) -> bool {
        id.len() >= 5 && id.get(1..5) == Some(self.sdn_tag().as_str())
    }

    /// The storage ID for a name in a feature: the scenario's own
    /// `<prefix>-<name>`.
    pub fn storageid(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// Replaces the placeholders of a feature's text: `{node}`,
    /// `{storage}`, `{bridge}`, `{vmN}`, `{user:alice}`, `{token:alice!ci}`,
    /// `{group:ops}`, `{role:Starter}`, `{realm:corp}`, `{storage:isos}` (the scenario's
    /// own storage ID), `{var:NAME}` (a remembered value), `{me}` (the
    /// administrator), `{upid}` (the last task), `{release}`, `{prefix}`.
    ///
    /// # Panics
    /// On an unknown placeholder.
    pub fn expand(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let key = &rest[open + 1..open + close];
            // `{2}` and `{2,8}` are regex repetitions, not placeholders.
            let is_key = !key.is_empty()
                && !key.chars().all(|c| c.is_ascii_digit() || c == ',')
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ":!@._-".contains(c));
            if !is_key {
                // Not a placeholder (a YAML flow mapping, say): keep it.
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
                continue;
            }
            out.push_str(&rest[..open]);
            out.push_str(&self.placeholder(key));
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        out
    }

    fn placeholder(&self, key: &str) -> String {
        let t = self.target();
        if let Some(n) = key.strip_prefix("vm").and_then(|n| n.parse::<u32>().ok()) {
            return self.vm(n).to_string();
        }
        if let Some((kind, name)) = key.split_once(':') {
            return match kind {
                "user" => self.userid(name),
                "token" => self.tokenid(name),
                "group" => self.groupid(name),
                "role" => self.roleid(name),
                "storage" | "pool" | "job" | "fw" | "realm" => self.storageid(name),
                "zone" => self.sdnid('z', name),
                "vnet" => self.sdnid('v', name),
                "controller" => self.sdnid('c', name),
                "fabric" => self.sdnid('f', name),
                "prefix-list" => self.sdnid('p', name),
                "route-map" => self.sdnid('r', name),
                "var" => self
                    .vars
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| panic!("nothing remembered as {name}")),
                "secret" => self
                    .secrets
                    .get(&self.tokenid(name))
                    .cloned()
                    .unwrap_or_else(|| panic!("no secret known for token {name}")),
                "ticket" => self.ticket_of(name).0,
                "csrf" => self.ticket_of(name).1,
                "ticket-escaped" => pve_client::api::seg(&self.ticket_of(name).0),
                _ => panic!("unknown placeholder {{{key}}}"),
            };
        }
        match key {
            "node" => t.node.clone(),
            "storage" => t.storage.clone(),
            "bridge" => t.bridge.clone(),
            "me" => self.admin_principal.clone(),
            "prefix" => self.prefix.clone(),
            "release" => crate::target::release_name(self.release()).to_string(),
            "upid" => self.last_upid().to_string(),
            "T0" => FAKE_T0.to_string(),
            _ => panic!("unknown placeholder {{{key}}}"),
        }
    }
}
