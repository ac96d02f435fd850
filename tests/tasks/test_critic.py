"""The critic scores a trajectory on four counts and accepts only sound, consistent, reproducible answers."""

import pytest

from deployments.settings import get_settings
from skills.answer_spec import read_answer_spec
from tasks.critic import critic
from tasks.models import CriticInput, SolveRequest
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY


def judge(code, answer, **extra):
    request = SolveRequest(query=N2_QUERY, spec=read_answer_spec(N2_QUERY))
    return critic.fn(CriticInput(request=request, answer=answer, code=code, path="deep", tolerance=1e-4, **extra), get_settings())


@pytest.fixture(autouse=True)
def _ws(workspace):
    return workspace


def test_a_reproducible_answer_in_the_asked_form_is_accepted():
    verdict = judge(N2_CODE, N2_ANSWER, llm_calls=3)
    assert verdict.accepted and verdict.scores == {"soundness": 1.0, "consistency": 1.0, "efficiency": 0.75, "reproducibility": 1.0}


def test_an_answer_that_does_not_reproduce_is_rejected():
    code = "import json, random\nprint(json.dumps(round(random.random(), 4)))\n"
    verdict = judge(code, 0.1234)
    assert not verdict.accepted and verdict.scores["reproducibility"] == 0.0
    assert any(r.startswith("reproducibility 0.0: re-run gave") for r in verdict.reasons)


def test_a_negative_value_for_a_positive_quantity_is_rejected():
    verdict = judge("import json\nprint(json.dumps(-2.0))\n", -2.0)
    assert not verdict.accepted and "positive" in verdict.reasons[1]


# A script that prints the answer itself: it always reproduces, so only the agreement counts decide.
ANSWER_ONLY = f"import json\nprint(json.dumps({N2_ANSWER}))\n"


@pytest.mark.parametrize(
    ("executions", "agreeing", "disagreeing", "soundness", "accepted"),
    [
        pytest.param(4, 4, 0, 1.0, True, id="all-branches-agree"),
        pytest.param(1, 1, 0, 1.0, True, id="lone-answer-no-other-branch"),
        pytest.param(4, 2, 1, 0.667, True, id="agreeing-pair-outnumbers-one-other"),  # 2 of 3 runs
        pytest.param(3, 1, 1, 0.5, True, id="tie-one-against-one"),  # 1 of 2 runs
        pytest.param(4, 1, 2, 0.333, False, id="lone-answer-outnumbered-by-disagreeing"),  # 1 of 3 runs
        pytest.param(6, 2, 3, 0.4, False, id="pair-outnumbered-by-disagreeing"),  # 2 of 5 runs
    ],
)
def test_soundness_is_the_share_of_runs_that_agree_and_rejects_a_contradicted_answer(
    executions, agreeing, disagreeing, soundness, accepted
):
    verdict = judge(ANSWER_ONLY, N2_ANSWER, executions=executions, agreeing=agreeing, disagreeing=disagreeing)
    assert verdict.scores == {"soundness": soundness, "consistency": 1.0, "efficiency": 1.0, "reproducibility": 1.0}
    assert verdict.accepted is accepted
    assert verdict.reasons[0].startswith(f"soundness {soundness:.2f}: ")
