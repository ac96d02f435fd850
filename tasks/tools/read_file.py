"""``read_file``: read a text file of an installed package or a granted input, a slice at a time.

The same rules as for generated code: what the sandbox shows (the installed packages and standard
library, the inputs granted by ``sandbox_inputs``) is readable, and every secret path
(``deployments/secret_paths.py``) is refused, wherever it lies and whatever link leads to it. The
workspace, with every user's runs, is not readable.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from deployments.packages import library_roots
from deployments.secret_paths import is_hidden, is_inside
from deployments.settings import Settings
from tasks.tools.errors import ToolError

__all__ = ["FileSlice", "allowed_roots", "allowed_path", "read_file"]

_MAX_LINES = 400


class FileSlice(BaseModel):
    """Lines ``start``..``end`` of a file (1-based, inclusive) out of ``total``."""

    path: str
    start: int
    end: int
    total: int
    text: str

    def __str__(self) -> str:
        return f"{self.path} lines {self.start}-{self.end} of {self.total}:\n{self.text}"


def allowed_roots(settings: Settings) -> list[Path]:
    """Where the tools may read: the installed packages, the standard library and the granted inputs."""
    return [*library_roots(), *(Path(p).resolve() for p in settings.sandbox_inputs)]


def allowed_path(path: str | Path, settings: Settings) -> Path:
    """``path`` resolved (relative to the workspace), or a ToolError when it is secret or outside the allowed roots."""
    raw = Path(path).expanduser()
    resolved = (raw if raw.is_absolute() else settings.workspace / raw).resolve()
    if is_hidden(resolved, settings):
        raise ToolError(
            f"{path} is secret (the workspace, the store, trajectories, config, credentials or a hidden path): no tool reads it.",
            "read the installed packages' sources and docs instead.",
        )
    if not is_inside(resolved, allowed_roots(settings)):
        raise ToolError(
            f"{path} is outside the readable folders (the installed packages and the granted inputs).",
            "quick_introspect or query_knowledge_graph tell where a package's code lives.",
        )
    return resolved


def read_file(path: str, settings: Settings, start: int = 1, lines: int = 120) -> FileSlice:
    """Read ``lines`` lines of a text file from line ``start`` (1-based), e.g. a package's source around a definition."""
    resolved = allowed_path(path, settings)
    if not resolved.is_file():
        raise ToolError(f"{path} is not a file.", "query_knowledge_graph('PACKAGE', 'where is NAME') gives a definition's file and line.")
    data = resolved.read_bytes()
    if b"\x00" in data[:8192]:
        raise ToolError(f"{path} is a binary file, not text.", "read the package's .py sources or its docs instead.")
    all_lines = data.decode("utf-8", errors="replace").splitlines()
    start = max(1, start)
    if start > max(len(all_lines), 1):
        raise ToolError(f"{path} has only {len(all_lines)} lines.", "start within the file.")
    end = min(len(all_lines), start + max(1, min(lines, _MAX_LINES)) - 1)
    text = "\n".join(f"{n:>5}  {line}" for n, line in enumerate(all_lines[start - 1 : end], start))
    return FileSlice(path=str(resolved), start=start, end=end, total=len(all_lines), text=text)
