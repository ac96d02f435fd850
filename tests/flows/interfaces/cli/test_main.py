import json

import pytest

from flows.interfaces.cli.main import main
from tests.codes import CRASH, N2_ANSWER, N2_CODE, N2_QUERY

KEYS = {"success", "answer", "formatted", "unit", "path", "llm_calls", "tokens", "wall_s", "stages", "flow_run_id", "code", "error", "trajectory_path"}


def test_help_explains(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["solve", "--help"])
    assert exit_.value.code == 0
    assert "--json" in capsys.readouterr().out


def test_solve_json_is_one_object_on_stdout(scripted, capsys):
    scripted([{"stage": "triage", "content": {"conflict": ""}}, {"stage": "research", "content": {"code": N2_CODE}}])
    assert main(["solve", N2_QUERY, "--json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert KEYS <= set(summary)
    assert summary["success"] is True and summary["answer"] == N2_ANSWER
    assert [s["name"] for s in summary["stages"]] == ["recall", "research", "code-agent", "output-processor", "learn"]
    assert summary["path"] == "deep" and summary["learned"] is True and summary["skill_id"]
    assert "research" in err  # progress goes to stderr


def test_failed_solve_exits_1_and_shows_code_and_error(scripted, capsys, monkeypatch):
    monkeypatch.setenv("EVOSKILL_DEBUG_STRATEGIES", '["diagnostic"]')
    monkeypatch.setenv("EVOSKILL_DEBUG_MAX_ATTEMPTS", "1")
    scripted([{"stage": "triage", "content": {"conflict": ""}}, {"stage": "research", "content": {"code": CRASH}}, {"stage": "debug", "content": {"code": CRASH}}])
    assert main(["solve", N2_QUERY]) == 1
    out = capsys.readouterr().out
    assert "No answer:" in out and "ValueError: scripted failure" in out and CRASH.strip() in out


def test_empty_question_is_a_usage_error(capsys):
    assert main(["solve", "  "]) == 2
    assert "empty" in capsys.readouterr().err


def test_bad_session_id_is_a_usage_error(capsys):
    assert main(["solve", "what?", "--session", "my session"]) == 2
    assert "--session 'my session'" in capsys.readouterr().err


def test_bad_setting_is_reported_not_raised(scripted, capsys, monkeypatch):
    scripted([])
    monkeypatch.setenv("EVOSKILL_DEBUG_STRATEGIES", '["guessing"]')
    assert main(["solve", N2_QUERY]) == 1
    assert "unknown debug strategies" in capsys.readouterr().err


def test_a_missing_input_is_a_usage_error(capsys, tmp_path):
    assert main(["solve", "what is in it?", "--input", str(tmp_path / "nowhere.cif")]) == 2
    assert f"--input {tmp_path / 'nowhere.cif'}: no such file or folder" in capsys.readouterr().err


def test_an_input_is_readable_by_the_questions_code_when_granted(scripted, capsys, tmp_path):
    from deployments.sandbox.execute import isolation_report

    if not isolation_report()["allow_list"]:
        pytest.skip("no mount namespace: every file is readable here")
    data = tmp_path / "data" / "lattice.txt"
    data.parent.mkdir()
    data.write_text("3.61")
    for path in (tmp_path, data.parent, data):  # open to other users, as a run's own user must read it where evoskill runs as root
        path.chmod(0o755 if path.is_dir() else 0o644)
    code = f"import json\nprint(json.dumps(float(open({str(data)!r}).read())))\n"
    question = f"Read the lattice constant in {data} and return it as a float."
    scripted([{"stage": "triage", "content": {"conflict": ""}}, {"stage": "research", "content": {"code": code}}])
    assert main(["solve", question, "--json", "--input", str(data.parent)]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == 3.61


def test_human_output_shows_what_the_skill_ran_with_and_the_real_wall_time(capsys):
    from flows.interfaces.cli.main import _print_human
    from skills.documents import BoundValue, StageRecord
    from tasks.models import SolveResult

    params = [BoundValue(name="formula", value="O2", words="O2"), BoundValue(name="fmax", value=0.01, words="verified default")]
    stages = [StageRecord(name="debug-a", wall_s=60.0, ok=False), StageRecord(name="debug-b", wall_s=42.0, ok=True)]
    declined = ["other-v1: The skill could not use formula='Xe2': ase.build.molecule() has no entry for 'Xe2'.\nexited with code 1: KeyError: 'Xe2'"]
    _print_human(SolveResult(success=True, formatted="8.5753 eV", path="skill", skill_id="emt-v1", params=params, stages=stages, wall_s=85.0, declined=declined))
    out = capsys.readouterr().out
    assert "Answer: 8.5753 eV  (skill emt-v1)\nRan with: formula='O2' (from \"O2\"), fmax=0.01 (the skill's verified default)\n" in out
    assert "Skill declined: other-v1: The skill could not use formula='Xe2'" in out and "\n  exited with code 1: KeyError: 'Xe2'" in out
    assert "wall 85.0 s (the stage times add up to 102.0 s: some ran in parallel)" in out


def test_status_lists_each_prefect_server_with_its_workspace(workspace, capsys, monkeypatch):
    from deployments import prefect_server

    mine = str(workspace.resolve())
    monkeypatch.setattr(prefect_server, "workspace_servers", lambda: [(101, 40001, mine), (202, 40002, "/home/someone/other-ws")])
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert f"* {mine}" in out and "  /home/someone/other-ws" in out and "40001" in out and "40002" in out
