//! The worker of `POST /cluster/config/join` (pve-cluster
//! `PVE::Cluster::Setup::join` and `finish_join`, in a `clusterjoin`
//! task): the joining node talks to a member of the cluster over HTTPS
//! as `PVE::APIClient::LWP` does, the member's certificate trusted by
//! the fingerprint given and nothing else, a ticket login as root@pam,
//! `GET /cluster/config/apiversion` and `POST
//! /cluster/config/nodes/{node}` (the cluster's `addnode`); then it
//! finishes locally from the answer. What pmxcfs would bring over once
//! the node is in the cluster is read from the member's API (see
//! [`crate::model::join::SharedConfig`]), and a fake-pve cluster is told
//! that the node is up (`POST /_fake/nodes/{node}/joined`, as corosync
//! would see it join).
//!
//! The request answered with the task's UPID long before: the task is
//! held open and its log grows as the worker goes (the model locked only
//! for each line). Its end (the whole log and the error, or the
//! membership) is journaled when a data directory is kept, so that a
//! restart finds the join as it ended; a replay never talks to the
//! cluster again.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::model::join::{self, Answers, Finished, JoinJob, JoinedFacts, Membership, SharedConfig};
use crate::model::tasks::{Upid, Worker};
use crate::remote::client::Verifier;
use crate::state::State;

/// How long one request to the cluster may take (LWP's `timeout`).
const TIMEOUT: Duration = Duration::from_secs(60);

/// How long a join waits for another one to end (`lock_file`'s 10
/// seconds on `/var/lock/pvecm.lock`).
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The port of PVE's API, unless the `hostname` names another.
const PORT: u16 = 8006;

/// Carries out the joins queued (each in its own task, one at a time as
/// PVE's lock has them) until `stop` turns.
pub async fn run(state: State, mut stop: watch::Receiver<bool>) {
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    loop {
        for job in state.take_joins() {
            tokio::spawn(carry_out(state.clone(), lock.clone(), job));
        }
        tokio::select! {
            _ = stop.changed() => break,
            () = state.joins_ready() => {}
        }
    }
}

/// Runs a journaled join's end again (when a data directory is loaded).
pub fn replay(state: &State, rec: &crate::persist::Record) {
    let Some(call) = rec.worker_call().filter(|c| c.name == join::TASK) else {
        return;
    };
    let Ok(f) = serde_json::from_value::<Finished>(call.doc) else {
        tracing::warn!(seq = rec.seq, "a journaled join's end does not parse");
        return;
    };
    let mut rq = rec.context(state);
    state.at(rq.now_ms(), |c| c.finish_join(&f, &mut rq));
}

/// The log of a join's task as the worker goes: each line is in the
/// task's log at once, and kept for its end.
struct Log<'a> {
    state: &'a State,
    upid: String,
    lines: Vec<String>,
}

impl Log<'_> {
    fn line(&mut self, line: impl Into<String>) {
        self.lines(vec![line.into()]);
    }

    fn lines(&mut self, lines: Vec<String>) {
        if lines.is_empty() {
            return;
        }
        let mut w = Worker::new(join::TASK, "");
        for l in &lines {
            w = w.log(l.clone());
        }
        let now_ms = self.state.clock().now_millis();
        self.state.at(now_ms, |c| {
            let _ = c.replan_task(&self.upid, i64::MAX, w, now_ms);
        });
        self.state.changed();
        self.lines.extend(lines);
    }

    /// Ends the task: `more` lines (logged with its end), then the error
    /// or the membership. Journaled with a data directory; a journal that
    /// cannot be written ends it with that error instead.
    fn finish(self, more: Vec<String>, error: Option<String>, membership: Option<Membership>) {
        let state = self.state;
        let mut lines = self.lines;
        lines.extend(more);
        let f = Finished {
            upid: self.upid,
            lines,
            error,
            membership: membership.map(Box::new),
        };
        let apply = |f: &Finished, mut rq: crate::model::Context| {
            state.at(rq.now_ms(), |c| c.finish_join(f, &mut rq));
        };
        match state.store() {
            Some(store) => {
                let who = Upid::parse(&f.upid).map(|u| u.user);
                let call = crate::persist::Call::Worker(crate::persist::WorkerCall {
                    name: join::TASK.into(),
                    doc: serde_json::to_value(&f).unwrap_or(Value::Null),
                });
                let done = crate::persist::blocking(|| {
                    store.journaled(state, call, who, false, |rq| apply(&f, rq))
                });
                if let Err(e) = done {
                    let failed = Finished {
                        error: Some(e.message().to_string()),
                        membership: None,
                        ..f
                    };
                    apply(&failed, state.request_context());
                }
            }
            None => apply(&f, state.request_context()),
        }
        state.changed();
    }
}

/// One join, from its lock to its end.
async fn carry_out(state: State, lock: Arc<tokio::sync::Mutex<()>>, job: JoinJob) {
    let mut log = Log {
        state: &state,
        upid: job.upid.clone(),
        lines: Vec::new(),
    };
    let Ok(_held) = tokio::time::timeout(LOCK_WAIT, lock.lock_owned()).await else {
        log.finish(Vec::new(), Some(join::LOCKED.into()), None);
        return;
    };
    match steps(&state, &job, &mut log).await {
        Ok(membership) => {
            let more = join::finish_lines_after_sync(&job.node);
            log.finish(more, None, Some(membership));
        }
        Err(e) => log.finish(Vec::new(), Some(e), None),
    }
}

/// `join` and `finish_join` up to the membership: what the task logs
/// on the way, and the error it ends with.
async fn steps(state: &State, job: &JoinJob, log: &mut Log<'_>) -> Result<Membership, String> {
    let p = &job.params;
    let errors = state.with(|c| join::joinable_errors(c, &p.links));
    let (lines, refused) = join::joinable_report(&errors, p.force.unwrap_or(false));
    log.lines(lines);
    if let Some(e) = refused {
        return Err(e);
    }
    log.line(format!(
        "Establishing API connection with host '{}'",
        p.hostname
    ));
    let mut peer = Peer::new(&p.hostname, &p.fingerprint)?;
    peer.login(&job.password).await.map_err(|r| r.text())?;
    log.line("Login succeeded.");
    log.line("check cluster join API version");
    let apiver = peer
        .call(reqwest::Method::GET, "/cluster/config/apiversion", &[])
        .await
        .ok()
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    join::check_cluster_version(apiver).map_err(|e| e.message().to_string())?;
    let (args, fallback) = join::addnode_args(p, &job.local_ip, apiver);
    if let Some(l) = fallback {
        log.line(l);
    }
    log.line("Request addition of this node");
    let path = format!("/cluster/config/nodes/{}", seg(&job.node));
    let answer = match peer.call(reqwest::Method::POST, &path, &args).await {
        Ok(a) => a,
        Err(r) => {
            let msg = r.msg.trim_end_matches('\n');
            let mut lines = vec![format!("An error occurred on the cluster node: {msg}")];
            for (k, v) in &r.errors {
                let symbol = if k.starts_with("warning") { '*' } else { '!' };
                lines.push(format!("{symbol} {}", v.trim_end()));
            }
            log.lines(lines);
            return Err(join::ABORTED.into());
        }
    };
    let warnings: Vec<String> = answer["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|w| format!("cluster: {w}"))
        .collect();
    log.lines(warnings);
    log.line("Join request OK, finishing setup locally");
    let conf = answer["corosync_conf"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    join::check_conf(&conf, &job.node).map_err(|e| e.message().to_string())?;
    log.lines(join::finish_lines_before_sync(
        state.clock().now_millis().div_euclid(1000),
    ));
    // pmxcfs starts again and syncs with the cluster.
    let (members, shared) = read_shared(&peer).await.map_err(|r| r.text())?;
    tell_joined(state, &peer, &job.node).await;
    Ok(Membership {
        corosync_conf: conf,
        members,
        shared,
    })
}

/// The members and the shared configuration, as the cluster's API
/// answers them to root@pam.
async fn read_shared(peer: &Peer) -> Result<(Vec<join::MemberFacts>, SharedConfig), Raised> {
    let get = |path: &'static str| peer.call(reqwest::Method::GET, path, &[]);
    let status = get("/cluster/status").await?;
    let nodes = get("/nodes").await?;
    let full = [("full".to_string(), "1".to_string())];
    let mut a = Answers {
        storage: get("/storage").await?,
        users: peer
            .call(reqwest::Method::GET, "/access/users", &full)
            .await?,
        groups: get("/access/groups").await?,
        roles: get("/access/roles").await?,
        acl: get("/access/acl").await?,
        pools: Vec::new(),
        options: get("/cluster/options").await?,
    };
    let pools = get("/pools").await?;
    for p in pools.as_array().into_iter().flatten() {
        let Some(id) = p["poolid"].as_str() else {
            continue;
        };
        let path = format!("/pools/{}", seg(id));
        let mut detail = peer.call(reqwest::Method::GET, &path, &[]).await?;
        if !detail.is_object() {
            detail = json!({});
        }
        detail["poolid"] = json!(id);
        a.pools.push(detail);
    }
    Ok((
        join::member_facts(&status, &nodes),
        SharedConfig::from_answers(&a),
    ))
}

/// Tells a fake-pve cluster that `node` is up, with its certificate's
/// fingerprint, CPUs, memory and uptime. A cluster that does not take
/// it (a real PVE) is left as it is.
async fn tell_joined(state: &State, peer: &Peer, node: &str) {
    let now = state.clock().now();
    let facts = state.with(|c| {
        c.nodes().get(node).map(|n| JoinedFacts {
            ssl_fingerprint: Some(n.ssl_fingerprint.clone()),
            cpus: Some(n.cpus),
            memory: Some(n.memory),
            uptime: Some(n.uptime(now)),
        })
    });
    let Some(facts) = facts else {
        return;
    };
    let path = format!("/_fake/nodes/{}/joined", seg(node));
    if let Err(e) = peer.control(&path, &facts).await {
        tracing::warn!(node, error = %e.text(), "the cluster was not told that the node joined");
    }
}

/// A path segment, percent-encoded.
fn seg(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// What `PVE::APIClient::LWP` raises: its message, the HTTP code when
/// there is one, a parameter error's `errors` (sorted by parameter).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Raised {
    code: Option<u16>,
    msg: String,
    errors: Vec<(String, String)>,
}

impl Raised {
    fn new(code: Option<u16>, msg: String) -> Self {
        Self {
            code,
            msg,
            errors: Vec::new(),
        }
    }

    /// As the exception's `stringify` writes it: the code before a
    /// message that does not start with it, then each `param: error`
    /// (the task's error, its newlines turned to spaces).
    fn text(&self) -> String {
        let mut msg = self.msg.trim_end_matches('\n').to_string();
        if let Some(code) = self.code {
            let c = code.to_string();
            let starts = msg
                .trim_start()
                .strip_prefix(&c)
                .is_some_and(|rest| rest.starts_with([' ', ':', ',', '\t']));
            if !starts {
                msg = format!("{code} {msg}");
            }
        }
        for (k, v) in &self.errors {
            msg.push_str(&format!("\n{k}: {}", v.trim_end()));
        }
        msg
    }
}

/// `host`, `host:port` (fake-pve's way to name a port other than 8006),
/// `[v6]:port` or a bare IPv6 address: the URL's host and the port.
fn split_hostname(hostname: &str) -> (String, u16) {
    if let Some(rest) = hostname.strip_prefix('[')
        && let Some((host, tail)) = rest.split_once(']')
    {
        let port = tail
            .strip_prefix(':')
            .and_then(|p| p.parse().ok())
            .unwrap_or(PORT);
        return (format!("[{host}]"), port);
    }
    if let Some((host, port)) = hostname.rsplit_once(':') {
        if host.contains(':') {
            return (format!("[{hostname}]"), PORT);
        }
        if let Ok(port) = port.parse() {
            return (host.to_string(), port);
        }
    }
    (hostname.to_string(), PORT)
}

/// The fingerprint as PVE shows it: upper-case hex pairs and colons.
fn fingerprint_text(fp: &[u8]) -> String {
    fp.iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A fingerprint as given (`AB:CD:...`, the schema's pattern).
fn parse_fingerprint(text: &str) -> Option<[u8; 32]> {
    let hex: String = text.chars().filter(|c| *c != ':').collect();
    let bytes = hex::decode(hex).ok()?;
    bytes.try_into().ok()
}

/// Why a request did not reach the cluster, as LWP says it in its
/// `Can't connect to host:port (...)`.
fn transport_reason(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "Connection timed out".into();
    }
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if s.is::<rustls::Error>() {
            return "SSL connect attempt failed".into();
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.get_ref().is_some_and(|i| i.is::<rustls::Error>()) {
                return "SSL connect attempt failed".into();
            }
            use std::io::ErrorKind as K;
            let known = match io.kind() {
                K::ConnectionRefused => "Connection refused",
                K::ConnectionReset => "Connection reset by peer",
                K::TimedOut => "Connection timed out",
                K::HostUnreachable => "No route to host",
                K::NetworkUnreachable => "Network is unreachable",
                _ => {
                    let text = io.to_string();
                    let text = text
                        .strip_prefix("failed to lookup address information: ")
                        .unwrap_or(&text);
                    let text = text.split(" (os error").next().unwrap_or(text);
                    return text.to_string();
                }
            };
            return known.into();
        }
        src = s.source();
    }
    e.to_string()
}

/// The reason phrase of an answer (PVE's message), or the status's own.
fn reason_phrase(resp: &reqwest::Response) -> String {
    resp.extensions()
        .get::<hyper::ext::ReasonPhrase>()
        .map(|p| String::from_utf8_lossy(p.as_bytes()).into_owned())
        .or_else(|| resp.status().canonical_reason().map(str::to_string))
        .unwrap_or_default()
}

/// A connection to a member of the cluster, as `PVE::APIClient::LWP`
/// makes it for a join: HTTPS to `host:8006` (or the port named), the
/// certificate pinned by its fingerprint, root@pam's ticket once logged
/// in.
struct Peer {
    http: reqwest::Client,
    /// `https://host:port`.
    origin: String,
    /// `host:port`, for messages.
    hostport: String,
    /// The certificate check: the leaf must have the fingerprint given
    /// (`PVE::APIClient::LWP` with cached fingerprints), the one refused
    /// kept for the message.
    verifier: Arc<Verifier>,
    /// The ticket and CSRF token.
    session: Option<(String, String)>,
}

impl Peer {
    fn new(hostname: &str, fingerprint: &str) -> Result<Self, String> {
        let want = parse_fingerprint(fingerprint)
            .ok_or_else(|| format!("invalid fingerprint '{fingerprint}'"))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = Verifier::new(Some(fingerprint_text(&want)), provider.clone())?;
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone())
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .timeout(TIMEOUT)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let (host, port) = split_hostname(hostname);
        Ok(Self {
            http,
            origin: format!("https://{host}:{port}"),
            hostport: format!("{host}:{port}"),
            verifier,
            session: None,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/api2/json{path}", self.origin)
    }

    /// What a request that did not get an answer raises: the certificate
    /// refused (`fingerprint '...' not verified, abort!`, as without
    /// `manual_verification`), or LWP's `500 Can't connect to ...`.
    fn transport(&self, e: &reqwest::Error) -> Raised {
        if let Some(fp) = self.verifier.refused() {
            return Raised::new(None, format!("fingerprint '{fp}' not verified, abort!"));
        }
        Raised::new(
            Some(500),
            format!(
                "Can't connect to {} ({})",
                self.hostport,
                transport_reason(e)
            ),
        )
    }

    /// The ticket login as root@pam (`login`): a refusal raises its
    /// status line; a ticket that asks for a second factor cannot be
    /// answered by a worker (no TTY).
    async fn login(&mut self, password: &str) -> Result<(), Raised> {
        let resp = self
            .http
            .post(self.url("/access/ticket"))
            .form(&[("username", "root@pam"), ("password", password)])
            .send()
            .await
            .map_err(|e| self.transport(&e))?;
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            let line = format!("{status} {}", reason_phrase(&resp));
            return Err(Raised::new(Some(status), line));
        }
        let v: Value = resp.json().await.map_err(|e| self.transport(&e))?;
        let ticket = v["data"]["ticket"].as_str().unwrap_or_default().to_string();
        let csrf = v["data"]["CSRFPreventionToken"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if ticket.contains(":!tfa!") {
            return Err(Raised::new(
                None,
                "TFA-enabled login currently works only with a TTY.".into(),
            ));
        }
        self.session = Some((ticket, csrf));
        Ok(())
    }

    /// A call to the API with the session: its `data`, or what the
    /// client raises (the reason phrase, the code, the `errors`).
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        args: &[(String, String)],
    ) -> Result<Value, Raised> {
        let (ticket, csrf) = self.session.clone().unwrap_or_default();
        let mut rb = self
            .http
            .request(method.clone(), self.url(path))
            .header("Cookie", format!("PVEAuthCookie={ticket}"));
        if method == reqwest::Method::GET {
            rb = rb.query(args);
        } else {
            rb = rb.header("CSRFPreventionToken", csrf).form(args);
        }
        let resp = rb.send().await.map_err(|e| self.transport(&e))?;
        answer(resp).await.map_err(|r| match r {
            Ok(raised) => raised,
            Err(e) => self.transport(&e),
        })
    }

    /// A control call of a fake-pve cluster, with the session.
    async fn control(&self, path: &str, body: &impl serde::Serialize) -> Result<Value, Raised> {
        let (ticket, csrf) = self.session.clone().unwrap_or_default();
        let resp = self
            .http
            .post(format!("{}{path}", self.origin))
            .header("Cookie", format!("PVEAuthCookie={ticket}"))
            .header("CSRFPreventionToken", csrf)
            .json(body)
            .send()
            .await
            .map_err(|e| self.transport(&e))?;
        answer(resp).await.map_err(|r| match r {
            Ok(raised) => raised,
            Err(e) => self.transport(&e),
        })
    }
}

/// An answer's `data`, or what the client raises of a refusal; the
/// inner error when the body could not be read.
async fn answer(resp: reqwest::Response) -> Result<Value, Result<Raised, reqwest::Error>> {
    let status = resp.status();
    if status.is_success() {
        let v: Value = resp.json().await.map_err(Err)?;
        return Ok(v.get("data").cloned().unwrap_or(Value::Null));
    }
    let msg = reason_phrase(&resp);
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let errors = body["errors"]
        .as_object()
        .map(|m| {
            let mut e: Vec<(String, String)> = m
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect();
            e.sort();
            e
        })
        .unwrap_or_default();
    Err(Ok(Raised {
        code: Some(status.as_u16()),
        msg,
        errors,
    }))
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case("192.0.2.10", ("192.0.2.10", 8006))]
    #[case("127.0.0.1:40123", ("127.0.0.1", 40123))]
    #[case("pve1.example.com", ("pve1.example.com", 8006))]
    #[case("2001:db8::1", ("[2001:db8::1]", 8006))]
    #[case("[2001:db8::1]:8007", ("[2001:db8::1]", 8007))]
    #[case("[::1]", ("[::1]", 8006))]
    fn hostnames_name_a_host_and_port(#[case] given: &str, #[case] want: (&str, u16)) {
        assert_eq!(split_hostname(given), (want.0.to_string(), want.1));
    }

    #[rstest]
    #[case(Some(401), "401 authentication failure", &[], "401 authentication failure")]
    #[case(Some(500), "Can't connect to h:8006 (Connection refused)", &[], "500 Can't connect to h:8006 (Connection refused)")]
    #[case(None, "fingerprint 'AB' not verified, abort!\n", &[], "fingerprint 'AB' not verified, abort!")]
    #[case(Some(400), "Parameter verification failed.", &[("link0", "invalid\n")], "400 Parameter verification failed.\nlink0: invalid")]
    fn raised_errors_read_as_the_client_writes_them(
        #[case] code: Option<u16>,
        #[case] msg: &str,
        #[case] errors: &[(&str, &str)],
        #[case] text: &str,
    ) {
        let r = Raised {
            code,
            msg: msg.into(),
            errors: errors
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
        };
        assert_eq!(r.text(), text);
    }

    #[test]
    fn fingerprints_read_and_print_as_pve_shows_them() {
        let fp = [0xabu8; 32];
        let text = fingerprint_text(&fp);
        assert!(text.starts_with("AB:AB:"));
        assert_eq!(parse_fingerprint(&text), Some(fp));
        assert_eq!(parse_fingerprint(&text.to_lowercase()), Some(fp));
        assert_eq!(parse_fingerprint("AB:CD"), None);
    }
}
