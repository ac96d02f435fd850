"""Fuzzing the command line, settings values, task files and skill files: a clear message, never a traceback.

Every case ends in an exit code with a message on stderr (or argparse's usage error); an exception
escaping ``main`` fails the test, and so does the catch-all "unexpected" message, which marks a bug.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from benchmarks.task import TaskFormatError, load_task
from deployments.settings import Settings, get_settings
from flows.interfaces.cli.main import main
from skills.store import open_store
from skills.transfer import SkillFileError, export_skill, import_skills
from tests.codes import add_two_skill

text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage errors (2) and --help (0)
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def assert_clear_failure(code: int, err: str) -> None:
    assert code in (1, 2) and err.strip(), "a failure needs a message"
    assert "Traceback" not in err and "unexpectedly" not in err, err


# Commands that fail before doing any work when given these arguments (nothing starts a server or a solve).
@given(st.lists(text, max_size=5))
def test_random_words_get_a_usage_error(workspace, words):
    code, _, err = run_cli(["no-such-command", *words])
    assert code == 2 and "invalid choice" in err


@given(
    st.sampled_from(["show", "run", "export", "delete", "batch"]),
    text.filter(lambda t: t.strip() and not t.startswith("-")),
    st.lists(text.map(lambda t: f"{t}={t[::-1]}"), max_size=3),
)
def test_skills_commands_with_unknown_ids_name_the_id(workspace, action, skill_id, params):
    argv = ["skills", action, skill_id] + ([a for p in params for a in ("--param", p)] if action == "run" else [])
    code, _, err = run_cli(argv)
    assert_clear_failure(code, err)
    named = [skill_id, *params] if action == "run" else [skill_id]  # a malformed --param is reported before the id is looked up
    assert any(repr(n) in err for n in named), err


def _as_int(text: str) -> int | None:
    """The integer ``--param a=TEXT`` stands for, or None: TEXT read as JSON when it is, then as a whole number."""
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if isinstance(value, (bool, int)) or (isinstance(value, float) and value.is_integer()):
        return int(value)
    if isinstance(value, str) and value.isascii():
        try:
            return int(value)  # sign, surrounding spaces and '_' between digits, as pydantic's lax int reads them
        except ValueError:
            return None
    return None


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "x"]), text | st.integers().map(str), max_size=3))
def test_skill_run_parameters_are_checked_against_the_schema(workspace, params):
    """Valid parameters run the skill and print a + b (defaults 2); anything else is a clear failure that runs nothing."""
    store = open_store(get_settings())
    skill, _ = store.put_skill(add_two_skill())
    numbers = {k: _as_int(v) for k, v in params.items()}
    uses = store.get_skill(skill.id).stats.uses
    code, out, err = run_cli(["skills", "run", skill.id, *[a for k, v in params.items() for a in ("--param", f"{k}={v}")]])
    if set(params) <= {"a", "b"} and None not in numbers.values():
        assert (code, out) == (0, f"{numbers.get('a', 2) + numbers.get('b', 2)}\n"), err
    else:
        assert_clear_failure(code, err)
        assert out == "" and store.get_skill(skill.id).stats.uses == uses


FIELDS = sorted(Settings.model_fields)


@given(st.sampled_from(FIELDS), text)
@example("sandbox_wall_s", "two minutes")
@example("sandbox_hidden_paths", "/not/a/json/list")
@example("llm_backend", "gpt")
@example("store", "postgres://db")
def test_any_bad_setting_is_named_as_the_environment_variable(workspace, monkeypatch, tmp_path, field, value):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(f"EVOSKILL_{field.upper()}", value)
    try:
        get_settings()
    except ValueError:  # pydantic's ValidationError and pydantic-settings' SettingsError
        accepted = False
    else:
        accepted = True
    code, out, err = run_cli(["skills", "list"])
    monkeypatch.delenv(f"EVOSKILL_{field.upper()}")
    if accepted and (code == 0 or field != "store"):  # the store's address is checked only when the store is opened
        assert (code, out) == (0, "") and "0 skills" in err and "holds no skill yet" in err, err  # the empty store, listed
    else:
        assert_clear_failure(code, err)
        assert f"EVOSKILL_{field.upper()}" in err or field in err, err


@given(json_values)
@example({"id": "t", "query": {"0": "What is 2 + 2?"}, "answer": None})
def test_a_malformed_task_file_is_reported_with_its_path(tmp_path, data):
    path = tmp_path / "task.json"
    path.write_text(json.dumps(data))
    try:
        task = load_task(path)
    except TaskFormatError as exc:
        assert str(path) in str(exc)
    else:
        assert task.query(0) or task.query(1)


@given(st.binary(max_size=200))
@example(b"\x80 not UTF-8")
def test_a_task_file_that_is_not_json_is_reported(tmp_path, raw):
    path = tmp_path / "task.json"
    path.write_bytes(raw)
    with pytest.raises(TaskFormatError, match="task.json"):
        load_task(path)


@given(st.sampled_from(["name", "code", "parameters", "test_case", "packages", "version", "resources", "provenance", "output_type"]), json_values)
@example("version", 7)  # still a valid skill: verified, then stored or known
@example("code", "def run(a: int = 2, b: int = 2) -> int:\n    return a - b\n")  # its test case now fails: rejected
@example("code", "import os\nos.system('echo pwned > ~/pwned')\n")  # no run(): rejected, and it ran only in the sandbox
def test_a_tampered_skill_file_is_rejected_or_verified_never_half_imported(workspace, tmp_path, field, value):
    settings = get_settings()
    store = open_store(settings)
    data = json.loads(export_skill(add_two_skill()))
    data[field] = value
    path = tmp_path / "skill.json"
    path.write_text(json.dumps(data))
    before = store.count("skills")
    try:
        rows = import_skills(path, store, settings)
    except SkillFileError as exc:
        assert str(path) in str(exc) and store.count("skills") == before
        return
    ((name, outcome),) = rows
    stored = store.count("skills") - before
    assert outcome.startswith(("stored", "known", "rejected: ")) and stored == int(outcome.startswith("stored"))
    if field == "code":
        assert outcome.startswith("rejected: ")


def test_an_unexpected_error_is_one_line_not_a_traceback(workspace, monkeypatch):
    def broken(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("flows.interfaces.cli.main.run_skills", broken)
    code, _, err = run_cli(["skills", "list"])
    assert code == 1 and "Traceback" not in err
    log = workspace.resolve() / "logs" / "evoskill.log"
    assert err.strip() == f"evoskill skills failed unexpectedly: ZeroDivisionError: division by zero (traceback in {log}; please report this)"
    logged = log.read_text()
    assert "Traceback" in logged and 'raise ZeroDivisionError("division by zero")' in logged

