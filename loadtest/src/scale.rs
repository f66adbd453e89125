//! fake-pve at scale: the memory a world of many guests on many nodes
//! takes, and whether single-VM calls cost the same there as in a world
//! of ten guests.
//!
//! Memory is counted by the allocator the measuring binary installs (it
//! passes a function answering the live heap bytes, see [`Options`]): the
//! live heap after the world is loaded, minus before. The resident set size is reported too (it
//! also holds memory the allocator keeps after parsing the scenario).
//! Latency is measured over loopback TLS with a ticket, one request after
//! the other on one keep-alive connection, on guests picked at random
//! (seeded) all over the world.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fake_pve::{FakePve, Running, Scenario};

use crate::Error;

/// The resident set size from `/proc/self/status`, when readable.
pub fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The size of the world and of the sample.
#[derive(Debug, Clone)]
pub struct Options {
    /// Nodes of the big world.
    pub nodes: u32,
    /// Guests of the big world.
    pub vms: u32,
    /// Requests per call and world.
    pub requests: u32,
    /// The live heap bytes, from the allocator the binary installs.
    pub live_bytes: fn() -> Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            nodes: 100,
            vms: 100_000,
            requests: 2_000,
            live_bytes: || None,
        }
    }
}

/// Latency of one call in one world.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Median, microseconds.
    pub p50_us: f64,
    /// 95th percentile, microseconds.
    pub p95_us: f64,
}

/// The calls measured, as PVE names them.
pub const CALLS: [&str; 3] = [
    "vm_status (GET status/current)",
    "vm_config (GET config)",
    "update_vm (PUT config)",
];

/// The figures of one world.
#[derive(Debug, Clone, Default)]
pub struct World {
    /// Nodes.
    pub nodes: u32,
    /// Guests.
    pub vms: u32,
    /// Live heap the world added, bytes (when counted).
    pub heap_bytes: Option<usize>,
    /// Resident set size after loading, bytes.
    pub rss_bytes: Option<u64>,
    /// Time to load the scenario and start.
    pub load_time: Duration,
    /// Of which reading and checking the scenario (JSON).
    pub parse_time: Duration,
    /// Per call of [`CALLS`].
    pub calls: Vec<Latency>,
}

/// Both worlds.
#[derive(Debug, Clone)]
pub struct Report {
    /// Ten guests on one node.
    pub small: World,
    /// The big world.
    pub big: World,
}

/// The targets for 1,000,000 guests on 1,000 nodes: the world in 4 GiB
/// of memory, started in 10 s; a smaller world is judged pro rata.
pub const MEMORY_TARGET_1M: u64 = 4 << 30;
/// See [`MEMORY_TARGET_1M`].
pub const START_TARGET_1M: Duration = Duration::from_secs(10);

impl Report {
    /// Whether the big world fits its memory and start targets (pro rata
    /// of a million guests' 4 GiB and 10 s).
    pub fn passed(&self) -> bool {
        let share = f64::from(self.big.vms) / 1e6;
        self.big
            .heap_bytes
            .is_some_and(|h| (h as f64) < MEMORY_TARGET_1M as f64 * share)
            && self.big.load_time.as_secs_f64() < START_TARGET_1M.as_secs_f64() * share
    }

    /// A Markdown table.
    pub fn table(&self) -> String {
        let mib = |b: Option<u64>| {
            b.map_or("n/a".to_string(), |b| {
                let m = b as f64 / 1_048_576.0;
                if m < 10.0 {
                    format!("{m:.2} MiB")
                } else {
                    format!("{m:.0} MiB")
                }
            })
        };
        let plural = |n: u32, one: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {one}s")
            }
        };
        let mut t = String::new();
        let _ = writeln!(
            t,
            "| world | live heap | RSS | start (of which reading and checking the scenario) |"
        );
        let _ = writeln!(t, "|---|---|---|---|");
        for w in [&self.small, &self.big] {
            let _ = writeln!(
                t,
                "| {} on {} | {} | {} | {:.1} s ({:.1} s) |",
                plural(w.vms, "guest"),
                plural(w.nodes, "node"),
                mib(w.heap_bytes.map(|b| b as u64)),
                mib(w.rss_bytes),
                w.load_time.as_secs_f64(),
                w.parse_time.as_secs_f64()
            );
        }
        let _ = writeln!(t);
        let _ = writeln!(
            t,
            "| call | {} guests p50 / p95 | {} guests p50 / p95 |",
            self.small.vms, self.big.vms
        );
        let _ = writeln!(t, "|---|---|---|");
        for (i, call) in CALLS.iter().enumerate() {
            let (s, b) = (self.small.calls[i], self.big.calls[i]);
            let _ = writeln!(
                t,
                "| {call} | {:.0} µs / {:.0} µs | {:.0} µs / {:.0} µs |",
                s.p50_us, s.p95_us, b.p50_us, b.p95_us
            );
        }
        let share = f64::from(self.big.vms) / 1e6;
        let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
        if let Some(h) = self.big.heap_bytes {
            let target = MEMORY_TARGET_1M as f64 * share;
            let _ = writeln!(
                t,
                "\n{} guests: {:.0} MiB of live heap, {:.1} KiB per guest (target under {:.0} MiB, 4 GiB for a million): {}",
                self.big.vms,
                h as f64 / 1048576.0,
                h as f64 / 1024.0 / f64::from(self.big.vms.max(1)),
                target / 1048576.0,
                verdict((h as f64) < target)
            );
        }
        let start = START_TARGET_1M.as_secs_f64() * share;
        let _ = writeln!(
            t,
            "{} guests: started in {:.1} s (target under {:.1} s, 10 s for a million): {}",
            self.big.vms,
            self.big.load_time.as_secs_f64(),
            start,
            verdict(self.big.load_time.as_secs_f64() < start)
        );
        t
    }
}

/// Whether guest number `v` of a scale world is a container (every
/// fourth guest is; the others are VMs).
pub fn is_container(v: u32) -> bool {
    v % 4 == 3
}

/// The status of the `v`-th guest of a big world: a third run.
fn status(v: u32) -> &'static str {
    if v.is_multiple_of(3) {
        "running"
    } else {
        "stopped"
    }
}

/// The MAC address of guest `vmid`'s NIC in a big world.
fn mac(vmid: u32) -> String {
    format!(
        "BC:24:11:{:02X}:{:02X}:{:02X}",
        (vmid >> 16) & 0xff,
        (vmid >> 8) & 0xff,
        vmid & 0xff
    )
}

/// A world of `vms` guests spread over `nodes` nodes, each configured as
/// a typical small server (a third of them running); every fourth guest
/// is a container, the others are VMs.
pub fn world_yaml(nodes: u32, vms: u32) -> String {
    let mut y = String::from("cluster: scale\nnodes:\n");
    for i in 0..nodes {
        let _ = writeln!(y, "  - {{name: node{i}, cpus: 64, memory: 512G}}");
    }
    y.push_str("storages:\n  - { id: local, type: dir, path: /var/lib/vz }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, size: 100T }\n");
    y.push_str("vms:\n");
    for v in (0..vms).filter(|v| !is_container(*v)) {
        let vmid = 100 + v;
        let _ = writeln!(
            y,
            "  - {{vmid: {vmid}, node: node{}, name: vm{v}, status: {}, config: {{cores: 2, memory: 2048, ostype: l26, scsihw: virtio-scsi-single, \
             scsi0: 'local-lvm:vm-{vmid}-disk-0,iothread=1,size=32G', net0: 'virtio={},bridge=vmbr0', agent: 1, \
             smbios1: 'uuid=00000000-0000-4000-8000-{vmid:012x}', vmgenid: '00000000-0000-4000-9000-{vmid:012x}'}}}}",
            v % nodes.max(1),
            status(v),
            mac(vmid),
        );
    }
    y.push_str("containers:\n");
    for v in (0..vms).filter(|v| is_container(*v)) {
        let vmid = 100 + v;
        let _ = writeln!(
            y,
            "  - {{vmid: {vmid}, node: node{}, hostname: ct{v}, status: {}, config: {{arch: amd64, ostype: debian, cores: 1, memory: 512, swap: 512, \
             unprivileged: 1, rootfs: 'local-lvm:vm-{vmid}-disk-0,size=8G', net0: 'name=eth0,bridge=vmbr0,hwaddr={},ip=dhcp,type=veth'}}}}",
            v % nodes.max(1),
            status(v),
            mac(vmid),
        );
    }
    y
}

/// [`world_yaml`] as JSON, which fake-pve reads many times faster.
pub fn world_json(nodes: u32, vms: u32) -> String {
    let mut j = String::from("{\"cluster\": \"scale\", \"nodes\": [\n");
    for i in 0..nodes {
        let sep = if i + 1 < nodes { "," } else { "" };
        let _ = writeln!(
            j,
            "  {{\"name\": \"node{i}\", \"cpus\": 64, \"memory\": \"512G\"}}{sep}"
        );
    }
    j.push_str("], \"storages\": [{\"id\": \"local\", \"type\": \"dir\", \"path\": \"/var/lib/vz\"}, {\"id\": \"local-lvm\", \"type\": \"lvmthin\", \"thinpool\": \"data\", \"vgname\": \"pve\", \"size\": \"100T\"}],\n");
    j.push_str("\"vms\": [\n");
    let mut first = true;
    for v in (0..vms).filter(|v| !is_container(*v)) {
        let vmid = 100 + v;
        let sep = if std::mem::take(&mut first) {
            ""
        } else {
            ",\n"
        };
        let _ = write!(
            j,
            "{sep}  {{\"vmid\": {vmid}, \"node\": \"node{}\", \"name\": \"vm{v}\", \"status\": \"{}\", \"config\": {{\"cores\": 2, \"memory\": 2048, \"ostype\": \"l26\", \"scsihw\": \"virtio-scsi-single\", \
             \"scsi0\": \"local-lvm:vm-{vmid}-disk-0,iothread=1,size=32G\", \"net0\": \"virtio={},bridge=vmbr0\", \"agent\": 1, \
             \"smbios1\": \"uuid=00000000-0000-4000-8000-{vmid:012x}\", \"vmgenid\": \"00000000-0000-4000-9000-{vmid:012x}\"}}}}",
            v % nodes.max(1),
            status(v),
            mac(vmid),
        );
    }
    j.push_str("\n], \"containers\": [\n");
    let mut first = true;
    for v in (0..vms).filter(|v| is_container(*v)) {
        let vmid = 100 + v;
        let sep = if std::mem::take(&mut first) {
            ""
        } else {
            ",\n"
        };
        let _ = write!(
            j,
            "{sep}  {{\"vmid\": {vmid}, \"node\": \"node{}\", \"hostname\": \"ct{v}\", \"status\": \"{}\", \"config\": {{\"arch\": \"amd64\", \"ostype\": \"debian\", \"cores\": 1, \"memory\": 512, \"swap\": 512, \
             \"unprivileged\": 1, \"rootfs\": \"local-lvm:vm-{vmid}-disk-0,size=8G\", \"net0\": \"name=eth0,bridge=vmbr0,hwaddr={},ip=dhcp,type=veth\"}}}}",
            v % nodes.max(1),
            status(v),
            mac(vmid),
        );
    }
    j.push_str("\n]}\n");
    j
}

/// Measures a world of ten guests, then the big one.
///
/// # Errors
/// When a world does not load or a call fails.
pub async fn measure(opts: &Options) -> Result<Report, Error> {
    let small = world(1, 10, opts).await?;
    let big = world(opts.nodes.max(1), opts.vms.max(1), opts).await?;
    Ok(Report { small, big })
}

async fn world(nodes: u32, vms: u32, opts: &Options) -> Result<World, Error> {
    let live_bytes = opts.live_bytes;
    let before = live_bytes();
    let json = world_json(nodes, vms);
    let started = Instant::now();
    // As `fake-pve --seed` reads it: checked as it is built.
    let scenario = Scenario::read_owned(json, "scale")?;
    let parse_time = started.elapsed();
    let pve = {
        FakePve::builder()
            .listen(SocketAddr::from(([127, 0, 0, 1], 0)))
            .scenario(scenario)
            .start()
            .await?
    };
    let load_time = started.elapsed();
    let heap_bytes = match (before, live_bytes()) {
        (Some(b), Some(a)) => Some(a.saturating_sub(b)),
        _ => None,
    };
    let rss = rss_bytes();
    let calls = calls(&pve, nodes, vms, opts.requests).await?;
    pve.shutdown().await;
    Ok(World {
        nodes,
        vms,
        heap_bytes,
        rss_bytes: rss,
        load_time,
        parse_time,
        calls,
    })
}

async fn calls(pve: &Running, nodes: u32, vms: u32, requests: u32) -> Result<Vec<Latency>, Error> {
    let (http, ticket, csrf) = crate::root_session(pve).await?;
    let cookie = format!("PVEAuthCookie={ticket}");
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
    let mut out = Vec::new();
    for (call, call_name) in CALLS.iter().enumerate() {
        let mut samples = Vec::with_capacity(requests as usize);
        for _ in 0..requests {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let v = u32::try_from(rng % u64::from(vms)).unwrap_or(0);
            let (vmid, node) = (100 + v, v % nodes);
            let kind = if is_container(v) { "lxc" } else { "qemu" };
            let base = format!("{}/nodes/node{node}/{kind}/{vmid}", pve.api_url());
            let req = match call {
                0 => http.get(format!("{base}/status/current")),
                1 => http.get(format!("{base}/config")),
                _ => http
                    .put(format!("{base}/config"))
                    .header("CSRFPreventionToken", &csrf)
                    .form(&[("description", format!("touched {rng:x}"))]),
            };
            let t = Instant::now();
            let r = req.header("Cookie", &cookie).send().await?;
            let status = r.status();
            let body = r.bytes().await?;
            samples.push(t.elapsed().as_secs_f64() * 1e6);
            if !status.is_success() {
                return Err(Error::Call {
                    call: call_name,
                    status,
                    body: String::from_utf8_lossy(&body).into_owned(),
                });
            }
        }
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        out.push(Latency {
            p50_us: at(0.5),
            p95_us: at(0.95),
        });
    }
    Ok(out)
}
