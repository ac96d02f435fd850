"""One ``SkillStore`` over maggma ``Store``s: skills, experiences, preferences, sessions, runs, memories, benchmarks.

The backend is a settings choice (``EVOSKILL_STORE``), made in ``open_store`` only:

- ``monty`` (default): ``MontyStore`` on SQLite files under ``EVOSKILL_STORE_PATH`` (persistent, embedded);
- ``memory``: ``MemoryStore`` (mongomock), one per process;
- ``mongodb://…`` / ``mongodb+srv://…``: ``MongoURIStore`` (production).

Documents are validated by their pydantic model on the way in and on the way out; an invalid
document is reported by collection and id, and the rest stay usable. Skill writes are
idempotent (same content → same skill) and serialised by a lock, so two solves saving the
same skill at once store one version.

>>> from deployments.settings import Settings
>>> store = open_store(Settings(store="memory"))
>>> store.count("skills")
0
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from maggma.core import Store
from maggma.stores import MemoryStore, MongoURIStore, MontyStore
from monty.json import jsanitize
from montydb.errors import CollectionInvalid
from pydantic import BaseModel, ValidationError

from deployments.files import file_lock
from deployments.settings import Settings
from skills.documents import (
    BatchItem,
    BenchmarkRecord,
    BenchmarkRun,
    DiscoveryCampaign,
    DiscoveryEpisode,
    Experience,
    ExtractedCode,
    GroundTruthRecord,
    MemoryUnit,
    OracleRecord,
    PackageGraph,
    PackageModule,
    Preference,
    RunRecord,
    Session,
    Skill,
    SkillBatch,
    SkillStats,
)
from skills.mentions import chemical_words
from skills.retrieval import TextIndex, load_embedder
from skills.terms import search_words

if TYPE_CHECKING:
    from jobflow import JobStore

__all__ = ["StoreError", "StoreDocumentError", "SkillStore", "ThreadSafeMontyStore", "open_store", "open_cache", "COLLECTIONS"]

log = logging.getLogger(__name__)

D = TypeVar("D", bound=BaseModel)

COLLECTIONS: dict[str, type[BaseModel]] = {
    "skills": Skill,
    "experiences": Experience,
    "preferences": Preference,
    "sessions": Session,
    "runs": RunRecord,
    "memories": MemoryUnit,
    "benchmark_runs": BenchmarkRun,
    "benchmark_records": BenchmarkRecord,
    "package_modules": PackageModule,
    "package_graphs": PackageGraph,
    "extracted_code": ExtractedCode,
    "skill_batches": SkillBatch,
    "batch_items": BatchItem,
    "discovery_campaigns": DiscoveryCampaign,
    "discovery_episodes": DiscoveryEpisode,
    "oracle_results": OracleRecord,
    "discovery_ground_truths": GroundTruthRecord,
}
_COLLECTION_OF = {model: name for name, model in COLLECTIONS.items()}
_INDEXED = {
    "skills": ["id", "name"],
    "memories": ["id", "kind"],
    "sessions": ["id"],
    "runs": ["id"],
    "benchmark_runs": ["id"],
    "benchmark_records": ["id", "run_id"],
    "package_modules": ["id", "package"],
    "extracted_code": ["id", "source", "user"],
    "skill_batches": ["id"],
    "batch_items": ["id", "batch_id"],
    "discovery_episodes": ["id", "campaign_id"],
    "oracle_results": ["id"],
    "discovery_ground_truths": ["id"],
}


class ThreadSafeMontyStore(MontyStore):
    """``MontyStore`` with each call serialised within the process.

    montydb's SQLite engine keeps one connection attribute per engine and reassigns it on every call, so
    two threads at once use (and close) each other's connections. Queries are read in full under the lock.
    """

    _lock = threading.RLock()

    def connect(self, force_reset: bool = False) -> None:
        """Connect, creating the collection now: montydb makes its file before its table, and a reader in another
        process that opens the file in between fails ("no such table")."""
        with self._lock:
            super().connect(force_reset=force_reset)
            database = self._coll.database  # type: ignore[attr-defined]  # maggma types _coll as None; connect() set it
            if self.collection_name not in database.list_collection_names():
                try:
                    database.create_collection(self.collection_name)
                except CollectionInvalid:  # another process made it meanwhile
                    pass

    def query(self, *args: Any, **kwargs: Any) -> Iterator[dict]:
        with self._lock:
            found = list(super().query(*args, **kwargs))
        return iter(found)

    def count(self, *args: Any, **kwargs: Any) -> int:
        with self._lock:
            return super().count(*args, **kwargs)

    def distinct(self, *args: Any, **kwargs: Any) -> list:
        with self._lock:
            return super().distinct(*args, **kwargs)

    def update(self, docs: list[dict] | dict, key: list | str | None = None) -> None:
        """Upsert ``docs`` by ``key``. montydb finds each document by scanning the collection, so a batch is written
        with one scan for the keys already there, one insert of the new documents and one write of the existing ones by
        their ``_id`` (maggma's own update, and montydb's ``replace_one``, scan once per document: quadratic for the
        thousand items of a batch, each written when it starts and again when it ends)."""
        docs = docs if isinstance(docs, list) else [docs]
        with self._lock:
            if len(docs) < 8 or self.validator is not None:
                super().update(docs, key=key)
                return
            chosen = key or self.key
            fields = list(chosen) if isinstance(chosen, list) else [chosen]
            latest = {tuple(d[f] for f in fields): d for d in (jsanitize(doc, allow_bson=True) for doc in docs)}  # a key twice: the last wins
            found = self._collection.find({}, {**{f: 1 for f in fields}, "_id": 1})  # montydb's $in costs ~0.5 ms a document
            there: dict[tuple[Any, ...], Any] = {}
            for one in found:  # a key stored twice: its first document is the one written (and read), as replace_one did
                if (held := tuple(one.get(f) for f in fields)) in latest:
                    there.setdefault(held, one["_id"])
            fresh = [d for k, d in latest.items() if k not in there]
            if fresh:
                self._collection.insert_many(fresh)
            stale = [{**d, "_id": there[k]} for k, d in latest.items() if k in there]
            if stale:
                self._rewrite(stale)

    def _rewrite(self, docs: list[dict]) -> None:
        """Write documents over the stored ones of the same ``_id``, in one transaction: montydb's storage call that its
        own ``update_many`` makes (``replace_one`` per document where a montydb lacks it)."""
        collection = self._collection
        storage = getattr(collection, "_storage", None)
        if storage is None or not hasattr(storage, "update_many"):
            for doc in docs:
                collection.replace_one({"_id": doc["_id"]}, doc)
            return
        storage.update_many(collection, docs)

    def remove_docs(self, *args: Any, **kwargs: Any) -> None:
        with self._lock:
            super().remove_docs(*args, **kwargs)


class StoreError(RuntimeError):
    """The store cannot be opened or written."""


class StoreDocumentError(StoreError):
    """A stored document does not match its model."""


def _backend(settings: Settings, name: str) -> Store:
    """The maggma store for one collection, as the settings choose."""
    where = settings.store
    if where == "memory":
        return MemoryStore(collection_name=name, key="id")
    if where == "monty":
        return ThreadSafeMontyStore(name, database_path=str(settings.store_root()), database_name=settings.store_database, key="id")
    if where.startswith(("mongodb://", "mongodb+srv://")):
        return MongoURIStore(where, collection_name=name, database=settings.store_database, key="id")
    raise StoreError(f"EVOSKILL_STORE={where!r} is not a store: use 'monty', 'memory' or a mongodb:// URI")


class SkillStore:
    """Typed access to evoskill's collections over any maggma backend."""

    def __init__(self, stores: dict[str, Store], lock_path: Path | None = None, embedding_model: str | None = None):
        self._stores = stores
        self._lock_path = lock_path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._embedding_model = embedding_model
        self._generation = 0
        self._indexes: dict[str, tuple[int, list[BaseModel], TextIndex]] = {}
        self.problems: list[str] = []
        for name, store in stores.items():
            store.connect()
            for key in _INDEXED.get(name, []):
                try:
                    store.ensure_index(key)
                except NotImplementedError:  # MontyStore has no indexes; queries scan
                    pass

    # --- generic documents -------------------------------------------------------------

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Serialise writes within this process and, for file-backed stores, across processes (re-entrant)."""
        with self._thread_lock:
            outermost = self._depth == 0
            self._depth += 1
            try:
                with file_lock(self._lock_path) if (self._lock_path and outermost) else nullcontext():
                    yield
            finally:
                self._depth -= 1

    def store(self, collection: str) -> Store:
        return self._stores[collection]

    def count(self, collection: str, criteria: dict | None = None) -> int:
        return self._stores[collection].count(criteria or {})

    def _load(self, model: type[D], collection: str, raw: dict) -> D:
        raw = {k: v for k, v in raw.items() if k not in ("_id", "last_updated")}
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "document"
            raise StoreDocumentError(
                f"{collection} document {raw.get('id', '?')!r} is invalid ({where}: {first['msg']}); "
                f"delete or fix it — the other documents stay usable"
            ) from exc

    def put(self, document: BaseModel, reindex: bool = True) -> BaseModel:
        """Insert or replace a document by its id (same content → same id: idempotent).

        ``reindex=False`` keeps the retrieval indexes (for changes retrieval does not read, e.g. usage counts).
        """
        collection = _COLLECTION_OF[type(document)]
        with self.write_lock():
            self._stores[collection].update([document.model_dump(mode="json")], key="id")
            self._generation += int(reindex)
        return document

    def put_many(self, documents: Sequence[BaseModel]) -> int:
        """Insert or replace documents of one kind in one write (bulk caches such as parsed packages)."""
        if not documents:
            return 0
        collection = _COLLECTION_OF[type(documents[0])]
        with self.write_lock():
            self._stores[collection].update([d.model_dump(mode="json") for d in documents], key="id")
            self._generation += 1
        return len(documents)

    def get(self, model: type[D], doc_id: str) -> D | None:
        collection = _COLLECTION_OF[model]
        raw = self._stores[collection].query_one({"id": doc_id})
        return self._load(model, collection, raw) if raw else None

    def all(self, model: type[D], criteria: dict | None = None) -> list[D]:
        """Every valid document of a kind; invalid ones are logged and listed in ``problems``."""
        collection = _COLLECTION_OF[model]
        found = []
        for raw in self._stores[collection].query(criteria or {}):
            try:
                found.append(self._load(model, collection, raw))
            except StoreDocumentError as exc:
                log.warning("%s", exc)
                if str(exc) not in self.problems:
                    self.problems.append(str(exc))
        return found

    def check(self) -> list[str]:
        """Read every document of every collection through its model; the problems found (none: every document is whole)."""
        self.problems.clear()
        for model in COLLECTIONS.values():
            self.all(model)
        return list(self.problems)

    def delete(self, model: type[D], criteria: dict) -> int:
        collection = _COLLECTION_OF[model]
        with self.write_lock():
            n = self._stores[collection].count(criteria)
            self._stores[collection].remove_docs(criteria)
            self._generation += 1
        return n

    # --- skills ------------------------------------------------------------------------

    def put_skill(self, skill: Skill) -> tuple[Skill, bool]:
        """Store ``skill``; returns (the stored skill, whether it is new).

        The same code, parameters and packages under the same name are the same skill: nothing
        new is written. Different content under an existing name becomes its next version.
        """
        with self.write_lock():
            versions = self.all(Skill, {"name": skill.name})
            for existing in versions:
                if existing.content_hash == skill.content_hash:
                    return existing, False
            stored = skill.model_copy(update={"version": max((v.version for v in versions), default=0) + 1})
            self.put(stored)
            return stored, True

    def get_skill(self, ref: str) -> Skill:
        """A skill by id (``name-vN``) or by name (its latest version)."""
        skill = self.get(Skill, ref)
        if skill is None:
            versions = self.all(Skill, {"name": ref})
            if not versions:
                raise KeyError(f"no skill {ref!r} in the store (see: evoskill skills list)")
            skill = max(versions, key=lambda s: s.version)
        return skill

    def latest_skills(self) -> list[Skill]:
        """The newest version of every skill."""
        latest: dict[str, Skill] = {}
        for skill in self.all(Skill):
            if skill.name not in latest or skill.version > latest[skill.name].version:
                latest[skill.name] = skill
        return sorted(latest.values(), key=lambda s: s.name)

    def delete_skill(self, ref: str) -> int:
        """Delete one version (by id) or every version (by name); returns how many went."""
        n = self.delete(Skill, {"id": ref})
        return n or self.delete(Skill, {"name": ref})

    def record_use(self, skill: Skill, success: bool) -> None:
        """Count one use of a skill."""
        self.record_uses(skill, 1, int(success))

    def record_uses(self, skill: Skill, uses: int, successes: int) -> None:
        """Count uses of a skill (read afresh under the lock, so concurrent uses all count)."""
        with self.write_lock():
            current = self.get(Skill, skill.id)
            if current is None:
                return
            stats = SkillStats(uses=current.stats.uses + uses, successes=current.stats.successes + successes)
            self.put(current.model_copy(update={"stats": stats}), reindex=False)

    def add_wording(self, skill: Skill, query: str, asker: str) -> Skill | None:
        """Add ``query`` (asked by ``asker``) to the skill's verified questions, read afresh under the lock; the stored
        skill, or None when it is gone. Its words then count as the skill's when binding (``skills/binding.py``)."""
        with self.write_lock():
            current = self.get(Skill, skill.id)
            if current is None:
                return None
            grown = current.model_copy(update={"provenance": current.provenance.with_wording(query, asker)})
            if grown.provenance is not current.provenance:
                self.put(grown)  # reindexed: recall hands out the stored document, its new wording included
            return grown

    # --- retrieval ------------------------------------------------------------------------

    def _index(self, kind: str) -> tuple[list[BaseModel], TextIndex]:
        """The in-memory index of a collection, rebuilt when this process has written since."""
        cached = self._indexes.get(kind)
        if cached and cached[0] == self._generation:
            return cached[1], cached[2]
        generation = self._generation
        model = {"skills": None, "memories": MemoryUnit, "extracted_code": ExtractedCode}[kind]
        documents: list[BaseModel] = list(self.latest_skills()) if model is None else list(self.all(model))
        texts = [d.search_text() for d in documents]  # type: ignore[attr-defined]  # every indexed model has search_text
        index = TextIndex(texts, load_embedder(self._embedding_model))
        self._indexes[kind] = (generation, documents, index)
        return documents, index

    def refresh(self) -> None:
        """Forget cached indexes (after another process wrote to a shared store)."""
        self._indexes.clear()

    def search_skills(self, query: str, k: int = 3, threshold: float = 0.0) -> list[tuple[Skill, float]]:
        """The skills most similar to ``query``; a substance it names counts as its formula too ("potassium permanganate" meets a
        skill verified on KMnO4), a code name as its words, a phrase as its equivalents ("formula weight" meets molar mass)."""
        documents, index = self._index("skills")
        hits = index.search(f"{query} {chemical_words(query)} {search_words(query)}", k=k, threshold=threshold)
        return [(documents[h.position], h.similarity) for h in hits]  # type: ignore[misc]  # the skills index holds Skills

    def search_memories(
        self, query: str, k: int = 3, threshold: float = 0.0, kind: str | None = None, user: str | None = None
    ) -> list[tuple[MemoryUnit, float]]:
        """Memories most similar to ``query``; with ``user``, only everyone's and that user's own."""
        documents, index = self._index("memories")
        filtered = bool(kind or user)  # rank more candidates, so that k remain after the filter
        hits = index.search(query, k=len(documents) if filtered else k, threshold=threshold, candidates=200 if filtered else 50)

        def wanted(memory: MemoryUnit) -> bool:
            return (kind is None or memory.kind == kind) and (user is None or memory.user in (None, user))

        found = [(documents[h.position], h.similarity) for h in hits if wanted(documents[h.position])]  # type: ignore[arg-type]  # the memories index holds MemoryUnits
        return found[:k]  # type: ignore[return-value]  # the memories index holds MemoryUnits

    def search_extracted_code(self, query: str, k: int = 3, *, user: str) -> list[tuple[ExtractedCode, float]]:
        """Code examples that ``user`` extracted most similar to ``query`` (never another user's)."""
        documents, index = self._index("extracted_code")
        hits = index.search(query, k=len(documents), candidates=max(len(documents), 50))  # rank all: k of this user's must remain
        found = [(documents[h.position], h.similarity) for h in hits if documents[h.position].user == user]  # type: ignore[attr-defined]  # the extracted_code index holds ExtractedCode
        return found[:k]  # type: ignore[return-value]  # the extracted_code index holds ExtractedCode

    def job_store(self) -> JobStore:
        """A jobflow ``JobStore`` on the same backend (job outputs of skills run as workflows)."""
        from jobflow import JobStore

        return JobStore(self._stores["jobs"])

    def close(self) -> None:
        for store in self._stores.values():
            store.close()


_OPEN: dict[tuple[str, str, str], SkillStore] = {}
_OPEN_LOCK = threading.Lock()


def open_store(settings: Settings) -> SkillStore:
    """The process's store for these settings (opened once, then shared)."""
    root = settings.store_root()
    key = (settings.store, str(root), settings.store_database)
    with _OPEN_LOCK:
        if key not in _OPEN:
            lock_path = None
            if settings.store == "monty":
                try:
                    root.mkdir(parents=True, exist_ok=True)
                    (root / ".writable").touch()
                except OSError as exc:
                    raise StoreError(
                        f"the skill store folder {root} is not writable ({exc.strerror}); set EVOSKILL_STORE_PATH to a writable folder"
                    ) from exc
                lock_path = root / "store.lock"
            stores = {name: _backend(settings, name) for name in [*COLLECTIONS, "jobs"]}
            # Opening creates the Monty files and config: two processes doing it at once race on them.
            with file_lock(lock_path) if lock_path else nullcontext():
                _OPEN[key] = SkillStore(stores, lock_path, settings.embedding_model)
        return _OPEN[key]


def open_cache(settings: Settings) -> SkillStore:
    """The package-knowledge cache: same backend as the store, its own folder (Monty) or database."""
    return open_store(settings.model_copy(update={"store_path": settings.cache_root(), "store_database": f"{settings.store_database}_cache"}))
