"""Discovery metrics against curves computed by hand."""

import math

import pytest

from benchmarks.discovery.metrics import (
    EF_CAP,
    Factor,
    acceleration_factor,
    audc,
    enhancement_factor,
    first_reach,
    mean_composition_distance,
    mean_sem,
    spread,
)


def test_audc_of_hand_made_curves():
    assert audc([0, 1, 2, 3, 4]) == pytest.approx(1.0)  # every query a find: 2/16 * 8
    assert audc([0, 0, 0, 0, 0]) == 0.0
    # trapezoids 0.5 + 1 + 1 + 1.5 = 4 → 2 * 4 / 16
    assert audc([0, 1, 1, 1, 2]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        audc([0])


def test_acceleration_factor_and_its_edge_cases():
    baseline, policy = [0, 0, 0, 1, 2], [0, 1, 2, 2, 2]
    assert first_reach(baseline, 1) == 3 and first_reach(policy, 1) == 1
    assert acceleration_factor(baseline, policy, k=1) == Factor(value=3.0)
    assert acceleration_factor(baseline, policy, k=2) == Factor(value=2.0)
    assert acceleration_factor(policy, baseline, k=1).value == pytest.approx(1 / 3)
    assert acceleration_factor(policy, policy, k=1) == Factor(value=1.0)  # a curve against itself
    assert acceleration_factor(baseline, [0, 0, 0, 0, 0], k=1) is None  # policy never reaches k: nothing to compare
    assert acceleration_factor([0, 0, 0, 0, 0], [0, 0, 0, 0, 0], k=1) is None


def test_acceleration_factor_is_a_flagged_lower_bound_when_the_baseline_never_reaches_k():
    never = [0] * 11  # B = 10, nothing found
    # The baseline needs more than B = 10 queries: AF > 10 / t_policy, whatever t_policy is (not always B).
    assert acceleration_factor(never, [0, 1] + [1] * 9, k=1) == Factor(value=10.0, lower_bound=True)
    assert acceleration_factor(never, [0] * 9 + [1, 1], k=1) == Factor(value=10 / 9, lower_bound=True)
    assert str(acceleration_factor(never, [0] * 9 + [1, 1], k=1)) == "≥ 1.11"
    assert acceleration_factor([0, 0, 0, 1, 1], [0, 1, 2, 2, 2], k=2) == Factor(value=2.0, lower_bound=True)  # the baseline's D(B) < k
    assert acceleration_factor([0, 0, 0], [0, 0, 0, 0, 1], k=1) == Factor(value=0.5, lower_bound=True)  # B is the baseline's budget


@pytest.mark.parametrize("k", [0, -1, 0.0])
def test_acceleration_factor_refuses_k_that_is_not_positive(k):
    with pytest.raises(ValueError, match="k > 0"):
        acceleration_factor([0, 1, 2], [0, 1, 2], k=k)


def test_acceleration_factor_refuses_curves_that_are_not_discovery_curves():
    with pytest.raises(ValueError, match="baseline curve must start at D\\(0\\) = 0"):
        acceleration_factor([1, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match="policy curve needs D\\(0\\) and at least one query"):
        acceleration_factor([0, 1, 2], [0])


def test_enhancement_factor():
    assert enhancement_factor([0, 1, 1, 2, 2], [0, 1, 2, 3, 3]) == Factor(value=1.5)
    assert enhancement_factor([0, 1, 1, 2, 2], [0, 1, 2, 3, 3], t=1) == Factor(value=1.0)
    assert enhancement_factor([0, 1, 2], [0, 0, 0]) == Factor(value=0.0)  # the policy found nothing: 0, exact
    assert enhancement_factor([0, 0, 0], [0, 0, 0]) is None  # 0/0


def test_enhancement_factor_is_capped_at_made_s_100():
    assert EF_CAP == 100.0
    # The baseline found nothing, the policy did: the ratio is unbounded, so EF is the cap, flagged.
    assert enhancement_factor([0, 0, 0], [0, 1, 2]) == Factor(value=100.0, lower_bound=True)
    assert str(enhancement_factor([0, 0, 0], [0, 1, 2])) == "≥ 100.00"
    # A ratio above the cap is cut to it; at the cap or below it is exact.
    assert enhancement_factor([0, 1], [0, 300], cap=100) == Factor(value=100.0, lower_bound=True)
    assert enhancement_factor([0, 2], [0, 200]) == Factor(value=100.0)
    assert enhancement_factor([0, 1, 1], [0, 2, 3], cap=2.5) == Factor(value=2.5, lower_bound=True)


def test_enhancement_factor_refuses_a_baseline_with_a_shorter_budget():
    with pytest.raises(ValueError, match="the baseline's curve covers only 2 queries"):
        enhancement_factor([0, 1, 1], [0, 1, 2, 3, 4])  # default t = the policy's B = 4
    assert enhancement_factor([0, 1, 1], [0, 1, 2, 3, 4], t=2) == Factor(value=2.0)  # within both curves: fine
    with pytest.raises(ValueError, match="0 ≤ t ≤ 2"):
        enhancement_factor([0, 1, 1], [0, 1, 2], t=5)
    with pytest.raises(ValueError, match="0 ≤ t ≤ 2"):
        enhancement_factor([0, 1, 1], [0, 1, 2], t=-1)  # no counting from the end
    with pytest.raises(ValueError, match="cap must be positive"):
        enhancement_factor([0, 1, 1], [0, 1, 2], cap=0)


def test_diversity_and_mean_sem():
    # pairs: (1,0)-(0,1): 2; (1,0)-(.5,.5): 1; (0,1)-(.5,.5): 1 → mean 4/3
    assert mean_composition_distance([(1, 0), (0, 1), (0.5, 0.5)]) == pytest.approx(4 / 3)
    assert mean_composition_distance([(1, 0)]) == 0.0
    mean, sem = mean_sem([1.0, 2.0, 3.0])
    assert mean == 2.0 and sem == pytest.approx(1 / math.sqrt(3))
    assert mean_sem([5.0]) == (5.0, 0.0)


def test_spread_of_paired_factors_counts_what_it_leaves_out():
    result = spread([Factor(value=2.0), Factor(value=6.0), None])
    assert (result.mean, result.defined, result.episodes, result.lower_bound) == (4.0, 2, 3, False)
    assert result.sem == pytest.approx(2.0)  # sd 2√2 over √2
    assert result.values == [2.0, 6.0, None] and str(result) == "4.00 ± 2.00 (2/3)"
    bound = spread([Factor(value=5.0, lower_bound=True)])
    assert str(bound) == "≥ 5.00 ± 0.00 (1/1)"  # one lower bound makes the mean one
    empty = spread([None, None])
    assert (empty.mean, empty.sem, str(empty)) == (None, None, "— (0/2)")
    assert str(spread([])) == "— (0/0)"
