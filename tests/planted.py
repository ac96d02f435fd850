"""Packages planted in a folder, shadowing installed ones: importing any of them writes its name to a marker file."""

from pathlib import Path


def plant(folder: Path, *names: str) -> Path:
    """Create ``folder/NAME/__init__.py`` for each name; return the marker file they append their name to when imported."""
    marker = folder.parent / f"{folder.name}-imported.txt"
    for name in names:
        package = folder / name
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(f"with open({str(marker)!r}, 'a') as _marker:\n    _marker.write({name!r} + '\\n')\n")
    return marker
