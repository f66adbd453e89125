"""The pytest plugin of fake-pve (registered as the ``pytest11`` entry point).

Fixtures:

- ``fake_pve``: a :class:`fake_pve.FakePve` running for the session (one
  per pytest-xdist worker), its world returned to its starting point
  before each test through the control API's checkpoints, unless the test
  is marked ``@pytest.mark.fake_pve_keep``;
- ``fake_pve_proxmoxer``: a proxmoxer ``ProxmoxAPI`` logged in as
  root@pam on it (the test is skipped when proxmoxer is not installed).

Settings: the ini options ``fake_pve_scenario``, ``fake_pve_version`` and
``fake_pve_latency``; the command-line options ``--fake-pve-version`` and
``--fake-pve-latency`` (over the ini's); the marker
``@pytest.mark.fake_pve_scenario(PATH_OR_MAPPING)`` for one test.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Optional

import pytest

from ._server import FakePve, FakePveError

#: The checkpoint the session's world starts from.
START = "pytest-start"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fake-pve", "fake-pve (in-memory Proxmox VE)")
    group.addoption(
        "--fake-pve-version",
        dest="fake_pve_version",
        metavar="VERSION",
        default=None,
        help="PVE release the fake_pve fixture impersonates: 8.4, 9.1 or 9.2 (default: ini "
        "fake_pve_version, else fake-pve's own default)",
    )
    group.addoption(
        "--fake-pve-latency",
        dest="fake_pve_latency",
        metavar="PROFILE",
        default=None,
        help="latency profile of the fake_pve fixture: instant, documented or a profile "
        "file (default: ini fake_pve_latency, else instant)",
    )
    parser.addini(
        "fake_pve_scenario",
        "scenario file (YAML or JSON) of the fake_pve fixture, relative to the rootdir; "
        "a fresh single node when unset",
        default="",
    )
    parser.addini("fake_pve_version", "PVE release of the fake_pve fixture: 8.4, 9.1 or 9.2", default="")
    parser.addini("fake_pve_latency", "latency profile of the fake_pve fixture", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fake_pve_scenario(scenario): the fake_pve fixture's world for this test is this "
        "scenario (a file, relative to the test's file, or a mapping) instead of the session's",
    )
    config.addinivalue_line(
        "markers",
        "fake_pve_keep: the fake_pve fixture's world is not reset before this test "
        "(it goes on from the test before it on the same worker)",
    )


def _setting(config: pytest.Config, name: str) -> Optional[str]:
    value = config.getoption(name) or config.getini(name)
    return value or None


def _rootdir(config: pytest.Config) -> Path:
    inipath = getattr(config, "inipath", None)
    return Path(inipath).parent if inipath else Path(config.rootpath)


def _latency(config: pytest.Config) -> Optional[str]:
    value = _setting(config, "fake_pve_latency")
    if value is None or value in ("instant", "documented"):
        return value
    path = Path(value)
    if not path.is_absolute():
        path = Path(config.invocation_params.dir) / path
        if not path.is_file():
            path = _rootdir(config) / value
    if not path.is_file():
        raise pytest.UsageError(
            f"fake-pve latency profile {value!r}: not instant, documented or a file"
        )
    return str(path)


def _session_scenario(config: pytest.Config) -> Optional[Path]:
    value = config.getini("fake_pve_scenario")
    if not value:
        return None
    path = Path(value)
    if not path.is_absolute():
        path = _rootdir(config) / path
    if not path.is_file():
        raise pytest.UsageError(f"ini option fake_pve_scenario = {value}: no such file ({path})")
    return path.resolve()


class _World:
    """Which world the session's fake-pve holds, and the checkpoints the
    plugin made of the scenarios tests asked for."""

    def __init__(self, server: FakePve, start: Optional[Path]) -> None:
        self.server = server
        self.start_key = _key(start)
        self.current = self.start_key
        self.saved = {self.start_key: START}

    def prepare(self, scenario: Any, keep: bool) -> None:
        key = self.start_key if scenario is None else _key(scenario)
        if keep and key == self.current:
            return
        name = self.saved.get(key)
        if name is not None:
            self.server.restore(name)
        else:
            self.server.seed(scenario)
            name = "pytest-" + key[:40]
            self.server.checkpoint(name)
            self.saved[key] = name
        self.current = key
        if not keep:
            # Fault rules are no part of a checkpoint's world.
            self.server.clear_faults()


def _key(scenario: Any) -> str:
    """One scenario's identity: its file's resolved path or its content."""
    if scenario is None:
        return "default"
    if isinstance(scenario, (str, os.PathLike)):
        text = "path:" + str(Path(scenario).resolve())
    else:
        text = "doc:" + json.dumps(scenario, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="session")
def _fake_pve_world(request: pytest.FixtureRequest):
    config = request.config
    scenario = _session_scenario(config)
    try:
        server = FakePve(
            scenario=scenario,
            pve_version=_setting(config, "fake_pve_version"),
            latency=_latency(config),
        )
        server.start()
    except (FakePveError, ValueError) as e:
        raise pytest.UsageError(f"fake-pve: {e}") from None
    try:
        server.checkpoint(START)
        yield _World(server, scenario)
    finally:
        server.stop()


def _marker_scenario(request: pytest.FixtureRequest) -> Any:
    marker = request.node.get_closest_marker("fake_pve_scenario")
    if marker is None:
        return None
    if len(marker.args) != 1 or marker.kwargs:
        raise pytest.UsageError(
            f"{request.node.nodeid}: fake_pve_scenario takes one argument, a file or a mapping"
        )
    scenario = marker.args[0]
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        if not path.is_absolute():
            path = Path(request.node.path).parent / path
        if not path.is_file():
            raise pytest.UsageError(
                f"{request.node.nodeid}: fake_pve_scenario({scenario!r}): no such file ({path})"
            )
        return path.resolve()
    if isinstance(scenario, dict):
        return scenario
    raise pytest.UsageError(
        f"{request.node.nodeid}: fake_pve_scenario takes a file or a mapping, "
        f"not {type(scenario).__name__}"
    )


@pytest.fixture
def fake_pve(_fake_pve_world: _World, request: pytest.FixtureRequest) -> FakePve:
    """The session's fake-pve, its world as the test's scenario starts."""
    keep = request.node.get_closest_marker("fake_pve_keep") is not None
    _fake_pve_world.prepare(_marker_scenario(request), keep)
    return _fake_pve_world.server


@pytest.fixture
def fake_pve_proxmoxer(fake_pve: FakePve):
    """A proxmoxer ``ProxmoxAPI`` logged in as root@pam on ``fake_pve``."""
    pytest.importorskip("proxmoxer", reason="the fake_pve_proxmoxer fixture needs proxmoxer")
    return fake_pve.proxmoxer()
