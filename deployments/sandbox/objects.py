"""Large outputs kept as files under a run folder, referred to by an ``ObjectRef`` with a preview."""

from __future__ import annotations

import hashlib
from pathlib import Path

from deployments.files import write_atomic
from deployments.sandbox.models import ObjectRef

__all__ = ["PREVIEW_CHARS", "put_object", "load_object"]

PREVIEW_CHARS = 600


def put_object(text: str, folder: Path) -> ObjectRef:
    """Keep ``text`` in ``folder`` (content-addressed) and return a reference to it."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = folder.resolve() / f"{digest}.txt"
    if not path.exists():
        write_atomic(path, text)
    return ObjectRef(uri=path.as_uri(), size=len(text), preview=text[-PREVIEW_CHARS:])


def load_object(ref: ObjectRef) -> str:
    """The full text behind a reference."""
    return Path(ref.uri.removeprefix("file://")).read_text()
