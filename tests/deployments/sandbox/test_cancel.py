"""Cancelling a run: its caller sets the run's event and every process of the run is gone at once, cold and warm,
with the run's cgroups and without them (then the launcher's PID namespace, or the warm runner, does the killing).

A run's processes are observed from the host: the run starts a child whose command line holds a marker made for
the test, and the host's ``/proc`` is read for processes whose command line holds it.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import pytest

from deployments.cancel import cancellable
from deployments.sandbox import execute
from deployments.sandbox.cgroups import RunCgroups
from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code, warm_up
from deployments.sandbox.models import ExecutionResult
from tests.processes import marked


@pytest.fixture(params=["bwrap", "unshare", "none"])
def isolation(request: pytest.FixtureRequest) -> str:
    report = isolation_report(wanted=request.param)
    if not report["works"]:
        pytest.skip(f"{request.param} isolation is not available here ({report['why_not']})")
    return str(request.param)


@pytest.fixture(params=["cold", "warm"])
def executor(request: pytest.FixtureRequest, isolation: str) -> str:
    if request.param == "warm" and isolation == "none":
        pytest.skip("the warm executor runs only inside namespaces")
    return str(request.param)


@pytest.fixture(params=["cgroups", "no cgroups"])
def limits(request: pytest.FixtureRequest, isolation: str, executor: str, monkeypatch: pytest.MonkeyPatch) -> SandboxLimits:
    """Limits of a run under each isolation and executor; 'no cgroups': runs get none (nothing kills through them)."""
    packages: tuple[str, ...] = ()
    if request.param == "no cgroups":
        monkeypatch.setattr(execute, "make_run_cgroups", lambda *args, **kwargs: RunCgroups())
        packages = ("json",)  # a warm executor of its own, made after the patch: its runs wait in no cgroups
    chosen = SandboxLimits(isolation=isolation, wall_s=90, warm=executor == "warm", warm_packages=packages)
    if executor == "warm":
        assert warm_up(chosen), "the warm executor did not start"
        found = execute._executor_for(isolation, chosen)
        assert found is not None and found.waiting_cgroups == ([] if request.param == "no cgroups" else found.waiting_cgroups)
    return chosen


def _until(condition: Callable[[], bool], timeout_s: float) -> float:
    """Seconds until ``condition`` held (polled); fails after ``timeout_s``."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout_s, f"not within {timeout_s} s"
        time.sleep(0.02)
    return time.monotonic() - started


def _sleeper(marker: str) -> str:
    """A run that starts a child holding ``marker`` (both sleep a minute)."""
    return (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
        "time.sleep(60)\n"
        "print(1)\n"
    )


def _run_in_background(run: Callable[[], ExecutionResult]) -> tuple[threading.Thread, dict[str, ExecutionResult]]:
    box: dict[str, ExecutionResult] = {}
    thread = threading.Thread(target=lambda: box.update(result=run()), daemon=True)
    thread.start()
    return thread, box


def test_a_cancelled_run_stops_at_once_and_leaves_no_process(limits, executor, tmp_path):
    marker = f"evoskill-cancel-test-{uuid.uuid4().hex}"
    cancel = threading.Event()
    thread, box = _run_in_background(lambda: run_code(_sleeper(marker), tmp_path, limits, "cancelled", cancel))
    _until(lambda: bool(marked(marker)), 60)  # the run is under way
    cancel.set()
    returned_s = _until(lambda: not thread.is_alive(), 10)
    gone_s = _until(lambda: not marked(marker), 10)
    print(f"\n{limits.isolation}/{executor}: returned {returned_s:.2f} s and its processes gone {gone_s:.2f} s after the cancel")
    result = box["result"]
    assert result.cancelled and not result.timed_out and not result.ok
    assert result.answer is None and result.exit_code is None
    assert result.error is not None and result.error.startswith("cancelled by its caller")
    assert result.executor == executor
    assert result.wall_s < 60


def test_a_run_cancelled_before_it_starts_does_not_start(tmp_path):
    cancel = threading.Event()
    cancel.set()
    result = run_code("print(1)\n", tmp_path, SandboxLimits(warm=False), "never", cancel)
    assert result.cancelled and not result.ok and result.error == "cancelled by its caller before it started"
    assert not list(tmp_path.iterdir())  # no run folder either


def test_a_run_takes_the_cancel_of_the_call_it_runs_in(isolation, tmp_path):
    """Without a ``cancel`` argument a run looks at its calling context's (``deployments.cancel``), as a solve's runs do."""
    marker = f"evoskill-cancel-test-{uuid.uuid4().hex}"
    limits = SandboxLimits(isolation=isolation, wall_s=90, warm=False)
    cancel = threading.Event()

    def call() -> ExecutionResult:
        with cancellable(cancel):
            return run_code(_sleeper(marker), tmp_path, limits, "in-a-call")

    thread, box = _run_in_background(call)
    _until(lambda: bool(marked(marker)), 60)
    cancel.set()
    _until(lambda: not thread.is_alive(), 10)
    _until(lambda: not marked(marker), 10)
    assert box["result"].cancelled
    assert run_code("print(2)\n", tmp_path, limits).answer == 2  # outside the call: no cancel
