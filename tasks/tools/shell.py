"""``execute_shell_command`` and ``create_and_execute_script``: run things in the sandbox, never in evoskill."""

from __future__ import annotations

import json
import re

from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings
from tasks.tools.errors import ToolError

__all__ = ["execute_shell_command", "create_and_execute_script"]

_WRAPPER = """import json, subprocess, sys
proc = subprocess.run({command}, shell=True, capture_output=True, text=True)
sys.stdout.write(proc.stdout[-20000:])
sys.stderr.write(proc.stderr[-20000:])
print()
print(json.dumps({{"exit_code": proc.returncode}}))
"""


def execute_shell_command(command: str, settings: Settings) -> ExecutionResult:
    """Run a shell command (e.g. ``pip show ase`` or ``ls``) in the sandbox: no network, resource limits, secrets scrubbed.

    The answer is ``{"exit_code": N}``; the command's output is in stdout/stderr.
    """
    if not command.strip():
        raise ToolError("the command is empty.", "pass a shell command such as 'python -c \"import ase; print(ase.__version__)\"'.")
    return run_code(_WRAPPER.format(command=json.dumps(command)), settings.run_root(), SandboxLimits.from_settings(settings), name="shell")


def create_and_execute_script(name: str, code: str, settings: Settings) -> ExecutionResult:
    """Save ``code`` as a script called ``name`` and run it once in the sandbox; its last stdout line may be a JSON answer."""
    if not code.strip():
        raise ToolError("the script is empty.", "pass the full Python source as code.")
    label = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "script"
    return run_code(code, settings.run_root(), SandboxLimits.from_settings(settings), name=label)
