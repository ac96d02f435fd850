"""The transfer protocol: learn each family's base, then ask its variants and distractors through the skill path only.

A family file (``benchmarks/suites/transfer/*.json``) holds a ``base`` task, ``variants`` (same
family, other formulas, elements, SMILES, numbers or entries; each with its own verified answer)
and ``distractors`` (look alike, but ask something the base's skill does not compute). Each
question is answered by a recalled skill or declined; nothing falls through to writing code, so
the protocol measures the skills alone. A verdict is ``correct`` (a skill answered within the
task's tolerance), ``declined`` (no skill answered), or ``wrong`` (a skill answered and the answer
is not right, or any skill answered a distractor).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, JsonValue, ValidationError

from benchmarks.task import BenchmarkTask, TaskFormatError
from skills.answer_check import check_answer

__all__ = ["Distractor", "TransferFamily", "TransferRow", "TransferReport", "SkillAnswer", "load_transfer_suite", "transfer_report"]

Verdict = Literal["correct", "declined", "wrong"]


class Distractor(BaseModel):
    id: str
    query: str
    why: str = ""
    answer: JsonValue = Field(
        default=None, description="Its own answer, computed independently: a skill that answers the distractor is checked against it."
    )
    absolute_tolerance: float | None = None


class TransferFamily(BaseModel):
    family: str
    base: BenchmarkTask
    variants: list[BenchmarkTask] = Field(min_length=1)
    distractors: list[Distractor] = Field(default_factory=list)


class TransferRow(BaseModel):
    """One question of the protocol and what the skill path made of it."""

    family: str
    id: str
    role: Literal["variant", "distractor"]
    query: str
    verdict: Verdict
    skill_id: str | None = None
    answer: JsonValue = None
    expected: JsonValue = None
    params: dict[str, JsonValue] = Field(default_factory=dict)
    reason: str = Field(default="", description="Why it declined, or why the answer is wrong.")
    recalled: list[str] = Field(default_factory=list, description="The skills retrieval recalled, best first.")

    @property
    def family_recalled(self) -> bool:
        """Whether retrieval recalled a skill of the row's own family (among ``recalled``: the top ``memory_top_k``)."""
        return any(_family_of(skill_id) == self.family for skill_id in self.recalled)


class FamilyScore(BaseModel):
    family: str
    variants: int = 0
    correct: int = 0
    declined: int = 0
    wrong: int = Field(default=0, description="Variants answered wrongly plus distractors answered at all.")
    distractors: int = 0
    distractors_declined: int = 0
    recalled: int = Field(default=0, description="Variants whose own family's skill retrieval recalled (in its top k).")


class TransferReport(BaseModel):
    learned: list[str] = Field(default_factory=list, description="'family: status (method)' per base.")
    rows: list[TransferRow] = Field(default_factory=list)
    families: list[FamilyScore] = Field(default_factory=list)

    @property
    def totals(self) -> FamilyScore:
        total = FamilyScore(family="all")
        for f in self.families:
            for key in ("variants", "correct", "declined", "wrong", "distractors", "distractors_declined", "recalled"):
                setattr(total, key, getattr(total, key) + getattr(f, key))
        return total

    def markdown(self) -> str:
        lines = [
            "| family | variants correct | declined | wrong | distractors declined | family recalled |",
            "|---|---|---|---|---|---|",
        ]
        for f in [*self.families, self.totals]:
            lines.append(
                f"| {f.family} | {f.correct}/{f.variants} | {f.declined} | {f.wrong} | {f.distractors_declined}/{f.distractors} "
                f"| {f.recalled}/{f.variants} |"
            )
        return "\n".join(lines)


def load_transfer_suite(paths: list[Path]) -> list[TransferFamily]:
    """Every family file under ``paths`` (files or folders), each validated with the file named on error."""
    files = sorted(p for path in paths for p in ([path] if path.is_file() else Path(path).glob("*.json")))
    families = []
    for file in files:
        try:
            families.append(TransferFamily.model_validate(json.loads(file.read_text())))
        except (OSError, ValueError, ValidationError) as exc:
            raise TaskFormatError(f"{file}: not a transfer family ({str(exc).splitlines()[0]})") from exc
    return families


class SkillAnswer(BaseModel):
    """What the skill path made of one question: the skill that answered (None: every skill declined), its answer, why not."""

    skill_id: str | None = None
    answer: JsonValue = None
    params: dict[str, JsonValue] = Field(default_factory=dict)
    reason: str = ""
    recalled: list[str] = Field(default_factory=list, description="The skills retrieval recalled, best first.")


def _family_of(skill_id: str) -> str:
    return skill_id.rsplit("-v", 1)[0]


def transfer_report(
    families: list[TransferFamily],
    ask: Callable[[str], SkillAnswer],
    learned: list[str] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> TransferReport:
    """Ask every variant and distractor (level 1) of ``families`` with ``ask`` (the skill path alone), and score them."""
    report = TransferReport(learned=learned or [])
    questions: list[tuple[TransferFamily, Literal["variant", "distractor"], str, str, JsonValue, float | None]] = [
        (f, "variant", v.id or "variant", v.query(1), v.answer, v.absolute_tolerance) for f in families for v in f.variants
    ]
    questions += [(f, "distractor", d.id, d.query, d.answer, d.absolute_tolerance) for f in families for d in f.distractors]
    for index, (family, role, qid, query, expected, tolerance) in enumerate(questions, 1):
        asked = ask(query)
        skill_id, answer, params, reason = asked.skill_id, asked.answer, asked.params, asked.reason
        verdict: Verdict = "declined"
        if skill_id is not None:
            if role == "distractor" and expected is None:  # nothing to check it against: answering a look-alike is wrong
                verdict, reason = "wrong", f"a distractor was answered by {skill_id}"
            else:
                check = check_answer(answer, expected, tolerance)
                verdict = "correct" if check.passed else "wrong"
                reason = "" if check.passed else (check.reason or "")
        report.rows.append(
            TransferRow(
                family=family.family, id=qid, role=role, query=query, verdict=verdict, skill_id=skill_id, answer=answer,
                expected=expected, params=params, reason=reason, recalled=asked.recalled,
            )
        )  # fmt: skip
        if progress is not None:
            progress(index, len(questions), f"{qid}: {verdict}")
    for family in families:
        rows = [r for r in report.rows if r.family == family.family]
        score = FamilyScore(family=family.family)
        for row in rows:
            if row.role == "variant":
                score.variants += 1
                score.recalled += row.family_recalled
                setattr(score, row.verdict, getattr(score, row.verdict) + 1)
            else:
                score.distractors += 1
                score.distractors_declined += row.verdict == "declined"
                score.wrong += row.verdict == "wrong"
        report.families.append(score)
    return report
