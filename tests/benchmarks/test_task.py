import json
from pathlib import Path

from benchmarks.task import CATEGORIES, load_suite

STARTER = Path(__file__).resolve().parents[2] / "benchmarks" / "suites" / "starter"

GOOD = {
    "id": "good",
    "user_query": {"0": "Compute it with f(). Return an integer.", "1": "Compute it. Return an integer."},
    "answer": 3,
    "absolute_tolerance": None,
    "solution_code_or_process": "print(3)",
}


def write(folder: Path, name: str, content) -> Path:
    path = folder / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_malformed_tasks_are_reported_with_file_and_field_and_the_rest_load(tmp_path):
    write(tmp_path, "a_good.json", GOOD)
    write(tmp_path, "b_broken.json", "{not json")
    write(tmp_path, "c_no_answer.json", {k: v for k, v in GOOD.items() if k not in ("answer", "id")})
    write(tmp_path, "d_bad_tolerance.json", {**GOOD, "id": "d", "absolute_tolerance": -0.1})
    write(tmp_path, "e_bad_query.json", {**GOOD, "id": "e", "user_query": {"2": "x"}})
    write(tmp_path, "f_category.json", {**GOOD, "id": "f", "category": "cooking"})
    write(tmp_path, "g_duplicate.json", GOOD)
    write(tmp_path, "h_list.json", [GOOD])
    suite = load_suite([tmp_path, tmp_path / "missing.json"])
    assert [t.id for t in suite.tasks] == ["good"]
    problems = "\n".join(suite.problems)
    assert len(suite.problems) == 8, problems
    assert "missing.json: no such file or folder" in problems
    assert "b_broken.json: cannot read a JSON task" in problems
    assert "c_no_answer.json: answer: Field required" in problems
    assert "d_bad_tolerance.json: absolute_tolerance: Input should be greater than or equal to 0" in problems
    assert "e_bad_query.json: user_query.2.[key]" in problems
    assert "f_category.json: category: Value error, unknown category 'cooking'" in problems
    assert "g_duplicate.json: id: 'good' is also the id of" in problems
    assert "h_list.json: a task is one JSON object" in problems


def test_a_null_answer_is_malformed(tmp_path):
    suite = load_suite([write(tmp_path, "t.json", {**GOOD, "answer": None})])
    assert not suite.tasks and "answer: Value error, is null" in suite.problems[0]


def test_the_starter_suite_is_valid_and_varied():
    suite = load_suite([STARTER])
    assert suite.problems == []
    assert len(suite.tasks) >= 20
    assert {t.category for t in suite.tasks} >= set(CATEGORIES) - {"data_retrieval"}
    sources = {s for t in suite.tasks for s in t.sources}
    assert {"ase", "pymatgen", "rdkit", "smact", "spglib"} <= sources
    for task in suite.tasks:
        assert task.user_query.get("0") and task.user_query.get("1"), task.id
        assert task.solution_code_or_process.strip(), task.id
        assert "requests" not in task.solution_code_or_process and "urllib" not in task.solution_code_or_process, task.id
    families = {t.id: t.skill_family for t in suite.tasks}
    for task in suite.tasks:
        if task.variant_of:
            assert families[task.variant_of] == task.skill_family, task.id
