//! The guests a bulk action takes (`get_filtered_vmlist` and
//! `get_start_stop_list` of pve-manager's `API2/Nodes.pm`), for a node's
//! `suspendall` and `migrateall` and the cluster's
//! `/cluster/bulk-action/guest/*`, and how many of their tasks may run at
//! once (`max_workers`).

use std::collections::BTreeMap;

use super::cluster::Cluster;

/// PVE's order of a guest without `startup: order=` (`LONG_MAX`).
pub const NO_ORDER: i64 = i64::MAX;

/// One guest a bulk action takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkGuest {
    /// The VMID.
    pub vmid: u32,
    /// Its node.
    pub node: String,
    /// A container (`lxc`), else a VM (`qemu`).
    pub lxc: bool,
    /// Whether it runs.
    pub running: bool,
    /// Whether it runs paused (a VM suspended to RAM).
    pub paused: bool,
    /// `startup: order=` ([`NO_ORDER`] without one).
    pub order: i64,
    /// `startup: up=` (seconds to wait after its start).
    pub up: Option<i64>,
    /// `startup: down=` (its shutdown timeout).
    pub down: Option<i64>,
}

impl BulkGuest {
    /// `VM` or `CT`, as the task logs name it.
    pub fn type_text(&self) -> &'static str {
        if self.lxc { "CT" } else { "VM" }
    }

    /// `qemu` or `lxc`, as the API's paths name it.
    pub fn api_type(&self) -> &'static str {
        if self.lxc { "lxc" } else { "qemu" }
    }
}

/// `order`, `up` and `down` of a `startup` value (`order=1,up=30` or a
/// bare order).
fn startup(conf: Option<&String>) -> (i64, Option<i64>, Option<i64>) {
    let (mut order, mut up, mut down) = (NO_ORDER, None, None);
    for part in conf.map(String::as_str).unwrap_or_default().split(',') {
        let (k, v) = part.split_once('=').unwrap_or(("order", part));
        let Ok(n) = v.trim().parse::<i64>() else {
            continue;
        };
        match k.trim() {
            "order" => order = n,
            "up" => up = Some(n),
            "down" => down = Some(n),
            _ => {}
        }
    }
    (order, up, down)
}

/// The guests of an order group, by VMID.
pub type OrderGroups = BTreeMap<i64, Vec<BulkGuest>>;

impl Cluster {
    /// The guests of `node` (all nodes: `None`), only those of `vms`
    /// when given, by VMID; templates only with `templates`, HA-managed
    /// guests only with `ha_managed` (`get_filtered_vmlist`).
    pub fn bulk_guests(
        &self,
        node: Option<&str>,
        vms: Option<&[u32]>,
        templates: bool,
        ha_managed: bool,
    ) -> Vec<BulkGuest> {
        let keep = |vmid: u32, at: &str, template: bool| {
            vms.is_none_or(|l| l.contains(&vmid))
                && node.is_none_or(|n| n == at)
                && (templates || !template)
                && (ha_managed || self.ha.managed_sid(vmid).is_none())
        };
        let mut out: Vec<BulkGuest> = self
            .guests
            .values()
            .filter(|v| keep(v.vmid(), v.node(), v.template()))
            .map(|v| {
                let (order, up, down) = startup(v.config().get("startup"));
                BulkGuest {
                    vmid: v.vmid(),
                    node: v.node().to_string(),
                    lxc: false,
                    running: v.running(),
                    paused: v.running() && v.qmpstatus().is_some(),
                    order,
                    up,
                    down,
                }
            })
            .collect();
        out.extend(
            self.guests
                .cts()
                .values()
                .filter(|c| keep(c.vmid(), c.node(), c.template()))
                .map(|c| {
                    let (order, up, down) = startup(c.config().get("startup"));
                    BulkGuest {
                        vmid: c.vmid(),
                        node: c.node().to_string(),
                        lxc: true,
                        running: c.running(),
                        paused: false,
                        order,
                        up,
                        down,
                    }
                }),
        );
        out.sort_by_key(|g| g.vmid);
        out
    }

    /// `get_start_stop_list`: the guests (not templates; HA-managed ones
    /// only when `vms` names them) by `startup` order.
    pub fn start_stop_groups(&self, node: Option<&str>, vms: Option<&[u32]>) -> OrderGroups {
        let mut groups = OrderGroups::new();
        for g in self.bulk_guests(node, vms, false, vms.is_some()) {
            groups.entry(g.order).or_default().push(g);
        }
        groups
    }

    /// How many tasks a bulk action runs at once: the call's own
    /// `max-workers` (or `maxworkers`), else datacenter.cfg's
    /// `max_workers`, else `default`.
    pub fn bulk_max_workers(&self, given: Option<i64>, default: Option<usize>) -> Option<usize> {
        given
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n > 0)
            .or_else(|| {
                self.datacenter
                    .get("max_workers")
                    .and_then(|v| v.parse().ok())
                    .filter(|n: &usize| *n > 0)
            })
            .or(default)
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::startup;

    #[rstest]
    #[case(None, (i64::MAX, None, None))]
    #[case(Some("order=2,up=30,down=60"), (2, Some(30), Some(60)))]
    #[case(Some("3"), (3, None, None))]
    #[case(Some("up=5"), (i64::MAX, Some(5), None))]
    fn startup_orders(#[case] conf: Option<&str>, #[case] want: (i64, Option<i64>, Option<i64>)) {
        assert_eq!(startup(conf.map(str::to_string).as_ref()), want);
    }
}
