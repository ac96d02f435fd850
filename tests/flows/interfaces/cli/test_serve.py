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
