"""Which packages a script needs, which are missing, and a guarded installer."""

from __future__ import annotations

import difflib
import importlib.metadata
import importlib.util
import re
import subprocess

from pydantic import BaseModel, Field

from deployments.interpreter import helper_folder, python_command
from deployments.settings import Settings
from tasks.tools.errors import ToolError

__all__ = [
    "InstallReport",
    "PackageVersion",
    "install_dependencies",
    "check_installed_packages",
    "check_package_version",
    "typo_of",
]


# Import names whose distribution on PyPI is named differently.
_DISTRIBUTIONS = {"sklearn": "scikit-learn", "yaml": "pyyaml", "cv2": "opencv-python", "PIL": "pillow"}


class InstallReport(BaseModel):
    installed: list[str] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list, description="Not installed, with the reason.")


class PackageVersion(BaseModel):
    """An installed distribution: its name, version, import names and location."""

    name: str
    version: str
    import_names: list[str] = Field(default_factory=list)
    location: str | None = None

    def __str__(self) -> str:
        return f"{self.name} {self.version} (import {', '.join(self.import_names) or '?'}; at {self.location})"


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _distributions() -> dict[str, importlib.metadata.Distribution]:
    found: dict[str, importlib.metadata.Distribution] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(_normalise(name), dist)
    return found


def check_installed_packages(contains: str = "") -> list[str]:
    """Installed distributions as ``name==version``, those whose name contains ``contains`` when given."""
    wanted = _normalise(contains)
    return sorted(f"{d.metadata['Name']}=={d.version}" for key, d in _distributions().items() if wanted in key)


def check_package_version(name: str) -> PackageVersion:
    """The installed version of a distribution or import name (``pymatgen``, ``ase``, ``rdkit``, ``scikit_learn``, ``sklearn``)."""
    dists = _distributions()
    dist = dists.get(_normalise(name))
    if dist is None:  # an import name whose distribution is named differently (sklearn → scikit-learn)
        owners = importlib.metadata.packages_distributions().get(name.strip(), [])
        dist = next((dists[_normalise(o)] for o in owners if _normalise(o) in dists), None)
    if dist is None:
        close = difflib.get_close_matches(_normalise(name), list(dists), n=3, cutoff=0.6)
        raise ToolError(
            f"{name!r} is not installed" + (f"; close names: {close}." if close else "."),
            "check_installed_packages(contains=...) lists installed packages; install_dependencies installs allowed ones.",
        )
    top = (dist.read_text("top_level.txt") or "").split()
    if not top:
        top = sorted({p for f in (dist.files or []) if (p := f.parts[0].removesuffix(".py")).isidentifier() and not p.startswith("__")})
    return PackageVersion(name=dist.metadata["Name"], version=dist.version, import_names=top[:10], location=str(dist.locate_file("")))


def typo_of(module: str) -> str | None:
    """The installed import name that ``module`` misspells (``pymattgen`` → ``pymatgen``), or None.

    A misspelt import is the code's error, not a package to install (on PyPI the misspelt name may be someone else's)."""
    names = [name for name in importlib.metadata.packages_distributions() if name.isidentifier()]
    close = difflib.get_close_matches(module, names, n=1, cutoff=0.8)
    return close[0] if close and close[0].lower() != module.lower() else None


def install_dependencies(modules: list[str], settings: Settings) -> InstallReport:
    """pip-install missing modules, only when enabled and only those on the allow-list; a misspelt one never."""
    report = InstallReport()
    allowed = {_normalise(a) for a in settings.install_allowlist}
    for module in modules:
        dist = _DISTRIBUTIONS.get(module, module)
        if (meant := typo_of(module)) is not None:
            report.refused.append(f"{module}: no such package; a typo of {meant!r} in the code")
        elif not settings.allow_install:
            report.refused.append(f"{dist}: installing is disabled (EVOSKILL_ALLOW_INSTALL=false)")
        elif _normalise(dist) not in allowed:
            report.refused.append(f"{dist}: not on the install allow-list (EVOSKILL_INSTALL_ALLOWLIST)")
        else:
            proc = subprocess.run(
                python_command("-m", "pip", "install", "--disable-pip-version-check", dist),
                capture_output=True, text=True, timeout=600, cwd=helper_folder(settings),
            )  # fmt: skip
            if proc.returncode == 0:
                report.installed.append(dist)
            else:
                last = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
                report.refused.append(f"{dist}: not installable ({last})")
    return report
