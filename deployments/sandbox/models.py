"""What a sandboxed run returns, and references to large outputs kept in files."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

__all__ = ["ObjectRef", "ExecutionResult"]


class ObjectRef(BaseModel):
    """A reference to a large text kept in a file, with a preview of its end (loaded on demand)."""

    uri: str
    size: int
    preview: str = ""

    def __str__(self) -> str:
        return f"<object {self.uri} ({self.size} chars); ends with: {self.preview[-200:]!r}>"


class ExecutionResult(BaseModel):
    """What happened when a script ran in the sandbox."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_ref: ObjectRef | None = Field(default=None, description="The whole captured stdout when ``stdout`` holds only its head and tail.")
    stderr_ref: ObjectRef | None = Field(default=None, description="The whole captured stderr when ``stderr`` holds only its head and tail.")
    timed_out: bool = False
    cancelled: bool = Field(default=False, description="Its caller cancelled it: its processes were killed, it has no answer.")
    answer_found: bool = False
    answer: JsonValue = None
    error: str | None = Field(default=None, description="A one-paragraph diagnosis an agent can act on.")
    wall_s: float = 0.0
    workdir: str = ""
    executor: Literal["cold", "warm"] = Field(
        default="cold", description="How the run started: 'warm' (forked by the warm executor) or 'cold' (a new interpreter)."
    )

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.answer_found and not self.timed_out
