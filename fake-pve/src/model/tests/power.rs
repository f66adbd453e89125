//! Node power: reboot and shutdown take a node offline after its guests
//! stop; a reboot comes back by itself, a shutdown on wake-on-LAN or the
//! control API; the node boots its `onboot` guests.

use rstest::rstest;

use super::{World, refused};
use crate::model::NodeStatus;
use crate::model::power::{BOOT_MS, PowerCommand, REBOOT_MS};

/// Two online nodes; on pve2 VM 300 (running, `onboot`), VM 301
/// (running), container 302 (running, `onboot`).
const TWO: &str = r#"
cluster: lab
nodes:
  - name: pve1
  - name: pve2
storages:
  - { id: local, type: dir, path: /var/lib/vz }
vms:
  - { vmid: 300, node: pve2, status: running, config: { onboot: 1, memory: 512 } }
  - { vmid: 301, node: pve2, status: running, config: { memory: 512 } }
containers:
  - { vmid: 302, node: pve2, status: running, hostname: ct, config: { onboot: 1 } }
"#;

fn status(w: &World, node: &str) -> NodeStatus {
    w.c.nodes.get(node).expect("member").status
}

fn running(w: &World, vmid: u32) -> bool {
    w.c.guests.get(&vmid).map_or_else(
        || w.c.guests.ct_by_id(vmid).is_some_and(|c| c.running()),
        |v| v.running(),
    )
}

/// The last task of `kind` on `node`: its log lines.
fn last_log(w: &World, kind: &str, node: &str) -> Vec<String> {
    let t =
        w.c.tasks
            .iter()
            .rfind(|t| t.upid.kind == kind && t.upid.node == node)
            .expect("a task of that kind");
    t.log.clone()
}

#[rstest]
fn a_reboot_stops_the_guests_and_comes_back_by_itself() {
    let mut w = World::from_yaml(TWO);
    w.c.node_power("pve2", PowerCommand::Reboot, w.now_ms)
        .expect("reboots");
    assert_eq!(status(&w, "pve2"), NodeStatus::Offline);
    for id in [300, 301, 302] {
        assert!(!running(&w, id), "{id} stopped");
    }
    let log = last_log(&w, "stopall", "pve2");
    assert!(
        log.iter()
            .any(|l| l == "Stopping VM 301 (timeout = 180 seconds)"),
        "{log:?}"
    );
    assert_eq!(
        refused(w.c.nodes.reach("pve2")),
        (595, "No route to host".to_string())
    );
    w.tick(REBOOT_MS - 1);
    assert_eq!(status(&w, "pve2"), NodeStatus::Offline);
    w.tick(1);
    assert_eq!(status(&w, "pve2"), NodeStatus::Online);
    assert_eq!(w.c.nodes.get("pve2").expect("member").boot_time, w.now());
    // The onboot guests start again; 301 stays off.
    assert!(running(&w, 300));
    assert!(running(&w, 302));
    assert!(!running(&w, 301));
}

#[rstest]
fn a_shutdown_stays_off_until_woken() {
    let mut w = World::from_yaml(TWO);
    w.c.node_power("pve2", PowerCommand::Shutdown, w.now_ms)
        .expect("shuts down");
    w.tick(REBOOT_MS * 10);
    assert_eq!(status(&w, "pve2"), NodeStatus::Offline);
    w.c.wake_node("pve2", w.now_ms).expect("woken");
    w.tick(BOOT_MS - 1);
    assert_eq!(status(&w, "pve2"), NodeStatus::Offline);
    w.tick(1);
    assert_eq!(status(&w, "pve2"), NodeStatus::Online);
    assert!(running(&w, 300));
}

#[rstest]
fn the_control_call_brings_a_node_back_at_once() {
    let mut w = World::from_yaml(TWO);
    w.c.node_power("pve2", PowerCommand::Shutdown, w.now_ms)
        .expect("shuts down");
    w.c.power_on("pve2", w.now_ms).expect("back");
    w.tick(0);
    assert_eq!(status(&w, "pve2"), NodeStatus::Online);
    assert!(running(&w, 302));
}

#[rstest]
fn an_offline_node_cannot_be_shut_down_again() {
    let mut w = World::from_yaml(TWO);
    w.c.node_power("pve2", PowerCommand::Shutdown, w.now_ms)
        .expect("shuts down");
    assert_eq!(
        refused(w.c.node_power("pve2", PowerCommand::Reboot, w.now_ms)),
        (595, "No route to host".to_string())
    );
}

#[rstest]
#[case(None, false, vec![300, 302])]
#[case(None, true, vec![300, 301, 302])]
#[case(Some(vec![301]), false, vec![301])]
fn startall_picks_onboot_forced_or_listed_guests(
    #[case] vms: Option<Vec<u32>>,
    #[case] force: bool,
    #[case] want: Vec<u32>,
) {
    let mut w = World::from_yaml(TWO);
    let all = w.c.stopall_guests("pve2", None);
    w.run("pve2", crate::model::Cluster::stopall_worker(&all, 10));
    let got: Vec<u32> =
        w.c.startall_guests("pve2", vms.as_deref(), force)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
    assert_eq!(got, want);
}
