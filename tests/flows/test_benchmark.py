"""The benchmark flow: reference mode, wrong and cheating solutions, malformed tasks, resume, scripted systems, per-case report."""

import json
import shutil
from pathlib import Path

import pytest

import flows.benchmark as bench_module
from deployments.files import file_lock
from deployments.sandbox.execute import isolation_report
from deployments.settings import get_settings
from flows.benchmark import benchmark
from flows.interfaces.cli.main import main
from skills.documents import BenchmarkRecord, BenchmarkRun
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_SKILL, O2_ANSWER

STARTER = Path(__file__).resolve().parents[2] / "benchmarks" / "suites" / "starter"


def suite_of(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(STARTER / f"{name}.json", folder / f"{name}.json")
    return folder


def task_file(folder: Path, task_id: str, code: str, answer=3, tolerance=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task_id}.json"
    query = "Compute the number. Return an integer."
    path.write_text(json.dumps({
        "id": task_id, "category": "data_analysis", "user_query": {"0": query, "1": query},
        "answer": answer, "absolute_tolerance": tolerance, "solution_code_or_process": code,
    }))  # fmt: skip
    return path


def test_reference_mode_passes_the_whole_starter_suite(workspace):
    summary = benchmark([str(STARTER)], systems=["reference"], reps=1, levels=[1], workers=2)
    reference = summary.systems["reference"]
    failed = [r for r in open_store(get_settings()).all(BenchmarkRecord, {"run_id": summary.run_id}) if not r.passed]
    assert reference.success_rate == 1.0, [(r.task_id, r.reason) for r in failed]
    assert reference.total == summary.tasks >= 20 and summary.problems == []
    assert reference.pass_at_k == {"1": 1.0} and reference.mean_llm_calls == 0
    report = Path(summary.report_dir)
    assert "| reference | " in (report / "report.md").read_text()
    assert (report / "pass_at_k.png").read_bytes()[:4] == b"\x89PNG" and (report / "by_category.png").stat().st_size > 1000


def test_wrong_cheating_and_malformed_tasks(workspace, tmp_path):
    suite = tmp_path / "suite"
    task_file(suite, "right", "print(3)")
    task_file(suite, "wrong", "print(4)")
    task_file(suite, "prose", "print('\"the answer is 3\"')")
    cheat = task_file(suite, "cheat", "")
    cheat_code = f"import json\nprint(json.dumps(json.load(open({str(cheat)!r}))['answer']))\n"
    data = json.loads(cheat.read_text())
    cheat.write_text(json.dumps({**data, "solution_code_or_process": cheat_code}))
    # Walks up from its run folder for the other runs' solutions and answers (the other tasks, the other repetition).
    peek = ("import json, os\nfound = [os.path.join(top, f) for top, _, files in os.walk('../..') for f in files\n"
            "         if f in ('main.py', 'result.json') and os.path.basename(top).startswith('reference-') and os.path.realpath(top) != os.getcwd()]\n"
            "print(json.dumps(len(found)))\n")  # fmt: skip
    task_file(suite, "peek", peek, answer=0)
    (suite / "broken.json").write_text('{"id": "broken", "answer": 1}')
    summary = benchmark([str(suite)], systems=["reference"], reps=2, levels=[0, 1])
    records = {(r.task_id, r.level, r.rep): r for r in open_store(get_settings()).all(BenchmarkRecord, {"run_id": summary.run_id})}
    assert len(records) == summary.runs == 5 * 2 * 2
    assert all(r.passed for k, r in records.items() if k[0] == "right")
    assert not any(r.passed for k, r in records.items() if k[0] not in ("right", "peek"))
    if isolation_report()["allow_list"]:
        assert all(r.passed for k, r in records.items() if k[0] == "peek"), [r.answer for k, r in records.items() if k[0] == "peek"]
        assert "each run sees only its own folder" in (Path(summary.report_dir) / "report.md").read_text()
    assert records[("wrong", 1, 1)].reason == "got 4.0, expected exactly 3.0" and records[("wrong", 1, 1)].answer == 4
    assert "inside prose" in records[("prose", 0, 2)].reason
    if isolation_report()["allow_list"]:
        assert "is outside the sandbox" in records[("cheat", 1, 1)].reason  # its own task file is not in its view
    assert summary.systems["reference"].passed == 4 + 4 * isolation_report()["allow_list"]
    assert len(summary.problems) == 1 and "broken.json: user_query: Field required" in summary.problems[0]


def test_summary_and_report_list_every_case_with_its_answers_and_why_it_failed(workspace, tmp_path):
    suite = tmp_path / "suite"
    task_file(suite, "right", "print(3)")
    task_file(suite, "wrong", "print(4)")
    task_file(suite, "piped", "import json\nprint(json.dumps('a|b\\nc'))", answer="x|y")
    summary = benchmark([str(suite)], systems=["reference"], reps=2, levels=[1])
    known = {"level": 1, "system": "reference", "llm_calls": 0}
    piped = {"task_id": "piped", "passed": False, "answer": "a|b\nc", "expected": "x|y", "reason": "got 'a|b\\nc', expected 'x|y'"}
    right = {"task_id": "right", "passed": True, "answer": 3, "expected": 3, "reason": None}
    wrong = {"task_id": "wrong", "passed": False, "answer": 4, "expected": 3, "reason": "got 4.0, expected exactly 3.0"}
    assert [c.model_dump(exclude={"wall_s"}) for c in summary.cases] == [
        {**case, **known, "rep": rep} for case in (piped, right, wrong) for rep in (1, 2)
    ]
    assert all(0 < c.wall_s < 60 for c in summary.cases)
    report = (Path(summary.report_dir) / "report.md").read_text()
    table = report.split("## Cases\n\n")[1].strip().splitlines()
    assert len(table) == 2 + 6
    assert table[2].startswith("| piped | 1 | 1 | reference | no | \"a\\|b\\\\nc\" | \"x\\|y\" | got 'a\\|b\\\\nc', expected 'x\\|y' | ")
    assert table[4].startswith("| right | 1 | 1 | reference | yes | 3 | 3 |  | ") and table[4].endswith(" | 0 |")
    assert table[7].startswith("| wrong | 1 | 2 | reference | no | 4 | 3 | got 4.0, expected exactly 3.0 | ")


class Crash(BaseException):
    """Stands for the process being killed."""


def test_an_interrupted_benchmark_resumes_where_it_stopped(workspace, tmp_path, monkeypatch):
    suite = tmp_path / "suite"
    for i in range(3):
        task_file(suite, f"t{i}", f"print({i})", answer=i)
    calls = []
    real = bench_module.run_case

    def crashing(case, *args, **kwargs):
        calls.append((case.system, case.rep, case.task_id))
        if len(calls) == 5:
            raise Crash("killed")
        return real(case, *args, **kwargs)

    monkeypatch.setattr(bench_module, "run_case", crashing)
    with pytest.raises(Crash):
        benchmark([str(suite)], systems=["reference"], reps=2, levels=[1])
    store = open_store(get_settings())
    (run,) = store.all(BenchmarkRun)
    assert len(calls) == 5  # nothing started after the crash
    assert run.status == "running" and store.count("benchmark_records", {"run_id": run.id}) == 4

    lock = workspace / "bench" / run.id / "running.lock"
    with file_lock(lock), pytest.raises(RuntimeError, match="running in another process"):
        benchmark([str(suite)], systems=["reference"], reps=2, levels=[1])

    monkeypatch.setattr(bench_module, "run_case", real)
    counted = []
    monkeypatch.setattr(bench_module, "run_case", lambda case, *a, **k: counted.append(case) or real(case, *a, **k))
    summary = benchmark([str(suite)], systems=["reference"], reps=2, levels=[1])
    assert summary.resumed and summary.run_id == run.id
    assert len(counted) == 2 and {(c.rep, c.task_id) for c in counted}.isdisjoint({(r, t) for _, r, t in calls[:4]})
    assert store.count("benchmark_records", {"run_id": run.id}) == 6 and summary.systems["reference"].passed == 6
    assert store.get(BenchmarkRun, run.id).status == "done"

    again = benchmark([str(suite)], systems=["reference"], reps=2, levels=[1])  # finished: a new benchmark
    assert not again.resumed and again.run_id != run.id and again.runs == 6


def test_native_and_skills_systems_with_the_scripted_model(scripted, tmp_path):
    suite = suite_of(tmp_path / "suite", "ase_emt_atomization_n2", "ase_emt_atomization_o2")
    draft = {"name": "EMT atomization energy", "description": "Atomization energy with EMT", "code": N2_SKILL}
    scripted([
        {"stage": "research", "content": {"code": N2_CODE}},
        {"stage": "compile", "content": draft},
    ])  # fmt: skip
    summary = benchmark([str(suite)], systems=["native", "skills"], reps=1, levels=[1])
    records = {(r.system, r.task_id): r for r in open_store(get_settings()).all(BenchmarkRecord, {"run_id": summary.run_id})}
    # native writes the N2 script for both tasks: right for N2, wrong for O2 (9.9372 is not 8.5753)
    assert records[("native", "ase_emt_atomization_n2")].passed and records[("native", "ase_emt_atomization_n2")].llm_calls == 1
    assert not records[("native", "ase_emt_atomization_o2")].passed
    # skills learns from N2 and answers O2 with the learned skill
    n2, o2 = records[("skills", "ase_emt_atomization_n2")], records[("skills", "ase_emt_atomization_o2")]
    assert n2.passed and n2.learned and n2.path == "deep"
    assert o2.passed and o2.path == "skill" and o2.skill_id == n2.skill_id and o2.llm_calls == 0
    assert summary.systems["skills"].success_rate == 1.0 and summary.systems["native"].success_rate == 0.5
    assert summary.systems["native"].mean_tokens > 0
    cases = {(c.system, c.task_id): c for c in summary.cases}
    assert [(c.task_id, c.system) for c in summary.cases] == [(t, s) for t in ("ase_emt_atomization_n2", "ase_emt_atomization_o2") for s in ("native", "skills")]
    native_o2 = cases[("native", "ase_emt_atomization_o2")]
    assert (native_o2.passed, native_o2.answer, native_o2.expected, native_o2.llm_calls) == (False, N2_ANSWER, O2_ANSWER, 1)
    assert native_o2.reason == f"got {N2_ANSWER}, expected {O2_ANSWER} ± 0.001 (off by {N2_ANSWER - O2_ANSWER:.6g})"
    assert cases[("skills", "ase_emt_atomization_o2")].answer == O2_ANSWER and cases[("skills", "ase_emt_atomization_o2")].reason is None


def test_cli_bench_json_and_bad_usage(workspace, tmp_path, capsys):
    suite = tmp_path / "suite"
    task_file(suite, "one", "print(3)")
    assert main(["bench", str(suite), "--systems", "reference", "--reps", "2", "--level", "1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {"passed", "total", "success_rate", "pass_at_k", "mean_wall_s"} <= set(summary["systems"]["reference"])
    assert summary["systems"]["reference"]["pass_at_k"] == {"1": 1.0, "2": 1.0} and summary["runs"] == 2
    assert [{k: v for k, v in case.items() if k != "wall_s"} for case in summary["cases"]] == [
        {"task_id": "one", "level": 1, "rep": rep, "system": "reference", "passed": True, "answer": 3, "expected": 3, "reason": None, "llm_calls": 0}
        for rep in (1, 2)
    ]
    assert all(set(case) == {"task_id", "level", "rep", "system", "passed", "answer", "expected", "reason", "wall_s", "llm_calls"} for case in summary["cases"])
    assert main(["bench", str(suite), "--systems", "reference,telepathy"]) == 2
    assert "unknown system(s) telepathy" in capsys.readouterr().err
    assert main(["bench", str(tmp_path / "nowhere"), "--systems", "reference"]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["bench", str(suite), "--reps", "0"]) == 2


def test_each_system_repetition_gets_its_own_workspace_and_store_with_answers_hidden(workspace):
    from benchmarks.systems import SYSTEMS
    from deployments.sandbox.execute import SandboxLimits
    from flows.benchmark import case_settings
    from flows.deep_solve import debug_strategies

    base = get_settings()
    answers = [workspace.parent / "suite" / "t.json"]
    deep1 = case_settings(base, SYSTEMS["deep"], "run", 1, answers)
    deep2 = case_settings(base, SYSTEMS["deep"], "run", 2, answers)
    assert deep1.workspace != deep2.workspace and deep1.store_root() != deep2.store_root()
    assert deep1.store_database != deep2.store_database  # a MongoDB store is split by database name
    assert not deep1.use_memory and not deep1.learn and not deep1.triage_llm
    hidden = SandboxLimits.from_settings(deep1).hidden
    assert str(base.store_root()) in hidden and str(answers[0].resolve()) in hidden and str(deep1.store_root()) in hidden
    assert str(STARTER.parent) in hidden and str(STARTER.parents[2] / "skills" / "library") in hidden
    assert debug_strategies(deep1) == ["diagnostic", "introspection", "research"]
    assert debug_strategies(case_settings(base, SYSTEMS["native"], "run", 1, [])) == []
    assert debug_strategies(case_settings(base, SYSTEMS["nsr"], "run", 1, [])) == []
    search_debug = case_settings(base, SYSTEMS["search_debug"], "run", 1, [])
    assert debug_strategies(search_debug) == ["diagnostic"] and search_debug.debug_max_attempts == 4
    assert debug_strategies(base.model_copy(update={"self_reflection": False})) == ["diagnostic", "research"]
    skills = case_settings(base, SYSTEMS["skills"], "run", 1, [])
    assert skills.use_memory and skills.learn and skills.continuous_learning
    assert not case_settings(base, SYSTEMS["ncl"], "run", 1, []).continuous_learning


def test_benchmark_cases_run_on_dask_when_a_cluster_is_configured(workspace, tmp_path, monkeypatch):
    from deployments.cluster import close_clusters, open_cluster

    for name, value in {"TASK_RUNNER": "dask", "DASK_CLUSTER": "local", "DASK_WORKERS": "2"}.items():
        monkeypatch.setenv(f"EVOSKILL_{name}", value)
    suite = tmp_path / "suite"
    for i in range(3):
        task_file(suite, f"t{i}", f"print({i})", answer=i)
    try:
        summary = benchmark([str(suite)], systems=["reference"], reps=2, levels=[1])
        ran = open_cluster(get_settings()).client.run(lambda dask_worker: dask_worker.state.executed_count)
    finally:
        close_clusters()
    assert summary.runs == 6 and summary.systems["reference"].passed == 6
    assert sum(ran.values()) >= 6 and len(ran) == 2, f"the cases did not run on the Dask workers: {ran}"
    assert open_store(get_settings()).count("benchmark_records", {"run_id": summary.run_id}) == 6
