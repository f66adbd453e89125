//! Consoles: the answers of the VNC, terminal and SPICE proxy calls, and
//! the node shell and ticket calls (`/nodes/{node}/vncshell`,
//! `termproxy`, `vncwebsocket`, `spiceshell`, `/access/vncticket`). The
//! guests' own proxy calls are [`crate::api::qemu::Qemu::vncproxy`] and
//! [`crate::api::lxc::Lxc::vncproxy`] and their neighbours.

use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::error::Result;
use crate::transport::Params;

/// What a VNC or terminal proxy call answers: the port it listens on for
/// one connection, the ticket that opens it (40 seconds), its task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProxyTicket {
    /// Whom the ticket is for.
    pub user: String,
    /// The `PVEVNC:` ticket (with the VNC password in front where one
    /// was drawn).
    pub ticket: String,
    /// The port, 5900-5999.
    pub port: u16,
    /// The proxy's task.
    pub upid: Upid,
    /// The cluster CA (VNC proxies only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<String>,
    /// The VNC password (for a websocket, or when asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

/// The port a websocket call's ticket was checked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebsocketPort {
    /// The port, as the query gave it.
    pub port: String,
}

/// A remote-viewer (`.vv`) file's settings, as the SPICE calls answer
/// them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct RemoteViewer {
    /// `spice`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The window title (`VM 100 - web`, `CT 200`, `Shell on 'pve'`).
    pub title: String,
    /// The proxy ticket, given as the host to connect to.
    pub host: String,
    /// The SPICE proxy, `http://<host>:3128`.
    pub proxy: String,
    /// The TLS port behind the proxy.
    pub tls_port: u16,
    /// The node certificate's subject.
    pub host_subject: String,
    /// The cluster CA, on one line with `\n` for its line ends.
    pub ca: String,
    /// The one-time password.
    pub password: String,
    /// `1`.
    pub delete_this_file: u8,
    /// The key combination for Ctrl+Alt+Del.
    pub secure_attention: String,
    /// The key combination for full screen.
    pub toggle_fullscreen: String,
    /// The key combination that releases the pointer.
    pub release_cursor: String,
}

/// Options of a VNC proxy call.
#[derive(Debug, Clone, Copy, Default)]
pub struct VncOptions {
    /// Prepare for a websocket upgrade (a VNC password is drawn).
    pub websocket: bool,
    /// Ask for a VNC password even without a websocket (VMs; deprecated).
    pub generate_password: bool,
}

impl VncOptions {
    pub(crate) fn params(self) -> Params {
        Params::new()
            .opt("websocket", self.websocket.then_some(true))
            .opt("generate-password", self.generate_password.then_some(true))
    }
}

/// What a node shell runs.
#[derive(Debug, Clone, Default)]
pub struct ShellOptions {
    /// `login` (the default), `upgrade` or `ceph_install` (root@pam only
    /// for the last two).
    pub cmd: Option<String>,
    /// Arguments of `ceph_install`.
    pub cmd_opts: Option<String>,
}

impl ShellOptions {
    fn params(&self) -> Params {
        Params::new()
            .opt("cmd", self.cmd.as_deref())
            .opt("cmd-opts", self.cmd_opts.as_deref())
    }
}

/// The node shells and the ticket check; see [`Client::console`].
#[derive(Debug, Clone, Copy)]
pub struct Console<'a> {
    client: &'a Client,
}

impl Client {
    /// The node shell and console ticket calls.
    pub fn console(&self) -> Console<'_> {
        Console { client: self }
    }
}

fn node_path(node: &str, tail: &str) -> String {
    format!("/nodes/{}{tail}", seg(node))
}

impl Console<'_> {
    /// `POST /nodes/{node}/vncshell`: the node's shell through
    /// `vncterm`.
    ///
    /// # Errors
    /// A missing `Sys.Console` on the node; `cmd` other than `login` for
    /// anyone but root@pam.
    pub async fn vncshell(
        &self,
        node: &str,
        shell: &ShellOptions,
        vnc: VncOptions,
    ) -> Result<ProxyTicket> {
        let params = shell
            .params()
            .opt("websocket", vnc.websocket.then_some(true));
        self.client
            .call(Method::POST, &node_path(node, "/vncshell"), &params)
            .await
    }

    /// `POST /nodes/{node}/termproxy`: the node's shell through
    /// `termproxy` (for xterm.js).
    ///
    /// # Errors
    /// As [`Console::vncshell`].
    pub async fn termproxy(&self, node: &str, shell: &ShellOptions) -> Result<ProxyTicket> {
        self.client
            .call(
                Method::POST,
                &node_path(node, "/termproxy"),
                &shell.params(),
            )
            .await
    }

    /// `GET /nodes/{node}/vncwebsocket` (without an upgrade): checks a
    /// node shell's ticket for its port.
    ///
    /// # Errors
    /// 401 `permission denied - invalid PVEVNC ticket`.
    pub async fn vncwebsocket(&self, node: &str, port: u16, ticket: &str) -> Result<WebsocketPort> {
        let params = Params::new().set("port", port).set("vncticket", ticket);
        self.client
            .call(Method::GET, &node_path(node, "/vncwebsocket"), &params)
            .await
    }

    /// `POST /nodes/{node}/spiceshell`: the node's shell through
    /// `spiceterm`, as remote-viewer settings.
    ///
    /// # Errors
    /// As [`Console::vncshell`].
    pub async fn spiceshell(
        &self,
        node: &str,
        proxy: Option<&str>,
        shell: &ShellOptions,
    ) -> Result<RemoteViewer> {
        let params = shell.params().opt("proxy", proxy);
        self.client
            .call(Method::POST, &node_path(node, "/spiceshell"), &params)
            .await
    }

    /// `POST /access/vncticket`: whether `vncticket` is valid for
    /// `authid`, `path` and `port`, and `authid` holds `privs` on `path`
    /// (what a proxy asks before it lets a client in).
    ///
    /// # Errors
    /// 401 `authentication failure` for any failure.
    pub async fn verify_vnc_ticket(
        &self,
        authid: &str,
        vncticket: &str,
        path: &str,
        privs: &str,
        port: Option<u16>,
    ) -> Result<()> {
        let params = Params::new()
            .set("authid", authid)
            .set("vncticket", vncticket)
            .set("path", path)
            .set("privs", privs)
            .opt("port", port);
        let _: serde_json::Value = self
            .client
            .call(Method::POST, "/access/vncticket", &params)
            .await?;
        Ok(())
    }
}
