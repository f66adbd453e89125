#!/usr/bin/env python3
"""Drives fake-pve with proxmoxer, a real third-party PVE client, unmodified.

Run by fake-pve/tests/python_clients.rs with the venv from ci/setup-python.
By hand, against a running fake-pve (or a real PVE node named in PVE_NODE):

    PVE_HOST=127.0.0.1 PVE_PORT=8006 PVE_USER=root@pam PVE_PASSWORD=password \
    PVE_TOKEN_NAME=ci PVE_TOKEN_VALUE=<uuid> \
    "$(ci/setup-python | tail -n1)" fake-pve/tests/python/proxmoxer_check.py

Every check prints one line; the last line is ALL OK. Any failure prints
FAIL with the reason and exits 1.
"""

import os
import sys
import time
import traceback

from proxmoxer import AuthenticationError, ProxmoxAPI, ResourceException
from proxmoxer.tools import Tasks


class CheckFailed(Exception):
    pass


def env(name):
    value = os.environ.get(name)
    if not value:
        raise CheckFailed(f"environment variable {name} is not set")
    return value


def expect(cond, message):
    if not cond:
        raise CheckFailed(message)


def ok(auth, what):
    print(f"ok [{auth}] {what}", flush=True)


def check_api(prox, auth):
    # /version
    version = prox.version.get()
    expect(isinstance(version, dict), f"/version: expected an object, got {version!r}")
    for key in ("version", "release", "repoid"):
        expect(key in version, f"/version: key {key!r} missing from {version!r}")
        expect(
            isinstance(version[key], str) and version[key],
            f"/version: {key!r} should be a non-empty string, got {version[key]!r}",
        )
    expect(
        version["version"].startswith(version["release"]),
        f"/version: version {version['version']!r} does not start with release {version['release']!r}",
    )
    ok(auth, f"GET /version -> {version['version']} (release {version['release']}, repoid {version['repoid']})")

    # /nodes
    nodes = prox.nodes.get()
    expect(isinstance(nodes, list) and nodes, f"/nodes: expected a non-empty list, got {nodes!r}")
    names = []
    for n in nodes:
        expect("node" in n, f"/nodes: entry without 'node': {n!r}")
        expect(n.get("status") == "online", f"/nodes: node {n['node']!r} is not online: {n!r}")
        names.append(n["node"])
    node = os.environ.get("PVE_NODE") or names[0]
    expect(node in names, f"/nodes: node {node!r} not among {names!r}")
    ok(auth, f"GET /nodes -> {', '.join(names)} (all online)")

    # /cluster/resources
    resources = prox.cluster.resources.get()
    expect(isinstance(resources, list) and resources, f"/cluster/resources: expected a non-empty list, got {resources!r}")
    for r in resources:
        expect("id" in r and "type" in r, f"/cluster/resources: entry without id/type: {r!r}")
    res_nodes = sorted(r["node"] for r in resources if r["type"] == "node")
    expect(
        res_nodes == sorted(names),
        f"/cluster/resources: node entries {res_nodes!r} differ from /nodes {sorted(names)!r}",
    )
    ok(auth, f"GET /cluster/resources -> {len(resources)} resources")

    only_nodes = prox.cluster.resources.get(type="node")
    expect(isinstance(only_nodes, list) and only_nodes, f"/cluster/resources?type=node: expected a non-empty list, got {only_nodes!r}")
    types = {r.get("type") for r in only_nodes}
    expect(types == {"node"}, f"/cluster/resources?type=node: got types {sorted(map(str, types))!r}")
    for r in only_nodes:
        expect(r.get("id") == f"node/{r.get('node')}", f"/cluster/resources?type=node: bad id in {r!r}")
    expect(
        sorted(r["node"] for r in only_nodes) == sorted(names),
        f"/cluster/resources?type=node: nodes {[r['node'] for r in only_nodes]!r} differ from /nodes {names!r}",
    )
    ok(auth, f"GET /cluster/resources type=node -> {len(only_nodes)} nodes")

    # /cluster/nextid
    nextid = prox.cluster.nextid.get()
    expect(
        isinstance(nextid, str) and nextid.isdigit(),
        f"/cluster/nextid: expected a string of digits, got {nextid!r} ({type(nextid).__name__})",
    )
    expect(int(nextid) >= 100, f"/cluster/nextid: {nextid} is below 100")
    ok(auth, f"GET /cluster/nextid -> {nextid!r}")

    # /nodes/{node}/status
    status = prox.nodes(node).status.get()
    expect(isinstance(status, dict), f"/nodes/{node}/status: expected an object, got {status!r}")
    for key in ("uptime", "cpu", "memory", "cpuinfo", "pveversion", "kversion"):
        expect(key in status, f"/nodes/{node}/status: key {key!r} missing (keys: {sorted(status)!r})")
    mem = status["memory"]
    for key in ("total", "used", "free"):
        expect(isinstance(mem.get(key), int), f"/nodes/{node}/status: memory.{key} should be an integer, got {mem!r}")
    expect(mem["total"] > 0, f"/nodes/{node}/status: memory.total is {mem['total']}")
    expect(
        status["pveversion"].startswith("pve-manager/"),
        f"/nodes/{node}/status: pveversion {status['pveversion']!r} does not start with 'pve-manager/'",
    )
    ok(auth, f"GET /nodes/{node}/status -> {status['pveversion']}, {status['cpuinfo'].get('cpus')} cpus")

    # POST /nodes/{node}/startall and wait on the task
    upid = prox.nodes(node).startall.post()
    expect(isinstance(upid, str) and upid.startswith("UPID:"), f"POST /nodes/{node}/startall: expected a UPID, got {upid!r}")
    decoded = Tasks.decode_upid(upid)
    expect(decoded["node"] == node, f"UPID {upid!r} names node {decoded['node']!r}, not {node!r}")
    expect(decoded["type"] == "startall", f"UPID {upid!r} has type {decoded['type']!r}, not 'startall'")
    ok(auth, f"POST /nodes/{node}/startall -> {upid}")

    task = Tasks.blocking_status(prox, upid, timeout=60, polling_interval=0.1)
    expect(task is not None, f"task {upid} did not stop within 60 s")
    expect(task.get("status") == "stopped", f"task {upid}: status {task!r}")
    expect(task.get("exitstatus") == "OK", f"task {upid}: exitstatus {task.get('exitstatus')!r}, expected 'OK' ({task!r})")
    expect(task.get("upid") == upid, f"task status names upid {task.get('upid')!r}, expected {upid!r}")
    ok(auth, f"Tasks.blocking_status({upid}) -> stopped, exitstatus OK")

    log = prox.nodes(node).tasks(upid).log.get()
    expect(isinstance(log, list) and log, f"task log: expected a non-empty list, got {log!r}")
    for i, line in enumerate(log, start=1):
        expect(line.get("n") == i, f"task log: line {i} has n={line.get('n')!r}: {line!r}")
        expect(isinstance(line.get("t"), str), f"task log: line {i} has no text: {line!r}")
    expect(log[-1]["t"] == "TASK OK", f"task log: last line is {log[-1]['t']!r}, expected 'TASK OK' (log: {Tasks.decode_log(log)!r})")
    ok(auth, f"GET /nodes/{node}/tasks/{{upid}}/log -> {len(log)} lines, last 'TASK OK'")

    # an API path that does not exist
    try:
        result = prox.nodes(node).nonexistent.get()
    except ResourceException as e:
        expect(e.status_code == 501, f"GET /nodes/{node}/nonexistent: status {e.status_code}, expected 501 ({e})")
        ok(auth, f"GET /nodes/{node}/nonexistent -> ResourceException {e.status_code} {e.content!r}")
    else:
        raise CheckFailed(f"GET /nodes/{node}/nonexistent: expected ResourceException 501, got {result!r}")


def wait_ok(prox, upid, what):
    expect(isinstance(upid, str) and upid.startswith("UPID:"), f"{what}: expected a UPID, got {upid!r}")
    task = Tasks.blocking_status(prox, upid, timeout=60, polling_interval=0.1)
    expect(task is not None, f"{what}: task {upid} did not stop within 60 s")
    expect(task.get("exitstatus") == "OK", f"{what}: task {upid} ended {task.get('exitstatus')!r}")
    return task


def check_vm_lifecycle(prox, auth, node, storage, bridge):
    """create -> configure -> start -> snapshot -> clone -> stop -> delete."""
    vmid = int(prox.cluster.nextid.get())
    qemu = prox.nodes(node).qemu
    upid = qemu.post(vmid=vmid, name=f"proxmoxer-{vmid}", memory=1024, cores=1,
                     net0=f"virtio,bridge={bridge}", scsi0=f"{storage}:4", ostype="l26")
    task = wait_ok(prox, upid, "create_vm")
    expect(task["type"] == "qmcreate" and task["id"] == str(vmid), f"create_vm: task {task!r}")
    config = qemu(vmid).config.get()
    expect(config.get("net0", "").startswith("virtio=") and f"bridge={bridge}" in config["net0"],
           f"config net0: {config.get('net0')!r}")
    expect(config.get("scsi0", "").startswith(f"{storage}:") and "size=4G" in config["scsi0"],
           f"config scsi0: {config.get('scsi0')!r}")
    expect(len(config.get("digest", "")) == 40, f"config digest: {config.get('digest')!r}")
    ok(auth, f"create_vm {vmid} -> net0 {config['net0']}, scsi0 {config['scsi0']}")

    result = qemu(vmid).config.put(cores=2, digest=config["digest"])
    expect(result is None, f"update_vm: expected null, got {result!r}")
    expect(qemu(vmid).config.get()["cores"] == 2, "update_vm: cores did not change")
    try:
        qemu(vmid).config.put(cores=3, digest=config["digest"])
    except ResourceException as e:
        expect(e.status_code == 500 and "checksum mismatch" in str(e.content),
               f"update_vm with a stale digest: {e.status_code} {e.content!r}")
    else:
        raise CheckFailed("update_vm with a stale digest: expected a refusal")
    ok(auth, "update_vm with digest; a stale digest is refused")

    wait_ok(prox, qemu(vmid).status.start.post(), "vm_start")
    current = qemu(vmid).status.current.get()
    expect(current.get("status") == "running" and current.get("qmpstatus") == "running",
           f"status/current after start: {current!r}")
    ok(auth, f"vm_start -> running, {current.get('cpus')} cpus")

    wait_ok(prox, qemu(vmid).snapshot.post(snapname="before", description="proxmoxer"), "snapshot")
    names = [s["name"] for s in qemu(vmid).snapshot.get()]
    expect("before" in names and names[-1] == "current", f"snapshot list: {names!r}")
    ok(auth, f"snapshot -> {names!r}")

    newid = vmid + 1
    task = wait_ok(prox, qemu(vmid).clone.post(newid=newid, full=1, name=f"proxmoxer-{newid}"), "clone_vm")
    expect(task["type"] == "qmclone" and task["id"] == str(vmid), f"clone_vm: task {task!r}")
    clone = qemu(newid).config.get()
    expect(clone.get("net0") != config.get("net0") and clone["net0"].startswith("virtio="),
           f"clone net0 should get a new MAC: {clone.get('net0')!r} vs {config.get('net0')!r}")
    ok(auth, f"clone_vm {vmid} -> {newid} ({clone['net0']})")

    wait_ok(prox, qemu(vmid).status.stop.post(), "vm_stop")
    expect(qemu(vmid).status.current.get()["status"] == "stopped", "vm_stop: still running")
    for v in (newid, vmid):
        wait_ok(prox, qemu(v).delete(purge=1), f"destroy_vm {v}")
        try:
            qemu(v).config.get()
        except ResourceException as e:
            expect(e.status_code == 500 and "does not exist" in str(e.content), f"config after destroy: {e.content!r}")
        else:
            raise CheckFailed(f"VM {v} still has a config after destroy")
    ok(auth, f"vm_stop, destroy_vm {newid} and {vmid}")


def check_ha(prox, auth, node, storage, bridge):
    """HA resource -> start through the HA manager -> status -> release -> destroy."""
    vmid = int(prox.cluster.nextid.get())
    qemu = prox.nodes(node).qemu
    wait_ok(prox, qemu.post(vmid=vmid, name=f"ha-{vmid}", memory=512,
                            net0=f"virtio,bridge={bridge}", scsi0=f"{storage}:1"), "create_vm")
    sid = f"vm:{vmid}"
    expect(prox.cluster.ha.resources.post(sid=str(vmid), state="stopped", comment="proxmoxer") is None,
           "create HA resource: expected null")
    res = prox.cluster.ha.resources(sid).get()
    expect(res.get("sid") == sid and res.get("type") == "vm" and res.get("state") == "stopped",
           f"HA resource: {res!r}")
    expect(any(r["sid"] == sid for r in prox.cluster.ha.resources.get(type="vm")), "HA resource not listed")
    try:
        prox.cluster.ha.resources.post(sid=sid)
    except ResourceException as e:
        expect(e.status_code == 500 and "already defined" in str(e.content), f"second create: {e.content!r}")
    else:
        raise CheckFailed("a second HA resource of the same VM: expected a refusal")
    ok(auth, f"HA resource {sid} (state stopped)")

    upid = qemu(vmid).status.start.post()
    task = wait_ok(prox, upid, "vm_start of an HA VM")
    expect(task["type"] == "hastart", f"vm_start of an HA VM: task type {task['type']!r}")
    lines = [l["t"] for l in prox.nodes(node).tasks(upid).log.get()]
    expect(f"Requesting HA start for VM {vmid}" in lines, f"hastart log: {lines!r}")
    expect(prox.cluster.ha.resources(sid).get().get("state") == "started", "hastart did not request 'started'")
    deadline = time.time() + 60
    while qemu(vmid).status.current.get()["status"] != "running":
        expect(time.time() < deadline, f"{sid} did not start within 60 s")
        time.sleep(0.5)
    current = qemu(vmid).status.current.get()
    expect(current.get("ha", {}).get("managed") == 1, f"status/current ha: {current.get('ha')!r}")
    ok(auth, f"vm_start {vmid} -> hastart -> running ({current['ha']!r})")

    deadline = time.time() + 30
    while True:
        lines = prox.cluster.ha.status.current.get()
        svc = [l for l in lines if l.get("sid") == sid]
        if svc and svc[0].get("state") == "started":
            break
        expect(time.time() < deadline, f"HA status of {sid}: {svc!r}")
        time.sleep(0.5)
    expect(any(l["type"] == "quorum" and l.get("quorate") == 1 for l in lines), f"quorum line: {lines!r}")
    expect(any(l["type"] == "master" for l in lines), f"master line: {lines!r}")
    rows = [r for r in prox.cluster.resources.get(type="vm") if r.get("vmid") == vmid]
    expect(rows and rows[0].get("hastate") == "started", f"/cluster/resources hastate: {rows!r}")
    ms = prox.cluster.ha.status.manager_status.get()
    expect(ms["manager_status"]["service_status"][sid]["state"] == "started", f"manager_status: {ms!r}")
    ok(auth, f"HA status: {svc[0]['status']}, master {ms['manager_status']['master_node']}")

    prox.cluster.ha.resources(sid).delete()
    expect(all(r["sid"] != sid for r in prox.cluster.ha.resources.get()), "HA resource still listed")
    upid = qemu(vmid).status.stop.post()
    task = wait_ok(prox, upid, "vm_stop")
    expect(task["type"] == "qmstop", f"vm_stop after HA: task type {task['type']!r}")
    wait_ok(prox, qemu(vmid).delete(purge=1), f"destroy_vm {vmid}")
    ok(auth, f"HA resource removed, vm_stop, destroy_vm {vmid}")


def ostemplate(prox, node):
    """The OS template to create containers from: $PVE_TEST_OSTEMPLATE, or
    Debian 12 from the appliance index, downloaded into `local` unless it
    is there already."""
    given = os.environ.get("PVE_TEST_OSTEMPLATE")
    if given:
        return given
    name = "debian-12-standard_12.7-1_amd64.tar.zst"
    volid = f"local:vztmpl/{name}"
    have = [c["volid"] for c in prox.nodes(node).storage("local").content.get(content="vztmpl")]
    if volid not in have:
        wait_ok(prox, prox.nodes(node).aplinfo.post(storage="local", template=name), "apl_download")
    return volid


def check_ct_lifecycle(prox, auth, node, storage, bridge):
    """Containers: create -> configure -> start -> snapshot -> clone -> stop -> delete."""
    template = ostemplate(prox, node)
    vmid = int(prox.cluster.nextid.get())
    lxc = prox.nodes(node).lxc
    upid = lxc.post(vmid=vmid, ostemplate=template, hostname=f"proxmoxer-{vmid}", memory=512,
                    rootfs=f"{storage}:2", net0=f"name=eth0,bridge={bridge},ip=dhcp",
                    password="secret-pw-1", unprivileged=1)
    task = wait_ok(prox, upid, "create_vm (lxc)")
    expect(task["type"] == "vzcreate" and task["id"] == str(vmid), f"create_vm (lxc): task {task!r}")
    config = lxc(vmid).config.get()
    expect("password" not in config, f"config shows the password: {config!r}")
    expect(config.get("rootfs", "").startswith(f"{storage}:") and "size=2G" in config["rootfs"],
           f"config rootfs: {config.get('rootfs')!r}")
    expect("hwaddr=" in config.get("net0", "") and config["net0"].startswith("name=eth0,"),
           f"config net0: {config.get('net0')!r}")
    ok(auth, f"create_vm (lxc) {vmid} -> rootfs {config['rootfs']}, net0 {config['net0']}")

    result = lxc(vmid).config.put(cores=2, digest=config["digest"])
    expect(result is None, f"update_vm (lxc): expected null, got {result!r}")
    expect(lxc(vmid).config.get()["cores"] == 2, "update_vm (lxc): cores did not change")
    try:
        lxc(vmid).config.put(cores=3, digest=config["digest"])
    except ResourceException as e:
        expect(e.status_code == 500 and "file changed by other user" in str(e.content),
               f"update_vm (lxc) with a stale digest: {e.status_code} {e.content!r}")
    else:
        raise CheckFailed("update_vm (lxc) with a stale digest: expected a refusal")
    ok(auth, "update_vm (lxc) with digest; a stale digest is refused")

    wait_ok(prox, lxc(vmid).status.start.post(), "vm_start (lxc)")
    current = lxc(vmid).status.current.get()
    expect(current.get("status") == "running" and current.get("type") == "lxc",
           f"status/current after start: {current!r}")
    listed = [c for c in lxc.get() if int(c["vmid"]) == vmid]
    expect(listed and listed[0]["status"] == "running", f"GET /nodes/{node}/lxc: {listed!r}")
    resources = [r for r in prox.cluster.resources.get(type="vm") if r["id"] == f"lxc/{vmid}"]
    expect(resources and resources[0]["type"] == "lxc", f"/cluster/resources: {resources!r}")
    ok(auth, f"vm_start (lxc) -> running, listed in /nodes/{node}/lxc and /cluster/resources")

    wait_ok(prox, lxc(vmid).snapshot.post(snapname="before", description="proxmoxer"), "snapshot (lxc)")
    names = [s["name"] for s in lxc(vmid).snapshot.get()]
    expect("before" in names and names[-1] == "current", f"snapshot list (lxc): {names!r}")
    ok(auth, f"snapshot (lxc) -> {names!r}")

    newid = vmid + 1
    task = wait_ok(prox, lxc(vmid).clone.post(newid=newid, snapname="before", hostname=f"proxmoxer-{newid}"),
                   "clone_vm (lxc)")
    expect(task["type"] == "vzclone" and task["id"] == str(vmid), f"clone_vm (lxc): task {task!r}")
    clone = lxc(newid).config.get()
    expect(clone.get("net0") != config.get("net0") and clone.get("hostname") == f"proxmoxer-{newid}",
           f"clone (lxc) should get a new MAC and its host name: {clone!r}")
    ok(auth, f"clone_vm (lxc) {vmid} -> {newid} ({clone['net0']})")

    wait_ok(prox, lxc(vmid).status.stop.post(), "vm_stop (lxc)")
    expect(lxc(vmid).status.current.get()["status"] == "stopped", "vm_stop (lxc): still running")
    for v in (newid, vmid):
        wait_ok(prox, lxc(v).delete(purge=1), f"destroy_vm (lxc) {v}")
        try:
            lxc(v).config.get()
        except ResourceException as e:
            expect(e.status_code == 500 and "does not exist" in str(e.content), f"config after destroy: {e.content!r}")
        else:
            raise CheckFailed(f"CT {v} still has a config after destroy")
    ok(auth, f"vm_stop (lxc), destroy_vm (lxc) {newid} and {vmid}")

def check_backup_restore(prox, auth, node, storage, bridge, backup_storage):
    """pool -> create -> vzdump twice -> prune to one -> restore into the pool -> clean up."""
    vmid = int(prox.cluster.nextid.get())
    pool = f"proxmoxer-{vmid}"
    prox.pools.post(poolid=pool, comment="proxmoxer backups")
    qemu = prox.nodes(node).qemu
    wait_ok(prox, qemu.post(vmid=vmid, name=f"backup-{vmid}", memory=512, pool=pool,
                            net0=f"virtio,bridge={bridge}", scsi0=f"{storage}:1"), "create_vm")
    members = prox.pools.get(poolid=pool)[0]["members"]
    expect([m["vmid"] for m in members] == [vmid], f"pool members: {members!r}")
    ok(auth, f"create_vm {vmid} in pool {pool}")

    volids = []
    for i in range(2):
        if i:
            time.sleep(1.1)  # backup names carry the second
        upid = prox.nodes(node).vzdump.post(vmid=vmid, storage=backup_storage, compress="zstd",
                                            mode="snapshot", **{"notes-template": "{{guestname}}"})
        task = wait_ok(prox, upid, "vzdump")
        expect(task["type"] == "vzdump" and task["id"] == str(vmid), f"vzdump: task {task!r}")
        lines = [l["t"] for l in prox.nodes(node).tasks(upid).log.get(limit=1000)]
        expect(any(l.startswith("INFO: creating vzdump archive") for l in lines), f"vzdump log: {lines!r}")
        expect("INFO: Backup job finished successfully" in lines, f"vzdump log: {lines!r}")
    content = prox.nodes(node).storage(backup_storage).content.get(content="backup", vmid=vmid)
    volids = sorted(c["volid"] for c in content)
    expect(len(volids) == 2, f"backups of {vmid}: {content!r}")
    for c in content:
        expect(c.get("subtype") == "qemu" and c.get("notes") == f"backup-{vmid}", f"backup entry: {c!r}")
    config = prox.nodes(node).vzdump.extractconfig.get(volume=volids[-1])
    expect(f"name: backup-{vmid}" in config, f"extractconfig: {config!r}")
    ok(auth, f"vzdump x2 -> {volids!r}")

    marks = prox.nodes(node).storage(backup_storage).prunebackups.get(**{"prune-backups": "keep-last=1", "vmid": vmid})
    by = {m["volid"]: m["mark"] for m in marks}
    expect(by == {volids[0]: "remove", volids[1]: "keep"}, f"prune dry run: {marks!r}")
    wait_ok(prox, prox.nodes(node).storage(backup_storage).prunebackups.delete(
        **{"prune-backups": "keep-last=1", "vmid": vmid}), "prunebackups")
    left = [c["volid"] for c in prox.nodes(node).storage(backup_storage).content.get(content="backup", vmid=vmid)]
    expect(left == [volids[1]], f"after prune: {left!r}")
    ok(auth, f"prunebackups keep-last=1 -> {left!r}")

    newid = vmid + 1
    task = wait_ok(prox, qemu.post(vmid=newid, archive=volids[1], unique=1, pool=pool, storage=storage), "restore")
    expect(task["type"] == "qmrestore" and task["id"] == str(newid), f"restore: task {task!r}")
    restored = qemu(newid).config.get()
    expect(restored.get("name") == f"backup-{vmid}", f"restored config: {restored!r}")
    expect(restored.get("scsi0", "").startswith(f"{storage}:"), f"restored scsi0: {restored.get('scsi0')!r}")
    members = sorted(m["vmid"] for m in prox.pools.get(poolid=pool)[0]["members"])
    expect(members == [vmid, newid], f"pool members after restore: {members!r}")
    try:
        qemu.post(vmid=newid, archive=volids[1])
    except ResourceException as e:
        expect(e.status_code == 500 and "already exists" in str(e.content), f"restore over {newid}: {e.content!r}")
    else:
        raise CheckFailed(f"restore over {newid} without force: expected a refusal")
    ok(auth, f"restore {volids[1]} -> {newid} in {pool}")

    for v in (newid, vmid):
        wait_ok(prox, qemu(v).delete(purge=1), f"destroy_vm {v}")
    wait_ok(prox, prox.nodes(node).storage(backup_storage).content(volids[1]).delete(), "delete backup")
    prox.pools.delete(poolid=pool)
    expect(all(p["poolid"] != pool for p in prox.pools.get()), "pool still listed")
    ok(auth, f"cleaned up {vmid}, {newid}, the backup and {pool}")


def check_ct_backup_restore(prox, auth, node, storage, bridge, backup_storage):
    """Containers: create -> vzdump twice -> prune to one -> restore=1 -> clean up."""
    template = ostemplate(prox, node)
    vmid = int(prox.cluster.nextid.get())
    lxc = prox.nodes(node).lxc
    wait_ok(prox, lxc.post(vmid=vmid, ostemplate=template, hostname=f"ctbackup-{vmid}", memory=512,
                           rootfs=f"{storage}:1", net0=f"name=eth0,bridge={bridge},ip=dhcp",
                           unprivileged=1), "create_vm (lxc)")
    volids = []
    for i in range(2):
        if i:
            time.sleep(1.1)  # backup names carry the second
        upid = prox.nodes(node).vzdump.post(vmid=vmid, storage=backup_storage, compress="zstd",
                                            mode="snapshot", **{"notes-template": "{{guestname}}"})
        task = wait_ok(prox, upid, "vzdump (lxc)")
        expect(task["type"] == "vzdump" and task["id"] == str(vmid), f"vzdump (lxc): task {task!r}")
        lines = [l["t"] for l in prox.nodes(node).tasks(upid).log.get(limit=1000)]
        expect(f"INFO: Starting Backup of VM {vmid} (lxc)" in lines, f"vzdump (lxc) log: {lines!r}")
        expect("INFO: Backup job finished successfully" in lines, f"vzdump (lxc) log: {lines!r}")
    content = prox.nodes(node).storage(backup_storage).content.get(content="backup", vmid=vmid)
    volids = sorted(c["volid"] for c in content)
    expect(len(volids) == 2, f"backups of CT {vmid}: {content!r}")
    for c in content:
        expect(c.get("subtype") == "lxc" and c.get("notes") == f"ctbackup-{vmid}"
               and c["volid"].endswith(".tar.zst"), f"backup entry (lxc): {c!r}")
    config = prox.nodes(node).vzdump.extractconfig.get(volume=volids[-1])
    expect(f"hostname: ctbackup-{vmid}" in config, f"extractconfig (lxc): {config!r}")
    ok(auth, f"vzdump (lxc) x2 -> {volids!r}")

    wait_ok(prox, prox.nodes(node).storage(backup_storage).prunebackups.delete(
        **{"prune-backups": "keep-last=1", "vmid": vmid, "type": "lxc"}), "prunebackups (lxc)")
    left = [c["volid"] for c in prox.nodes(node).storage(backup_storage).content.get(content="backup", vmid=vmid)]
    expect(left == [volids[1]], f"after prune (lxc): {left!r}")
    ok(auth, f"prunebackups (lxc) keep-last=1 -> {left!r}")

    newid = vmid + 1
    task = wait_ok(prox, lxc.post(vmid=newid, ostemplate=volids[1], restore=1, unique=1, storage=storage),
                   "restore (lxc)")
    expect(task["type"] == "vzrestore" and task["id"] == str(newid), f"restore (lxc): task {task!r}")
    restored = lxc(newid).config.get()
    expect(restored.get("hostname") == f"ctbackup-{vmid}", f"restored config (lxc): {restored!r}")
    expect(restored.get("rootfs", "").startswith(f"{storage}:"), f"restored rootfs: {restored.get('rootfs')!r}")
    try:
        lxc.post(vmid=newid, ostemplate=volids[1], restore=1, storage=storage)
    except ResourceException as e:
        expect(e.status_code == 500 and "already exists" in str(e.content), f"restore over CT {newid}: {e.content!r}")
    else:
        raise CheckFailed(f"restore over CT {newid} without force: expected a refusal")
    ok(auth, f"restore (lxc) {volids[1]} -> {newid}")

    for v in (newid, vmid):
        wait_ok(prox, lxc(v).delete(purge=1), f"destroy_vm (lxc) {v}")
    wait_ok(prox, prox.nodes(node).storage(backup_storage).content(volids[1]).delete(), "delete backup (lxc)")
    ok(auth, f"cleaned up CTs {vmid}, {newid} and the backup")
def check_sdn(prox, auth, node, storage):
    """zone, vnet and subnet (pending) -> apply -> a VM on the vnet -> clean up."""
    zone, vnet = f"pxz{auth[0]}", f"pxv{auth[0]}"
    sdn = prox.cluster.sdn
    expect(sdn.zones.post(zone=zone, type="simple", ipam="pve", dhcp="dnsmasq") is None,
           "create zone: expected null")
    try:
        sdn.zones.post(zone=f"{zone}v", type="vlan")
    except ResourceException as e:
        expect(e.status_code == 500 and "missing value for required option 'bridge'" in str(e.content),
               f"vlan zone without bridge: {e.status_code} {e.content!r}")
    else:
        raise CheckFailed("vlan zone without bridge: expected a refusal")
    sdn.vnets.post(vnet=vnet, zone=zone, alias="proxmoxer")
    sdn.vnets(vnet).subnets.post(
        subnet="10.77.0.0/24", type="subnet", gateway="10.77.0.1",
        **{"dhcp-range": ["start-address=10.77.0.100,end-address=10.77.0.149",
                          "start-address=10.77.0.200,end-address=10.77.0.209"]})
    pending = {z["zone"]: z for z in sdn.zones.get(pending=1)}
    expect(pending.get(zone, {}).get("state") == "new", f"pending zones: {pending!r}")
    expect(vnet not in [v["vnet"] for v in sdn.vnets.get(running=1)], "vnet running before apply")
    subnets = sdn.vnets(vnet).subnets.get()
    expect([x["subnet"] for x in subnets] == [f"{zone}-10.77.0.0-24"], f"subnets: {subnets!r}")
    ok(auth, f"zone {zone}, vnet {vnet}, subnet {subnets[0]['subnet']} pending")

    task = wait_ok(prox, sdn.put(), "reload (apply SDN)")
    expect(task["type"] == "reloadnetworkall", f"apply: task {task!r}")
    running = [v["vnet"] for v in sdn.vnets.get(running=1)]
    expect(vnet in running, f"running vnets after apply: {running!r}")
    bridges = [i["iface"] for i in prox.nodes(node).network.get(type="any_bridge")]
    expect(vnet in bridges, f"any_bridge after apply: {bridges!r}")
    ok(auth, f"applied: {vnet} is a bridge of {node}")

    vmid = int(prox.cluster.nextid.get())
    qemu = prox.nodes(node).qemu
    wait_ok(prox, qemu.post(vmid=vmid, name=f"sdn-{vmid}", memory=512, scsi0=f"{storage}:1",
                            net0=f"virtio,bridge={vnet}"), "create_vm on the vnet")
    wait_ok(prox, qemu(vmid).status.start.post(), "vm_start on the vnet")
    expect(qemu(vmid).status.current.get()["status"] == "running", "VM on the vnet is not running")
    mac = qemu(vmid).config.get()["net0"].split(",")[0].split("=")[1]
    ips = sdn.ipams("pve").status.get()
    mine = [i for i in ips if i.get("vmid") == vmid]
    expect(len(mine) == 1 and mine[0]["ip"] == "10.77.0.100" and mine[0]["mac"] == mac,
           f"IPAM entries of VM {vmid}: {ips!r}")
    ok(auth, f"VM {vmid} runs on {vnet} with {mine[0]['ip']} from the DHCP range")

    wait_ok(prox, qemu(vmid).status.stop.post(), "vm_stop")
    wait_ok(prox, qemu(vmid).delete(purge=1), "destroy_vm")
    sdn.vnets(vnet).subnets(f"{zone}-10.77.0.0-24").delete()
    sdn.vnets(vnet).delete()
    sdn.zones(zone).delete()
    deleted = {v["vnet"]: v for v in sdn.vnets.get(pending=1)}
    expect(deleted.get(vnet, {}).get("state") == "deleted", f"pending vnets after delete: {deleted!r}")
    wait_ok(prox, sdn.put(), "reload (apply the removals)")
    expect(zone not in [z["zone"] for z in sdn.zones.get(running=1)], "zone still running")
    ok(auth, "destroy_vm, subnet/vnet/zone removed and applied")
def check_firewall(prox, auth, node, storage):
    """Security group, alias, IP set, a VM's options and rules; all removed after."""
    fw = prox.cluster.firewall
    group, alias, ipset = f"pxf-{auth}"[:18], f"pxf-{auth}-gw", f"pxf-{auth}-set"
    fw.groups.post(group=group, comment="proxmoxer")
    fw.groups(group).post(type="in", action="ACCEPT", macro="SSH", enable=1)
    fw.groups(group).post(type="in", action="ACCEPT", proto="tcp", dport="80:81")
    rules = fw.groups(group).get()
    expect([r["pos"] for r in rules] == [0, 1], f"group rules pos: {rules!r}")
    expect(rules[0].get("dport") == "80:81" and rules[1].get("macro") == "SSH",
           f"a new rule goes on top: {rules!r}")
    fw.groups(group)(0).put(moveto=2)
    expect([r.get("macro") for r in fw.groups(group).get()] == ["SSH", None], "moveto did not move")
    try:
        fw.groups(group).post(type="in", action="ACCEPT", macro="NoSuchMacro")
    except ResourceException as e:
        expect(e.status_code == 400 and "unknown macro 'NoSuchMacro'" in str(getattr(e, "errors", "")) + str(e.content),
               f"unknown macro: {e.status_code} {e.errors!r}")
    else:
        raise CheckFailed("a rule with an unknown macro was taken")
    ok(auth, f"security group {group}: rules on top, moved, bad macro refused")

    fw.aliases.post(name=alias, cidr="192.0.2.1", comment="gateway")
    expect(fw.aliases(alias).get()["cidr"] == "192.0.2.1", "alias read back")
    fw.ipset.post(name=ipset, comment="proxmoxer")
    fw.ipset(ipset).post(cidr="198.51.100.7/24")
    fw.ipset(ipset).post(cidr=alias, nomatch=1)
    entries = fw.ipset(ipset).get()
    expect([e["cidr"] for e in entries] == ["198.51.100.0/24", alias], f"ipset entries: {entries!r}")
    entry = fw.ipset(ipset)("198.51.100.0/24").get()
    expect(entry["cidr"] == "198.51.100.0/24", f"read_ip: {entry!r}")
    try:
        fw.ipset(ipset).post(cidr="198.51.100.0/24")
    except ResourceException as e:
        expect(e.status_code == 400, f"duplicate entry: {e.status_code}")
    else:
        raise CheckFailed("a duplicate IP set entry was taken")
    ok(auth, f"alias {alias}, IP set {ipset} with {len(entries)} entries")

    vmid = int(prox.cluster.nextid.get())
    qemu = prox.nodes(node).qemu
    wait_ok(prox, qemu.post(vmid=vmid, memory=128), "create_vm")
    vfw = qemu(vmid).firewall
    digest = vfw.options.get()["digest"]
    vfw.options.put(enable=1, policy_in="DROP", digest=digest)
    options = vfw.options.get()
    expect(options.get("enable") == 1 and options.get("policy_in") == "DROP", f"options: {options!r}")
    vfw.rules.post(type="group", action=group, enable=1)
    vfw.rules.post(type="in", action="ACCEPT", source=alias, dest="+" + ipset, proto="tcp", dport="22")
    rules = vfw.rules.get()
    expect([r["type"] for r in rules] == ["in", "group"], f"vm rules: {rules!r}")
    vfw.rules(0).put(comment="ssh from the gateway", digest=rules[0]["digest"])
    expect(vfw.rules(0).get().get("comment") == "ssh from the gateway", "update_rule")
    vfw.rules(1).delete()
    expect(len(vfw.rules.get()) == 1, "delete_rule")
    refs = {r["ref"] for r in vfw.refs.get()}
    expect(alias in refs and "+" + ipset in refs, f"refs: {refs!r}")
    ok(auth, f"VM {vmid} firewall: options, rules with references, refs")

    wait_ok(prox, qemu(vmid).delete(purge=1), "destroy_vm")
    fw.groups(group)(1).delete()
    fw.groups(group)(0).delete()
    fw.groups(group).delete()
    fw.ipset(ipset).delete(force=1)
    fw.aliases(alias).delete()
    expect(group not in [g["group"] for g in fw.groups.get()], "group still listed")
    ok(auth, "firewall objects removed")


def check_lists(prox, auth, backup_storage):
    """A list as proxmoxer sends it: the key repeated (content=iso&content=vztmpl)."""
    sid = f"proxmoxer-lists-{auth}"
    prox.storage.post(storage=sid, type="dir", path=f"/var/tmp/{sid}", content=["iso", "vztmpl"], disable=1)
    conf = prox.storage(sid).get()
    expect(conf.get("content") == "iso,vztmpl", f"storage content from a list: {conf!r}")
    pool = f"proxmoxer-lists-{auth}"
    prox.pools.post(poolid=pool)
    prox.pools.put(poolid=pool, storage=[sid, backup_storage])
    members = {m.get("storage") for m in prox.pools.get(poolid=pool)[0]["members"]}
    expect(members == {sid, backup_storage}, f"pool members from a list: {members!r}")
    try:
        prox.pools.put(poolid=pool, comment=["one", "two"])
    except ResourceException as e:
        expect(e.status_code == 400 and "got ARRAY" in str(e), f"a list for a plain string: {e!r}")
    else:
        raise CheckFailed("a list for a plain string: expected a refusal")
    prox.pools.put(poolid=pool, storage=[sid, backup_storage], delete=1)
    prox.pools.delete(poolid=pool)
    prox.storage(sid).delete()
    ok(auth, f"lists as repeated keys: {sid} content iso,vztmpl; {pool} took two storages")

def main():
    host = env("PVE_HOST")
    port = int(env("PVE_PORT"))
    user = env("PVE_USER")
    password = env("PVE_PASSWORD")
    token_name = env("PVE_TOKEN_NAME")
    token_value = env("PVE_TOKEN_VALUE")

    prox = ProxmoxAPI(host, port=port, user=user, password=password, verify_ssl=False)
    ticket, csrf = prox.get_tokens()
    expect(ticket and ticket.startswith("PVE:"), f"login: ticket {ticket!r} does not start with 'PVE:'")
    expect(csrf, "login: no CSRFPreventionToken")
    ok("password", f"login as {user}")
    check_api(prox, "password")
    node = os.environ.get("PVE_NODE") or prox.nodes.get()[0]["node"]
    storage = os.environ.get("PVE_STORAGE", "local-lvm")
    bridge = os.environ.get("PVE_BRIDGE", "vmbr0")
    backup_storage = os.environ.get("PVE_BACKUP_STORAGE", "local")
    check_vm_lifecycle(prox, "password", node, storage, bridge)
    check_ct_lifecycle(prox, "password", node, storage, bridge)

    check_backup_restore(prox, "password", node, storage, bridge, backup_storage)
    check_ct_backup_restore(prox, "password", node, storage, bridge, backup_storage)
    check_sdn(prox, "password", node, storage)
    check_firewall(prox, "password", node, storage)
    check_lists(prox, "password", backup_storage)

    prox = ProxmoxAPI(host, port=port, user=user, token_name=token_name, token_value=token_value, verify_ssl=False)
    check_api(prox, "token")
    check_vm_lifecycle(prox, "token", node, storage, bridge)
    check_ct_lifecycle(prox, "token", node, storage, bridge)

    check_backup_restore(prox, "token", node, storage, bridge, backup_storage)
    check_ct_backup_restore(prox, "token", node, storage, bridge, backup_storage)
    check_sdn(prox, "token", node, storage)
    check_firewall(prox, "token", node, storage)
    check_ha(prox, "token", node, storage, bridge)

    try:
        ProxmoxAPI(host, port=port, user=user, password=password + "-wrong", verify_ssl=False)
    except AuthenticationError as e:
        ok("password", f"wrong password -> AuthenticationError ({e})")
    else:
        raise CheckFailed("wrong password: expected AuthenticationError, login succeeded")

    bad = ProxmoxAPI(host, port=port, user=user, token_name=token_name, token_value="00000000-0000-0000-0000-000000000000", verify_ssl=False)
    try:
        result = bad.version.get()
    except ResourceException as e:
        expect(e.status_code == 401, f"wrong token secret: status {e.status_code}, expected 401 ({e})")
        ok("token", f"wrong token secret -> ResourceException {e.status_code}")
    else:
        raise CheckFailed(f"wrong token secret: expected ResourceException 401, got {result!r}")

    print("ALL OK", flush=True)


if __name__ == "__main__":
    try:
        main()
    except CheckFailed as e:
        print(f"FAIL: {e}", flush=True)
        sys.exit(1)
    except Exception:
        print("FAIL: unexpected exception", flush=True)
        traceback.print_exc(file=sys.stdout)
        sys.exit(1)
