"""The ground truth: symmetry-distinct candidates, computed once and reused from the store, split into H0 and held-out
phases by seed, and episodes scored against the held-out ones."""

import itertools
from collections import Counter

import pytest
from pymatgen.analysis.structure_matcher import StructureMatcher

from benchmarks.discovery.campaign import CampaignSpec
from benchmarks.discovery.evaluation import Evaluator, OracleCache
from benchmarks.discovery.generators import PROTOTYPES
from benchmarks.discovery.groundtruth import (
    GroundTruth,
    TruthPhase,
    TruthSettings,
    enumerate_candidates,
    ground_truth,
    score_episode,
    superlattices,
    truth_hits,
)
from benchmarks.discovery.oracles import make_oracle
from benchmarks.discovery.system import ChemicalSystem
from deployments.settings import get_settings
from skills.store import open_store


def test_superlattices_are_one_per_symmetry_class():
    # Hart & Forcade (2008): distinct fcc (and bcc) superlattices of index 1-4 are 1, 2, 3, 7
    assert [len(superlattices("fcc", n)) for n in (1, 2, 3, 4)] == [1, 2, 3, 7]
    assert [len(superlattices("bcc", n)) for n in (1, 2, 3, 4)] == [1, 2, 3, 7]


def test_enumeration_gives_symmetry_distinct_candidates():
    settings = TruthSettings(lattices=("fcc",), supercell_atoms=4, prototypes=False)
    candidates = enumerate_candidates(ChemicalSystem.parse("Cu-Pt"), settings)
    # the binary fcc derivative structures of up to 4 atoms: 2, 3 and 12 up to exchanging the elements
    # (Hart & Forcade), i.e. 2, 6 and 19 when Cu3Pt and CuPt3 count apart
    assert Counter(len(c) for c in candidates) == {2: 2, 3: 6, 4: 19}
    matcher = StructureMatcher()  # pymatgen's defaults, not the project's matcher that did the deduplication
    for a, b in itertools.combinations(candidates, 2):
        assert not (a.composition.reduced_formula == b.composition.reduced_formula and matcher.fit(a, b))
    # prototypes that are fcc derivatives (L1_2, L1_0) are not enumerated twice
    with_prototypes = enumerate_candidates(ChemicalSystem.parse("Cu-Pt"), settings.model_copy(update={"prototypes": True}))
    assert not any("L1_2" in (c.properties.get("origin") or "") for c in with_prototypes)
    assert len(with_prototypes) > len(candidates)
    assert all(len(c.composition) == 2 and len(c) <= 8 for c in with_prototypes)


def test_ground_truth_is_computed_once_and_reused(workspace):
    store = open_store(get_settings())
    system, oracle = ChemicalSystem.parse("Cu-Pt"), make_oracle("emt")
    settings = TruthSettings(supercell_atoms=2, prototype_atoms=2)
    evaluator = Evaluator(cache=OracleCache(store))
    first = ground_truth(system, oracle, settings, evaluator, store)
    assert not first.reused and first.candidates == 6 and first.failed == 0 and evaluator.evaluated == 6 + 8  # and the elemental cells
    assert [p.formula for p in first.stable] == ["CuPt"] and first.stable[0].formation_energy < 0  # EMT orders CuPt (L1_1)
    assert all(p.e_above_hull <= settings.tolerance and p.relaxed and p.start for p in first.stable)
    assert len(first.entries) == 6 and set(first.references) == {"Cu", "Pt"}

    again_evaluator = Evaluator(cache=OracleCache(store))
    again = ground_truth(system, oracle, settings, again_evaluator, store)
    assert again.reused and again_evaluator.evaluated == 0 and again_evaluator.hits == 0  # the stored ground truth, not the cache
    assert again.model_dump(mode="json", exclude={"reused"}) == first.model_dump(mode="json", exclude={"reused"})
    assert store.count("discovery_ground_truths") == 1
    other = ground_truth(system, oracle, settings.model_copy(update={"lattices": ("fcc",)}), Evaluator(cache=OracleCache(store)), store)
    assert not other.reused and store.count("discovery_ground_truths") == 2


def _phase(formula: str, counts: dict[str, int]) -> TruthPhase:
    return TruthPhase(formula=formula, counts=counts, energy_per_atom=-1.0, formation_energy=-0.1, e_above_hull=0.0, start={}, relaxed={})


def _truth(n: int) -> GroundTruth:
    phases = [_phase(f"Cu{i + 1}Pt", {"Cu": i + 1, "Pt": 1}) for i in range(n)]
    return GroundTruth(system="Cu-Pt", oracle="emt", settings=TruthSettings(), candidates=n, wall_s=0.0, references={}, stable=phases)


@pytest.mark.parametrize(("n", "fraction", "known"), [(6, 0.5, 3), (5, 0.4, 2), (4, 0.0, 0), (4, 1.0, 4)])
def test_h0_holds_the_chosen_fraction_of_stable_phases_by_seed(n, fraction, known):
    truth = _truth(n)
    splits = [truth.split(fraction, seed) for seed in range(6)]
    for h0, rest in splits:
        assert len(h0) == known and len(rest) == n - known
        assert sorted(p.formula for p in h0 + rest) == sorted(p.formula for p in truth.stable)
    assert truth.split(fraction, 3) == splits[3]  # seeded
    if 0 < known < n:
        assert len({tuple(p.formula for p in h0) for h0, _ in splits}) > 1  # and the seed matters


def test_campaign_episodes_share_their_split_across_policies():
    spec = CampaignSpec(system=ChemicalSystem.parse("Cu-Pt"), policies=["diversity"], episodes=3, known_fraction=0.5)
    truth = _truth(4).model_copy(update={"stable": [p.model_copy(update={"start": {"i": i}, "relaxed": {"i": i}}) for i, p in enumerate(_truth(4).stable)]})
    specs = spec.episode_specs(truth)
    by_episode: dict[int, set] = {}
    for i, episode in specs:
        assert len(episode.known) == 2 and len(episode.held_out) == 2
        assert {d["i"] for d in episode.known}.isdisjoint(d["i"] for d in episode.held_out)
        by_episode.setdefault(i, set()).add(tuple(d["i"] for d in episode.known))
    assert all(len(splits) == 1 for splits in by_episode.values())  # random and diversity see the same H0 in episode i
    assert all(episode.held_out is None for _, episode in spec.episode_specs(None))
    assert CampaignSpec(system=ChemicalSystem.parse("Cu-Pt", max_atoms=3), policies=["ucb"]).truth_settings == TruthSettings(
        supercell_atoms=3, prototype_atoms=3
    )
    assert CampaignSpec(system=ChemicalSystem.parse("Cu-Pt"), policies=["ucb"], truth_atoms=0).truth_settings is None


def test_recall_precision_and_found_per_query_on_a_hand_made_episode():
    l12, l10 = PROTOTYPES[1].build({"A": "Pt", "B": "Cu"}), PROTOTYPES[2].build({"A": "Cu", "B": "Pt"})
    a15 = PROTOTYPES[6].build({"A": "Pt", "B": "Cu"})
    assert l12.composition.reduced_formula == a15.composition.reduced_formula == "Cu3Pt"
    bigger = l12.copy()
    bigger.scale_lattice(l12.volume * 1.1)  # the same crystal, relaxed to another volume
    relaxed = [l12, None, a15, bigger, PROTOTYPES[4].build({"A": "Pt", "B": "Cu"})]  # the last: CaF2-type Cu2Pt
    discoveries = [True, False, True, False, True]
    score = score_episode(relaxed, discoveries, held_out=[l12, l10])
    assert score.matches == [0, None, None, 0, None]
    assert score.curve == [0, 1, 1, 1, 1, 1]
    assert score.recall == 0.5  # L1_2 found, L1_0 not
    assert score.precision == pytest.approx(1 / 3)  # one of the three discoveries is a held-out phase
    assert score.found_per_query == pytest.approx(1 / 5)  # one held-out phase per five queries
    none_held = score_episode(relaxed, [False] * 5, held_out=[])
    assert none_held.recall is None and none_held.precision is None and none_held.found_per_query == 0.0


def test_hits_are_judged_against_the_fixed_ground_truth_hull():
    from benchmarks.discovery.environment import QueryRecord

    # Cu and Pt at 0 eV/atom, CuPt on the hull at -0.10 eV/atom: the Cu3Pt tie line lies at -0.05
    truth = GroundTruth(
        system="Cu-Pt", oracle="emt", settings=TruthSettings(), candidates=1, wall_s=1.0, references={"Cu": 0.0, "Pt": 0.0},
        stable=[TruthPhase(formula="CuPt", counts={"Cu": 1, "Pt": 1}, energy_per_atom=-0.1, formation_energy=-0.1, e_above_hull=0.0)],
    )  # fmt: skip
    assert [e.counts for e in truth.hull()] == [{"Cu": 1}, {"Pt": 1}, {"Cu": 1, "Pt": 1}]

    def record(t: int, counts: dict, energy: float | None, novel: bool = True, unique: bool = True) -> QueryRecord:
        return QueryRecord(t=t, formula="x", counts=counts, ok=energy is not None, energy_per_atom=energy, novel=novel, unique=unique)

    records = [
        record(1, {"Cu": 3, "Pt": 1}, -0.045),  # 0.005 above the tie line: within 0.01
        record(2, {"Cu": 3, "Pt": 1}, -0.02),  # 0.03 above
        record(3, {"Cu": 1, "Pt": 1}, -0.2),  # below the ground-truth hull: on it once known, a hit
        record(4, {"Cu": 1, "Pt": 1}, -0.1, novel=False),  # on the hull, but in H0
        record(5, {"Cu": 1, "Pt": 3}, None),  # failed
        record(6, {"Cu": 1, "Pt": 1}, -0.1, unique=False),  # a repeat
    ]
    assert truth_hits(records, truth, epsilon=0.01) == [True, False, True, False, False, False]
    assert truth_hits(records, truth, epsilon=0.1) == [True, True, True, False, False, False]
    assert truth_hits([], truth, epsilon=0.1) == []
