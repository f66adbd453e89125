//! CI smoke of the scale measurement with a small world: the counting
//! allocator sees the world's memory and every call answers. The real
//! figures (100,000 guests) come from `pve-scale` (PERFORMANCE.md).

use cap::Cap;
use pve_loadtest::scale::{CALLS, Options, measure, world_json, world_yaml};

#[global_allocator]
static ALLOC: Cap<std::alloc::System> = Cap::new(std::alloc::System, usize::MAX);

#[test]
fn the_world_has_the_asked_guests_spread_over_the_nodes() {
    let y = world_yaml(3, 8);
    let s = fake_pve::Scenario::parse(&y, "t").expect("valid scenario");
    // Every fourth guest is a container: 103 and 107.
    assert_eq!(s.vms.len(), 6);
    assert_eq!(s.containers.len(), 2);
    assert_eq!(s.nodes.len(), 3);
    assert_eq!(s.vms[4].node.as_deref(), Some("node2"));
    assert_eq!(s.containers[0].vmid, 103);
    assert_eq!(s.containers[1].node.as_deref(), Some("node1"));
    // The world builds, with both kinds in one VMID space.
    let c = s
        .build(fake_pve::PveVersion::V9_1, "pw", 1_790_000_000)
        .expect("builds");
    assert!(c.guests().ct_by_id(107).is_some() && c.guests().get(&106).is_some());
}

/// The JSON world (what pve-scale loads) is the YAML one.
#[test]
fn the_json_world_is_the_yaml_world() {
    let build = |text: &str| {
        let c = fake_pve::Scenario::parse(text, "t")
            .expect("valid scenario")
            .build(fake_pve::PveVersion::V9_1, "pw", 1_790_000_000)
            .expect("builds");
        fake_pve::api::cluster::view::resources(&c.resources(), None, 1_790_000_100)
    };
    let (y, j) = (build(&world_yaml(3, 50)), build(&world_json(3, 50)));
    assert_eq!(y.len(), j.len());
    assert_eq!(y, j);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_world_is_measured() {
    let r = measure(&Options {
        nodes: 4,
        vms: 400,
        requests: 20,
        live_bytes: || Some(ALLOC.allocated()),
    })
    .await
    .expect("measured");
    let table = r.table();
    println!("{table}");
    let (small, big) = (
        r.small.heap_bytes.expect("counted"),
        r.big.heap_bytes.expect("counted"),
    );
    assert!(big > small, "{table}");
    assert_eq!(r.big.calls.len(), CALLS.len());
    for c in r.small.calls.iter().chain(&r.big.calls) {
        assert!(c.p50_us > 0.0 && c.p50_us <= c.p95_us, "{table}");
    }
    assert!(table.contains("400 guests on 4 nodes"), "{table}");
}
