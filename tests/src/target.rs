//! Where the features run: an in-process fake-pve per scenario (the
//! default), or a real PVE cluster named by the `PVE_*` environment.
//!
//! A real run is confined: it works on one node (`PVE_TEST_NODE`), one
//! storage (`PVE_TEST_STORAGE`) and one bridge (`PVE_TEST_BRIDGE`), only
//! with VMIDs of the reserved range (`PVE_TEST_VMID_RANGE`, default
//! `90000-90999`), and only with users, groups, roles and tokens it made
//! itself, all named with the run's prefix.

use std::ops::RangeInclusive;

use pve_client::{Client, Config, ConfigBuilder};
use pve_schema::Release;

use crate::raw::Trust;

/// The reserved VMID range when `PVE_TEST_VMID_RANGE` is not set.
pub const DEFAULT_VMID_RANGE: RangeInclusive<u32> = 90_000..=90_999;

/// A `PVE_TEST_VMID_RANGE` that is not a range of VMIDs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("PVE_TEST_VMID_RANGE: expected FIRST-LAST (as 90000-90999), got '{0}'")]
pub struct RangeError(pub String);

/// Why the target cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// `--target` names neither `fake` nor `real`.
    #[error("unknown target '{0}' (fake or real)")]
    Unknown(String),
    /// `PVE_TEST_VMID_RANGE` is malformed.
    #[error(transparent)]
    Range(#[from] RangeError),
    /// A real target without `PVE_TEST_NODE`.
    #[error("a real target needs PVE_TEST_NODE: the node the features may work on")]
    NoTestNode,
    /// The `PVE_*` settings do not make a client configuration.
    #[error("PVE_* configuration: {0}")]
    Config(#[source] pve_client::Error),
    /// The cluster cannot be reached or refuses the credentials.
    #[error("cannot connect to {url}: {source}")]
    Connect {
        /// The API's URL.
        url: String,
        /// What the client answered.
        source: pve_client::Error,
    },
    /// `GET /version` failed.
    #[error("GET /version: {0}")]
    Version(#[source] pve_client::Error),
    /// The `PVE_CA_BUNDLE` file cannot be read.
    #[error("PVE_CA_BUNDLE {path}: {source}")]
    CaBundle {
        /// The file, as `PVE_CA_BUNDLE` names it.
        path: String,
        /// What the system answered.
        source: std::io::Error,
    },
}

/// What the features are played against.
#[derive(Debug, Clone)]
pub struct Target {
    /// Fake or real.
    pub kind: Kind,
    /// The VMIDs scenarios may use; anything else is refused.
    pub vmids: RangeInclusive<u32>,
    /// The node scenarios work on.
    pub node: String,
    /// The storage scenarios may allocate on.
    pub storage: String,
    /// The bridge scenarios may attach to.
    pub bridge: String,
    /// Prefix of every user, group, role and token a scenario makes.
    pub prefix: String,
}

/// Fake or real, with what each needs.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A fresh in-process fake-pve per scenario, impersonating `release`
    /// unless the scenario's tags ask for the other one.
    Fake {
        /// The release of scenarios without a version tag.
        release: Release,
    },
    /// A real cluster.
    Real(Box<Real>),
}

/// A real cluster.
#[derive(Debug, Clone)]
pub struct Real {
    /// The administrator's configuration (`PVE_*`).
    pub admin: Config,
    /// The endpoint and TLS settings, for clients of other users.
    pub env: Vec<(String, String)>,
    /// How raw requests trust the certificate.
    pub trust: Trust,
    /// The release the cluster runs (from `/version`).
    pub release: Release,
    /// Its full version (`9.1.5`).
    pub version: String,
}

/// The environment variables that say where and how to connect (but not
/// as whom).
const CONNECTION_VARS: [&str; 4] = [
    "PVE_ENDPOINT",
    "PVE_INSECURE_SKIP_VERIFY",
    "PVE_CA_BUNDLE",
    "PVE_TLS_FINGERPRINT",
];

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Parses `90000-90999`.
///
/// # Errors
/// When it is not a range of VMIDs (100 to 999999999).
pub fn parse_range(s: &str) -> Result<RangeInclusive<u32>, RangeError> {
    let bad = || RangeError(s.to_string());
    let (a, b) = s.trim().split_once('-').ok_or_else(bad)?;
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    if a < 100 || b < a || b > 999_999_999 {
        return Err(bad());
    }
    Ok(a..=b)
}

/// Every release the features know, oldest first.
pub const RELEASES: [Release; 3] = [Release::V8_4, Release::V9_1, Release::V9_2];

/// The release a version string belongs to, as far as the features
/// distinguish them: any 8.x is 8.4, 9.0 and 9.1 are 9.1, anything newer
/// is 9.2.
pub fn release_of(version: &str) -> Release {
    pve_client::schema::release_for(version)
}

/// `8.4`, `9.1` or `9.2`.
pub fn release_name(r: Release) -> &'static str {
    pve_client::schema::release_name(r)
}

/// The releases a scenario's tags (its feature's included) say it is
/// about: the exact ones (`@pve8.4`, `@pve9.1`, `@pve9.2`) when it has
/// any, which narrow a feature's wider tag; else the lines (`@pve8`,
/// `@pve9`: every 9.x); else every release.
pub fn tagged_releases(tags: &[String]) -> Vec<Release> {
    let has = |t: &str| tags.iter().any(|x| x == t);
    let exact: Vec<Release> = RELEASES
        .into_iter()
        .filter(|r| has(&format!("pve{}", release_name(*r))))
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    let lines: Vec<Release> = RELEASES
        .into_iter()
        .filter(|r| {
            let major = release_name(*r).split('.').next().unwrap_or_default();
            has(&format!("pve{major}"))
        })
        .collect();
    if lines.is_empty() {
        RELEASES.to_vec()
    } else {
        lines
    }
}

/// The release fake-pve impersonates for a scenario: the run's, when the
/// scenario's tags allow it, else the newest release they name.
pub fn fake_release_for(tags: &[String], run: Release) -> Release {
    let allowed = tagged_releases(tags);
    if allowed.contains(&run) {
        run
    } else {
        allowed.last().copied().unwrap_or(run)
    }
}

/// A fresh prefix for the objects of one run: `cnf` and six hex digits.
pub fn fresh_prefix() -> String {
    format!("cnf{:06x}", rand::random_range(0..0x100_0000u32))
}

impl Target {
    /// The target the options and the environment describe: real when
    /// `--target real` is given, or when no target is given and
    /// `PVE_ENDPOINT` and credentials are set; fake otherwise.
    ///
    /// # Errors
    /// When a real target lacks its settings or cannot be reached.
    pub async fn resolve(asked: Option<&str>, fake_release: Release) -> Result<Self, TargetError> {
        let has_creds = env("PVE_TOKEN_ID").is_some() || env("PVE_USERNAME").is_some();
        let real = match asked.map(str::to_ascii_lowercase).as_deref() {
            Some("real") => true,
            Some("fake") => false,
            Some(other) => return Err(TargetError::Unknown(other.to_string())),
            None => env("PVE_ENDPOINT").is_some() && has_creds,
        };
        let vmids = match env("PVE_TEST_VMID_RANGE") {
            Some(s) => parse_range(&s)?,
            None => DEFAULT_VMID_RANGE,
        };
        let prefix = fresh_prefix();
        if !real {
            return Ok(Self {
                kind: Kind::Fake {
                    release: fake_release,
                },
                vmids,
                node: "pve".into(),
                storage: "local-lvm".into(),
                bridge: "vmbr0".into(),
                prefix,
            });
        }
        let node = env("PVE_TEST_NODE").ok_or(TargetError::NoTestNode)?;
        let admin = Config::from_env().map_err(TargetError::Config)?;
        let client =
            Client::connect(admin.clone())
                .await
                .map_err(|source| TargetError::Connect {
                    url: admin.api_url().to_string(),
                    source,
                })?;
        let version = client.version().await.map_err(TargetError::Version)?;
        let trust = if env("PVE_TLS_FINGERPRINT").is_some() {
            Trust::Fingerprint(env("PVE_TLS_FINGERPRINT").unwrap_or_default())
        } else if env("PVE_INSECURE_SKIP_VERIFY")
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
        {
            Trust::Insecure
        } else if let Some(ca) = env("PVE_CA_BUNDLE") {
            Trust::CaPem(if ca.contains("-----BEGIN") {
                ca
            } else {
                std::fs::read_to_string(ca.trim()).map_err(|source| TargetError::CaBundle {
                    path: ca.clone(),
                    source,
                })?
            })
        } else {
            Trust::WebPki
        };
        let env_vars = CONNECTION_VARS
            .iter()
            .filter_map(|k| env(k).map(|v| ((*k).to_string(), v)))
            .collect();
        Ok(Self {
            kind: Kind::Real(Box::new(Real {
                admin,
                env: env_vars,
                trust,
                release: release_of(&version.version),
                version: version.version,
            })),
            vmids,
            node,
            storage: env("PVE_TEST_STORAGE").unwrap_or_else(|| "local-lvm".into()),
            bridge: env("PVE_TEST_BRIDGE").unwrap_or_else(|| "vmbr0".into()),
            prefix,
        })
    }

    /// Whether this is a real cluster.
    pub fn is_real(&self) -> bool {
        matches!(self.kind, Kind::Real(_))
    }

    /// A short description for the report.
    pub fn describe(&self) -> String {
        let range = format!("{}-{}", self.vmids.start(), self.vmids.end());
        match &self.kind {
            Kind::Fake { release } => format!(
                "in-process fake-pve (PVE {} unless tagged otherwise), VMIDs {range}",
                release_name(*release)
            ),
            Kind::Real(r) => format!(
                "real PVE {} at {} (node {}, storage {}, bridge {}, VMIDs {range}, objects prefixed {})",
                r.version,
                r.admin.api_url(),
                self.node,
                self.storage,
                self.bridge,
                self.prefix
            ),
        }
    }
}

impl Real {
    /// A configuration builder for the cluster with the administrator's
    /// endpoint and TLS settings, but no credentials yet.
    ///
    /// # Errors
    /// Never in practice: the settings were checked at start.
    pub fn builder(&self) -> Result<ConfigBuilder, pve_client::Error> {
        Config::builder().with_env(|k| {
            self.env
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("90000-90999"), Ok(90_000..=90_999));
        assert_eq!(parse_range(" 100 - 199 "), Ok(100..=199));
        assert!(parse_range("99-200").is_err());
        assert!(parse_range("200-100").is_err());
        assert!(parse_range("90000").is_err());
    }

    #[test]
    fn tags_pick_the_fake_release() {
        let tags = |t: &[&str]| t.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        assert_eq!(
            fake_release_for(&tags(&["vm"]), Release::V9_1),
            Release::V9_1
        );
        assert_eq!(
            fake_release_for(&tags(&["pve8"]), Release::V9_2),
            Release::V8_4
        );
        assert_eq!(
            fake_release_for(&tags(&["pve9"]), Release::V9_1),
            Release::V9_1
        );
        assert_eq!(
            fake_release_for(&tags(&["pve9"]), Release::V8_4),
            Release::V9_2
        );
        assert_eq!(
            fake_release_for(&tags(&["pve9.1"]), Release::V9_2),
            Release::V9_1
        );
        assert_eq!(
            fake_release_for(&tags(&["pve9.2"]), Release::V9_1),
            Release::V9_2
        );
        assert_eq!(
            fake_release_for(&tags(&["pve8", "pve9"]), Release::V9_1),
            Release::V9_1
        );
        assert_eq!(
            tagged_releases(&tags(&["pve9"])),
            [Release::V9_1, Release::V9_2]
        );
        assert_eq!(tagged_releases(&[]), RELEASES);
        // An exact tag narrows its feature's line.
        assert_eq!(
            tagged_releases(&tags(&["sdn", "pve9", "pve9.1"])),
            [Release::V9_1]
        );
        assert_eq!(
            tagged_releases(&tags(&["pve8.4", "pve9.1"])),
            [Release::V8_4, Release::V9_1]
        );
        assert_eq!(
            fake_release_for(&tags(&["pve9", "pve9.2"]), Release::V9_1),
            Release::V9_2
        );
    }

    #[test]
    fn releases() {
        assert_eq!(release_of("8.4.14"), Release::V8_4);
        assert_eq!(release_of("9.1.5"), Release::V9_1);
        assert_eq!(release_of("9.2.11"), Release::V9_2);
        for r in RELEASES {
            assert_eq!(release_of(release_name(r)), r);
        }
        assert!(fresh_prefix().starts_with("cnf"));
        assert_eq!(fresh_prefix().len(), 9);
    }
}
