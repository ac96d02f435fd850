"""The discovery environment: a chemical system, known materials H0, an oracle, a query budget.

Each query relaxes the proposed structures with the oracle, rebuilds the convex hull from H0 and
every proposal so far, and counts the discoveries D(t): proposals that are stable (within ε of the
hull as it stands after t queries), unique (no earlier proposal relaxed to the same structure) and
novel (not in H0). Failed relaxations are recorded and spend budget like any other query.

>>> from benchmarks.discovery.oracles import make_oracle
>>> from benchmarks.discovery.system import ChemicalSystem
>>> env = DiscoveryEnvironment(ChemicalSystem.parse("Cu-Ni"), make_oracle("emt"), budget=2)
>>> sorted(env.references)
['Cu', 'Ni']
"""

from __future__ import annotations

import math
from functools import cached_property

from ase.build import bulk
from pydantic import BaseModel, Field
from pymatgen.core import Element, Structure
from pymatgen.io.ase import AseAtomsAdaptor

from benchmarks.discovery.evaluation import Evaluator
from benchmarks.discovery.hull import (
    HullEntry,
    energies_above_hull,
    formation_energy_per_atom,
)
from benchmarks.discovery.matching import StructureSet
from benchmarks.discovery.oracles import Oracle
from benchmarks.discovery.system import ChemicalSystem, Counts, cell_counts

__all__ = ["QueryRecord", "DiscoveryEnvironment", "BudgetSpent", "elemental_structures"]


class BudgetSpent(RuntimeError):
    """No queries left."""


class QueryRecord(BaseModel):
    """One oracle query: what was proposed, what the oracle said, and how it stands on the hull."""

    t: int = Field(description="1-based query number.")
    formula: str
    counts: Counts
    ok: bool
    error: str | None = None
    energy_per_atom: float | None = None
    formation_energy: float | None = None
    e_above_hull: float | None = Field(default=None, description="Against the hull right after this query.")
    unique: bool = False
    novel: bool = False
    stable: bool = False
    spacegroup: str | None = None
    origin: str | None = None
    cached: bool = False
    steps: int = 0
    relaxed: dict | None = None

    @property
    def sun(self) -> bool:
        return self.ok and self.unique and self.novel and self.stable


def elemental_structures(element: str) -> list[Structure]:
    """fcc, bcc, hcp and simple cubic cells of one element, sized from its metallic radius."""
    el = Element(element)
    r = float(el.metallic_radius or el.atomic_radius or 1.5)
    cells = [
        bulk(element, "fcc", a=2 * math.sqrt(2) * r), bulk(element, "bcc", a=4 * r / math.sqrt(3)),
        bulk(element, "hcp", a=2 * r, c=2 * r * math.sqrt(8 / 3)), bulk(element, "sc", a=2 * r),
    ]  # fmt: skip
    return [AseAtomsAdaptor.get_structure(cell) for cell in cells]


def _spacegroup(structure: Structure) -> str | None:
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    try:
        return SpacegroupAnalyzer(structure, symprec=0.1).get_space_group_symbol()
    except Exception:  # noqa: BLE001 - spglib gives up on some distorted cells
        return None


class DiscoveryEnvironment:
    """One episode's world. ``query`` is the only way to spend budget."""

    def __init__(
        self, system: ChemicalSystem, oracle: Oracle, budget: int, epsilon: float = 0.1,
        known: list[Structure] | None = None, evaluator: Evaluator | None = None,
    ):  # fmt: skip
        if budget < 1:
            raise ValueError(f"budget must be at least 1 (got {budget})")
        oracle.check(system.elements)
        self.system, self.oracle, self.budget, self.epsilon = system, oracle, budget, epsilon
        self.evaluator = evaluator or Evaluator()
        self._known_input = list(known or [])
        self.records: list[QueryRecord] = []
        self.curve: list[int] = [0]
        self.pending: list[Structure] = []  # proposed for the next query batch, not yet evaluated
        self._relaxed: list[Structure | None] = []  # per query, None when it failed
        self._relaxed_set = StructureSet()
        self._e_above_hull: list[float | None] = []  # per query, against the hull as it stands now

    @cached_property
    def _h0(self) -> tuple[dict[str, float], list[HullEntry], list[Structure]]:
        cells = [cell for el in self.system.elements for cell in elemental_structures(el)]
        foreign = [s for s in self._known_input if not set(s.composition.chemical_system.split("-")) <= set(self.system.elements)]
        if foreign:
            raise ValueError(f"a known structure ({foreign[0].composition.reduced_formula}) is outside {self.system.name}")
        results = self.evaluator.evaluate(self.oracle, cells + self._known_input)
        references: dict[str, float] = {}
        entries, structures = [], []
        for structure, (result, _) in zip(cells + self._known_input, results, strict=True):
            if not result.ok:
                continue
            relaxed = result.structure()
            assert result.energy_per_atom is not None and relaxed is not None  # an ok result has both
            counts = cell_counts(structure)
            entries.append(HullEntry(counts=counts, energy_per_atom=result.energy_per_atom))
            structures.append(relaxed)
            if len(counts) == 1:
                (el,) = counts
                references[el] = min(references.get(el, math.inf), result.energy_per_atom)
        missing = [el for el in self.system.elements if el not in references]
        if missing:
            raise ValueError(f"the {self.oracle.name} oracle could not relax any reference cell of {', '.join(missing)}")
        return references, entries, structures

    @property
    def references(self) -> dict[str, float]:
        """Elemental reference energies per atom (the lowest of fcc/bcc/hcp/sc, relaxed by this oracle)."""
        return self._h0[0]

    @property
    def known_entries(self) -> list[HullEntry]:
        return list(self._h0[1])

    @property
    def known_structures(self) -> list[Structure]:
        """H0: relaxed elemental cells and the given known structures."""
        return list(self._h0[2])

    @cached_property
    def _known_set(self) -> StructureSet:
        return StructureSet(self.known_structures)

    @cached_property
    def seen(self) -> StructureSet:
        """H0 and every structure queried so far, as proposed and as relaxed (the policies' uniqueness filter reads it)."""
        return self._known_set.copy()

    def stable_structures(self) -> list[Structure]:
        """The relaxed structures of queries that are stable against the current hull."""
        return [s for r, s in zip(self.records, self._relaxed, strict=True) if s is not None and r.stable]

    @property
    def remaining(self) -> int:
        return self.budget - len(self.records)

    def query(self, structures: list[Structure], origins: list[str | None] | None = None) -> list[QueryRecord]:
        """Relax ``structures`` (one query each), update the hull, and return their records."""
        if len(structures) > self.remaining:
            raise BudgetSpent(f"{len(structures)} queries asked, {self.remaining} left of {self.budget}")
        origins = origins or [s.properties.get("origin") for s in structures]
        references, known_entries, _ = self._h0
        for structure, (result, cached), origin in zip(structures, self.evaluator.evaluate(self.oracle, structures), origins, strict=True):
            counts = cell_counts(structure)
            record = QueryRecord(
                t=len(self.records) + 1, formula=structure.composition.reduced_formula, counts=counts, ok=result.ok,
                error=result.error, cached=cached, steps=result.steps, origin=origin,
            )  # fmt: skip
            relaxed = result.structure() if result.ok else None
            if relaxed is not None:
                assert result.energy_per_atom is not None  # an ok result has its energy
                record.energy_per_atom = result.energy_per_atom
                record.formation_energy = formation_energy_per_atom(counts, result.energy_per_atom, references)
                record.novel = relaxed not in self._known_set
                record.unique = relaxed not in self._relaxed_set
                record.spacegroup = _spacegroup(relaxed)
                record.relaxed = result.relaxed
                self._relaxed_set.add(relaxed)
                self.seen.add(relaxed)
            self.seen.add(structure)
            self.records.append(record)
            self._relaxed.append(relaxed)
            self._rehull(known_entries)
        return self.records[-len(structures) :]

    def _rehull(self, known_entries: list[HullEntry]) -> None:
        """Every query's distance to the hull as it stands now; the newest query keeps its own as ``e_above_hull``."""
        done = [r for r in self.records if r.ok]
        values = iter(energies_above_hull(known_entries + [HullEntry(counts=r.counts, energy_per_atom=r.energy_per_atom) for r in done])[len(known_entries) :])  # type: ignore[arg-type]  # ok records have an energy
        self._e_above_hull = [next(values) if r.ok else None for r in self.records]
        for record, e in zip(self.records, self._e_above_hull, strict=True):
            record.stable = e is not None and e <= self.epsilon
        self.records[-1].e_above_hull = self._e_above_hull[-1]
        self.curve.append(sum(r.sun for r in self.records))

    def final_e_above_hull(self) -> list[float | None]:
        """Each query's distance to the hull after the last query (None for failed queries)."""
        return list(self._e_above_hull)
