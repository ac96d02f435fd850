"""Generated code plants links and fakes in its run folder to have the chat or a Prefect artifact hand out a secret:
the cookie-signing key, the machine's passwords, another user's plot (``tests/output_attacks.py``). Only its real
plot is served; the secrets' bytes are in no response and no artifact (inline images decoded).
"""

from __future__ import annotations

from deployments.settings import get_settings
from flows.session import Conversation
from skills.documents import Session
from tasks.models import SolveResult
from tests.flows.interfaces.web.conftest import wait_for_answer
from tests.output_attacks import CLEAR, PNG, QUESTION, artifacts, assert_absent, plant


def test_the_chat_serves_only_the_plot_never_what_links_point_at(scripted, client, web_app, monkeypatch):
    code, needles = plant(monkeypatch)
    scripted([CLEAR, {"stage": "research", "content": {"code": code}}])
    asked = client.post("/chat", data={"query": QUESTION}, follow_redirects=False)
    sid = asked.headers["location"].rsplit("/", 1)[1]
    wait_for_answer(web_app, sid)
    (turn,) = web_app.state.web.store.get(Session, sid).turns
    assert turn.success and len(turn.images) == 1, turn.images
    served = [client.get(f"/chat/{sid}/turns/0/images/{n}") for n in range(13)]
    assert served[0].status_code == 200 and served[0].headers["content-type"] == "image/png" and served[0].content.startswith(PNG)
    assert all(r.status_code == 404 for r in served[1:])
    assert_absent(needles, "the chat", b"".join(r.content for r in served) + client.get(f"/chat/{sid}").content)
    kept = artifacts()
    assert served[0].content in kept  # the plot is inlined in the solve's artifact, and nothing else is
    assert_absent(needles, "a Prefect artifact", kept)


def test_an_image_path_out_of_the_kept_outputs_is_never_served(client, web_app, monkeypatch):
    """A turn whose image paths lead to the key (``..``, a plain path, a link among the kept copies) serves nothing."""
    _, needles = plant(monkeypatch)
    settings = get_settings()
    outputs, key = settings.outputs_root(), settings.workspace.resolve() / "web-secret"
    (outputs / "swapped").mkdir(parents=True)
    (outputs / "swapped" / "00.png").symlink_to(key)
    paths = [str(key), f"{outputs}/bobs-run-0a1b2c3d/../../web-secret", f"{outputs}/../web-secret", str(outputs / "swapped" / "00.png"),
             "/etc/shadow", "web-secret"]  # fmt: skip
    Conversation.open(web_app.state.web.store, "forged", user="local").add("q", SolveResult(success=True, formatted="a", images=paths))
    served = [client.get(f"/chat/forged/turns/0/images/{n}") for n in range(len(paths))]
    assert [r.status_code for r in served] == [404] * len(paths)
    assert_absent(needles, "the chat", b"".join(r.content for r in served))
