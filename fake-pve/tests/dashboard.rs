//! The dashboard at `/`: the page and its files, the event stream
//! (`/_fake/events`) and the request log over a real socket, and the
//! page itself driven in a real headless browser (Debian's chromium
//! through chromedriver, installed by `ci/setup-chromium`).
#![allow(missing_docs)]

mod common;

use std::time::{Duration, Instant};

use common::{Auth, Pve, builder, start, start_with};
use fake_pve::{Clock, Latency};
use serde_json::{Value, json};

// ---- the page and its files ---------------------------------------------

#[tokio::test]
async fn the_page_and_its_files_are_served_from_the_binary() {
    let pve = start().await;
    let r = pve.send(reqwest::Method::GET, "/", &Auth::None, None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(r.text.contains(r#"<form id="login-form""#), "{}", r.text);
    assert!(r.text.contains(r#"<label for="password">"#));
    assert!(r.text.contains(r#"<meta name="fake-pve-csrf" content="">"#));
    let csp = r.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'self'"), "{csp}");
    // Nothing from elsewhere.
    assert!(!r.text.contains("http://") && !r.text.contains("https://"));
    for (path, ctype, marker) in [
        (
            "/dashboard/dashboard.js",
            "application/javascript; charset=utf-8",
            "EventSource('/_fake/events')",
        ),
        (
            "/dashboard/dashboard.css",
            "text/css; charset=utf-8",
            ":focus-visible",
        ),
    ] {
        let r = pve
            .send(reqwest::Method::GET, path, &Auth::None, None)
            .await;
        assert_eq!((r.status, r.header("content-type")), (200, Some(ctype)));
        assert!(r.text.contains(marker), "{path}");
        assert!(!r.text.contains("http://") && !r.text.contains("https://"));
    }
    let r = pve
        .send(
            reqwest::Method::GET,
            "/dashboard/other.js",
            &Auth::None,
            None,
        )
        .await;
    assert_eq!(
        (r.status, r.text.as_str()),
        (500, "no such file '/dashboard/other.js'\n")
    );
}

#[tokio::test]
async fn a_logged_in_page_carries_a_csrf_token_for_writes() {
    let pve = start().await;
    let Auth::Ticket { ticket, .. } = pve.root().await else {
        panic!("a ticket");
    };
    let page = pve
        .send(
            reqwest::Method::GET,
            "/",
            &Auth::Header("Cookie", format!("PVEAuthCookie={ticket}")),
            None,
        )
        .await;
    assert!(
        page.text
            .contains(r#"<meta name="fake-pve-user" content="root@pam">"#)
    );
    let csrf = page
        .text
        .split(r#"<meta name="fake-pve-csrf" content=""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a token")
        .to_string();
    assert!(!csrf.is_empty());
    let auth = Auth::Ticket { ticket, csrf };
    let r = pve
        .send(
            reqwest::Method::POST,
            "/_fake/checkpoints",
            &auth,
            Some((
                "application/x-www-form-urlencoded",
                "name=from-the-page".into(),
            )),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
}

// ---- the event stream ---------------------------------------------------

/// A server-sent event stream as a client reads it.
struct Stream {
    resp: reqwest::Response,
    buf: String,
}

impl Stream {
    async fn open(pve: &Pve, auth: &Auth) -> Result<Self, u16> {
        let mut rb = pve.http.get(pve.url("/_fake/events"));
        if let Auth::Ticket { ticket, .. } = auth {
            rb = rb.header("Cookie", format!("PVEAuthCookie={ticket}"));
        }
        let resp = rb.send().await.expect("request");
        if resp.status() != 200 {
            return Err(resp.status().as_u16());
        }
        assert_eq!(
            resp.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("text/event-stream")
        );
        Ok(Self {
            resp,
            buf: String::new(),
        })
    }

    /// The next event: its name and data.
    async fn next(&mut self) -> (String, Value) {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = n.to_string();
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data.push_str(d);
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return (name, serde_json::from_str(&data).expect("JSON data"));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(15), self.resp.chunk())
                .await
                .expect("an event within 15 s")
                .expect("the stream goes on")
                .expect("not ended");
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Reads events until `pred` holds for one named `name`.
    async fn until(&mut self, name: &str, pred: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..50 {
            let (n, data) = self.next().await;
            if n == name && pred(&data) {
                return data;
            }
        }
        panic!("no {name} event as expected in 50 events");
    }
}

fn has_guest(view: &Value, vmid: u32) -> bool {
    view["guests"]
        .as_array()
        .is_some_and(|g| g.iter().any(|g| g["vmid"] == vmid))
}

#[tokio::test]
async fn the_event_stream_is_root_at_pams() {
    let pve = start().await;
    assert_eq!(Stream::open(&pve, &Auth::None).await.err(), Some(401));
    let root = pve.root().await;
    let r = pve
        .post(
            "/access/users",
            &root,
            "userid=bob@pve&password=bobs-secret",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let bob = pve.login_as("bob@pve", "bobs-secret").await;
    assert_eq!(Stream::open(&pve, &bob).await.err(), Some(403));
    assert!(Stream::open(&pve, &root).await.is_ok());
}

#[tokio::test]
async fn the_event_stream_pushes_the_world_and_the_requests() {
    let pve = start().await;
    let root = pve.root().await;
    let mut events = Stream::open(&pve, &root).await.expect("stream");
    let first = events.until("view", |_| true).await;
    assert_eq!(first["user"], "root@pam");
    assert_eq!(first["nodes"][0]["node"], "pve");
    assert_eq!(first["clock"]["manual"], true);
    assert!(!has_guest(&first, 4242));
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=4242&name=pushed")
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let view = events.until("view", |v| has_guest(v, 4242)).await;
    let g = view["guests"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["vmid"] == 4242))
        .expect("guest");
    assert_eq!(g["name"], "pushed");
    // The request log follows: the create, with its status and time.
    let reqs = events
        .until("requests", |r| {
            r.as_array().is_some_and(|l| {
                l.iter()
                    .any(|e| e["path"] == "/api2/json/nodes/pve/qemu" && e["method"] == "POST")
            })
        })
        .await;
    let create = reqs
        .as_array()
        .and_then(|l| l.iter().find(|e| e["path"] == "/api2/json/nodes/pve/qemu"))
        .expect("logged");
    assert_eq!(create["status"], 200);
    assert!(create["ms"].as_f64().is_some_and(|ms| ms >= 0.0));
    assert_eq!(create["dashboard"], false);
    // Control calls push too.
    let r = pve
        .send(
            reqwest::Method::POST,
            "/_fake/faults",
            &root,
            Some((
                "application/json",
                r#"{"path": "/nodes/pve/status", "status": 503}"#.into(),
            )),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let view = events
        .until("view", |v| {
            v["faults"].as_array().is_some_and(|f| f.len() == 1)
        })
        .await;
    assert_eq!(view["faults"][0]["path"], "/nodes/pve/status");
}

#[tokio::test]
async fn a_task_ends_on_the_stream_when_its_time_comes() {
    let mut latency = Latency::instant();
    latency.set_task_ms("qmstart", 1_500);
    let pve = start_with(builder().clock(Clock::system()).latency(latency)).await;
    let root = pve.root().await;
    pve.post("/nodes/pve/qemu", &root, "vmid=300").await.data();
    let mut events = Stream::open(&pve, &root).await.expect("stream");
    let upid = pve
        .post("/nodes/pve/qemu/300/status/start", &root, "")
        .await
        .data();
    let task = |v: &Value| {
        v["tasks"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["upid"] == upid).cloned())
    };
    let running = events
        .until("view", |v| {
            task(v).is_some_and(|t| t["status"] == "RUNNING")
        })
        .await;
    assert_eq!(running["tasks_running"], 1);
    // Nobody asks: the stream wakes when the task is due.
    let started = Instant::now();
    let ended = events
        .until("view", |v| task(v).is_some_and(|t| t["status"] == "OK"))
        .await;
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(ended["tasks_running"], 0);
}

#[tokio::test]
async fn a_shutdown_ends_the_streams() {
    let pve = start_with(builder().shutdown_grace(Duration::from_secs(30))).await;
    let root = pve.root().await;
    let mut events = Stream::open(&pve, &root).await.expect("stream");
    events.until("view", |_| true).await;
    let started = Instant::now();
    let Pve { run, .. } = pve;
    tokio::time::timeout(Duration::from_secs(10), run.shutdown())
        .await
        .expect("the shutdown does not wait for the dashboard");
    assert!(started.elapsed() < Duration::from_secs(10));
}

// ---- the page in a browser ----------------------------------------------

/// A headless chromium driven through chromedriver (WebDriver).
struct Browser {
    http: reqwest::Client,
    base: String,
    session: String,
    driver: std::process::Child,
    _profile: tempfile::TempDir,
}

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn on_path(names: &[&str]) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| {
        std::env::split_paths(&path)
            .map(|d| d.join(n))
            .find(|p| p.is_file())
    })
}

impl Browser {
    /// Starts chromedriver and a headless chromium; `None` only when
    /// `FAKE_PVE_SKIP_BROWSER=1` says so. Without them the test fails:
    /// `ci/setup-chromium` installs them.
    async fn start() -> Option<Self> {
        if std::env::var("FAKE_PVE_SKIP_BROWSER").as_deref() == Ok("1") {
            eprintln!("FAKE_PVE_SKIP_BROWSER=1: the dashboard is not driven in a browser");
            return None;
        }
        let driver = std::env::var_os("FAKE_PVE_CHROMEDRIVER")
            .map(std::path::PathBuf::from)
            .or_else(|| on_path(&["chromedriver"]))
            .expect(
                "chromedriver not found: run ci/setup-chromium (or set FAKE_PVE_SKIP_BROWSER=1)",
            );
        let chromium = std::env::var_os("FAKE_PVE_CHROMIUM")
            .map(std::path::PathBuf::from)
            .or_else(|| on_path(&["chromium", "chromium-browser"]))
            .expect("chromium not found: run ci/setup-chromium (or set FAKE_PVE_SKIP_BROWSER=1)");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = std::process::Command::new(&driver)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", driver.display()));
        let profile = tempfile::tempdir().expect("a profile directory");
        let mut b = Self {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("client"),
            base: format!("http://127.0.0.1:{port}"),
            session: String::new(),
            driver: child,
            _profile: profile,
        };
        let mut ready = false;
        for _ in 0..100 {
            let status = b.http.get(format!("{}/status", b.base)).send().await;
            if let Ok(r) = status
                && let Ok(v) = r.json::<Value>().await
                && v["value"]["ready"] == true
            {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(ready, "chromedriver did not come up");
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--ignore-certificate-errors",
            "--window-size=1440,1000",
            &format!("--user-data-dir={}", b._profile.path().display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "acceptInsecureCerts": true,
            "goog:chromeOptions": {"binary": chromium, "args": args},
        }}});
        let r = b
            .http
            .post(format!("{}/session", b.base))
            .json(&caps)
            .send()
            .await
            .expect("new session");
        let v: Value = r.json().await.expect("JSON");
        b.session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {v}"))
            .to_string();
        Some(b)
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let mut rb = self.http.request(method, url);
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let r = rb.send().await.expect("WebDriver call");
        let ok = r.status().is_success();
        let v: Value = r.json().await.expect("JSON");
        assert!(ok, "WebDriver {path}: {v}");
        v["value"].clone()
    }

    async fn goto(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    async fn js(&self, script: &str, args: Value) -> Value {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
        .await
    }

    /// Polls `script` (a function body) until it returns something
    /// truthy, for up to `secs`.
    async fn wait(&self, what: &str, secs: u64, script: &str, args: Value) -> Value {
        let until = Instant::now() + Duration::from_secs(secs);
        loop {
            let v = self.js(script, args.clone()).await;
            if !(v.is_null() || v == false || v == "" || v == 0) {
                return v;
            }
            assert!(Instant::now() < until, "the page never showed {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn find(&self, css: &str) -> String {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_string()
    }

    async fn click(&self, css: &str) {
        let id = self.find(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            Some(json!({})),
        )
        .await;
    }

    async fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/clear"),
            Some(json!({})),
        )
        .await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            Some(json!({ "text": text })),
        )
        .await;
    }

    async fn screenshot(&self) -> Vec<u8> {
        use base64::Engine;
        let v = self.cmd(reqwest::Method::GET, "/screenshot", None).await;
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().expect("base64"))
            .expect("a PNG")
    }

    async fn quit(mut self) {
        let url = format!("{}/session/{}", self.base, self.session);
        let _ = self.http.delete(url).send().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

const TEXT_OF: &str =
    "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_in_a_browser() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let mut latency = Latency::instant();
    latency.set_task_ms("qmcreate", 300);
    latency.set_task_ms("qmstart", 2_500);
    latency.set_task_ms("qmshutdown", 400);
    let pve = start_with(builder().clock(Clock::system()).latency(latency)).await;
    let root = pve.root().await;

    // Log in through the form.
    browser.goto(&format!("{}/", pve.run.url())).await;
    browser
        .wait(
            "the login form",
            20,
            "return !document.getElementById('login').hidden;",
            json!([]),
        )
        .await;
    browser.type_into("#username", "root").await;
    browser.type_into("#password", "password").await;
    browser.click("#login-form button[type=submit]").await;
    browser
        .wait(
            "the live dashboard",
            20,
            "return !document.getElementById('dashboard').hidden \
             && document.getElementById('live').textContent === 'Live' \
             && document.querySelector('#nodes th') !== null;",
            json!([]),
        )
        .await;
    let node = browser.js(TEXT_OF, json!(["#nodes th"])).await;
    assert_eq!(node, "pve");
    // The ticket is where PVE's UI keeps it.
    let cookie = browser.js("return document.cookie;", json!([])).await;
    assert!(
        cookie
            .as_str()
            .is_some_and(|c| c.contains("PVEAuthCookie=PVE%3Aroot%40pam%3A")),
        "{cookie}"
    );
    browser
        .js("window.notReloaded = 'yes'; return true;", json!([]))
        .await;

    // A VM created through the API appears without a reload.
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=4242&name=dash-test&memory=2048&tags=demo%3Bweb&net0=virtio%2Cbridge%3Dvmbr0&agent=1",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    browser
        .wait(
            "the new VM",
            15,
            "const r = document.querySelector('#guests tr[data-vmid=\"4242\"]'); \
             return r && r.textContent.includes('dash-test');",
            json!([]),
        )
        .await;

    // Its guest agent answers as soon as it runs.
    let r = pve
        .send(
            reqwest::Method::PUT,
            "/_fake/guests/4242",
            &root,
            Some(("application/json", r#"{"boot_delay_ms": 0}"#.into())),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);

    // Its start task runs, then ends, as the page shows it.
    let upid = pve
        .post("/nodes/pve/qemu/4242/status/start", &root, "")
        .await
        .data();
    let upid = upid.as_str().expect("UPID").to_string();
    let row = format!("#tasks tr[data-upid=\"{upid}\"]");
    browser
        .wait(
            "the running start task",
            10,
            "const r = document.querySelector(arguments[0]); return r && r.dataset.status === 'RUNNING';",
            json!([row]),
        )
        .await;
    let shown = browser.js(TEXT_OF, json!([format!("{row} .status")])).await;
    assert!(
        shown.as_str().is_some_and(|s| s.starts_with("running")),
        "{shown}"
    );
    browser.click(&format!("{row} button")).await;
    browser
        .wait(
            "the start task's end",
            20,
            "const r = document.querySelector(arguments[0]); return r && r.dataset.status === 'OK';",
            json!([row]),
        )
        .await;
    browser
        .wait(
            "the end of the task's log",
            10,
            "return document.getElementById('log').textContent.includes('TASK OK');",
            json!([]),
        )
        .await;
    browser
        .wait(
            "the VM running, with its agent's address",
            10,
            "const r = document.querySelector('#guests tr[data-vmid=\"4242\"]'); \
             return r && r.textContent.includes('running') \
               && r.querySelector('.ips').textContent.includes('10.0.0.');",
            json!([]),
        )
        .await;

    // A fault rule added through the page is listed.
    browser.click("#fault-add summary").await;
    browser.type_into("#fault-path", "/nodes/pve/status").await;
    browser.type_into("#fault-status", "503").await;
    browser
        .type_into("#fault-message", "injected by the dashboard")
        .await;
    browser.type_into("#fault-count", "5").await;
    browser.click("#fault-form button[type=submit]").await;
    browser
        .wait(
            "the new fault rule",
            15,
            "const r = document.querySelector('#faults tr[data-fault]'); \
             return r && r.textContent.includes('/nodes/pve/status') \
               && r.textContent.includes('503 injected by the dashboard');",
            json!([]),
        )
        .await;
    let rules = pve
        .send(reqwest::Method::GET, "/_fake/faults", &root, None)
        .await
        .json();
    assert_eq!(rules["data"][0]["path"], "/nodes/pve/status", "{rules}");
    assert_eq!(rules["data"][0]["status"], 503);
    // It fires: its hits and the request log show it.
    let r = pve.get("/nodes/pve/status", &root).await;
    assert_eq!(r.status, 503);
    browser
        .wait(
            "the rule's hit",
            15,
            "const r = document.querySelector('#faults tr[data-fault] td:nth-child(4)'); \
             return r && r.textContent === '1';",
            json!([]),
        )
        .await;
    browser
        .wait(
            "the refused request in the request log",
            15,
            "return [...document.querySelectorAll('#requests tr.failed')] \
               .some(r => r.textContent.includes('/api2/json/nodes/pve/status') && r.textContent.includes('503'));",
            json!([]),
        )
        .await;

    // A failed task shows in red.
    let r = pve
        .send(
            reqwest::Method::POST,
            "/_fake/faults",
            &root,
            Some((
                "application/json",
                r#"{"task_type": "qmshutdown", "task_error": "VM quit/powerdown failed - got timeout", "count": 1}"#.into(),
            )),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let failing = pve
        .post("/nodes/pve/qemu/4242/status/shutdown", &root, "")
        .await
        .data();
    let failing = format!(
        "#tasks tr[data-upid=\"{}\"]",
        failing.as_str().expect("UPID")
    );
    let colour = browser
        .wait(
            "the failed task in red",
            15,
            "const r = document.querySelector(arguments[0] + '.failed .task-failed'); \
             return r && getComputedStyle(r).color;",
            json!([failing]),
        )
        .await;
    assert_eq!(colour, "rgb(179, 38, 30)");

    // The node's shell, opened from the page: a terminal through
    // termproxy and its websocket, typed into.
    browser.click("#nodes button.open-console").await;
    browser
        .wait(
            "the shell's prompt",
            15,
            "return document.getElementById('console-state').textContent === 'Connected' \
               && document.getElementById('console-screen').textContent.includes('root@pve:~# ');",
            json!([]),
        )
        .await;
    let screen = browser.find("#console-screen").await;
    browser
        .cmd(
            reqwest::Method::POST,
            &format!("/element/{screen}/value"),
            Some(json!({ "text": "qm list\u{E007}" })),
        )
        .await;
    browser
        .wait(
            "qm list's table in the terminal",
            15,
            "const t = document.getElementById('console-screen').textContent; \
             return t.includes('VMID NAME') && /4242 dash-test +running/.test(t);",
            json!([]),
        )
        .await;

    // Some more world for the picture: a checkpoint, a pending change.
    pve.send(
        reqwest::Method::POST,
        "/_fake/checkpoints",
        &root,
        Some(("application/x-www-form-urlencoded", "name=seeded".into())),
    )
    .await;
    pve.post("/nodes/pve/qemu", &root, "vmid=4243&name=db&tags=db")
        .await
        .data();
    pve.put("/nodes/pve/qemu/4242/config", &root, "cores=4")
        .await
        .data();
    browser
        .wait(
            "the last changes",
            15,
            "const r = document.querySelector('#guests tr[data-vmid=\"4243\"]'); \
             return r && document.querySelector('#checkpoints th') !== null;",
            json!([]),
        )
        .await;
    // All of it without a reload.
    assert_eq!(
        browser.js("return window.notReloaded;", json!([])).await,
        "yes"
    );
    // The picture for the README: the rule form closed, a taller window.
    browser.click("#fault-add summary").await;
    browser
        .cmd(
            reqwest::Method::POST,
            "/window/rect",
            Some(json!({"width": 1440, "height": 1300})),
        )
        .await;
    browser
        .js(
            "window.scrollTo(0, 0); document.activeElement.blur(); return true;",
            json!([]),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let png = browser.screenshot().await;
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
    std::fs::write(&out, &png).expect("screenshot written");
    if std::env::var("FAKE_PVE_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let docs =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/book/src/dashboard.png");
        std::fs::write(&docs, &png).expect("docs/book/src/dashboard.png written");
    }

    // The other controls, through the page.
    browser.type_into("#advance", "120").await;
    browser.click("#advance-form button[type=submit]").await;
    browser
        .wait(
            "the clock moved forward",
            15,
            "return document.getElementById('clock-advanced').textContent === '2m 0s';",
            json!([]),
        )
        .await;
    browser.type_into("#time-scale", "2").await;
    browser.click("#scale-form button[type=submit]").await;
    browser
        .wait(
            "the clock at twice the speed",
            15,
            "return document.getElementById('clock-kind').textContent === 'running at ×2';",
            json!([]),
        )
        .await;
    let latency = pve
        .send(reqwest::Method::GET, "/_fake/latency", &root, None)
        .await
        .json();
    assert_eq!(latency["data"]["time_scale"], 2.0, "{latency}");
    // The time scale changed, the profile's task durations stayed.
    assert_eq!(latency["data"]["tasks"]["qmstart"], 2_500, "{latency}");
    browser
        .js(
            "const s = document.getElementById('latency-profile'); s.value = 'documented'; return true;",
            json!([]),
        )
        .await;
    browser.click("#latency-form button[type=submit]").await;
    browser
        .wait(
            "the documented profile",
            15,
            "return document.getElementById('latency-name').textContent.startsWith('documented (time scale 2)');",
            json!([]),
        )
        .await;

    browser
        .js(
            "const s = document.getElementById('agent-vmid'); s.value = '4242'; return true;",
            json!([]),
        )
        .await;
    browser.click("#agent-load button[type=submit]").await;
    browser
        .wait(
            "the guest agent's state",
            15,
            "return document.getElementById('agent-json').value.includes('boot_delay_ms');",
            json!([]),
        )
        .await;
    browser
        .js(
            "const t = document.getElementById('agent-json'); \
             const g = JSON.parse(t.value); g.hostname = 'web-from-the-page'; \
             t.value = JSON.stringify(g); return true;",
            json!([]),
        )
        .await;
    browser.click("#agent-form button[type=submit]").await;
    browser
        .wait(
            "the guest agent's state saved",
            15,
            "return document.getElementById('control-status').textContent === 'Guest agent of 4242: done';",
            json!([]),
        )
        .await;
    let agent = pve
        .send(reqwest::Method::GET, "/_fake/guests/4242", &root, None)
        .await
        .json();
    assert_eq!(agent["data"]["hostname"], "web-from-the-page", "{agent}");

    browser.type_into("#checkpoint-name", "before-reset").await;
    browser.click("#checkpoint-form button[type=submit]").await;
    browser
        .wait(
            "the new checkpoint",
            15,
            "return [...document.querySelectorAll('#checkpoints th')].some(t => t.textContent === 'before-reset');",
            json!([]),
        )
        .await;
    browser.click("#reset").await;
    browser
        .cmd(reqwest::Method::POST, "/alert/accept", Some(json!({})))
        .await;
    browser
        .wait(
            "the world reset",
            15,
            "return document.querySelector('#guests tr[data-vmid]') === null \
               && document.querySelector('#faults tr[data-fault]') === null;",
            json!([]),
        )
        .await;
    browser
        .click("#checkpoints button[aria-label='Restore checkpoint before-reset']")
        .await;
    browser
        .wait(
            "the checkpoint restored",
            15,
            "return document.querySelector('#guests tr[data-vmid=\"4242\"]') !== null;",
            json!([]),
        )
        .await;
    // A rule removed through the page.
    browser
        .click("#faults button[aria-label='Remove rule 1']")
        .await;
    browser
        .wait(
            "the rule removed",
            15,
            "return document.querySelector('#faults tr[data-fault=\"1\"]') === null \
               && document.querySelector('#faults tr[data-fault=\"2\"]') !== null;",
            json!([]),
        )
        .await;
    assert_eq!(
        browser.js("return window.notReloaded;", json!([])).await,
        "yes"
    );
    browser.quit().await;
}
