//! The data directory is its owner's alone and holds no password or
//! token secret in clear (as PVE keeps `/etc/pve/priv`); secrets and
//! signing keys come from the operating system's random source unless a
//! random seed is given.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{Auth, Pve, builder, control, start_with};
use fake_pve::Scenario;
use reqwest::Method;
use serde_json::Value;

/// A password a JSON body gives as a number.
const NUMERIC_PW: u64 = 73_519_284;
const ROOT_PW: &str = "R00t-pa55-word";
const ALICE_PW: &str = "Alice-first-pw";
const ALICE_NEW_PW: &str = "Alice-second-pw";
const DIRECTORY_PW: &str = "Wonderland-42";
const SCENARIO_SECRET: &str = "5ce7a410-0000-4000-8000-00000000c0de";

const SCENARIO: &str = "\
nodes:
  - { name: pve }
users:
  - userid: carol@pve
    password: Carol-scenario-pw
    tokens: [{ tokenid: ci, secret: 5ce7a410-0000-4000-8000-00000000c0de, privsep: false }]
  - userid: dave@corp
realms:
  - realm: corp
    type: ldap
    options: { server1: ldap.example.com, base_dn: 'dc=example,dc=com', user_attr: uid }
    directory:
      users:
        dave: { password: Wonderland-42 }
";

/// A new empty directory of its own.
fn temp_dir(name: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(&format!("fake-pve-data-dir-{name}-"))
        .tempdir()
        .expect("a temporary directory")
        .keep()
}

async fn start_in(dir: &Path) -> Pve {
    let s = Scenario::parse(SCENARIO, "data-dir.yaml").expect("scenario");
    start_with(builder().scenario(s).root_password(ROOT_PW).data_dir(dir)).await
}

/// Every directory and file under `dir`, with its mode.
fn modes(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut out = vec![(
        dir.to_path_buf(),
        std::fs::metadata(dir).expect("stat").permissions().mode() & 0o7777,
    )];
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let meta = e.metadata().expect("stat");
        if meta.is_dir() {
            out.extend(modes(&e.path()));
        } else {
            out.push((e.path(), meta.permissions().mode() & 0o7777));
        }
    }
    out
}

fn assert_private(dir: &Path) {
    for (path, mode) in modes(dir) {
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode, want, "{} has mode {mode:o}", path.display());
    }
}

/// Everything the directory holds, as text.
fn contents(dir: &Path) -> String {
    let mut text = String::new();
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        if e.path().is_file() {
            let bytes = std::fs::read(e.path()).expect("read");
            text.push_str(&String::from_utf8_lossy(&bytes));
            text.push('\n');
        }
    }
    text
}

/// Copies the certificates the data directory `from` keeps (`pki/`) into
/// `to`.
fn copy_pki(from: &Path, to: &Path) {
    let (from, to) = (from.join("pki"), to.join("pki"));
    for file in [
        "pve-root-ca.pem",
        "pve-root-ca.key",
        "nodes/pve/pve-ssl.pem",
        "nodes/pve/pve-ssl.key",
    ] {
        let dest = to.join(file);
        std::fs::create_dir_all(dest.parent().expect("a directory")).expect("mkdir");
        std::fs::copy(from.join(file), dest).expect("copy");
    }
}

fn token(id: &str, secret: &str) -> Auth {
    Auth::Token(format!("PVEAPIToken={id}={secret}"))
}

#[tokio::test]
async fn the_directory_and_its_files_are_the_owners_alone_whatever_was_there() {
    let dir = temp_dir("modes");
    // Made under a permissive umask by an older release.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(dir.join("journal.log"), b"").expect("journal");
    std::fs::set_permissions(
        dir.join("journal.log"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    let pve = start_in(&dir).await;
    let root = pve.login_as("root@pam", ROOT_PW).await;
    let r = pve
        .post(
            "/access/users",
            &root,
            &format!("userid=alice@pve&password={ALICE_PW}"),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    for name in [
        "keys",
        "pki/pve-root-ca.pem",
        "pki/pve-root-ca.key",
        "pki/nodes/pve/pve-ssl.pem",
        "pki/nodes/pve/pve-ssl.key",
        "journal.log",
        "alive",
        "lock",
    ] {
        assert!(dir.join(name).is_file(), "{name}");
    }
    assert_private(&dir);
    pve.run.shutdown().await;
    assert!(dir.join("snapshot.json").is_file());
    assert_private(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn no_password_or_token_secret_is_kept_in_clear() {
    let dir = temp_dir("clear");
    let pve = start_in(&dir).await;
    let root = pve.login_as("root@pam", ROOT_PW).await;
    let r = pve
        .post(
            "/access/users",
            &root,
            &format!("userid=alice@pve&password={ALICE_PW}"),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    // A JSON body may give the password as a number.
    let r = pve
        .send(
            Method::POST,
            "/api2/json/access/users",
            &root,
            Some((
                "application/json",
                format!(r#"{{"userid":"bob@pve","password":{NUMERIC_PW}}}"#),
            )),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let bob = pve.login_as("bob@pve", &NUMERIC_PW.to_string()).await;
    assert!(matches!(bob, Auth::Ticket { .. }), "bob logs in");
    let alice = pve.login_as("alice@pve", ALICE_PW).await;
    // Alice changes her own password, confirming with the old one.
    let r = pve
        .put(
            "/access/password",
            &alice,
            &format!("userid=alice@pve&password={ALICE_NEW_PW}&confirmation-password={ALICE_PW}"),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    // A wrong confirmation is refused, and so again on replay.
    let r = pve
        .put(
            "/access/password",
            &alice,
            "userid=alice@pve&password=Never-taken-pw&confirmation-password=Wrong-guess-pw",
        )
        .await;
    assert_ne!(r.status, 200, "{r:?}");
    let made = pve
        .post("/access/users/alice@pve/token/ci", &root, "privsep=0")
        .await
        .data();
    let secret = made["value"].as_str().expect("the secret").to_string();
    assert_eq!(secret.len(), 36);
    let state = control(&pve, &root, Method::GET, "/_fake/state", None).await;
    let doc = state.text.clone();
    let journal =
        String::from_utf8_lossy(&std::fs::read(dir.join("journal.log")).expect("journal"))
            .into_owned();
    // The world as a state document keeps hashes only.
    let users = &state.data()["cluster"]["access"]["users"];
    assert!(
        users["alice@pve"]["password_hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("$5$")),
        "{users}"
    );
    assert!(
        users["alice@pve"]["tokens"]["ci"]["secret_hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:")),
        "{users}"
    );
    let keys = std::fs::read_to_string(dir.join("keys")).expect("keys");
    pve.run.shutdown().await;
    let all = format!("{doc}\n{journal}\n{}", contents(&dir));
    let numeric = NUMERIC_PW.to_string();
    for clear in [
        numeric.as_str(),
        ROOT_PW,
        ALICE_PW,
        ALICE_NEW_PW,
        "Wrong-guess-pw",
        "Carol-scenario-pw",
        DIRECTORY_PW,
        SCENARIO_SECRET,
        secret.as_str(),
    ] {
        assert!(!all.contains(clear), "{clear} is kept in clear");
    }
    // The ticket and CSRF keys are in `keys` and nowhere else.
    for key in keys.lines() {
        assert_eq!(key.len(), 64);
        assert_eq!(all.matches(key).count(), 1, "{key} leaves `keys`");
    }

    // What the journal replays and the snapshot restores logs in alike.
    for again in [false, true] {
        let pve = start_in(&dir).await;
        let r = pve
            .post(
                "/access/ticket",
                &Auth::None,
                &format!("username=alice@pve&password={ALICE_PW}"),
            )
            .await;
        assert_eq!(r.status, 401, "the old password is gone");
        let alice = pve.login_as("alice@pve", ALICE_NEW_PW).await;
        assert_eq!(pve.get("/version", &alice).await.status, 200);
        let root = pve.login_as("root@pam", ROOT_PW).await;
        for (auth, what) in [
            (token("alice@pve!ci", &secret), "a token made over the API"),
            (token("carol@pve!ci", SCENARIO_SECRET), "a scenario's token"),
            (
                pve.login_as("carol@pve", "Carol-scenario-pw").await,
                "a scenario's user",
            ),
            (
                pve.login_as("dave@corp", DIRECTORY_PW).await,
                "a directory's user",
            ),
        ] {
            assert_eq!(pve.get("/version", &auth).await.status, 200, "{what}");
        }
        assert_eq!(
            pve.get("/version", &token("alice@pve!ci", "0-wrong"))
                .await
                .status,
            401
        );
        if !again {
            // A state document round trip keeps every login working.
            let doc = control(&pve, &root, Method::GET, "/_fake/state", None)
                .await
                .data();
            let r = control(
                &pve,
                &root,
                Method::PUT,
                "/_fake/state",
                Some(doc.to_string()),
            )
            .await;
            assert_eq!(r.status, 200, "{r:?}");
            pve.login_as("alice@pve", ALICE_NEW_PW).await;
            let r = pve.get("/version", &token("alice@pve!ci", &secret)).await;
            assert_eq!(r.status, 200, "{r:?}");
        }
        pve.run.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_journal_with_sealed_passwords_replays_the_same_world() {
    let dir = temp_dir("replay");
    let pve = start_in(&dir).await;
    let root = pve.login_as("root@pam", ROOT_PW).await;
    for form in [
        format!("userid=alice@pve&password={ALICE_PW}"),
        // Refused for its length: journaled as stars, refused again.
        "userid=bob@pve&password=short".to_string(),
    ] {
        pve.post("/access/users", &root, &form).await;
    }
    let alice = pve.login_as("alice@pve", ALICE_PW).await;
    let r = pve
        .put(
            "/access/password",
            &alice,
            &format!("userid=alice@pve&password={ALICE_NEW_PW}&confirmation-password={ALICE_PW}"),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let secret = pve
        .post("/access/users/alice@pve/token/ci", &root, "privsep=0")
        .await
        .data()["value"]
        .as_str()
        .expect("secret")
        .to_string();
    let before = control(&pve, &root, Method::GET, "/_fake/state", None)
        .await
        .data()["cluster"]["access"]
        .clone();
    let journal = std::fs::read(dir.join("journal.log")).expect("journal");
    let text = String::from_utf8_lossy(&journal);
    assert!(text.contains(r#""sealed":["password"]"#), "{text}");
    assert!(text.contains(r#""password":"*****""#), "{text}");
    for clear in [ALICE_PW, ALICE_NEW_PW, "short", secret.as_str()] {
        assert!(!text.contains(clear), "{clear} in the journal");
    }
    // A crash now: the copy has no snapshot, only the journal.
    let copy = temp_dir("replay-copy");
    for name in ["keys", "journal.log"] {
        std::fs::copy(dir.join(name), copy.join(name)).expect("copy");
    }
    copy_pki(&dir, &copy);
    pve.run.shutdown().await;
    let again = start_in(&copy).await;
    let root = again.login_as("root@pam", ROOT_PW).await;
    let after = control(&again, &root, Method::GET, "/_fake/state", None)
        .await
        .data()["cluster"]["access"]
        .clone();
    assert_eq!(after["users"], before["users"]);
    again.login_as("alice@pve", ALICE_NEW_PW).await;
    let r = again.get("/version", &token("alice@pve!ci", &secret)).await;
    assert_eq!(r.status, 200, "{r:?}");
    again.run.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&copy);
}

#[tokio::test]
async fn an_older_save_with_clear_passwords_is_hashed_on_load() {
    let dir = temp_dir("older");
    let pve = start_in(&dir).await;
    pve.run.shutdown().await;
    // The snapshot as an older release wrote it: passwords and token
    // secrets in clear.
    let path = dir.join("snapshot.json");
    let mut snap: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("snapshot")).expect("JSON");
    let users = &mut snap["cluster"]["access"]["users"];
    let alice = serde_json::json!({
        "userid": "alice@pve", "password": ALICE_PW, "enable": true, "expire": 0,
        "tokens": { "old": { "tokenid": "old", "secret": SCENARIO_SECRET, "privsep": false, "expire": 0 } }
    });
    users["alice@pve"] = alice;
    std::fs::write(&path, snap.to_string()).expect("write");

    let pve = start_in(&dir).await;
    let alice = pve.login_as("alice@pve", ALICE_PW).await;
    assert_eq!(pve.get("/version", &alice).await.status, 200);
    let r = pve
        .get("/version", &token("alice@pve!old", SCENARIO_SECRET))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    // The start wrote the snapshot again, hashed.
    let text = std::fs::read_to_string(&path).expect("snapshot");
    assert!(!text.contains(ALICE_PW), "{text}");
    assert!(!text.contains(SCENARIO_SECRET), "{text}");
    pve.run.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_older_journal_with_clear_passwords_replays_hashed() {
    use fake_pve::persist::{ApiCall, Call, Fsync, Record, Store};
    let dir = temp_dir("older-journal");
    // Records as an older release journaled them: the password in clear,
    // the token's secret drawn from the record's seed alone.
    let loaded = Store::open(&dir, Fsync::Never, || {
        fake_pve::api::auth::Keys::random().to_text()
    })
    .expect("a store");
    let call = |path: &str, params: &[(&str, &str)]| {
        Call::Api(ApiCall {
            method: "POST".into(),
            format: Some("json".into()),
            path: path.into(),
            params: Ok(params
                .iter()
                .map(|(k, v)| ((*k).to_string(), Value::String((*v).to_string())))
                .collect()),
            upload: None,
        })
    };
    let now = Some(common::T0 * 1000);
    let who = Some("root@pam".to_string());
    for (i, c) in [
        call(
            "/access/users",
            &[("userid", "alice@pve"), ("password", ALICE_PW)],
        ),
        call("/access/users/alice@pve/token/ci", &[("privsep", "0")]),
    ]
    .into_iter()
    .enumerate()
    {
        let mut rec = Record::of(c, who.clone(), now, 40 + i as u64);
        rec.keyed = false;
        loaded.store.append(&mut rec).expect("appended");
    }
    loaded.store.release();
    drop(loaded);
    let secret = fake_pve::model::Context::new(0, 41).uuid_v4();

    let pve = start_in(&dir).await;
    let alice = pve.login_as("alice@pve", ALICE_PW).await;
    assert_eq!(pve.get("/version", &alice).await.status, 200);
    let r = pve.get("/version", &token("alice@pve!ci", &secret)).await;
    assert_eq!(r.status, 200, "{r:?}");
    // The start wrote a snapshot and emptied the journal: hashed.
    pve.run.shutdown().await;
    let text = contents(&dir);
    assert!(!text.contains(ALICE_PW), "{text}");
    assert!(!text.contains(&secret), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_state_document_or_seed_with_clear_passwords_is_journaled_hashed() {
    let dir = temp_dir("documents");
    let pve = start_in(&dir).await;
    let root = pve.login_as("root@pam", ROOT_PW).await;
    let mut doc = control(&pve, &root, Method::GET, "/_fake/state", None)
        .await
        .data();
    doc["cluster"]["access"]["users"]["erin@pve"] = serde_json::json!({
        "userid": "erin@pve", "password": "Erin-hand-written", "enable": true, "expire": 0,
        "tokens": { "t1": { "tokenid": "t1", "secret": "erin-token-secret", "privsep": false, "expire": 0 } }
    });
    let r = control(
        &pve,
        &root,
        Method::PUT,
        "/_fake/state",
        Some(doc.to_string()),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    pve.login_as("erin@pve", "Erin-hand-written").await;
    let seed = "nodes: [{name: pve}]\nusers: [{userid: frank@pve, password: Frank-seeded-pw}]\n";
    let r = pve
        .send(
            Method::POST,
            "/_fake/seed",
            &root,
            Some(("application/yaml", seed.into())),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    pve.login_as("frank@pve", "Frank-seeded-pw").await;
    let text = String::from_utf8_lossy(&std::fs::read(dir.join("journal.log")).expect("journal"))
        .into_owned();
    for clear in ["Erin-hand-written", "erin-token-secret", "Frank-seeded-pw"] {
        assert!(!text.contains(clear), "{clear} in the journal");
    }
    let copy = temp_dir("documents-copy");
    for name in ["keys", "journal.log", "snapshot.json"] {
        std::fs::copy(dir.join(name), copy.join(name)).expect("copy");
    }
    copy_pki(&dir, &copy);
    pve.run.shutdown().await;
    let snap = std::fs::read_to_string(dir.join("snapshot.json")).expect("snapshot");
    assert!(
        !snap.contains("Frank-seeded-pw"),
        "the seed kept for a reset"
    );
    // Replayed: the same logins; and a reset rebuilds the seed alike.
    let again = start_in(&copy).await;
    let root = again.login_as("root@pam", ROOT_PW).await;
    again.login_as("frank@pve", "Frank-seeded-pw").await;
    let r = control(&again, &root, Method::POST, "/_fake/reset", None).await;
    assert_eq!(r.status, 200, "{r:?}");
    again.login_as("frank@pve", "Frank-seeded-pw").await;
    again.run.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&copy);
}

/// A new token's secret on a fresh fake-pve.
async fn first_secret(seed: Option<u64>) -> String {
    let mut b = builder();
    if let Some(s) = seed {
        b = b.random_seed(s);
    }
    let pve = start_with(b).await;
    let root = pve.root().await;
    let secret = pve
        .post("/access/users/root@pam/token/ci", &root, "privsep=0")
        .await
        .data()["value"]
        .as_str()
        .expect("secret")
        .to_string();
    pve.run.shutdown().await;
    secret
}

#[tokio::test]
async fn token_secrets_are_unpredictable_unless_a_seed_is_given() {
    let (a, b) = (first_secret(None).await, first_secret(None).await);
    assert_ne!(a, b, "two fresh instances issue different secrets");
    let (c, d) = (first_secret(Some(7)).await, first_secret(Some(7)).await);
    assert_eq!(c, d, "the same explicit seed issues the same secret");
    assert_ne!(c, first_secret(Some(8)).await);
}

#[tokio::test]
async fn tickets_follow_the_seed_only_when_one_is_given() {
    async fn login(seed: Option<u64>) -> String {
        let mut b = builder();
        if let Some(s) = seed {
            b = b.random_seed(s);
        }
        let pve = start_with(b).await;
        let Auth::Ticket { ticket, .. } = pve.root().await else {
            unreachable!("a login answers a ticket")
        };
        pve.run.shutdown().await;
        ticket
    }
    // The clock is manual: the same user at the same time.
    assert_ne!(login(None).await, login(None).await);
    assert_eq!(login(Some(3)).await, login(Some(3)).await);
}
