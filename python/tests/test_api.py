"""FakePve outside pytest's fixtures: start, stop, verification and bad input."""

import os
import ssl
import subprocess
import urllib.error
import urllib.request

import sysconfig

import pytest

import fake_pve
from fake_pve import ControlError, FakePve, FakePveError, StartError, find_binary


def test_the_binary_is_on_the_path_of_the_environment():
    binary = find_binary()
    if "FAKE_PVE_BIN" not in os.environ:
        # the wheel's, beside this interpreter
        assert os.path.dirname(binary) == sysconfig.get_path("scripts")
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    # the package's version is the crate's
    assert out.stdout.strip() == f"fake-pve {fake_pve.__version__}"


def test_start_stop_and_a_verified_connection(scenarios):
    with FakePve(scenario=scenarios / "single-node.yaml", pve_version="8.4") as pve:
        assert pve.host == "127.0.0.1" and pve.url == f"https://127.0.0.1:{pve.port}"
        assert pve.credentials == ("root@pam", "password")
        assert pve.verify == pve.ca_cert and os.path.isfile(pve.ca_cert)
        health = pve.health()
        assert health["status"] == "ok" and health["release"] == "8.4"
        # The certificate verifies against ca_cert, not against the system's CAs.
        # (the handshake passes: the API's own refusal comes back)
        with pytest.raises(urllib.error.HTTPError) as unauthenticated:
            urllib.request.urlopen(pve.api_url + "/version", context=pve.ssl_context())
        assert unauthenticated.value.code == 401
        with pytest.raises(urllib.error.URLError) as refused:
            urllib.request.urlopen(pve.api_url + "/version", context=ssl.create_default_context())
        assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
        process = pve.process
        ca_cert = pve.ca_cert
    assert process.poll() is not None, "the process still runs after the with block"
    assert not os.path.exists(ca_cert)


def test_checkpoint_and_restore():
    with FakePve() as pve:
        pve.checkpoint("empty")
        pve.api("POST", "/nodes/pve/qemu", vmid=300, memory=256)
        assert pve.health()["vms"] == 1
        pve.restore("empty")
        assert pve.health()["vms"] == 0
        pve.api("POST", "/nodes/pve/qemu", vmid=300, memory=256)
        pve.reset()
        assert pve.health()["vms"] == 0
        with pytest.raises(ControlError) as missing:
            pve.restore("never-made")
        assert missing.value.status == 500
        assert "checkpoint 'never-made' does not exist" in str(missing.value)
        with pytest.raises(ValueError, match="checkpoint name"):
            pve.checkpoint("no spaces")


def test_the_ticket_is_renewed_after_the_clock_passes_it():
    with FakePve() as pve:
        pve.advance(3 * 3600)  # PVE's tickets last two hours
        assert pve.health()["status"] == "ok"


def test_bad_input_is_refused_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="scenario .*nowhere.yaml: no such file"):
        FakePve(scenario=tmp_path / "nowhere.yaml")
    with pytest.raises(TypeError, match="scenario must be a path or a mapping"):
        FakePve(scenario=42)
    with pytest.raises(TypeError, match="pve_version must be a string"):
        FakePve(pve_version=9.1)
    with pytest.raises(StartError, match=r"unsupported PVE version '7\.0'"):
        FakePve(pve_version="7.0").start()
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes: 12\n")
    with pytest.raises(StartError, match="scenario"):
        FakePve(scenario=bad).start()
    with FakePve() as pve:
        with pytest.raises(ValueError, match="not negative"):
            pve.advance(-1)
        with pytest.raises(ValueError, match="at least one field"):
            pve.fault()
        with pytest.raises(ControlError) as refused:
            pve.fault(path="/version", status="teapot")
        assert refused.value.status == 400


def test_fake_pve_bin(monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_PVE_BIN", str(tmp_path / "missing"))
    with pytest.raises(FakePveError, match="FAKE_PVE_BIN=.*missing: no such file"):
        find_binary()
    monkeypatch.delenv("FAKE_PVE_BIN")
    monkeypatch.setenv("FAKE_PVE_BIN", find_binary())
    assert find_binary() == os.environ["FAKE_PVE_BIN"]


def test_the_callers_fake_pve_settings_do_not_leak(monkeypatch):
    # FAKE_PVE_HTTP would turn TLS off; FakePve serves what it was asked for.
    monkeypatch.setenv("FAKE_PVE_HTTP", "true")
    with FakePve() as pve:
        assert pve.url.startswith("https://")
        assert pve.health()["status"] == "ok"


def test_the_startup_timeout_comes_from_the_argument_or_the_environment(monkeypatch):
    monkeypatch.delenv("FAKE_PVE_STARTUP_TIMEOUT", raising=False)
    assert FakePve().startup_timeout == 30.0
    monkeypatch.setenv("FAKE_PVE_STARTUP_TIMEOUT", "120")
    assert FakePve().startup_timeout == 120.0
    assert FakePve(startup_timeout=5).startup_timeout == 5.0
    monkeypatch.setenv("FAKE_PVE_STARTUP_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="FAKE_PVE_STARTUP_TIMEOUT must be a number of seconds, not 'soon'"):
        FakePve()
    with pytest.raises(ValueError, match="startup_timeout must be a positive number"):
        FakePve(startup_timeout=0)
