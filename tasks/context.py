"""Lean context: large outputs travel as object references, and stage traces are compressed.

An ``ObjectRef`` points at a file holding the full text (a sandbox run's folder for its long
outputs, ``<workspace>/objects`` for a compressed trace's); a stage
gets the reference and a short preview, and loads the rest only if it needs it. A
``TraceSummary`` keeps what a later stage needs of a finished one: key findings, failures
(one line each, deduplicated) and the parameters used.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, Field, JsonValue

from tasks.files import write_atomic
from tasks.models import ObjectRef
from tasks.settings import Settings

__all__ = ["ObjectRef", "put_object", "load_object", "TraceSummary", "compress_trace", "first_line"]

_PREVIEW_CHARS = 600


def put_object(text: str, folder: Path) -> ObjectRef:
    """Keep ``text`` in ``folder`` (content-addressed) and return a reference to it."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = folder.resolve() / f"{digest}.txt"
    if not path.exists():
        write_atomic(path, text)
    return ObjectRef(uri=path.as_uri(), size=len(text), preview=text[-_PREVIEW_CHARS:])


def load_object(ref: ObjectRef) -> str:
    """The full text behind a reference."""
    return Path(ref.uri.removeprefix("file://")).read_text()


def first_line(text: str | None, limit: int = 200) -> str:
    """The most informative line of an error: the last exception line if there is a traceback."""
    if not text:
        return ""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception|Warning)\b", line)]
    return (errors[-1] if errors else lines[0])[:limit]


class TraceSummary(BaseModel):
    """What a later stage needs to know about a finished stage or sub-task."""

    stage: str
    success: bool
    key_findings: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    parameters: dict[str, JsonValue] = Field(default_factory=dict)
    refs: list[ObjectRef] = Field(default_factory=list, description="Full outputs, loaded on demand.")

    def render(self) -> str:
        lines = [f"{self.stage}: {'succeeded' if self.success else 'failed'}"]
        lines += [f"  found: {f}" for f in self.key_findings]
        lines += [f"  failed: {f}" for f in self.failures]
        if self.parameters:
            lines.append(f"  parameters: {self.parameters}")
        lines += [f"  full output: {r.uri}" for r in self.refs]
        return "\n".join(lines)


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
    refs = [put_object(o, folder) for o in outputs or [] if folder is not None and len(o) > _PREVIEW_CHARS]
    findings = [f"answer = {answer!r}"] if success else []
    return TraceSummary(stage=stage, success=success, key_findings=findings, failures=failures[:max_failures], parameters=parameters or {}, refs=refs)
