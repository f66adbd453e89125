//! Secrets (passwords, token secrets, tickets) stay out of Debug output
//! and logs. Alone in its test binary: the log capture is per thread, and
//! other tests running beside it would race for tracing's callsites.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::{Mode, base, client, start};
use pve_client::Client;

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("buffer").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn secrets_stay_out_of_debug_output_and_logs() {
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let run = start().await;
    let pw = client(&run, Mode::Password);
    let tok = client(&run, Mode::Token);
    pw.version().await.expect("login");
    tok.version().await.expect("token");
    run.clock().advance(7201);
    pw.version().await.expect("login again");
    let _ = pw.access().create_ticket("root@pam", "password").await;
    let bad = Client::new(
        base(&run)
            .password("root@pam", "not-the-password")
            .build()
            .expect("cfg"),
    )
    .expect("client");
    let _ = bad.version().await;
    let ticket = pw
        .access()
        .create_ticket("root@pam", "password")
        .await
        .expect("login")
        .ticket
        .expect("ticket");

    let logs = String::from_utf8(buf.0.lock().expect("buffer").clone()).expect("utf-8");
    assert!(logs.contains("logged in"), "the log was captured: {logs}");
    let debug = format!("{pw:?} {tok:?} {bad:?} {:?}", pw.config());
    for secret in [
        "password=",
        "not-the-password",
        common::ROOT_TOKEN_SECRET,
        "PVE:root@pam:",
        ticket.expose(),
    ] {
        assert!(!logs.contains(secret), "{secret} in the logs: {logs}");
        assert!(!debug.contains(secret), "{secret} in Debug output: {debug}");
    }
    assert!(debug.contains("Secret(***)"), "{debug}");
}
