//! The console calls (`api::console`, `Qemu::vncproxy` and neighbours)
//! against an in-process fake-pve; every answer is checked against the
//! schema.

mod common;

use common::{MODES, ROOT_TOKEN, checked_client};
use fake_pve::{Running, Scenario};
use pve_client::api::console::{ShellOptions, VncOptions};

const NODE: &str = "pve";

const SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
vms:
  - { vmid: 100, node: pve, name: web, status: running, config: { vga: qxl } }
containers:
  - { vmid: 200, node: pve, hostname: box, status: running }
";

async fn start() -> Running {
    common::builder()
        .scenario(Scenario::parse(SCENARIO, "console.yaml").expect("scenario"))
        .start()
        .await
        .expect("fake-pve starts")
}

#[tokio::test]
async fn proxies_answer_tickets_that_the_ticket_check_accepts() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let who = if mode == common::Mode::Token {
            ROOT_TOKEN
        } else {
            "root@pam"
        };
        let vnc = pve
            .qemu()
            .vncproxy(
                NODE,
                100,
                VncOptions {
                    websocket: true,
                    ..VncOptions::default()
                },
            )
            .await
            .expect("vncproxy");
        assert_eq!(vnc.user, who);
        assert_eq!(vnc.port, 5900);
        assert!(vnc.password.is_some() && vnc.cert.is_some(), "{vnc:?}");
        let port = pve
            .qemu()
            .vncwebsocket(NODE, 100, vnc.port, &vnc.ticket)
            .await
            .expect("ticket holds");
        assert_eq!(port.port, "5900");
        pve.console()
            .verify_vnc_ticket(who, &vnc.ticket, "/vms/100", "VM.Console", Some(5900))
            .await
            .expect("the proxy's check passes");
        let wrong = pve
            .console()
            .verify_vnc_ticket(who, &vnc.ticket, "/vms/100", "VM.Console", Some(5901))
            .await
            .expect_err("another port");
        assert!(
            wrong.to_string().contains("authentication failure"),
            "{wrong}"
        );

        let term = pve.lxc().termproxy(NODE, 200).await.expect("termproxy");
        assert_eq!((term.port, term.cert.as_deref()), (5901, None));
        let shell = pve
            .console()
            .termproxy(NODE, &ShellOptions::default())
            .await
            .expect("node shell");
        pve.console()
            .vncwebsocket(NODE, shell.port, &shell.ticket)
            .await
            .expect("node ticket holds");

        let spice = pve.qemu().spiceproxy(NODE, 100, None).await.expect("spice");
        assert_eq!(
            (spice.kind.as_str(), spice.title.as_str()),
            ("spice", "VM 100 - web")
        );
        let ct = pve
            .lxc()
            .spiceproxy(NODE, 200, None)
            .await
            .expect("ct spice");
        assert_eq!(ct.title, "CT 200");
        let shell = pve
            .console()
            .spiceshell(NODE, Some("192.0.2.1"), &ShellOptions::default())
            .await;
        if mode == common::Mode::Token {
            // A token's ID is no user name to the node's SPICE shell.
            let e = shell.expect_err("a token");
            assert!(
                e.to_string()
                    .contains("does not look like a valid user name"),
                "{e}"
            );
        } else {
            let node = shell.expect("spiceshell");
            assert_eq!(node.proxy, "http://192.0.2.1:3128");
            assert_ne!(ct.tls_port, node.tls_port, "each spiceterm has its port");
        }
        assert!(
            checked
                .names()
                .contains(&"POST verify_vnc_ticket".to_string()),
            "{:?}",
            checked.names()
        );
    }
}
