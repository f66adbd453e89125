//! A VM's statistics (RRD).

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Qemu, vm_path};
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The span of `rrddata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeframe {
    /// The last hour (one point a minute).
    Hour,
    /// The last day.
    Day,
    /// The last week.
    Week,
    /// The last month.
    Month,
    /// The last year.
    Year,
}

impl Timeframe {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Year => "year",
        }
    }
}

/// The consolidation of `rrddata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consolidation {
    /// Averages (PVE's default).
    Average,
    /// Maxima.
    Max,
}

impl Consolidation {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Average => "AVERAGE",
            Self::Max => "MAX",
        }
    }
}

/// One point of `GET .../rrddata` (`rrddata`); a field is `None` where
/// the RRD has no value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RrdPoint {
    /// Epoch seconds.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub time: i64,
    /// CPU use, a fraction of `maxcpu`.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpu: Option<f64>,
    /// CPUs.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub maxcpu: Option<f64>,
    /// Memory in use, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub mem: Option<f64>,
    /// Memory, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub maxmem: Option<f64>,
    /// Disk in use, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub disk: Option<f64>,
    /// Disk size, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub maxdisk: Option<f64>,
    /// Network in, bytes/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub netin: Option<f64>,
    /// Network out, bytes/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub netout: Option<f64>,
    /// Disk reads, bytes/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub diskread: Option<f64>,
    /// Disk writes, bytes/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub diskwrite: Option<f64>,
    /// Anything else (`memhost`, `pressure*`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Qemu<'_> {
    /// `GET .../rrddata` (`rrddata`): the VM's statistics over
    /// `timeframe`, oldest first.
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn rrddata(
        &self,
        node: &str,
        vmid: u32,
        timeframe: Timeframe,
        cf: Option<Consolidation>,
    ) -> Result<Vec<RrdPoint>> {
        let params = Params::new()
            .set("timeframe", timeframe.as_str())
            .opt("cf", cf.map(Consolidation::as_str));
        self.client
            .call(Method::GET, &vm_path(node, vmid, "/rrddata"), &params)
            .await
    }
}
