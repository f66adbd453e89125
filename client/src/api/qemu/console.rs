//! A VM's console proxies (`vncproxy`, `termproxy`, `vncwebsocket`,
//! `spiceproxy`).

use reqwest::Method;

use super::{Qemu, vm_path};
use crate::api::console::{ProxyTicket, RemoteViewer, VncOptions, WebsocketPort};
use crate::error::Result;
use crate::transport::Params;

impl Qemu<'_> {
    /// `POST .../vncproxy`: the VM's display (or its serial display)
    /// behind a VNC proxy.
    ///
    /// # Errors
    /// A missing `VM.Console` on the VM; a VM whose config is elsewhere.
    pub async fn vncproxy(&self, node: &str, vmid: u32, opts: VncOptions) -> Result<ProxyTicket> {
        self.client
            .call(
                Method::POST,
                &vm_path(node, vmid, "/vncproxy"),
                &opts.params(),
            )
            .await
    }

    /// `POST .../termproxy`: `qm terminal` (the serial port `serial`, or
    /// the serial display) behind `termproxy`.
    ///
    /// # Errors
    /// As [`Qemu::vncproxy`].
    pub async fn termproxy(
        &self,
        node: &str,
        vmid: u32,
        serial: Option<&str>,
    ) -> Result<ProxyTicket> {
        let params = Params::new().opt("serial", serial);
        self.client
            .call(Method::POST, &vm_path(node, vmid, "/termproxy"), &params)
            .await
    }

    /// `GET .../vncwebsocket` (without an upgrade): checks the ticket for
    /// the VM and port.
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
            .call(Method::GET, &vm_path(node, vmid, "/vncwebsocket"), &params)
            .await
    }

    /// `POST .../spiceproxy`: remote-viewer settings for the running VM's
    /// SPICE display (`vga: qxl`).
    ///
    /// # Errors
    /// `VM <vmid> not running`, `no spice port`.
    pub async fn spiceproxy(
        &self,
        node: &str,
        vmid: u32,
        proxy: Option<&str>,
    ) -> Result<RemoteViewer> {
        let params = Params::new().opt("proxy", proxy);
        self.client
            .call(Method::POST, &vm_path(node, vmid, "/spiceproxy"), &params)
            .await
    }
}
