//! The `pve-operator` commands read the environment as `run` does: the
//! manifest directory from `PVE_OPERATOR_MANIFESTS`, and the cluster the
//! `PVE_*` variables give.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::process::{Command, Output};

use common::TempDir;

const MACHINE: &str = "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: web }
spec: { cluster: pve, memory: 512Mi }
";

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pve-operator"))
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn status_and_check_read_the_environment_run_reads() {
    let dir = TempDir::new("cli");
    std::fs::write(dir.join("web.yaml"), MACHINE).unwrap();
    let d = dir.to_str().unwrap();
    // the directory from PVE_OPERATOR_MANIFESTS, as run takes it
    let status = run(&["status"], &[("PVE_OPERATOR_MANIFESTS", d)]);
    assert!(status.status.success(), "{}", text(&status));
    assert!(
        String::from_utf8_lossy(&status.stdout).starts_with("NAME"),
        "{}",
        text(&status)
    );
    // no cluster named pve: run would not find it, check says so
    let alone = run(&["check"], &[("PVE_OPERATOR_MANIFESTS", d)]);
    assert_eq!(alone.status.code(), Some(1), "{}", text(&alone));
    assert!(
        text(&alone).contains("Machine/web: spec.cluster: ProxmoxCluster 'pve' is not declared"),
        "{}",
        text(&alone)
    );
    // the PVE_* variables give it, as they give it to run
    let env = [
        ("PVE_OPERATOR_MANIFESTS", d),
        ("PVE_ENDPOINT", "https://pve.example.com:8006"),
        ("PVE_TOKEN_ID", "root@pam!automation"),
        ("PVE_TOKEN_SECRET", "x"),
    ];
    let given = run(&["check"], &env);
    assert!(given.status.success(), "{}", text(&given));
    assert!(text(&given).contains("1 resources"), "{}", text(&given));
    // under another name (PVE_CLUSTER_NAME), not under pve
    let mut other = env.to_vec();
    other.push(("PVE_CLUSTER_NAME", "lab"));
    let o = run(&["check"], &other);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("the PVE_* variables give 'lab'"),
        "{}",
        text(&o)
    );
    // a directory given on the command line wins
    let empty = TempDir::new("cli-empty");
    let e = run(
        &["check", empty.to_str().unwrap()],
        &[("PVE_OPERATOR_MANIFESTS", d)],
    );
    assert!(e.status.success(), "{}", text(&e));
    assert!(text(&e).contains("0 resources"), "{}", text(&e));
}
