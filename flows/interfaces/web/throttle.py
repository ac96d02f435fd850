"""Login rate limiting: wrong passwords counted per account and per client address.

After ``attempts`` wrong passwords within the window, every login to that account, or from that address, is refused
(the right password too) for ``lockout_s``; each further wrong password doubles the wait, up to an hour.

>>> now = [0.0]
>>> throttle = LoginThrottle(attempts=2, lockout_s=10, clock=lambda: now[0])
>>> throttle.failed("user:ada"), throttle.failed("user:ada"), throttle.wait("user:ada", "addr:10.0.0.1")
(0.0, 10.0, 10.0)
>>> now[0] = 10.0; throttle.wait("user:ada"), throttle.failed("user:ada")
(0.0, 20.0)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["LoginThrottle"]

_WINDOW_S = 900.0
_MAX_LOCKOUT_S = 3600.0
_PRUNE_AT = 10_000


@dataclass
class _Record:
    failures: int = 0
    last: float = 0.0
    until: float = 0.0


@dataclass
class LoginThrottle:
    """Failed logins per key (``user:NAME``, ``addr:IP``), kept in memory by the web app's process."""

    attempts: int
    lockout_s: float
    window_s: float = _WINDOW_S
    clock: Callable[[], float] = time.monotonic
    _records: dict[str, _Record] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wait(self, *keys: str) -> float:
        """Seconds until every one of ``keys`` may try again (0 when they may now)."""
        now = self.clock()
        with self._lock:
            return max([0.0, *(r.until - now for k in keys if (r := self._records.get(k)))])

    def failed(self, *keys: str) -> float:
        """Count a wrong password against each key; the wait it brings (0 while under the limit)."""
        now = self.clock()
        with self._lock:
            if len(self._records) > _PRUNE_AT:
                self._prune(now)
            for key in keys:
                record = self._records.get(key)
                if record is None or self._expired(record, now):
                    record = self._records[key] = _Record()
                record.failures += 1
                record.last = now
                if record.failures >= self.attempts:
                    record.until = now + min(self.lockout_s * 2 ** (record.failures - self.attempts), _MAX_LOCKOUT_S)
        return self.wait(*keys)

    def succeeded(self, key: str) -> None:
        """Forget ``key``'s wrong passwords (an account after its right password; the address keeps its count)."""
        with self._lock:
            self._records.pop(key, None)

    def clear(self) -> None:
        """Forget every wrong password."""
        with self._lock:
            self._records.clear()

    def _expired(self, record: _Record, now: float) -> bool:
        return now >= record.until and now - record.last > self.window_s

    def _prune(self, now: float) -> None:
        for key in [k for k, r in self._records.items() if self._expired(r, now)]:
            del self._records[key]
