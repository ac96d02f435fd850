"""Discovery metrics against curves computed by hand."""

import math

import pytest

from benchmarks.discovery.metrics import (
    acceleration_factor,
    audc,
    enhancement_factor,
    first_reach,
    mean_composition_distance,
    mean_sem,
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
    assert acceleration_factor(baseline, policy, k=1) == pytest.approx(3.0)
    assert acceleration_factor(baseline, policy, k=2) == pytest.approx(2.0)
    assert acceleration_factor(policy, baseline, k=1) == pytest.approx(1 / 3)
    assert acceleration_factor([0, 0, 0, 0, 0], policy, k=1) == 4.0  # baseline finds nothing → B
    assert acceleration_factor(baseline, [0, 0, 0, 0, 0], k=1) is None  # policy finds nothing


def test_enhancement_factor():
    assert enhancement_factor([0, 1, 1, 2, 2], [0, 1, 2, 3, 3]) == pytest.approx(1.5)
    assert enhancement_factor([0, 1, 1, 2, 2], [0, 1, 2, 3, 3], t=1) == pytest.approx(1.0)
    assert enhancement_factor([0, 0, 0], [0, 1, 2]) is None


def test_diversity_and_mean_sem():
    # pairs: (1,0)-(0,1): 2; (1,0)-(.5,.5): 1; (0,1)-(.5,.5): 1 → mean 4/3
    assert mean_composition_distance([(1, 0), (0, 1), (0.5, 0.5)]) == pytest.approx(4 / 3)
    assert mean_composition_distance([(1, 0)]) == 0.0
    mean, sem = mean_sem([1.0, 2.0, 3.0])
    assert mean == 2.0 and sem == pytest.approx(1 / math.sqrt(3))
    assert mean_sem([5.0]) == (5.0, 0.0)
