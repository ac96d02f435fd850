"""What generated code may see: an allow-list of paths, everything else absent.

The view holds the system's programs and libraries (``/usr`` and the ``/bin``, ``/lib`` links), the few
``/etc`` files the dynamic linker, Python and the scientific packages read, the Python environment
(read-only), the paths a caller grants for this run (read-only), and the run's own folder (read-write,
size-limited). ``/tmp`` is a link into the run folder. No home folder, workspace, Prefect home or other
run folder is in it. A hidden path that falls inside a granted one is covered again.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["EGRESS", "SandboxView", "build_view", "closed_to_others", "inside", "python_paths"]

log = logging.getLogger(__name__)

# Top-level links or folders of the system's programs and libraries (a link on merged-/usr systems).
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# /etc entries read by the dynamic linker, Python, fontconfig and the scientific packages; nothing about users or hosts.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "mime.types", "nsswitch.conf", "fonts", "alternatives",
        "os-release", "debian_version")  # fmt: skip
# Only with the network on: name resolution and certificates.
_ETC_NETWORK = ("resolv.conf", "hosts", "host.conf", "gai.conf", "ssl", "ca-certificates", "pki")
# Read-only system facts numerical libraries use to size their thread pools.
_SYS = ("/sys/devices/system/cpu",)
# Where a run with the network on finds evoskill's web proxy (its Unix socket), the only way out of its network namespace.
EGRESS = "/run/evoskill/egress.sock"
# The sandbox's own user: programs that look themselves up by uid find this, not the machine's accounts.
PASSWD = "sandbox:x:{uid}:{gid}:sandbox:{home}:/bin/sh\n"
GROUP = "sandbox:x:{gid}:\n"


@dataclass(frozen=True)
class SandboxView:
    """The paths a run sees, as absolute host paths shown at the same place."""

    work: str
    read_only: tuple[str, ...]
    links: tuple[tuple[str, str], ...]  # (target, link)
    scratch: tuple[str, ...] = ()  # /tmp or /var/tmp where a shown path lies under it: its own size-limited tmpfs, else a link into the run folder
    covered: tuple[str, ...] = ()  # hidden paths inside a read-only one: shown empty
    egress: str | None = None  # with the network on: evoskill's web proxy (a Unix socket on the host), shown at EGRESS
    refused: tuple[str, ...] = field(default=(), compare=False)  # granted inputs that were not granted (hidden)
    devices: tuple[tuple[str, str], ...] = ()  # GPU device files (host path, path in the run), for a run that is given them

    def as_config(self) -> dict[str, object]:
        """The view as JSON-able data for the launcher that builds it itself (the ``unshare`` fallback)."""
        return {"work": self.work, "read_only": list(self.read_only), "links": [list(pair) for pair in self.links],
                "covered": list(self.covered), "scratch": list(self.scratch),
                "egress": [self.egress, EGRESS] if self.egress else None, "devices": [list(pair) for pair in self.devices]}  # fmt: skip


def _distribution_sources() -> list[Path]:
    """Source folders of editable installs (other than evoskill's own project, which generated code does not import)."""
    found = []
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        text = dist.read_text("direct_url.json")
        if not text or name == "evoskill":
            continue
        try:
            info = json.loads(text)
        except json.JSONDecodeError:
            continue
        if info.get("dir_info", {}).get("editable") and str(info.get("url", "")).startswith("file://"):
            found.append(Path(unquote(urlparse(info["url"]).path)))
    return found


def _pth_folders(site_dirs: Iterable[str]) -> list[Path]:
    """Folders named on plain lines of ``.pth`` files (old-style development installs)."""
    found = []
    for site_dir in site_dirs:
        for pth in Path(site_dir).glob("*.pth"):
            try:
                lines = pth.read_text(errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if line and not line.startswith(("#", "import ")) and Path(line).is_absolute() and Path(line).is_dir():
                    found.append(Path(line))
    return found


@cache
def python_paths() -> tuple[str, ...]:
    """The Python environment generated code runs in: prefixes, the real interpreter, development installs."""
    import site

    real_exe = Path(sys.executable).resolve()
    paths = [Path(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}]
    paths += [Path(sys.executable).parent, real_exe.parent.parent if real_exe.parent.name == "bin" else real_exe.parent]
    paths += _distribution_sources() + _pth_folders(site.getsitepackages())
    return _outermost(str(p.resolve()) for p in paths if p.exists())


def _outermost(paths: Iterable[str]) -> tuple[str, ...]:
    """The paths without those inside another one, sorted."""
    kept: list[str] = []
    for path in sorted(set(paths), key=lambda p: p.count("/")):
        if not inside(path, kept):
            kept.append(path)
    return tuple(sorted(kept))


def inside(path: str, folders: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or inside one (absolute, resolved paths, compared as strings: views are built per run)."""
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


@cache
def _system_view(network: bool) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The part of every view that does not depend on the run: system folders, /etc files, Python (read-only), links."""
    read_only: list[str] = []
    links: list[tuple[str, str]] = []
    for top in _SYSTEM_DIRS:
        path = Path(top)
        if path.is_symlink():
            links.append((os.readlink(path), top))
        elif path.is_dir():
            read_only.append(top)
    etc = [*_ETC, *(_ETC_NETWORK if network else ())]
    read_only += [f"/etc/{name}" for name in etc if (Path("/etc") / name).exists()]
    read_only += [p for p in _SYS if Path(p).is_dir()]
    read_only += python_paths()
    return _outermost(read_only), tuple(links)


def build_view(work: Path, inputs: Iterable[str | Path] = (), hidden: Iterable[str | Path] = (), network: bool = False,
               egress: str | None = None, devices: tuple[tuple[str, str], ...] = ()) -> SandboxView:  # fmt: skip
    """The view of a run in ``work``: system, Python, granted ``inputs`` (read-only), ``hidden`` paths kept out; with the
    network on, ``egress`` (the web proxy's socket) at ``EGRESS``; ``devices``: GPU device files shown in its ``/dev``."""
    hidden_paths = [str(Path(h).resolve()) for h in hidden]
    system, system_links = _system_view(network)
    granted, refused = [], []
    for raw in inputs:
        path = str(Path(raw).resolve())
        if not Path(path).exists():
            refused.append(str(raw))
            log.warning("sandbox: input %s does not exist; not granted", raw)
        elif inside(path, hidden_paths):
            refused.append(str(raw))
            log.warning("sandbox: input %s is a hidden path (the store, trajectories, credentials or an answer file); not granted", raw)
        else:
            granted.append(path)
            if os.geteuid() == 0 and closed_to_others(path, parents=False):
                log.warning("sandbox: input %s can be read only by its owner, and runs have an unprivileged user of their own: "
                            "make it readable to others (chmod o+rX) for runs to read it", raw)  # fmt: skip
    here = str(work.resolve())
    shown = _outermost([*system, *granted]) if granted else system
    covered = []
    for h in hidden_paths:
        if not inside(h, shown) or not Path(h).exists():  # a run folder inside it is shown again on top of the cover
            continue
        if any(inside(p, [h]) for p in python_paths()):
            log.warning("sandbox: not hiding %s: it holds the Python environment", h)
            continue
        covered.append(h)
    covered = [h for h in covered if not inside(h, [c for c in covered if c != h])]
    links, scratch = list(system_links), []
    for folder in ("/tmp", "/var/tmp"):
        if any(inside(p, [folder]) and p != folder for p in [here, *shown]):
            scratch.append(folder)
        else:
            links.append((f"{here}/tmp", folder))
    return SandboxView(work=here, scratch=tuple(scratch), read_only=shown, links=tuple(links), covered=tuple(covered),
                       egress=egress if network else None, refused=tuple(refused), devices=devices)  # fmt: skip


def closed_to_others(path: str, parents: bool = True) -> str | None:
    """The first folder on the way to ``path`` (with ``parents``), or ``path`` itself, that a user other than its owner
    may not enter or read; None when every user may."""
    steps = [*reversed(Path(path).parents), Path(path)] if parents else [Path(path)]
    for step in steps:
        try:
            mode = os.stat(step).st_mode
        except OSError:
            return str(step)
        if not mode & stat.S_IROTH or stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return str(step)
    return None


def view_paths(view: SandboxView) -> list[str]:
    """Every path the view shows, for reports and tests: read-only ones, the run folder, and the kernel's own."""
    return [*view.read_only, view.work, "/proc", "/dev"]
