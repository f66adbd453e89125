//! `mtunnelwebsocket` on the target, once upgraded: pveproxy's websocket
//! to the unix socket the call named. The control socket carries the
//! tunnel's commands, a JSON object a line, each answered by the model
//! with a line; a data socket carries a stream (a disk import's, a VM's
//! migration or NBD stream) that ends when the client closes.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::model::mtunnel::Connection;
use crate::state::State;
use crate::ws;

/// The tunnel ticket's path for a socket: `/socket/<socket>` as
/// `normalize_path` makes it (one slash between parts, none at the end).
pub(crate) fn ticket_path(socket: &str) -> String {
    let raw = format!("/socket/{socket}");
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        if c == '/' && out.ends_with('/') {
            continue;
        }
        out.push(c);
    }
    while out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

/// A tunnel ticket (`assemble_tunnel_ticket`): `PVETUNNEL:<time>::<sig>`
/// for `user` and the socket's path.
pub(crate) fn tunnel_ticket(state: &State, user: &str, socket: &str, now: i64) -> String {
    state
        .keys()
        .short_ticket("PVETUNNEL", &format!("{user}:{}", ticket_path(socket)), now)
}

/// Whether `ticket` is `user`'s tunnel ticket for `socket` at `now`
/// (`verify_tunnel_ticket`).
pub(crate) fn tunnel_ticket_holds(
    state: &State,
    ticket: &str,
    user: &str,
    socket: &str,
    now: i64,
) -> bool {
    state.keys().verify_short_ticket(
        "PVETUNNEL",
        ticket,
        &format!("{user}:{}", ticket_path(socket)),
        now,
    )
}

/// Takes the connection to `socket`, if something listens there.
pub(crate) fn connect(state: &State, socket: &str) -> Option<Connection> {
    let now_ms = state.clock().now_millis();
    let c = state.at(now_ms, |c| c.mtunnel_connect(socket, now_ms));
    state.changed();
    c
}

/// Serves an upgraded connection to `socket` until either side ends it.
pub(crate) async fn serve<I>(mut io: I, state: State, socket: String, conn: Connection)
where
    I: AsyncRead + AsyncWrite + Unpin,
{
    let mut reader = ws::Reader::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    'conn: loop {
        loop {
            match reader.next_frame() {
                Ok(Some(ws::Frame::Data(d))) => match conn {
                    Connection::Control => {
                        pending.extend_from_slice(&d);
                        while let Some(i) = pending.iter().position(|b| *b == b'\n') {
                            let line: Vec<u8> = pending.drain(..=i).collect();
                            let line = String::from_utf8_lossy(&line[..i]).into_owned();
                            let reply = command(&state, &socket, &line);
                            if io.write_all(&ws::binary(reply.as_bytes())).await.is_err() {
                                break 'conn;
                            }
                        }
                    }
                    Connection::Data => {
                        // A stream's first bytes are all the import
                        // reads (its header); the rest is dropped.
                        if data.len() < 64 {
                            data.extend(d.iter().take(64 - data.len()));
                        }
                    }
                },
                Ok(Some(ws::Frame::Ping(p))) => {
                    if io.write_all(&ws::pong(&p)).await.is_err() {
                        break 'conn;
                    }
                }
                Ok(Some(ws::Frame::Pong)) => {}
                Ok(Some(ws::Frame::Close)) => break 'conn,
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!("tunnel websocket closed: {e}");
                    break 'conn;
                }
            }
        }
        match io.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => reader.push(&buf[..n]),
        }
    }
    let now_ms = state.clock().now_millis();
    if conn == Connection::Data {
        state.at(now_ms, |c| c.mtunnel_data(&socket, &data, now_ms));
        // pveproxy closes its side once the socket's end did.
        let _ = io.write_all(&[0x88, 0x02, 0x03, 0xe8]).await;
    }
    super::durable(&state, |c, now_ms| c.mtunnel_closed(&socket, now_ms));
    let _ = io.shutdown().await;
}

/// One command line answered, as the worker answers it.
fn command(state: &State, socket: &str, line: &str) -> String {
    let now_ms = state.clock().now_millis();
    let sign = |user: &str, path: &str| tunnel_ticket(state, user, path, now_ms.div_euclid(1000));
    let reply = super::durable(state, |c, now_ms| {
        c.mtunnel_command(socket, line, now_ms, &sign)
    });
    format!("{}\n", reply.json)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::ticket_path;

    #[rstest]
    #[case("/run/qemu-server/100.mtunnel", "/socket/run/qemu-server/100.mtunnel")]
    #[case("/run/pve/ct-200.storage/", "/socket/run/pve/ct-200.storage")]
    #[case("x", "/socket/x")]
    fn ticket_paths_are_normalized(#[case] socket: &str, #[case] want: &str) {
        assert_eq!(ticket_path(socket), want);
    }
}
