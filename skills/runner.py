"""Run a skill's ``run(**params)`` in the sandbox, the same way everywhere (verify, solve, jobflow)."""

from __future__ import annotations

import json
from typing import Any

from deployments.packages import missing_packages
from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings
from skills.documents import Skill

__all__ = ["skill_script", "run_skill_code", "run_skill"]

_CALL = """
import json as _json, types as _types
_skill = _types.ModuleType("skill")
exec(compile({code!r}, "skill.py", "exec"), _skill.__dict__)
print(_json.dumps(_skill.run(**_json.loads({params!r}))))
"""


def skill_script(code: str, params: dict[str, Any]) -> str:
    """A script that imports the skill as module ``skill`` (its ``__main__`` block stays quiet) and prints run(**params)."""
    return _CALL.format(code=code, params=json.dumps(params))


def run_skill_code(code: str, packages: list[str], params: dict[str, Any], settings: Settings, name: str) -> ExecutionResult:
    """Execute ``run(**params)`` of ``code`` in the sandbox; a missing package is reported before running."""
    missing = missing_packages(packages)
    if missing:
        return ExecutionResult(exit_code=None, error=f"the skill needs packages that are not installed: {', '.join(missing)}")
    limits = SandboxLimits.from_settings(settings)
    return run_code(skill_script(code, params), settings.run_root(), limits, name)


def run_skill(skill: Skill, params: dict[str, Any], settings: Settings) -> ExecutionResult:
    """Execute a stored skill with already validated parameters."""
    return run_skill_code(skill.code, skill.packages, params, settings, f"skill-{skill.name}")
