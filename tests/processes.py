"""Looking for a run's processes from the host."""

from pathlib import Path


def marked(marker: str) -> list[int]:
    """The host's processes whose command line holds ``marker`` (a zombie's is empty)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found
