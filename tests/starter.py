"""Skills of the starter library learned into a test's store, and their answers computed here, independently."""

from __future__ import annotations

from skills import STARTER_LIBRARY
from skills.documents import Skill


def learn_starter(*tasks: str) -> list[Skill]:
    """Learn the starter library's ``tasks`` (file names without ``.json``) into the settings' store, as the setup does."""
    from benchmarks.task import load_task
    from deployments.settings import get_settings
    from flows.learn import learn_task
    from skills.store import open_store

    settings = get_settings()
    learned = [learn_task(load_task(STARTER_LIBRARY / f"{task}.json"), settings, llm=None, starter=True) for task in tasks]
    assert all(o.skill_id for o in learned), [o.reason for o in learned]
    store = open_store(settings)
    return [store.get_skill(o.skill_id or "") for o in learned]


def emt_atomization(formula: str) -> float:
    """ASE's EMT atomization energy (eV) of a molecule: its isolated atoms less the molecule relaxed to fmax = 0.01 eV/Å."""
    from ase import Atoms
    from ase.build import molecule
    from ase.calculators.emt import EMT
    from ase.optimize import BFGS

    mol = molecule(formula)
    mol.calc = EMT()
    BFGS(mol, logfile=None).run(fmax=0.01)
    atoms = 0.0
    for symbol in mol.get_chemical_symbols():
        atom = Atoms(symbol)
        atom.calc = EMT()
        atoms += atom.get_potential_energy()
    return round(atoms - mol.get_potential_energy(), 4)


def rocksalt_density(cation: str, anion: str, a: float) -> float:
    """pymatgen's density (g/cm³) of a rock-salt crystal with cubic lattice constant ``a`` (Å)."""
    from pymatgen.core import Lattice, Structure

    crystal = Structure.from_spacegroup("Fm-3m", Lattice.cubic(a), [cation, anion], [[0, 0, 0], [0.5, 0.5, 0.5]])
    return round(float(crystal.density), 4)


def rocksalt(*species: str) -> dict:
    """The rock-salt crystal (Fm-3m, sites at 0 and ½) with ``species`` on its two sites: a lifted crystal parameter's value."""
    return {"space_group": "Fm-3m", "species": list(species), "coords": [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]}


def learn_n2_by_position() -> Skill:
    """The atomization skill as a workspace learned it from the N2 script that computes 2*E(N atom) - E(N2): its code
    takes the formula's first element as the atom, so it holds only for formulas of N2's make-up."""
    from benchmarks.task import load_task
    from deployments.settings import get_settings
    from flows.learn import learn_task
    from skills.store import open_store
    from tests.codes import N2_CODE

    settings = get_settings()
    task = load_task(STARTER_LIBRARY / "ase_emt_atomization_n2.json").model_copy(update={"solution_code_or_process": N2_CODE})
    learned = learn_task(task, settings, llm=None, starter=True)
    assert learned.skill_id, learned.reason
    skill = open_store(settings).get_skill(learned.skill_id)
    assert skill.parameters.model_dump()["properties"]["formula"].get("derives") == "elements"
    return skill


_LEARNED: dict[str, Skill] = {}


def starter_skill(task: str) -> Skill:
    """The starter library's ``task`` as a skill in the settings' store: learned (``learn_starter``) the first time in a
    test run, and the same document stored again for later tests, which need it but not its learning."""
    from deployments.settings import get_settings
    from skills.store import open_store

    if task not in _LEARNED:
        [_LEARNED[task]] = learn_starter(task)
    else:
        open_store(get_settings()).put(_LEARNED[task])
    return _LEARNED[task]
