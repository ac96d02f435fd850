"""Helper interpreters: isolated from the current folder, and still with the installed packages and evoskill's settings."""

import os
import site
import subprocess
import sys
from pathlib import Path

from deployments.interpreter import helper_folder, isolation_flags, python_command, safe_path_for_children
from deployments.settings import get_settings
from tests.planted import plant

PROBE = "import deployments, pydantic, os; print(deployments.__file__); print(pydantic.__file__); print(os.environ['EVOSKILL_WORKSPACE'])"


def _run(command: list[str], here: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run(command, cwd=here, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_a_helper_imports_the_installed_packages_not_the_folder_it_starts_in(workspace, tmp_path):
    here = tmp_path / "here"
    marker = plant(here, "deployments", "pydantic")
    env = {**os.environ, "PYTHONPATH": str(here)}  # ignored too: a helper's imports come from the environment evoskill runs in
    found = _run(python_command("-c", PROBE), here, env)
    assert not any(path.startswith(str(here)) for path in found[:2]) and found[2] == os.environ["EVOSKILL_WORKSPACE"]
    assert not marker.exists()


def test_with_packages_in_the_users_site_packages_the_flags_keep_them_and_still_leave_the_folder_out(workspace, tmp_path, monkeypatch):
    user_site = str(tmp_path / "user-site")
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages", lambda: user_site)
    assert isolation_flags() == ["-I"]  # not on the path: nothing comes from there
    monkeypatch.setattr(sys, "path", [*sys.path, user_site])
    assert isolation_flags() == ["-E", "-P"]
    here = tmp_path / "here"
    marker = plant(here, "deployments", "pydantic")
    found = _run([sys.executable, "-E", "-P", "-c", PROBE], here, dict(os.environ))
    assert not any(path.startswith(str(here)) for path in found[:2]) and not marker.exists()


def test_the_helper_folder_is_an_empty_folder_of_the_workspace(workspace):
    folder = helper_folder(get_settings())
    assert folder == workspace.resolve() / "helpers" and folder.is_dir() and not any(folder.iterdir())


def test_children_started_without_flags_get_a_safe_path_and_a_users_choice_is_kept(monkeypatch, tmp_path):
    safe_path_for_children()
    assert os.environ["PYTHONSAFEPATH"] == "1"
    here = tmp_path / "here"
    marker = plant(here, "json")
    assert _run([sys.executable, "-c", "import json; print(json.__file__)"], here, dict(os.environ))[0].startswith(sys.base_prefix)
    assert not marker.exists()
    monkeypatch.setenv("PYTHONSAFEPATH", "yes")
    safe_path_for_children()
    assert os.environ["PYTHONSAFEPATH"] == "yes"
