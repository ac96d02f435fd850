"""Generated code cannot reach the workspace's resident service: its socket folder is out of the view, and a grant of
that folder is refused by its permissions (the service runs commands as the user, outside the sandbox)."""

from __future__ import annotations

import json
import socket

import pytest

from flows.interfaces.service.place import runtime_dir

PROBE = """
import json, os, socket
folder = {folder!r}
seen = {{"listed": None, "connected": [], "abstract": None}}
try:
    seen["listed"] = sorted(os.listdir(folder))
except OSError as exc:
    seen["listed"] = type(exc).__name__
for path in [{sock!r}]:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(path)
            seen["connected"].append(path)
    except OSError:
        pass
try:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect("\\0evoskill-probe")
        seen["abstract"] = "connected"
except OSError as exc:
    seen["abstract"] = type(exc).__name__
print(json.dumps(seen))
"""


@pytest.fixture
def listening_service():
    """A socket where a service's would be, listening (and an abstract one beside it)."""
    path = runtime_dir() / "0000probe0000probe00.sock"
    path.unlink(missing_ok=True)
    server, abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    path.chmod(0o600)
    server.listen()
    abstract.bind("\0evoskill-probe")
    abstract.listen()
    yield path
    server.close()
    abstract.close()
    path.unlink(missing_ok=True)


def test_generated_code_cannot_reach_the_service_socket(sandbox, isolation, listening_service):
    if not isolation["namespaces"]:
        pytest.skip("isolation 'none' contains nothing (as documented)")
    code = PROBE.format(folder=str(listening_service.parent), sock=str(listening_service))
    for inputs in ((), (listening_service.parent,)):  # not in the view; and granted, refused by its permissions
        result = sandbox.run(code, inputs=inputs)
        assert result.ok, result.stderr
        seen = json.loads(result.stdout.strip().splitlines()[-1])
        assert seen["connected"] == [] and seen["abstract"] != "connected", seen
        assert not isinstance(seen["listed"], list) or listening_service.name not in seen["listed"], seen
