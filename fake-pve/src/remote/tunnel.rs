//! The tunnel's control connection as `PVE::Tunnel` speaks it through
//! `proxmox-websocket-tunnel`: a command a line, as JSON, and its reply;
//! and the data connections it opens to the target's other sockets, each
//! with a ticket asked for over the control connection.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::TaskLog;
use super::client::{RemoteApi, WsClient};

/// The control tunnel: one JSON line out, one back.
pub(super) struct Tunnel {
    pub(super) ws: WsClient,
    pub(super) buf: Vec<u8>,
    pub(super) log: TaskLog,
    pub(super) api: Arc<RemoteApi>,
    /// `/nodes/<node>/<kind>/<vmid>/mtunnelwebsocket`.
    pub(super) path: String,
    /// The local sockets forwarded (`forward_unix_socket`).
    pub(super) forwarded: BTreeSet<String>,
    pub(super) version: u64,
}

impl Tunnel {
    /// The next line the target sent; none when it closed.
    async fn read_line(&mut self, timeout: Duration) -> Option<String> {
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Some(String::from_utf8_lossy(&line[..i]).into_owned());
            }
            let data = self.ws.recv(timeout).await?;
            self.buf.extend_from_slice(&data);
        }
    }

    /// Sends a command as JSON, its keys then `cmd`.
    async fn send(&mut self, cmd: &str, params: &Map<String, Value>) -> Result<String, String> {
        let mut object = params.clone();
        object.insert("cmd".into(), Value::String(cmd.to_string()));
        let text = Value::Object(object).to_string();
        self.ws
            .send(format!("{text}\n").as_bytes())
            .await
            .map_err(|e| format!("writing to tunnel failed: {e}\n"))?;
        Ok(text)
    }

    /// `write_tunnel`: a command and its reply; a refusal reads `error -
    /// tunnel command '<json>' failed - <msg>`.
    pub(super) async fn command(
        &mut self,
        cmd: &str,
        params: Map<String, Value>,
    ) -> Result<Value, String> {
        self.log
            .raw([format!("tunnel: -> sending command \"{cmd}\" to remote")]);
        let command = self.send(cmd, &params).await?;
        let reply = self.read_line(Duration::from_secs(600)).await;
        self.log.raw(["tunnel: <- got reply".to_string()]);
        parse_reply(&command, reply)
    }

    /// A connection to a data socket of the target, as the tunnel helper
    /// makes one for each connection to the local socket it forwards: a
    /// ticket through the control tunnel, then a websocket of its own.
    pub(super) async fn connect(&mut self, local: &str, remote: &str) -> Result<WsClient, String> {
        self.log.raw([
            format!("tunnel: accepted new connection on '{local}'"),
            "tunnel: requesting WS ticket via tunnel".to_string(),
        ]);
        let mut params = Map::new();
        params.insert("path".into(), Value::String(remote.to_string()));
        let command = self.send("ticket", &params).await?;
        let reply = self.read_line(Duration::from_secs(60)).await;
        let reply = parse_reply(&command, reply)?;
        let ticket = reply["ticket"].as_str().unwrap_or_default().to_string();
        let url = format!(
            "{}?ticket={}&socket={}",
            self.path,
            super::uri_escape(&ticket),
            super::uri_escape(remote)
        );
        let ws = self.api.websocket(&url).await.map_err(|e| {
            self.log
                .raw([format!("tunnel: failed to connect: {}", e.trim_end())]);
            format!("failed to connect to '{remote}' via websocket: {e}")
        })?;
        self.log.raw([format!(
            "tunnel: established new WS for forwarding '{local}'"
        )]);
        Ok(ws)
    }
}

/// A reply line read back: the command's answer, or why it failed.
pub(super) fn parse_reply(command: &str, reply: Option<String>) -> Result<Value, String> {
    let reply = reply.unwrap_or_default();
    let parsed: Value = serde_json::from_str(&reply).map_err(|_| {
        format!(
            "failed to decode tunnel reply '{reply}' (command '{command}') - malformed JSON string, neither tag, array, object, number, string or atom, at character offset 0 (before \"(end of string)\")\n"
        )
    })?;
    if parsed["success"] != Value::Bool(true) && parsed["success"] != 1 {
        return Err(match parsed["msg"].as_str() {
            Some(msg) => format!("error - tunnel command '{command}' failed - {msg}\n"),
            None => format!("error - tunnel command '{command}' failed\n"),
        });
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::parse_reply;

    #[test]
    fn a_refused_command_reads_as_write_tunnel_dies() {
        let cmd = r#"{"cmd":"config"}"#;
        let e = parse_reply(
            cmd,
            Some(r#"{"success":false,"msg":"failed to handle 'config' command - boom\n"}"#.into()),
        )
        .expect_err("refused");
        assert_eq!(
            e,
            "error - tunnel command '{\"cmd\":\"config\"}' failed - failed to handle 'config' command - boom\n\n"
        );
        let e = parse_reply(cmd, None).expect_err("closed");
        assert!(
            e.starts_with("failed to decode tunnel reply '' (command '"),
            "{e}"
        );
        assert_eq!(
            parse_reply(cmd, Some(r#"{"success":true,"api":2}"#.into())).expect("ok")["api"],
            2
        );
    }
}
