"""Accounts of the web app when login is on: names, salted PBKDF2 password hashes and session epochs in one JSON file.

A login cookie carries the account's epoch; logging out and setting a new password move the epoch on, so every cookie
issued before is refused.

>>> import tempfile, pathlib
>>> book = UserBook(pathlib.Path(tempfile.mkdtemp()) / "web-users.json")
>>> book.add("ada", "correct horse")
>>> book.verify("ada", "correct horse"), book.verify("ada", "wrong"), book.verify("bob", "x")
(True, False, False)
>>> book.epoch("ada"), book.revoke("ada"), book.epoch("ada"), book.epoch("bob")
(0, None, 1, None)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployments.files import file_lock, write_atomic

__all__ = ["UserBook", "UserError", "cookie_secret"]

_NAME = re.compile(r"^[\w.-]{1,64}$")
_ITERATIONS = 200_000


class UserError(ValueError):
    """A user name or password that cannot be used."""


def _hash(password: str, salt: bytes) -> str:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, _ITERATIONS).hex()


@dataclass
class UserBook:
    path: Path

    def _read(self) -> dict[str, dict[str, Any]]:
        return json.loads(self.path.read_text()) if self.path.is_file() else {}

    def _write(self, users: dict[str, dict[str, Any]]) -> None:
        write_atomic(self.path, json.dumps(users, indent=1))
        self.path.chmod(0o600)

    def names(self) -> list[str]:
        return sorted(self._read())

    def add(self, name: str, password: str) -> None:
        """Add a user, or set a known user's password (which logs out every session the user has)."""
        if not _NAME.match(name):
            raise UserError(f"user name {name!r}: use 1-64 letters, digits, '.', '_' or '-'")
        if len(password) < 8:
            raise UserError("the password needs at least 8 characters")
        salt = os.urandom(16)
        with file_lock(self.path.with_suffix(".lock")):
            users = self._read()
            epoch = users[name].get("epoch", 0) + 1 if name in users else 0
            users[name] = {"salt": salt.hex(), "hash": _hash(password, salt), "epoch": epoch}
            self._write(users)

    def epoch(self, name: str) -> int | None:
        """The user's session epoch: a cookie that carries another one is refused (None: no such user)."""
        entry = self._read().get(name)
        return None if entry is None else int(entry.get("epoch", 0))

    def revoke(self, name: str) -> None:
        """End every session of the user: the cookies issued so far carry an old epoch."""
        with file_lock(self.path.with_suffix(".lock")):
            users = self._read()
            if name in users:
                users[name]["epoch"] = users[name].get("epoch", 0) + 1
                self._write(users)

    def verify(self, name: str, password: str) -> bool:
        entry = self._read().get(name)
        if entry is None:
            _hash(password, b"timing-equaliser")  # an unknown name costs what a wrong password costs
            return False
        return hmac.compare_digest(entry["hash"], _hash(password, bytes.fromhex(entry["salt"])))


def cookie_secret(path: Path) -> str:
    """The key that signs the web app's cookies: made once, kept in ``path`` (readable by its owner only)."""
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()
