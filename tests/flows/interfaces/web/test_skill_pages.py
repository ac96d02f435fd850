"""Skill runs from the skills page take their turn with the chat's questions (``deployments/admission.py``): a burst of
one user's runs never has more running than the user's bound, a run beyond the queue's limit is told busy (429), and
while the burst waits the server answers other pages and another user's run. A run outside what the skill was verified on
is refused with the reason, before it takes a turn."""

from __future__ import annotations

import html
import json
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import httpx

from deployments.settings import get_settings
from flows.interfaces.web import skill_pages
from flows.interfaces.web.app import create_app
from flows.run_skill import SkillOutput
from skills.store import open_store
from tests.codes import add_two_skill
from tests.starter import learn_starter, rocksalt_density
from tests.starter import rocksalt as rocksalt_crystal

BOB = 100  # bob runs with a = 100, ada with a = 0 … 5: a run's ``a`` tells whose it is


class GatedRuns:
    """Stands in for the ``run-skill`` flow: counts each user's runs under way at once (and the most ever), and
    finishes a run (by its ``a``) only when the test lets it."""

    def __init__(self) -> None:
        self.running: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.started: list[int] = []
        self.gates: dict[int, threading.Event] = {}
        self.opened = False
        self.lock = threading.Lock()

    def __call__(self, skill_ref: str, params: dict[str, Any], executor: str | None = None) -> SkillOutput:
        user = "bob" if params["a"] >= BOB else "ada"
        with self.lock:
            self.running[user] += 1
            self.peak[user] = max(self.peak[user], self.running[user])
            self.started.append(params["a"])
            gate = self.gates.setdefault(params["a"], threading.Event())
            if self.opened:
                gate.set()
        try:
            gate.wait(60)
        finally:
            with self.lock:
                self.running[user] -= 1
        return SkillOutput(skill_id=skill_ref, params=params, success=True, answer=params["a"] + params["b"])

    def finish(self, key: int) -> None:
        with self.lock:
            self.gates.setdefault(key, threading.Event()).set()

    def open_all(self) -> None:
        """Let every run finish, also those yet to start."""
        with self.lock:
            self.opened = True
            for gate in self.gates.values():
                gate.set()

    def wait_started(self, count: int) -> list[int]:
        deadline = time.monotonic() + 30
        while len(self.started) < count:
            assert time.monotonic() < deadline, f"only runs {self.started} started"
            time.sleep(0.01)
        return list(self.started)


def _signed_in(url: str, name: str) -> httpx.Client:
    """A browser of ``name`` on the app at ``url``."""
    client = httpx.Client(base_url=url, headers={"Origin": url}, timeout=60)
    assert client.post("/login", data={"name": name, "password": f"{name}-password"}).status_code == 303
    return client


def test_a_burst_of_skill_runs_takes_turns_and_another_user_is_served(workspace, monkeypatch, serve_asgi):
    """ada fires 6 runs under a bound of 1 running and 4 waiting: one runs, four wait, one is told busy; bob runs meanwhile."""
    for name, value in {"MAX_CONCURRENT_SOLVES": "2", "MAX_CONCURRENT_SOLVES_PER_USER": "1", "MAX_QUEUED_PER_USER": "4"}.items():
        monkeypatch.setenv(f"EVOSKILL_{name}", value)
    settings = get_settings(web_login=True)
    skill, _ = open_store(settings).put_skill(add_two_skill())
    app = create_app(settings)
    for name in ("ada", "bob"):
        app.state.web.users.add(name, f"{name}-password")
    runs = GatedRuns()
    monkeypatch.setattr(skill_pages, "run_skill", runs)
    url = serve_asgi(app)
    ada, bob = _signed_in(url, "ada"), _signed_in(url, "bob")
    pool = ThreadPoolExecutor(7)

    def run(client: httpx.Client, a: int) -> Future[httpx.Response]:
        return pool.submit(client.post, f"/skills/{skill.id}/run", data={"a": str(a), "b": "1"})

    try:
        burst = [run(ada, n) for n in range(6)]
        runs.wait_started(1)
        time.sleep(1.0)  # ten looks at the queue: time enough for a second run of ada's to start, were it let
        assert runs.peak["ada"] == 1, f"{runs.peak['ada']} runs of ada's ran at once (her bound is 1)"

        done, _ = wait(burst, timeout=30, return_when=FIRST_COMPLETED)
        (busy,) = done
        assert busy.result().status_code == 429
        assert "busy: 4 requests of yours are waiting already (at most 4); retry when one is answered" in busy.result().text
        assert sum(f.done() for f in burst) == 1  # the other four wait for their turns

        assert ada.get("/healthz", timeout=5).status_code == 200  # the event loop is free while they wait
        bobs = run(bob, BOB)
        assert runs.wait_started(2)[1] == BOB and runs.running["ada"] == 1  # bob's turn comes before ada's next
        runs.finish(BOB)
        assert "Result: 101" in bobs.result(timeout=30).text

        runs.finish(runs.started[0])  # ada's first; then her others, one after another
        for count in range(3, 7):
            key = runs.wait_started(count)[-1]
            time.sleep(0.3)  # time enough for another of ada's to start, were it let
            assert runs.peak["ada"] == 1 and len(runs.started) == count, runs.started
            runs.finish(key)
        answered = [f.result(timeout=30) for f in burst if f is not busy]
        assert [r.status_code for r in answered] == [200] * 5 and all("Result: " in r.text for r in answered)
        assert len(set(runs.started)) == 6  # each of ada's five admitted runs ran once, and bob's
    finally:
        runs.open_all()
        pool.shutdown(wait=True)
        ada.close()
        bob.close()


def test_a_run_from_the_form_outside_what_the_skill_was_verified_on_is_refused_with_the_reason(workspace, client):
    [rocksalt] = learn_starter("pymatgen_rocksalt_density_nacl")
    for form, reason in [
        ({"crystal": json.dumps(rocksalt_crystal("Ca", "Xx")), "a": "5.0"}, "'Xx' is not an element symbol"),
        ({"crystal": json.dumps({**rocksalt_crystal("K", "Cl"), "space_group": "P4/mmm"}), "a": ""}, "space group P4/mmm is tetragonal"),
    ]:
        refused = client.post(f"/skills/{rocksalt.id}/run", data=form)
        assert refused.status_code == 400 and reason in html.unescape(refused.text) and 'id="result"' not in refused.text, form
    page = client.post(f"/skills/{rocksalt.id}/run", data={"crystal": json.dumps(rocksalt_crystal("K", "Cl")), "a": "6.29"})
    assert page.status_code == 200 and f"Result: {rocksalt_density('K', 'Cl', 6.29)} g/cm^3" in page.text
    assert open_store(get_settings()).get_skill(rocksalt.id).stats.uses == 1  # the refusals ran nothing
