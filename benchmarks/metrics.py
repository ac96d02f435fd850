"""Benchmark metrics: success rate, pass@k, and breakdowns by level, category and difficulty.

A *case* is one task at one level; each system runs every case ``n`` times (repetitions).

- success rate: passed runs / runs;
- pass@k: the unbiased estimator ``1 - C(n - c, k) / C(n, k)`` per case (``c`` passed of ``n``),
  averaged over cases — the chance that at least one of ``k`` runs drawn from the ``n`` passes;
- difficulty: a case's P value is the fraction of runs that passed across all compared systems
  (the reference excluded when others are present); ``easy`` P ≥ 2/3, ``medium`` 1/3 ≤ P < 2/3, ``hard`` P < 1/3.

Next to the aggregates, :func:`case_rows` lists every checked run as a :class:`CaseRow`.

>>> round(pass_at_k(n=3, c=1, k=2), 4)
0.6667
>>> run = BenchmarkRecord(run_id="r", system="reference", rep=1, level=1, task_id="t", passed=False,
...                       answer=4, expected=3, reason="got 4.0, expected exactly 3.0", wall_s=0.5)
>>> case_rows([run], ["reference"])[0].model_dump()
{'task_id': 't', 'level': 1, 'rep': 1, 'system': 'reference', 'passed': False, 'answer': 4, 'expected': 3, 'reason': 'got 4.0, expected exactly 3.0', 'wall_s': 0.5, 'llm_calls': 0}
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from math import comb

from pydantic import BaseModel, Field, JsonValue

from skills.documents import BenchmarkRecord

__all__ = ["pass_at_k", "Rate", "SystemSummary", "CaseRow", "summarise", "case_rows", "difficulty_of", "case_key"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of ``k`` of ``n`` runs (``c`` of them passing) passes."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


class Rate(BaseModel):
    passed: int = 0
    total: int = 0

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


class SystemSummary(BaseModel):
    """What ``evoskill bench --json`` prints per system."""

    passed: int
    total: int
    success_rate: float
    pass_at_k: dict[str, float] = Field(description="k → mean pass@k over cases")
    mean_wall_s: float
    mean_llm_calls: float
    mean_tokens: float
    by_level: dict[str, float] = Field(default_factory=dict)
    by_category: dict[str, float] = Field(default_factory=dict)
    by_difficulty: dict[str, float] = Field(default_factory=dict)


class CaseRow(BaseModel):
    """One checked run, as ``report.md`` and ``evoskill bench --json`` (``cases``) list it."""

    task_id: str
    level: int
    rep: int
    system: str
    passed: bool
    answer: JsonValue = Field(default=None, description="The answer the run gave (null: none).")
    expected: JsonValue = Field(default=None, description="The task's answer.")
    reason: str | None = Field(default=None, description="Why it failed: the answer checker's words, or the run's error.")
    wall_s: float
    llm_calls: int

    @classmethod
    def of(cls, record: BenchmarkRecord) -> CaseRow:
        return cls.model_validate(record.model_dump(include=set(cls.model_fields)))


def case_key(record: BenchmarkRecord) -> tuple[str, int]:
    return record.task_id, record.level


def _bucket(p: float) -> str:
    return "easy" if p >= 2 / 3 else "medium" if p >= 1 / 3 else "hard"


def difficulty_of(records: Iterable[BenchmarkRecord]) -> dict[tuple[str, int], str]:
    """Each case's difficulty bucket from its P value across the compared systems."""
    records = list(records)
    compared = [r for r in records if r.system != "reference"] or records
    tally: dict[tuple[str, int], Rate] = defaultdict(Rate)
    for r in compared:
        tally[case_key(r)].total += 1
        tally[case_key(r)].passed += int(r.passed)
    return {case: _bucket(rate.rate) for case, rate in tally.items()}


def _rates(records: list[BenchmarkRecord], key) -> dict[str, float]:  # noqa: ANN001 - a record → group name
    groups: dict[str, Rate] = defaultdict(Rate)
    for r in records:
        groups[key(r)].total += 1
        groups[key(r)].passed += int(r.passed)
    return {name: round(rate.rate, 4) for name, rate in sorted(groups.items())}


def _summary(records: list[BenchmarkRecord], difficulty: dict[tuple[str, int], str]) -> SystemSummary:
    cases: dict[tuple[str, int], Rate] = defaultdict(Rate)
    for r in records:
        cases[case_key(r)].total += 1
        cases[case_key(r)].passed += int(r.passed)
    n_min = min((c.total for c in cases.values()), default=0)
    pass_k = {
        str(k): round(sum(pass_at_k(c.total, c.passed, k) for c in cases.values()) / len(cases), 4) for k in range(1, n_min + 1)
    }
    n = len(records)
    passed = sum(r.passed for r in records)
    return SystemSummary(
        passed=passed,
        total=n,
        success_rate=round(passed / n, 4) if n else 0.0,
        pass_at_k=pass_k,
        mean_wall_s=round(sum(r.wall_s for r in records) / n, 3) if n else 0.0,
        mean_llm_calls=round(sum(r.llm_calls for r in records) / n, 2) if n else 0.0,
        mean_tokens=round(sum(r.tokens for r in records) / n, 1) if n else 0.0,
        by_level=_rates(records, lambda r: str(r.level)),
        by_category=_rates(records, lambda r: r.category or "uncategorised"),
        by_difficulty=_rates(records, lambda r: difficulty.get(case_key(r), "hard")),
    )


def summarise(records: Iterable[BenchmarkRecord], systems: list[str]) -> dict[str, SystemSummary]:
    """One summary per system, in the order given (a system with no records yet has zeros)."""
    records = list(records)
    difficulty = difficulty_of(records)
    return {name: _summary([r for r in records if r.system == name], difficulty) for name in systems}


def case_rows(records: Iterable[BenchmarkRecord], systems: list[str]) -> list[CaseRow]:
    """The runs of ``systems`` as rows: by task, level and repetition, then system in the order given."""
    order = {name: i for i, name in enumerate(systems)}
    chosen = sorted((r for r in records if r.system in order), key=lambda r: (r.task_id, r.level, r.rep, order[r.system]))
    return [CaseRow.of(r) for r in chosen]
