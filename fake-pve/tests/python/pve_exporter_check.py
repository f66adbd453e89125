"""Runs prometheus-pve-exporter, unmodified, against fake-pve and scrapes it.

The exporter (the `pve_exporter` command of the PyPI package
`prometheus-pve-exporter`) listens on a free loopback port with every
collector on; one scrape of `/pve?target=<fake-pve>` must answer 200 with
the metric families of each collector and no error, and the exporter's
own `/metrics` must count no request error.

Environment: PVE_TARGET (host:port of fake-pve), PVE_USER,
PVE_TOKEN_NAME, PVE_TOKEN_VALUE, PVE_NODE (the local node).
Prints one line per check and `ALL OK` at the end.
"""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

COLLECTORS = [
    "status",
    "version",
    "node",
    "cluster",
    "resources",
    "backup-info",
    "qdevice",
    "config",
    "replication",
    "subscription",
]

# Families each collector yields for the scenario of the test (a cluster
# of two nodes, a running VM with onboot set, an active subscription).
EXPECTED = [
    "pve_up",  # status
    "pve_version_info",  # version
    "pve_node_info",  # node
    "pve_cluster_info",  # cluster
    "pve_cpu_usage_ratio",  # resources
    "pve_memory_usage_bytes",
    "pve_disk_size_bytes",
    "pve_network_receive_bytes",
    "pve_uptime_seconds",
    "pve_guest_info",
    "pve_storage_info",
    "pve_not_backed_up_total",  # backup-info
    "pve_onboot_status",  # config
    "pve_subscription_info",  # subscription
    "pve_subscription_status",
    "pve_subscription_next_due_timestamp_seconds",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (loopback)
        return r.status, r.read().decode()


def families(text):
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            names.add(line.split()[2])
    return names


def samples(text, family):
    return [l for l in text.splitlines() if l.startswith(family + "{") or l.startswith(family + " ")]


def main():
    target = os.environ["PVE_TARGET"]
    node = os.environ["PVE_NODE"]
    port = free_port()
    env = dict(os.environ)
    env["PVE_VERIFY_SSL"] = "false"
    cmd = [
        sys.executable,
        "-m",
        "pve_exporter",
        "--web.listen-address",
        f"127.0.0.1:{port}",
    ] + [f"--collector.{c}" for c in COLLECTORS]
    proc = subprocess.Popen(  # noqa: S603
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 60
        while True:
            try:
                status, _ = get(f"http://127.0.0.1:{port}/", timeout=2)
                if status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                raise SystemExit(f"the exporter did not come up:\n{out}")
            time.sleep(0.2)
        print("exporter up")

        url = f"http://127.0.0.1:{port}/pve?target={target}&cluster=1&node=1"
        try:
            status, text = get(url)
        except urllib.error.HTTPError as e:
            raise SystemExit(f"scrape failed: {e.code} {e.read().decode()}")
        assert status == 200, status
        got = families(text)
        missing = [f for f in EXPECTED if f not in got]
        assert not missing, f"missing families {missing} in:\n{text}"
        print(f"scrape has {len(got)} families, all {len(EXPECTED)} expected")

        up = samples(text, "pve_up")
        assert any(f'id="node/{node}"' in l and l.endswith(" 1.0") for l in up), up
        assert any('id="qemu/100"' in l and l.endswith(" 1.0") for l in up), up
        print("node and running VM up")

        sub = samples(text, "pve_subscription_status")
        assert any('status="active"' in l and l.endswith(" 1.0") for l in sub), sub
        info = samples(text, "pve_subscription_info")
        assert any('level="c"' in l for l in info), info
        print("subscription active, level c")

        onboot = samples(text, "pve_onboot_status")
        assert any('id="qemu/100"' in l and l.endswith(" 1.0") for l in onboot), onboot
        print("onboot status of VM 100")

        _, own = get(f"http://127.0.0.1:{port}/metrics")
        errors = [
            l
            for l in own.splitlines()
            if l.startswith("pve_request_errors_total{") and not l.endswith(" 0.0")
        ]
        assert not errors, errors
        print("no request errors")
        print("ALL OK")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


if __name__ == "__main__":
    main()
