"""The ground truth of a chemical system: every enumerated candidate relaxed once with the campaign's oracle.

Candidates (``enumerate_candidates``), symmetry-distinct:

- ordered derivative structures of fcc, bcc and hcp: every superlattice of the parent with up to
  ``supercell_atoms`` atoms (Hermite normal forms, one per orbit of the parent's point group),
  every decoration of its sites with at least two of the system's elements;
- the prototype library (``generators.PROTOTYPES``) decorated with the system's elements (every
  permutation, which covers the element substitutions of each decoration), up to ``prototype_atoms``;

duplicates removed with the project's ``StructureMatcher`` (within groups of equal formula,
primitive size and space group). The relaxed candidates and the elemental cells form the
ground-truth hull; the compounds within ``tolerance`` of it are the ground-truth stable phases
(symmetry-distinct after relaxation, the lowest energy of each). ``ground_truth`` stores the result
in the store (``discovery_ground_truths``), keyed by system, oracle and these settings, so later
campaigns reuse it; relaxations go through an ``Evaluator`` and its shared oracle cache.

>>> from benchmarks.discovery.system import ChemicalSystem
>>> len(enumerate_candidates(ChemicalSystem.parse("Cu-Ni"), TruthSettings(lattices=("fcc",), supercell_atoms=2, prototypes=False)))
2
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from pymatgen.core import Lattice, Structure
from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

from benchmarks.discovery.environment import QueryRecord, elemental_structures
from benchmarks.discovery.evaluation import Evaluator
from benchmarks.discovery.generators import PROTOTYPES, packed_volume
from benchmarks.discovery.hull import HullEntry, distances_to, energies_above_hull, formation_energy_per_atom
from benchmarks.discovery.matching import MATCHER
from benchmarks.discovery.oracles import Oracle
from benchmarks.discovery.system import ChemicalSystem, Counts, cell_counts
from skills.documents import GroundTruthRecord

if TYPE_CHECKING:
    from skills.store import SkillStore

__all__ = [
    "TruthSettings", "TruthPhase", "GroundTruth", "TruthScore", "enumerate_candidates", "superlattices",
    "ground_truth", "match_phases", "score_episode", "truth_hits",
]  # fmt: skip

Parent = Literal["fcc", "bcc", "hcp"]


class TruthSettings(BaseModel):
    """How the candidates are enumerated and what counts as stable; part of the ground truth's store key."""

    model_config = ConfigDict(frozen=True)

    lattices: tuple[Parent, ...] = ("fcc", "bcc", "hcp")
    supercell_atoms: int = Field(default=4, ge=1, le=8, description="Most atoms in a derivative supercell.")
    prototypes: bool = True
    prototype_atoms: int = Field(default=8, ge=1, description="Most atoms in a decorated prototype's cell.")
    tolerance: float = Field(default=1e-3, ge=0.0, description="eV/atom above the ground-truth hull that still counts as stable.")


class TruthPhase(BaseModel):
    """One relaxed candidate; stable phases keep their structures (``start``: the candidate as enumerated)."""

    formula: str
    counts: Counts
    energy_per_atom: float
    formation_energy: float
    e_above_hull: float
    origin: str | None = None
    start: dict | None = None
    relaxed: dict | None = None


class GroundTruth(BaseModel):
    """The ground-truth hull of a system with one oracle."""

    system: str
    oracle: str
    settings: TruthSettings
    candidates: int = Field(description="Symmetry-distinct candidates relaxed.")
    failed: int = 0
    wall_s: float = Field(description="Time it took to enumerate and relax the candidates (when first computed).")
    references: dict[str, float]
    stable: list[TruthPhase] = Field(description="Compounds on the hull (within tolerance), symmetry-distinct.")
    entries: list[TruthPhase] = Field(default_factory=list, description="Every relaxed compound candidate, without structures.")
    reused: bool = Field(default=False, description="Taken from the store rather than computed now.")

    def split(self, fraction: float, seed: int) -> tuple[list[TruthPhase], list[TruthPhase]]:
        """``(known, held_out)``: round(fraction × stable) stable phases for H0, chosen with ``seed``; the rest to discover."""
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"the known fraction must be within 0-1 (got {fraction})")
        order = np.random.default_rng(seed).permutation(len(self.stable))
        chosen = set(order[: round(fraction * len(self.stable))].tolist())
        known = [p for i, p in enumerate(self.stable) if i in chosen]
        return known, [p for i, p in enumerate(self.stable) if i not in chosen]

    def hull(self) -> list[HullEntry]:
        """The ground-truth hull's vertices: the elemental references and the stable phases."""
        return [HullEntry(counts={el: 1}, energy_per_atom=e) for el, e in self.references.items()] + [
            HullEntry(counts=p.counts, energy_per_atom=p.energy_per_atom) for p in self.stable
        ]


def truth_key(system: ChemicalSystem, oracle: Oracle, settings: TruthSettings) -> str:
    """Store id: system, oracle (name and relaxation settings) and the enumeration settings."""
    relaxation = [getattr(oracle, "fmax", None), getattr(oracle, "max_steps", None)]
    text = json.dumps([oracle.name, *relaxation, settings.model_dump(mode="json")], sort_keys=True)
    return f"{system.name}:{oracle.name}:{hashlib.sha256(text.encode()).hexdigest()[:12]}"


_PARENTS: dict[str, tuple[Lattice, list[list[float]]]] = {
    "fcc": (Lattice([[0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]]), [[0, 0, 0]]),
    "bcc": (Lattice([[-0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.5, 0.5, -0.5]]), [[0, 0, 0]]),
    "hcp": (Lattice.hexagonal(1.0, np.sqrt(8 / 3)), [[1 / 3, 2 / 3, 0.25], [2 / 3, 1 / 3, 0.75]]),
}


def _hnfs(n: int) -> list[np.ndarray]:
    """Every superlattice of index n, once: the Hermite normal forms [[a,0,0],[b,c,0],[d,e,f]] (0 ≤ b < c, 0 ≤ d, e < f),
    whose columns are the superlattice's vectors; returned transposed (rows are the vectors)."""
    out = []
    for a in range(1, n + 1):
        for c in range(1, n // a + 1):
            if n % (a * c):
                continue
            f = n // (a * c)
            for b, d, e in itertools.product(range(c), range(f), range(f)):
                out.append(np.array([[a, 0, 0], [b, c, 0], [d, e, f]]).T)
    return out


def superlattices(parent: Parent, n: int) -> list[np.ndarray]:
    """The superlattices of index n of a parent lattice, one per orbit of its point group (rows in the parent's basis)."""
    lattice, coords = _PARENTS[parent]
    cell = Structure(lattice, ["H"] * len(coords), coords)
    rotations = {tuple(op.rotation_matrix.round().astype(int).flat) for op in SpacegroupAnalyzer(cell).get_symmetry_operations()}
    kept: list[np.ndarray] = []
    for h in _hnfs(n):
        images = [h @ np.array(r).reshape(3, 3).T for r in rotations]
        if not any(_same_lattice(image, k) for image in images for k in kept):
            kept.append(h)
    return kept


def _same_lattice(a: np.ndarray, b: np.ndarray) -> bool:
    m = a @ np.linalg.inv(b)
    return bool(np.allclose(m, np.round(m), atol=1e-8))


def _derivatives(elements: list[str], settings: TruthSettings) -> list[Structure]:
    out = []
    for parent in settings.lattices:
        lattice, coords = _PARENTS[parent]
        for n in range(1, settings.supercell_atoms // len(coords) + 1):
            for h in superlattices(parent, n):
                cell = Structure(lattice, ["H"] * len(coords), coords)
                cell.make_supercell(h.tolist())
                for species in itertools.product(elements, repeat=len(cell)):
                    if len(set(species)) < 2:
                        continue
                    s = Structure(cell.lattice, list(species), cell.frac_coords)
                    s = s.scale_lattice(packed_volume(list(species)))
                    s.properties["origin"] = f"{parent} derivative ({len(s)} atoms)"
                    out.append(s)
    return out


def _prototypes(elements: list[str], settings: TruthSettings) -> list[Structure]:
    out = []
    for prototype in PROTOTYPES:
        for chosen in itertools.permutations(elements, len(prototype.labels)):
            s = prototype.build(dict(zip(prototype.labels, chosen, strict=True)))
            if len(s) <= settings.prototype_atoms:
                s.properties["origin"] = f"{prototype.name} {'/'.join(chosen)}"
                out.append(s)
    return out


def _distinct(structures: list[Structure], symprec: float = 1e-3) -> list[Structure]:
    """One structure per match class; cheap keys (formula, primitive size, space group) before the matcher."""
    groups: dict[tuple[str, int, int], list[Structure]] = {}
    for s in structures:
        primitive = s.get_primitive_structure()
        try:
            number = SpacegroupAnalyzer(primitive, symprec=symprec).get_space_group_number()
        except Exception:  # noqa: BLE001 - spglib gives up on some cells: keep them apart, the matcher decides
            number = 0
        primitive.properties = dict(s.properties)
        groups.setdefault((s.composition.reduced_formula, len(primitive), number), []).append(primitive)
    out = []
    for group in groups.values():
        kept: list[Structure] = []
        for s in group:
            if not any(MATCHER.fit(s, k) for k in kept):
                kept.append(s)
        out.extend(kept)
    return out


def enumerate_candidates(system: ChemicalSystem, settings: TruthSettings) -> list[Structure]:
    """Symmetry-distinct candidate compounds of the system (primitive cells, ``properties["origin"]`` says where from)."""
    structures = _derivatives(system.elements, settings) + (_prototypes(system.elements, settings) if settings.prototypes else [])
    return _distinct(structures)


def _compute(system: ChemicalSystem, oracle: Oracle, settings: TruthSettings, evaluator: Evaluator) -> GroundTruth:
    started = time.perf_counter()
    candidates = enumerate_candidates(system, settings)
    cells = [cell for el in system.elements for cell in elemental_structures(el)]
    results = evaluator.evaluate(oracle, cells + candidates)
    references: dict[str, float] = {}
    for cell, (result, _) in zip(cells, results, strict=False):
        if result.ok and result.energy_per_atom is not None:
            el = cell.composition.elements[0].symbol
            references[el] = min(references.get(el, np.inf), result.energy_per_atom)
    missing = [el for el in system.elements if el not in references]
    if missing:
        raise ValueError(f"the {oracle.name} oracle could not relax any reference cell of {', '.join(missing)}")
    done = [(c, r) for c, (r, _) in zip(candidates, results[len(cells) :], strict=True) if r.ok and r.energy_per_atom is not None]
    elements = [HullEntry(counts={el: 1}, energy_per_atom=e) for el, e in references.items()]
    above = energies_above_hull(elements + [HullEntry(counts=cell_counts(c), energy_per_atom=r.energy_per_atom) for c, r in done])[len(elements) :]  # type: ignore[arg-type]  # ok results have an energy
    entries = []
    for (candidate, result), e in zip(done, above, strict=True):
        counts = cell_counts(candidate)
        entries.append(TruthPhase(
            formula=candidate.composition.reduced_formula, counts=counts, energy_per_atom=result.energy_per_atom,  # type: ignore[arg-type]
            formation_energy=formation_energy_per_atom(counts, result.energy_per_atom, references), e_above_hull=e,  # type: ignore[arg-type]
            origin=candidate.properties.get("origin"), start=candidate.as_dict(), relaxed=result.relaxed,
        ))  # fmt: skip
    stable: list[TruthPhase] = []
    kept: list[Structure] = []
    for phase in sorted((p for p in entries if p.e_above_hull <= settings.tolerance), key=lambda p: (p.formula, p.energy_per_atom)):
        relaxed = Structure.from_dict(phase.relaxed or {})
        if not any(k.composition.reduced_formula == phase.formula and MATCHER.fit(relaxed, k) for k in kept):
            kept.append(relaxed)
            stable.append(phase)
    return GroundTruth(
        system=system.name, oracle=oracle.name, settings=settings, candidates=len(candidates), failed=len(candidates) - len(done),
        wall_s=time.perf_counter() - started, references=references, stable=stable,
        entries=[p.model_copy(update={"start": None, "relaxed": None}) for p in entries],
    )  # fmt: skip


def ground_truth(
    system: ChemicalSystem, oracle: Oracle, settings: TruthSettings | None = None, evaluator: Evaluator | None = None,
    store: SkillStore | None = None,
) -> GroundTruth:  # fmt: skip
    """The system's ground truth: from the store when it is there (``reused``), else computed and stored."""
    settings = settings or TruthSettings()
    oracle.check(system.elements)
    key = truth_key(system, oracle, settings)
    if store is not None and (record := store.get(GroundTruthRecord, key)) is not None:
        return GroundTruth.model_validate(record.truth).model_copy(update={"reused": True})
    truth = _compute(system, oracle, settings, evaluator or Evaluator())
    if store is not None:
        store.put(GroundTruthRecord(
            id=key, system=system.name, oracle=oracle.name, settings=settings.model_dump(mode="json"), truth=truth.model_dump(mode="json"),
        ))  # fmt: skip
    return truth


def match_phases(relaxed: list[Structure | None], phases: list[Structure]) -> list[int | None]:
    """For each relaxed structure, the index of the phase it matches (None: none, or no structure)."""
    out: list[int | None] = []
    for structure in relaxed:
        found = None
        if structure is not None:
            formula = structure.composition.reduced_formula
            found = next((i for i, p in enumerate(phases) if p.composition.reduced_formula == formula and MATCHER.fit(structure, p)), None)
        out.append(found)
    return out


class TruthScore(BaseModel):
    """An episode against the held-out ground-truth stable phases."""

    held_out: int
    matches: list[int | None] = Field(description="Per query, the held-out phase its relaxed structure matches.")
    curve: list[int] = Field(description="Held-out phases found after t queries, t = 0..queries.")
    recall: float | None = Field(description="Held-out phases found / held-out phases (None when none is held out).")
    precision: float | None = Field(description="Discoveries that are held-out phases / discoveries (None without discoveries).")
    found_per_query: float | None = Field(default=None, description="Held-out phases found / queries made.")


def score_episode(relaxed: list[Structure | None], discoveries: list[bool], held_out: list[Structure]) -> TruthScore:
    """Recall, precision and hit rate of an episode's queries (relaxed structures; which ones count as discoveries)."""
    matches: list[int | None] = match_phases(relaxed, held_out) if held_out else [None] * len(relaxed)
    found: set[int] = set()
    curve = [0]
    for m in matches:
        if m is not None:
            found.add(m)
        curve.append(len(found))
    hits = sum(1 for m, d in zip(matches, discoveries, strict=True) if d and m is not None)
    return TruthScore(
        held_out=len(held_out), matches=matches, curve=curve, recall=len(found) / len(held_out) if held_out else None,
        precision=hits / sum(discoveries) if any(discoveries) else None, found_per_query=len(found) / len(relaxed) if relaxed else None,
    )  # fmt: skip


def truth_hits(records: list[QueryRecord], truth: GroundTruth, epsilon: float) -> list[bool]:
    """Per query, a discovery by the ground truth's measure: novel, unique, and within ε of the ground-truth hull
    (the hull of every enumerated candidate, fixed: the query is judged against it, not added to it)."""
    judged = [i for i, r in enumerate(records) if r.ok and r.energy_per_atom is not None]
    above = distances_to(truth.hull(), [HullEntry(counts=records[i].counts, energy_per_atom=records[i].energy_per_atom) for i in judged])  # type: ignore[arg-type]  # filtered above
    within = dict(zip(judged, above, strict=True))
    return [i in within and within[i] <= epsilon and r.novel and r.unique for i, r in enumerate(records)]
