"""The web app's files are named once (flows/interfaces/web/files.py), and every name is a file that ships."""

from flows.interfaces.web import files


def test_every_named_template_and_static_file_exists():
    pages = [files.CHAT_PAGE, files.LOGIN_PAGE, files.SKILLS_PAGE, files.SKILL_PAGE]
    assert all((files.TEMPLATES / page).is_file() for page in pages)
    linked = [line for t in files.TEMPLATES.glob("*.html") for line in t.read_text().splitlines() if "{{ static_url }}/" in line]
    names = {line.split("{{ static_url }}/")[1].split('"')[0] for line in linked}
    assert names == {"style.css", "chat.js"} and all((files.STATIC / name).is_file() for name in names)
