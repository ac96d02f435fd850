"""The chat in headless Chromium with the scripted backend: page load, and question-to-answer latency.

- page load: a stored session of 20 answered turns (code, output, stage timeline each), opened in a new page;
  the navigation's ``loadEventEnd`` from the browser's Performance API.
- answer latency: from the click on "Ask" until the answer is on the page, for a question the deep path answers
  (one scripted research reply; the script prints a number) and one a stored skill answers (one scripted bind
  reply). It includes the Prefect flow run, the sandbox run, storing the turn and the page's polling (0.7 s).
  The process's first question is timed apart: it also loads what later questions reuse.

Run with ``.venv/bin/python -m pytest tests/performance/test_web_latency.py --benchmark-enable -s``; under ``CI=true`` one
round each. The figures go to ``extra_info`` and are printed.
"""

from __future__ import annotations

import os
import statistics
import time

import pytest
from playwright.sync_api import expect

from deployments.settings import get_settings
from flows.session import Conversation
from skills.documents import Skill, StageRecord, TestCase
from skills.store import open_store
from tasks.models import SolveResult
from tests.codes import N2_CODE

ROUNDS = 1 if os.environ.get("CI") else 5
SQUARE = "def run(x: float = 2.0) -> float:\n    return x * x\n"
QUESTIONS = {
    "deep": ("What is 6 times 7? Return an integer.", [{"stage": "research", "content": {"code": "import json\nprint(json.dumps(6 * 7))\n"}}], "42"),
    "skill": ("Square the number x=3.5. Return a float.", [], "12.25"),
}


def test_page_load(benchmark, live_server, browser, web_app):
    conversation = Conversation.open(web_app.state.web.store, "long-session")
    stages = [StageRecord(name=name, wall_s=0.5, ok=True) for name in ("recall", "research", "code-agent", "output-processor")]
    for turn in range(20):
        conversation.add(f"question {turn}", SolveResult(success=True, path="deep", formatted=f"{turn} eV", code=N2_CODE, output="9.9372\n", stages=stages))
    page = browser.new_page()
    page.goto(f"{live_server}/chat")  # first contact (static files cached after it)
    loads: list[float] = []

    def load() -> None:
        fresh = browser.new_page()
        fresh.goto(f"{live_server}/chat/long-session")
        expect(fresh.locator(".turn")).to_have_count(20)
        loads.append(fresh.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
        fresh.close()

    benchmark.pedantic(load, rounds=ROUNDS, iterations=1)
    benchmark.extra_info.update(median_load_ms=round(statistics.median(loads), 1), turns=20)
    print(f"\npage load of a 20-turn session: median {statistics.median(loads):.1f} ms over {len(loads)}")


@pytest.mark.parametrize("path", ["deep", "skill"])
def test_answer_latency(benchmark, scripted, live_server, browser, path):
    query, replies, shown = QUESTIONS[path]
    scripted([{"stage": "triage", "content": {"conflict": "", "question": ""}}, *replies])
    if path == "skill":
        open_store(get_settings()).put_skill(Skill(name="square", description="Square of a number x.", code=SQUARE, output_type="float",
                                                   parameters={"type": "object", "properties": {"x": {"type": "number", "default": 2.0}}},
                                                   test_case=TestCase(params={"x": 2.0}, expected=4.0)))  # fmt: skip
    page = browser.new_page()
    walls: list[float] = []

    def ask() -> None:
        page.goto(f"{live_server}/chat")
        page.fill("textarea[name=query]", query)
        started = time.perf_counter()
        page.click("form.ask button")
        expect(page.locator(".bubble.ok .answer")).to_have_text(shown, timeout=120_000)
        walls.append(time.perf_counter() - started)

    ask()  # the process's first question loads what later ones reuse (the offline search index, imports)
    first = walls.pop()
    benchmark.pedantic(ask, rounds=ROUNDS, iterations=1)
    assert page.locator(".badge").first.inner_text() == path
    benchmark.extra_info.update(median_answer_s=round(statistics.median(walls), 3), first_answer_s=round(first, 3), path=path)
    print(f"\n{path} path, question to answer on the page: first {first:.2f} s, then median {statistics.median(walls):.2f} s "
          f"over {len(walls)} ({', '.join(f'{w:.2f}' for w in walls)})")
