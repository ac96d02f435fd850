"""No namespaces: limits only. Generated code sees and writes what its user can, shares the host's processes and network,
and writes its folder in place (SECURITY.md). Where evoskill runs as root the run still gets an unprivileged user of its
own, which cannot enter the workspace (its owner's only, ``deployments/workspace.py``): as root this isolation does
not run."""

from __future__ import annotations

from pathlib import Path

from deployments.sandbox.isolations.base import Containment, Isolation, run_ids
from deployments.sandbox.limits import SandboxLimits
from deployments.sandbox.view import SandboxView, closed_to_others, python_paths

__all__ = ["NoIsolation"]


class NoIsolation(Isolation):
    name = "none"
    contained = False

    def missing(self) -> str | None:
        if run_ids() is None:
            return None
        for path in python_paths():
            closed = closed_to_others(path)
            if closed is not None:
                return (f"as root it runs generated code as an unprivileged user of its own, which cannot enter {closed} "
                        "(the Python environment lies there)")  # fmt: skip
        return ("as root it runs generated code as an unprivileged user of its own, which cannot enter the workspace "
                "(its owner's only) where the run's folder lies")  # fmt: skip

    def cold(self, view: SandboxView | None, limits: SandboxLimits, workdir: Path) -> Containment:
        return Containment([])

    def warm(self, view: SandboxView, limits: SandboxLimits) -> Containment:
        raise ValueError("the warm executor runs only inside namespaces")
