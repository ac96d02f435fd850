"""The shell tools run in the sandbox with evoskill's own settings: the allow-list view, no network, no secrets."""

import socket
from pathlib import Path

import pytest

from deployments.sandbox.execute import isolation_report
from deployments.settings import get_settings
from tasks.tools.errors import ToolError
from tasks.tools.shell import create_and_execute_script, execute_shell_command

contained = pytest.mark.skipif(not isolation_report()["allow_list"], reason="no mount namespace: the sandbox gives limits only here")


@contained
def test_a_shell_command_sees_only_the_allow_list(workspace, monkeypatch, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("canary")
    monkeypatch.setenv("HOME", str(home))
    settings = get_settings()
    settings.store_root().mkdir(parents=True, exist_ok=True)
    workspace_root = settings.workspace.resolve()
    result = execute_shell_command(f"ls -a / ; echo ---; ls -R {workspace_root} ; echo ---; cat {home}/.ssh/id_ed25519", settings)
    assert result.ok and result.answer == {"exit_code": 1}  # cat fails: the home folder is not there
    top, workspace_listing, _ = result.stdout.split("---")
    assert {"usr", "etc", "proc", "dev", "tmp"} <= set(top.split())
    assert not set(top.split()) & {"home", "srv", "mnt", "media", "opt", "boot", "run"}
    # Of the workspace, only the path down to its own run folder: no store, no trajectories, no other run.
    assert set(workspace_listing.split()) - {f"{workspace_root}:", f"{workspace_root}/runs:", f"{workspace_root / 'runs' / Path(result.workdir).name}:"} \
        == {"runs", Path(result.workdir).name, "main.py", "tmp", f"{workspace_root / 'runs' / Path(result.workdir).name}/tmp:"}
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


def test_a_script_runs_in_its_own_run_folder(workspace):
    result = create_and_execute_script("probe", "import json, os\nprint(json.dumps(os.path.basename(os.getcwd())))\n", get_settings())
    assert result.ok and result.answer.startswith("probe-")


def test_empty_commands_and_scripts_are_tool_errors(workspace):
    with pytest.raises(ToolError):
        execute_shell_command("  ", get_settings())
    with pytest.raises(ToolError):
        create_and_execute_script("x", "", get_settings())
