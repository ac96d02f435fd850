"""Fixtures of the sandbox's attack tests: each isolation this machine has, each executor, and a runner for payloads."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code, warm_up
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings


@pytest.fixture(params=["bwrap", "unshare", "none"])
def isolation(request: pytest.FixtureRequest) -> dict[str, bool | str]:
    """Each isolation this machine has (the fallbacks too); what it contains."""
    report = isolation_report(wanted=request.param)
    if not report["works"]:
        pytest.skip(f"{request.param} isolation is not available here ({report['why_not']})")
    return report


@pytest.fixture(params=["cold", "warm"])
def executor(request: pytest.FixtureRequest, isolation: dict[str, bool | str]) -> str:
    """How each run starts: a new interpreter, or a fork of the warm executor (only where there are namespaces)."""
    if request.param == "warm" and not isolation["namespaces"]:
        pytest.skip("the warm executor runs only inside namespaces")
    return request.param


@dataclasses.dataclass
class Sandbox:
    """Runs payloads under one isolation and executor with evoskill's own limits (``SandboxLimits.from_settings``).

    ``last_s``: the caller's wall time of the last ``run_code`` (the warm executor's start is not counted).
    """

    isolation: str
    executor: str
    workspace: Path
    last_s: float = 0.0

    def settings(self, workspace: Path | None = None, **fields: Any) -> Settings:
        values: dict[str, Any] = dict(
            sandbox_wall_s=20, sandbox_cpu_s=20, sandbox_memory_mb=1024, sandbox_disk_mb=64, sandbox_max_processes=32,
            sandbox_file_size_mb=64, sandbox_output_bytes=16000,
        )  # fmt: skip
        values.update(fields)
        return Settings(
            workspace=workspace or self.workspace, sandbox_isolation=self.isolation, sandbox_warm=self.executor == "warm", **values
        )

    def limits(self, settings: Settings | None = None, inputs: Iterable[str | Path] = (), **changes: Any) -> SandboxLimits:
        return dataclasses.replace(SandboxLimits.from_settings(settings or self.settings(), inputs=inputs), **changes)

    def run(self, code: str, settings: Settings | None = None, inputs: Iterable[str | Path] = (), **changes: Any) -> ExecutionResult:
        """Run ``code`` under the limits (``changes``: fields of ``SandboxLimits``), the warm executor ready first for a warm run."""
        settings = settings or self.settings()
        limits = self.limits(settings, inputs, **changes)
        assert self.executor == "cold" or warm_up(limits)
        started = time.perf_counter()
        result = run_code(code, settings.run_root(), limits)
        self.last_s = time.perf_counter() - started
        assert result.executor == self.executor
        return result


@pytest.fixture
def sandbox(tmp_path: Path, isolation: dict[str, bool | str], executor: str) -> Sandbox:
    """A runner for payloads under each isolation and executor, its workspace in ``tmp_path/ws``."""
    return Sandbox(str(isolation["isolation"]), executor, tmp_path / "ws")
