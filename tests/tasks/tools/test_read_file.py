"""read_file obeys the sandbox's rules: every secret is refused, even inside a granted folder or behind a link."""

import importlib.util

import pytest

from deployments.secret_paths import HOME_SECRETS
from deployments.settings import get_settings
from tasks.tools.errors import ToolError
from tasks.tools.read_file import read_file
from tasks.tools.registry import ToolBox

_CREDENTIAL_FILES = {".netrc", ".pypirc", ".git-credentials", ".npmrc"}


@pytest.fixture
def secrets(workspace, tmp_path, monkeypatch):
    """Every kind of secret, each holding a canary; the whole of ``tmp_path`` granted, so only secrecy keeps them out."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    found = {
        "store": workspace / "store" / "memories.json",
        "trajectory": workspace / "trajectories" / "solve-alice.json",
        "web accounts": workspace / "web-users.json",
        "cookie key": workspace / "web-secret",
        "config": tmp_path / "absent.toml",  # the workspace fixture's EVOSKILL_CONFIG
        "hidden path": tmp_path / "answers" / "answer.json",
    }
    for name in HOME_SECRETS:
        found[f"~/{name}"] = home / name if name in _CREDENTIAL_FILES else home / name / "credentials"
    for name, path in found.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# CANARY {name}\n")
    (tmp_path / "notes.md").write_text("# readable\n")
    settings = get_settings(sandbox_inputs=[tmp_path], sandbox_hidden_paths=[tmp_path / "answers"])
    return settings, found


def test_read_file_refuses_every_secret_even_inside_a_granted_folder(secrets, tmp_path):
    settings, found = secrets
    assert "readable" in read_file(str(tmp_path / "notes.md"), settings).text  # the grant works: refusals are for secrecy
    for name, path in found.items():
        with pytest.raises(ToolError, match="is secret") as info:
            read_file(str(path), settings)
        assert "CANARY" not in str(info.value), name
    for relative in ["web-secret", "web-users.json", "trajectories/solve-alice.json", "store/memories.json"]:  # relative to the workspace
        with pytest.raises(ToolError, match="is secret"):
            read_file(relative, settings)


def test_read_file_refuses_secrets_behind_links_and_dot_dot(secrets, tmp_path):
    settings, found = secrets
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "key.md").symlink_to(found["cookie key"])
    (tmp_path / "docs" / "ssh").symlink_to(found["~/.ssh"].parent)
    eos = importlib.util.find_spec("ase.eos").origin
    up_to_root = "/..".join([""] * (eos.count("/") + 1))
    tricks = [
        tmp_path / "docs" / "key.md",
        tmp_path / "docs" / "ssh" / "credentials",
        f"{tmp_path}/docs/../ws/web-secret",
        f"{eos}{up_to_root}{found['cookie key']}",
        "./trajectories/../web-users.json",
    ]
    for trick in tricks:
        with pytest.raises(ToolError, match="is secret"):
            read_file(str(trick), settings)


def test_the_workspace_with_every_users_runs_is_not_readable(workspace):
    settings = get_settings()
    run = workspace / "runs" / "solve-alice-1" / "main.py"
    run.parent.mkdir(parents=True)
    run.write_text("print('alice')\n")
    with pytest.raises(ToolError, match="is secret"):
        read_file(str(run), settings)
    with pytest.raises(ToolError, match="is secret"):
        read_file("runs/solve-alice-1/main.py", settings)


def test_a_model_asking_the_toolbox_for_the_cookie_key_gets_an_error_not_the_key(secrets):
    settings, found = secrets
    box = ToolBox(settings, user="bob")
    for path in ["web-secret", str(found["cookie key"]), str(found["~/.ssh"])]:
        result = box.call("read_file", path=path)
        assert not result.ok and "is secret" in (result.error or "") and "CANARY" not in result.output + (result.error or "")
