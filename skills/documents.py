"""The documents evoskill keeps: skills, experiences, preferences, sessions, runs, memories and benchmark results.

Every document is a pydantic model; the store validates it on the way in and on the way out.

>>> skill = Skill(name="demo", description="adds one", code="def run(x: int = 1) -> int:\\n    return x + 1\\n",
...               test_case=TestCase(params={"x": 1}, expected=2))
>>> skill.id, len(skill.content_hash)
('demo-v1', 16)
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, computed_field, field_validator

from skills.parameter import ParameterSchema
from skills.params import with_bounds
from skills.retrieval import split_name

__all__ = [
    "content_hash",
    "DiscoveryCampaign",
    "DiscoveryEpisode",
    "OracleRecord",
    "GroundTruthRecord",
    "slug",
    "SkillResources",
    "TestCase",
    "Provenance",
    "SkillStats",
    "Skill",
    "Experience",
    "Preference",
    "BoundValue",
    "DEFAULT_WORDS",
    "Suggestion",
    "SessionTurn",
    "Session",
    "RunRecord",
    "MemoryUnit",
    "BenchmarkRun",
    "BenchmarkRecord",
    "Param",
    "FunctionInfo",
    "ClassInfo",
    "PackageModule",
    "PackageGraph",
    "ExtractedCode",
    "SkillBatch",
    "BatchItem",
    "StageRecord",
]


def _now() -> datetime:
    return datetime.now(timezone.utc)


def content_hash(*parts: Any) -> str:
    """A short, stable hash of JSON-serialisable parts (the identity of a document's content)."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def slug(text: str, limit: int = 48) -> str:
    """A lowercase identifier made of words of ``text``: ``"Atomization energy (EMT)"`` → ``atomization_energy_emt``."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "_".join(words)[:limit].strip("_") or "skill"


class _Document(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SkillResources(BaseModel):
    gpu: bool = Field(default=False, description="Runs only on a worker that advertises a GPU.")
    gpu_preferred: bool = Field(
        default=False, description="Faster on a GPU (a machine-learned potential): a GPU worker where the cluster has one, else the CPU."
    )
    cpus: int = Field(default=1, gt=0)
    walltime_s: float = Field(default=120.0, gt=0, description="Declared wall time: a run past it is stopped (at most the sandbox's own limit).")


class TestCase(BaseModel):
    """The parameters a skill was verified with, the answer it must give, and how close is close enough."""

    __test__ = False  # not a pytest class

    params: dict[str, JsonValue] = Field(default_factory=dict)
    expected: JsonValue = None
    tolerance: float | None = Field(default=None, description="Absolute tolerance for numbers; None = exact.")


class Provenance(BaseModel):
    query: str = ""
    queries: list[str] = Field(default_factory=list, description="Other phrasings of the verified question (a task's other levels).")
    source: Literal["solve", "learn", "import"] = "solve"
    task_id: str | None = None
    flow_run_id: str | None = None
    model: str | None = None
    user: str | None = Field(
        default=None,
        description="Its teacher: who asked the question it was learned from, or learned or imported it; only they see its words "
        "(skills/disclosure.py). None: the starter library's.",
    )
    asked_by: dict[str, str] = Field(
        default_factory=dict,
        description="The questions of queries that joined it by evidence (its answer agreed, or its asker accepted it), each with "
        "who asked it: shown to that asker only (skills/disclosure.py).",
    )
    created: datetime = Field(default_factory=_now)

    def with_wording(self, query: str, asker: str) -> Provenance:
        """This provenance with ``query`` among its verified questions (unchanged when it is one already)."""
        if query in (self.query, *self.queries):
            return self
        return self.model_copy(update={"queries": [*self.queries, query], "asked_by": {**self.asked_by, query: asker}})


class SkillStats(BaseModel):
    uses: int = 0
    successes: int = 0


class Skill(_Document):
    """A verified, parameterised program: ``run(**params)`` returns a JSON-serialisable answer."""

    name: str = Field(min_length=1, pattern=r"^[a-z0-9_]+$")
    version: int = Field(default=1, ge=1)
    description: str = ""
    parameters: ParameterSchema = Field(default_factory=ParameterSchema, description="JSON schema of run()'s keyword arguments, typed.")
    code: str = Field(min_length=1, description="Python source defining run(**params).")
    packages: list[str] = Field(default_factory=list)
    output_type: Literal["float", "int", "bool", "str", "list", "any"] = "any"
    unit: str | None = None
    resources: SkillResources = Field(default_factory=SkillResources)
    test_case: TestCase
    provenance: Provenance = Field(default_factory=Provenance)
    stats: SkillStats = Field(default_factory=SkillStats)
    method: Literal["signature", "lifted", "llm", "literal"] | None = Field(
        default=None, description="How the accepted code was generalised: its own run(), lifted constants, a model's rewrite, or as is."
    )
    hidden_inputs: list[str] = Field(
        default_factory=list,
        description="Constants the question never stated that change the answer: the skill answers only for its own material.",
    )
    independent_of: list[str] = Field(
        default_factory=list,
        description="Kinds of stated value (element, formula, smiles) that other values were shown not to change the answer for.",
    )
    tunables: list[str] = Field(
        default_factory=list,
        description=(
            "Stated numbers whose other values gave the same answer on the verified example (a convergence setting such as fmax or "
            "a supercell size): the skill runs with the value a question states, and the default may stand for another substance."
        ),
    )

    @field_validator("parameters")
    @classmethod
    def _role_bounds(cls, schema: ParameterSchema) -> ParameterSchema:
        """Each numeric parameter bounded as its role implies (``skills/params.py``), stored skills without bounds too."""
        return with_bounds(schema)

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return f"{self.name}-v{self.version}"

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def content_hash(self) -> str:
        """Identity of what the skill does (code, parameters, packages), not of its name, version or stats."""
        return content_hash(self.code, self.parameters.model_dump(), sorted(self.packages))

    def search_text(self) -> str:
        """What retrieval matches a query against."""
        names = " ".join(self.parameters.properties)
        return f"{self.name.replace('_', ' ')} {self.description} {names} {self.provenance.query}"


class Experience(_Document):
    """A trajectory that was not kept as a skill: a failure mode to learn from."""

    query: str
    path: str
    verdict: Literal["rejected", "failed"]
    reasons: list[str] = Field(default_factory=list)
    code: str | None = None
    answer: JsonValue = None
    flow_run_id: str | None = None
    created: datetime = Field(default_factory=_now)

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return content_hash(self.query, self.verdict, self.reasons, self.code)


class Preference(_Document):
    """Something a user told evoskill to keep doing (e.g. units, output style); each user has their own."""

    key: str = Field(min_length=1)
    value: JsonValue
    user: str = "local"
    created: datetime = Field(default_factory=_now)

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return f"{self.user}:{self.key}"


DEFAULT_WORDS = "verified default"


class BoundValue(BaseModel):
    """One parameter's value and the words of the question it came from."""

    name: str
    value: JsonValue
    words: str = Field(description=f"The question's words for the value, or {DEFAULT_WORDS!r}.")
    unit: str | None = Field(default=None, description="The unit the skill takes the value in (Å, eV, …).")

    def describe(self) -> str:
        """``formula='O2' (from "O2")``, ``a=3.52 Å (from "a = 0.352 nm")``, or ``fmax=0.01 eV/Å (the skill's verified default)``."""
        source = "the skill's verified default" if self.words == DEFAULT_WORDS else f'from "{self.words}"'
        return f"{self.name}={self.value!r}{' ' + self.unit if self.unit else ''} ({source})"


class Suggestion(BaseModel):
    """A recalled skill that every value of the question binds, declined only for words it was not verified on: offered
    to the asker (who may run it), not dropped."""

    skill_id: str
    params: dict[str, JsonValue] = Field(default_factory=dict, description="What it would run with (defaults filled in).")
    bound: list[BoundValue] = Field(default_factory=list, description="Each parameter with the question's words it came from.")
    verified_on: str = Field(description="The question it was verified on, as the asker may see it, or what it computes.")
    reason: str = Field(description="Why it declined: the words it was not verified on.")
    accepted: bool = Field(default=False, description="The asker accepted it and the skill answered.")

    def offer(self) -> str:
        """``This looks like ase_emt_atomization-v1 with formula=CO (it was verified on "…"). Run it?``"""
        stated = [b for b in self.bound if b.words != DEFAULT_WORDS]
        values = ", ".join(f"{b.name}={b.value}" for b in stated)
        with_values = f" with {values}" if values else ""
        return f'This looks like {self.skill_id}{with_values} (it was verified on "{self.verified_on}"). Run it?'


class SessionTurn(BaseModel):
    """One question and what came back: the answer (or the question asked back), its code, output, images and stages."""

    query: str
    answer: str | None = None
    success: bool = False
    path: str | None = None
    code: str | None = None
    output: str | None = None
    images: list[str] = Field(default_factory=list, description="Images the answering code wrote: paths of their kept copies (deployments/run_outputs.py).")
    error: str | None = None
    stages: list[StageRecord] = Field(default_factory=list)
    wall_s: float = Field(default=0.0, description="The solve's wall time (its stages may overlap: debug branches run in parallel).")
    skill_id: str | None = None
    params: list[BoundValue] = Field(default_factory=list, description="Skill path: every parameter the skill ran with.")
    suggestion: Suggestion | None = Field(default=None, description="A skill offered for the question (the chat's button runs it).")
    flow_run_id: str | None = None
    trajectory_path: str | None = None
    satisfied: bool = False
    at: datetime = Field(default_factory=_now)


class Session(_Document):
    """Multi-turn history under one session id, owned by one user, resumable from any later command."""

    id: str = Field(min_length=1, pattern=r"^[\w.-]+$")
    user: str = "local"
    title: str = ""
    notes: str = ""
    bookmarked: bool = False
    status: Literal["open", "stopped"] = "open"
    pending: str | None = Field(default=None, description="A question being answered (still set after a crash: it can be asked again).")
    turns: list[SessionTurn] = Field(default_factory=list)
    updated: datetime = Field(default_factory=_now)


class RunRecord(_Document):
    """One solve, as listed for reports."""

    flow_run_id: str
    query: str
    path: str
    success: bool
    answer: JsonValue = None
    skill_id: str | None = None
    llm_calls: int = 0
    wall_s: float = 0.0
    created: datetime = Field(default_factory=_now)

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return self.flow_run_id


class MemoryUnit(_Document):
    """One unit of ChemAgent's library: a planning strategy, or an execution (condition, sub-task, sub-solution).

    Knowledge (principles for one task) is generated per task and never stored.
    """

    kind: Literal["planning", "execution"]
    user: str | None = Field(default=None, description="Whose memory this is; None: everyone's (the starter library).")
    condition: str = Field(default="", description="When this applies (the query or its setting).")
    subtask: str = Field(min_length=1, description="What was to be done.")
    solution: str = Field(default="", description="How it was done: a strategy, or code.")
    source: str | None = None
    created: datetime = Field(default_factory=_now)

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        parts = (self.kind, self.condition, self.subtask, self.solution)
        return content_hash(*parts, self.user) if self.user else content_hash(*parts)

    def search_text(self) -> str:
        return f"{self.condition} {self.subtask}"


class _ResumableRun(_Document):
    """A long run identified by its configuration: stored when it starts, marked done when it finishes."""

    id: str
    config: dict[str, JsonValue] = Field(default_factory=dict)
    status: Literal["running", "done"] = "running"
    report_dir: str | None = None
    created: datetime = Field(default_factory=_now)
    finished: datetime | None = None


class BenchmarkRun(_ResumableRun):
    """One benchmark: its configuration, and whether it finished (an unfinished one is resumed)."""

    config_hash: str = Field(description="Identity of suite, systems, repetitions, levels and model.")
    total: int = 0
    problems: list[str] = Field(default_factory=list, description="Task files that did not load.")
    answers_hidden: bool = False


class BenchmarkRecord(_Document):
    """One task run by one system at one level in one repetition, checked against the task's answer."""

    run_id: str
    system: str
    rep: int = Field(ge=1)
    level: Literal[0, 1]
    task_id: str
    category: str | None = None
    passed: bool
    answer: JsonValue = None
    expected: JsonValue = None
    reason: str | None = Field(default=None, description="Why it did not pass.")
    path: str | None = None
    skill_id: str | None = None
    learned: bool = False
    wall_s: float = 0.0
    llm_calls: int = 0
    tokens: int = 0
    trajectory_path: str | None = None
    created: datetime = Field(default_factory=_now)

    @staticmethod
    def make_id(run_id: str, system: str, rep: int, level: int, task_id: str) -> str:
        return f"{run_id}:{system}:{rep}:{level}:{task_id}"

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return self.make_id(self.run_id, self.system, self.rep, self.level, self.task_id)


class Param(BaseModel):
    """One parameter of a function, as written in its source."""

    name: str
    annotation: str | None = None
    default: str | None = None
    kind: Literal["positional", "keyword", "var_positional", "var_keyword"] = "positional"

    def render(self) -> str:
        stars = {"var_positional": "*", "var_keyword": "**"}.get(self.kind, "")
        text = stars + self.name + (f": {self.annotation}" if self.annotation else "")
        return text + (f" = {self.default}" if self.default is not None else "")


class FunctionInfo(BaseModel):
    """A function or method of a package."""

    name: str
    qualname: str = Field(description="Dotted path: module.function or module.Class.method.")
    lineno: int = 0
    params: list[Param] = Field(default_factory=list)
    returns: str | None = None
    doc: str = ""
    text_signature: str | None = Field(default=None, description="The signature as a compiled module documents it.")

    def signature(self) -> str:
        if self.text_signature and not self.params:
            return f"{self.qualname.rsplit('.', 1)[0]}.{self.text_signature}"
        return f"{self.qualname}({', '.join(p.render() for p in self.params)})" + (f" -> {self.returns}" if self.returns else "")


class ClassInfo(BaseModel):
    """A class of a package with its methods and (resolved where possible) base classes."""

    name: str
    qualname: str
    lineno: int = 0
    bases: list[str] = Field(default_factory=list)
    doc: str = ""
    methods: list[FunctionInfo] = Field(default_factory=list)


class PackageModule(_Document):
    """One module of an installed package, parsed from its source (never imported)."""

    package: str
    module: str
    path: str
    stamp: str = Field(description="File size and modification time: re-parsed only when it changes.")
    doc: str = ""
    imports: dict[str, str] = Field(default_factory=dict, description="Local name → what it refers to.")
    classes: list[ClassInfo] = Field(default_factory=list)
    functions: list[FunctionInfo] = Field(default_factory=list)
    error: str | None = Field(default=None, description="Why the file could not be parsed.")

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return f"{self.package}:{self.module}"


class PackageGraph(_Document):
    """Bookkeeping of one parsed package: version, progress and cost."""

    id: str = Field(description="The package (or subpackage) name.")
    version: str | None = None
    files_total: int = 0
    files_parsed: int = 0
    complete: bool = False
    parse_s: float = 0.0
    updated: datetime = Field(default_factory=_now)


class ExtractedCode(_Document):
    """A code example extracted from a page, document, notebook or package, with the text around it."""

    source: str
    user: str | None = Field(default=None, description="Who extracted it: only they retrieve it.")
    language: str = "python"
    code: str
    context: str = ""
    created: datetime = Field(default_factory=_now)

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return content_hash(self.source, self.code, self.user) if self.user else content_hash(self.source, self.code)

    def search_text(self) -> str:
        return split_name(f"{self.context} {self.source.rsplit('/', 1)[-1]} {self.code}")


class SkillBatch(_Document):
    """One skill run over many parameter sets; each set is a ``BatchItem`` of its own."""

    id: str
    skill_id: str
    size: int = Field(ge=0)
    executor: str = "local"
    status: Literal["running", "done", "partial"] = "running"
    done: int = 0
    failed: int = 0
    created: datetime = Field(default_factory=_now)
    updated: datetime = Field(default_factory=_now)


class BatchItem(_Document):
    """One parameter set of a batch and how its latest attempt went (its answer is in the JobStore under ``job_uuid``)."""

    batch_id: str
    index: int = Field(ge=0)
    params: dict[str, JsonValue] = Field(default_factory=dict)
    status: Literal["pending", "done", "failed"] = "pending"
    job_uuid: str | None = None
    attempts: int = 0
    worker: str | None = None
    error: str | None = None
    wall_s: float | None = None

    @staticmethod
    def make_id(batch_id: str, index: int) -> str:
        return f"{batch_id}:{index:07d}"

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return self.make_id(self.batch_id, self.index)


class DiscoveryCampaign(_ResumableRun):
    """A discovery campaign: its configuration and, once finished, its metrics per policy and its report folder."""

    metrics: list[dict[str, JsonValue]] = Field(default_factory=list)


class DiscoveryEpisode(_Document):
    """One finished episode of a campaign (an ``EpisodeResult`` dump): stored as it ends, so a rerun resumes."""

    campaign_id: str
    policy: str
    episode: int = Field(ge=0)
    result: dict[str, JsonValue] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]  # mypy: a decorated property (pydantic's documented form)
    @property
    def id(self) -> str:
        return f"{self.campaign_id}:{self.policy}:{self.episode}"


class OracleRecord(_Document):
    """A cached oracle result, keyed by the structure's hash and the oracle's settings."""

    id: str
    oracle: str
    result: dict[str, JsonValue] = Field(default_factory=dict)


class GroundTruthRecord(_Document):
    """A system's ground-truth hull with one oracle (a ``GroundTruth`` dump), keyed by system, oracle and enumeration settings."""

    id: str
    system: str
    oracle: str
    settings: dict[str, JsonValue] = Field(default_factory=dict)
    truth: dict[str, JsonValue] = Field(default_factory=dict)


class StageRecord(BaseModel):
    name: str
    wall_s: float
    ok: bool
    detail: str | None = None
