//! A container's console proxies (`vncproxy`, `termproxy`, `vncwebsocket`,
//! `spiceproxy`).

use reqwest::Method;

use super::{Lxc, ct_path};
use crate::api::console::{ProxyTicket, RemoteViewer, VncOptions, WebsocketPort};
use crate::error::Result;
use crate::transport::Params;

impl Lxc<'_> {
    /// `POST .../vncproxy`: the container's console
    /// behind `vncterm`.
    ///
    /// # Errors
    /// A missing `VM.Console` on the VM; a container whose config is elsewhere.
    pub async fn vncproxy(&self, node: &str, vmid: u32, opts: VncOptions) -> Result<ProxyTicket> {
        // Containers have no `generate-password`.
        let params = Params::new().opt("websocket", opts.websocket.then_some(true));
        self.client
            .call(Method::POST, &ct_path(node, vmid, "/vncproxy"), &params)
            .await
    }

    /// `POST .../termproxy`: the container's console behind
    /// `termproxy`.
    ///
    /// # Errors
    /// As [`Lxc::vncproxy`].
    pub async fn termproxy(&self, node: &str, vmid: u32) -> Result<ProxyTicket> {
        self.client
            .call(
                Method::POST,
                &ct_path(node, vmid, "/termproxy"),
                &Params::new(),
            )
            .await
    }

    /// `GET .../vncwebsocket` (without an upgrade): checks the ticket for
    /// the container and port.
    ///
    /// # Errors
    /// 401 `permission denied - invalid PVEVNC ticket`.
    pub async fn vncwebsocket(
        &self,
        node: &str,
        vmid: u32,
        port: u16,
        ticket: &str,
    ) -> Result<WebsocketPort> {
        let params = Params::new().set("port", port).set("vncticket", ticket);
        self.client
            .call(Method::GET, &ct_path(node, vmid, "/vncwebsocket"), &params)
            .await
    }

    /// `POST .../spiceproxy`: remote-viewer settings for the running container's console through `spiceterm`, as
    /// remote-viewer settings.
    ///
    /// # Errors
    /// `CT <vmid> not running`.
    pub async fn spiceproxy(
        &self,
        node: &str,
        vmid: u32,
        proxy: Option<&str>,
    ) -> Result<RemoteViewer> {
        let params = Params::new().opt("proxy", proxy);
        self.client
            .call(Method::POST, &ct_path(node, vmid, "/spiceproxy"), &params)
            .await
    }
}
