"""How evoskill starts helper Python interpreters: isolated from the folder the user stands in.

``python -m X`` and ``python -c ...`` put the current folder first on ``sys.path``: a ``prefect/`` or
``spglib/`` folder where the user runs evoskill would be imported in place of the installed package,
outside the sandbox, with the API keys in its environment. So every helper (the Prefect server, the
embedded LLM's supervisor and server, ``evoskill worker``'s Dask worker, pip) is started by
``python_command``, with ``-I`` (isolated mode: no current folder or script folder on the path, no
``PYTHON*`` variables; ``PREFECT_*`` and ``EVOSKILL_*`` still pass, and the installed packages,
evoskill's editable install included, still import), in ``helper_folder``, an empty folder of the
workspace. Where packages come from the user's site-packages (``pip install --user``), which ``-I``
leaves out, the flags are ``-E -P`` instead.

Interpreters started from evoskill's process by code that chooses their command line itself start as
``python -c ...`` or ``python -m ...`` with this process's flags, not ``-I``: those multiprocessing spawns
(Dask's local workers, process pools) and Prefect's ephemeral server (``python -m uvicorn``).
``safe_path_for_children`` keeps the current folder off their path.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

from deployments.settings import Settings

__all__ = ["isolation_flags", "python_command", "helper_folder", "safe_path_for_children"]


def isolation_flags() -> list[str]:
    """``-I``; ``-E -P`` where this interpreter imports from the user's site-packages, which ``-I`` would leave out."""
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    return ["-E", "-P"] if user_site and user_site in sys.path else ["-I"]


def python_command(*args: str) -> list[str]:
    """This interpreter, isolated from the current folder, with ``args`` (``"-m", "prefect", ...``)."""
    return [sys.executable, *isolation_flags(), *args]


def helper_folder(settings: Settings) -> Path:
    """The folder helpers start in (created): the workspace's, empty, so nothing there is picked up by mistake."""
    folder = settings.workspace.resolve() / "helpers"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def safe_path_for_children() -> None:
    """Keep the current folder off the path of the interpreters this process starts from now on whose flags it does not
    choose (multiprocessing's spawned workers, Prefect's ephemeral server).

    They inherit the environment: ``PYTHONSAFEPATH`` makes their ``python -c ...`` or ``python -m ...`` start without it.
    It stays set, since Dask's nannies start workers again later; a value the user set is kept.
    """
    if not os.environ.get("PYTHONSAFEPATH"):
        os.environ["PYTHONSAFEPATH"] = "1"
