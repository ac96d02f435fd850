"""Run a skill's ``run(**params)`` in the sandbox, the same way everywhere (verify, solve, jobflow)."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from typing import Any

from deployments.packages import missing_packages
from deployments.sandbox.devices import gpu_devices
from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings
from skills.documents import Skill
from skills.domain import domain_refusal
from skills.params import params_text

__all__ = ["skill_script", "run_skill_code", "run_skill", "run_skill_code_many", "SLOWER", "FLOOR_S"]

_CALL = """
import json as _json, types as _types
_skill = _types.ModuleType("skill")
exec(compile({code!r}, "skill.py", "exec"), _skill.__dict__)
print(_json.dumps(_skill.run(**_json.loads({params!r}))))
"""

_MANY = """
import json as _json, signal as _signal, time as _time, types as _types
_skill = _types.ModuleType("skill")
exec(compile({code!r}, "skill.py", "exec"), _skill.__dict__)


class _Slow(Exception):
    pass


def _stop(_signum, _frame):
    raise _Slow()


_signal.signal(_signal.SIGALRM, _stop)
_results, _limit = [], 0.0
for _index, _params in enumerate(_json.loads({sets!r})):
    _started = _time.monotonic()
    if _index:  # each other set may take {slower:g}x the first one's time (at least {floor:g} s): an endless loop is one set's failure
        _signal.setitimer(_signal.ITIMER_REAL, _limit)
    try:
        _results.append({{"ok": True, "answer": _skill.run(**_params)}})
    except _Slow:
        _results.append({{"ok": False, "error": "stopped after " + format(_limit, ".3g") + " s (the first set took " + format(_first, ".3g") + " s)"}})
    except Exception as _exc:  # one failing parameter set does not stop the others
        _results.append({{"ok": False, "error": (type(_exc).__name__ + ": " + str(_exc))[:300]}})
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
    if not _index:
        _first = _time.monotonic() - _started
        _limit = max({floor}, {slower} * _first)
print(_json.dumps(_results, default=str))
"""
SLOWER, FLOOR_S = 10.0, 5.0
"""In ``run_skill_code_many``, a parameter set after the first may take ``SLOWER`` times the first one's time, and at least
``FLOOR_S`` seconds: a value that sends the code into an endless loop (two atoms started on top of each other) fails
alone instead of the whole run."""


def skill_script(code: str, params: dict[str, Any]) -> str:
    """A script that imports the skill as module ``skill`` (its ``__main__`` block stays quiet) and prints run(**params)."""
    return _CALL.format(code=code, params=json.dumps(params))


def run_skill_code(
    code: str,
    packages: list[str],
    params: dict[str, Any],
    settings: Settings,
    name: str,
    wall_s: float | None = None,
    cancel: threading.Event | None = None,
    gpu: bool = False,
) -> ExecutionResult:
    """Execute ``run(**params)`` of ``code`` in the sandbox; a missing package is reported before running.

    ``wall_s``: a wall-clock limit below the sandbox's own (a skill's declared wall time). ``cancel``: setting it kills
    the run at once (``run_code``; default: the calling context's cancel). ``gpu``: the run is given this machine's GPU
    device files (``sandbox_gpu_devices``), where it has any.
    """
    missing = missing_packages(packages)
    if missing:
        return ExecutionResult(exit_code=None, error=f"the skill needs packages that are not installed: {', '.join(missing)}")
    limits = SandboxLimits.from_settings(settings)
    if wall_s is not None and wall_s < limits.wall_s:
        limits = dataclasses.replace(limits, wall_s=wall_s)
    if gpu:
        limits = dataclasses.replace(limits, devices=gpu_devices(settings.sandbox_gpu_devices, os.environ.get("CUDA_VISIBLE_DEVICES")))
    return run_code(skill_script(code, params), settings.run_root(), limits, name, cancel)


def run_skill(
    skill: Skill, params: dict[str, Any], settings: Settings, cancel: threading.Event | None = None, gpu: bool | None = None
) -> ExecutionResult:
    """Execute a stored skill with parameters that fit its schema, for at most its declared wall time, given the GPU where
    it needs or prefers one and this machine has one (``gpu``: False gives it none); ``cancel``: setting it kills the run at
    once. Values outside what the skill was verified on raise ``OutsideDomain`` before anything runs (``skills/domain.py``)."""
    refusal = domain_refusal(skill, params)
    if refusal is not None:
        raise refusal
    declared = skill.resources.walltime_s
    gpu = (skill.resources.gpu or skill.resources.gpu_preferred) if gpu is None else gpu
    execution = run_skill_code(skill.code, skill.packages, params, settings, f"skill-{skill.name}", wall_s=declared, cancel=cancel, gpu=gpu)
    if execution.timed_out and declared <= settings.sandbox_wall_s:
        execution.error = (
            f"ran past its declared wall time of {declared:g} s and was stopped "
            f"(parameters {params_text(params) or 'none'}); try smaller inputs or looser settings"
        )
    return execution


def run_skill_code_many(
    code: str, packages: list[str], param_sets: list[dict[str, Any]], settings: Settings, name: str
) -> tuple[ExecutionResult, list[dict[str, Any]]]:
    """Execute ``run(**params)`` for each set in one sandbox run; each row is ``{"ok", "answer"}`` or ``{"ok": False, "error"}``
    (a set after the first that runs ``SLOWER`` times as long as the first is stopped: that set's error)."""
    missing = missing_packages(packages)
    if missing:
        return ExecutionResult(exit_code=None, error=f"the skill needs packages that are not installed: {', '.join(missing)}"), []
    script = _MANY.format(code=code, sets=json.dumps(param_sets), slower=SLOWER, floor=FLOOR_S)
    execution = run_code(script, settings.run_root(), SandboxLimits.from_settings(settings), name)
    rows = execution.answer if execution.ok and isinstance(execution.answer, list) else []
    return execution, [row for row in rows if isinstance(row, dict)]
