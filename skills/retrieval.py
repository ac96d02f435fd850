"""Hybrid retrieval: BM25 ranking (bm25s) with a normalised lexical similarity, plus embeddings when available.

BM25 scores rank but are unbounded, so the threshold is applied to an idf-weighted cosine
between the query's and the document's word sets (0 = nothing shared, 1 = same words).
When a sentence-embedding model is configured and installed, the similarity is the mean of
that cosine and the embedding cosine.

>>> index = TextIndex(["atomization energy of N2 with ASE EMT", "count RDKit fragments of a SMILES"])
>>> [(hit.position, round(hit.similarity, 2)) for hit in index.search("RDKit fragments for OCc1ccccc1CN")]
[(1, 0.71)]
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import numpy as np

from skills.mentions import stem

__all__ = ["Hit", "TextIndex", "Embedder", "load_embedder", "tokens", "split_name"]

log = logging.getLogger(__name__)

_STOPWORDS = frozenset(
    "a an and are as at be by for from has have how in into is it its of on or that the this to was what which with "
    "using use return give rounded decimal places place float integer int string list value unit please".split()
)


_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def tokens(text: str) -> list[str]:
    """Lowercase words (stemmed; hyphenated words split) and chemical tokens of ``text``, stopwords dropped (``"KMnO₄"`` is
    ``kmno4``, ``"oxidation-states"`` is ``oxidation`` and ``state``, ``"mp-149"`` stays whole)."""
    found = []
    for word in re.findall(r"[a-z0-9]+(?:[._-][a-z0-9]+)*", text.translate(_SUBSCRIPTS).lower()):
        parts = word.split("-") if re.fullmatch(r"[a-z]+(?:-[a-z]+)+", word) else [word]
        found += [stem(part) for part in parts if part not in _STOPWORDS]
    return found


def split_name(name: str) -> str:
    """Words of code names: ``EquationOfState.fit_sjeos`` → ``Equation Of State fit sjeos``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|[._]+", " ", name)
    return " ".join(spaced.split())


class Embedder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...


@cache
def load_embedder(model: str | None) -> Embedder | None:
    """A sentence-transformers model from a local path or installed name, or None (lexical only)."""
    if not model:
        return None
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        log.warning("embedding model %s configured but sentence-transformers is not installed: lexical retrieval only", model)
        return None
    try:
        return SentenceTransformer(model, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - retrieval must keep working
        log.warning("cannot load embedding model %s (%s): lexical retrieval only", model, exc)
        return None


@dataclass(frozen=True)
class Hit:
    position: int
    similarity: float


class TextIndex:
    """An in-memory index over texts; ``search`` returns positions above a similarity threshold, best first."""

    def __init__(self, texts: Sequence[str], embedder: Embedder | None = None):
        self._docs = [tokens(t) for t in texts]
        self._sets = [set(d) for d in self._docs]
        n = max(len(self._docs), 1)
        df = Counter(t for s in self._sets for t in s)
        self._idf = {t: math.log(1 + n / c) for t, c in df.items()}
        self._norms = [math.sqrt(sum(self._idf[t] ** 2 for t in s)) for s in self._sets]
        self._bm25: Any = None  # a bm25s.BM25 once built
        if any(self._docs):
            import bm25s  # imported when an index is built: listing skills never pays for it

            self._bm25 = bm25s.BM25()
            self._bm25.index([d or ["\u2205"] for d in self._docs], show_progress=False)
        self._embedder = embedder
        self._vectors = _unit(embedder.encode(list(texts))) if embedder is not None and texts else None

    def __len__(self) -> int:
        return len(self._docs)

    def _cosine(self, query: set[str], position: int) -> float:
        shared = query & self._sets[position]
        if not shared:
            return 0.0
        q_norm = math.sqrt(sum(self._idf.get(t, 0.0) ** 2 for t in query))
        return sum(self._idf[t] ** 2 for t in shared) / (q_norm * self._norms[position] or 1.0)

    def rank(self, query: str, k: int = 5) -> list[Hit]:
        """The ``k`` best texts by BM25 alone (``similarity`` is the BM25 score): for long, uneven documents."""
        known = [w for w in tokens(query) if w in self._idf]
        if self._bm25 is None or not known:
            return []
        found, scores = self._bm25.retrieve([known], k=min(k, len(self._docs)), show_progress=False)
        return [Hit(int(p), float(s)) for p, s in zip(found[0], scores[0], strict=True) if s > 0]

    def search(self, query: str, k: int = 5, threshold: float = 0.0, candidates: int = 50) -> list[Hit]:
        """The ``k`` most similar texts with similarity ≥ ``threshold``."""
        words = tokens(query)
        known = [w for w in words if w in self._idf]
        if self._bm25 is None or not known:
            return []
        found, _ = self._bm25.retrieve([known], k=min(candidates, len(self._docs)), show_progress=False)
        positions = [int(p) for p in found[0]]
        query_set = set(words)
        scores = {p: self._cosine(query_set, p) for p in positions}
        if self._vectors is not None and self._embedder is not None:
            q = _unit(self._embedder.encode([query]))[0]
            scores = {p: 0.5 * (s + float(self._vectors[p] @ q)) for p, s in scores.items()}
        ranked = sorted((Hit(p, s) for p, s in scores.items() if s >= threshold and s > 0), key=lambda h: -h.similarity)
        return ranked[:k]


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
