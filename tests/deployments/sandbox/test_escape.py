"""Generated code that tries to act on the host from inside its sandbox: through another process's descriptors, through the
hand-back of its run folder, and through the host's sysctls as the host's root.

A cold run's code is a child of its launcher. Were it able to open the launcher's descriptors (``/proc/<pid>/fd``), it could
write into the pipe on which evoskill reads the run's status and its run folder back (a tar stream unpacked with tarfile's
``data`` filter): forge the status, and craft members that land outside the run folder. Each test runs under every
isolation this machine has, cold and warm; ``none`` claims none of this (SECURITY.md): there the documented weakness is
asserted, or the test is skipped where the attack would reach the machine's own processes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.sandbox_escapes import LIBRARY, escape_payload

VICTIM = "a file outside the run folder\n"


def _report(stdout: str) -> dict:
    """The payload's report: its last stdout line."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert lines, "the payload printed nothing"
    return json.loads(lines[-1])


def _crafted(workdir: Path) -> list[str]:
    """What of the forged hand-back reached the run folder (every crafted member is named ``crafted-*``)."""
    found = []
    for top, dirs, files in os.walk(workdir):
        found += [os.path.relpath(os.path.join(top, name), workdir)[:80] for name in [*dirs, *files] if name.startswith("crafted")]
        dirs[:] = [d for d in dirs if not d.startswith("crafted")]
    return sorted(found)


def _no_processes_of_the_host(isolation: dict[str, bool | str]) -> None:
    if not isolation["namespaces"]:
        pytest.skip("none isolation shares the host's processes (SECURITY.md): the payload would open evoskill's own descriptors")


def test_a_run_opens_no_descriptor_of_another_process(sandbox, isolation):
    _no_processes_of_the_host(isolation)
    result = sandbox.run(LIBRARY + "opened, handles = open_others()\nprint(_json.dumps(opened))\n")
    assert result.ok, result.error
    assert result.answer == []  # e.g. [[2, 3, "pipe:[…]"]]: the launcher's control pipe, where the run's status and files come back


def test_a_forged_hand_back_neither_escapes_the_run_folder_nor_fools_evoskill(sandbox, isolation, tmp_path):
    _no_processes_of_the_host(isolation)
    sentinels = tmp_path / "sentinels"
    sentinels.mkdir()
    victim = sentinels / "victim.txt"
    victim.write_text(VICTIM)
    result = sandbox.run(escape_payload(str(sentinels), str(victim), exit_code=1))
    workdir = Path(result.workdir)
    report = _report(result.stdout)
    outcome = {
        "outside the run folder": sorted(p.name for p in sentinels.iterdir() if p != victim),
        "victim": victim.read_text(),
        "exit code": result.exit_code,
        "ok": result.ok,
        "forged members in the run folder": _crafted(workdir),
        "forged result.json": (workdir / "result.json").exists(),
        "descriptors opened": report["opened"],
        "pipes written": report["sent"],
    }
    assert outcome == {
        "outside the run folder": [],
        "victim": VICTIM,
        "exit code": 1,
        "ok": False,
        "forged members in the run folder": [],
        "forged result.json": False,
        "descriptors opened": [],
        "pipes written": 0,
    }


def test_the_host_sysctls_cannot_be_opened_for_writing(sandbox, isolation):
    result = sandbox.run(LIBRARY + "print(_json.dumps(open_sysctls()))\n")
    assert result.ok, result.error
    if isolation["namespaces"]:
        assert result.answer == []  # e.g. /proc/sys/kernel/core_pattern: a program run as root on the next crash
    elif os.geteuid() == 0:  # documented: without namespaces the code has the user's powers, root's here
        assert "/proc/sys/kernel/core_pattern" in result.answer
    else:
        assert result.answer == []


_HOST_UID = """
import json, os
uid, mapped = os.getuid(), None
with open('/proc/self/uid_map') as fh:
    for line in fh:
        inside, outside, count = map(int, line.split())
        if inside <= uid < inside + count:
            mapped = outside + uid - inside
print(json.dumps({'uid': uid, 'mapped': mapped, 'userns': os.readlink('/proc/self/ns/user')}))
"""


def test_generated_code_is_not_root_of_the_host(sandbox, isolation):
    result = sandbox.run(_HOST_UID)
    assert result.ok, result.error
    seen = result.answer
    # Its uid as evoskill's user namespace sees it: the same one where it has no user namespace of its own, else mapped one level up.
    host_uid = seen["uid"] if seen["userns"] == os.readlink("/proc/self/ns/user") else seen["mapped"]
    if isolation["namespaces"]:
        assert host_uid is not None and host_uid != 0, f"generated code runs as uid {host_uid} of the host ({seen})"
    else:  # documented: without namespaces the code runs as evoskill's user
        assert host_uid == os.getuid()
