"""The web app's files, named once: its template and static folders, the address the static files are served at,
and each page's template.

The templates link the static files under ``{{ static_url }}``; ``pyproject.toml`` ships both folders as package data.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TEMPLATES", "STATIC", "STATIC_URL", "CHAT_PAGE", "LOGIN_PAGE", "SKILLS_PAGE", "SKILL_PAGE"]

_HERE = Path(__file__).parent
TEMPLATES = _HERE / "templates"
STATIC = _HERE / "static"
STATIC_URL = "/static"

CHAT_PAGE = "chat.html"
LOGIN_PAGE = "login.html"
SKILLS_PAGE = "skills.html"
SKILL_PAGE = "skill.html"
