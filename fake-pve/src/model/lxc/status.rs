//! What a container's status and the listings show (pve-container
//! `LXC.pm` `vmstatus`, `API2/LXC.pm` `vmlist`, `API2/LXC/Status.pm`
//! `vm_status`; pve-manager's `/cluster/resources`).

use serde_json::{Value, json};

use super::Ct;
use super::schema::mp_size;
use crate::model::PveVersion;
use crate::model::guest::rrd::{GuestPoint, Load, Pressure, Sizes, steps};
use crate::model::guests::Guests;
use crate::model::ha::Ha;
use crate::model::ha::ServiceStatus;
use crate::model::nodes::Nodes;
use crate::model::qemu::VmStatus;
use crate::model::storage::Storages;

/// `maxdisk` of a stopped container without a `size=`: 4 GiB.
const DEFAULT_MAXDISK: u64 = 4 << 30;

/// What a container's status and its row of the cluster's resources
/// both show ([`ct_figures`]).
pub(crate) struct CtFigures {
    pub name: String,
    pub cpus: serde_json::Number,
    pub maxmem: u64,
    pub maxdisk: u64,
    pub disk: u64,
    pub mem: u64,
    pub cpu: f64,
    /// Seconds.
    pub uptime: i64,
    pub netin: u64,
    pub netout: u64,
    pub diskread: u64,
    pub diskwrite: u64,
}

/// `vmstatus()` of one container: its figures and what the status adds
/// to them; the API's view writes it out.
pub(crate) struct CtStatus<'a> {
    pub vmid: u32,
    pub status: VmStatus,
    pub figures: CtFigures,
    pub maxswap: u64,
    /// Running containers only.
    pub pid: Option<u32>,
    /// The pressure stall figures (all 0) of a running container on 9.x.
    pub pressure: bool,
    pub tags: Option<&'a str>,
    pub template: bool,
    pub lock: Option<&'a str>,
    /// `status/current` only.
    pub ha: Option<ServiceStatus<'a>>,
}

/// The figures of a container that its status and the cluster's
/// resources share, on a node of `host_cpus` CPUs.
pub(crate) fn ct_figures(ct: &Ct, now_ms: i64, host_cpus: u64) -> CtFigures {
    let running = ct.running();
    let conf = ct.config();
    let cpus = conf
        .get("cores")
        .and_then(|c| c.parse::<u64>().ok())
        .map(serde_json::Number::from)
        .or_else(|| {
            conf.get("cpulimit")
                .and_then(|c| c.parse::<f64>().ok())
                .filter(|c| *c > 0.0)
                .and_then(serde_json::Number::from_f64)
        })
        .unwrap_or_else(|| host_cpus.into());
    let maxdisk = conf
        .get("rootfs")
        .and_then(|r| mp_size(r))
        .unwrap_or(DEFAULT_MAXDISK);
    let uptime = match (running, ct.started_ms()) {
        (true, Some(s)) => (now_ms - s).max(0) / 1000,
        _ => 0,
    };
    let maxmem = ct.maxmem();
    let name: String = conf
        .get("hostname")
        .map_or_else(|| format!("CT{}", ct.vmid()), Clone::clone)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let u = u64::try_from(uptime).unwrap_or(0);
    let on = |x: u64| if running { x } else { 0 };
    CtFigures {
        name,
        cpus,
        maxmem,
        maxdisk,
        disk: on(maxdisk / 8),
        mem: on(maxmem / 8),
        cpu: if running { 0.0042 } else { 0.0 },
        uptime,
        netin: on(u * 1200),
        netout: on(u * 250),
        diskread: on(u * 4096),
        diskwrite: on(u * 1024),
    }
}

/// `vmstatus()` for one container on one of `nodes`; `current` adds
/// what `status/current` shows (`ha`).
pub(crate) fn ct_status<'a>(
    ct: &'a Ct,
    nodes: &Nodes,
    ha: &'a Ha,
    version: PveVersion,
    now_ms: i64,
    current: bool,
) -> CtStatus<'a> {
    let running = ct.running();
    let host_cpus = nodes
        .iter()
        .find(|n| n.name == ct.node())
        .map_or(1, |n| u64::from(n.cpus));
    CtStatus {
        vmid: ct.vmid(),
        status: ct.status(),
        figures: ct_figures(ct, now_ms, host_cpus),
        maxswap: ct.maxswap(),
        pid: running.then(|| 20_000 + ct.vmid()),
        // Pressure stall figures came with PVE 9.0.
        pressure: running && version.is_v9(),
        tags: ct.config().get("tags").map(String::as_str),
        template: ct.template(),
        lock: ct.lock(),
        ha: current.then(|| ha.guest_service_status("ct", ct.vmid())),
    }
}

/// A scenario's containers: running ones started an hour before `now`,
/// and the volumes their configs name made on their storages.
pub(crate) fn adopt_seed_cts(guests: &mut Guests, storage: &mut Storages, now: i64) {
    let mut adopt = Vec::new();
    let ids: Vec<u32> = guests.cts().keys().copied().collect();
    for vmid in ids {
        let Some(ct) = guests.ct_by_id_mut(vmid) else {
            continue;
        };
        if ct.running() {
            ct.started_ms = Some((now - 3_600) * 1000);
        }
        for (k, v) in &ct.config {
            if !super::schema::is_volume_key(k) {
                continue;
            }
            let Some(vol) =
                super::schema::mp_volume(v).filter(|x| super::schema::is_storage_volume(x))
            else {
                continue;
            };
            adopt.push((vol.to_string(), ct.node.clone(), mp_size(v).unwrap_or(0)));
        }
    }
    for (volid, node, size) in adopt {
        let vmid = volid
            .rsplit(['/', ':'])
            .next()
            .and_then(|n| n.split('-').nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        storage.adopt_volume(&volid, &node, vmid, size, now);
    }
}

impl Guests {
    /// `GET .../interfaces`: the addresses inside a running container
    /// (what `ip --json a` reports in its network namespace, in the guest
    /// agent's JSON shape); none when it is stopped. Set through
    /// `/_fake/guests/{vmid}` (`interfaces`), otherwise made from the
    /// config: `lo`, then each `netN` with its static address or a
    /// DHCP-style one, and the link-local IPv6 address of its MAC.
    ///
    /// # Errors
    /// A missing container.
    pub fn ct_interfaces(&self, node: &str, vmid: u32) -> crate::model::Result<Option<Value>> {
        let ct = self.ct(node, vmid)?;
        if !ct.running() {
            return Ok(None);
        }
        let given = self.agent(vmid).and_then(|a| a.interfaces.clone());
        Ok(Some(given.unwrap_or_else(|| default_interfaces(ct))))
    }
}

fn default_interfaces(ct: &Ct) -> Value {
    let mut out = vec![json!({
        "name": "lo",
        "hardware-address": "00:00:00:00:00:00",
        "ip-addresses": [
            {"ip-address": "127.0.0.1", "ip-address-type": "ipv4", "prefix": 8},
            {"ip-address": "::1", "ip-address-type": "ipv6", "prefix": 128},
        ],
    })];
    let mut nets: Vec<(u32, &String)> = ct
        .config()
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("net")?.parse::<u32>().ok()?, v)))
        .collect();
    nets.sort_by_key(|(n, _)| *n);
    for (n, value) in nets {
        let field = |key: &str| {
            value
                .split(',')
                .find_map(|p| p.strip_prefix(key).map(str::to_string))
        };
        let mac = field("hwaddr=").unwrap_or_default().to_ascii_lowercase();
        let name = field("name=").unwrap_or_else(|| format!("eth{n}"));
        let mut ips = Vec::new();
        match field("ip=") {
            Some(ip) if ip.contains('/') => {
                let (a, p) = ip.split_once('/').unwrap_or((&ip, "24"));
                ips.push(json!({"ip-address": a, "ip-address-type": "ipv4",
                    "prefix": p.parse::<u32>().unwrap_or(24)}));
            }
            Some(ip) if ip == "dhcp" => {
                let host = ct.vmid() % 250 + 2;
                ips.push(json!({"ip-address": format!("10.0.{n}.{host}"),
                    "ip-address-type": "ipv4", "prefix": 24}));
            }
            _ => {}
        }
        if let Some(ip6) = field("ip6=").filter(|i| i.contains('/')) {
            let (a, p) = ip6.split_once('/').unwrap_or((&ip6, "64"));
            ips.push(json!({"ip-address": a, "ip-address-type": "ipv6",
                "prefix": p.parse::<u32>().unwrap_or(64)}));
        }
        if !mac.is_empty() {
            ips.push(json!({"ip-address": crate::model::agent::link_local(&mac),
                "ip-address-type": "ipv6", "prefix": 64}));
        }
        out.push(json!({ "name": name, "hardware-address": mac, "ip-addresses": ips }));
    }
    Value::Array(out)
}

/// The `rrddata` series of a container (`pve2-vm` on 8.4,
/// `pve-vm-9.0` on 9.x), from the figures `status/current` reports.
pub fn ct_rrddata(
    ct: &Ct,
    nodes: &Nodes,
    version: PveVersion,
    timeframe: &str,
    now_ms: i64,
) -> Vec<GuestPoint> {
    let v9 = version.is_v9();
    let host_cpus = nodes
        .iter()
        .find(|n| n.name == ct.node())
        .map_or(1, |n| u64::from(n.cpus));
    let st = ct_figures(ct, now_ms, host_cpus);
    let started = ct.started_ms().map(|ms| ms.div_euclid(1000));
    steps(v9, timeframe, now_ms)
        .map(|t| {
            let up = ct.running() && started.is_some_and(|s| s <= t);
            let when_up = |v: u64| if up { v } else { 0 };
            GuestPoint {
                time: t,
                sizes: Some(Sizes {
                    maxcpu: st.cpus.clone(),
                    maxmem: st.maxmem,
                    maxdisk: st.maxdisk,
                    disk: when_up(st.maxdisk / 8),
                }),
                load: Some(Load {
                    cpu: if up { 0.0042 } else { 0.0 },
                    mem: when_up(st.maxmem / 8),
                    netin: when_up(1200),
                    netout: when_up(250),
                    diskread: when_up(4096),
                    diskwrite: when_up(1024),
                    memhost: None,
                    pressure: v9.then(Pressure::default),
                }),
            }
        })
        .collect()
}
