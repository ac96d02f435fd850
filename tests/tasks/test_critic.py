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


def test_a_lone_answer_among_disagreeing_branches_is_less_sound():
    verdict = judge(N2_CODE, N2_ANSWER, executions=4, agreeing=1, disagreeing=2)
    assert verdict.scores["soundness"] == 0.5 and verdict.accepted
