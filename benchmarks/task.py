"""Tasks in the SciSkillBench JSON format, loaded and validated with the file and field named on error.

>>> task = load_task(Path("skills/library/ase_emt_atomization_n2.json"))
>>> task.id, task.answer, task.query(1)[:34]
('ase_emt_atomization_n2', 9.9372, 'Calculate the atomization energy (')
>>> suite = load_suite([Path("skills/library")])
>>> len(suite.tasks), suite.problems
(30, [])
>>> suite_path_problems([Path("skills/library"), Path("nowhere")])
['nowhere: no such file or folder']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue, ValidationError, field_validator

__all__ = ["BenchmarkTask", "TaskFormatError", "Suite", "load_task", "load_suite", "suite_path_problems", "CATEGORIES"]

CATEGORIES = ("data_retrieval", "data_analysis", "data_management", "data_processing", "simulation", "specialized_models")


class TaskFormatError(ValueError):
    """A task file that is not valid JSON or misses/mistypes a field."""


class BenchmarkTask(BaseModel):
    user_query: dict[Literal["0", "1"], str]
    sources: list[str] = Field(default_factory=list)
    input_type: str | None = None
    output_type: str | None = None
    answer: JsonValue
    absolute_tolerance: float | None = Field(default=None, ge=0)
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

    @field_validator("answer")
    @classmethod
    def _has_answer(cls, value: JsonValue) -> JsonValue:
        if value is None:
            raise ValueError("is null: a task needs the expected answer")
        return value

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str | None) -> str | None:
        if value is not None and value not in CATEGORIES:
            raise ValueError(f"unknown category {value!r}; use one of {', '.join(CATEGORIES)}")
        return value

    @property
    def file_hash(self) -> str:
        """A short hash of the task's content (what a benchmark resumes against)."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:12]

    def query(self, level: int = 1) -> str:
        """The query at ``level`` (1: goal only, 0: names the functions), or the other level when missing."""
        return self.user_query.get(str(level)) or self.user_query.get(str(1 - level)) or ""  # type: ignore[call-overload]  # str(level) is a "0"/"1" key


def load_task(path: Path) -> BenchmarkTask:
    """Read one task file; the id defaults to the file name."""
    try:
        data: Any = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, or not JSON
        raise TaskFormatError(f"{path}: cannot read a JSON task ({exc})") from exc
    if not isinstance(data, dict):
        raise TaskFormatError(f"{path}: a task is one JSON object")
    data.setdefault("id", Path(path).stem)
    try:
        return BenchmarkTask.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise TaskFormatError(f"{path}: {problems}") from exc


class Suite(BaseModel):
    """The tasks that loaded, and one line per file that did not (file and field named)."""

    tasks: list[BenchmarkTask] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list, description="The task files that loaded, in task order.")
    problems: list[str] = Field(default_factory=list)


def _task_files(paths: Iterable[Path]) -> tuple[list[Path], list[str]]:
    files, problems = [], []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            files += found
            if not found:
                problems.append(f"{path}: no *.json task files in this folder")
        elif path.is_file():
            files.append(path)
        else:
            problems.append(f"{path}: no such file or folder")
    return files, problems


def suite_path_problems(paths: Iterable[Path]) -> list[str]:
    """One line per suite path that does not exist or is a folder without ``*.json`` task files."""
    return _task_files(paths)[1]


def load_suite(paths: Iterable[Path]) -> Suite:
    """Every task under ``paths`` (folders of ``*.json`` or single files); malformed ones are reported, not fatal."""
    files, problems = _task_files(paths)
    suite = Suite(problems=problems)
    seen: dict[str, Path] = {}
    for path in files:
        try:
            task = load_task(path)
        except TaskFormatError as exc:
            suite.problems.append(str(exc))
            continue
        if task.id in seen:
            suite.problems.append(f"{path}: id: {task.id!r} is also the id of {seen[task.id]}; skipped")
            continue
        seen[task.id] = path  # type: ignore[index]  # load_task sets every id
        suite.tasks.append(task)
        suite.files.append(str(path.resolve()))
    return suite
