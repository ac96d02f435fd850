"""Small network helpers shared by the local servers evoskill starts."""

from __future__ import annotations

import urllib.error
import urllib.request

__all__ = ["url_responds"]


def url_responds(url: str, timeout: float = 2.0) -> bool:
    """Whether a GET of ``url`` answers 200 within ``timeout`` seconds."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, TimeoutError):
        return False
