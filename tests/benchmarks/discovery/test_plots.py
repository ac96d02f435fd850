"""Campaign figures are written: acquisition curves (with the ground-truth panel) and the ground-truth hull."""

from benchmarks.discovery.campaign import summarise
from benchmarks.discovery.episode import EpisodeSpec, run_episode
from benchmarks.discovery.evaluation import Evaluator
from benchmarks.discovery.generators import PROTOTYPES
from benchmarks.discovery.groundtruth import GroundTruth, TruthPhase, TruthSettings
from benchmarks.discovery.plots import plot_acquisition, plot_hull
from benchmarks.discovery.system import ChemicalSystem


def _phase(counts: dict[str, int], formation: float, above: float = 0.0) -> TruthPhase:
    formula = "".join(f"{el}{n}" for el, n in counts.items())
    return TruthPhase(formula=formula, counts=counts, energy_per_atom=formation, formation_energy=formation, e_above_hull=above)


def _truth(system: str, stable: list[TruthPhase], others: list[TruthPhase]) -> GroundTruth:
    return GroundTruth(system=system, oracle="emt", settings=TruthSettings(), candidates=len(stable) + len(others), wall_s=1.0,
                       references={el: 0.0 for el in system.split("-")}, stable=stable, entries=stable + others)  # fmt: skip


def test_acquisition_and_binary_hull_plots_are_written(tmp_path):
    system = ChemicalSystem.parse("Cu-Pt", max_atoms=2)
    l10 = PROTOTYPES[2].build({"A": "Cu", "B": "Pt"})
    evaluator = Evaluator()
    results = [
        run_episode(EpisodeSpec(system=system, policy=policy, budget=3, seed=seed, held_out=[l10.as_dict()]), evaluator)
        for policy in ("random", "diversity") for seed in (0, 1)
    ]  # fmt: skip
    metrics = summarise(results, baseline_policy="random")
    assert all(len(m.truth_curve) == 4 and m.held_out == 1 and m.recall is not None for m in metrics)
    truth = _truth("Cu-Pt", [_phase({"Cu": 1, "Pt": 1}, -0.12)], [_phase({"Cu": 3, "Pt": 1}, -0.05, 0.02), _phase({"Cu": 1, "Pt": 2}, 0.03, 0.1)])
    acquisition = plot_acquisition(metrics, "Cu-Pt test", tmp_path / "acquisition.png")
    hull = plot_hull(truth, results, tmp_path / "hull.png")
    assert hull is not None
    for path in (acquisition, hull):
        assert path.exists() and path.stat().st_size > 1000


def test_ternary_hull_is_written_and_quaternary_is_skipped(tmp_path):
    stable = [_phase({"Cu": 3, "Pt": 1}, -0.1), _phase({"Ni": 1, "Pt": 1}, -0.12), _phase({"Cu": 1, "Ni": 1, "Pt": 2}, -0.13)]
    truth = _truth("Cu-Ni-Pt", stable, [_phase({"Cu": 1, "Ni": 1}, 0.02, 0.02)])
    path = plot_hull(truth, [], tmp_path / "hull.png")
    assert path is not None and path.stat().st_size > 1000
    quaternary = _truth("Cu-Ni-Pd-Pt", [], [])
    assert plot_hull(quaternary, [], tmp_path / "q.png") is None and not (tmp_path / "q.png").exists()
