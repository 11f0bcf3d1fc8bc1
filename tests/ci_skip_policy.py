"""Under CI a skip is a failure (pytest plugin, registered by tests/conftest.py; proven by tests/test_ci_skips.py).

A test skips when what it needs is missing: the recorded data in shared/ (EQUIMIND_SHARED), /usr/bin/chromium, the
``playwright`` or ``schemathesis`` package, a ``chroma`` executable. Outside CI that is a skip with its reason, as
before. When the environment variable ``CI`` is set to anything but ``""``, ``0``, ``false``, ``no`` or ``off`` (CI
sets ``CI=true``), every skip is reported as a failure whose text keeps the skip's reason, so a green CI run means
every test ran:

- ``pytest.skip(...)`` and ``pytest.importorskip(...)`` in a test or a fixture, and ``skip`` / ``skipif`` marks: the
  test's report (setup or call phase) is turned from skipped into failed;
- a module that skips as a whole (``pytest.skip(..., allow_module_level=True)``, ``pytest.importorskip`` at import
  time): its collection is replaced by one failing test, ``<module>::module_skipped_under_ci``, so the rest of the
  run goes on.

xfail is left alone (pytest reports an expected failure as skipped with ``wasxfail`` set; it is not a skip).

The "skips failed under CI" summary is tallied from the test reports (each such failure carries its reason as
``ci_skip_reason``), so it is the same under pytest-xdist, where the tests run in workers and the summary is printed
by the controlling process.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest

FALSE_WORDS = frozenset({"", "0", "false", "no", "off"})
MODULE_ITEM = "module_skipped_under_ci"
HINT = ("Outside CI (CI unset) this test skips; under CI a skip means part of the suite did not run. Provide what "
        "the reason names: .ci/run installs Chromium and starts the Chroma server, `make install` installs the "
        "pinned packages, and EQUIMIND_SHARED must point at the shared/ folder (the recorded data).")
_FAILED_SKIPS = pytest.StashKey[list[tuple[str, str]]]()
REASON_ATTR = "ci_skip_reason"  # set on a report that a skip turned into a failure; travels with xdist's reports


def ci_active() -> bool:
    """True when the environment says this is a CI run (read at call time)."""
    return os.environ.get("CI", "").strip().lower() not in FALSE_WORDS


def skip_reason(longrepr: Any) -> str:
    """The reason of a skipped report (a ``(path, lineno, message)`` tuple, or text)."""
    text = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def failure_text(reason: str) -> str:
    """One line: the short summary shows it whole (the fix-it hint is printed once, in the terminal summary)."""
    return f"skipped under CI={os.environ.get('CI', '')!r}, where a skip is a failure: {reason}"


def _record(config: pytest.Config, reason: str, nodeid: str) -> None:
    config.stash.setdefault(_FAILED_SKIPS, []).append((reason, nodeid))


class SkippedModule(pytest.Item):
    """Stands for a module that skipped at import under CI: it fails with the module's skip reason."""

    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        pytest.fail(failure_text(self.reason), pytrace=False)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.parent.nodeid if self.parent else ''} (module skipped at import)"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.skipped and not hasattr(report, "wasxfail") and ci_active():
        reason = skip_reason(report.longrepr)
        report.outcome = "failed"
        report.longrepr = failure_text(reason)
        setattr(report, REASON_ATTR, reason)
    elif isinstance(item, SkippedModule) and report.when == "call":
        setattr(report, REASON_ATTR, item.reason)
    return report


class _Tally:
    """Records each report that carries a skip reason, in the process that prints the summary (with xdist: the
    controller, which receives the workers' reports)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        reason = getattr(report, REASON_ATTR, None)
        if reason is not None:
            _record(self.config, reason, report.nodeid)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Tally(config), "ci_skip_policy_tally")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    report = yield
    if report.skipped and ci_active():
        reason = skip_reason(report.longrepr)
        item = SkippedModule.from_parent(collector, name=MODULE_ITEM, reason=reason)
        report = pytest.CollectReport(report.nodeid, "passed", None, [item], sections=report.sections)
    return report


def pytest_report_header(config: pytest.Config) -> str | None:
    if ci_active():
        return f"CI={os.environ.get('CI')!r}: every skip is reported as a failure (tests/ci_skip_policy.py)"
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    failed = config.stash.get(_FAILED_SKIPS, [])
    if not failed:
        return
    terminalreporter.section("skips failed under CI", sep="=", red=True, bold=True)
    for reason, n in Counter(reason for reason, _ in failed).most_common():
        terminalreporter.line(f"{n:5d} x {reason}")
    terminalreporter.line(HINT)
