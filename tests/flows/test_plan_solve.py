"""Plan-and-CodeAct: the planner outer loop over DeepSolve sub-tasks, with compressed feedback."""

import json

import pytest

from deployments.llm.client import make_client
from deployments.settings import get_settings
from flows.plan_solve import plan_solve

QUERY = "Compute the EMT energy per atom of bulk fcc Cu (a = 3.6 Å) with ASE, then say by how much it changes at a = 3.7 Å. Return a float in eV."
STEP1 = "EMT energy per atom of bulk fcc Cu with a = 3.6 Å. Return a float in eV."
STEP2 = "EMT energy per atom of bulk fcc Cu with a = 3.7 Å minus the earlier result. Return a float in eV."
E36 = "import json\nfrom ase.build import bulk\nfrom ase.calculators.emt import EMT\na = bulk('Cu', 'fcc', a=3.6); a.calc = EMT()\nprint(json.dumps(round(a.get_potential_energy() / len(a), 4)))\n"
DIFF = (
    "import json\nfrom ase.build import bulk\nfrom ase.calculators.emt import EMT\n"
    "def e(a):\n    x = bulk('Cu', 'fcc', a=a); x.calc = EMT(); return x.get_potential_energy() / len(x)\n"
    "print(json.dumps(round(e(3.7) - e(3.6), 4)))\n"
)


def _code(stage, source):
    return {"stage": stage, "content": {"packages": ["ase"], "code": source}}


def _replies(first_step_fails=False):
    plan = {"stage": "planner", "content": {"steps": [{"goal": STEP1}, {"goal": STEP2}]}}
    replies = [plan, _code("research", "raise RuntimeError('bad lattice')\n" if first_step_fails else E36)]
    if first_step_fails:
        replies += [{"stage": "debug", "content": {"packages": [], "code": "raise RuntimeError('still bad')\n"}}] * 3
        replies.append({"stage": "replanner", "content": {"action": "replan", "steps": [{"goal": STEP1}, {"goal": STEP2}], "reason": "step failed"}})
        replies.append(_code("research", E36))
    replies.append({"stage": "replanner", "content": {"action": "continue"}})
    replies.append(_code("research", DIFF))
    replies.append({"stage": "replanner", "content": {"action": "finish", "answer": None, "reason": "both energies known"}})
    return replies


def _run(scripted, monkeypatch, replies, compress=True):
    monkeypatch.setenv("EVOSKILL_COMPRESS_CONTEXT", str(compress).lower())
    monkeypatch.setenv("EVOSKILL_DEBUG_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("EVOSKILL_MAX_LLM_CALLS", "20")
    path = scripted(replies)
    settings = get_settings()
    outcome = plan_solve(QUERY, settings, make_client(settings))
    received = [json.loads(line) for line in path.with_suffix(".received.jsonl").read_text().splitlines()]
    path.with_suffix(".received.jsonl").unlink()
    return outcome, received


def _emt_per_atom(a: float) -> float:
    """EMT energy per atom of bulk fcc Cu, computed here with ASE."""
    from ase.build import bulk
    from ase.calculators.emt import EMT

    atoms = bulk("Cu", "fcc", a=a)
    atoms.calc = EMT()
    return float(atoms.get_potential_energy()) / len(atoms)


@pytest.fixture
def e36():
    return round(_emt_per_atom(3.6), 4)


def test_two_step_query_is_planned_solved_and_finished(scripted, monkeypatch, e36):
    outcome, received = _run(scripted, monkeypatch, _replies())
    assert outcome.success and outcome.stopped == "finished" and len(outcome.steps) == 2 and outcome.replans == 0
    assert outcome.steps[0].summary.key_findings == [f"answer = {e36!r}"]
    # The second sub-task is told the first one's answer (compressed), never its full trajectory.
    step2_prompt = [r for r in received if r["stage"] == "research"][1]["messages"][-1]["content"]
    assert f"answer = {e36!r}" in step2_prompt and "full trajectories" not in step2_prompt
    # The finish gave no answer of its own, so the outcome keeps step 2's: E(3.7) - E(3.6), as DIFF rounds it.
    assert outcome.answer == round(_emt_per_atom(3.7) - _emt_per_atom(3.6), 4) != e36


def test_a_failed_step_is_replanned_within_budget(scripted, monkeypatch):
    outcome, received = _run(scripted, monkeypatch, _replies(first_step_fails=True))
    assert outcome.success and outcome.replans == 1 and len(outcome.steps) == 3
    assert not outcome.steps[0].summary.success and "RuntimeError: bad lattice" in outcome.steps[0].summary.failures[0]
    replan_prompt = next(r for r in received if r["stage"] == "replanner")["messages"][-1]["content"]
    assert "failed: " in replan_prompt and "RuntimeError" in replan_prompt


def test_replanning_stops_at_its_budget(scripted, monkeypatch):
    replies = [{"stage": "planner", "content": {"steps": [{"goal": STEP1}]}}, _code("research", E36)]
    replies.append({"stage": "replanner", "content": {"action": "replan", "steps": [{"goal": STEP1}]}})
    replies += [_code("research", E36), {"stage": "replanner", "content": {"action": "replan", "steps": [{"goal": STEP1}]}}]
    monkeypatch.setenv("EVOSKILL_COMPRESS_CONTEXT", "true")
    scripted(replies)
    settings = get_settings()
    outcome = plan_solve(QUERY, settings, make_client(settings), max_replans=1)
    assert outcome.stopped == "replans" and outcome.replans == 1 and len(outcome.steps) == 2


def test_compression_shrinks_what_later_stages_read(scripted, monkeypatch):
    compressed, _ = _run(scripted, monkeypatch, _replies(), compress=True)
    full, _ = _run(scripted, monkeypatch, _replies(), compress=False)
    assert compressed.answer == full.answer
    assert compressed.tokens_by_stage["replanner"] < full.tokens_by_stage["replanner"] / 2
    assert compressed.tokens_by_stage["research"] < full.tokens_by_stage["research"]
