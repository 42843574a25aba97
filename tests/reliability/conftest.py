"""Fixtures of the reliability suite: ``figures`` records what a test measured for docs/reliability.md."""

from __future__ import annotations

from collections.abc import Generator, Iterator

import pytest

from reliability.figures import Figures, Run, report_path

_RUN = Run()


@pytest.fixture(scope="session")
def _reliability_run() -> Iterator[Run]:
    yield _RUN
    if _RUN.tests:
        _RUN.write(report_path())


@pytest.fixture
def figures(request: pytest.FixtureRequest, _reliability_run: Run) -> Figures:
    """This test's row of figures (callers, calls, faults, inputs, lost, leaks, internal errors)."""
    return _reliability_run.figures_for(request.node.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _RUN.outcomes[item.nodeid] = (report.outcome, report.duration)
