"""A learned task: the deep path (write, run, critic, compile) against the skill path (bind, run).

Target: the skill path >= 20x faster than the deep path, with no LLM call. Timed with
``.venv/bin/python -m pytest tests/performance/test_skill_vs_deep.py --benchmark-enable -s``; both walls
(caller's view, median of 3) and the LLM calls are in ``extra_info`` and printed. The LLM is the
scripted backend here, so LLM latency is ~0 on both paths: the ratio is a floor on what a real
model gives (every code-writing call a real model makes widens it). Both paths run their code in the warm
executor, started before the clock (``warm_up``), as a long-lived server or worker does.
"""

from __future__ import annotations

import statistics
import time

from deployments.sandbox.execute import SandboxLimits, warm_up
from deployments.settings import get_settings
from flows.solve import solve
from tests.codes import N2_CODE, N2_QUERY, N2_SKILL, O2_ANSWER, O2_QUERY

REPLIES = [
    {"stage": "triage", "content": {"conflict": ""}},
    {"stage": "research", "content": {"code": N2_CODE}},
    {"stage": "compile", "content": {"name": "emt atomization", "description": "EMT atomization energy", "code": N2_SKILL}},
    ]


def test_skill_path_against_deep_path(benchmark, scripted, workspace, monkeypatch):
    scripted(REPLIES)
    assert warm_up(SandboxLimits.from_settings(get_settings()))
    deep_walls, deep_calls = [], []
    for round_ in range(3):
        monkeypatch.setenv("EVOSKILL_STORE_DATABASE", f"deep-{round_}")  # a fresh store: the task is new each time
        started = time.perf_counter()
        deep = solve(N2_QUERY)
        deep_walls.append(time.perf_counter() - started)
        deep_calls.append(deep.llm_calls)
        assert deep.path == "deep" and deep.learned
    skill_calls = []

    def skill_solve():
        result = solve(O2_QUERY)
        assert result.path == "skill" and result.answer == O2_ANSWER
        skill_calls.append(result.llm_calls)

    benchmark.pedantic(skill_solve, rounds=3, iterations=1, warmup_rounds=0)
    skill_wall = benchmark.stats.stats.median if benchmark.stats else None
    deep_wall = statistics.median(deep_walls)
    benchmark.extra_info.update(deep_wall_s=deep_wall, deep_llm_calls=deep_calls, skill_llm_calls=skill_calls)
    if skill_wall:
        benchmark.extra_info["speedup"] = deep_wall / skill_wall
        print(f"\ndeep path {deep_wall:.2f} s, {deep_calls} LLM calls; skill path {skill_wall:.2f} s, {skill_calls} LLM calls; "
              f"speed-up {deep_wall / skill_wall:.1f}x")
    assert max(skill_calls) == 0  # the skill path asks no model
