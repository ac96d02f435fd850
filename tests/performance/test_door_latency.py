"""What a client of the MCP door pays for a skill answer: a fresh ``evoskill mcp`` over stdio, and its first calls.

Target (issue: one service under every door): a skill answer over MCP in <= 1 s end to end, the first call after the
server starts included. Each round starts a new server process in a workspace whose file-backed store holds the
starter library's EMT atomization skill, and times, as the client sees them:

- ``initialize``: from spawning the server until the MCP handshake is done;
- ``first_tool_s``: the first call of the skill's own tool, made at once after the handshake;
- ``later_tool_s``: the median of the next calls of it;
- ``first_solve_s``, ``second_solve_s``: the first two ``solve`` calls of the README question, which the skill answers
  in the workspace's resident service. The first round's server starts that service (its first ``solve`` is given as
  ``first_solve_service_starting_s``); later rounds find it up, as a client that starts a server in a workspace the
  CLI or the chat uses does. The other figures are medians of the later rounds (of the one round under ``CI=true``).

Beside them, in the same run, a bare ``python -c pass``: the figures are also given as ratios to it. Run with
``.venv/bin/python -m pytest tests/performance/test_door_latency.py --benchmark-enable -s``; under ``CI=true`` one round.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from flows.interfaces.cli.main import EXAMPLE
from flows.interfaces.service.client import stop_service
from flows.interfaces.service.place import read_records
from tests.starter import emt_atomization, learn_starter

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 1 if os.environ.get("CI") else 3


@pytest.fixture
def mcp_workspace(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("EVOSKILL_SERVICE", "true")
    (skill,) = learn_starter("ase_emt_atomization_n2")  # the README question's skill
    yield skill
    for record in read_records():
        if record.workspace == str(workspace.resolve()):
            stop_service(record.pid)


def _one_server(skill_id: str, expected: float) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k.startswith(("EVOSKILL_", "PREFECT_")) or k in ("PATH", "HOME")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "flows.interfaces.cli.main", "mcp"], env=env, cwd=str(ROOT))
    times: dict[str, float] = {}

    async def session() -> None:
        spawned = time.perf_counter()
        async with Client(params, read_timeout_seconds=300) as client:
            times["initialize_s"] = time.perf_counter() - spawned
            later = []
            for formula in ["O2", "N2", "O2", "N2"]:
                started = time.perf_counter()
                result = await client.call_tool(skill_id, {"formula": formula})
                assert not result.is_error, result.content
                later.append(time.perf_counter() - started)
            times["first_tool_s"], times["later_tool_s"] = later[0], statistics.median(later[1:])
            for name in ("first_solve_s", "second_solve_s"):
                started = time.perf_counter()
                solved = await client.call_tool("solve", {"query": EXAMPLE})
                times[name] = time.perf_counter() - started
                result = solved.structured_content["result"]
                assert result["path"] == "skill" and result["answer"] == expected, {k: result.get(k) for k in ("path", "error", "declined")}

    anyio.run(session)
    return times


def _bare_python_s() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def test_a_skill_answer_over_mcp_from_a_fresh_server(benchmark, mcp_workspace):
    rounds: list[dict[str, float]] = []
    bare: list[float] = []
    expected = emt_atomization("N2")

    def one() -> None:
        bare.append(_bare_python_s())
        rounds.append(_one_server(mcp_workspace.id, expected))

    benchmark.pedantic(one, rounds=ROUNDS, iterations=1)
    python_s = statistics.median(bare)
    cold, warm = rounds[0], rounds[1:] or rounds
    figures = {name: round(statistics.median(r[name] for r in warm), 3) for name in cold}
    figures["first_solve_service_starting_s"] = round(cold["first_solve_s"], 3)  # the first server started the service
    benchmark.extra_info.update(figures, bare_python_s=round(python_s, 3), rounds=len(rounds),
                                ratios={name: round(value / python_s, 1) for name, value in figures.items()})  # fmt: skip
    print(f"\nMCP over stdio, {len(rounds)} fresh servers, medians of the rounds after the first (bare python -c pass "
          f"{python_s:.3f} s): " + ", ".join(f"{name} {value:.3f} s ({value / python_s:.0f}x)" for name, value in figures.items()))  # fmt: skip
