//! The `pve` binary against an in-process fake-pve, configured through
//! the environment as in production.

mod common;

use std::process::{Command, Output};

use common::{ROOT_TOKEN, ROOT_TOKEN_SECRET, start};
use fake_pve::Running;
use serde_json::Value;

/// Runs `pve args...` with the given environment (and nothing else).
async fn pve(env: Vec<(&'static str, String)>, args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(ToString::to_string).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_pve"))
            .env_clear()
            .envs(env)
            .args(args)
            .output()
            .expect("pve runs")
    })
    .await
    .expect("joined")
}

fn password_env(run: &Running) -> Vec<(&'static str, String)> {
    vec![
        ("PVE_ENDPOINT", run.url()),
        ("PVE_USERNAME", "root@pam".into()),
        ("PVE_PASSWORD", "password".into()),
        ("PVE_CA_BUNDLE", run.cert_pem().expect("TLS").into()),
    ]
}

fn token_env(run: &Running) -> Vec<(&'static str, String)> {
    vec![
        ("PVE_ENDPOINT", run.api_url()),
        ("PVE_TOKEN_ID", ROOT_TOKEN.into()),
        ("PVE_TOKEN_SECRET", ROOT_TOKEN_SECRET.into()),
        (
            "PVE_TLS_FINGERPRINT",
            run.fingerprint().expect("TLS").into(),
        ),
    ]
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}, stderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

fn json(o: &Output) -> Value {
    serde_json::from_str(&stdout(o)).expect("JSON output")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_in_every_output_format() {
    let run = start().await;
    for env in [password_env(&run), token_env(&run)] {
        let v = json(&pve(env.clone(), &["get", "/version", "--output-format", "json"]).await);
        assert_eq!(v["release"], "9.2");
        let pretty = stdout(
            &pve(
                env.clone(),
                &["--output-format", "json-pretty", "get", "/version"],
            )
            .await,
        );
        assert!(pretty.contains("\n  \"release\": \"9.2\""), "{pretty}");
        let text = stdout(&pve(env.clone(), &["get", "/nodes"]).await);
        let mut lines = text.lines();
        assert!(
            lines
                .next()
                .is_some_and(|h| h.contains("node") && h.contains("status")),
            "{text}"
        );
        assert!(
            lines
                .next()
                .is_some_and(|r| r.contains("pve") && r.contains("online")),
            "{text}"
        );
        let id = stdout(&pve(env.clone(), &["get", "/cluster/nextid", "--vmid", "250"]).await);
        assert_eq!(id, "250\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_lists_children() {
    let run = start().await;
    let root = stdout(&pve(password_env(&run), &["ls", "/"]).await);
    let names: Vec<&str> = root.lines().collect();
    // pvesh's flags: D has children, then r(GET) w(PUT) c(POST) d(DELETE).
    assert_eq!(
        names,
        [
            "-r---        version",
            "Dr---        cluster",
            "Dr---        nodes",
            "Dr-c-        storage",
            "Dr---        access",
            "Drwcd        pools"
        ]
    );
    // The schema's link key names the children (`userid` here).
    let users = stdout(&pve(token_env(&run), &["ls", "/access/users"]).await);
    assert_eq!(
        users.lines().collect::<Vec<_>>(),
        ["Drw-d        ci@pve", "Drw-d        root@pam"]
    );
    let roles = json(
        &pve(
            token_env(&run),
            &["ls", "/access/roles", "--output-format", "json"],
        )
        .await,
    );
    let roles: Vec<&str> = roles
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    assert!(
        roles.contains(&"PVEAdmin") && roles.contains(&"NoAccess"),
        "{roles:?}"
    );
    let nodes = json(
        &pve(
            token_env(&run),
            &["ls", "/nodes", "--output-format", "json"],
        )
        .await,
    );
    assert_eq!(nodes, serde_json::json!(["pve"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_set_delete_and_wait() {
    let run = start().await;
    let env = password_env(&run);
    let upid = stdout(&pve(env.clone(), &["create", "/nodes/pve/startall"]).await);
    assert!(upid.starts_with("UPID:pve:"), "{upid}");
    let log = stdout(
        &pve(
            env.clone(),
            &["create", "/nodes/pve/startall", "--force", "--wait"],
        )
        .await,
    );
    assert!(log.ends_with("TASK OK\n"), "{log}");
    let done = json(
        &pve(
            env.clone(),
            &[
                "create",
                "/nodes/pve/stopall",
                "--wait",
                "--output-format",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(done["status"], "stopped");
    assert_eq!(done["exitstatus"], "OK");

    let made = json(
        &pve(
            env.clone(),
            &[
                "create",
                "/access/users/root@pam/token/cli",
                "--privsep=0",
                "--output-format",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(made["full-tokenid"], "root@pam!cli");
    let set = json(
        &pve(
            env.clone(),
            &[
                "set",
                "/access/users/root@pam/token/cli",
                "--comment",
                "from the CLI",
                "--output-format",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(set["comment"], "from the CLI");
    let deleted = stdout(&pve(env.clone(), &["delete", "/access/users/root@pam/token/cli"]).await);
    assert_eq!(deleted, "");
    let gone = pve(env, &["get", "/access/users/root@pam/token/cli"]).await;
    assert_eq!(gone.status.code(), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_exit_non_zero_with_pves_message() {
    let run = start().await;
    let taken = pve(
        password_env(&run),
        &["get", "/cluster/nextid", "--vmid", "100"],
    )
    .await;
    assert_eq!(taken.status.code(), Some(1));
    let err = String::from_utf8_lossy(&taken.stderr);
    assert!(
        err.contains("pve: Parameter verification failed. vmid: VM 100 already exists"),
        "{err}"
    );

    let mut wrong = password_env(&run);
    wrong[2].1 = "wrong".into();
    let denied = pve(wrong, &["get", "/version"]).await;
    assert_eq!(denied.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&denied.stderr)
            .contains("authentication failed: authentication failure")
    );

    let missing = pve(vec![], &["get", "/version"]).await;
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("pve: endpoint is required"));

    let no_creds = pve(vec![("PVE_ENDPOINT", run.url())], &["get", "/version"]).await;
    assert_eq!(no_creds.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_creds.stderr).contains("credentials are required"));

    let bad_format = pve(
        password_env(&run),
        &["get", "/version", "--output-format", "yaml"],
    )
    .await;
    assert_eq!(bad_format.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_times_out_on_a_long_task() {
    let run = common::start_with_latency("startall", 600_000).await;
    let out = pve(
        token_env(&run),
        &[
            "create",
            "/nodes/pve/startall",
            "--wait",
            "--poll-interval",
            "0.01",
            "--wait-timeout",
            "0.1",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("timeout: task UPID:pve:") && err.contains("still running"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_follows_the_servers_release() {
    let nine = start().await;
    let eight = common::builder()
        .pve_version(fake_pve::PveVersion::V8_4)
        .start()
        .await
        .expect("starts");
    let new = stdout(&pve(token_env(&nine), &["usage", "/nodes/pve/startall"]).await);
    assert!(
        new.starts_with("USAGE: pve create /nodes/{node}/startall [OPTIONS]\n"),
        "{new}"
    );
    assert!(
        new.contains("\n  --force <boolean>\n        optional, default: off\n"),
        "{new}"
    );
    assert!(
        new.contains("\n  --max-workers <integer> (1 - 64)\n"),
        "{new}"
    );
    // An 8.4 server has no max-workers: its own schema is used.
    let old = stdout(&pve(password_env(&eight), &["usage", "/nodes/pve/startall"]).await);
    assert!(old.contains("--force <boolean>"), "{old}");
    assert!(!old.contains("max-workers"), "{old}");
    // Asked for explicitly, a release wins over the server's.
    let asked = stdout(
        &pve(
            token_env(&nine),
            &["usage", "/nodes/pve/startall", "--release", "8.4"],
        )
        .await,
    );
    assert_eq!(asked, old);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_without_a_server_and_verbose() {
    // No PVE_ENDPOINT: the 9.2 schema.
    let acl = stdout(&pve(vec![], &["usage", "/access/acl", "--verbose"]).await);
    assert!(acl.starts_with("USAGE: pve get /access/acl\n"), "{acl}");
    assert!(
        acl.contains("USAGE: pve set /access/acl --path <string> --roles <string> [OPTIONS]\n"),
        "{acl}"
    );
    assert!(
        acl.contains("\n  --propagate <boolean>\n        optional, default: 1\n"),
        "{acl}"
    );
    assert!(acl.contains("        format: pve-roleid-list\n"), "{acl}");
    assert!(acl.contains("  permissions: "), "{acl}");
    let qemu = stdout(&pve(vec![], &["usage", "/nodes/{node}/qemu", "-v"]).await);
    assert!(
        qemu.contains("\n  --net[n] [model=]<enum> [,bridge=<bridge>]"),
        "{qemu}"
    );
    assert!(qemu.contains("        names: net0 .. net31\n"), "{qemu}");
    assert!(
        qemu.contains(
            "          tag=<integer>\n              optional\n              range: 1 - 4094\n"
        ),
        "{qemu}"
    );
    let brief = stdout(&pve(vec![], &["usage", "/nodes/{node}/qemu"]).await);
    assert!(!brief.contains("names: net0"), "{brief}");

    let unknown = pve(vec![], &["usage", "/nodes/pve/nothing"]).await;
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("not found: no such resource '/nodes/pve/nothing'")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn containers_through_get_create_and_set() {
    let run = start().await;
    let env = password_env(&run);
    let log = stdout(
        &pve(
            env.clone(),
            &[
                "create",
                "/nodes/pve/aplinfo",
                "--storage",
                "local",
                "--template",
                "debian-12-standard_12.7-1_amd64.tar.zst",
                "--wait",
            ],
        )
        .await,
    );
    assert!(log.ends_with("TASK OK\n"), "{log}");
    let log = stdout(
        &pve(
            env.clone(),
            &[
                "create",
                "/nodes/pve/lxc",
                "--vmid",
                "300",
                "--ostemplate",
                "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
                "--rootfs",
                "local-lvm:1",
                "--hostname",
                "from-cli",
                "--wait",
            ],
        )
        .await,
    );
    assert!(
        log.contains("Detected container architecture: amd64") && log.ends_with("TASK OK\n"),
        "{log}"
    );
    let set = stdout(
        &pve(
            env.clone(),
            &["set", "/nodes/pve/lxc/300/config", "--cores", "2"],
        )
        .await,
    );
    assert_eq!(set, "");
    let config = json(
        &pve(
            env,
            &[
                "get",
                "/nodes/pve/lxc/300/config",
                "--output-format",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(config["hostname"], "from-cli");
    assert_eq!(config["cores"], 2);
    assert_eq!(config["rootfs"], "local-lvm:vm-300-disk-0,size=1G");
}
