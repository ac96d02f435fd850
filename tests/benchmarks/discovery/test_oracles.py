"""Oracles: the multi-element Lennard-Jones calculator, and relaxations run as atomate2 jobs.

The multi-element LJ's forces and stress agree with finite differences of its energy; the atomate2
makers give what the hand-written FIRE relaxation gave; an oracle job runs on the job runner and from
its exported JSON, with atomate2's task document as output.
"""

import json
from importlib.util import find_spec

import numpy as np
import pytest
from ase.build import bulk
from ase.filters import UnitCellFilter
from atomate2.ase.jobs import AseRelaxMaker, EmtRelaxMaker
from atomate2.forcefields.jobs import ForceFieldRelaxMaker
from atomate2.forcefields.utils import MLFF
from monty.json import MontyDecoder, MontyEncoder
from pymatgen.core import Lattice, Structure

from benchmarks.discovery.oracle_makers import CHGNetRelaxMaker, relax_settings
from benchmarks.discovery.oracles import MultiLennardJones, OracleError, lj_pair, make_oracle, oracle_job, oracle_result
from deployments.job_runners import LocalJobRunner


def test_lj_forces_and_stress_match_finite_differences():
    atoms = bulk("Cu", "fcc", a=3.6, cubic=True)
    atoms[1].symbol, atoms[2].symbol = "Ni", "Pt"
    atoms.rattle(0.05, seed=1)
    atoms.set_cell(atoms.cell * [[1, 0.02, 0], [0, 0.98, 0], [0, 0, 1.03]], scale_atoms=True)
    atoms.calc = MultiLennardJones()
    forces, stress = atoms.get_forces(), atoms.get_stress()
    assert np.abs(forces).max() > 0.1  # a rattled cell has real forces to compare
    np.testing.assert_allclose(forces, atoms.calc.calculate_numerical_forces(atoms, d=1e-5), atol=1e-6)
    np.testing.assert_allclose(stress, atoms.calc.calculate_numerical_stress(atoms, d=1e-6), atol=1e-6)


def test_unlike_pairs_bind_more_strongly_than_their_mean():
    (_, cu), (_, pt), (_, cupt) = lj_pair("Cu", "Cu"), lj_pair("Pt", "Pt"), lj_pair("Cu", "Pt")
    assert cupt > np.sqrt(cu * pt)


# Energies (eV/atom), FIRE steps and volumes (Å^3/atom) the hand-written relaxation (ASE FIRE + UnitCellFilter,
# fmax 0.02, 500 steps) gave before the oracles ran as atomate2 jobs.
def _cells() -> dict[str, Structure]:
    fcc = [[0, 0, 0], [0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]]
    return {
        "Cu fcc": Structure(Lattice.cubic(3.7), ["Cu"] * 4, fcc),
        "CuNi B2": Structure(Lattice.cubic(2.9), ["Cu", "Ni"], [[0, 0, 0], [0.5, 0.5, 0.5]]),
        "Cu3Pt L1_2": Structure(Lattice.cubic(3.8), ["Pt", "Cu", "Cu", "Cu"], fcc),
    }


HAND_WRITTEN = [
    ("emt", "Cu fcc", -0.007036483376834379, 16, 11.56489505912109),
    ("emt", "CuNi B2", 0.060416091739649236, 11, 11.176342316035724),
    ("emt", "Cu3Pt L1_2", -0.1004987665445567, 14, 12.354425393006936),
    ("lj", "Cu fcc", -1.112159442349725, 17, 11.235066739051566),
    ("lj", "CuNi B2", -1.2004741054976118, 8, 10.95241605118687),
]


@pytest.mark.parametrize(("oracle", "cell", "energy", "steps", "volume"), HAND_WRITTEN)
def test_atomate2_relaxation_agrees_with_the_hand_written_one(oracle, cell, energy, steps, volume):
    result = make_oracle(oracle).evaluate(_cells()[cell])
    assert result.ok and result.converged
    assert result.energy_per_atom == pytest.approx(energy, abs=1e-6)
    assert result.steps == steps  # the same FIRE path, step for step
    relaxed = result.structure()
    assert relaxed is not None and relaxed.volume / len(relaxed) == pytest.approx(volume, abs=1e-4)


def test_each_oracle_is_an_atomate2_maker_with_the_oracle_relaxation():
    emt, lj = make_oracle("emt", fmax=0.1, max_steps=100).maker(), make_oracle("lj").maker()
    assert isinstance(emt, EmtRelaxMaker) and isinstance(lj, AseRelaxMaker) and isinstance(lj.calculator, MultiLennardJones)
    assert emt.relax_cell and emt.steps == 100 and emt.relax_kwargs["fmax"] == 0.1 and emt.optimizer_kwargs == {"optimizer": "FIRE"}
    assert lj.steps == 500 and lj.relax_kwargs["fmax"] == 0.02 and lj.relax_kwargs["cell_filter"] is UnitCellFilter


def test_an_oracle_job_runs_on_the_job_runner_with_atomate2_output():
    cell = _cells()["CuNi B2"]
    job = oracle_job(make_oracle("emt"), cell)
    (outcome,) = list(LocalJobRunner().run(job))
    assert outcome.ok and outcome.document is not None
    task = outcome.document["output"]
    assert task["@class"] == "AseStructureTaskDoc" and task["ase_calculator_name"] == "emt"
    assert task["output"]["energy"] == pytest.approx(2 * task["output"]["energy_per_atom"])
    assert Structure.from_dict(task["structure"]).composition.reduced_formula == "CuNi"
    assert [step["energy"] for step in task["output"]["ionic_steps"]][-1] == task["output"]["energy"]
    direct = make_oracle("emt").evaluate(cell)
    assert oracle_result(outcome.document).model_dump(exclude={"wall_s"}) == direct.model_dump(exclude={"wall_s"})


def test_an_exported_oracle_job_runs_from_its_json():
    job = oracle_job(make_oracle("lj"), _cells()["CuNi B2"])
    exported = json.loads(json.dumps(job.as_dict(), cls=MontyEncoder))  # what a workflow manager stores
    (outcome,) = list(LocalJobRunner().run(MontyDecoder().process_decoded(exported)))
    assert oracle_result(outcome.document).energy_per_atom == pytest.approx(-1.2004741054976118, abs=1e-6)


def test_failed_relaxations_are_failed_queries():
    iron = make_oracle("emt").evaluate(Structure(Lattice.cubic(2.9), ["Fe", "Fe"], [[0, 0, 0], [0.5, 0.5, 0.5]]))
    assert not iron.ok and iron.error is not None and iron.error.startswith("relaxation failed: NotImplementedError")
    (outcome,) = list(LocalJobRunner().run(oracle_job(make_oracle("emt"), _cells()["Cu fcc"])))
    assert outcome.document is not None
    outcome.document["output"]["output"]["energy_per_atom"] = float("nan")
    assert oracle_result(outcome.document).error == "energy is nan"
    outcome.document["output"]["output"]["energy_per_atom"] = -1.0
    outcome.document["output"]["structure"] = Structure(Lattice.cubic(20.0), ["Cu"], [[0, 0, 0]]).as_dict()
    assert "blew up" in (oracle_result(outcome.document).error or "")


def test_chgnet_without_its_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr("benchmarks.discovery.oracles.find_spec", lambda name: None)
    with pytest.raises(OracleError, match="pip install"):
        make_oracle("chgnet").evaluate(_cells()["Cu fcc"])


def test_the_chgnet_maker_is_atomate2s_force_field_relaxation():
    maker = CHGNetRelaxMaker(**relax_settings(0.02, 500))  # builds without loading the model
    assert isinstance(maker, ForceFieldRelaxMaker) and maker.force_field_name == str(MLFF.CHGNet)
    assert maker.relax_kwargs["cell_filter"] is UnitCellFilter and maker.steps == 500


@pytest.mark.skipif(find_spec("chgnet") is None, reason="chgnet is not installed (the mlip extra of .ci/setup)")
def test_the_chgnet_oracle_relaxes_rock_salt_for_real_and_asks_for_a_gpu_it_can_do_without():
    oracle = make_oracle("chgnet")
    nacl = Structure.from_spacegroup("Fm-3m", Lattice.cubic(5.64), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]])
    job = oracle_job(oracle, nacl)
    assert job.config.manager_config["resources"] == {"GPU": 1} and job.config.manager_config["gpu_optional"] is True
    assert "gpu_optional" not in oracle_job(make_oracle("emt"), _cells()["Cu fcc"]).config.manager_config
    result = oracle.evaluate(nacl)
    assert result.ok and result.converged, result.error
    relaxed = result.structure()
    # atomate2's ForceFieldRelaxMaker run by hand (skills/library/chgnet_*_nacl.json, FrechetCellFilter to 0.01 eV/Å):
    # -3.6680 eV/atom and a = 5.6905 Å; the oracle relaxes through UnitCellFilter to 0.02 eV/Å
    assert result.energy_per_atom == pytest.approx(-3.668, abs=0.001)
    assert relaxed is not None and len(relaxed) == 8 and relaxed.lattice.a == pytest.approx(5.6905, abs=0.003)
