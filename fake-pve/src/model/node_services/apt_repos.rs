//! A node's APT sources (`/nodes/{node}/apt/repositories`), as PVE reads
//! and writes them with its Rust `proxmox-apt` crate (through
//! `Proxmox::RS::APT::Repositories`): the files of a fresh install of the
//! release, each with its repositories, the SHA-256 of its text and a
//! common digest over them, the `origin` of every repository, and the
//! standard Proxmox repositories with their status.
//!
//! 8.4 (bookworm, proxmox-apt 0.11) has one-line `.list` files; 9.1
//! (trixie, proxmox-apt 0.99) deb822 `.sources` files. A file that is
//! written is rendered again as proxmox-apt writes it (one repository
//! after the other, a blank line between them), so its digest changes
//! even when nothing in it did.
//!
//! As proxmox-apt of both releases does, `add_repository` looks for the
//! handle's repository among the configured ones as if the product were
//! PBS: a Proxmox VE repository (`enterprise`, `no-subscription`,
//! `test`) is never found there, so adding it appends a new entry even
//! when it is configured already (disabled or not). Only the Ceph
//! handles, which do not depend on the product, enable an entry that is
//! there.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Error, MODIFIED, PveVersion, Result};

/// One repository of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AptRepo {
    types: Vec<String>,
    uris: Vec<String>,
    suites: Vec<String>,
    components: Vec<String>,
    /// Other keys (`Signed-By`, and `Enabled` once it was set in a
    /// `.sources` file), in file order.
    options: Vec<(String, Vec<String>)>,
    /// The comment lines above it, each without its `#`, `\n`-ended.
    comment: String,
    enabled: bool,
}

/// A repository's `origin` (an `infos` entry of the listing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The file.
    pub path: &'a str,
    /// The repository's index in the file.
    pub index: usize,
    /// `Proxmox` or `Debian`.
    pub origin: &'static str,
}

/// A standard repository of the release, as the listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandardRepo {
    /// Its handle (`enterprise`, `no-subscription`, `ceph-squid-test`, ...).
    pub handle: String,
    /// Its title.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Whether it is configured and enabled (`None`: not configured).
    pub status: Option<bool>,
}

/// One file under `/etc/apt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AptFile {
    path: String,
    /// A deb822 `.sources` file (else a one-line `.list` file).
    deb822: bool,
    repos: Vec<AptRepo>,
    /// The file's text (its digest is the SHA-256 of it).
    text: String,
}

/// A node's APT sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AptSources {
    files: Vec<AptFile>,
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

fn repo(uri: &str, suites: &[&str], components: &[&str], key: Option<&str>) -> AptRepo {
    AptRepo {
        types: strs(&["deb"]),
        uris: strs(&[uri]),
        suites: strs(suites),
        components: strs(components),
        options: key
            .map(|k| vec![("Signed-By".to_string(), vec![k.to_string()])])
            .unwrap_or_default(),
        comment: String::new(),
        enabled: true,
    }
}

const PROXMOX_KEYRING: &str = "/usr/share/keyrings/proxmox-archive-keyring.gpg";
const DEBIAN_KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// The Debian codename of a release.
fn suite(v: PveVersion) -> &'static str {
    if v.is_v9() { "trixie" } else { "bookworm" }
}

impl AptSources {
    /// The files a fresh install of release `v` has.
    pub fn fresh(v: PveVersion) -> Self {
        if v.is_v9() {
            let files = vec![
                AptFile {
                    path: "/etc/apt/sources.list.d/ceph.sources".into(),
                    deb822: true,
                    repos: vec![repo(
                        "https://enterprise.proxmox.com/debian/ceph-squid",
                        &["trixie"],
                        &["enterprise"],
                        Some(PROXMOX_KEYRING),
                    )],
                    text: String::new(),
                },
                AptFile {
                    path: "/etc/apt/sources.list.d/debian.sources".into(),
                    deb822: true,
                    repos: vec![
                        repo(
                            "http://deb.debian.org/debian/",
                            &["trixie", "trixie-updates"],
                            &["main", "contrib", "non-free-firmware"],
                            Some(DEBIAN_KEYRING),
                        ),
                        repo(
                            "http://security.debian.org/debian-security/",
                            &["trixie-security"],
                            &["main", "contrib", "non-free-firmware"],
                            Some(DEBIAN_KEYRING),
                        ),
                    ],
                    text: String::new(),
                },
                AptFile {
                    path: "/etc/apt/sources.list.d/pve-enterprise.sources".into(),
                    deb822: true,
                    repos: vec![repo(
                        "https://enterprise.proxmox.com/debian/pve",
                        &["trixie"],
                        &["pve-enterprise"],
                        Some(PROXMOX_KEYRING),
                    )],
                    text: String::new(),
                },
            ];
            let files = files
                .into_iter()
                .map(|mut f| {
                    f.text = f.render();
                    f
                })
                .collect();
            return Self { files };
        }
        let mut security = repo(
            "http://security.debian.org",
            &["bookworm-security"],
            &["main", "contrib"],
            None,
        );
        security.comment = " security updates\n".into();
        Self {
            files: vec![
                AptFile {
                    path: "/etc/apt/sources.list".into(),
                    deb822: false,
                    repos: vec![
                        repo(
                            "http://ftp.debian.org/debian",
                            &["bookworm"],
                            &["main", "contrib"],
                            None,
                        ),
                        repo(
                            "http://ftp.debian.org/debian",
                            &["bookworm-updates"],
                            &["main", "contrib"],
                            None,
                        ),
                        security,
                    ],
                    text: "deb http://ftp.debian.org/debian bookworm main contrib\n\
                           deb http://ftp.debian.org/debian bookworm-updates main contrib\n\
                           \n\
                           # security updates\n\
                           deb http://security.debian.org bookworm-security main contrib\n"
                        .into(),
                },
                AptFile {
                    path: "/etc/apt/sources.list.d/ceph.list".into(),
                    deb822: false,
                    repos: vec![repo(
                        "https://enterprise.proxmox.com/debian/ceph-quincy",
                        &["bookworm"],
                        &["enterprise"],
                        None,
                    )],
                    text: "deb https://enterprise.proxmox.com/debian/ceph-quincy bookworm enterprise\n"
                        .into(),
                },
                AptFile {
                    path: "/etc/apt/sources.list.d/pve-enterprise.list".into(),
                    deb822: false,
                    repos: vec![repo(
                        "https://enterprise.proxmox.com/debian/pve",
                        &["bookworm"],
                        &["pve-enterprise"],
                        None,
                    )],
                    text: "deb https://enterprise.proxmox.com/debian/pve bookworm pve-enterprise\n"
                        .into(),
                },
            ],
        }
    }

    /// The common digest: the SHA-256 of the files' own digests in path
    /// order.
    pub fn digest(&self) -> String {
        let mut files: Vec<&AptFile> = self.files.iter().collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let mut h = Sha256::new();
        for f in files {
            h.update(f.digest());
        }
        hex::encode(h.finalize())
    }

    fn check_digest(&self, digest: Option<&str>) -> Result<()> {
        let Some(d) = digest else {
            return Ok(());
        };
        let valid = d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit());
        if !valid {
            return Err(Error::failed(format!(
                "invalid value: string \"{d}\", expected valid configuration digest"
            )));
        }
        if !d.eq_ignore_ascii_case(&self.digest()) {
            return Err(Error::failed(MODIFIED));
        }
        Ok(())
    }

    /// The files, in the order PVE lists them.
    pub fn files(&self) -> &[AptFile] {
        &self.files
    }

    /// The `origin` of every repository that has one: its file, its
    /// index there and the origin (`Proxmox`, `Debian`).
    pub fn origins(&self) -> Vec<Origin<'_>> {
        let mut infos = Vec::new();
        for f in &self.files {
            for (i, r) in f.repos.iter().enumerate() {
                if let Some(origin) = r.origin() {
                    infos.push(Origin {
                        path: &f.path,
                        index: i,
                        origin,
                    });
                }
            }
        }
        infos
    }

    /// The standard repositories release `v` offers, each with whether it
    /// is configured and enabled (`None`: not configured).
    pub fn standard_repos(&self, v: PveVersion) -> Vec<StandardRepo> {
        let suite = suite(v);
        let mut standard: Vec<(Handle, Option<bool>)> =
            Handle::offered(v).into_iter().map(|h| (h, None)).collect();
        for f in &self.files {
            for r in &f.repos {
                for (h, status) in &mut standard {
                    if *status == Some(true) {
                        continue;
                    }
                    if h.references(r, "pve", suite, v) {
                        *status = Some(r.enabled);
                    }
                }
            }
        }
        standard
            .into_iter()
            .map(|(h, status)| StandardRepo {
                handle: h.name(),
                name: h.title(),
                description: h.description(v),
                status,
            })
            .collect()
    }

    /// `POST /nodes/{node}/apt/repositories`: sets `enabled` of the
    /// repository at `index` of `path` (the file is written again even
    /// without it).
    ///
    /// # Errors
    /// A changed or malformed `digest`, an unknown `path`, an `index` past
    /// the file's repositories.
    pub fn change(
        &mut self,
        path: &str,
        index: i64,
        enabled: Option<bool>,
        digest: Option<&str>,
    ) -> Result<()> {
        self.check_digest(digest)?;
        let file = self
            .files
            .iter_mut()
            .find(|f| f.path == path)
            .ok_or_else(|| Error::failed(format!("invalid path - {path}")))?;
        let repo = usize::try_from(index)
            .ok()
            .and_then(|i| file.repos.get_mut(i))
            .ok_or_else(|| Error::failed(format!("invalid index - {index}")))?;
        if let Some(e) = enabled {
            repo.set_enabled(e, file.deb822);
        }
        file.text = file.render();
        Ok(())
    }

    /// `PUT /nodes/{node}/apt/repositories`: adds the standard repository
    /// `handle` on release `v` to its usual file, or enables it where
    /// proxmox-apt finds it configured.
    ///
    /// # Errors
    /// A changed or malformed `digest`, an unknown handle (serde's
    /// `unknown variant` message, listing the release's handles).
    pub fn add(&mut self, handle: &str, digest: Option<&str>, v: PveVersion) -> Result<()> {
        let Some(h) = Handle::parse(handle, v) else {
            let all: Vec<String> = Handle::known(v)
                .iter()
                .map(|h| format!("`{}`", h.name()))
                .collect();
            return Err(Error::failed(format!(
                "unknown variant `{handle}`, expected one of {}",
                all.join(", ")
            )));
        };
        self.check_digest(digest)?;
        let suite = suite(v);
        // proxmox-apt 0.11 and 0.99 look the handle up as PBS's.
        for f in &mut self.files {
            let deb822 = f.deb822;
            if let Some(r) = f
                .repos
                .iter_mut()
                .find(|r| h.references(r, "pbs", suite, v))
            {
                if !r.enabled {
                    r.set_enabled(true, deb822);
                    f.text = f.render();
                }
                return Ok(());
            }
        }
        let path = h.path(v);
        let new = h.to_repo(v);
        if let Some(f) = self.files.iter_mut().find(|f| f.path == path) {
            f.repos.push(new);
            f.text = f.render();
        } else {
            let mut f = AptFile {
                deb822: path.ends_with(".sources"),
                path,
                repos: vec![new],
                text: String::new(),
            };
            f.text = f.render();
            let at = self
                .files
                .iter()
                .position(|g| g.path != "/etc/apt/sources.list" && g.path > f.path)
                .unwrap_or(self.files.len());
            self.files.insert(at, f);
        }
        Ok(())
    }
}

impl AptFile {
    /// The SHA-256 of the file's text.
    pub fn digest(&self) -> [u8; 32] {
        Sha256::digest(self.text.as_bytes()).into()
    }

    /// The file's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `sources` for a deb822 file, `list` for a one-line one.
    pub fn file_type(&self) -> &'static str {
        if self.deb822 { "sources" } else { "list" }
    }

    /// Its repositories, in file order.
    pub fn repos(&self) -> &[AptRepo] {
        &self.repos
    }

    /// The text proxmox-apt writes for the file.
    fn render(&self) -> String {
        let mut out = String::new();
        for r in &self.repos {
            if !out.is_empty() {
                out.push('\n');
            }
            for line in r.comment.lines() {
                out.push_str(&format!("#{line}\n"));
            }
            if self.deb822 {
                out.push_str(&format!("Types: {}\n", r.types.join(" ")));
                out.push_str(&format!("URIs: {}\n", r.uris.join(" ")));
                out.push_str(&format!("Suites: {}\n", r.suites.join(" ")));
                if !r.components.is_empty() {
                    out.push_str(&format!("Components: {}\n", r.components.join(" ")));
                }
                for (k, v) in &r.options {
                    out.push_str(&format!("{k}: {}\n", v.join(" ")));
                }
            } else {
                if !r.enabled {
                    out.push_str("# ");
                }
                out.push_str(&format!("{} ", r.types[0]));
                if !r.options.is_empty() {
                    out.push_str("[ ");
                    for (k, v) in &r.options {
                        out.push_str(&format!("{k}={} ", v.join(",")));
                    }
                    out.push_str("] ");
                }
                out.push_str(&format!(
                    "{} {} {}\n",
                    r.uris[0],
                    r.suites[0],
                    r.components.join(" ")
                ));
            }
        }
        out
    }
}

impl AptRepo {
    /// `Types`.
    pub fn types(&self) -> &[String] {
        &self.types
    }

    /// `URIs`.
    pub fn uris(&self) -> &[String] {
        &self.uris
    }

    /// `Suites`.
    pub fn suites(&self) -> &[String] {
        &self.suites
    }

    /// `Components` (none for a flat repository).
    pub fn components(&self) -> &[String] {
        &self.components
    }

    /// The other keys (`Signed-By`, `Enabled`), in file order.
    pub fn options(&self) -> &[(String, Vec<String>)] {
        &self.options
    }

    /// The comment lines above it, each without its `#`, `\n`-ended.
    pub fn comment(&self) -> &str {
        &self.comment
    }

    /// Whether it is enabled.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// As proxmox-apt's `set_enabled`: a `.sources` repository keeps it as
    /// its `Enabled` option.
    fn set_enabled(&mut self, enabled: bool, deb822: bool) {
        self.enabled = enabled;
        if deb822 {
            let value = vec![enabled.to_string()];
            if let Some(o) = self.options.iter_mut().find(|(k, _)| k == "Enabled") {
                o.1 = value;
            } else {
                self.options.push(("Enabled".into(), value));
            }
        }
    }

    /// The origin proxmox-apt reports (the cached `InRelease` file's
    /// `Origin`, else guessed from the host).
    fn origin(&self) -> Option<&'static str> {
        self.uris.iter().find_map(|u| {
            let host = u.split_once("://")?.1.split('/').next()?;
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            let host = host.split(':').next()?;
            if host == "proxmox.com" || host.ends_with(".proxmox.com") {
                Some("Proxmox")
            } else if host == "debian.org" || host.ends_with(".debian.org") {
                Some("Debian")
            } else {
                None
            }
        })
    }
}

/// A standard repository handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handle {
    /// `enterprise`, `no-subscription`, `test`.
    Host(Channel),
    /// `ceph-<release>-<channel>`.
    Ceph(&'static str, Channel),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Enterprise,
    NoSubscription,
    Test,
}

const CHANNELS: [Channel; 3] = [Channel::Enterprise, Channel::NoSubscription, Channel::Test];

impl Channel {
    fn name(self) -> &'static str {
        match self {
            Self::Enterprise => "enterprise",
            Self::NoSubscription => "no-subscription",
            Self::Test => "test",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Self::Enterprise => "Enterprise",
            Self::NoSubscription => "No-Subscription",
            Self::Test => "Test",
        }
    }

    fn domain(self) -> &'static str {
        match self {
            Self::Enterprise => "https://enterprise.proxmox.com/debian",
            _ => "http://download.proxmox.com/debian",
        }
    }
}

/// The Ceph releases of a PVE release's handles, in proxmox-apt's order.
fn ceph_releases(v: PveVersion) -> &'static [&'static str] {
    if v.is_v9() {
        &["squid"]
    } else {
        &["quincy", "reef", "squid"]
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

impl Handle {
    /// Every handle the release's proxmox-apt knows, in its enum's order.
    fn known(v: PveVersion) -> Vec<Self> {
        let mut all: Vec<Self> = CHANNELS.into_iter().map(Self::Host).collect();
        for r in ceph_releases(v) {
            all.extend(CHANNELS.into_iter().map(|c| Self::Ceph(r, c)));
        }
        all
    }

    /// The standard repositories offered for PVE (all known ones: 8.4
    /// offers Quincy, Reef and Squid on bookworm, 9.1 Squid on trixie).
    fn offered(v: PveVersion) -> Vec<Self> {
        Self::known(v)
    }

    fn parse(s: &str, v: PveVersion) -> Option<Self> {
        Self::known(v).into_iter().find(|h| h.name() == s)
    }

    fn name(self) -> String {
        match self {
            Self::Host(c) => c.name().to_string(),
            Self::Ceph(r, c) => format!("ceph-{r}-{}", c.name()),
        }
    }

    fn title(self) -> String {
        match self {
            Self::Host(c) => c.title().to_string(),
            Self::Ceph(r, c) => format!("Ceph {} {}", capitalized(r), c.title()),
        }
    }

    fn description(self, _v: PveVersion) -> String {
        match self {
            Self::Host(Channel::Enterprise) => {
                "This is the default, stable, and recommended repository, available for all \
                 Proxmox subscription users."
                    .into()
            }
            Self::Host(Channel::NoSubscription) => {
                "This is the recommended repository for testing and non-production use. Its \
                 packages are not as heavily tested and validated as the production ready \
                 enterprise repository. You don't need a subscription key to access this \
                 repository."
                    .into()
            }
            Self::Host(Channel::Test) => {
                "This repository contains the latest packages and is primarily used for test \
                 labs and by developers to test new features."
                    .into()
            }
            Self::Ceph(r, Channel::Enterprise) => format!(
                "This repository holds the production-ready Proxmox Ceph {} packages.",
                capitalized(r)
            ),
            Self::Ceph("quincy", Channel::NoSubscription) => {
                "This repository holds the Proxmox Ceph Quincy packages intended for \
                 non-production use. The deprecated 'main' repository is an alias for this in \
                 Proxmox VE 8."
                    .into()
            }
            Self::Ceph(r, Channel::NoSubscription) => format!(
                "This repository holds the Proxmox Ceph {} packages intended for \
                 non-production use.",
                capitalized(r)
            ),
            Self::Ceph(r, Channel::Test) => format!(
                "This repository contains the Ceph {} packages before they are moved to the \
                 main repository.",
                capitalized(r)
            ),
        }
    }

    /// The URIs (the preferred one first) and the component of the
    /// handle's repository for `product`.
    fn info(self, product: &str, v: PveVersion) -> (Vec<String>, String) {
        match self {
            Self::Host(c) => {
                let mut uris = vec![format!("{}/{product}", c.domain())];
                if product == "pve" {
                    uris.push(c.domain().to_string());
                }
                let component = match c {
                    Channel::Test if !v.is_v9() && product != "pdm" => format!("{product}test"),
                    _ => format!("{product}-{}", c.name()),
                };
                (uris, component)
            }
            Self::Ceph(r, c) => (
                vec![format!("{}/ceph-{r}", c.domain())],
                c.name().to_string(),
            ),
        }
    }

    /// Whether `repo` is the handle's repository for `product` on `suite`.
    fn references(self, repo: &AptRepo, product: &str, suite: &str, v: PveVersion) -> bool {
        let (uris, component) = self.info(product, v);
        repo.types.iter().any(|t| t == "deb")
            && repo
                .uris
                .iter()
                .any(|u| uris.iter().any(|k| k == u.trim_end_matches('/')))
            && repo.suites.iter().any(|s| s == suite)
            && repo.components.contains(&component)
    }

    /// The file the handle's repository is written to.
    fn path(self, v: PveVersion) -> String {
        let ext = if v.is_v9() { "sources" } else { "list" };
        match self {
            Self::Host(Channel::Enterprise) => {
                format!("/etc/apt/sources.list.d/pve-enterprise.{ext}")
            }
            Self::Host(_) if v.is_v9() => "/etc/apt/sources.list.d/proxmox.sources".into(),
            Self::Host(_) => "/etc/apt/sources.list".into(),
            Self::Ceph(..) => format!("/etc/apt/sources.list.d/ceph.{ext}"),
        }
    }

    /// The repository written for the handle (9.x with its `Signed-By`).
    fn to_repo(self, v: PveVersion) -> AptRepo {
        let (uris, component) = self.info("pve", v);
        repo(
            &uris[0],
            &[suite(v)],
            &[component.as_str()],
            v.is_v9().then_some(PROXMOX_KEYRING),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{AptSources, PveVersion};
    use rstest::rstest;
    use serde_json::Value;

    /// The listing as `GET /nodes/{node}/apt/repositories` answers it.
    fn view(s: &AptSources, v: PveVersion) -> Value {
        crate::api::node_services::view::apt_repositories(s, v)
    }

    fn standard(s: &AptSources, v: PveVersion) -> Vec<(String, Option<bool>)> {
        view(s, v)["standard-repos"]
            .as_array()
            .expect("list")
            .iter()
            .map(|e| {
                (
                    e["handle"].as_str().expect("handle").to_string(),
                    e["status"].as_bool(),
                )
            })
            .collect()
    }

    fn status(s: &AptSources, v: PveVersion, handle: &str) -> Option<bool> {
        standard(s, v)
            .into_iter()
            .find(|(h, _)| h == handle)
            .and_then(|(_, st)| st)
    }

    #[rstest]
    #[case::pve8(PveVersion::V8_4, 3, 12, "list")]
    #[case::pve9(PveVersion::V9_1, 3, 6, "sources")]
    fn fresh_install(
        #[case] v: PveVersion,
        #[case] files: usize,
        #[case] handles: usize,
        #[case] kind: &str,
    ) {
        let s = AptSources::fresh(v);
        let view = view(&s, v);
        assert_eq!(view["files"].as_array().expect("files").len(), files);
        assert_eq!(view["files"][1]["file-type"], kind);
        assert_eq!(standard(&s, v).len(), handles);
        assert_eq!(status(&s, v, "enterprise"), Some(true));
        assert_eq!(status(&s, v, "no-subscription"), None);
        assert_eq!(view["digest"].as_str().expect("digest").len(), 64);
        assert_eq!(
            view["files"][0]["digest"].as_array().expect("bytes").len(),
            32
        );
        // Every repository has its origin.
        let origins: Vec<&str> = view["infos"]
            .as_array()
            .expect("infos")
            .iter()
            .map(|i| i["message"].as_str().expect("message"))
            .collect();
        assert!(origins.contains(&"Debian") && origins.contains(&"Proxmox"));
    }

    #[test]
    fn the_security_comment_belongs_to_its_repository() {
        let v = PveVersion::V8_4;
        let view = view(&AptSources::fresh(v), v);
        let list = &view["files"][0];
        assert_eq!(list["path"], "/etc/apt/sources.list");
        assert_eq!(list["repositories"][2]["Comment"], " security updates\n");
        assert!(list["repositories"][0].get("Comment").is_none());
        assert!(list["repositories"][0].get("Options").is_none());
    }

    #[rstest]
    #[case::pve8(PveVersion::V8_4, "/etc/apt/sources.list.d/pve-enterprise.list")]
    #[case::pve9(PveVersion::V9_1, "/etc/apt/sources.list.d/pve-enterprise.sources")]
    fn disabling_the_enterprise_repository(#[case] v: PveVersion, #[case] path: &str) {
        let mut s = AptSources::fresh(v);
        let before = view(&s, v)["digest"].clone();
        s.change(path, 0, Some(false), before.as_str())
            .expect("disabled");
        assert_eq!(status(&s, v, "enterprise"), Some(false));
        let view = view(&s, v);
        assert_ne!(view["digest"], before);
        let f = view["files"]
            .as_array()
            .expect("files")
            .iter()
            .find(|f| f["path"] == path)
            .expect("file")
            .clone();
        assert_eq!(f["repositories"][0]["Enabled"], false);
        let file = s.files.iter().find(|f| f.path == path).expect("file");
        if v.is_v9() {
            assert!(file.text.ends_with("Enabled: false\n"), "{}", file.text);
        } else {
            assert_eq!(
                file.text,
                "# deb https://enterprise.proxmox.com/debian/pve bookworm pve-enterprise\n"
            );
        }
        // The old digest no longer matches.
        let err = s.change(path, 0, Some(true), before.as_str());
        assert_eq!(
            err.expect_err("stale").to_string(),
            "detected modified configuration - file changed by other user? Try again."
        );
    }

    #[rstest]
    #[case::path(
        "/etc/apt/sources.list.d/x.list",
        0,
        "invalid path - /etc/apt/sources.list.d/x.list"
    )]
    #[case::index("/etc/apt/sources.list", 3, "invalid index - 3")]
    #[case::negative("/etc/apt/sources.list", -1, "invalid index - -1")]
    fn change_refusals(#[case] path: &str, #[case] index: i64, #[case] msg: &str) {
        let mut s = AptSources::fresh(PveVersion::V8_4);
        let err = s
            .change(path, index, Some(false), None)
            .expect_err("refused");
        assert_eq!(err.to_string(), msg);
    }

    #[test]
    fn a_malformed_digest_is_refused() {
        let mut s = AptSources::fresh(PveVersion::V9_1);
        let err = s
            .add("test", Some("abc"), PveVersion::V9_1)
            .expect_err("refused");
        assert_eq!(
            err.to_string(),
            "invalid value: string \"abc\", expected valid configuration digest"
        );
    }

    #[rstest]
    #[case::pve8(PveVersion::V8_4, "ceph-tentacle-test")]
    #[case::pve9(PveVersion::V9_1, "ceph-reef-test")]
    fn unknown_handles(#[case] v: PveVersion, #[case] handle: &str) {
        let mut s = AptSources::fresh(v);
        let err = s.add(handle, None, v).expect_err("unknown").to_string();
        assert!(
            err.starts_with(&format!(
                "unknown variant `{handle}`, expected one of `enterprise`, `no-subscription`, `test`, "
            )),
            "{err}"
        );
    }

    #[rstest]
    #[case::pve8(
        PveVersion::V8_4,
        "/etc/apt/sources.list",
        "deb http://download.proxmox.com/debian/pve bookworm pve-no-subscription\n"
    )]
    #[case::pve9(
        PveVersion::V9_1,
        "/etc/apt/sources.list.d/proxmox.sources",
        "Types: deb\nURIs: http://download.proxmox.com/debian/pve\nSuites: trixie\n\
         Components: pve-no-subscription\n\
         Signed-By: /usr/share/keyrings/proxmox-archive-keyring.gpg\n"
    )]
    fn adding_no_subscription(#[case] v: PveVersion, #[case] path: &str, #[case] tail: &str) {
        let mut s = AptSources::fresh(v);
        let digest = view(&s, v)["digest"].as_str().map(str::to_string);
        s.add("no-subscription", digest.as_deref(), v)
            .expect("added");
        assert_eq!(status(&s, v, "no-subscription"), Some(true));
        let file = s.files.iter().find(|f| f.path == path).expect("file");
        assert!(file.text.ends_with(tail), "{}", file.text);
        // sources.list comes first, the others in name order.
        let paths: Vec<String> = view(&s, v)["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| f["path"].as_str().expect("path").to_string())
            .collect();
        let mut sorted = paths.clone();
        sorted.sort();
        assert_eq!(paths, sorted);
    }

    #[rstest]
    #[case::pve8(PveVersion::V8_4, "/etc/apt/sources.list.d/pve-enterprise.list")]
    #[case::pve9(PveVersion::V9_1, "/etc/apt/sources.list.d/pve-enterprise.sources")]
    fn adding_a_configured_pve_handle_appends_it_again(#[case] v: PveVersion, #[case] path: &str) {
        let mut s = AptSources::fresh(v);
        s.change(path, 0, Some(false), None).expect("disabled");
        s.add("enterprise", None, v).expect("added");
        let file = s.files.iter().find(|f| f.path == path).expect("file");
        assert_eq!(file.repos.len(), 2);
        assert!(!file.repos[0].enabled && file.repos[1].enabled);
        assert_eq!(status(&s, v, "enterprise"), Some(true));
    }

    #[rstest]
    #[case::pve8(
        PveVersion::V8_4,
        "ceph-quincy-enterprise",
        "/etc/apt/sources.list.d/ceph.list"
    )]
    #[case::pve9(
        PveVersion::V9_1,
        "ceph-squid-enterprise",
        "/etc/apt/sources.list.d/ceph.sources"
    )]
    fn adding_a_configured_ceph_handle_enables_it(
        #[case] v: PveVersion,
        #[case] handle: &str,
        #[case] path: &str,
    ) {
        let mut s = AptSources::fresh(v);
        s.change(path, 0, Some(false), None).expect("disabled");
        assert_eq!(status(&s, v, handle), Some(false));
        s.add(handle, None, v).expect("enabled");
        let file = s.files.iter().find(|f| f.path == path).expect("file");
        assert_eq!(file.repos.len(), 1);
        assert_eq!(status(&s, v, handle), Some(true));
        if v.is_v9() {
            assert!(file.text.ends_with("Enabled: true\n"), "{}", file.text);
        }
    }

    #[test]
    fn pve8_test_repository_has_no_hyphen() {
        let v = PveVersion::V8_4;
        let mut s = AptSources::fresh(v);
        s.add("test", None, v).expect("added");
        let view: Value = view(&s, v);
        let list = &view["files"][0]["repositories"];
        assert_eq!(list[3]["Components"][0], "pvetest");
        assert_eq!(status(&s, v, "test"), Some(true));
    }
}
