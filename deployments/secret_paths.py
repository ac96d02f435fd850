"""What is secret: the one list of paths that neither generated code nor evoskill's own tools may read.

The sandbox covers these paths in every run's view; ``read_file`` and the tools built on it refuse them.

>>> from deployments.settings import Settings
>>> settings = Settings(workspace="/srv/evoskill")
>>> is_hidden("/srv/evoskill/web-secret", settings), is_hidden("/srv/evoskill/trajectories/a.json", settings)
(True, True)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from deployments.settings import Settings

__all__ = ["HOME_SECRETS", "home_secrets", "hidden_paths", "is_hidden", "is_inside"]

# Credentials in the home folder of whoever runs evoskill.
HOME_SECRETS = (".ssh", ".aws", ".azure", ".config/gcloud", ".config/gh", ".kube", ".docker", ".gnupg", ".netrc", ".pypirc",
                ".git-credentials", ".npmrc")  # fmt: skip


def home_secrets() -> list[Path]:
    """The credential files and folders of ``HOME_SECRETS`` in this user's home folder (none without a home)."""
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no passwd entry
        return []
    return [home / name for name in HOME_SECRETS]


def hidden_paths(settings: Settings) -> list[Path]:
    """Every secret path, resolved: the store, trajectories, web accounts and cookie key, the config file
    (``Settings.secret_paths``), ``sandbox_hidden_paths`` and the home folder's credentials."""
    return [Path(p).resolve() for p in [*settings.secret_paths(), *settings.sandbox_hidden_paths, *home_secrets()]]


def is_inside(path: Path, folders: Iterable[Path]) -> bool:
    """Whether the resolved ``path`` is one of the resolved ``folders`` or lies inside one."""
    return any(path == folder or folder in path.parents for folder in folders)


def is_hidden(path: str | Path, settings: Settings) -> bool:
    """Whether ``path`` (symbolic links followed) is a secret path or lies inside one."""
    return is_inside(Path(path).resolve(), hidden_paths(settings))
