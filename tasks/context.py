"""Lean context: large outputs travel as object references, and stage traces are compressed.

An ``ObjectRef`` points at a file holding the full text (a sandbox run's folder for its long
outputs, ``<workspace>/objects`` for a compressed trace's); a stage
gets the reference and a short preview, and loads the rest only if it needs it. A
``TraceSummary`` keeps what a later stage needs of a finished one: key findings, failures
(one line each, deduplicated) and the parameters used.
"""

from __future__ import annotations

import re

from pydantic import JsonValue

from deployments.sandbox.models import ObjectRef
from deployments.sandbox.objects import PREVIEW_CHARS, put_object
from deployments.settings import Settings
from tasks.models import TraceSummary

__all__ = ["ObjectRef", "compress_trace", "first_line"]


def first_line(text: str | None, limit: int = 200) -> str:
    """The most informative line of an error: the last exception line if there is a traceback."""
    if not text:
        return ""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception|Warning)\b", line)]
    return (errors[-1] if errors else lines[0])[:limit]


def compress_trace(
    stage: str,
    success: bool,
    answer: JsonValue = None,
    errors: list[str | None] | None = None,
    parameters: dict[str, JsonValue] | None = None,
    outputs: list[str] | None = None,
    settings: Settings | None = None,
    max_failures: int = 3,
) -> TraceSummary:
    """Summarise a stage: its answer, its distinct failures (one line each), parameters, and references to long outputs."""
    failures: list[str] = []
    for error in errors or []:
        line = first_line(error)
        if line and line not in failures:
            failures.append(line)
    folder = settings.workspace / "objects" if settings is not None else None
    refs = [put_object(o, folder) for o in outputs or [] if folder is not None and len(o) > PREVIEW_CHARS]
    findings = [f"answer = {answer!r}"] if success else []
    return TraceSummary(stage=stage, success=success, key_findings=findings, failures=failures[:max_failures], parameters=parameters or {}, refs=refs)
