"""The plugin's settings, run in inner pytest sessions (pytester): the
order of tests is known there, so keeping the world can be checked."""

import pytest

INNER = '''
import pytest

def vms(pve):
    return [vm["vmid"] for vm in pve.api("GET", "/cluster/resources", type="vm")]

def test_first(fake_pve):
    fake_pve.api("POST", "/nodes/{node}/qemu", vmid=700, memory=256)
    assert 700 in vms(fake_pve)

@pytest.mark.fake_pve_keep
def test_kept(fake_pve):
    assert 700 in vms(fake_pve)

def test_reset(fake_pve):
    assert 700 not in vms(fake_pve)
'''


def test_keep_marker_and_reset(pytester):
    pytester.makepyfile(INNER.replace("{node}", "pve"))
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=3)


def test_without_the_keep_marker_the_kept_test_fails(pytester):
    pytester.makepyfile(INNER.replace("{node}", "pve").replace("@pytest.mark.fake_pve_keep", ""))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)


def test_ini_scenario_and_version(pytester, scenarios):
    pytester.makeini(f"[pytest]\nfake_pve_scenario = {scenarios / 'three-node-cluster.yaml'}\n")
    pytester.makepyfile('''
def test_it(fake_pve):
    assert sorted(n["node"] for n in fake_pve.api("GET", "/nodes")) == ["pve1", "pve2", "pve3"]
    assert fake_pve.api("GET", "/version")["release"] == "8.4"
''')
    result = pytester.runpytest("--fake-pve-version", "8.4")
    result.assert_outcomes(passed=1)


def test_latency_option(pytester):
    pytester.makepyfile('''
def test_it(fake_pve):
    assert fake_pve.latency_profile()["name"] == "documented"
''')
    result = pytester.runpytest("--fake-pve-latency", "documented")
    result.assert_outcomes(passed=1)


def test_a_bad_version_is_a_clear_error(pytester):
    pytester.makepyfile('''
def test_it(fake_pve):
    pass
''')
    result = pytester.runpytest("--fake-pve-version", "7.0")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unsupported PVE version '7.0' (use 8.4, 9.1 or 9.2)*"])


def test_a_missing_ini_scenario_is_a_clear_error(pytester):
    pytester.makeini("[pytest]\nfake_pve_scenario = nowhere.yaml\n")
    pytester.makepyfile('''
def test_it(fake_pve):
    pass
''')
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fake_pve_scenario = nowhere.yaml: no such file*"])


def test_a_missing_marker_scenario_is_a_clear_error(pytester):
    pytester.makepyfile('''
import pytest

@pytest.mark.fake_pve_scenario("nowhere.yaml")
def test_it(fake_pve):
    pass
''')
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fake_pve_scenario('nowhere.yaml'): no such file*"])


def test_the_options_are_in_help(pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--fake-pve-version=VERSION*", "*--fake-pve-latency=PROFILE*"])
