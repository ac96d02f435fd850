"""End to end in headless Chromium: ask, see answer and code, 'Satisfied', reload, resume, then find and run the skill."""

import os
import re
from pathlib import Path

from playwright.sync_api import expect

from deployments.settings import get_settings
from skills.documents import Session
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY, N2_SKILL, O2_ANSWER, O2_QUERY

CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}
DRAFT = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "Atomization energy of a molecule with ASE's EMT calculator", "code": N2_SKILL}}
ANSWER_S = 180_000  # ms: a solve runs real EMT code in the sandbox
SCREENSHOTS = os.environ.get("EVOSKILL_SCREENSHOTS")  # read before the workspace fixture clears EVOSKILL_* variables


def test_chat_feedback_resume_and_skills_page(scripted, live_server, browser, tmp_path):
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    shots = Path(SCREENSHOTS or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{live_server}/chat")
    page.fill("textarea[name=query]", N2_QUERY)
    page.click("form.ask button")
    expect(page.locator(".bubble.ok .answer")).to_have_text(f"{N2_ANSWER} eV", timeout=ANSWER_S)
    expect(page.locator("details.code pre")).to_contain_text("BFGS(n2, logfile=None)")
    session_id = re.search(r"/chat/(\w+)$", page.url).group(1)
    page.screenshot(path=str(shots / "chat.png"), full_page=True)

    page.click("button[value=satisfied]")
    expect(page.locator(".badge.satisfied")).to_be_visible(timeout=ANSWER_S)
    expect(page.locator("a.badge.skill")).to_have_text("skill atomization_energy_ase_emt-v1")

    page.reload()
    expect(page.locator(".badge.satisfied")).to_be_visible()
    page.click("a.new")  # leave the session, then resume it from the list
    expect(page.locator("h1")).to_have_text("New session")
    page.click(f"a[data-session='{session_id}']")
    expect(page.locator(".bubble.ok .answer").first).to_have_text(f"{N2_ANSWER} eV")
    page.fill("textarea[name=query]", O2_QUERY)
    page.click("form.ask button")
    expect(page.locator(".bubble.ok .answer").nth(1)).to_have_text(f"{O2_ANSWER} eV", timeout=ANSWER_S)  # answered by the skill
    expect(page.locator(".turn").nth(1).locator("a.badge.skill")).to_have_text("skill atomization_energy_ase_emt-v1")
    page.screenshot(path=str(shots / "resumed-session.png"), full_page=True)
    session = open_store(get_settings()).get(Session, session_id)
    assert [t.path for t in session.turns] == ["deep", "skill"] and session.turns[0].satisfied

    page.click("nav >> text=Skills")
    expect(page.locator(".card h2 a")).to_have_text(["atomization_energy_ase_emt-v1"])
    page.screenshot(path=str(shots / "skills.png"), full_page=True)
    page.click("text=atomization_energy_ase_emt-v1")
    page.fill("input[name=formula]", "O2")
    page.click("text=Run skill")
    expect(page.locator("#result")).to_have_text(f"Result: {O2_ANSWER} eV", timeout=ANSWER_S)
    expect(page.locator("#usage")).to_have_text("2 runs, 2 succeeded")  # the chat's skill answer and this run
    page.screenshot(path=str(shots / "skill-run.png"), full_page=True)
    assert errors == []


def test_hostile_text_never_runs_in_the_page(live_server, browser, web_app):
    from flows.session import Conversation
    from tasks.models import SolveResult

    hostile = "<script>window.pwned = 1</script><img src=x onerror='window.pwned = 2'>"
    conversation = Conversation.open(web_app.state.web.store, "hostile")
    conversation.add(hostile, SolveResult(success=True, path="deep", formatted=hostile, code=hostile, output=hostile))
    conversation.update(notes=hostile, title=hostile)
    page = browser.new_page()
    page.goto(f"{live_server}/chat/hostile")
    expect(page.locator(".bubble.user .query")).to_have_text(hostile)
    expect(page.locator(".bubble.ok .answer")).to_have_text(hostile)
    assert page.evaluate("window.pwned") is None and page.locator("img[src=x]").count() == 0


def test_a_failed_stage_keeps_the_stage_table_readable(live_server, browser, web_app):
    from tests.flows.interfaces.web.test_chat_pages import SENTENCE, answered_turn

    answered_turn(web_app.state.web.store, "failed-stage")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{live_server}/chat/failed-stage")
    row = page.locator(".timeline tr.bad").first
    expect(row.locator("td.detail summary")).to_have_text(SENTENCE)
    boxes = [cell.bounding_box() for cell in row.locator("td").all()]
    assert [round(b["width"]) >= minimum for b, minimum in zip(boxes, [120, 50, 100, 35, 300], strict=True)] == [True] * 5, boxes
    assert all(b["height"] < 80 for b in boxes), boxes  # no column collapsed to a letter a line
    row.locator("td.detail summary").click()
    expect(row.locator("td.detail pre.raw")).to_contain_text("KeyError: 'Xe2'")
    expect(page.locator(".ran-with")).to_contain_text("formula='O2' (from \"O2\")")
