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
    """Candidates reach the oracle as generated: no filter is asked, even for a structure seen before."""
    from benchmarks.discovery.environment import DiscoveryEnvironment
    from benchmarks.discovery.oracles import make_oracle
    from benchmarks.discovery.system import ChemicalSystem

    env = DiscoveryEnvironment(ChemicalSystem.parse("Cu-Ni", max_atoms=2), make_oracle("emt"), budget=3)
    monkeypatch.setattr(type(env), "known_structures", property(lambda self: []))
    policy = make_policy("made-random")
    structure = policy.propose(env, np.random.default_rng(0))
    assert len(structure) == 2 and structure.properties["origin"].startswith("made-random for ")
    assert policy.rejected == {}
