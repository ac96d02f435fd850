"""What a contained run hands back is read as data: crafted streams (as a sender that lies would write them) make
nothing outside the run's folder, never more than the bounds, and stop the sender; real runs hand back only their
folders and regular files, within the bounds."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
import tracemalloc
from collections.abc import Iterable
from pathlib import Path

import pytest

from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code, warm_up
from deployments.sandbox.handback import HandBack, HandBackBounds

MB = 1024 * 1024
STATUS = json.dumps({"status": 0, "timed_out": False, "cpu_s": 0.1}).encode() + b"\n"
END = json.dumps({"end": True, "skipped": {}, "stopped": None}).encode() + b"\n"


def _entry(path: str, kind: str = "file", body: bytes | None = b"", **extra: object) -> bytes:
    header = {"path": path, "type": kind, **extra}
    if kind == "file" and "size" not in extra:
        header["size"] = len(body or b"")
    return json.dumps(header).encode() + b"\n" + (body or b"" if kind == "file" else b"")


def _receive(chunks: Iterable[bytes], dest: Path, max_files: int = 100, max_bytes: int = 16 * MB, seconds: float = 10.0,
             stall: bool = False) -> tuple[HandBack, list[str]]:  # fmt: skip
    """Feed ``chunks`` to a hand-back into ``dest`` from a writer thread; the hand-back, and what ``stop_sender`` was told."""
    read, write = os.pipe()
    stopped: list[str] = []
    done = threading.Event()

    def sender() -> None:
        try:
            for chunk in chunks:
                os.write(write, chunk)
            if stall:
                done.wait(30)
        except OSError:  # the receiver closed its end: what a killed or refused sender sees
            pass
        finally:
            os.close(write)

    writer = threading.Thread(target=sender, daemon=True)
    writer.start()
    handback = HandBack(read, dest, HandBackBounds(max_files, max_bytes, time.monotonic() + seconds), lambda: stopped.append("stop"))
    handback.start()
    handback.join(seconds + 5)
    done.set()
    writer.join(5)
    assert not handback.is_alive()
    return handback, stopped


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    """A run's folder on the host, as evoskill makes it, beside files a stream must never reach."""
    folder = tmp_path / "runs" / "run-1"
    (folder / "tmp").mkdir(parents=True)
    (folder / "main.py").write_text("print(1)\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    return folder


def _everything(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_folders_and_files_come_back_with_their_bytes_owner_only(dest):
    payload = os.urandom(200_000)
    handback, stopped = _receive([STATUS, _entry("a", "dir"), _entry("a/b", "dir"), _entry("a/b/data.bin", body=payload),
                                  _entry("tmp/note.txt", body=b"hi"), _entry("empty.txt"), END], dest)  # fmt: skip
    assert handback.problem is None and stopped == [] and handback.status is not None and handback.status.status == 0
    assert (dest / "a/b/data.bin").read_bytes() == payload and (dest / "tmp/note.txt").read_text() == "hi"
    assert (handback.files, handback.bytes) == (3, 200_002)
    assert stat.S_IMODE((dest / "a/b/data.bin").stat().st_mode) == 0o600 and stat.S_IMODE((dest / "a").stat().st_mode) == 0o700


@pytest.mark.parametrize(
    "name",
    ["/etc/evoskill-pwned", "../secret.txt", "a/../../secret.txt", "../outside/x", "./x", "a//b", "", "nul\x00x", "x" * 256,
     "/".join(["d"] * 65), "main.py", ".evoskill-run.json", ".evoskill-anything", ".sandbox-root/x"],
)  # fmt: skip
def test_a_name_out_of_the_folder_or_of_evoskills_own_is_refused_and_the_sender_stopped(dest, name):
    before = _everything(dest.parent.parent)
    handback, stopped = _receive([STATUS, _entry(name, body=b"pwned"), _entry("after.txt", body=b"x"), END], dest)
    assert handback.problem is not None and "not all kept" in handback.problem and stopped == ["stop"]
    assert _everything(dest.parent.parent) == before  # nothing made anywhere, not even the entries after it
    assert (dest / "main.py").read_text() == "print(1)\n" and (dest.parent.parent / "secret.txt").read_text() == "secret"


@pytest.mark.parametrize(
    "header",
    [{"path": "link", "type": "symlink", "target": "/etc/passwd"}, {"path": "hard", "type": "link", "target": "../secret.txt"},
     {"path": "dev", "type": "chr", "major": 1, "minor": 3}, {"path": "fifo", "type": "fifo"}, {"path": "x", "type": "file", "size": -1},
     {"path": "x", "type": "file", "size": 1, "mode": 0o4755}, {"path": 7, "type": "file", "size": 0}, ["x"], "x"],
)  # fmt: skip
def test_anything_but_a_folder_or_a_regular_file_is_refused(dest, header):
    before = _everything(dest)
    handback, stopped = _receive([STATUS, json.dumps(header).encode() + b"\nx", END], dest)
    assert handback.problem is not None and stopped == ["stop"] and _everything(dest) == before


def test_nothing_is_written_through_a_link_already_in_the_folder(dest, tmp_path):
    (dest / "tmp").rmdir()
    (dest / "tmp").symlink_to(tmp_path / "outside")  # as if the folder had been tampered with
    (dest / "into").symlink_to(tmp_path / "secret.txt")
    for entries in ([_entry("tmp/x.txt", body=b"pwned")], [_entry("into", body=b"pwned")], [_entry("tmp", "dir"), _entry("tmp/y", body=b"p")]):
        handback, stopped = _receive([STATUS, *entries, END], dest)
        assert handback.problem is not None and stopped == ["stop"]
    assert list((tmp_path / "outside").iterdir()) == [] and (tmp_path / "secret.txt").read_text() == "secret"


def test_a_file_twice_is_refused_not_overwritten(dest):
    handback, stopped = _receive([STATUS, _entry("a.txt", body=b"first"), _entry("a.txt", body=b"second"), END], dest)
    assert handback.problem is not None and "twice" in handback.problem and (dest / "a.txt").read_text() == "first"


def test_more_entries_than_allowed_stop_there(dest):
    entries = [_entry(f"f{i}.txt", body=b"x") for i in range(50)]
    handback, stopped = _receive([STATUS, *entries, END], dest, max_files=10)
    assert handback.problem is not None and "more than 10 files" in handback.problem and stopped == ["stop"]
    assert len(list(dest.glob("f*.txt"))) == 10


def test_a_file_longer_than_the_disk_limit_is_refused_before_a_byte_is_read(dest):
    # A sparse file's length is what counts: 1.9 GB declared, sent or not, against a 16 MB limit.
    handback, stopped = _receive([STATUS, _entry("sparse.bin", size=1900 * MB, body=None), b"\0" * 65536], dest, max_bytes=16 * MB)
    assert handback.problem is not None and "16 MB disk limit" in handback.problem and stopped == ["stop"]
    assert not (dest / "sparse.bin").exists()


def test_the_bytes_of_all_files_together_are_bounded(dest):
    entries = [_entry(f"part-{i}.bin", body=b"0" * MB) for i in range(8)]
    handback, stopped = _receive([STATUS, *entries, END], dest, max_bytes=5 * MB)
    assert handback.problem is not None and stopped == ["stop"] and handback.bytes == 5 * MB
    assert sum(f.stat().st_size for f in dest.glob("part-*.bin")) == 5 * MB


def test_a_sender_that_stalls_is_stopped_at_the_deadline(dest):
    started = time.monotonic()
    handback, stopped = _receive([STATUS, _entry("slow.bin", size=10, body=None), b"12345"], dest, seconds=1.0, stall=True)
    assert handback.problem is not None and "wall-clock" in handback.problem and stopped == ["stop"]
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    "chunks",
    [[b"not json\n"], [STATUS, b"{" + b" " * 9000 + b"\n"], [STATUS, b"[1, 2\n"], [STATUS, _entry("cut.bin", size=100, body=None), b"x" * 10],
     [STATUS, _entry("ok.txt", body=b"x")], [json.dumps({"status": 0, "extra": "field"}).encode() + b"\n", END]],
)  # fmt: skip
def test_a_malformed_or_cut_stream_is_refused(dest, chunks):
    handback, stopped = _receive(chunks, dest)
    assert handback.problem is not None and stopped == ["stop"]


def test_an_empty_stream_says_the_launcher_did_not_finish(dest):
    handback, stopped = _receive([], dest)
    assert handback.status is None and "not handed back" in (handback.problem or "")


def test_a_large_file_is_copied_in_chunks_not_held_in_memory(dest):
    size = 48 * MB
    block = b"z" * MB
    tracemalloc.start()
    try:
        handback, _ = _receive([STATUS, _entry("big.bin", size=size, body=None), *([block] * 48), END], dest, max_bytes=64 * MB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert handback.problem is None and (dest / "big.bin").stat().st_size == size
    assert peak < 8 * MB + 2 * MB  # the sender's own blocks (1 MB each, queued in the test) and a few 64 KiB chunks, never the file


def test_what_the_sender_left_behind_is_said(dest):
    end = json.dumps({"end": True, "skipped": {"links, devices, pipes and sockets": 2}, "stopped": "more than 5 files and folders"})
    handback, stopped = _receive([STATUS, end.encode() + b"\n"], dest)
    assert handback.problem is None and stopped == []
    assert handback.left_behind == "2 links, devices, pipes and sockets; nothing after more than 5 files and folders"


# Real runs: what the launcher (cold) or runner (warm) sends is bounded the same way, and only folders and regular files go.


@pytest.fixture(params=["bwrap-cold", "bwrap-warm", "unshare-cold", "unshare-warm"])
def contained(request: pytest.FixtureRequest) -> SandboxLimits:
    kind, how = request.param.split("-")
    if not isolation_report(wanted=kind)["namespaces"]:
        pytest.skip(f"{kind} isolation is not available here")
    limits = SandboxLimits(isolation=kind, warm=how == "warm", wall_s=20, disk_mb=16, file_size_mb=4096, max_files=20)
    assert how == "cold" or warm_up(limits)
    return limits


def test_a_run_hands_back_only_folders_and_regular_files_within_its_bounds(contained, tmp_path):
    code = (
        "import os, socket, json\n"
        "os.makedirs('kept/inner')\n"
        "open('kept/inner/data.txt', 'w').write('data')\n"
        "os.symlink('/etc/passwd', 'link')\n"
        "os.link('kept/inner/data.txt', 'hard')\n"
        "os.mkfifo('fifo')\n"
        "socket.socket(socket.AF_UNIX).bind('sock')\n"
        "with open('sparse.bin', 'wb') as fh:\n"
        "    fh.truncate(1900 * 1024 * 1024)\n"
        "os.mkdir('zz')\n"
        "for i in range(40):\n"
        "    open(f'zz/many-{i:02d}.txt', 'w').write(str(i))\n"
        "print(json.dumps('done'))\n"
    )
    started = time.perf_counter()
    result = run_code(code, tmp_path, contained)
    assert result.ok and result.answer == "done", result.error
    assert time.perf_counter() - started < 15  # a FIFO is never opened for reading; the sparse file is never read
    folder = Path(result.workdir)
    assert (folder / "kept/inner/data.txt").read_text() == "data" and (folder / "hard").read_text() == "data"  # a hard link is a file
    assert not any((folder / name).exists() or (folder / name).is_symlink() for name in ("link", "fifo", "sock", "sparse.bin"))
    kept = [path.name for path in folder.glob("zz/many-*.txt")]
    assert 0 < len(kept) < 20 and set(kept) <= {f"many-{i:02d}.txt" for i in range(40)}  # 20 entries in all
    assert "sandbox: not kept from the run folder:" in result.stderr and "links, devices, pipes and sockets" in result.stderr
    assert "files beyond the run's disk limit" in result.stderr and "more than 20 files and folders" in result.stderr
    allocated = sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())
    assert allocated < 17 * MB  # nothing lands past the disk limit
