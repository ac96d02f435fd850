"""The debug strategies: each declared once in the registry, and the names the settings give checked before a solve starts."""

import pytest
from pydantic import ValidationError

from deployments.llm.client import make_client
from deployments.settings import DEFAULT_STRATEGIES, get_settings
from flows.deep_solve import deep_solve
from flows.plan_solve import plan_solve
from flows.solve import solve
from skills.answer_spec import read_answer_spec
from tasks.debug_strategies import STRATEGIES, check_strategies
from tasks.models import SolveRequest
from tests.codes import N2_QUERY

KNOWN = ["diagnostic", "introspection", "knowledge_graph", "local_package", "research"]


def test_each_strategy_is_declared_once_with_its_traits():
    assert list(STRATEGIES) == KNOWN
    assert all(name == s.name and s.goal and callable(s.tool_plan) for name, s in STRATEGIES.items())
    assert [n for n, s in STRATEGIES.items() if s.self_reflection] == ["introspection", "knowledge_graph", "local_package"]
    assert [n for n, s in STRATEGIES.items() if not s.shows_failure] == ["research"]
    assert set(DEFAULT_STRATEGIES) <= set(STRATEGIES)


def test_unknown_strategies_are_named_with_the_choices(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_DEBUG_STRATEGIES", '["guessing", "diagnostic"]')
    settings = get_settings()  # the settings hold names; the registry checks them
    with pytest.raises(ValidationError) as caught:
        check_strategies(settings)
    (error,) = caught.value.errors()
    assert error["loc"] == ("debug_strategies",)
    assert error["msg"] == f"Value error, unknown debug strategies ['guessing']; choose from {KNOWN}"
    assert check_strategies(get_settings(debug_strategies=["research"])).debug_strategies == ["research"]


def test_no_strategy_at_all_is_refused_by_the_settings(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_DEBUG_STRATEGIES", "[]")
    with pytest.raises(ValidationError, match="at least one debug strategy is needed"):
        get_settings()


def test_solves_with_an_unknown_strategy_fail_before_any_work(scripted, workspace, monkeypatch):
    scripted([])  # no replies: a model call would fail differently
    monkeypatch.setenv("EVOSKILL_DEBUG_STRATEGIES", '["guessing"]')
    with pytest.raises(ValidationError, match=r"unknown debug strategies \['guessing'\]"):
        solve(N2_QUERY)
    assert not (workspace / "trajectories").exists()
    settings = get_settings()
    with pytest.raises(ValidationError, match="unknown debug strategies"):
        plan_solve(N2_QUERY, settings)
    llm = make_client(settings)
    request = SolveRequest(query=N2_QUERY, spec=read_answer_spec(N2_QUERY), run_name="n2")
    with pytest.raises(ValidationError, match="unknown debug strategies"):
        deep_solve(request, llm, settings)
    assert llm.calls == []
