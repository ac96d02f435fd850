"""Orchestration overhead of a solve: wall time minus LLM time minus the generated code's run time.

Target: <= 0.5 s per solve, warm, with the scripted backend, on the deep path (triage and the
learn step are off: they are LLM and sandbox work, not orchestration). Run with
``.venv/bin/python -m pytest benchmarks --benchmark-enable``; the overhead of each round is in
``extra_info`` (median, max) next to pytest-benchmark's timing of the whole solve.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest

from flows.solve import solve

QUERY = "Return the integer 42 as an integer."
GOOD = "import json\nprint(json.dumps(42))\n"
BAD = "raise SystemExit(1)\n"


def _overhead(result, total_s: float) -> float:  # noqa: ANN001 - SolveResult
    """``total_s`` (the caller's wall time of ``solve()``) less LLM and generated-code time."""
    trajectory = json.loads(Path(result.trajectory_path).read_text())
    llm_s = sum(c["latency_s"] for c in trajectory["llm_calls"])
    runs = [trajectory["code_agent"]["execution"]] if trajectory["code_agent"]["execution"] else []
    # Debug branches run concurrently: count the slowest branch's code time, as the flow waits for it.
    branch_code = [sum(a["execution"]["wall_s"] for a in b["attempts"] if a["execution"]) for b in trajectory["debug"]]
    branch_llm = [sum(c["latency_s"] for c in trajectory["llm_calls"] if c["stage"] == b["stage"]) for b in trajectory["debug"]]
    code_s = sum(r["wall_s"] for r in runs)
    if trajectory["debug"]:
        slowest = max(range(len(branch_code)), key=lambda i: branch_code[i] + branch_llm[i])
        llm_s = llm_s - sum(branch_llm) + branch_llm[slowest]
        code_s += branch_code[slowest]
    return total_s - llm_s - code_s


@pytest.mark.parametrize("path", ["first-try", "three-debug-branches"])
def test_solve_orchestration_overhead(benchmark, scripted, monkeypatch, path):
    monkeypatch.setenv("EVOSKILL_DEBUG_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("EVOSKILL_TRIAGE_LLM", "false")
    monkeypatch.setenv("EVOSKILL_LEARN", "false")
    replies = [{"stage": "research", "content": {"code": GOOD if path == "first-try" else BAD}}]
    if path != "first-try":
        replies += [{"stage": f"debug:{s}", "content": {"code": GOOD}} for s in ("diagnostic", "introspection", "research")]
    scripted(replies)
    solve(QUERY)  # warm-up: first flow run in the process
    overheads: list[float] = []

    def one_solve():
        started = time.perf_counter()
        result = solve(QUERY)
        total = time.perf_counter() - started
        assert result.success and result.answer == 42
        overheads.append(_overhead(result, total))

    benchmark.pedantic(one_solve, rounds=10, iterations=1)
    benchmark.extra_info["overhead_median_s"] = statistics.median(overheads)
    benchmark.extra_info["overhead_max_s"] = max(overheads)
    print(f"\n{path}: orchestration overhead median {statistics.median(overheads):.3f} s, max {max(overheads):.3f} s")
