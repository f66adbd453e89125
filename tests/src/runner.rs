//! Plays the features: picks the target, filters scenarios by target and
//! release, gives each scenario its own world (and fake-pve), removes
//! what scenarios made, reports (human-readable, JUnit XML on request)
//! and counts.
//!
//! Tags: `@fake-only` scenarios need fake-pve's `/_fake` controls and
//! never run against a real cluster; `@pve8`, `@pve9` (any 9.x) and the
//! exact `@pve8.4`, `@pve9.1`, `@pve9.2` (which narrow a feature's line)
//! say which releases a scenario is about (fake-pve impersonates the
//! run's release when the tags allow it, else the newest they name; a
//! real cluster of another release leaves the scenario out);
//! `@destructive` scenarios
//! run against a real cluster only with `--destructive`; `@slow` ones are
//! left out with `--skip-slow`; `@load` ones (full load runs, minutes
//! long) run only when `--tags` selects scenarios. Skipped and undefined
//! steps fail the run.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use clap::Parser as _;
use cucumber::event::ScenarioFinished;
use cucumber::tag::Ext as _;
use cucumber::writer::{self, Coloring};
use cucumber::{World as _, WriterExt as _, cli};
use pve_client::{Client, Method, Params};
use pve_schema::Release;
use serde_json::Value;

use crate::target::{Kind, Target, TargetError};
use crate::world::PveWorld;

/// A command line the runner cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// A flag (`--junit`, `--target`, ...) without its value.
    #[error("{0} needs a value")]
    MissingValue(String),
    /// `--pve-version` names no release the features know.
    #[error("--pve-version: 8.4, 9.1 or 9.2, not '{0}'")]
    UnknownRelease(String),
}

/// Why a run could not be played.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The target cannot be set up.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Cucumber refuses its arguments.
    #[error(transparent)]
    Cucumber(#[from] clap::Error),
    /// The JUnit report cannot be created.
    #[error("JUnit report {}: {source}", path.display())]
    Junit {
        /// The report's file.
        path: PathBuf,
        /// What the system answered.
        source: io::Error,
    },
}

/// How to play the features.
#[derive(Debug, Clone)]
pub struct Options {
    /// The feature files (a file or a directory).
    pub features: PathBuf,
    /// `fake`, `real`, or `None` to decide by the environment.
    pub target: Option<String>,
    /// The release fake-pve impersonates for untagged scenarios.
    pub fake_release: Release,
    /// Where to write a JUnit XML report.
    pub junit: Option<PathBuf>,
    /// Run `@destructive` scenarios against a real cluster too.
    pub destructive: bool,
    /// Leave out `@slow` scenarios.
    pub skip_slow: bool,
    /// Arguments for cucumber itself (`--name`, `--tags`, `-v`, ...).
    pub cucumber_args: Vec<String>,
}

impl Options {
    /// The defaults for a features directory: target by environment,
    /// PVE 9.2 on fake-pve, no JUnit report.
    pub fn new(features: impl Into<PathBuf>) -> Self {
        Self {
            features: features.into(),
            target: None,
            fake_release: Release::V9_2,
            junit: None,
            destructive: false,
            skip_slow: false,
            cucumber_args: Vec::new(),
        }
    }

    /// Reads the runner's own flags from `args` (the rest goes to
    /// cucumber), over the `CONFORMANCE_*` environment: `--target
    /// fake|real` (`CONFORMANCE_TARGET`), `--junit FILE`
    /// (`CONFORMANCE_JUNIT`), `--pve-version 8.4|9.1|9.2`
    /// (`CONFORMANCE_PVE_VERSION`), `--destructive`
    /// (`PVE_TEST_DESTRUCTIVE=1`), `--skip-slow`. Flags cargo's test
    /// harness would take (`--nocapture`, `--test-threads`, a test name)
    /// are ignored.
    ///
    /// # Errors
    /// On a flag without its value or an unknown release.
    pub fn from_args(features: PathBuf, args: &[String]) -> Result<Self, OptionsError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let mut o = Self::new(features);
        o.target = env("CONFORMANCE_TARGET");
        o.junit = env("CONFORMANCE_JUNIT").map(PathBuf::from);
        o.destructive = env("PVE_TEST_DESTRUCTIVE").is_some_and(|v| v == "1" || v == "true");
        let mut release = env("CONFORMANCE_PVE_VERSION");
        let mut rest = vec!["conformance".to_string()];
        let mut it = args.iter().skip(1);
        while let Some(a) = it.next() {
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (a.as_str(), None),
            };
            let mut value = |name: &str| {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| OptionsError::MissingValue(name.to_string()))
            };
            match flag {
                "--target" => o.target = Some(value("--target")?),
                "--junit" => o.junit = Some(PathBuf::from(value("--junit")?)),
                "--pve-version" => release = Some(value("--pve-version")?),
                "--features" => o.features = PathBuf::from(value("--features")?),
                "--destructive" => o.destructive = true,
                "--skip-slow" => o.skip_slow = true,
                // What cargo test or libtest may pass along.
                "--nocapture" | "--show-output" | "--quiet" | "-q" | "--ignored"
                | "--include-ignored" | "--exact" | "--bench" => {}
                "--test-threads" | "--format" | "--skip" => {
                    let _ = value(flag);
                }
                _ if !a.starts_with('-') && rest.last().is_none_or(|p| !takes_value(p)) => {}
                _ => rest.push(a.clone()),
            }
        }
        if let Some(r) = release {
            o.fake_release = match r.as_str() {
                "8" | "8.4" => Release::V8_4,
                "9.1" => Release::V9_1,
                "9" | "9.2" => Release::V9_2,
                other => return Err(OptionsError::UnknownRelease(other.to_string())),
            };
        }
        o.cucumber_args = rest;
        Ok(o)
    }
}

/// Cucumber's flags that take a value.
fn takes_value(flag: &str) -> bool {
    matches!(
        flag,
        "--name"
            | "-n"
            | "--tags"
            | "-t"
            | "--concurrency"
            | "-c"
            | "--retry"
            | "--retry-after"
            | "--retry-tag-filter"
            | "--color"
            | "--input"
            | "-i"
    )
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Scenarios played.
    pub scenarios: usize,
    /// Scenarios that failed (a failed, skipped or undefined step, or a
    /// failed hook).
    pub failed_scenarios: usize,
    /// Steps passed.
    pub passed_steps: usize,
    /// Steps skipped or undefined.
    pub skipped_steps: usize,
    /// Steps failed (skipped ones included: they fail the run).
    pub failed_steps: usize,
    /// Feature files that could not be parsed.
    pub parsing_errors: usize,
    /// Hooks that failed.
    pub hook_errors: usize,
    /// What cleaning up after scenarios could not remove.
    pub cleanup_problems: Vec<String>,
}

impl Summary {
    /// Whether the run failed.
    pub fn failed(&self) -> bool {
        self.failed_scenarios > 0
            || self.failed_steps > 0
            || self.skipped_steps > 0
            || self.parsing_errors > 0
            || self.hook_errors > 0
            || !self.cleanup_problems.is_empty()
    }
}

/// A writer into shared memory, for runs whose report is read back.
#[derive(Debug, Clone, Default)]
pub struct SharedBuf(pub Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    /// What was written.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().map(|b| b.clone()).unwrap_or_default()).into_owned()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Whether a scenario with `tags` runs against `target`.
pub fn wanted(target: &Target, opts: &Options, tags: &[String]) -> bool {
    let has = |t: &str| tags.iter().any(|x| x == t);
    if opts.skip_slow && has("slow") {
        return false;
    }
    match &target.kind {
        Kind::Fake { .. } => true,
        Kind::Real(real) => {
            if has("fake-only") || (has("destructive") && !opts.destructive) {
                return false;
            }
            crate::target::tagged_releases(tags).contains(&real.release)
        }
    }
}

/// Plays the features and reports to stdout (and the JUnit file).
///
/// # Errors
/// When the target cannot be set up or the arguments are wrong.
pub async fn run(opts: Options) -> Result<Summary, RunError> {
    run_to(opts, Box::new(io::stdout()), Coloring::Auto).await
}

/// Plays the features and writes the human-readable report to `out`.
///
/// # Errors
/// As [`run`].
pub async fn run_to(
    opts: Options,
    out: Box<dyn Write>,
    color: Coloring,
) -> Result<Summary, RunError> {
    let target = Arc::new(Target::resolve(opts.target.as_deref(), opts.fake_release).await?);
    let mut header = format!("conformance: {}\n", target.describe());
    if let Kind::Real(_) = target.kind {
        header.push_str("conformance: @fake-only scenarios are left out");
        if !opts.destructive {
            header.push_str(", and @destructive ones (--destructive to include them)");
        }
        header.push('\n');
    }
    let mut out = out;
    let _ = out.write_all(header.as_bytes());

    let scenarios = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let problems: Arc<Mutex<Vec<String>>> = Arc::default();
    let concurrency = if target.is_real() { 4 } else { 32 };

    macro_rules! play {
        ($writer:expr) => {{
            let mut cli = cli::Opts::<_, _, _, cli::Empty>::try_parse_from(&opts.cucumber_args)?;
            // Cucumber replaces a run's filter with --name or --tags; keep
            // the target's filter and add the user's to it instead.
            let name_filter = cli.re_filter.take();
            let tag_filter = cli.tags_filter.take();
            let (t1, t2, t3) = (target.clone(), target.clone(), opts.clone());
            let (s1, f1, p1) = (scenarios.clone(), failed.clone(), problems.clone());
            let writer = PveWorld::cucumber()
                .max_concurrent_scenarios(concurrency)
                .with_writer($writer)
                .fail_on_skipped()
                .before(move |feature, rule, scenario, world| {
                    let target = t1.clone();
                    let tags = all_tags(feature, rule, scenario);
                    s1.fetch_add(1, Ordering::Relaxed);
                    Box::pin(async move { world.setup(target, &tags).await })
                })
                .after(move |_, _, _, finished, world| {
                    let (failed, problems) = (f1.clone(), p1.clone());
                    if !matches!(finished, ScenarioFinished::StepPassed) {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                    Box::pin(async move {
                        if let Some(w) = world {
                            let left = w.cleanup().await;
                            if let Ok(mut p) = problems.lock() {
                                p.extend(left);
                            }
                        }
                    })
                })
                .with_cli(cli)
                .filter_run(opts.features.clone(), move |feature, rule, scenario| {
                    let tags = all_tags(feature, rule, scenario);
                    wanted(&t2, &t3, &tags)
                        // Full load runs (@load) only when tags ask for them.
                        && (tag_filter.is_some() || !tags.iter().any(|t| t == "load"))
                        && name_filter
                            .as_ref()
                            .is_none_or(|re| re.is_match(&scenario.name))
                        && tag_filter.as_ref().is_none_or(|op| op.eval(tags.iter()))
                })
                .await;
            stats(&writer)
        }};
    }

    let mut summary = match &opts.junit {
        None => play!(writer::Basic::raw(out, color, 0).summarized().normalized()),
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|source| RunError::Junit {
                path: path.clone(),
                source,
            })?;
            play!(
                writer::Basic::raw(out, color, 0)
                    .summarized()
                    .tee::<PveWorld, _>(writer::JUnit::for_tee(file, 0))
                    .normalized()
            )
        }
    };
    summary.scenarios = scenarios.load(Ordering::Relaxed);
    summary.failed_scenarios = failed.load(Ordering::Relaxed);
    if let Kind::Real(real) = &target.kind {
        sweep(&real.admin, &target.prefix, &problems).await;
        sweep_vms(&real.admin, &target, &problems).await;
    }
    summary.cleanup_problems = problems.lock().map(|p| p.clone()).unwrap_or_default();
    Ok(summary)
}

fn stats<W: writer::Stats<PveWorld>>(w: &W) -> Summary {
    Summary {
        passed_steps: w.passed_steps(),
        skipped_steps: w.skipped_steps(),
        failed_steps: w.failed_steps(),
        parsing_errors: w.parsing_errors(),
        hook_errors: w.hook_errors(),
        ..Summary::default()
    }
}

fn all_tags(
    feature: &cucumber::gherkin::Feature,
    rule: Option<&cucumber::gherkin::Rule>,
    scenario: &cucumber::gherkin::Scenario,
) -> Vec<String> {
    feature
        .tags
        .iter()
        .chain(rule.iter().flat_map(|r| &r.tags))
        .chain(&scenario.tags)
        .map(|t| t.trim_start_matches('@').to_string())
        .collect()
}

/// Removes whatever users, groups and roles of this run are left on a
/// real cluster (a scenario's own cleanup removes them; this catches
/// what an interrupted one left).
async fn sweep(admin: &pve_client::Config, prefix: &str, problems: &Mutex<Vec<String>>) {
    let Ok(client) = Client::connect(admin.clone()).await else {
        return;
    };
    for (list, key) in [
        ("/access/users", "userid"),
        ("/access/groups", "groupid"),
        ("/access/roles", "roleid"),
    ] {
        let Ok(Value::Array(items)) = client.get(list, &Params::new()).await else {
            continue;
        };
        for id in items
            .iter()
            .filter_map(|i| i[key].as_str())
            .filter(|id| id.starts_with(prefix))
        {
            let path = format!("{list}/{}", pve_client::api::seg(id));
            if let Err(e) = client.request(Method::DELETE, &path, &Params::new()).await
                && let Ok(mut p) = problems.lock()
            {
                p.push(format!("sweeping {id}: {e}"));
            }
        }
    }
}

/// Stops and destroys whatever VMs and containers of the reserved range
/// are left on the test node of a real cluster (a scenario's own cleanup removes its VMs;
/// this catches what an interrupted one left).
async fn sweep_vms(admin: &pve_client::Config, target: &Target, problems: &Mutex<Vec<String>>) {
    let Ok(client) = Client::connect(admin.clone()).await else {
        return;
    };
    let path = format!("/nodes/{}/qemu", pve_client::api::seg(&target.node));
    let Ok(Value::Array(items)) = client.get(&path, &Params::new()).await else {
        return;
    };
    let as_root = admin.credentials().principal() == "root@pam";
    let mut vmids: Vec<u32> = items
        .iter()
        .filter_map(|i| i["vmid"].as_u64().and_then(|v| u32::try_from(v).ok()))
        .filter(|v| target.vmids.contains(v))
        .collect();
    // Linked clones (higher VMIDs) before their templates.
    vmids.sort_unstable_by(|a, b| b.cmp(a));
    for vmid in vmids {
        if let Err(e) = crate::world::remove_vm(&client, &target.node, vmid, as_root).await
            && let Ok(mut p) = problems.lock()
        {
            p.push(format!("sweeping VM {vmid}: {e}"));
        }
    }
    // Containers of the reserved range, linked clones first too.
    let path = format!("/nodes/{}/lxc", pve_client::api::seg(&target.node));
    let Ok(Value::Array(items)) = client.get(&path, &Params::new()).await else {
        return;
    };
    let mut ctids: Vec<u32> = items
        .iter()
        .filter_map(|i| i["vmid"].as_u64().and_then(|v| u32::try_from(v).ok()))
        .filter(|v| target.vmids.contains(v))
        .collect();
    ctids.sort_unstable_by(|a, b| b.cmp(a));
    for vmid in ctids {
        if let Err(e) = crate::world::remove_ct(&client, &target.node, vmid).await
            && let Ok(mut p) = problems.lock()
        {
            p.push(format!("sweeping CT {vmid}: {e}"));
        }
    }
}

/// The report's last line.
pub fn summary_line(s: &Summary) -> String {
    format!(
        "conformance: {} scenarios ({} failed), {} steps ({} passed, {} skipped, {} failed){}",
        s.scenarios,
        s.failed_scenarios,
        s.passed_steps + s.failed_steps,
        s.passed_steps,
        s.skipped_steps,
        s.failed_steps,
        if s.cleanup_problems.is_empty() {
            String::new()
        } else {
            format!(", {} left behind", s.cleanup_problems.len())
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn own_flags_are_taken_and_the_rest_goes_to_cucumber() {
        let o = Options::from_args(
            "f".into(),
            &args(&[
                "bin",
                "--target=real",
                "--junit",
                "out.xml",
                "--nocapture",
                "--test-threads",
                "2",
                "--tags",
                "@auth",
                "-v",
                "--pve-version",
                "8.4",
            ]),
        )
        .expect("valid");
        assert_eq!(o.target.as_deref(), Some("real"));
        assert_eq!(o.junit, Some(PathBuf::from("out.xml")));
        assert_eq!(o.fake_release, Release::V8_4);
        assert_eq!(
            o.cucumber_args,
            args(&["conformance", "--tags", "@auth", "-v"])
        );
        assert!(Options::from_args("f".into(), &args(&["bin", "--junit"])).is_err());
    }

    /// A real cluster of `release` reached with a token.
    fn real_kind(release: Release, version: &str) -> Kind {
        Kind::Real(Box::new(crate::target::Real {
            admin: pve_client::Config::builder()
                .endpoint("https://pve.invalid:8006")
                .token("ci@pve!t", "s")
                .build()
                .expect("config"),
            env: Vec::new(),
            trust: crate::raw::Trust::WebPki,
            release,
            version: version.into(),
        }))
    }

    #[test]
    fn tags_decide_where_scenarios_run() {
        let fake = Target {
            kind: Kind::Fake {
                release: Release::V9_1,
            },
            vmids: 90_000..=90_999,
            node: "pve".into(),
            storage: "local-lvm".into(),
            bridge: "vmbr0".into(),
            prefix: "cnf000000".into(),
        };
        let opts = Options::new("f");
        let tags = |t: &[&str]| args(t);
        assert!(wanted(&fake, &opts, &tags(&["fake-only", "pve8"])));
        let real = Target {
            kind: real_kind(Release::V8_4, "8.4.14"),
            ..fake
        };
        assert!(wanted(&real, &opts, &tags(&["auth"])));
        assert!(!wanted(&real, &opts, &tags(&["fake-only"])));
        assert!(!wanted(&real, &opts, &tags(&["pve9"])));
        assert!(!wanted(&real, &opts, &tags(&["pve9.2"])));
        assert!(wanted(&real, &opts, &tags(&["pve8"])));
        assert!(wanted(&real, &opts, &tags(&["pve8", "pve9"])));
        let real_9_1 = Target {
            kind: real_kind(Release::V9_1, "9.1.5"),
            ..real.clone()
        };
        assert!(wanted(&real_9_1, &opts, &tags(&["pve9"])));
        assert!(wanted(&real_9_1, &opts, &tags(&["pve9.1"])));
        assert!(!wanted(&real_9_1, &opts, &tags(&["pve9.2"])));
        assert!(!wanted(&real_9_1, &opts, &tags(&["pve8"])));
        assert!(!wanted(&real, &opts, &tags(&["destructive"])));
        let mut all = opts.clone();
        all.destructive = true;
        assert!(wanted(&real, &all, &tags(&["destructive"])));
        all.skip_slow = true;
        assert!(!wanted(&real, &all, &tags(&["slow"])));
    }
}
