"""One task in the SciSkillBench JSON format, loaded and validated with the file and field named on error.

>>> task = load_task(Path("skills/library/ase_emt_atomization_n2.json"))
>>> task.id, task.answer, task.query(1)[:34]
('ase_emt_atomization_n2', 9.9372, 'Calculate the atomization energy (')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue, ValidationError, field_validator

__all__ = ["BenchmarkTask", "TaskFormatError", "load_task"]


class TaskFormatError(ValueError):
    """A task file that is not valid JSON or misses/mistypes a field."""


class BenchmarkTask(BaseModel):
    user_query: dict[Literal["0", "1"], str]
    sources: list[str] = Field(default_factory=list)
    input_type: str | None = None
    output_type: str | None = None
    answer: JsonValue
    absolute_tolerance: float | None = None
    unit: str | None = None
    solution_code_or_process: str = ""
    reference_link: str | None = None
    official_documentation: str | None = None
    notes: str | None = None
    id: str | None = None
    category: str | None = None
    skill_family: str | None = None
    variant_of: str | None = None

    @field_validator("user_query")
    @classmethod
    def _some_query(cls, value: dict[str, str]) -> dict[str, str]:
        if not any(q.strip() for q in value.values()):
            raise ValueError("needs a non-empty query at level '0' or '1'")
        return value

    def query(self, level: int = 1) -> str:
        """The query at ``level`` (1: goal only, 0: names the functions), or the other level when missing."""
        return self.user_query.get(str(level)) or self.user_query.get(str(1 - level)) or ""  # type: ignore[call-overload]


def load_task(path: Path) -> BenchmarkTask:
    """Read one task file; the id defaults to the file name."""
    try:
        data: Any = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise TaskFormatError(f"{path}: cannot read a JSON task ({exc})") from exc
    if not isinstance(data, dict):
        raise TaskFormatError(f"{path}: a task is one JSON object")
    data.setdefault("id", Path(path).stem)
    try:
        return BenchmarkTask.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise TaskFormatError(f"{path}: {problems}") from exc
