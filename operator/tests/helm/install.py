"""Lints and installs a Helm chart with Helm's own engine (helm-sdkpy, which
embeds Helm v4) against a minimal Kubernetes API server on loopback, and
prints what the API server received as JSON:

    {"lint": {...}, "manifest": "...", "objects": [...]}

Usage: install.py CHART RELEASE NAMESPACE VALUES_JSON

The API server answers discovery for the groups the chart uses, keeps
what is created in memory (Helm's release Secret is kept by name only:
Helm sends it as protobuf) and marks CustomResourceDefinitions
Established, as a real one does. It listens on 127.0.0.1 only and stops
with this script.
"""

import asyncio
import json
import os
import re
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

import helm_sdkpy

# (group, version) -> [(plural, kind, namespaced)]
RESOURCES = {
    ("", "v1"): [
        ("namespaces", "Namespace", False),
        ("secrets", "Secret", True),
        ("configmaps", "ConfigMap", True),
        ("serviceaccounts", "ServiceAccount", True),
        ("services", "Service", True),
    ],
    ("apps", "v1"): [("deployments", "Deployment", True)],
    ("policy", "v1"): [("poddisruptionbudgets", "PodDisruptionBudget", True)],
    ("networking.k8s.io", "v1"): [("networkpolicies", "NetworkPolicy", True)],
    ("rbac.authorization.k8s.io", "v1"): [
        ("clusterroles", "ClusterRole", False),
        ("clusterrolebindings", "ClusterRoleBinding", False),
        ("roles", "Role", True),
        ("rolebindings", "RoleBinding", True),
    ],
    ("apiextensions.k8s.io", "v1"): [
        ("customresourcedefinitions", "CustomResourceDefinition", False)
    ],
    ("coordination.k8s.io", "v1"): [("leases", "Lease", True)],
}

STORE = {}
CREATED = []
LOCK = threading.Lock()


def group_version(g, v):
    return f"{g}/{v}" if g else v


class Api(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def not_found(self):
        self.send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "NotFound", "code": 404, "message": "not found"})

    def body(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if "protobuf" in (self.headers.get("Content-Type") or ""):
            name = re.search(rb"sh\.helm\.release\.v1\.[a-z0-9.-]+", raw)
            return {"apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": name.group(0).decode() if name else "release"},
                    "type": "helm.sh/release.v1"}
        return json.loads(raw or b"{}")

    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/version":
            return self.send(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.0",
                                   "platform": "linux/amd64"})
        if path == "/api":
            return self.send(200, {"kind": "APIVersions", "versions": ["v1"],
                                   "serverAddressByClientCIDRs": [
                                       {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
        if path == "/apis":
            groups = [{"name": g, "versions": [{"groupVersion": group_version(g, v), "version": v}],
                       "preferredVersion": {"groupVersion": group_version(g, v), "version": v}}
                      for (g, v) in RESOURCES if g]
            return self.send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        for (g, v), kinds in RESOURCES.items():
            if path == ("/api/" + v if not g else f"/apis/{g}/{v}"):
                return self.send(200, {
                    "kind": "APIResourceList", "apiVersion": "v1",
                    "groupVersion": group_version(g, v),
                    "resources": [{"name": n, "singularName": "", "namespaced": ns, "kind": k,
                                   "verbs": ["create", "delete", "get", "list", "patch",
                                             "update", "watch"]}
                                  for (n, k, ns) in kinds]})
        with LOCK:
            if path in STORE:
                return self.send(200, STORE[path])
            if re.fullmatch(r"/apis?/.*/[a-z]+", path):
                items = [o for p, o in STORE.items() if p.rsplit("/", 1)[0] == path]
                return self.send(200, {"kind": "List", "apiVersion": "v1",
                                       "metadata": {"resourceVersion": "1"}, "items": items})
        return self.not_found()

    def do_POST(self):
        path = urlparse(self.path).path
        obj = self.body()
        meta = obj.setdefault("metadata", {})
        with LOCK:
            CREATED.append(json.loads(json.dumps(obj)))
            meta["resourceVersion"] = "1"
            meta.setdefault("uid", f"uid-{len(CREATED)}")
            if obj.get("kind") == "CustomResourceDefinition":
                obj["status"] = {"conditions": [
                    {"type": "Established", "status": "True"},
                    {"type": "NamesAccepted", "status": "True"}],
                    "acceptedNames": obj.get("spec", {}).get("names", {})}
            STORE[f"{path}/{meta['name']}"] = obj
        self.send(201, obj)

    def do_PUT(self):
        path = urlparse(self.path).path
        obj = self.body()
        with LOCK:
            STORE[path] = obj
        self.send(200, obj)

    def do_PATCH(self):
        path = urlparse(self.path).path
        self.body()
        with LOCK:
            if path not in STORE:
                return self.not_found()
            self.send(200, STORE[path])

    def do_DELETE(self):
        with LOCK:
            STORE.pop(urlparse(self.path).path, None)
        self.send(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})


def main():
    chart, release, namespace, values = sys.argv[1:5]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as home:
        kubeconfig = os.path.join(home, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {{server: "http://127.0.0.1:{server.server_address[1]}"}}
contexts:
- name: test
  context: {{cluster: test, user: test}}
current-context: test
users:
- name: test
  user: {{token: test}}
""")
        for var in ("HOME", "HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
            os.environ[var] = home
        config = helm_sdkpy.Configuration(namespace=namespace, kubeconfig=kubeconfig)
        lint = asyncio.run(helm_sdkpy.Lint(config).run(chart))
        release_info = asyncio.run(helm_sdkpy.Install(config).run(
            release, chart, values=json.loads(values), wait=False, timeout=60))
    server.shutdown()
    objects = [o for o in CREATED if o.get("type") != "helm.sh/release.v1"]
    json.dump({"lint": lint, "manifest": release_info.get("manifest", ""),
               "status": release_info.get("info", {}).get("status"),
               "objects": objects}, sys.stdout)


if __name__ == "__main__":
    main()
