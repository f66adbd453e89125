"""Run a fake-pve process and drive it through its control API.

Only the standard library is used (``subprocess``, ``urllib``, ``ssl``):
proxmoxer is needed only for :meth:`FakePve.proxmoxer`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

__all__ = [
    "ControlError",
    "FakePve",
    "FakePveError",
    "StartError",
    "Token",
    "find_binary",
]

#: The only address fake-pve is started on: loopback, never a public one.
HOST = "127.0.0.1"

#: root@pam, whose ticket drives the control API.
ROOT = "root@pam"

PathLike = Union[str, "os.PathLike[str]"]

_URL_LINE = re.compile(r"API at (https?)://127\.0\.0\.1:(\d+)/api2/json")
_FINGERPRINT_LINE = re.compile(r"TLS fingerprint \(SHA-256\): ([0-9A-F:]{95})")
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class FakePveError(Exception):
    """Anything that goes wrong running or driving fake-pve."""


class StartError(FakePveError):
    """fake-pve did not start (its output is in the message)."""


class ControlError(FakePveError):
    """A call to fake-pve answered with an error status."""

    def __init__(self, method: str, path: str, status: int, reason: str, errors: Any = None):
        self.method = method
        self.path = path
        self.status = status
        self.reason = reason
        self.errors = errors
        text = f"{method} {path}: {status} {reason}"
        if errors:
            text += f" {json.dumps(errors, sort_keys=True)}"
        super().__init__(text)


@dataclass(frozen=True)
class Token:
    """An API token made by :meth:`FakePve.create_token`."""

    #: ``user@realm!name``
    full_id: str
    #: the secret (shown once, as PVE does)
    secret: str

    @property
    def user(self) -> str:
        return self.full_id.split("!", 1)[0]

    @property
    def name(self) -> str:
        return self.full_id.split("!", 1)[1]

    @property
    def header(self) -> str:
        """The ``Authorization`` header's value."""
        return f"PVEAPIToken={self.full_id}={self.secret}"


def find_binary(binary: Optional[PathLike] = None) -> str:
    """The ``fake-pve`` executable to run.

    In order: ``binary`` if given, the ``FAKE_PVE_BIN`` environment
    variable, the one the wheel put beside this interpreter's scripts,
    then ``fake-pve`` on the ``PATH``.
    """
    for source, value in (("binary", binary), ("FAKE_PVE_BIN", os.environ.get("FAKE_PVE_BIN"))):
        if value:
            path = Path(value)
            if not path.is_file():
                raise FakePveError(f"{source}={value}: no such file")
            if not os.access(path, os.X_OK):
                raise FakePveError(f"{source}={value}: not executable")
            return str(path)
    scripts = sysconfig.get_path("scripts")
    name = "fake-pve.exe" if sys.platform == "win32" else "fake-pve"
    if scripts:
        candidate = Path(scripts) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("fake-pve")
    if found:
        return found
    raise FakePveError(
        "the fake-pve binary was not found: install the package with "
        "`pip install ./python` (from a fake-pve checkout) or a fake-pve wheel, "
        "or set FAKE_PVE_BIN to the binary's path"
    )


def _startup_timeout(given: Optional[float]) -> float:
    """Seconds to wait for the binary's address: ``given``, else the
    ``FAKE_PVE_STARTUP_TIMEOUT`` environment variable, else 30."""
    source, value = "startup_timeout", given
    if value is None:
        source, value = "FAKE_PVE_STARTUP_TIMEOUT", os.environ.get("FAKE_PVE_STARTUP_TIMEOUT")
        if not value:
            return 30.0
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source} must be a number of seconds, not {value!r}") from None
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"{source} must be a positive number of seconds, not {value!r}")
    return seconds


def _scenario_path(scenario: Any) -> Path:
    """The file of a scenario given as a path; refuses what is neither a
    path nor a mapping."""
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        if not path.is_file():
            raise FileNotFoundError(f"scenario {scenario}: no such file")
        return path
    raise TypeError(
        f"scenario must be a path or a mapping (a parsed scenario), not {type(scenario).__name__}"
    )


def _scenario_file(scenario: Any, tmp: Path) -> Optional[Path]:
    """The ``--seed`` file for a scenario given as a path or a mapping."""
    if scenario is None:
        return None
    if isinstance(scenario, Mapping):
        path = tmp / "scenario.json"
        # JSON is YAML: fake-pve reads it as a scenario file.
        path.write_text(json.dumps(scenario))
        return path
    return _scenario_path(scenario).resolve()


def scenario_body(scenario: Any) -> bytes:
    """A scenario (path or mapping) as the body of ``POST /_fake/seed``."""
    if isinstance(scenario, Mapping):
        return json.dumps(scenario).encode()
    return _scenario_path(scenario).read_bytes()


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"checkpoint name {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
    return name


class FakePve:
    """A fake-pve process on a free loopback port.

    ::

        with FakePve(scenario="three-node-cluster.yaml") as pve:
            pve.url        # https://127.0.0.1:PORT
            pve.ca_cert    # the PEM file to verify its certificate against
            pve.checkpoint("clean"); ...; pve.restore("clean")

    ``scenario`` is a scenario file (YAML or JSON) or a mapping; by default
    a fresh single node. ``pve_version`` is ``"8.4"``, ``"9.1"`` or ``"9.2"`` (the
    binary's default). ``latency`` is a profile name (``"instant"``,
    ``"documented"``) or a profile file. ``binary`` overrides
    :func:`find_binary`. ``extra_args`` are passed on to the binary.
    """

    def __init__(
        self,
        scenario: Any = None,
        pve_version: Optional[str] = None,
        latency: Optional[PathLike] = None,
        *,
        root_password: str = "password",
        random_seed: Optional[int] = None,
        binary: Optional[PathLike] = None,
        startup_timeout: Optional[float] = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        if pve_version is not None and not isinstance(pve_version, str):
            raise TypeError(f"pve_version must be a string such as '9.1', not {pve_version!r}")
        if latency is not None and not isinstance(latency, (str, os.PathLike)):
            raise TypeError(f"latency must be a profile name or file, not {latency!r}")
        if not isinstance(root_password, str) or not root_password:
            raise ValueError("root_password must be a non-empty string")
        if random_seed is not None and (not isinstance(random_seed, int) or random_seed < 0):
            raise ValueError(f"random_seed must be a non-negative integer, not {random_seed!r}")
        if isinstance(extra_args, str):
            raise TypeError("extra_args must be a sequence of arguments, not one string")
        if scenario is not None and not isinstance(scenario, (str, os.PathLike, Mapping)):
            raise TypeError(
                f"scenario must be a path or a mapping (a parsed scenario), not {type(scenario).__name__}"
            )
        if isinstance(scenario, (str, os.PathLike)) and not Path(scenario).is_file():
            raise FileNotFoundError(f"scenario {scenario}: no such file")
        self.scenario = scenario
        self.pve_version = pve_version
        self.latency = latency
        self.password = root_password
        self.user = ROOT
        self.random_seed = random_seed
        self.binary = find_binary(binary)
        self.startup_timeout = _startup_timeout(startup_timeout)
        self.extra_args = list(extra_args)
        self.process: Optional[subprocess.Popen] = None
        self.port: Optional[int] = None
        self.host = HOST
        self.scheme = "https"
        self.ca_cert: Optional[str] = None
        self.fingerprint: Optional[str] = None
        self._tmp: Optional[Path] = None
        self._log = None
        self._ticket: Optional[str] = None
        self._csrf: Optional[str] = None
        self._context: Optional[ssl.SSLContext] = None

    # ----- life -------------------------------------------------------------

    def __enter__(self) -> "FakePve":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self.port else "not started"
        return f"<FakePve {where}>"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> "FakePve":
        """Starts the process and waits until it answers."""
        if self.process is not None:
            raise FakePveError("this FakePve was already started")
        self._tmp = Path(tempfile.mkdtemp(prefix="fake-pve-"))
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        assert self._tmp is not None
        args = [
            self.binary,
            "--listen", f"{HOST}:0",
            "--root-password", self.password,
            # Tests are not to wait PVE's 3 s after a bad password.
            "--auth-failure-delay", "0",
            "--access-log", str(self.access_log_path),
        ]
        seed = _scenario_file(self.scenario, self._tmp)
        if seed is not None:
            args += ["--seed", str(seed)]
        if self.pve_version is not None:
            args += ["--pve-version", self.pve_version]
        if self.latency is not None:
            args += ["--profile", os.fspath(self.latency)]
        if self.random_seed is not None:
            args += ["--random-seed", str(self.random_seed)]
        args += self.extra_args
        # The binary reads FAKE_PVE_* settings from its environment: none
        # of the caller's may change what was asked for here.
        env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_PVE_")}
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        deadline = time.monotonic() + self.startup_timeout
        while True:
            text = self.output()
            url = _URL_LINE.search(text)
            fp = _FINGERPRINT_LINE.search(text)
            if url and (url.group(1) == "http" or fp):
                break
            if self.process.poll() is not None:
                raise StartError(
                    f"fake-pve exited with status {self.process.returncode} at start:\n{text.strip()}"
                )
            if time.monotonic() > deadline:
                raise StartError(
                    f"fake-pve did not print its address within {self.startup_timeout} s:\n{text.strip()}"
                )
            time.sleep(0.02)
        self.scheme = url.group(1)
        self.port = int(url.group(2))
        if self.scheme == "https":
            assert fp is not None
            self.fingerprint = fp.group(1)
            self._pin_certificate(deadline)
        self._wait_ready(deadline)
        if self.scheme == "https":
            self._trust_cluster_ca()

    def _pin_certificate(self, deadline: float) -> None:
        """Fetches the server's certificate and keeps it in a PEM file once
        its SHA-256 is the one the process printed."""
        assert self._tmp is not None and self.port is not None
        while True:
            try:
                pem = ssl.get_server_certificate((HOST, self.port), timeout=5)
                break
            except OSError as e:
                if time.monotonic() > deadline:
                    raise StartError(f"fake-pve's certificate could not be read: {e}") from e
                time.sleep(0.05)
        der = ssl.PEM_cert_to_DER_cert(pem)
        got = ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())
        if got != self.fingerprint:
            raise StartError(
                f"the certificate on port {self.port} ({got}) is not the one fake-pve printed "
                f"({self.fingerprint})"
            )
        path = self._tmp / "ca.pem"
        path.write_text(pem)
        self.ca_cert = str(path)
        self._context = ssl.create_default_context(cafile=self.ca_cert)
        # The node certificate is signed by the cluster CA, not by itself:
        # until the CA is read, the pinned certificate is trusted alone.
        self._context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN

    def _trust_cluster_ca(self) -> None:
        """Adds the cluster CA (``pve-root-ca.pem``), read over the pinned
        connection, to the ``ca_cert`` file: what a PVE user downloads to
        verify the nodes' certificates. A server given its own
        certificate (``--cert``) is verified against that certificate."""
        assert self._tmp is not None and self.ca_cert is not None
        nodes = self.api("GET", "/nodes")
        if not nodes:
            return
        infos = self.api("GET", f"/nodes/{nodes[0]['node']}/certificates/info")
        ca = [i["pem"] for i in infos if i.get("filename") == "pve-root-ca.pem"]
        if not ca:
            return
        path = Path(self.ca_cert)
        path.write_text(path.read_text() + ca[0])
        self._context = ssl.create_default_context(cafile=self.ca_cert)

    def _wait_ready(self, deadline: float) -> None:
        while True:
            try:
                self._login()
                self.health()
                return
            except (OSError, FakePveError) as e:
                if not self.running:
                    raise StartError(
                        f"fake-pve exited with status {self.process.returncode}:\n{self.output().strip()}"
                    ) from e
                if time.monotonic() > deadline:
                    raise StartError(f"fake-pve does not answer at {self.url}: {e}") from e
                time.sleep(0.05)

    def stop(self, timeout: float = 15.0) -> None:
        """Stops the process (SIGTERM, then SIGKILL) and removes its files."""
        proc = self.process
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        self._ticket = self._csrf = None

    # ----- where ------------------------------------------------------------

    @property
    def url(self) -> str:
        """``https://127.0.0.1:PORT`` (the dashboard; the API is under ``/api2/json``)."""
        if self.port is None:
            raise FakePveError("fake-pve is not started")
        return f"{self.scheme}://{HOST}:{self.port}"

    @property
    def api_url(self) -> str:
        return self.url + "/api2/json"

    @property
    def verify(self) -> Union[str, bool]:
        """What to give ``requests``' or proxmoxer's ``verify``/``verify_ssl``."""
        return self.ca_cert if self.ca_cert else False

    @property
    def credentials(self) -> tuple:
        """``("root@pam", password)``"""
        return (self.user, self.password)

    @property
    def log_path(self) -> Path:
        """fake-pve's standard output and error."""
        if self._tmp is None:
            raise FakePveError("fake-pve is not started")
        return self._tmp / "fake-pve.log"

    @property
    def access_log_path(self) -> Path:
        """The access log, one line per request."""
        if self._tmp is None:
            raise FakePveError("fake-pve is not started")
        return self._tmp / "access.log"

    def output(self) -> str:
        """What fake-pve printed so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except (OSError, FakePveError):
            return ""

    def ssl_context(self) -> Optional[ssl.SSLContext]:
        """An SSL context that trusts this fake-pve's certificate only."""
        return self._context

    # ----- HTTP -------------------------------------------------------------

    def _send(
        self,
        method: str,
        path: str,
        *,
        form: Optional[Mapping[str, Any]] = None,
        body: Optional[bytes] = None,
        content_type: Optional[str] = None,
        auth: bool = True,
    ) -> Any:
        if not self.running:
            raise FakePveError("fake-pve is not running")
        headers = {"Accept": "application/json"}
        if form is not None:
            body = urllib.parse.urlencode(
                {k: _form_value(v) for k, v in form.items() if v is not None}
            ).encode()
            content_type = "application/x-www-form-urlencoded"
        if content_type:
            headers["Content-Type"] = content_type
        if auth and self._ticket:
            headers["Cookie"] = f"PVEAuthCookie={urllib.parse.quote(self._ticket, safe='')}"
            if method != "GET" and self._csrf:
                headers["CSRFPreventionToken"] = self._csrf
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self._context, timeout=60) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            errors = None
            try:
                errors = json.loads(raw).get("errors")
            except (ValueError, AttributeError):
                pass
            raise ControlError(method, path, e.code, e.reason or "", errors) from None
        if not raw:
            return None
        doc = json.loads(raw)
        return doc.get("data") if isinstance(doc, dict) and "data" in doc else doc

    def _login(self) -> None:
        data = self._send(
            "POST",
            "/api2/json/access/ticket",
            form={"username": self.user, "password": self.password},
            auth=False,
        )
        self._ticket = data["ticket"]
        self._csrf = data["CSRFPreventionToken"]

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """A call as root@pam (``path`` from the server's root, e.g.
        ``/_fake/health`` or ``/api2/json/version``); answers the
        envelope's ``data``. A ticket that expired (the clock was moved
        past it) is renewed once."""
        if self._ticket is None:
            self._login()
        try:
            return self._send(method, path, **kwargs)
        except ControlError as e:
            if e.status != 401:
                raise
        self._login()
        return self._send(method, path, **kwargs)

    def api(self, method: str, path: str, **params: Any) -> Any:
        """A PVE API call as root@pam: ``pve.api("GET", "/nodes")``."""
        method = method.upper()
        path = "/api2/json/" + path.lstrip("/")
        if method in ("GET", "DELETE") and params:
            query = urllib.parse.urlencode({k: _form_value(v) for k, v in params.items()})
            return self.call(method, f"{path}?{query}")
        return self.call(method, path, form=params if method != "GET" else None)

    def _json(self, method: str, path: str, value: Any) -> Any:
        return self.call(method, path, body=json.dumps(value).encode(), content_type="application/json")

    # ----- the control API -----------------------------------------------

    def health(self) -> dict:
        """``GET /_fake/health``: version, nodes, vms, tasks, time."""
        return self.call("GET", "/_fake/health")

    def checkpoint(self, name: str = "default") -> None:
        """Saves the world as checkpoint ``name`` (replacing one of that name)."""
        self.call("POST", "/_fake/checkpoints", form={"name": _check_name(name)})

    def restore(self, name: str = "default") -> dict:
        """Returns the world (and latency profile) to checkpoint ``name``;
        the clock and tickets stay."""
        return self.call("POST", f"/_fake/checkpoints/{_check_name(name)}/restore")

    def checkpoints(self) -> list:
        return self.call("GET", "/_fake/checkpoints")

    def drop_checkpoint(self, name: str) -> None:
        self.call("DELETE", f"/_fake/checkpoints/{_check_name(name)}")

    def reset(self) -> None:
        """Back to the seed scenario (``POST /_fake/reset``)."""
        self.call("POST", "/_fake/reset")

    def seed(self, scenario: Any) -> None:
        """Loads a scenario (path or mapping): the world becomes it, and
        :meth:`reset` returns to it."""
        body = scenario_body(scenario)
        self.call("POST", "/_fake/seed", body=body, content_type="application/yaml")

    def state(self) -> dict:
        """The whole world as a state document."""
        return self.call("GET", "/_fake/state")

    def fault(self, rule: Optional[Mapping[str, Any]] = None, **fields: Any) -> int:
        """Adds a fault rule and answers its id::

            pve.fault(method="GET", path="/nodes/pve/status", status=503, count=1)

        The fields are those of the book's "Fault rules" chapter.
        """
        if rule is not None and fields:
            raise TypeError("give the rule either as a mapping or as keyword arguments, not both")
        rule = dict(rule if rule is not None else fields)
        if not rule:
            raise ValueError("a fault rule needs at least one field (path, status, delay_ms, drop, ...)")
        ids = self._json("POST", "/_fake/faults", rule)
        return ids[0] if isinstance(ids, list) and len(ids) == 1 else ids

    def faults(self) -> list:
        """The fault rules in force, with how often each fired."""
        return self.call("GET", "/_fake/faults")

    def clear_faults(self, rule_id: Optional[int] = None) -> None:
        """Removes one fault rule, or all of them."""
        path = "/_fake/faults" if rule_id is None else f"/_fake/faults/{int(rule_id)}"
        self.call("DELETE", path)

    def clock(self) -> dict:
        """``{now, now_ms, manual, advanced_ms}``"""
        return self.call("GET", "/_fake/clock")

    def advance(self, seconds: float) -> dict:
        """Moves the emulated clock forward (running tasks whose time has
        come end); answers the clock."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"seconds must be a number, not {seconds!r}")
        if not seconds >= 0 or seconds == float("inf"):
            raise ValueError(f"seconds must be finite and not negative, not {seconds!r}")
        return self.call("POST", "/_fake/clock", form={"advance_ms": round(seconds * 1000)})

    def latency_profile(self) -> dict:
        return self.call("GET", "/_fake/latency")

    def set_latency(self, profile: Union[str, Mapping[str, Any]], **options: Any) -> Any:
        """Switches the latency profile: a name (``"documented"``, with
        ``time_scale=``/``seed=``) or a whole profile as a mapping."""
        if isinstance(profile, str):
            doc = {"profile": profile, **options}
        elif isinstance(profile, Mapping):
            if options:
                raise TypeError("options go inside a whole profile")
            doc = dict(profile)
        else:
            raise TypeError(f"profile must be a name or a mapping, not {profile!r}")
        return self._json("PUT", "/_fake/latency", doc)

    def guest_agent(self, vmid: int) -> dict:
        """The guest-agent state of a VM."""
        return self.call("GET", f"/_fake/guests/{int(vmid)}")

    def set_guest_agent(self, vmid: int, **members: Any) -> Any:
        """Sets members of a VM's guest-agent state (``hostname=``, ``boot_delay_ms=``, ...)."""
        if not members:
            raise ValueError("give at least one member to set")
        return self._json("PUT", f"/_fake/guests/{int(vmid)}", members)

    def outbox(self) -> list:
        """What the notification system sent, oldest first: one delivery per
        target (``target``, ``type``, ``notification``, ``status``, ``detail``,
        ``request`` or ``mail``)."""
        return self.call("GET", "/_fake/notifications/outbox")

    def clear_outbox(self) -> None:
        """Forgets every delivery of the outbox."""
        self.call("DELETE", "/_fake/notifications/outbox")

    # ----- PVE helpers ----------------------------------------------------

    def create_token(
        self,
        name: str = "test",
        user: str = ROOT,
        *,
        privsep: bool = False,
        comment: Optional[str] = None,
        expire: Optional[int] = None,
    ) -> Token:
        """Makes an API token (``POST /access/users/{user}/token/{name}``).

        By default without privilege separation, so it holds its user's
        privileges. A reset between tests removes it with the rest."""
        if not isinstance(name, str) or not re.match(r"^[A-Za-z][A-Za-z0-9._-]*$", name):
            raise ValueError(f"token name {name!r}: start with a letter, then letters, digits, '.', '_' or '-'")
        data = self.api(
            "POST",
            f"/access/users/{urllib.parse.quote(user, safe='@')}/token/{name}",
            privsep=privsep,
            comment=comment,
            expire=expire,
        )
        return Token(full_id=data["full-tokenid"], secret=data["value"])

    def wait_task(self, upid: str, timeout: float = 60.0, interval: float = 0.05) -> dict:
        """Waits for a task to stop; answers its status. Raises
        :class:`FakePveError` on timeout (the emulated clock may need
        :meth:`advance` with a slow latency profile)."""
        node = upid.split(":")[1]
        path = f"/nodes/{node}/tasks/{urllib.parse.quote(upid, safe='')}/status"
        deadline = time.monotonic() + timeout
        while True:
            status = self.api("GET", path)
            if status.get("status") == "stopped":
                return status
            if time.monotonic() > deadline:
                raise FakePveError(f"task {upid} still running after {timeout} s")
            time.sleep(interval)

    def proxmoxer(self, token: Optional[Token] = None, **kwargs: Any):
        """A proxmoxer ``ProxmoxAPI`` on this fake-pve, logged in as
        root@pam (or with ``token``); needs proxmoxer installed."""
        try:
            from proxmoxer import ProxmoxAPI
        except ImportError as e:
            raise FakePveError("proxmoxer is not installed (pip install proxmoxer requests)") from e
        if self.port is None:
            raise FakePveError("fake-pve is not started")
        options: dict = {"port": self.port, "verify_ssl": self.verify, "service": "PVE"}
        if token is not None:
            options.update(user=token.user, token_name=token.name, token_value=token.secret)
        else:
            options.update(user=self.user, password=self.password)
        options.update(kwargs)
        return ProxmoxAPI(HOST, **options)


def _form_value(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)
