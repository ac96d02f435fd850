"""Campaign summaries against hand-made curves: the baseline, AF/EF edge cases in the table, the conventions."""

import pytest

from benchmarks.discovery.campaign import CampaignSpec, conventions, diagnosis, markdown_table, summarise
from benchmarks.discovery.episode import EpisodeResult, EpisodeSpec
from benchmarks.discovery.system import ChemicalSystem

SYSTEM = ChemicalSystem.parse("Cu-Ni-Pt", max_atoms=8)


def _episode(policy: str, curve: list[int], seed: int = 0) -> EpisodeResult:
    spec = EpisodeSpec(system=SYSTEM, policy=policy, budget=len(curve) - 1, seed=seed)
    return EpisodeResult(spec=spec, records=[], curve=curve, final_e_above_hull=[], references={})


def test_the_default_baseline_is_made_s_and_runs_first():
    spec = CampaignSpec(system=SYSTEM, policies=["diversity", "random"])
    assert spec.baseline == "made" and spec.baseline_policy == "made-random"
    assert spec.all_policies == ["made-random", "diversity", "random"]  # the filtered preset is then just another policy
    filtered = spec.model_copy(update={"baseline": "filtered"})
    assert filtered.baseline_policy == "random" and filtered.all_policies == ["random", "diversity"]
    assert spec.campaign_id() != filtered.campaign_id()  # stored episodes of one are never reused for the other
    assert [s.policy for _, s in spec.episode_specs()] == ["made-random"] * 5 + ["diversity"] * 5 + ["random"] * 5
    with pytest.raises(ValueError):
        CampaignSpec(system=SYSTEM, policies=["diversity"], baseline="unfiltered")


def test_summary_flags_lower_bounds_and_caps():
    results = [
        _episode("made-random", [0, 0, 0, 0, 0], 0), _episode("made-random", [0, 0, 0, 0, 0], 1),
        _episode("ucb", [0, 0, 1, 1, 2], 0), _episode("ucb", [0, 0, 1, 2, 2], 1),
        _episode("diversity", [0, 0, 0, 0, 0], 0), _episode("diversity", [0, 0, 0, 0, 0], 1),
    ]  # fmt: skip
    by_policy = {m.policy: m for m in summarise(results)}
    assert list(by_policy) == ["made-random", "ucb", "diversity"]
    base, ucb, diversity = by_policy.values()
    assert base.baseline and not ucb.baseline
    assert base.af.mean is None and base.ef is None  # the baseline found nothing: against itself AF and EF are undefined
    # ucb reaches 1 at t = 2 in both episodes, the baseline never within B = 4: AF ≥ 4/2 each, a lower bound; EF at the cap.
    assert (ucb.af.values, ucb.af.lower_bound, ucb.ef, ucb.ef_capped) == ([2.0, 2.0], True, 100.0, True)
    assert (diversity.af.values, diversity.ef) == ([None, None], None)
    table = markdown_table(list(by_policy.values()))
    assert "| made-random (baseline) | — (0/2) | — |" in table
    assert "| ucb | ≥ 2.00 ± 0.00 (2/2) | ≥ 100.00 |" in table
    assert "| diversity | — (0/2) | — |" in table


def test_summary_with_a_baseline_that_finds_something():
    results = [_episode("random", [0, 0, 0, 1, 2]), _episode("ucb", [0, 1, 2, 3, 4]), _episode("made-random", [0, 0, 0, 0, 1])]
    base, *others = summarise(results, baseline_policy="random")
    assert base.policy == "random" and base.baseline and (base.af.mean, base.ef, base.af.lower_bound, base.ef_capped) == (1.0, 1.0, False, False)
    ucb, made = others
    assert (ucb.af.mean, ucb.ef, ucb.af.lower_bound) == (3.0, 2.0, False)
    assert (made.af.mean, made.ef) == (pytest.approx(3 / 4), 0.5)
    assert "| random (baseline) | 1.00 ± 0.00 (1/1) | 1.00 |" in markdown_table([base, *others])
    with pytest.raises(ValueError, match="no episodes of its baseline 'made-random'"):
        summarise([_episode("ucb", [0, 1])])


def test_af_pairs_episodes_by_seed_and_shows_the_spread():
    # episode i of a policy against episode i of the baseline: t_baseline(1) = 4, 2, never (B = 4)
    results = [
        _episode("made-random", [0, 0, 0, 0, 1], 0), _episode("made-random", [0, 0, 1, 1, 1], 1), _episode("made-random", [0, 0, 0, 0, 0], 2),
        _episode("ucb", [0, 0, 0, 0, 0], 2), _episode("ucb", [0, 1, 1, 1, 1], 0), _episode("ucb", [0, 0, 1, 1, 1], 1),
    ]  # fmt: skip
    _, ucb = summarise(results)
    assert ucb.af.values == [4.0, 1.0, None]  # seeds 0, 1, 2 (stored order does not matter); ucb never reaches 1 in seed 2
    assert (ucb.af.mean, ucb.af.sem, ucb.af.defined, ucb.af.episodes, ucb.af.lower_bound) == (2.5, pytest.approx(1.5), 2, 3, False)
    assert str(ucb.af) == "2.50 ± 1.50 (2/3)"
    assert ucb.first_discovery == 1.5


def test_diagnosis_says_why_af_cannot_rise_and_what_the_threshold_admits():
    from benchmarks.discovery.groundtruth import GroundTruth, TruthPhase, TruthSettings

    results = [_episode("made-random", [0, 1, 2, 3, 4], 0), _episode("ucb", [0, 1, 2, 3, 3], 0)]
    metrics = summarise(results)
    spec = CampaignSpec(system=SYSTEM, policies=["ucb"], budget=4)
    text = diagnosis(spec, metrics, None)
    assert text.startswith("## Why the factors read as they do")
    assert "The baseline counts 100% of its 4 queries as discoveries" in text and "first discovery comes at query 1.0" in text
    assert "AF(1) ≥ 2 on D(t): none." in text and "Base rate" not in text
    phase = {"formula": "CuPt", "counts": {"Cu": 1, "Pt": 1}, "energy_per_atom": -1.0, "formation_energy": -0.1}
    entries = [TruthPhase(**phase, e_above_hull=e) for e in (0.0, 0.005, 0.02, 0.04, 0.08, 0.3)]
    truth = GroundTruth(system="Cu-Ni-Pt", oracle="emt", settings=TruthSettings(), candidates=6, wall_s=1.0, references={}, stable=[], entries=entries)
    text = diagnosis(spec, metrics, truth)
    # 5 of 6 candidates within 0.1 eV/atom of their own hull; 2 within 0.01; 1 within the tolerance 0.001
    assert "ε = 0.1 eV/atom admits 83% of the 6 enumerated candidates" in text
    assert "0.1 → 83%, 0.05 → 67%, 0.025 → 50%, 0.01 → 33%, 0.001 → 17%" in text
    assert "(emt formation energies -0.100 to -0.100 eV/atom" in text


def test_conventions_name_the_baseline_pipeline_and_the_edge_cases():
    text = conventions(CampaignSpec(system=SYSTEM, policies=["ucb"]))
    assert text.startswith("## Conventions")
    assert "**Baseline** `made` (policy `made-random`): MADE's random baseline" in text
    assert "planner random → generator made-random → no filters → the first candidate" in text
    assert "cells of 2–8 atoms of Cu-Ni-Pt" in text
    assert "≥ B/t_policy(1)" in text and "a lower bound" in text
    assert "capped at 100 as in MADE" in text
    filtered = conventions(CampaignSpec(system=ChemicalSystem.parse("Cu-Ni", max_atoms=4), policies=["ucb"], baseline="filtered"))
    assert "**Baseline** `filtered` (policy `random`)" in filtered and "not MADE's comparator" in filtered
    assert "filters min_distance, smact, unique → selector random of up to 4 candidates" in filtered
    assert "cells of 2–4 atoms of Cu-Ni" in filtered
    assert text.count("AF(1)") == 1 and text.count("EF(B)") == 1  # each convention named once
