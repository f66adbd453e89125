//! The load: every connection sending the read, or a VM's life, one
//! request after the other.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use tokio_rustls::TlsConnector;

use super::Options;
use super::answers::{request, send};
use super::servers::Server;
use crate::throughput::Measured;

/// What the connections send.
#[derive(Debug, Clone, Copy)]
pub(super) enum Mix {
    /// The read, over and over.
    Read,
    /// A VM's life: create, config, start, stop, destroy.
    Write,
}

/// `connections` clients sending requests for `time`; counts answers.
pub(super) async fn load(
    connector: &TlsConnector,
    t: &Server,
    opts: &Options,
    time: Duration,
    mix: Mix,
) -> Measured {
    let mut senders = Vec::with_capacity(opts.connections);
    let mut failed = 0;
    for _ in 0..opts.connections {
        match crate::throughput::connect(connector, t.addr).await {
            Ok(s) => senders.push(s),
            Err(_) => failed += 1,
        }
    }
    let started = Instant::now();
    let deadline = started + time;
    let mut tasks = tokio::task::JoinSet::new();
    // Each connection's VMIDs, apart from the others' and from the rounds
    // before (a VM left by a failed step does not stop the next one).
    static ROUND: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let round = ROUND.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    for (i, mut send_to) in senders.into_iter().enumerate() {
        let (addr, path, cookie, csrf, node) = (
            t.addr,
            t.path.clone(),
            t.cookie.clone(),
            t.csrf.clone(),
            t.node.clone(),
        );
        let max = opts.max_requests;
        let conn = u32::try_from(i).unwrap_or(0);
        tasks.spawn(async move {
            let (mut ok, mut failed) = (0u64, 0u64);
            let mut n = 0u32;
            while ok + failed < max && Instant::now() < deadline {
                let steps: Vec<http::Request<Full<Bytes>>> = match mix {
                    Mix::Read => vec![request(addr, http::Method::GET, &path, &cookie, "", None)],
                    Mix::Write => {
                        let vmid = 200_000 + (round % 8) * 100_000 + conn * 1_000 + n % 1_000;
                        n += 1;
                        let vm = format!("/api2/json/nodes/{node}/qemu/{vmid}");
                        let post = |p: String, f: Option<String>| {
                            request(addr, http::Method::POST, &p, &cookie, &csrf, f)
                        };
                        vec![
                            post(
                                format!("/api2/json/nodes/{node}/qemu"),
                                Some(format!("vmid={vmid}&name=load{vmid}&memory=512&cores=1")),
                            ),
                            request(
                                addr,
                                http::Method::PUT,
                                &format!("{vm}/config"),
                                &cookie,
                                &csrf,
                                Some("description=under%20load&cores=2".into()),
                            ),
                            post(format!("{vm}/status/start"), None),
                            post(format!("{vm}/status/stop"), None),
                            request(addr, http::Method::DELETE, &vm, &cookie, &csrf, None),
                        ]
                    }
                };
                for req in steps {
                    match send(&mut send_to, req).await {
                        Ok((status, _, _)) if status == http::StatusCode::OK => ok += 1,
                        _ => {
                            failed += 1;
                            if send_to.is_closed() {
                                return (ok, failed);
                            }
                        }
                    }
                }
            }
            (ok, failed)
        });
    }
    Measured::gather(tasks, failed, started).await
}
