"""The shell tools run in the sandbox with evoskill's own settings: the allow-list view, no network, no secrets."""

import socket
from pathlib import Path

import pytest

from deployments.sandbox.execute import SandboxLimits, isolation_report, warm_up
from deployments.settings import get_settings
from tasks.tools.errors import ToolError
from tasks.tools.shell import create_and_execute_script, execute_shell_command

contained = pytest.mark.skipif(not isolation_report()["allow_list"], reason="no mount namespace: the sandbox gives limits only here")


@pytest.fixture(params=["cold", "warm"])
def executor(request: pytest.FixtureRequest, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The tools' runs started cold, or from the warm executor (started and ready first)."""
    monkeypatch.setenv("EVOSKILL_SANDBOX_WARM", str(request.param == "warm").lower())
    assert request.param == "cold" or warm_up(SandboxLimits.from_settings(get_settings()))
    return request.param


@contained
def test_a_shell_command_sees_only_the_allow_list(workspace, monkeypatch, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("canary")
    monkeypatch.setenv("HOME", str(home))
    for mode in ("cold", "warm"):
        monkeypatch.setenv("EVOSKILL_SANDBOX_WARM", str(mode == "warm").lower())
        assert mode == "cold" or warm_up(SandboxLimits.from_settings(get_settings()))
        _sees_only_the_allow_list(get_settings(), home, mode)


def _sees_only_the_allow_list(settings, home: Path, mode: str) -> None:
    settings.store_root().mkdir(parents=True, exist_ok=True)
    workspace_root = settings.workspace.resolve()
    result = execute_shell_command(f"ls -a / ; echo ---; ls -R {workspace_root} ; echo ---; cat {home}/.ssh/id_ed25519", settings)
    assert result.executor == mode
    assert result.ok and result.answer == {"exit_code": 1}  # cat fails: the home folder is not there
    top, workspace_listing, _ = result.stdout.split("---")
    assert {"usr", "etc", "proc", "dev", "tmp"} <= set(top.split())
    assert not set(top.split()) & {"home", "srv", "mnt", "media", "opt", "boot", "run"}
    # Of the workspace, only the path down to its own run folder (a cold run's folder is at its own path): no store, no
    # trajectories, no other run. A warm run's folder is at /sandbox: nothing of the workspace at all.
    if result.executor == "cold":
        assert set(workspace_listing.split()) - {f"{workspace_root}:", f"{workspace_root}/runs:", f"{workspace_root / 'runs' / Path(result.workdir).name}:"} \
            == {"runs", Path(result.workdir).name, "main.py", "tmp", f"{workspace_root / 'runs' / Path(result.workdir).name}/tmp:"}
    else:
        assert workspace_listing.split() == [] and f"{workspace_root}': No such file or directory" in result.stderr
    assert "canary" not in result.stdout + result.stderr and "No such file or directory" in result.stderr


@contained
def test_a_shell_command_cannot_reach_the_network(workspace):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        result = execute_shell_command(
            f"python -c \"import socket; socket.create_connection(('127.0.0.1', {listener.getsockname()[1]}), timeout=5)\"", get_settings()
        )
    finally:
        listener.close()
    assert result.ok and result.answer["exit_code"] == 1 and ("Connection refused" in result.stderr or "unreachable" in result.stderr)


def test_a_script_runs_in_its_own_run_folder(executor):
    script = "import json, os\nopen('here.txt', 'w').write('mine')\nprint(json.dumps(sorted(os.listdir('.'))))\n"
    result = create_and_execute_script("probe", script, get_settings())
    assert result.ok and result.executor == executor and result.answer == ["here.txt", "main.py", "tmp"]  # a fresh folder: nothing of any other run
    assert Path(result.workdir).name.startswith("probe-") and (Path(result.workdir) / "here.txt").read_text() == "mine"


def test_empty_commands_and_scripts_are_tool_errors(workspace):
    with pytest.raises(ToolError):
        execute_shell_command("  ", get_settings())
    with pytest.raises(ToolError):
        create_and_execute_script("x", "", get_settings())
