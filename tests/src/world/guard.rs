//! What a scenario must not touch: VMIDs outside the reserved range,
//! and (unless it is `@fake-only`) writes to what it did not make.

use pve_client::{Method, Params};

use super::PveWorld;

impl PveWorld {
    /// Refuses any VMID outside the reserved range: scenarios never touch
    /// guests they do not own, on fake-pve as on a real cluster.
    ///
    /// # Panics
    /// When `vmid` is outside the range.
    pub fn guard_vmid(&self, vmid: u32) {
        let r = &self.target().vmids;
        assert!(
            r.contains(&vmid),
            "refusing to touch VM {vmid}: outside the reserved VMID range {}-{}",
            r.start(),
            r.end()
        );
    }

    /// Refuses requests a scenario must not make: VMIDs outside the
    /// reserved range anywhere; and, unless the scenario is `@fake-only`,
    /// writes outside `/access` and the test node, to users, groups and
    /// roles the scenario did not make, and node-wide power calls that
    /// would reach guests outside the range.
    ///
    /// # Panics
    /// When the request is refused.
    pub fn guard_request(&self, method: &Method, path: &str, params: &Params) {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        for w in segs.windows(2) {
            if matches!(w[0], "qemu" | "lxc")
                && let Ok(id) = w[1].parse::<u32>()
            {
                self.guard_vmid(id);
            }
        }
        for (k, v) in params.pairs() {
            if matches!(k.as_str(), "vmid" | "newid" | "vms" | "target-vmid") {
                for id in v
                    .split([',', ';', ' '])
                    .filter_map(|x| x.parse::<u32>().ok())
                {
                    self.guard_vmid(id);
                }
            }
            // HA resource IDs (`vm:100`, `ct:101`, `100`) name VMIDs too.
            if matches!(k.as_str(), "sid" | "resources" | "resource") {
                for id in v.split([',', ';', ' ']).filter_map(ha_vmid) {
                    self.guard_vmid(id);
                }
            }
        }
        if self.fake_only || *method == Method::GET {
            return;
        }
        let refuse = |why: &str| -> ! {
            panic!("refusing {method} {path}: {why} (a scenario that needs it must be @fake-only)")
        };
        let mine = |id: &str| id.starts_with(&self.prefix);
        match segs.as_slice() {
            ["access", "ticket"] => {}
            // A proxy's ticket check: it changes nothing.
            ["access", "vncticket"] => {}
            // An OpenID login's two calls: a pending login, a ticket.
            ["access", "openid", ..] => {}
            ["access", "users" | "groups" | "roles", id, ..] if !mine(id) => {
                refuse("not made by this scenario");
            }
            ["access", "users" | "groups" | "roles", ..] => {}
            ["access", "acl"] => {
                for (k, v) in params.pairs() {
                    if matches!(k.as_str(), "users" | "groups" | "tokens")
                        && v.split(',').any(|x| !mine(x))
                    {
                        refuse("an ACL entry for someone this scenario did not make");
                    }
                }
            }
            ["access", "password"] => {
                if params
                    .pairs()
                    .iter()
                    .any(|(k, v)| k == "userid" && !mine(v))
                {
                    refuse("another user's password");
                }
            }
            ["nodes", _, "ceph", ..] | ["cluster", "ceph", ..] => {
                refuse("Ceph is the cluster's storage: its writes are for fake-pve only");
            }
            ["nodes", node, rest @ ..] => {
                if *node != self.target().node {
                    refuse("not the test node");
                }
                if matches!(rest, ["firewall", ..]) && !self.destructive {
                    refuse("the node's firewall (tag the scenario @destructive)");
                }
                if matches!(rest, ["certificates", ..]) && !self.destructive {
                    refuse("the node's certificate (tag the scenario @destructive)");
                }
                let all_guests = !params.pairs().iter().any(|(k, _)| k == "vms");
                if matches!(rest, ["startall" | "stopall"]) && all_guests {
                    refuse("startall/stopall without `vms` would reach every guest of the node");
                }
                // The administrator would reach every guest; a user the
                // scenario made has only the grants it was given.
                if matches!(rest, ["suspendall" | "migrateall"])
                    && all_guests
                    && self.actor() == super::ADMIN
                {
                    refuse(
                        "suspendall/migrateall without `vms` would reach every guest of the node",
                    );
                }
                if matches!(rest, ["status"]) && !self.destructive {
                    refuse("rebooting or shutting down the node (tag the scenario @destructive)");
                }
                if matches!(rest, ["execute"]) {
                    refuse("a batch of calls the guard cannot see into");
                }
                if matches!(rest, ["vzdump"]) {
                    let p = |name: &str| params.pairs().iter().find(|(k, _)| k == name);
                    if p("all").is_some_and(|(_, v)| v == "1") || p("exclude").is_some() {
                        refuse("vzdump of all guests would reach every guest of the node");
                    }
                    if p("pool").is_some_and(|(_, v)| !mine(v)) {
                        refuse("vzdump of a pool this scenario did not make");
                    }
                }
                if let ["storage", sid, "prunebackups"] = rest
                    && !mine(sid)
                {
                    refuse("pruning a storage this scenario did not make");
                }
            }
            ["pools", ..] => {
                let id = segs
                    .get(1)
                    .map(|s| (*s).to_string())
                    .or_else(|| {
                        params
                            .pairs()
                            .iter()
                            .find(|(k, _)| k == "poolid")
                            .map(|(_, v)| v.clone())
                    })
                    .unwrap_or_default();
                if !mine(&id) {
                    refuse("a pool this scenario did not make");
                }
            }
            ["cluster", "backup"] => {
                if !params.pairs().iter().any(|(k, v)| k == "id" && mine(v)) {
                    refuse("a backup job without an id of this scenario");
                }
            }
            ["cluster", "backup", id, ..] if !mine(id) => {
                refuse("a backup job this scenario did not make");
            }
            ["cluster", "backup", ..] => {}
            ["access", "domains"] => {
                if !params.pairs().iter().any(|(k, v)| k == "realm" && mine(v)) {
                    refuse("a realm without an id of this scenario");
                }
            }
            ["access", "domains" | "tfa", id, ..] if !mine(id) => {
                refuse("a realm or user this scenario did not make");
            }
            ["access", "domains" | "tfa", ..] => {}
            ["cluster", "jobs", "realm-sync", id, ..] if !mine(id) => {
                refuse("a realm sync job this scenario did not make");
            }
            ["cluster", "jobs", "realm-sync", ..] => {}
            [
                "cluster",
                "firewall",
                "groups" | "aliases" | "ipset",
                rest @ ..,
            ] => {
                // Only the scenario's own groups, aliases and IP sets, by
                // path or (to make or rename one) by parameter.
                if let Some(id) = rest.first()
                    && !mine(id)
                {
                    refuse("a firewall object this scenario did not make");
                }
                let named = params
                    .pairs()
                    .iter()
                    .filter(|(k, _)| matches!(k.as_str(), "group" | "name" | "rename"));
                for (_, v) in named {
                    if !mine(v) {
                        refuse("a firewall object this scenario does not name as its own");
                    }
                }
            }
            // Bulk actions only on the scenario's own guests (each
            // checked above).
            ["cluster", "bulk-action", "guest", _] => {
                if !params.pairs().iter().any(|(k, _)| k == "vms") && self.actor() == super::ADMIN {
                    refuse("a bulk action without `vms` would reach every guest of the cluster");
                }
            }
            ["cluster", "options"] if !self.destructive => {
                refuse("the datacenter options (tag the scenario @destructive)");
            }
            ["cluster", "options"] => {}
            ["cluster", "firewall", ..] if !self.destructive => {
                refuse("the cluster's firewall options and rules (tag the scenario @destructive)");
            }
            ["cluster", "firewall", ..] => {}
            // HA: resources of the scenario's own VMIDs (checked above
            // and here for the path), groups and rules with its prefix.
            ["cluster", "ha", "resources"] => {
                if !params.pairs().iter().any(|(k, _)| k == "sid") {
                    refuse("an HA resource without a sid");
                }
            }
            ["cluster", "ha", "resources", sid, ..] => match ha_vmid(sid) {
                Some(id) => self.guard_vmid(id),
                None => refuse("an HA resource that is not one of this scenario's guests"),
            },
            ["cluster", "ha", kind @ ("groups" | "rules")] => {
                let key = if *kind == "groups" { "group" } else { "rule" };
                if !params.pairs().iter().any(|(k, v)| k == key && mine(v)) {
                    refuse("an HA group or rule without an id of this scenario");
                }
            }
            ["cluster", "ha", "groups" | "rules", id, ..] if !mine(id) => {
                refuse("an HA group or rule this scenario did not make");
            }
            ["cluster", "ha", "groups" | "rules", ..] => {}
            // Replication jobs `<guest>-<n>` of the scenario's own
            // guests; metric servers with its prefix.
            ["cluster", "replication", rest @ ..] => {
                let id = rest.first().map(|s| (*s).to_string()).or_else(|| {
                    params
                        .pairs()
                        .iter()
                        .find(|(k, _)| k == "id")
                        .map(|(_, v)| v.clone())
                });
                match id
                    .as_deref()
                    .and_then(|i| i.split_once('-'))
                    .and_then(|(g, _)| g.parse::<u32>().ok())
                {
                    Some(g) => self.guard_vmid(g),
                    None => refuse("a replication job that is not one of this scenario's guests"),
                }
            }
            // ACME plugins and accounts with the scenario's prefix.
            ["cluster", "acme", "plugins" | "account"] => {
                let named = params
                    .pairs()
                    .iter()
                    .any(|(k, v)| matches!(k.as_str(), "id" | "name") && mine(v));
                if !named {
                    refuse("an ACME plugin or account without a name of this scenario");
                }
            }
            ["cluster", "acme", "plugins" | "account", id] if !mine(id) => {
                refuse("an ACME plugin or account this scenario did not make");
            }
            ["cluster", "acme", ..] => {}
            // Notification targets and matchers with the scenario's
            // prefix; a test only of its own targets (a real cluster's
            // targets reach real people).
            ["cluster", "notifications", "endpoints" | "matchers", ..] => {
                let id = match segs.as_slice() {
                    ["cluster", "notifications", "endpoints", _, id] => Some((*id).to_string()),
                    ["cluster", "notifications", "matchers", id] => Some((*id).to_string()),
                    _ => params
                        .pairs()
                        .iter()
                        .find(|(k, _)| k == "name")
                        .map(|(_, v)| v.clone()),
                };
                if !id.as_deref().is_some_and(mine) {
                    refuse("a notification target or matcher this scenario did not make");
                }
            }
            ["cluster", "notifications", "targets", id, "test"] if !mine(id) => {
                refuse("a test of a notification target this scenario did not make");
            }
            ["cluster", "notifications", "targets", _, "test"] => {}
            ["cluster", "metrics", "server", id] if !mine(id) => {
                refuse("a metric server this scenario did not make");
            }
            ["cluster", "metrics", "server", _] => {}
            // Resource mappings with the scenario's prefix.
            ["cluster", "mapping", "pci" | "usb" | "dir"] => {
                if !params.pairs().iter().any(|(k, v)| k == "id" && mine(v)) {
                    refuse("a resource mapping without an id of this scenario");
                }
            }
            ["cluster", "mapping", _, id] if !mine(id) => {
                refuse("a resource mapping this scenario did not make");
            }
            ["cluster", "mapping", _, _] => {}
            // Custom CPU models (9.2), named with or without `custom-`.
            ["cluster", "qemu", "custom-cpu-models"] => {
                let named = params
                    .pairs()
                    .iter()
                    .any(|(k, v)| k == "cputype" && mine(v.strip_prefix("custom-").unwrap_or(v)));
                if !named {
                    refuse("a custom CPU model without a name of this scenario");
                }
            }
            ["cluster", "qemu", "custom-cpu-models", id]
                if !mine(id.strip_prefix("custom-").unwrap_or(id)) =>
            {
                refuse("a custom CPU model this scenario did not make");
            }
            ["cluster", "qemu", "custom-cpu-models", _] => {}
            ["storage"] => {
                if !params
                    .pairs()
                    .iter()
                    .any(|(k, v)| k == "storage" && mine(v))
                {
                    refuse("a storage this scenario does not name as its own");
                }
            }
            ["storage", id, ..] if !mine(id) => refuse("a storage this scenario did not make"),
            ["storage", ..] => {}
            ["cluster", "sdn", rest @ ..] => {
                if let Some(why) = self.guard_sdn(rest, params) {
                    refuse(why);
                }
            }
            _ => refuse("outside /access, the scenario's storages and the test node"),
        }
    }

    /// The SDN part of [`Self::guard_request`]: a scenario writes only
    /// the zones, VNets (and their subnets and IPs), controllers,
    /// fabrics (and their nodes), prefix lists and route maps whose IDs
    /// carry its tag; applying, locking and rolling back reach every
    /// pending change of the cluster, so only `@destructive` scenarios may.
    fn guard_sdn(&self, rest: &[&str], params: &Params) -> Option<&'static str> {
        let param = |name: &str| {
            params
                .pairs()
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let mine = |id: &str| self.sdn_mine(id);
        match rest {
            [] | ["lock" | "rollback"] => (!self.destructive).then_some(
                "applying, locking or rolling back SDN reaches others' pending changes (tag it @destructive)",
            ),
            ["zones"] => (!param("zone").is_some_and(|z| mine(&z)))
                .then_some("a zone without this scenario's SDN tag"),
            ["vnets"] => (!param("vnet").is_some_and(|v| mine(&v))
                || !param("zone").is_some_and(|z| mine(&z)))
            .then_some("a VNet (or its zone) without this scenario's SDN tag"),
            ["controllers"] => (!param("controller").is_some_and(|c| mine(&c)))
                .then_some("a controller without this scenario's SDN tag"),
            ["zones" | "vnets" | "controllers", id, ..] => {
                (!mine(id)).then_some("an SDN object this scenario did not make")
            }
            ["fabrics", "fabric"] => (!param("id").is_some_and(|f| mine(&f)))
                .then_some("a fabric without this scenario's SDN tag"),
            ["fabrics", "fabric" | "node", id, ..] => {
                (!mine(id)).then_some("a fabric this scenario did not make")
            }
            ["prefix-lists"] => (!param("id").is_some_and(|p| mine(&p)))
                .then_some("a prefix list without this scenario's SDN tag"),
            ["prefix-lists", id, ..] => {
                (!mine(id)).then_some("a prefix list this scenario did not make")
            }
            ["route-maps", "entries"] => (!param("route-map-id").is_some_and(|r| mine(&r)))
                .then_some("a route map without this scenario's SDN tag"),
            ["route-maps", "entries", id, ..] => {
                (!mine(id)).then_some("a route map this scenario did not make")
            }
            _ => Some("SDN configuration outside this scenario's zones, VNets and controllers"),
        }
    }
}

/// The VMID of an HA resource ID (`vm:100`, `ct:101`, `100`).
fn ha_vmid(sid: &str) -> Option<u32> {
    let sid = sid.replace("%3A", ":").replace("%3a", ":");
    let name = sid.rsplit_once(':').map_or(sid.as_str(), |(_, n)| n);
    name.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world(destructive: bool) -> PveWorld {
        PveWorld {
            prefix: "cnf1a2b3c7".into(),
            destructive,
            ..PveWorld::default()
        }
    }

    fn refused(w: &PveWorld, method: Method, path: &str, params: &[(&str, &str)]) -> bool {
        let mut p = Params::new();
        for (k, v) in params {
            p.push(*k, *v);
        }
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            w.guard_request(&method, path, &p);
        }))
        .is_err()
    }

    #[test]
    fn a_bulk_action_on_every_guest_is_refused_to_the_administrator() {
        let mut w = world(false);
        w.actor = super::super::ADMIN.into();
        let path = "/cluster/bulk-action/guest/shutdown";
        assert!(refused(&w, Method::POST, path, &[]));
        // A user the scenario made reaches only what it was granted.
        w.actor = "bob".into();
        assert!(!refused(&w, Method::POST, path, &[]));
    }

    #[test]
    fn sdn_ids_are_short_and_the_scenario_writes_only_its_own() {
        let w = world(false);
        let zone = w.sdnid('z', "lab");
        let vnet = w.sdnid('v', "lab");
        assert!(zone.len() <= 8 && zone.chars().all(|c| c.is_ascii_alphanumeric()));
        assert!(zone.starts_with('z') && w.sdn_mine(&zone) && w.sdn_mine(&vnet));
        assert_ne!(
            world(false).sdn_tag(),
            PveWorld {
                prefix: "cnf1a2b3c8".into(),
                ..PveWorld::default()
            }
            .sdn_tag()
        );
        let post = Method::POST;
        assert!(!refused(
            &w,
            post.clone(),
            "/cluster/sdn/zones",
            &[("zone", &zone)]
        ));
        assert!(refused(
            &w,
            post.clone(),
            "/cluster/sdn/zones",
            &[("zone", "other")]
        ));
        assert!(!refused(
            &w,
            post.clone(),
            "/cluster/sdn/vnets",
            &[("vnet", &vnet), ("zone", &zone)]
        ));
        assert!(refused(
            &w,
            post.clone(),
            "/cluster/sdn/vnets",
            &[("vnet", &vnet), ("zone", "other")]
        ));
        assert!(refused(&w, Method::DELETE, "/cluster/sdn/zones/other", &[]));
        assert!(!refused(
            &w,
            Method::DELETE,
            &format!("/cluster/sdn/vnets/{vnet}/subnets/x"),
            &[]
        ));
        assert!(refused(&w, Method::PUT, "/cluster/sdn", &[]));
        assert!(refused(
            &w,
            post.clone(),
            "/cluster/sdn/ipams",
            &[("ipam", &zone)]
        ));
        assert!(!refused(&world(true), Method::PUT, "/cluster/sdn", &[]));
        assert!(!refused(&w, Method::GET, "/cluster/sdn/zones/other", &[]));
    }

    #[test]
    fn a_scenario_writes_only_its_own_prefix_lists_and_route_maps() {
        let w = world(false);
        let list = w.sdnid('p', "in");
        let map = w.sdnid('r', "out");
        let lists = "/cluster/sdn/prefix-lists";
        assert!(!refused(&w, Method::POST, lists, &[("id", &list)]));
        assert!(refused(&w, Method::POST, lists, &[("id", "other")]));
        assert!(!refused(
            &w,
            Method::PUT,
            &format!("{lists}/{list}/entries/5"),
            &[]
        ));
        assert!(refused(&w, Method::DELETE, &format!("{lists}/other"), &[]));
        let entries = "/cluster/sdn/route-maps/entries";
        assert!(!refused(
            &w,
            Method::POST,
            entries,
            &[("route-map-id", &map)]
        ));
        assert!(refused(
            &w,
            Method::POST,
            entries,
            &[("route-map-id", "rm")]
        ));
        assert!(!refused(
            &w,
            Method::DELETE,
            &format!("{entries}/{map}/entry/10"),
            &[]
        ));
        assert!(refused(
            &w,
            Method::PUT,
            &format!("{entries}/rm/entry/10"),
            &[]
        ));
        assert!(!refused(&w, Method::GET, &format!("{entries}/rm"), &[]));
    }

    #[test]
    fn a_scenario_writes_only_its_own_firewall_objects() {
        let w = world(false);
        let groups = "/cluster/firewall/groups";
        assert!(!refused(
            &w,
            Method::POST,
            groups,
            &[("group", "cnf1a2b3c7-web")]
        ));
        assert!(refused(&w, Method::POST, groups, &[("group", "web")]));
        assert!(refused(
            &w,
            Method::POST,
            groups,
            &[("group", "cnf1a2b3c7-web"), ("rename", "prod")]
        ));
        assert!(!refused(
            &w,
            Method::POST,
            "/cluster/firewall/groups/cnf1a2b3c7-web",
            &[]
        ));
        assert!(refused(
            &w,
            Method::DELETE,
            "/cluster/firewall/groups/prod/0",
            &[]
        ));
        assert!(refused(
            &w,
            Method::POST,
            "/cluster/firewall/aliases",
            &[("name", "lan")]
        ));
        assert!(!refused(
            &w,
            Method::DELETE,
            "/cluster/firewall/ipset/cnf1a2b3c7-set/10.0.0.0/8",
            &[]
        ));
        assert!(refused(
            &w,
            Method::PUT,
            "/cluster/firewall/ipset/mgmt/10.0.0.0/8",
            &[]
        ));
        // reading is always allowed
        assert!(!refused(&w, Method::GET, "/cluster/firewall/rules", &[]));
    }

    #[test]
    fn the_clusters_own_rules_and_options_need_destructive() {
        for path in ["/cluster/firewall/rules", "/cluster/firewall/options"] {
            assert!(refused(&world(false), Method::PUT, path, &[]), "{path}");
            assert!(!refused(&world(true), Method::PUT, path, &[]), "{path}");
        }
    }
}
