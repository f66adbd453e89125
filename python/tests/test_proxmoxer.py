"""The fixtures with proxmoxer: a VM's life, the reset between tests,
fault rules and the emulated clock."""

import pytest
from proxmoxer import ResourceException
from proxmoxer.tools import Tasks

VMID = 4242


def wait_ok(prox, upid):
    assert isinstance(upid, str) and upid.startswith("UPID:"), upid
    task = Tasks.blocking_status(prox, upid, timeout=30, polling_interval=0.05)
    assert task is not None, f"task {upid} did not stop within 30 s"
    assert task["status"] == "stopped"
    assert task["exitstatus"] == "OK", task
    return task


def create_vm(prox, vmid=VMID, node="pve"):
    return prox.nodes(node).qemu.post(
        vmid=vmid, name=f"py-{vmid}", memory=512, cores=1, scsi0="local-lvm:2",
        net0="virtio,bridge=vmbr0",
    )


def test_create_and_start_a_vm(fake_pve_proxmoxer):
    prox = fake_pve_proxmoxer
    task = wait_ok(prox, create_vm(prox))
    assert task["type"] == "qmcreate" and task["id"] == str(VMID)
    assert prox.nodes("pve").qemu(VMID).status.current.get()["status"] == "stopped"

    wait_ok(prox, prox.nodes("pve").qemu(VMID).status.start.post())
    current = prox.nodes("pve").qemu(VMID).status.current.get()
    assert current["status"] == "running"
    assert current["name"] == f"py-{VMID}"


# Several tests each create the same VM: should the world not be reset
# between two of them on one worker (with or without pytest-xdist, one
# worker runs at least two of the four), the second create is refused and
# the check that the VM is absent at start fails.
@pytest.mark.parametrize("run", range(4))
def test_the_world_is_reset_between_tests(fake_pve, fake_pve_proxmoxer, run):
    prox = fake_pve_proxmoxer
    vmids = [vm["vmid"] for vm in prox.nodes("pve").qemu.get()]
    assert VMID not in vmids, f"VM {VMID} is left from an earlier test"
    assert fake_pve.faults() == [], "fault rules are left from an earlier test"
    fake_pve.fault(method="GET", path="/version", status=500, message="left behind")
    wait_ok(prox, create_vm(prox))
    assert VMID in [vm["vmid"] for vm in prox.nodes("pve").qemu.get()]


def test_a_fault_rule_answers_then_runs_out(fake_pve, fake_pve_proxmoxer):
    prox = fake_pve_proxmoxer
    rule = fake_pve.fault(method="GET", path="/nodes/pve/status", status=503,
                          message="injected by the test", count=1)
    with pytest.raises(ResourceException) as refused:
        prox.nodes("pve").status.get()
    assert refused.value.status_code == 503
    assert "injected by the test" in str(refused.value)
    # count=1: the next call is answered.
    assert prox.nodes("pve").status.get()["uptime"] > 0
    [fired] = [r for r in fake_pve.faults() if r["id"] == rule]
    assert fired["hits"] == 1


def test_a_fault_rule_fails_a_task_type(fake_pve, fake_pve_proxmoxer):
    prox = fake_pve_proxmoxer
    fake_pve.fault(task_type="qmcreate", task_error="storage full")
    upid = create_vm(prox)
    task = Tasks.blocking_status(prox, upid, timeout=30, polling_interval=0.05)
    assert task["exitstatus"] == "storage full"


def test_the_clock_ends_a_long_task(fake_pve, fake_pve_proxmoxer):
    prox = fake_pve_proxmoxer
    # Every task takes ten emulated minutes (the profile is part of the
    # checkpoint: the next test gets the session's back).
    fake_pve.set_latency({"name": "slow", "default_task": 600_000})
    before = fake_pve.clock()
    upid = create_vm(prox)
    assert prox.nodes("pve").tasks(upid).status.get()["status"] == "running"

    after = fake_pve.advance(601)
    assert after["now"] >= before["now"] + 601
    assert after["advanced_ms"] - before["advanced_ms"] == 601_000
    status = prox.nodes("pve").tasks(upid).status.get()
    assert status["status"] == "stopped" and status["exitstatus"] == "OK", status
    assert prox.nodes("pve").qemu(VMID).status.current.get()["status"] == "stopped"


def test_the_latency_profile_is_restored(fake_pve):
    assert fake_pve.latency_profile()["name"] != "slow"


def test_a_token_made_by_the_fixture(fake_pve):
    token = fake_pve.create_token("ci")
    assert token.full_id == "root@pam!ci"
    prox = fake_pve.proxmoxer(token=token)
    assert prox.version.get()["release"] in ("8.4", "9.1", "9.2")
    assert [n["node"] for n in prox.nodes.get()] == ["pve"]


def test_a_wrong_token_is_refused(fake_pve):
    token = fake_pve.create_token("ci")
    prox = fake_pve.proxmoxer(token=type(token)(token.full_id, "not-the-secret"))
    with pytest.raises(Exception) as refused:
        prox.version.get()
    assert "401" in str(refused.value)


def test_the_guest_agent_state(fake_pve, fake_pve_proxmoxer):
    prox = fake_pve_proxmoxer
    wait_ok(prox, create_vm(prox))
    prox.nodes("pve").qemu(VMID).config.put(agent="1")
    fake_pve.set_guest_agent(VMID, hostname="web01", boot_delay_ms=0)
    assert fake_pve.guest_agent(VMID)["hostname"] == "web01"
    wait_ok(prox, prox.nodes("pve").qemu(VMID).status.start.post())
    info = prox.nodes("pve").qemu(VMID).agent("get-host-name").get()
    assert info["result"]["host-name"] == "web01"


@pytest.mark.fake_pve_scenario("../../fake-pve/scenarios/three-node-cluster.yaml")
def test_a_scenario_marker(fake_pve_proxmoxer):
    nodes = sorted(n["node"] for n in fake_pve_proxmoxer.nodes.get())
    assert nodes == ["pve1", "pve2", "pve3"]


@pytest.mark.fake_pve_scenario({"nodes": [{"name": "alpha"}]})
def test_a_scenario_mapping(fake_pve_proxmoxer):
    assert [n["node"] for n in fake_pve_proxmoxer.nodes.get()] == ["alpha"]


def test_the_session_scenario_after_a_marker(fake_pve_proxmoxer):
    assert [n["node"] for n in fake_pve_proxmoxer.nodes.get()] == ["pve"]
