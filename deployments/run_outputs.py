"""Files a run leaves behind, taken out of its run folder safely: the one way a run's files are handed to users as files.

Generated code controls its run folder. Under the ``none`` isolation it writes the host folder directly, so a name
there may be a link to a secret (``secret.png -> <workspace>/web-secret``), a hard link to a file outside, a folder
link in the middle of a path, or an image name over other content. A file leaves the folder only when it is a
regular file with one link, inside the folder, reached through real folders: every component is opened relative to
the one before with ``O_NOFOLLOW``, and the file's real path must be the folder's real path joined with its name.
Images must be PNG, JPEG or GIF by their first bytes (never SVG) and at most ``output_image_mb``.

What passes is copied once, when a solve has its answer, into ``<workspace>/outputs/<run>/``; the chat, the MCP
server and the Prefect artifacts read the copies, through the same checks (``read_image``).

>>> image_type(b"\\x89PNG\\r\\n\\x1a\\n...")
'image/png'
>>> image_type(b"<svg onload=alert(1)>") is None
True
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from deployments.files import write_atomic
from deployments.settings import Settings

__all__ = ["IMAGE_SUFFIXES", "MAX_IMAGES", "OutputRefused", "image_type", "read_inside", "copy_images", "read_image"]

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif"})  # never .svg: it can carry script
MAX_IMAGES = 12
_MAGIC = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF87a": "image/gif", b"GIF89a": "image/gif"}
_SUFFIX = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif"}
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO opens at once (and is refused)


class OutputRefused(ValueError):
    """A run output that may not leave its folder: a link, a hard link, outside the folder, not an image, too big."""


def image_type(data: bytes) -> str | None:
    """The media type of ``data`` by its first bytes (PNG, JPEG, GIF), or None."""
    return next((media for magic, media in _MAGIC.items() if data.startswith(magic)), None)


def _names(relative: str | PurePosixPath) -> list[str]:
    """The components of a relative path without ``..``, ``.`` or empty ones (OutputRefused otherwise)."""
    text = str(relative)
    parts = text.split("/")
    if not text or text.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\x00" in text:
        raise OutputRefused(f"{text!r} is not a plain path inside the run folder")
    return parts


def _open_inside(folder: Path, names: list[str]) -> int:
    """A descriptor of ``folder/names...`` opened without following any link, the folder's own name included."""
    fd = -1
    try:
        fd = os.open(folder, _DIR_FLAGS)
        for name in names[:-1]:
            inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
        if not stat.S_ISREG(os.stat(names[-1], dir_fd=fd, follow_symlinks=False).st_mode):
            raise OutputRefused(f"{'/'.join(names)} is not a regular file")
        return os.open(names[-1], _FILE_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        raise OutputRefused(f"{'/'.join(names)} is gone") from None
    except OSError as exc:
        why = "a link" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else exc.strerror
        raise OutputRefused(f"{'/'.join(names)} is not readable as a plain file ({why})") from None
    finally:
        if fd >= 0:
            os.close(fd)


def read_inside(folder: str | Path, relative: str | PurePosixPath, max_bytes: int) -> bytes:
    """The bytes of the regular file ``relative`` inside ``folder``, read without following a link.

    OutputRefused when the path has ``..``, any component (the folder's own name included) is a link, the file is not
    regular, has another hard link, lies outside the folder, or is over ``max_bytes``.
    """
    names = _names(relative)
    root = Path(os.path.abspath(folder))
    real_root = os.path.realpath(root)
    if os.path.realpath(root.joinpath(*names)) != os.path.join(real_root, *names):
        raise OutputRefused(f"{'/'.join(names)} is reached through a link or lies outside {root}")
    with os.fdopen(_open_inside(root, names), "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OutputRefused(f"{'/'.join(names)} is not a regular file")
        if info.st_nlink != 1:
            raise OutputRefused(f"{'/'.join(names)} has {info.st_nlink} hard links: it may be a file from outside the folder")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OutputRefused(f"{'/'.join(names)} is over {max_bytes} bytes")
    return data


def _candidates(folder: Path) -> list[str]:
    """Paths (relative, in name order) of the files in ``folder`` with an image's name; linked folders are not entered."""
    found = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        base = PurePosixPath(Path(top).relative_to(folder))
        found += [str(base / name) for name in files if PurePosixPath(name).suffix.lower() in IMAGE_SUFFIXES]
    return sorted(found)


def copy_images(run_folder: str | Path, settings: Settings) -> list[str]:
    """Copy the images a run wrote (name order, at most ``MAX_IMAGES``) into ``<workspace>/outputs/<run>/``; their paths.

    Each must pass ``read_inside`` and be a PNG, JPEG or GIF by content; anything else stays behind.
    """
    folder = Path(os.path.abspath(run_folder))
    if not folder.is_dir() or folder.is_symlink():
        return []
    cap = settings.output_image_mb * 1024 * 1024
    kept: list[str] = []
    for relative in _candidates(folder):
        if len(kept) == MAX_IMAGES:
            break
        try:
            data = read_inside(folder, relative, cap)
        except OutputRefused:
            continue
        media = image_type(data)
        if media is not None:
            kept.append(str(write_atomic(settings.outputs_root() / folder.name / f"{len(kept):02d}{_SUFFIX[media]}", data)))
    return kept


def read_image(path: str | Path, settings: Settings) -> tuple[bytes, str]:
    """A copied image's bytes and media type, read through ``read_inside`` from ``<workspace>/outputs``.

    OutputRefused for a path outside that folder (or through ``..`` or a link), and for content that is not an image.
    """
    raw, root = str(path), settings.outputs_root()
    if os.path.normpath(raw) != raw or not PurePosixPath(raw).is_relative_to(root):
        raise OutputRefused(f"{raw!r} is not a kept run output")
    data = read_inside(root, PurePosixPath(raw).relative_to(root), settings.output_image_mb * 1024 * 1024)
    media = image_type(data)
    if media is None:
        raise OutputRefused(f"{path} is not a PNG, JPEG or GIF image")
    return data, media
