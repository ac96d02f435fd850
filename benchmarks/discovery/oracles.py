"""Oracles: relax a structure and return its energy per atom, behind one interface.

- ``emt``: ASE's EMT (Al, Cu, Ag, Au, Ni, Pd, Pt);
- ``lj``: a multi-element Lennard-Jones potential for any elements (MADE's analytic oracle);
- ``chgnet``: the CHGNet MLIP, whose pretrained weights ship in its PyPI package (``pip install chgnet``).

Each oracle is an atomate2 relax maker (``Oracle.maker()``, see ``oracle_makers``), and one evaluation
is that maker's jobflow Job (``oracle_job``), whose output is atomate2's task document
(``AseStructureTaskDoc``, ``ForceFieldTaskDocument`` for CHGNet): it runs in this process, on Dask
(``deployments.job_runners``), or in a workflow exported to an HPC manager, like a compiled skill.
``Oracle.evaluate`` runs the job here and reads an ``OracleResult`` off its JobStore document
(``oracle_result``). Relaxation is FIRE on positions and cell (``UnitCellFilter``) to ``fmax``
0.02 eV/Å in at most 500 steps. A result that is not a finite energy, or a cell that blew up or
collapsed, is a failed query.

>>> from pymatgen.core import Lattice, Structure
>>> oracle = make_oracle("emt")
>>> result = oracle.evaluate(Structure(Lattice.cubic(3.0), ["Cu", "Ni"], [[0, 0, 0], [0.5, 0.5, 0.5]]))
>>> result.ok, round(result.energy_per_atom, 3) < 0.5
(True, True)
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field
from pymatgen.core import Element, Structure

from benchmarks.discovery.lennard_jones import MultiLennardJones, lj_pair, lj_parameters

if TYPE_CHECKING:
    from ase.calculators.calculator import Calculator
    from atomate2.ase.jobs import AseRelaxMaker
    from jobflow import Job

__all__ = [
    "OracleResult", "Oracle", "EMTOracle", "LJOracle", "CHGNetOracle", "OracleError", "make_oracle", "ORACLES",
    "UnsupportedElements", "oracle_job", "oracle_result", "MultiLennardJones", "lj_pair", "lj_parameters",
]  # fmt: skip

EMT_ELEMENTS = ("Ag", "Al", "Au", "Cu", "Ni", "Pd", "Pt")


class OracleError(RuntimeError):
    """The oracle cannot be used (unknown name, missing package)."""


class UnsupportedElements(ValueError):
    """The oracle has no parameters for some elements of the system."""


class OracleResult(BaseModel):
    """One relaxation: energy per atom of the relaxed cell, or why there is none."""

    ok: bool
    energy_per_atom: float | None = None
    relaxed: dict[str, Any] | None = Field(default=None, description="The relaxed pymatgen Structure, as_dict().")
    steps: int = 0
    converged: bool = False
    error: str | None = None
    wall_s: float = 0.0

    def structure(self) -> Structure | None:
        return Structure.from_dict(self.relaxed) if self.relaxed else None


@dataclass(frozen=True)
class Oracle(ABC):
    """Relaxes structures with one calculator. Subclasses say which elements they know and build the atomate2 maker."""

    name: str = "oracle"
    fmax: float = 0.02
    max_steps: int = 500
    surrogate: str | None = field(default=None, metadata={"doc": "a cheaper oracle to rank candidates for this one"})
    prefers_gpu: bool = False  # a machine-learned potential: its jobs ask for a GPU worker, and run on the CPU without one

    def maker(self) -> AseRelaxMaker:
        """A fresh atomate2 relax maker with this oracle's relaxation (``fmax``, ``max_steps``).

        That is atomate2's maker for the oracle (``_maker``), or, for a subclass that overrides
        ``calculator()`` (a new potential, a test double), atomate2's generic ASE relax maker around it.
        """
        from benchmarks.discovery.oracle_makers import CalculatorRelaxMaker, relax_settings

        settings = relax_settings(self.fmax, self.max_steps)
        if type(self).calculator is not Oracle.calculator:
            return CalculatorRelaxMaker(calculator_factory=self.calculator, **settings)
        return self._maker(settings)

    @abstractmethod
    def _maker(self, settings: dict[str, Any]) -> AseRelaxMaker:
        """atomate2's maker for this oracle, built with ``settings`` (``oracle_makers.relax_settings``)."""

    def calculator(self) -> Calculator:
        """An ASE calculator of the subclass's own, relaxed by atomate2's generic maker (see ``maker``)."""
        return self.maker().calculator

    def unsupported(self, elements: list[str]) -> list[str]:
        """Elements this oracle has no parameters for."""
        return []

    def check(self, elements: list[str]) -> None:
        missing = self.unsupported(elements)
        if missing:
            raise UnsupportedElements(f"the {self.name} oracle does not know {', '.join(missing)}{self._known()}")

    def _known(self) -> str:
        return ""

    def evaluate(self, structure: Structure) -> OracleResult:
        """Relax ``structure`` by running its job here; never raises for a bad structure (the result says what went wrong)."""
        from deployments.job_runners import execute_job

        started = time.perf_counter()
        job = oracle_job(self, structure)  # an oracle that cannot run (missing package) raises here
        outcome = execute_job(job, [])
        return oracle_result(outcome.document, outcome.error, wall_s=time.perf_counter() - started)


def oracle_job(oracle: Oracle, structure: Structure) -> Job:
    """One evaluation as a jobflow Job, its output atomate2's task document (energy, structure, ionic steps); a
    machine-learned potential's job asks for a GPU worker and runs on the CPU where none is there."""
    from deployments.job_runners import prefer_gpu

    made = oracle.maker().make(structure)
    return prefer_gpu(made) if oracle.prefers_gpu else made


def oracle_result(document: dict[str, Any] | None, error: str | None = None, wall_s: float = 0.0) -> OracleResult:
    """The ``OracleResult`` of a finished oracle job, from its JobStore document (``None`` with ``error`` when it failed)."""
    if document is None:
        return OracleResult(ok=False, error=f"relaxation failed: {error}"[:300], wall_s=wall_s)
    task = document["output"]
    output = task["output"]
    # atomate2 records the starting and the final frame as ionic steps too
    steps = max(int(output.get("n_steps") or 0) - 2, 0)
    relaxed = Structure.from_dict(task["structure"])
    energy = output.get("energy_per_atom")
    problem = _unphysical(relaxed, math.nan if energy is None else float(energy))
    if problem:
        return OracleResult(ok=False, steps=steps, error=problem, wall_s=wall_s)
    converged = task.get("state") == "successful"  # atomate2: the optimizer converged
    return OracleResult(ok=True, energy_per_atom=float(energy), relaxed=relaxed.as_dict(), steps=steps, converged=converged, wall_s=wall_s)


def _unphysical(structure: Structure, energy_per_atom: float) -> str | None:
    if not math.isfinite(energy_per_atom):
        return f"energy is {energy_per_atom}"
    volume = structure.volume / len(structure)
    if not 2.0 <= volume <= 500.0:
        return f"relaxed volume {volume:.1f} Å^3/atom: the cell collapsed or blew up"
    return None


@dataclass(frozen=True)
class EMTOracle(Oracle):
    """ASE's effective-medium theory for the fcc metals it is fitted to."""

    name: str = "emt"
    surrogate: str | None = "lj"

    def _maker(self, settings: dict[str, Any]) -> AseRelaxMaker:
        from benchmarks.discovery.oracle_makers import EmtRelaxMaker

        return EmtRelaxMaker(**settings)

    def unsupported(self, elements: list[str]) -> list[str]:
        return [e for e in elements if e not in EMT_ELEMENTS]

    def _known(self) -> str:
        return f" (EMT knows {', '.join(EMT_ELEMENTS)}; use --oracle lj for any elements)"


@dataclass(frozen=True)
class LJOracle(Oracle):
    """The analytic oracle: multi-element Lennard-Jones (see ``lj_pair``); knows every element."""

    name: str = "lj"

    def _maker(self, settings: dict[str, Any]) -> AseRelaxMaker:
        from benchmarks.discovery.oracle_makers import MultiLennardJonesRelaxMaker

        return MultiLennardJonesRelaxMaker(**settings)


@dataclass(frozen=True)
class CHGNetOracle(Oracle):
    """CHGNet (pretrained weights from its PyPI package); ranks candidates with EMT or LJ as a surrogate."""

    name: str = "chgnet"
    surrogate: str | None = "lj"
    prefers_gpu: bool = True

    def _maker(self, settings: dict[str, Any]) -> AseRelaxMaker:
        if find_spec("chgnet") is None:  # atomate2 would fall back to matgl's CHGNet, another model
            raise OracleError("the chgnet oracle needs the chgnet package: pip install 'evoskill[mlip]'")
        from benchmarks.discovery.oracle_makers import CHGNetRelaxMaker

        return CHGNetRelaxMaker(**settings)

    def unsupported(self, elements: list[str]) -> list[str]:
        return [e for e in elements if Element(e).Z > 94]


ORACLES: dict[str, type[Oracle]] = {"emt": EMTOracle, "lj": LJOracle, "chgnet": CHGNetOracle}


def make_oracle(name: str, **options: Any) -> Oracle:
    """The oracle called ``name`` (emt, lj, chgnet)."""
    if name not in ORACLES:
        raise OracleError(f"unknown oracle {name!r}: use one of {', '.join(ORACLES)}")
    return ORACLES[name](**options)
