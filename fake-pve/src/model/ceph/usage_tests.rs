//! What the pools hold: `ceph df`, `ceph status`'s `pgmap` and an `rbd`
//! storage's capacity.

use rstest::rstest;

use super::erasure::ErasureCoding;
use super::usage::{OSD_OVERHEAD, rbd_status, stored_by_pool};
use super::*;
use crate::model::storage::Storages;
use crate::model::storage::Volume;

const TIB: u64 = 1 << 40;

/// Three OSDs of 1 TiB on `pve1`, a replicated pool `vm` with its `rbd`
/// storage holding an image of `image` bytes.
fn cluster(image: u64) -> (Ceph, Storages) {
    let mut c = Ceph::default();
    c.install("pve1", Release::Squid, None);
    for n in 0..3u8 {
        let new = NewOsd {
            devpath: format!("/dev/sd{}", (b'b' + n) as char),
            size: TIB,
            class: "ssd".into(),
            uuid: format!("0000000{n}-0000-4000-8000-00000000000a"),
            vg_uuid: format!("0000000{n}-0000-4000-8000-00000000000b"),
            ..NewOsd::default()
        };
        c.declare_osd("pve1", &new, true, true, 0).expect("osd");
    }
    c.declare_pool("vm", &[]).expect("pool");
    let mut st = Storages::default();
    st.create(&pools::rbd_storage("vm")).expect("storage");
    let s = st.find("vm").cloned().expect("vm");
    st.volumes_mut().insert(
        &s,
        "pve1",
        Volume {
            storage: "vm".into(),
            name: "vm-100-disk-0".into(),
            size: image,
            format: "raw".into(),
            vmid: 100,
            ctime: 0,
        },
    );
    (c, st)
}

#[rstest]
#[case(0)]
#[case(32 << 30)]
#[case(300 << 30)]
fn a_replicated_pool_takes_three_times_its_data(#[case] image: u64) {
    let (c, st) = cluster(image);
    let stored = stored_by_pool(&c, &st, "pve1");
    assert_eq!(stored.get("vm").copied(), Some(image));
    let pool = c.pool("vm").expect("vm");
    let s = c.pool_stats(pool, &stored);
    assert_eq!((s.stored, s.bytes_used), (image, image * 3));
    assert_eq!(s.objects, image.div_ceil(4 << 20));
    let raw = c.raw_stats(&stored);
    assert_eq!(raw.total, 3 * TIB);
    assert_eq!(raw.used, 3 * OSD_OVERHEAD + 3 * image);
    assert_eq!(raw.data, image);
    // What is left of the OSDs under the full ratio, in thirds.
    let want = ((3 * TIB - raw.used) as f64 * 0.95 / 3.0) as u64;
    assert!(s.max_avail.abs_diff(want) < 4, "{} vs {want}", s.max_avail);
    let all = s.bytes_used as f64 + s.max_avail as f64 * 3.0;
    assert!((s.percent_used - s.bytes_used as f64 / all).abs() < 1e-12);
}

#[test]
fn an_rbd_storage_has_its_pools_capacity() {
    let (c, st) = cluster(100 << 30);
    let s = st.find("vm").cloned().expect("vm");
    let mut status = st.status(&s, "pve1", None).expect("status");
    rbd_status(&c, &st, "pve1", &mut status);
    let stats = c.pool_stats(c.pool("vm").expect("vm"), &stored_by_pool(&c, &st, "pve1"));
    assert_eq!(status.used, 100 << 30);
    assert_eq!(status.avail, stats.max_avail);
    assert_eq!(status.total, status.used + status.avail);
}

#[rstest]
#[case("k=2,m=1", 1.5)]
#[case("k=4,m=2", 1.5)]
#[case("k=3,m=2", 5.0 / 3.0)]
fn an_erasure_coded_pool_takes_its_codes_share(#[case] ec: &str, #[case] rate: f64) {
    let (mut c, _) = cluster(0);
    let code = ErasureCoding::parse(ec).expect("ec");
    c.set_ec_profile("pve_ec_ec", &code).expect("profile");
    c.create_ec_pool("ec-data", 32, "pve_ec_ec").expect("pool");
    let pool = c.pool("ec-data").expect("ec-data");
    assert!((c.raw_rate(pool) - rate).abs() < 1e-12);
    let stored = [("ec-data".to_string(), 3u64 << 30)].into_iter().collect();
    let s = c.pool_stats(pool, &stored);
    assert_eq!(s.bytes_used, ((3u64 << 30) as f64 * rate) as u64);
}
