"""Policies by name, and the campaigns' baselines: MADE's unfiltered random generator unless asked otherwise."""

import numpy as np
import pytest

from benchmarks.discovery.filters import default_filters
from benchmarks.discovery.generators import MadeRandomGenerator, RandomGenerator
from benchmarks.discovery.planners import RandomPlanner
from benchmarks.discovery.policy import PipelinePolicy
from benchmarks.discovery.policy_factory import BASELINES, PRESETS, make_policy, needs_llm, policy_stages


def test_made_baseline_is_made_s_random_generator_without_filters():
    policy = make_policy(BASELINES["made"].policy)
    assert isinstance(policy, PipelinePolicy) and policy.name == "made-random"
    assert isinstance(policy.planner, RandomPlanner)
    assert isinstance(policy.generator, MadeRandomGenerator) and not policy.generator.packed
    assert policy.filters == [] and policy.pool_size == 1
    assert policy.describe() == "planner random → generator made-random → no filters → the first candidate"


def test_filtered_baseline_is_the_random_preset_with_the_default_filters():
    policy = make_policy(BASELINES["filtered"].policy)
    assert isinstance(policy, PipelinePolicy) and policy.name == "random"
    assert type(policy.generator) is RandomGenerator and policy.generator.packed
    assert [f.name for f in policy.filters] == [f.name for f in default_filters()] == ["min_distance", "smact", "unique"]
    assert "filters min_distance, smact, unique" in policy.describe()


def test_baselines_are_presets_that_need_no_llm():
    assert list(BASELINES) == ["made", "filtered"]
    for baseline in BASELINES.values():
        assert baseline.policy in PRESETS and not needs_llm(baseline.policy)
    assert policy_stages("ucb:made-random:surrogate") == ("ucb", "made-random", "surrogate")  # the generator works in triples too
    with pytest.raises(ValueError, match="unknown generator 'made'"):
        policy_stages("random:made:random")


def test_the_made_baseline_proposes_without_filtering(monkeypatch):
    """Candidates reach the oracle as drawn: a structure seen before is proposed again, and cells keep their drawn
    lengths (3-15 Å), not a packed volume."""
    from benchmarks.discovery.environment import DiscoveryEnvironment
    from benchmarks.discovery.filters import first_rejection
    from benchmarks.discovery.generators import packed_volume
    from benchmarks.discovery.matching import StructureSet
    from benchmarks.discovery.oracles import make_oracle
    from benchmarks.discovery.system import ChemicalSystem

    env = DiscoveryEnvironment(ChemicalSystem.parse("Cu-Ni", max_atoms=4), make_oracle("emt"), budget=3)
    monkeypatch.setattr(type(env), "known_structures", property(lambda self: []))  # no reference relaxations needed here
    made = make_policy("made-random")
    assert isinstance(made, PipelinePolicy)
    filtered = PipelinePolicy(made.planner, made.generator, made.selector, default_filters(), pool_size=1, name="made-random, filtered")
    first = made.propose(env, np.random.default_rng(0))
    assert first.properties["origin"].startswith("made-random for ")
    env.seen.add(first)
    again = made.propose(env, np.random.default_rng(0))
    assert again == first  # seen already, proposed anyway
    assert filtered.propose(env, np.random.default_rng(0)) != first and filtered.rejected == {"unique": 1}  # what a filter would do
    proposals = [made.propose(env, np.random.default_rng(seed)) for seed in range(30)]
    assert all(3.0 <= length <= 15.0 for s in proposals for length in s.lattice.abc)
    # the filtered preset scales every cell to 0.9-1.3 × the packed volume; MADE's keeps the drawn one
    loose = [s for s in proposals if s.volume > 1.3 * packed_volume([site.specie.symbol for site in s])]
    assert loose and all(first_rejection(default_filters(), s, StructureSet()) is None for s in loose[:3])
    assert made.rejected == {}
