"""A workspace inside a granted folder (``solve --input .`` where the default ``.evoskill`` workspace lives) stays hidden.

The run is granted the folder that holds the workspace, read-only. Everything of the workspace but the run's own folder
must read as absent or empty: the Prefect database, other runs, logs, handed-back outputs, the package cache, the
admission locks, as well as the store, trajectories and web accounts. Each test runs under every isolation this machine has,
cold and warm; ``none`` claims no view (SECURITY.md): there the documented weakness is asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.sandbox_escapes import READ_ALL

CANARY = "sk-canary-3e1d07"

WORKSPACE_FILES = {
    "prefect database": "prefect/prefect.db",
    "another run": "runs/other-run-0a1b2c3d/main.py",
    "another run's output": "runs/other-run-0a1b2c3d/result.json",
    "log": "logs/evoskill.log",
    "handed-back output": "outputs/other-run-0a1b2c3d/x.png",
    "package cache": "cache/packages/pymatgen.json",
    "admission lock": "admission/solve-0.lock",
    "store": "store/evoskill.skills.sqlite",
    "trajectory": "trajectories/solve-1.json",
    "web accounts": "web-users.json",
    "cookie key": "web-secret",
}

def _plant(path: Path, text: str = CANARY) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_workspace_inside_a_granted_folder_reads_as_absent(sandbox, isolation, tmp_path):
    workspace = tmp_path / ".evoskill"
    paths = {name: str(_plant(workspace / relative)) for name, relative in WORKSPACE_FILES.items()}
    paths["granted data"] = str(_plant(tmp_path / "data" / "structure.cif"))
    tmp_path.chmod(0o755)  # granted: readable by every user, as a run's own user must read it where evoskill runs as root
    result = sandbox.run(READ_ALL % (json.dumps(paths), CANARY), settings=sandbox.settings(workspace=workspace), inputs=(tmp_path,))
    assert result.ok, result.error
    read = sorted(result.answer)
    if isolation["allow_list"]:
        assert read == ["granted data"]  # e.g. also 'prefect database', 'another run', 'log', ...
    else:  # documented: without namespaces generated code reads what the evoskill user can
        assert read == sorted(paths)
