"""A flow run's value reaches its caller even where the server answers its last state with its own copy (no data).

The server does so when the client sends that state again after an answer that came too late (a busy SQLite database):
it recorded the first request and refuses the repeat as a duplicate transition. Here each final state is sent twice,
as the client's retry sends it, against the session's real Prefect server.
"""

from __future__ import annotations

from typing import Any

import pytest
from prefect import flow, task
from prefect.client.orchestration import SyncPrefectClient
from prefect.exceptions import MissingResult

from deployments.run_states import cancelled_state, failed_state, kept, outcome_of
from flows.solve import solve
from tests.codes import N2_QUERY


@pytest.fixture
def final_states_sent_twice(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every final flow-run state is sent twice with one transition id; the second answer (a refusal) is the one read."""
    original = SyncPrefectClient.request
    repeated: list[str] = []

    def request(self: SyncPrefectClient, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        response = original(self, method, path, *args, **kwargs)
        state = (kwargs.get("json") or {}).get("state") or {}
        if path == "/flow_runs/{id}/set_state" and state.get("type") in ("COMPLETED", "FAILED", "CANCELLED"):
            repeated.append(state["type"])
            response = original(self, method, path, *args, **kwargs)
        return response

    monkeypatch.setattr(SyncPrefectClient, "request", request)
    return repeated


@flow
def plain(x: int) -> int:
    return x


@flow
def keeping(x: int) -> int:
    return kept(x)


@flow
def failing(x: int) -> int:
    return failed_state(x, "no answer")  # type: ignore[return-value]


@flow
def cancelling(x: int) -> int:
    return cancelled_state(x, "cancelled by its caller")  # type: ignore[return-value]


@flow
def outer(x: int) -> int:
    return kept(outcome_of(keeping(x + 1, return_state=True)) * 10)


@task
def keeps_in_a_task(x: int) -> int:
    return kept(x)


@flow
def task_keeps_flow_does_not(x: int) -> int:
    keeps_in_a_task(x + 100)
    return x


def test_the_repeat_loses_the_data_of_a_value_not_kept(final_states_sent_twice):
    state = plain(3, return_state=True)
    assert final_states_sent_twice == ["COMPLETED"] and state.is_completed() and state.data is None
    with pytest.raises(MissingResult):
        outcome_of(state)


def test_a_kept_value_is_given_back(final_states_sent_twice):
    state = keeping(3, return_state=True)
    assert state.data is None and outcome_of(state) == 3


def test_failed_and_cancelled_runs_give_their_value_back(final_states_sent_twice):
    failed, cancelled = failing(4, return_state=True), cancelling(5, return_state=True)
    assert failed.is_failed() and outcome_of(failed) == 4
    assert cancelled.is_cancelled() and outcome_of(cancelled) == 5
    assert final_states_sent_twice == ["FAILED", "CANCELLED"]


def test_a_subflow_value_is_given_back_to_its_parent(final_states_sent_twice):
    assert outcome_of(outer(1, return_state=True)) == 20
    assert final_states_sent_twice == ["COMPLETED", "COMPLETED"]


def test_a_value_kept_in_a_task_is_not_taken_for_its_flow_runs(final_states_sent_twice):
    with pytest.raises(MissingResult):
        outcome_of(task_keeps_flow_does_not(1, return_state=True))


def test_a_value_is_given_back_once_and_the_data_wins_where_the_state_has_it():
    state = keeping(7)  # the engine's own state: the data is there
    assert state == 7
    state = keeping(8, return_state=True)
    assert outcome_of(state) == 8 and outcome_of(state) == 8  # from the data, the kept copy taken the first time


def test_a_solve_answers_through_the_repeat(scripted, final_states_sent_twice):
    negative = "import json\nprint(json.dumps(-1.5))\n"
    scripted([{"stage": "triage", "content": {"conflict": "", "question": ""}}, {"stage": "research", "content": {"code": negative}}])
    result = solve(N2_QUERY)
    assert result.success and result.answer == -1.5
    assert final_states_sent_twice == ["COMPLETED", "COMPLETED"]  # deep-solve, then solve
