"""Positional parameter names of the functions the fast lifting and binding tests call, for ``lift_script`` without a sandbox.

``tests/skills/test_signatures.py`` checks that the sandbox reads the same names from the installed packages.
"""

POSITIONAL = {
    "numpy.linspace": ["start", "stop", "num", "endpoint", "retstep", "dtype", "axis"],
    "pymatgen.core.Lattice.cubic": ["a", "pbc"],
    "pymatgen.core.Lattice.hexagonal": ["a", "c", "pbc"],
}


def known(targets: list[str]) -> dict[str, list[str]]:
    """The names of those ``targets`` listed here (the others are not known)."""
    return {target: POSITIONAL[target] for target in targets if target in POSITIONAL}
