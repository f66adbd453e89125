//! What the standalone loop says about manifests it cannot read: each
//! problem once, when it appears (not at every read of the directory),
//! and not ready while the directory is missing. Its own test binary: the
//! log is captured by a global subscriber.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{TempDir, operator};
use pve_operator::{Options, Standalone};

/// A `MakeWriter` into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Self;
    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

impl Captured {
    fn count(&self, what: &str) -> usize {
        String::from_utf8(self.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .filter(|l| l.contains(what))
            .count()
    }
}

const NODE: &str = "apiVersion: pve.fake-pve.io/v1alpha1
kind: ProxmoxNode
metadata: { name: pve }
spec: { cluster: lab, nodeName: pve }
";

#[tokio::test]
async fn manifest_problems_are_said_once_per_change_and_a_missing_directory_is_not_ready() {
    let out = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(out.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let dir = TempDir::new("warnings");
    std::fs::write(dir.join("bad.yaml"), "kind: [").unwrap();
    let mut o = Options::new(&*dir);
    o.poll = std::time::Duration::from_millis(1);
    let mut sa = Standalone::new(o, operator());
    assert!(!sa.health.is_ready(), "not before the first pass");
    for _ in 0..4 {
        sa.pass(true).await;
    }
    assert_eq!(out.count("manifest error"), 1, "once for one error");
    assert!(sa.health.is_ready());
    // another error: said once more
    std::fs::write(dir.join("bad.yaml"), NODE.replace("cluster:", "clustr:")).unwrap();
    for _ in 0..3 {
        sa.pass(true).await;
    }
    assert_eq!(out.count("manifest error"), 2);
    // fixed, then broken as at first: a change, said again
    std::fs::write(dir.join("bad.yaml"), NODE).unwrap();
    sa.pass(true).await;
    std::fs::write(dir.join("bad.yaml"), "kind: [").unwrap();
    sa.pass(true).await;
    sa.pass(true).await;
    assert_eq!(
        out.count("manifest error"),
        3,
        "{}",
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
    );
    // the directory gone: said once, not ready until it is back
    let away = dir.with_extension("away");
    std::fs::rename(&*dir, &away).unwrap();
    for _ in 0..4 {
        sa.pass(true).await;
        assert!(!sa.health.is_ready(), "not ready without the manifests");
    }
    assert_eq!(out.count("manifest directory unreadable"), 1);
    std::fs::rename(&away, &*dir).unwrap();
    sa.pass(true).await;
    assert!(sa.health.is_ready());
    assert_eq!(out.count("manifest directory readable again"), 1);
    assert_eq!(
        out.count("manifest error"),
        3,
        "the file's error did not change"
    );
}
