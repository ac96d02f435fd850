"""A quiet terminal: log records go to a file under the workspace, not to the user's screen.

The CLI prints its own progress and result. Prefect's INFO lines, HTTP noise, Python warnings and
the tracebacks libraries log stay out of the terminal: every handler that writes to stdout or stderr
is swapped for one file handler (``<workspace>/logs/evoskill.log``) with the same level and format.
evoskill's own warnings (e.g. a sandbox weaker than asked for) still reach stderr, one line each.
Run logs still reach the Prefect API (its handler is untouched). ``--verbose`` keeps the terminal as
Prefect set it up.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["log_file", "quiet_terminal", "WorkspaceLogHandler", "OwnWarningsHandler", "OWN_LOGGERS", "log_unexpected", "Progress"]


def log_file() -> Path:
    """The log file of this workspace (settings that do not load fall back to the default workspace)."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    from deployments.settings import get_settings
    from deployments.workspace import prepare_workspace

    try:
        workspace = get_settings().workspace
    except (ValidationError, SettingsError, ValueError):
        workspace = Path(os.environ.get("EVOSKILL_WORKSPACE", ".evoskill"))
        prepare_workspace(workspace)  # the log is private, whatever the settings (get_settings does it for valid ones)
    return workspace.resolve() / "logs" / "evoskill.log"


class Progress:
    """Prints stage events to stderr with the time since the command started."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def __call__(self, stage: str, status: str, detail: str) -> None:
        mark = {"start": "…", "progress": "·", "done": "✓", "failed": "✗"}[status]
        text = f"[{time.perf_counter() - self.t0:6.1f}s] {mark} {stage}" + (f": {detail[:160]}" if detail else "")
        print(text, file=sys.stderr, flush=True)


# evoskill's own loggers: their warnings (a weaker sandbox, a cluster fallback) are for the user to see.
OWN_LOGGERS = ("tasks", "skills", "flows", "deployments", "benchmarks")


class OwnWarningsHandler(logging.StreamHandler):
    """Warnings and errors of evoskill's own loggers, one line each on stderr."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setLevel(logging.WARNING)
        self.setFormatter(logging.Formatter("evoskill: %(levelname)s: %(message)s"))
        self.addFilter(lambda record: record.name.split(".")[0] in OWN_LOGGERS)

    def format(self, record: logging.LogRecord) -> str:
        """The message without its traceback (that stays in the log file)."""
        plain = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None, "levelname": record.levelname.lower()})
        return super().format(plain)


def _writes_to_terminal(handler: logging.Handler) -> bool:
    if isinstance(handler, (logging.FileHandler, OwnWarningsHandler)) or not isinstance(handler, logging.StreamHandler):
        return False
    return handler.stream in (sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__)


def _loggers() -> list[logging.Logger]:
    named = [item for item in logging.root.manager.loggerDict.values() if isinstance(item, logging.Logger)]
    return [logging.root, *named]


class WorkspaceLogHandler(logging.FileHandler):
    """A file handler that creates its folder when it first writes."""

    def _open(self):  # noqa: ANN202 - the stream logging.FileHandler opens
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()


def _file_handler(target: Path, level: int = logging.NOTSET) -> WorkspaceLogHandler:
    handler = WorkspaceLogHandler(target, delay=True, encoding="utf-8")
    handler.setLevel(level)
    return handler


def _swap_terminal_handlers(target: Path) -> None:
    """Replace every handler that writes to the terminal with a file handler of the same level and format."""
    shared: dict[tuple[int, int], logging.Handler] = {}
    for logger in _loggers():
        for handler in list(logger.handlers):
            if not _writes_to_terminal(handler):
                continue
            key = (handler.level, id(handler.formatter))
            if key not in shared:
                replacement = _file_handler(target, handler.level)
                replacement.setFormatter(handler.formatter or logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
                for log_filter in handler.filters:
                    replacement.addFilter(log_filter)
                shared[key] = replacement
            logger.removeHandler(handler)
            logger.addHandler(shared[key])
    if not any(isinstance(h, WorkspaceLogHandler) for h in logging.root.handlers):  # the file sees what the root sees
        logging.root.addHandler(_file_handler(target))
    # Records that find no handler at all would reach the last resort, which writes to stderr.
    logging.lastResort = _file_handler(target, logging.WARNING)


def quiet_terminal(verbose: bool = False, path: Path | None = None) -> Path | None:
    """Send every terminal log handler's records to ``path`` (default: the workspace's log file).

    Returns the log file, or ``None`` when ``verbose`` keeps the terminal as it is. Prefect sets its
    logging up again later in a process (when it is imported, when its engine or an in-process server
    starts): each time, the terminal handlers it adds are swapped again. A command that never imports
    Prefect never pays for importing it here.
    """
    if verbose:
        return None
    target = path or log_file()
    logging.captureWarnings(True)
    _swap_terminal_handlers(target)
    if not any(isinstance(h, OwnWarningsHandler) for h in logging.root.handlers):
        logging.root.addHandler(OwnWarningsHandler())
    after_import(_PREFECT_LOGGING, functools.partial(_quiet_prefect, target))
    return target


_PREFECT_LOGGING = "prefect.logging.configuration"


def _quiet_prefect(target: Path, configuration: Any) -> None:
    """Make Prefect's logging set-up (now and each later time) leave the terminal quiet."""
    setup = configuration.setup_logging
    original = getattr(setup, "__wrapped__", setup)

    @functools.wraps(original)
    def setup_logging_quietly(*args: Any, **kwargs: Any) -> dict[str, Any]:
        config = original(*args, **kwargs)
        _swap_terminal_handlers(target)
        return config

    configuration.setup_logging = setup_logging_quietly
    _swap_terminal_handlers(target)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``callback(module)`` right after ``name`` is first imported, before its importer goes on."""

    def __init__(self, name: str, callback: Callable[[ModuleType], None]) -> None:
        self.name, self.callback = name, callback

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # once; and the finders below find the module itself
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader, callback = spec.loader, self.callback

        class Then(importlib.abc.Loader):
            def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                loader.exec_module(module)
                callback(module)

        spec.loader = Then()
        return spec


def after_import(name: str, callback: Callable[[ModuleType], None]) -> None:
    """Call ``callback(module)`` now if ``name`` is imported, else once it is (an import hook that removes itself)."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return
    sys.meta_path[:] = [f for f in sys.meta_path if not (isinstance(f, _AfterImport) and f.name == name)]
    sys.meta_path.insert(0, _AfterImport(name, callback))


def log_unexpected(command: str, error: BaseException) -> str:
    """Keep the traceback of an error nobody expected in the log file; the one line the user sees."""
    logging.getLogger("evoskill.cli").error("evoskill %s failed", command, exc_info=error)
    return f"evoskill {command} failed unexpectedly: {type(error).__name__}: {error} (traceback in {log_file()}; please report this)"
