import pytest

from benchmarks.metrics import difficulty_of, pass_at_k, summarise
from skills.documents import BenchmarkRecord


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (3, 0, 1, 0.0),
        (3, 3, 1, 1.0),
        (3, 1, 1, 1 / 3),
        (3, 1, 2, 2 / 3),  # 1 - C(2,2)/C(3,2) = 1 - 1/3
        (3, 1, 3, 1.0),
        (3, 2, 1, 2 / 3),
        (3, 2, 2, 1.0),
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (10, 1, 5, 0.5),  # 1 - C(9,5)/C(10,5) = 1 - 126/252
    ],
)
def test_pass_at_k_against_hand_computed_cases(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1)])
def test_pass_at_k_rejects_impossible_counts(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def record(system, task, rep, passed, level=1, category="simulation", wall=1.0, calls=0, tokens=0):
    return BenchmarkRecord(
        run_id="r", system=system, rep=rep, level=level, task_id=task, category=category,
        passed=passed, wall_s=wall, llm_calls=calls, tokens=tokens,
    )  # fmt: skip


def test_summary_of_two_tasks_three_repetitions():
    records = [record("deep", "a", r, r == 1, calls=3, tokens=100) for r in (1, 2, 3)]
    records += [record("deep", "b", r, True, category="data_analysis", wall=3.0, calls=1, tokens=40) for r in (1, 2, 3)]
    records += [record("reference", t, 1, True) for t in ("a", "b")]
    summary = summarise(records, ["deep", "reference", "native"])
    deep = summary["deep"]
    assert (deep.passed, deep.total, deep.success_rate) == (4, 6, pytest.approx(0.6667, abs=1e-4))
    # per task: a passed 1 of 3, b 3 of 3
    assert deep.pass_at_k == {"1": pytest.approx((1 / 3 + 1) / 2, abs=1e-4), "2": pytest.approx((2 / 3 + 1) / 2, abs=1e-4), "3": 1.0}
    assert deep.mean_wall_s == 2.0 and deep.mean_llm_calls == 2.0 and deep.mean_tokens == 70.0
    assert deep.by_category == {"data_analysis": 1.0, "simulation": pytest.approx(1 / 3, abs=1e-4)}
    assert deep.by_level == {"1": pytest.approx(0.6667, abs=1e-4)}
    # P values ignore the reference: a = 1/3 -> medium, b = 1 -> easy
    assert deep.by_difficulty == {"easy": 1.0, "medium": pytest.approx(1 / 3, abs=1e-4)}
    assert summary["reference"].pass_at_k == {"1": 1.0}
    assert summary["native"].total == 0 and summary["native"].pass_at_k == {}


def test_difficulty_buckets_from_p_values():
    records = [record("x", "hard", 1, False), record("y", "hard", 1, False), record("x", "easy", 1, True), record("y", "easy", 1, True)]
    records += [record("x", "mid", 1, True), record("y", "mid", 1, False)]
    assert difficulty_of(records) == {("hard", 1): "hard", ("easy", 1): "easy", ("mid", 1): "medium"}
