"""``evoskill bench`` on bad input: a line or two on stderr, exit code 2, no traceback, and no flow started."""

import json
from pathlib import Path

import pytest

import flows.benchmark as bench_module
from flows.interfaces.cli.main import main

GOOD = {"id": "good", "user_query": {"1": "Compute it. Return an integer."}, "answer": 3, "solution_code_or_process": "print(3)"}


def suite_with(folder: Path, **files: dict | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / f"{name}.json").write_text(content if isinstance(content, str) else json.dumps(content))
    return folder


def bad_request(kind: str, tmp_path: Path) -> list[str]:
    """The ``bench`` arguments of one kind of bad request."""
    good = str(suite_with(tmp_path / "good", good=GOOD))
    return {
        "missing path": [str(tmp_path / "nowhere"), "--systems", "reference"],
        "missing path next to a good one": [good, str(tmp_path / "nowhere.json"), "--systems", "reference"],
        "folder without task files": [str(suite_with(tmp_path / "empty")), "--systems", "reference"],
        "only malformed tasks": [str(suite_with(tmp_path / "bad", broken='{"id": "broken", "answer": 1}', worse="{not json")), "--systems", "reference"],
        "unknown system": [good, "--systems", "reference,telepathy"],
        "no system": [good, "--systems", ","],
        "zero repetitions": [good, "--reps", "0"],
        "zero workers": [good, "--workers", "0"],
        "report folder under a file": [good, "--systems", "reference", "--out", str(Path(good) / "good.json" / "report")],
    }[kind]


EXPECTED = {
    "missing path": "nowhere: no such file or folder",
    "missing path next to a good one": "nowhere.json: no such file or folder",
    "folder without task files": "empty: no *.json task files in this folder",
    "only malformed tasks": "broken.json: user_query: Field required; ",
    "unknown system": "unknown system(s) telepathy; choose from native, search_debug, deep",
    "no system": "name at least one system",
    "zero repetitions": "reps and workers must be at least 1 (got reps=0, workers=1)",
    "zero workers": "reps and workers must be at least 1 (got reps=3, workers=0)",
    "report folder under a file": "good.json is a file, not a folder",
}


@pytest.fixture
def no_flow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the benchmark flow is started."""

    def refuse(*args, **kwargs):
        pytest.fail("the benchmark flow started on a bad request")

    monkeypatch.setattr(bench_module, "benchmark", refuse)


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_a_bad_request_is_one_or_two_lines_and_exit_2_before_any_flow(kind, workspace, tmp_path, no_flow, capfd):
    assert main(["bench", *bad_request(kind, tmp_path)]) == 2
    out, err = capfd.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and "Traceback" not in err
    assert 1 <= len(lines) <= 2 and lines[0].startswith("evoskill bench: "), err
    assert EXPECTED[kind] in err, err


def test_only_malformed_tasks_name_the_suite_then_every_problem(workspace, tmp_path, no_flow, capfd):
    assert main(["bench", *bad_request("only malformed tasks", tmp_path)]) == 2
    first, second = capfd.readouterr().err.strip().splitlines()
    assert first == f"evoskill bench: no task loaded from {tmp_path / 'bad'}"
    assert second.startswith(f"{tmp_path / 'bad' / 'broken.json'}: user_query: Field required; {tmp_path / 'bad' / 'worse.json'}: cannot read a JSON task")


def test_bench_of_a_path_that_does_not_exist(workspace, capfd):
    assert main(["bench", "/nonexistent"]) == 2
    out, err = capfd.readouterr()
    assert err == "evoskill bench: /nonexistent: no such file or folder\n"
    assert "Traceback" not in out + err


def test_malformed_tasks_next_to_good_ones_are_reported_and_the_rest_run(workspace, tmp_path, capfd):
    suite = suite_with(tmp_path / "suite", good=GOOD, broken='{"id": "broken", "answer": 1}')
    assert main(["bench", str(suite), "--systems", "reference", "--reps", "1", "--level", "1", "--json"]) == 0
    out, err = capfd.readouterr()
    summary = json.loads(out)
    assert summary["runs"] == 1 and [c["task_id"] for c in summary["cases"]] == ["good"] and summary["cases"][0]["passed"]
    assert len(summary["problems"]) == 1 and "broken.json: user_query: Field required" in summary["problems"][0]
    # One line, however long its path: the progress console does not hard-wrap (it once broke lines inside the path).
    assert f"✗ {suite / 'broken.json'}: user_query: Field required" in err.splitlines() and "Traceback" not in err
