"""One definition of what is secret, shared by the sandbox and the in-process tools."""

from pathlib import Path

from deployments.sandbox import execute
from deployments.sandbox.execute import SandboxLimits
from deployments.secret_paths import HOME_SECRETS, hidden_paths, is_hidden
from deployments.settings import get_settings


def test_hidden_paths_hold_every_secret_of_the_installation(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    settings = get_settings(sandbox_hidden_paths=[tmp_path / "answers"])
    hidden = hidden_paths(settings)
    ws = workspace.resolve()
    expected = [ws, ws / "store", ws / "trajectories", ws / "web-users.json", ws / "web-secret", (tmp_path / "absent.toml").resolve(),
                (tmp_path / "answers").resolve(), *((tmp_path / "home" / name).resolve() for name in HOME_SECRETS)]  # fmt: skip
    assert set(expected) <= set(hidden)
    assert {".ssh", ".aws", ".config/gcloud", ".netrc", ".git-credentials"} <= set(HOME_SECRETS)
    for path in expected:
        assert is_hidden(path, settings) and is_hidden(path / "inside" / "deeper.json", settings)
    for inside in (ws / "runs", ws / "prefect" / "prefect.db", ws / "logs" / "evoskill.log"):  # the whole workspace, wherever it lies
        assert is_hidden(inside, settings)
    assert not is_hidden(tmp_path / "answers-not", settings) and not is_hidden(ws.parent / f"{ws.name}-beside", settings)


def test_the_sandbox_hides_exactly_the_shared_list(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    settings = get_settings(sandbox_hidden_paths=[tmp_path / "answers"])
    assert SandboxLimits.from_settings(settings).hidden == tuple(str(p) for p in hidden_paths(settings))
    assert not hasattr(execute, "_HOME_SECRETS") and not hasattr(execute, "_home_secrets")  # no second list to drift


def test_a_link_to_a_secret_is_hidden(workspace, tmp_path):
    settings = get_settings()
    secret = workspace / "web-secret"
    secret.parent.mkdir(parents=True, exist_ok=True)  # get_settings made the workspace
    secret.write_text("key")
    link = tmp_path / "innocent.md"
    link.symlink_to(secret)
    assert is_hidden(link, settings) and is_hidden(Path(f"{tmp_path}/x/../innocent.md"), settings)
