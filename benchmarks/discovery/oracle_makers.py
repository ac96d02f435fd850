"""atomate2 relax makers for the discovery oracles (imported on first use: atomate2 takes seconds to import).

- EMT: atomate2's own ``EmtRelaxMaker``;
- ``lj``: ``MultiLennardJonesRelaxMaker``, atomate2's generic ``AseRelaxMaker`` with our multi-element
  calculator. atomate2's ``LennardJonesRelaxMaker`` wraps ASE's ``LennardJones``, which has one sigma and
  one epsilon for every pair, so it cannot be MADE's analytic oracle (per-pair parameters, ``lj_pair``);
- CHGNet: ``CHGNetRelaxMaker``, atomate2's ``ForceFieldRelaxMaker`` for ``MLFF.CHGNet`` whose calculator
  (the model) is loaded once per process and shared by its jobs.

``relax_settings`` gives every maker the oracles' relaxation: FIRE on positions and cell through ASE's
``UnitCellFilter`` (atomate2 defaults to ``FrechetCellFilter``; ``UnitCellFilter`` keeps results, and so
cached ones, the same as before), to ``fmax``, in at most ``steps`` steps, with no file written and only
the energy of each ionic step kept in the task document.
"""

from __future__ import annotations

import contextlib
import io
import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ase.calculators.calculator import Calculator
from ase.filters import UnitCellFilter
from atomate2.ase.jobs import AseRelaxMaker, EmtRelaxMaker
from atomate2.forcefields.jobs import ForceFieldRelaxMaker
from atomate2.forcefields.utils import MLFF, ase_calculator

from benchmarks.discovery.lennard_jones import MultiLennardJones

__all__ = ["relax_settings", "EmtRelaxMaker", "MultiLennardJonesRelaxMaker", "CHGNetRelaxMaker", "CalculatorRelaxMaker"]


def relax_settings(fmax: float, steps: int) -> dict[str, Any]:
    """Keyword arguments of an ``AseRelaxMaker`` for the oracles' relaxation."""
    return {
        "relax_cell": True,
        "steps": steps,
        "optimizer_kwargs": {"optimizer": "FIRE"},
        # verbose: atomate2 then leaves sys.stdout as it is (otherwise it swaps in a buffer with contextlib.redirect_stdout,
        # which relaxations on several threads leave behind: the terminal goes silent); logfile None keeps FIRE quiet.
        "relax_kwargs": {"fmax": fmax, "cell_filter": UnitCellFilter, "final_atoms_object_file": None, "logfile": None, "verbose": True},
        "ionic_step_data": ("energy",),
    }


@dataclass
class MultiLennardJonesRelaxMaker(AseRelaxMaker):
    """Relax with the multi-element Lennard-Jones potential (per-pair parameters from ``lj_pair``)."""

    name: str = "Multi-element Lennard-Jones relaxation"

    def _get_calculator(self) -> Calculator:
        return MultiLennardJones(**self.calculator_kwargs)


@dataclass
class CalculatorRelaxMaker(AseRelaxMaker):
    """atomate2's generic ASE relaxation with the calculator ``calculator_factory`` builds (an oracle's own)."""

    name: str = "ASE relaxation"
    calculator_factory: Callable[[], Calculator] | None = None

    def _get_calculator(self) -> Calculator:
        if self.calculator_factory is None:
            raise ValueError("CalculatorRelaxMaker needs a calculator_factory")
        return self.calculator_factory()


@dataclass
class CHGNetRelaxMaker(ForceFieldRelaxMaker):
    """atomate2's force-field relaxation with CHGNet, the model loaded once per process."""

    name: str = "CHGNet relaxation"
    force_field_name: str | MLFF | dict = MLFF.CHGNet

    def _get_calculator(self) -> Calculator:
        return _force_field_calculator(str(self.calculator_meta), json.dumps(self.calculator_kwargs, sort_keys=True, default=str))


@lru_cache(maxsize=4)
def _force_field_calculator(meta: str, kwargs: str) -> Calculator:
    # CHGNet prints its version and device on loading, and torch warns on every volume it reads back: a campaign's
    # terminal shows its own progress, not these
    warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad=True", category=UserWarning)
    with contextlib.redirect_stdout(io.StringIO()):
        calculator = ase_calculator(MLFF(meta.split("MLFF.")[-1]), **json.loads(kwargs))
    if calculator is None:
        raise RuntimeError(f"atomate2 has no calculator for {meta}")
    return calculator
