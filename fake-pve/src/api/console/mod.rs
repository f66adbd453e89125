//! Consoles: the proxy calls of VMs, containers and nodes' shells
//! (qemu-server `API2/Qemu.pm`, pve-container `API2/LXC.pm`, pve-manager
//! `API2/Nodes.pm` and `API2Tools::run_spiceterm`), the websocket
//! calls' ticket checks, and `POST /access/vncticket` (pve-access-control
//! `API2/AccessControl.pm`), with which a proxy checks the ticket it is
//! shown.
//!
//! A VNC or terminal proxy is a worker task listening on a port of
//! 5900-5999 for one connection; its ticket (`PVEVNC:...`) is good for
//! that user, ACL path and port for 40 seconds. The SPICE calls answer
//! the settings of a remote-viewer (`.vv`) file, also in the
//! `spiceconfig` format.

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, get, post};
use crate::model::console::{self, Behind, Program, Session};
use crate::model::{Error, Result};

pub mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        post("/nodes/{node}/qemu/{vmid}/vncproxy", qemu_vncproxy),
        post("/nodes/{node}/qemu/{vmid}/termproxy", qemu_termproxy),
        get("/nodes/{node}/qemu/{vmid}/vncwebsocket", guest_vncwebsocket),
        post("/nodes/{node}/qemu/{vmid}/spiceproxy", qemu_spiceproxy),
        post("/nodes/{node}/lxc/{vmid}/vncproxy", lxc_vncproxy),
        post("/nodes/{node}/lxc/{vmid}/termproxy", lxc_termproxy),
        get("/nodes/{node}/lxc/{vmid}/vncwebsocket", guest_vncwebsocket),
        post("/nodes/{node}/lxc/{vmid}/spiceproxy", lxc_spiceproxy),
        post("/nodes/{node}/vncshell", vncshell),
        post("/nodes/{node}/termproxy", node_termproxy),
        get("/nodes/{node}/vncwebsocket", node_vncwebsocket),
        post("/nodes/{node}/spiceshell", spiceshell),
        post("/access/vncticket", verify_vnc_ticket),
    ]
}

/// The data a VNC ticket is signed for: `<user>:<path>[:<port>]`.
fn vnc_secret(user: &str, path: &str, port: Option<&str>) -> String {
    match port {
        Some(p) => format!("{user}:{path}:{p}"),
        None => format!("{user}:{path}"),
    }
}

/// Whether the release binds a VNC ticket to its port (pve-access-control
/// 9.0.7 on): PVE 8.4's name the user and path only.
fn port_bound(ctx: &Ctx<'_>) -> bool {
    ctx.state.settings().version.is_v9()
}

/// `assemble_vnc_ticket`.
fn vnc_ticket(ctx: &Ctx<'_>, user: &str, path: &str, port: u16) -> String {
    let port = port.to_string();
    let port = port_bound(ctx).then_some(port.as_str());
    ctx.state
        .keys()
        .short_ticket("PVEVNC", &vnc_secret(user, path, port), ctx.now())
}

/// `verify_vnc_ticket`: an old-style ticket with the VNC password in
/// front is read without it.
///
/// # Errors
/// 401 `permission denied - invalid PVEVNC ticket`.
pub(crate) fn check_vnc_ticket(
    ctx: &Ctx<'_>,
    ticket: &str,
    user: &str,
    path: &str,
    port: Option<&str>,
) -> Result<()> {
    if vnc_ticket_holds(ctx.state, ticket, user, path, port, ctx.now()) {
        Ok(())
    } else {
        Err(Error::Unauthorized(
            "permission denied - invalid PVEVNC ticket".into(),
        ))
    }
}

/// Whether `ticket` is a VNC ticket of `user` for `path` (and `port`,
/// where the release binds it) at `now`, epoch seconds; an old-style
/// ticket with the VNC password in front is read without it.
pub(crate) fn vnc_ticket_holds(
    state: &crate::state::State,
    ticket: &str,
    user: &str,
    path: &str,
    port: Option<&str>,
    now: i64,
) -> bool {
    let ticket = match ticket.split_at_checked(9) {
        Some((pw, rest)) if pw.ends_with(':') && rest.starts_with("PVEVNC:") => rest,
        _ => ticket,
    };
    state
        .keys()
        .verify_short_ticket("PVEVNC", ticket, &vnc_secret(user, path, port), now)
}

/// The node the proxies of a call run on: the one that answers it (the
/// console calls are not forwarded; a remote guest's console goes
/// through SSH from there).
fn local_node(ctx: &Ctx<'_>) -> String {
    ctx.with(|c| c.nodes().local().to_string())
}

/// What a VNC or terminal proxy call opens.
struct Opening<'a> {
    kind: &'a str,
    id: String,
    program: Program,
    authpath: String,
    /// `termproxy`'s privilege and terminal command.
    terminal: (&'a str, Vec<String>),
    /// Whether the answer carries the CA (`cert`).
    cert: bool,
    /// Whether a VNC password is drawn and put in front of the ticket.
    password: bool,
    /// What the console shows.
    behind: Behind,
}

impl<'a> Opening<'a> {
    /// A `termproxy` running `terminal` for a holder of `perm` on
    /// `authpath`: no CA and no VNC password in its answer.
    fn termproxy(
        kind: &'a str,
        id: String,
        authpath: String,
        perm: &'a str,
        terminal: Vec<String>,
        behind: Behind,
    ) -> Self {
        Opening {
            kind,
            id,
            program: Program::Termproxy,
            authpath,
            terminal: (perm, terminal),
            cert: false,
            password: false,
            behind,
        }
    }
}

/// Opens a proxy on the local node: a port, a ticket, the worker that
/// waits for its connection; the answer PVE gives.
fn open(ctx: &Ctx<'_>, o: Opening<'_>) -> Result<Reply> {
    let user = ctx.who()?.to_string();
    let node = local_node(ctx);
    let now_ms = ctx.now_ms();
    let port = ctx.with(|c| c.consoles.next_port(&node, console::VNC_PORTS, now_ms))?;
    let mut ticket = vnc_ticket(ctx, &user, &o.authpath, port);
    let password = o.password.then(|| {
        let mut rq = ctx.rq();
        console::vnc_password(|| rq.secret_u64())
    });
    if let Some(pw) = &password {
        ticket = format!("{pw}:{ticket}");
    }
    let terminal: Vec<&str> = o.terminal.1.iter().map(String::as_str).collect();
    let command = console::termproxy_command(port, &o.authpath, o.terminal.0, &terminal);
    let worker = console::idle_worker(o.kind, &o.id, o.program, &command);
    let upid = ctx.with(|c| {
        let upid = c.start_task(&node, worker, &user, now_ms, o.program.timeout_ms());
        c.consoles.open(
            Session {
                node: node.clone(),
                port,
                program: o.program,
                authpath: o.authpath.clone(),
                user: user.clone(),
                upid: upid.clone(),
                until_ms: 0,
                behind: o.behind.clone(),
                password: password.clone(),
                connected: false,
                command: command.clone(),
            },
            now_ms,
        );
        upid
    });
    let cert = if o.cert { Some(ca_pem(ctx)?) } else { None };
    Ok(view::proxy(
        &user,
        &ticket,
        port,
        &upid,
        cert.as_deref(),
        password.as_deref(),
    )
    .into())
}

/// The cluster CA (`/etc/pve/pve-root-ca.pem`).
fn ca_pem(ctx: &Ctx<'_>) -> Result<String> {
    Ok(crate::api::node_hw::cluster_ca(ctx)?.cert)
}

/// A flag parameter.
fn flag(ctx: &Ctx<'_>, name: &str) -> Result<bool> {
    Ok(ctx.params.bool(name)?.unwrap_or(false))
}

/// The serial port a VM's `vga: serialN` shows its display on.
fn serial_display(vga: Option<&String>) -> Option<String> {
    let kind = vga?.split(',').find_map(|p| match p.split_once('=') {
        Some(("type", v)) => Some(v),
        Some(_) => None,
        None => Some(p),
    })?;
    let n = kind.strip_prefix("serial")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| kind.to_string())
}

/// `POST /nodes/{node}/qemu/{vmid}/vncproxy`: the VM's display through
/// `qm vncproxy`, or its serial port through `vncterm` when `vga` is a
/// serial port; a VNC password unless the serial display is used
/// without `websocket`.
fn qemu_vncproxy(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let websocket = flag(ctx, "websocket")?;
    let generate = flag(ctx, "generate-password")?;
    let serial = ctx.with(|c| {
        c.guests
            .vm(&node, vmid)
            .map(|vm| serial_display(vm.config().get("vga")))
    })?;
    open(
        ctx,
        Opening {
            kind: "vncproxy",
            id: vmid.to_string(),
            program: if serial.is_some() {
                Program::Vncterm
            } else {
                Program::QmVncProxy
            },
            authpath: format!("/vms/{vmid}"),
            terminal: ("VM.Console", Vec::new()),
            cert: true,
            password: generate || serial.is_none() || websocket,
            behind: if serial.is_some() {
                Behind::VmSerial {
                    vmid,
                    iface: serial.clone(),
                }
            } else {
                Behind::VmDisplay { vmid }
            },
        },
    )
}

/// `POST /nodes/{node}/qemu/{vmid}/termproxy`: `qm terminal` (the
/// `serial` given, or the serial display) through `termproxy`.
fn qemu_termproxy(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let given = ctx.params.str("serial");
    let display = ctx.with(|c| {
        c.guests
            .vm(&node, vmid)
            .map(|vm| serial_display(vm.config().get("vga")))
    })?;
    let mut terminal = vec![
        "/usr/sbin/qm".to_string(),
        "terminal".into(),
        vmid.to_string(),
        "-escape".into(),
        "0".into(),
    ];
    let iface = given.or(display);
    if let Some(iface) = &iface {
        terminal.extend(["-iface".to_string(), iface.clone()]);
    }
    open(
        ctx,
        Opening::termproxy(
            "vncproxy",
            vmid.to_string(),
            format!("/vms/{vmid}"),
            "VM.Console",
            terminal,
            Behind::VmSerial { vmid, iface },
        ),
    )
}

/// `POST /nodes/{node}/lxc/{vmid}/vncproxy`: the container's console
/// through `vncterm`.
fn lxc_vncproxy(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let websocket = flag(ctx, "websocket")?;
    ctx.with(|c| c.guests.ct(&node, vmid).map(|_| ()))?;
    open(
        ctx,
        Opening {
            kind: "vncproxy",
            id: vmid.to_string(),
            program: Program::Vncterm,
            authpath: format!("/vms/{vmid}"),
            terminal: ("VM.Console", Vec::new()),
            cert: true,
            password: websocket,
            behind: Behind::CtConsole { vmid },
        },
    )
}

/// `POST /nodes/{node}/lxc/{vmid}/termproxy`: the container's console
/// (`lxc-console` under `dtach`) through `termproxy`.
fn lxc_termproxy(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    ctx.with(|c| c.guests.ct(&node, vmid).map(|_| ()))?;
    let terminal = [
        "/usr/bin/dtach".to_string(),
        "-A".into(),
        format!("/var/run/dtach/vzctlconsole{vmid}"),
        "-r".into(),
        "winch".into(),
        "-z".into(),
        "lxc-console".into(),
        "-n".into(),
        vmid.to_string(),
        "-e".into(),
        "-1".into(),
    ];
    open(
        ctx,
        Opening::termproxy(
            "vncproxy",
            vmid.to_string(),
            format!("/vms/{vmid}"),
            "VM.Console",
            terminal.to_vec(),
            Behind::CtConsole { vmid },
        ),
    )
}

/// The shell a node's console runs (`get_shell_command`): root@pam gets
/// the `cmd` asked for (`login` by default), anyone else `/bin/login`.
///
/// # Errors
/// 403 `Permission check failed (user != root@pam)` for a `cmd` other
/// than `login` asked by anyone but root@pam.
fn shell_command(ctx: &Ctx<'_>, user: &str) -> Result<Vec<String>> {
    let cmd = ctx.params.str("cmd");
    let root = user == "root@pam";
    if cmd.as_deref().is_some_and(|c| c != "login") && !root {
        return Err(crate::model::guest_perm::perm_exc("user != root@pam"));
    }
    if !root {
        return Ok(vec!["/bin/login".into()]);
    }
    let mut out: Vec<String> = match cmd.as_deref().unwrap_or("login") {
        "upgrade" => vec!["/usr/bin/pveupgrade".into(), "--shell".into()],
        "ceph_install" => vec!["/usr/bin/pveceph".into(), "install".into()],
        _ => vec!["/bin/login".into(), "-f".into(), "root".into()],
    };
    if cmd.as_deref() == Some("ceph_install")
        && let Some(opts) = ctx.params.str("cmd-opts")
    {
        out.extend(opts.split('\0').map(str::to_string));
    }
    Ok(out)
}

/// `verify_username` of the caller, as `vncshell` and `spiceshell` make
/// it: an API token's ID is not a user name.
///
/// # Errors
/// `value '<tokenid>' does not look like a valid user name`.
fn shell_user(ctx: &Ctx<'_>) -> Result<String> {
    let who = ctx.who()?;
    if who.is_token() {
        return Err(Error::failed(format!(
            "value '{who}' does not look like a valid user name"
        )));
    }
    Ok(who.to_string())
}

/// `POST /nodes/{node}/vncshell`: the node's shell through `vncterm`.
fn vncshell(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let user = shell_user(ctx)?;
    let websocket = flag(ctx, "websocket")?;
    shell_command(ctx, &user)?;
    open(
        ctx,
        Opening {
            kind: "vncshell",
            id: String::new(),
            program: Program::Vncterm,
            authpath: format!("/nodes/{node}"),
            terminal: ("Sys.Console", Vec::new()),
            cert: true,
            password: websocket,
            behind: Behind::NodeShell {
                root: user == "root@pam",
                node,
            },
        },
    )
}

/// `POST /nodes/{node}/termproxy`: the node's shell through `termproxy`.
fn node_termproxy(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let user = ctx.who()?.to_string();
    let mut terminal = shell_command(ctx, &user)?;
    if node != local_node(ctx) {
        let ip = ctx
            .with(|c| c.nodes().get(&node).map(|n| n.ip.clone()))
            .unwrap_or_default();
        let mut ssh: Vec<String> = [
            "/usr/bin/ssh",
            "-e",
            "none",
            "-o",
            "BatchMode=yes",
            "-o",
            &format!("HostKeyAlias={node}"),
            "-t",
            &format!("root@{ip}"),
            "--",
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
        // SSH logs root in already: no nested login.
        if terminal.first().is_some_and(|c| c == "/bin/login") && user == "root@pam" {
            terminal.clear();
        }
        ssh.append(&mut terminal);
        terminal = ssh;
    }
    open(
        ctx,
        Opening::termproxy(
            "vncshell",
            String::new(),
            format!("/nodes/{node}"),
            "Sys.Console",
            terminal,
            Behind::NodeShell {
                root: user == "root@pam",
                node,
            },
        ),
    )
}

/// `GET .../{vmid}/vncwebsocket` without an upgrade: the ticket checked
/// for the guest and port, then the guest; the port back (as the query
/// gave it, a string).
fn guest_vncwebsocket(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let user = ctx.who()?.to_string();
    let ticket = ctx.param("vncticket")?;
    let port = ctx.param("port")?;
    let bound = port_bound(ctx).then_some(port.as_str());
    check_vnc_ticket(ctx, &ticket, &user, &format!("/vms/{vmid}"), bound)?;
    ctx.with(|c| {
        if c.guests.ct_by_id(vmid).is_some() {
            c.guests.ct(&node, vmid).map(|_| ())
        } else {
            c.guests.vm(&node, vmid).map(|_| ())
        }
    })?;
    Ok(json!({ "port": port }).into())
}

/// `GET /nodes/{node}/vncwebsocket` without an upgrade: the ticket
/// checked for the node and port; the port back.
fn node_vncwebsocket(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.param("node")?;
    let user = ctx.who()?.to_string();
    let ticket = ctx.param("vncticket")?;
    let port = ctx.param("port")?;
    let bound = port_bound(ctx).then_some(port.as_str());
    check_vnc_ticket(ctx, &ticket, &user, &format!("/nodes/{node}"), bound)?;
    Ok(json!({ "port": port }).into())
}

/// `POST /access/vncticket`: a proxy's check of the ticket it is shown
/// (`termproxy --vncticket-endpoint`): valid for the user, path and port,
/// and the user holds `privs` on the path. Any failure answers 401
/// `authentication failure`, telling nothing more.
fn verify_vnc_ticket(ctx: &Ctx<'_>) -> Result<Reply> {
    let authid = ctx.param("authid")?;
    let ticket = ctx.param("vncticket")?;
    let path = ctx.param("path")?;
    let privs = ctx.param("privs")?;
    let port = ctx.params.str("port");
    let norm = crate::model::acl::normalize_path(&path);
    let ok = norm.as_deref().is_some_and(|p| {
        check_vnc_ticket(ctx, &ticket, &authid, p, port.as_deref()).is_ok() && {
            let list = crate::spec::formats::split_list(&privs);
            !list.is_empty()
                && crate::model::AuthId::parse(&authid)
                    .is_some_and(|who| ctx.with(|c| c.access().check_perm(&who, p, &list).is_ok()))
        }
    });
    if !ok {
        return Err(Error::Unauthorized("authentication failure".into()));
    }
    Ok(Value::Null.into())
}

/// What a SPICE call names: the node it answers on, its FQDN (the
/// default proxy), the subject of its certificate and the CA.
fn spice_host(ctx: &Ctx<'_>, node: &str) -> Result<view::SpiceHost> {
    let (own, fqdn) = crate::api::node_hw::node_certificate(ctx, node)?;
    let info = crate::model::node_hw::certs::certificate_info(&own.cert, crate::pki::NODE_FILE)?;
    Ok(view::SpiceHost {
        fqdn,
        subject: info.subject,
        ca: ca_pem(ctx)?,
    })
}

/// The remote-viewer settings of a SPICE connection to `port` of `node`
/// (`remote_viewer_config`): a one-time password and the proxy ticket
/// that names the guest, node and port.
fn remote_viewer(ctx: &Ctx<'_>, node: &str, vmid: u32, port: u16, title: &str) -> Result<Value> {
    let host = spice_host(ctx, node)?;
    let proxy = ctx.params.str("proxy").unwrap_or_else(|| host.fqdn.clone());
    let password = {
        let mut rq = ctx.rq();
        let a = rq.secret_u64();
        let b = rq.secret_u64();
        let c = rq.secret_u64();
        let hex = format!("{a:016x}{b:016x}{c:016x}");
        hex[..40].to_string()
    };
    let plain = format!(
        "pvespiceproxy:{:08x}:{vmid}:{}:{port}",
        ctx.now(),
        node.to_lowercase()
    );
    let sig = ctx.state.keys().spice_signature(&plain);
    Ok(view::remote_viewer(&view::RemoteViewer {
        title,
        proxy_host: &proxy,
        proxy_ticket: &format!("{plain}::{sig}"),
        port,
        password: &password,
        host: &host,
    }))
}

/// Starts `spiceterm` for a terminal on `node` (`run_spiceterm`): its
/// task (`spiceproxy` for a container, `spiceshell` for the node) and
/// port, then the settings.
fn spiceterm(ctx: &Ctx<'_>, node: &str, vmid: u32, title: &str, authpath: String) -> Result<Reply> {
    let user = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let port = ctx.with(|c| c.consoles.next_port(node, console::SPICE_PORTS, now_ms))?;
    let config = remote_viewer(ctx, node, vmid, port, title)?;
    let (kind, id) = if vmid == 0 {
        ("spiceshell", String::new())
    } else {
        ("spiceproxy", vmid.to_string())
    };
    let worker = console::idle_worker(kind, &id, Program::Spiceterm, "");
    ctx.with(|c| {
        let upid = c.start_task(node, worker, &user, now_ms, console::SPICE_TIMEOUT_MS);
        c.consoles.open(
            Session {
                node: node.to_string(),
                port,
                program: Program::Spiceterm,
                authpath,
                user: user.clone(),
                upid,
                until_ms: 0,
                behind: if vmid == 0 {
                    Behind::NodeShell {
                        node: node.to_string(),
                        root: user == "root@pam",
                    }
                } else {
                    Behind::CtConsole { vmid }
                },
                password: None,
                connected: false,
                command: String::new(),
            },
            now_ms,
        );
    });
    Ok(config.into())
}

/// `POST /nodes/{node}/qemu/{vmid}/spiceproxy`: the running VM's own
/// SPICE port (a `qxl` display), its password set for 30 seconds.
fn qemu_spiceproxy(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let (title, port) = ctx.with(|c| {
        let vm = c.guests.vm(&node, vmid)?;
        let title = match vm.config().get("name") {
            Some(n) if !n.is_empty() => format!("VM {vmid} - {n}"),
            _ => format!("VM {vmid}"),
        };
        if !vm.running() {
            return Err(Error::failed(format!("VM {vmid} not running")));
        }
        let spice = |vga: Option<&String>| {
            vga.is_some_and(|v| {
                v.split(',')
                    .find_map(|p| match p.split_once('=') {
                        Some(("type", t)) => Some(t),
                        Some(_) => None,
                        None => Some(p),
                    })
                    .is_some_and(|t| t.starts_with("qxl"))
            })
        };
        if !spice(vm.config().get("vga")) {
            return Err(Error::failed("no spice port"));
        }
        // Each running SPICE VM got the next port of the range when it
        // started: in VMID order here.
        let rank = c
            .guests
            .vms_on(&node)
            .filter(|v| v.running() && spice(v.config().get("vga")))
            .take_while(|v| v.vmid() < vmid)
            .count();
        let port = console::SPICE_PORTS.0 + u16::try_from(rank).unwrap_or(0);
        Ok((title, port))
    })?;
    Ok(remote_viewer(ctx, &node, vmid, port, &title)?.into())
}

/// `POST /nodes/{node}/lxc/{vmid}/spiceproxy`: the running container's
/// console through `spiceterm`.
fn lxc_spiceproxy(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    ctx.with(|c| {
        let ct = c
            .guests
            .ct_by_id(vmid)
            .ok_or_else(|| crate::model::lxc::config_missing(&node, vmid))?;
        if !ct.running() {
            return Err(Error::failed(format!("CT {vmid} not running")));
        }
        Ok(())
    })?;
    spiceterm(
        ctx,
        &node,
        vmid,
        &format!("CT {vmid}"),
        format!("/vms/{vmid}"),
    )
}

/// `POST /nodes/{node}/spiceshell`: the node's shell through
/// `spiceterm`.
fn spiceshell(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let user = shell_user(ctx)?;
    shell_command(ctx, &user)?;
    spiceterm(
        ctx,
        &node,
        0,
        &format!("Shell on '{node}'"),
        format!("/nodes/{node}"),
    )
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::serial_display;

    #[rstest]
    #[case(None, None)]
    #[case(Some("std"), None)]
    #[case(Some("serial0"), Some("serial0"))]
    #[case(Some("type=serial1,memory=16"), Some("serial1"))]
    #[case(Some("serial"), None)]
    #[case(Some("qxl,memory=32"), None)]
    fn the_serial_display_comes_from_vga(#[case] vga: Option<&str>, #[case] want: Option<&str>) {
        let vga = vga.map(str::to_string);
        assert_eq!(serial_display(vga.as_ref()).as_deref(), want);
    }
}
