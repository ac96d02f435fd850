"""Learn, then reuse: a deep solve becomes a verified skill; a variant is answered by the skill with one LLM call."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jobflow import run_locally

from deployments.settings import get_settings
from flows.solve import solve
from skills.documents import Experience, MemoryUnit, Skill
from skills.maker import SkillMaker
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY, N2_SKILL, O2_ANSWER, O2_QUERY

CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}
DRAFT = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "Atomization energy with EMT", "code": N2_SKILL}}


def received_stages(script: Path) -> list[str]:
    return [json.loads(line)["stage"] for line in script.with_suffix(".received.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("backend", ["memory", "monty"])
def test_learn_then_reuse(scripted, monkeypatch, backend):
    monkeypatch.setenv("EVOSKILL_STORE", backend)
    script = scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])

    first = solve(N2_QUERY)
    assert first.success and first.answer == N2_ANSWER and first.path == "deep"
    assert first.learned and first.skill_id == "atomization_energy_ase_emt-v1"
    store = open_store(get_settings())
    skill = store.get_skill(first.skill_id)
    # Lifted without a model: the molecule is a parameter; fmax does not change the 4-decimal answer: a setting, run as stated.
    assert skill.method == "lifted" and list(skill.parameters.model_dump()["properties"]) == ["formula", "fmax"] and skill.tunables == ["fmax"]
    assert skill.parameters.model_dump()["properties"]["formula"]["default"] == "N2"
    assert skill.test_case.params == {"formula": "N2", "fmax": 0.01} and skill.test_case.expected == N2_ANSWER
    assert skill.provenance.flow_run_id == first.flow_run_id and skill.provenance.query == N2_QUERY
    assert skill.provenance.model == "scripted" and skill.packages == ["ase"]
    assert store.count("memories") == 2  # execution (the code) and planning (what worked)
    assert received_stages(script) == ["triage", "research"]  # the compile reply was not asked for

    second = solve(O2_QUERY)
    assert second.success and second.answer == O2_ANSWER and second.formatted == "8.5753 eV"
    assert second.path == "skill" and second.skill_id == first.skill_id and second.declined == []
    assert [(p.name, p.value) for p in second.params] == [("formula", "O2"), ("fmax", 0.01)] and "O2" in second.params[0].words
    assert second.llm_calls == 0 and [s.name for s in second.stages] == ["recall", "skill"]
    assert received_stages(script)[2:] == []  # the question's words bind the skill: no model call, and no stage wrote code
    assert store.get_skill(first.skill_id).stats.uses == 1

    job = SkillMaker.from_skill(skill).make(formula="O2")
    responses = run_locally(job, store=store.job_store(), log=False)
    assert responses[job.uuid][1].output == O2_ANSWER


def test_learn_then_reuse_with_the_model_generaliser(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_SKILL_GENERALISER", "llm")
    script = scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])

    first = solve(N2_QUERY)
    assert first.success and first.answer == N2_ANSWER and first.path == "deep"
    assert first.learned and first.skill_id == "emt_atomization_energy-v1"  # the name the model gave
    skill = open_store(get_settings()).get_skill(first.skill_id)
    assert skill.method == "llm" and skill.code == N2_SKILL and list(skill.parameters.model_dump()["properties"]) == ["formula", "fmax"]
    assert skill.test_case.params == {"formula": "N2", "fmax": 0.01} and skill.test_case.expected == N2_ANSWER
    assert received_stages(script) == ["triage", "research", "compile"]

    second = solve(O2_QUERY)
    assert second.success and second.answer == O2_ANSWER and second.path == "skill" and second.skill_id == first.skill_id
    assert {p.name: p.value for p in second.params} == {"formula": "O2", "fmax": 0.01}
    assert second.llm_calls == 0 and received_stages(script)[3:] == []


def test_monty_store_persists_across_processes(scripted, monkeypatch, workspace):
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    learned = solve(N2_QUERY)
    program = (
        "from jobflow import run_locally\n"
        "from skills.maker import SkillMaker\n"
        "from skills.store import open_store\n"
        "from deployments.settings import get_settings\n"
        "store = open_store(get_settings())\n"
        f"job = SkillMaker.from_skill(store.get_skill({learned.skill_id!r})).make(formula='O2')\n"
        "print(run_locally(job, store=store.job_store(), log=False)[job.uuid][1].output)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.strip().splitlines()[-1]) == O2_ANSWER
    # The other process's job output landed in this store's JobStore.
    store = open_store(get_settings())
    assert store.job_store().query_one({"output": O2_ANSWER}, load=True) is not None


def test_critic_rejection_is_kept_as_an_experience_not_a_skill(scripted):
    negative = "import json\nprint(json.dumps(-1.5))\n"  # the query asks for a positive float
    scripted([CLEAR, {"stage": "research", "content": {"code": negative}}])
    result = solve(N2_QUERY)
    assert result.success and result.answer == -1.5 and not result.learned
    learn = [s for s in result.stages if s.name == "learn"][0]
    assert not learn.ok and "positive" in learn.detail
    store = open_store(get_settings())
    assert store.count("skills") == 0
    [experience] = store.all(Experience)
    assert experience.verdict == "rejected" and experience.code == negative
    assert any("consistency 0.0" in r for r in experience.reasons)


def test_failed_solve_is_kept_as_a_failure_experience(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_DEBUG_STRATEGIES", '["diagnostic"]')
    monkeypatch.setenv("EVOSKILL_DEBUG_MAX_ATTEMPTS", "1")
    crash = {"content": {"code": "raise SystemExit(3)\n"}}
    scripted([CLEAR, {"stage": "research", **crash}, {"stage": "debug", **crash}])
    result = solve(N2_QUERY)
    assert not result.success
    [experience] = open_store(get_settings()).all(Experience)
    assert experience.verdict == "failed" and "exited with code 3" in experience.reasons[0]


def test_simple_path_writes_from_memory_and_runs_once(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LEARN", "false")
    store = open_store(get_settings())
    store.put(MemoryUnit(kind="execution", condition=N2_QUERY, subtask=N2_QUERY, solution=N2_CODE))
    script = scripted([CLEAR, {"stage": "simple", "content": {"code": N2_CODE}}])
    result = solve(N2_QUERY.replace("first", "beforehand"))
    assert result.success and result.path == "simple" and result.answer == N2_ANSWER
    assert [s.name for s in result.stages] == ["recall", "simple", "output-processor"]
    prompt = json.loads(script.with_suffix(".received.jsonl").read_text().splitlines()[-1])["messages"][-1]["content"]
    assert "Code that solved a similar task" in prompt and "BFGS(n2" in prompt


def test_failed_simple_path_escalates_to_deep(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LEARN", "false")
    open_store(get_settings()).put(MemoryUnit(kind="execution", condition=N2_QUERY, subtask=N2_QUERY, solution=N2_CODE))
    scripted([CLEAR, {"stage": "simple", "content": {"code": "raise ValueError('no')\n"}}, {"stage": "research", "content": {"code": N2_CODE}}])
    result = solve(N2_QUERY)
    assert result.success and result.path == "deep"
    assert [s.name for s in result.stages][:4] == ["recall", "simple", "research", "code-agent"]


def test_clarify_returns_the_question_and_writes_no_code(scripted):
    question = "mp-149 is silicon, not NaCl: which material do you mean?"
    script = scripted([{"stage": "triage", "content": {"conflict": "NaCl (mp-149)", "question": question}}])
    result = solve("Get the band gap of NaCl (mp-149) with pymatgen. Return a float in eV.")
    assert result.path == "clarify" and result.question == question and not result.success and result.error is None
    assert received_stages(script) == ["triage"]


def test_a_clarification_that_does_not_quote_the_question_is_ignored(scripted):
    # Tiny models echo the schema's wording; a 'conflict' that is not in the question is not one.
    echo = {"conflict": "the exact words of the question that are ambiguous", "question": "What to ask the user?"}
    script = scripted([{"stage": "triage", "content": echo}, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    result = solve(N2_QUERY)
    assert result.path == "deep" and result.success and result.question is None
    assert received_stages(script)[:2] == ["triage", "research"]


def test_skill_that_cannot_bind_falls_back_to_solving(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LEARN", "false")
    store = open_store(get_settings())
    store.put_skill(
        Skill(name="emt_atomization", description=N2_QUERY, code=N2_SKILL,
              parameters={"type": "object", "properties": {"formula": {"type": "string", "default": "N2"}, "fmax": {"type": "number", "default": 0.01}}},
              test_case={"params": {"formula": "N2", "fmax": 0.01}, "expected": N2_ANSWER}, provenance={"query": N2_QUERY})
    )
    script = scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}])
    # "oxygen molecule" binds O2 from the question's own words, with no model asked.
    named = solve(N2_QUERY.replace("a nitrogen molecule", "an oxygen molecule"))
    assert named.success and named.path == "skill" and named.answer == O2_ANSWER
    assert [(p.name, p.value, p.words) for p in named.params][0] == ("formula", "O2", "oxygen molecule")
    # A question that names no molecule cannot be bound: the skill declines, with the reason, and the question is solved with code.
    result = solve(N2_QUERY.replace("a nitrogen molecule", "a molecule"))
    assert result.path == "deep" and result.skill_id is None and result.params == []
    reason = "the question names no substance; the skill takes formula (formula)"
    assert len(result.declined) == 1 and result.declined[0].startswith("emt_atomization-v1 (") and result.declined[0].endswith(reason)
    assert result.stages[1].name == "skill" and not result.stages[1].ok and reason in result.stages[1].detail
    assert received_stages(script) == ["triage", "research"]  # the model was not asked to bind either question


def test_a_crash_while_learning_keeps_the_answer(scripted, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("flows.learn_step.compile_and_store", broken)
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}])
    result = solve(N2_QUERY)
    assert result.success and result.answer == N2_ANSWER and not result.learned
    assert result.stages[-1].name == "learn" and result.stages[-1].detail == "RuntimeError: disk full"
    assert Path(result.trajectory_path).exists()
