"""Generated code that plants links and fakes in its run folder to get a secret served as one of its plots.

Shared by the chat's and the MCP server's attack tests. The code runs under the ``none`` isolation, where it writes
the host run folder directly (contained runs hand back only folders and regular files, so such links never reach the
outputs), as evoskill's own user: where the tests run as root, as if evoskill ran as another user (as root, ``none``
gives each run an unprivileged user of its own, which could not read the secrets to plant them).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import re
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client

from deployments.sandbox import execute as sandbox_execute
from deployments.sandbox.isolations import none as none_isolation
from deployments.settings import get_settings

CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}
QUESTION = "Plot the three energies and return how many there are. Return an integer."
PNG = b"\x89PNG\r\n\x1a\n"
_ATTACK = """import json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
key = {key!r}
os.symlink(key, "secret.png")                          # the cookie-signing key behind an image's name
os.symlink("/etc/shadow", "shadow.png")                # the machine's passwords
os.symlink({victim!r}, "theirs.png")                   # another user's plot
os.link({victim!r}, "hard.png")                        # a hard link to it
os.symlink(os.path.dirname({victim!r}), "plots")       # a folder link in the middle of a path
open("fake.png", "wb").write(open(key, "rb").read())   # an image's name over the key's bytes
open("plot.svg", "w").write("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>")
open("svg.png", "w").write("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>")
plt.plot([1, 2, 3], [2.0, 1.0, 3.0])
plt.savefig("zz-energy.png")
print(json.dumps(3))
"""


def plant(monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, bytes]]:
    """Run generated code under ``none``; the attacking code, and the secrets it goes for by name (each non-empty)."""
    monkeypatch.setenv("EVOSKILL_SANDBOX_ISOLATION", "none")
    for module in (sandbox_execute, none_isolation):
        monkeypatch.setattr(module, "run_ids", lambda: None)
    monkeypatch.setattr(sandbox_execute, "_unavailable", functools.cache(sandbox_execute._unavailable.__wrapped__))  # judged afresh, for this test
    settings = get_settings()
    key = settings.workspace.resolve() / "web-secret"
    if not key.is_file():
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_text("cookie-key-0f3c9a1be2d84c7f")
    victim = settings.outputs_root() / "bobs-run-0a1b2c3d" / "00.png"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_bytes(PNG + b"bobs-private-plot-7d41")
    needles = {"cookie key": key.read_bytes().strip(), "another user's plot": b"bobs-private-plot-7d41"}
    try:
        needles["/etc/shadow"] = Path("/etc/shadow").read_bytes().strip()
    except OSError:  # not readable here: the link to it is refused all the same
        pass
    return _ATTACK.format(key=str(key), victim=str(victim)), {name: value for name, value in needles.items() if value}


def decoded(text: str) -> bytes:
    """``text`` with every inline base64 image in it decoded beside it."""
    images = re.findall(r"data:[\w/+.-]+;base64,([A-Za-z0-9+/=]+)", text)
    return text.encode() + b"".join(base64.b64decode(data) for data in images)


def artifacts() -> bytes:
    """Every Prefect artifact's data, inline images decoded."""

    async def read() -> str:
        async with get_client() as client:
            return "\n".join(str(a.data) for a in await client.read_artifacts())

    return decoded(asyncio.run(read()))


def assert_absent(needles: dict[str, bytes], where: str, data: bytes) -> None:
    for name, value in needles.items():
        assert value not in data, f"the {name} reached {where}"
