//! What the pools hold (`ceph df`): the images of a pool's `rbd`
//! storages and the files of a CephFS storage count as the pool's
//! stored bytes; each takes raw space by its replication (`size`) or
//! its erasure code (`(k + m) / k`); what is left of the OSDs, under
//! Ceph's full ratio, is each pool's `max_avail`.
//!
//! fake-pve does not follow what guests write: an image counts its
//! whole size as stored, as the other storages' usage counts a volume.

use std::collections::BTreeMap;

use super::{Ceph, Pool};
use crate::model::storage::Storages;

/// What BlueStore uses of an empty OSD's disk.
pub const OSD_OVERHEAD: u64 = 27_648 * 1024;

/// Ceph's `mon_osd_full_ratio`.
const FULL_RATIO: f64 = 0.95;

/// An object of an RBD image or a CephFS file.
const OBJECT: u64 = 4 << 20;

/// A pool's `stats` in `ceph df`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolStats {
    /// User bytes.
    pub stored: u64,
    /// Objects.
    pub objects: u64,
    /// Raw bytes, KiB.
    pub kb_used: u64,
    /// Raw bytes.
    pub bytes_used: u64,
    /// `bytes_used / (bytes_used + raw max_avail)`, a fraction.
    pub percent_used: f64,
    /// User bytes still to be written before the first OSD is full.
    pub max_avail: u64,
}

/// The raw space of the OSDs that are up (`pgmap` of `ceph status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawStats {
    /// User bytes of every pool.
    pub data: u64,
    /// Raw bytes used.
    pub used: u64,
    /// Raw bytes free.
    pub avail: u64,
    /// Raw bytes.
    pub total: u64,
}

/// The bytes each pool of this cluster stores through `storage.cfg`: an
/// `rbd` storage's images in its `data-pool` (else its `pool`, else
/// `rbd`), a `cephfs` storage's volumes in its file system's first data
/// pool. A storage's declared usage (`used:` in a scenario) is not
/// counted; storages of an external cluster (`monhost`) count nothing
/// here.
pub fn stored_by_pool(ceph: &Ceph, storages: &Storages, node: &str) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for s in storages.cfg() {
        if s.options.contains_key("monhost") {
            continue;
        }
        let pool = match s.kind.as_str() {
            "rbd" => s
                .options
                .get("data-pool")
                .or_else(|| s.options.get("pool"))
                .cloned()
                .unwrap_or_else(|| "rbd".into()),
            "cephfs" => {
                let fs = s.options.get("fs-name");
                let Some(f) = ceph
                    .filesystems()
                    .iter()
                    .find(|f| fs.is_none_or(|n| *n == f.name))
                else {
                    continue;
                };
                let Some(p) = f.data_pools.first() else {
                    continue;
                };
                p.clone()
            }
            _ => continue,
        };
        if ceph.pools().iter().any(|p| p.name == pool) {
            *out.entry(pool).or_default() += storages.volumes().allocated(s, node);
        }
    }
    out
}

impl Ceph {
    /// Raw bytes a pool takes per byte stored: `size` copies, or
    /// `(k + m) / k` of an erasure code.
    pub fn raw_rate(&self, pool: &Pool) -> f64 {
        if let Some(ec) = &pool.ec
            && let Some(p) = self.ec_profile(&ec.profile)
        {
            let get = |key: &str| p.get(key).and_then(|v| v.parse::<f64>().ok());
            if let (Some(k), Some(m)) = (get("k"), get("m"))
                && k > 0.0
            {
                return (k + m) / k;
            }
        }
        f64::from(pool.size.max(1))
    }

    /// The device class a pool's rule takes OSDs of (an erasure code's
    /// `crush-device-class`), if any.
    fn pool_class(&self, pool: &Pool) -> Option<String> {
        let ec = pool.ec.as_ref()?;
        self.ec_profile(&ec.profile)?
            .get("crush-device-class")
            .filter(|c| !c.is_empty())
            .cloned()
    }

    /// The raw space of the OSDs that are up, with the pools' data in it.
    pub fn raw_stats(&self, stored: &BTreeMap<String, u64>) -> RawStats {
        let up: Vec<u64> = self.osds.iter().filter(|o| o.up).map(|o| o.size).collect();
        let total: u64 = up.iter().sum();
        let overhead = OSD_OVERHEAD * up.len() as u64;
        let data: u64 = stored.values().sum();
        let pools_raw: f64 = self
            .pools
            .iter()
            .map(|p| stored.get(&p.name).copied().unwrap_or(0) as f64 * self.raw_rate(p))
            .sum();
        let used = (overhead + pools_raw as u64).min(total);
        RawStats {
            data,
            used,
            avail: total - used,
            total,
        }
    }

    /// A pool's `ceph df` line.
    pub fn pool_stats(&self, pool: &Pool, stored: &BTreeMap<String, u64>) -> PoolStats {
        let raw = self.raw_stats(stored);
        let class = self.pool_class(pool);
        let room: u64 = self
            .osds
            .iter()
            .filter(|o| o.up && o.is_in)
            .filter(|o| class.as_ref().is_none_or(|c| *c == o.class))
            .map(|o| o.size)
            .sum();
        let free_share = if raw.total == 0 {
            0.0
        } else {
            raw.avail as f64 / raw.total as f64
        };
        let rate = self.raw_rate(pool);
        let max_avail = (room as f64 * free_share * FULL_RATIO / rate) as u64;
        let mine = stored.get(&pool.name).copied().unwrap_or(0);
        let bytes_used = (mine as f64 * rate) as u64;
        let all = bytes_used as f64 + max_avail as f64 * rate;
        PoolStats {
            stored: mine,
            objects: mine.div_ceil(OBJECT),
            kb_used: bytes_used.div_ceil(1024),
            bytes_used,
            percent_used: if all > 0.0 {
                bytes_used as f64 / all
            } else {
                0.0
            },
            max_avail,
        }
    }
}

/// An `rbd` storage's capacity as RBDPlugin's `status` has it from `ceph
/// df`: `used` the pool's stored bytes, `avail` its `max_avail`, `total`
/// both. Storages of a pool this cluster does not have (or of an
/// external cluster) keep their own figures.
pub fn rbd_status(
    ceph: &Ceph,
    storages: &Storages,
    node: &str,
    st: &mut crate::model::storage::cfg::StorageStatus,
) {
    if st.kind != "rbd" || st.active == 0 {
        return;
    }
    let Some(s) = storages.find(&st.storage) else {
        return;
    };
    if s.options.contains_key("monhost") {
        return;
    }
    let name = s
        .options
        .get("data-pool")
        .or_else(|| s.options.get("pool"))
        .map_or("rbd", String::as_str);
    let Some(pool) = ceph.pools().iter().find(|p| p.name == name) else {
        return;
    };
    let stored = stored_by_pool(ceph, storages, node);
    let stats = ceph.pool_stats(pool, &stored);
    st.used = stats.stored;
    st.avail = stats.max_avail;
    st.total = stats.stored + stats.max_avail;
    st.used_fraction = (st.total > 0).then(|| st.used as f64 / st.total as f64);
}
