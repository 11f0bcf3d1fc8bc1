"""Under CI every skip is a failure that keeps its reason; outside CI it stays a skip (tests/ci_skip_policy.py).

Each case runs a small pytest session in a subprocess, with the plugin the suite's conftest registers, over test files
that skip in every way the suite does: ``pytest.skip`` in a test and in a fixture, ``skip`` / ``skipif`` marks,
``pytest.importorskip`` in a test and at module level, and a module-level ``pytest.skip``. Outcomes are read from
the session's JUnit XML. The last case runs the suite's own regression-gate test with the shared data hidden.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

IN_TESTS = '''
import pytest


@pytest.fixture()
def widget_dir():
    pytest.skip("widget data not found at /nowhere; set WIDGET_DIR")


def test_passes():
    assert True


def test_skip_call():
    pytest.skip("fixture file absent: run make fixtures")


def test_skip_in_fixture(widget_dir):
    assert widget_dir


@pytest.mark.skip(reason="unconditional mark: needs a GPU")
def test_skip_mark():
    assert True


@pytest.mark.skipif(True, reason="skipif mark: chromium missing")
def test_skipif_mark():
    assert True


def test_importorskip_in_test():
    pytest.importorskip("no_such_module_ci_probe_a", reason="pip install no-such-module-a")


@pytest.mark.xfail(reason="known bug", strict=True)
def test_xfail_stays_xfail():
    assert False
'''
MODULE_IMPORTORSKIP = '''
import pytest

pytest.importorskip("no_such_module_ci_probe_b", reason="pip install no-such-module-b")


def test_never_collected():
    assert True
'''
MODULE_SKIP = '''
import pytest

pytest.skip("browser not found: apt-get install -y chromium", allow_module_level=True)


def test_never_collected():
    assert True
'''
REASONS = {
    "test_in_tests.test_skip_call": "fixture file absent: run make fixtures",
    "test_in_tests.test_skip_in_fixture": "widget data not found at /nowhere; set WIDGET_DIR",
    "test_in_tests.test_skip_mark": "unconditional mark: needs a GPU",
    "test_in_tests.test_skipif_mark": "skipif mark: chromium missing",
    "test_in_tests.test_importorskip_in_test": "pip install no-such-module-a",
    "test_module_importorskip.module_skipped_under_ci": "pip install no-such-module-b",
    "test_module_skip.module_skipped_under_ci": "browser not found: apt-get install -y chromium",
}


def _session(tmp_path: Path, ci: str | None) -> tuple[int, dict[str, tuple[str, str]], str]:
    """Runs the three files under the plugin; (exit code, {classname.name: (outcome, message)}, output)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_in_tests.py").write_text(IN_TESTS)
    (tmp_path / "test_module_importorskip.py").write_text(MODULE_IMPORTORSKIP)
    (tmp_path / "test_module_skip.py").write_text(MODULE_SKIP)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    if ci is not None:
        env["CI"] = ci
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the installed plugins (hypothesis, schemathesis, ...) play no part
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH", "")) if p)
    junit = tmp_path / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "ci_skip_policy", "-p", "no:cacheprovider",
                           "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), f"--junitxml={junit}",
                           "-rA", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    outcomes: dict[str, tuple[str, str]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kids = [k for k in case if k.tag in ("failure", "error", "skipped")]
        tag, message = (kids[0].tag, kids[0].get("message", "")) if kids else ("passed", "")
        outcomes[f"{case.get('classname')}.{case.get('name')}"] = (tag, message)
    return proc.returncode, outcomes, proc.stdout + proc.stderr


def test_the_suite_registers_the_policy(request: pytest.FixtureRequest) -> None:
    assert request.config.pluginmanager.get_plugin("ci_skip_policy") is not None


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_every_skip_fails_with_its_reason(tmp_path: Path, ci: str) -> None:
    code, outcomes, out = _session(tmp_path, ci)
    assert code == 1, out
    assert outcomes["test_in_tests.test_passes"] == ("passed", ""), out
    assert outcomes["test_in_tests.test_xfail_stays_xfail"][0] == "skipped", out  # an xfail is not a skip
    for name, reason in REASONS.items():
        tag, message = outcomes[name]
        assert tag in ("failure", "error"), (name, tag, out)  # error: a skip in setup (fixture, mark) fails there
        assert f"skipped under CI='{ci}', where a skip is a failure: {reason}" in message, (name, message)
    assert "skips failed under CI" in out and "x pip install no-such-module-b" in out
    assert out.count("skipped under CI=") >= len(REASONS)  # each one in the short summary too


@pytest.mark.parametrize("ci", [None, "", "false"])
def test_outside_ci_a_skip_stays_a_skip_with_its_reason(tmp_path: Path, ci: str | None) -> None:
    code, outcomes, out = _session(tmp_path, ci)
    assert code == 0, out
    assert outcomes["test_in_tests.test_passes"] == ("passed", "")
    for name, reason in REASONS.items():
        if name.endswith("module_skipped_under_ci"):
            continue  # a module that skips at import has no test case of its own outside CI
        tag, message = outcomes[name]
        assert tag == "skipped" and reason in message, (name, tag, message)
    assert "SKIPPED" in out and "pip install no-such-module-b" in out and "apt-get install -y chromium" in out
    assert "skips failed under CI" not in out


def test_under_ci_the_regression_gate_fails_naming_the_missing_shared_data(tmp_path: Path) -> None:
    """The suite's own conftest: with shared/ hidden, the gate's test fails (not skips) and names EQUIMIND_SHARED."""
    missing = tmp_path / "no-shared-here"
    env = {**{k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}, "CI": "true",
           "EQUIMIND_SHARED": str(missing)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/evaluation/test_eval_regression.py::test_fast_subset_does_not_regress"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    summary = out.strip().splitlines()[-1]  # "1 error in 2.51s"
    assert summary.startswith("1 error") and "skipped" not in summary, out
    assert f"recorded data not found at {missing}; set EQUIMIND_SHARED" in out, out
