"""``evoskill serve --add-user`` and the commands' help."""

import io

import pytest

from deployments.settings import get_settings
from flows.interfaces.cli.main import build_parser, main
from flows.interfaces.web.users import UserBook


def test_add_user_reads_the_password_from_stdin(workspace, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("a long password\n"))
    assert main(["serve", "--add-user", "ada"]) == 0
    book = UserBook(get_settings().workspace.resolve() / "web-users.json")
    assert book.names() == ["ada"] and book.verify("ada", "a long password") and not book.verify("ada", "a long passwor")
    assert (book.path.stat().st_mode & 0o777) == 0o600

    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert main(["serve", "--add-user", "bob"]) == 2
    assert "at least 8 characters" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("a long password\n"))
    assert main(["serve", "--add-user", "no spaces please"]) == 2


@pytest.mark.parametrize("command, words", [("serve", ["--add-user", "EVOSKILL_WEB_LOGIN"]), ("mcp", ["--transport", "search_memory"])])
def test_help_explains(command, words, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    text = capsys.readouterr().out
    assert all(word in text for word in words)


@pytest.fixture
def started(workspace, monkeypatch):
    """``evoskill serve`` up to uvicorn: the apps it would serve, and where (no Prefect server, no listening)."""
    from contextlib import contextmanager

    calls: list[tuple] = []

    @contextmanager
    def no_prefect(settings):
        yield "ephemeral"

    def run(app, host, port, **kwargs):
        calls.append((host, port))
        app.state.web.jobs.close()

    monkeypatch.setattr("deployments.prefect_server.prefect_runtime", no_prefect)
    monkeypatch.setattr("uvicorn.run", run)
    return calls


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.org"])
def test_serve_beyond_loopback_without_login_refuses_to_start(started, monkeypatch, capsys, host):
    assert main(["serve", "--host", host]) == 2
    err = capsys.readouterr().err
    assert "EVOSKILL_WEB_LOGIN=true" in err and "EVOSKILL_WEB_OPEN_WITHOUT_LOGIN" in err and started == []

    monkeypatch.setenv("EVOSKILL_WEB_OPEN_WITHOUT_LOGIN", "true")  # the explicit override: starts, and says so loudly
    assert main(["serve", "--host", host]) == 0 and started == [(host, 8501)]
    err = capsys.readouterr().err
    assert "EXPOSED WITHOUT LOGIN" in err and "EVOSKILL_USER=local" in err and "EVOSKILL_WEB_ALLOWED_HOSTS" in err


def test_serve_beyond_loopback_with_login_starts(started, monkeypatch, capsys):
    monkeypatch.setenv("EVOSKILL_WEB_LOGIN", "true")
    monkeypatch.setenv("EVOSKILL_WEB_ALLOWED_HOSTS", '["chat.example.org"]')
    assert main(["serve", "--host", "0.0.0.0"]) == 0 and started == [("0.0.0.0", 8501)]
    err = capsys.readouterr().err
    assert "EXPOSED" not in err and "EVOSKILL_WEB_SECURE_COOKIE=true" in err
    assert main(["serve"]) == 0 and started[-1] == ("127.0.0.1", 8501)
    assert "note:" not in capsys.readouterr().err
