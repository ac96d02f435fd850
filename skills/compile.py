"""Turn accepted code into a verified, parameterised skill: generalise → verify (the store is the caller's).

Generalising tries, in order, until one candidate verifies:

1. ``signature`` — the code already defines ``run(p: type = default, …)``: its signature is the schema;
2. ``lifted`` — no model: the constants the question states become parameters (``skills/lifting.py``),
   each kept only if another value changes the answer (``skills/relevance.py``);
3. ``llm`` — the model rewrites the script as such a ``run`` (one call), then the result is checked
   (tried when lifting found no parameter);
4. ``literal`` — the script itself wrapped as ``run()`` with no parameters (reuse for the same question).

Verifying runs the candidate in the sandbox with its default parameters (the original ones)
and compares the result with the accepted answer within the tolerance. Only a verified
skill is stored (``tasks/compile.py``, the compile stage), with provenance; a failed compile stores nothing.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue, PrivateAttr

from deployments.llm.client import LLMCall, LLMClient
from deployments.llm.transport import LLMError
from deployments.packages import imported_packages, module_names
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings
from skills.answer_check import check_answer
from skills.answer_spec import AnswerSpec
from skills.documents import Provenance, Skill, SkillResources, TestCase, slug
from skills.gpu import prefers_gpu
from skills.lifting import LiftError, lift_script
from skills.mentions import topic_words
from skills.parameter import ParameterSchema
from skills.params import SkillCodeError, run_summary, signature_schema
from skills.relevance import RelevanceReport, check_relevance
from skills.runner import run_skill_code
from skills.signatures import ParameterNames, SandboxSignatures

__all__ = ["SkillDraft", "CompileRequest", "CompileResult", "compile_skill", "default_tolerance", "declared_walltime"]

Method = Literal["signature", "lifted", "llm", "literal"]

_LITERAL = '''SCRIPT = {script!r}


def run():
    """{doc}"""
    import contextlib, io, json
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(SCRIPT, "script.py", "exec"), {{"__name__": "__main__"}})
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    if lines:
        return json.loads(lines[-1])
    with open("result.json") as handle:
        return json.load(handle)
'''


class SkillDraft(BaseModel):
    """The model's generalisation of a script (compile stage reply)."""

    name: str = Field(description="short snake_case name of what the skill computes")
    description: str = Field(description="one sentence: what it computes, from which inputs")
    code: str = Field(description="Python source defining run(...) with typed parameters whose defaults are the script's values")


class CompileRequest(BaseModel):
    code: str
    packages: list[str] = Field(default_factory=list)
    query: str
    expected: JsonValue
    tolerance: float | None = None
    spec: AnswerSpec = Field(default_factory=AnswerSpec)
    name: str | None = Field(default=None, description="Skill name; derived from the draft or the query when unset.")
    description: str | None = None
    provenance: Provenance = Field(default_factory=Provenance)


class CompileResult(BaseModel):
    ok: bool = False
    method: Method | None = None
    skill: Skill | None = None
    new: bool = False
    reasons: list[str] = Field(default_factory=list, description="Why each rejected candidate failed.")
    verification: ExecutionResult | None = None
    relevance: RelevanceReport | None = Field(default=None, description="Which lifted parameters matter (lifted skills).")
    llm_calls: list[LLMCall] = Field(default_factory=list)
    _verified_s: dict[str, float] = PrivateAttr(default_factory=dict)  # each verified candidate's code → its run's seconds


def topic_name(query: str) -> str:
    """A skill name from what the question asks (its first content words, without the substance): ``atomization_energy_ase_emt``."""
    return slug(" ".join(topic_words(query)[:4])) or "skill"


def default_tolerance(expected: JsonValue, spec: AnswerSpec) -> float | None:
    """How close a re-run must come: half a unit in the last asked decimal, else 1e-6 relative; exact for non-floats."""
    if not isinstance(expected, float):
        return None
    if spec.decimals is not None:
        return 0.5 * 10.0 ** (-spec.decimals) + 1e-12
    return 1e-6 * max(1.0, abs(expected))


def declared_walltime(verified_s: float, settings: Settings) -> float:
    """The wall time a skill declares: its verification run's time by a generous factor, never below the floor."""
    return round(max(settings.skill_walltime_floor_s, settings.skill_walltime_factor * verified_s), 1)


def _draft(request: CompileRequest, llm: LLMClient) -> SkillDraft:
    system = (
        "You turn a working Python script into a reusable function. Define def run(name: type = default, ...) -> type "
        "with one parameter per input a user would change (material, molecule, SMILES, numeric settings); annotate each "
        "with str, int, float, bool, list or dict; each default must be the value the script used. run returns the answer "
        "(JSON-serialisable) instead of printing it. Document each parameter in run's docstring as 'name: meaning'."
    )
    user = f"Question it answered: {request.query}\nAnswer: {request.expected!r}\n\nScript:\n```python\n{request.code}\n```"
    return llm.structured("compile", system, user, SkillDraft)


def _candidates(request: CompileRequest, reasons: list[str], names: ParameterNames) -> list[tuple[Method, str, str, str]]:
    """(method, code, name, description) of the candidates that need no model, in the order they are tried."""
    fallback_name = request.name or topic_name(request.query)
    description = request.description or request.query
    try:
        signature_schema(request.code)
        return [("signature", request.code, fallback_name, request.description or run_summary(request.code) or description)]
    except SkillCodeError:
        pass
    found: list[tuple[Method, str, str, str]] = []
    try:
        draft = lift_script(request.code, [request.query], names)
        found.append(("lifted", draft.code, fallback_name, description))
    except LiftError as exc:
        reasons.append(f"lifted: {exc}")
    return found


def _llm_candidate(request: CompileRequest, llm: LLMClient, reasons: list[str]) -> tuple[Method, str, str, str] | None:
    try:
        draft = _draft(request, llm)
    except LLMError as exc:
        reasons.append(f"llm: {exc}")
        return None
    return ("llm", draft.code, request.name or slug(draft.name), request.description or draft.description)


def _literal_candidate(request: CompileRequest) -> tuple[Method, str, str, str]:
    literal = _LITERAL.format(script=request.code, doc=request.query.replace('"""', "'''").replace("\\", "\\\\"))
    return ("literal", literal, request.name or topic_name(request.query), request.description or request.query)


def _verify(
    method: Method, code: str, request: CompileRequest, settings: Settings, name: str, result: CompileResult
) -> dict[str, Any] | None:
    """The schema of a candidate that re-runs to the accepted answer with its defaults, else None (reason noted)."""
    try:
        schema = signature_schema(code)
    except SkillCodeError as exc:
        result.reasons.append(f"{method}: {exc}")
        return None
    params = {k: v["default"] for k, v in schema["properties"].items()}
    packages = module_names(request.packages + imported_packages(request.code) + imported_packages(code))
    execution = run_skill_code(code, packages, params, settings, f"verify-{name}")
    result.verification = execution
    if not execution.ok:
        result.reasons.append(f"{method}: the skill failed when re-run — {execution.error}")
        return None
    check = check_answer(execution.answer, request.expected, request.tolerance)
    if not check.passed:
        result.reasons.append(f"{method}: the re-run does not reproduce the accepted answer ({check.reason})")
        return None
    result._verified_s[code] = execution.wall_s
    return schema


def _lift_relevant(
    request: CompileRequest, code: str, settings: Settings, name: str, result: CompileResult, names: ParameterNames
) -> tuple[str, dict[str, Any]] | None:
    """The lifted code with only the parameters that matter, re-verified; None when it no longer verifies."""
    draft = lift_script(request.code, [request.query], names)
    packages = module_names(request.packages + imported_packages(request.code))
    report = check_relevance(draft, request.code, request.query, request.expected, request.tolerance, packages, settings, name)
    result.relevance = report
    if report.error:
        result.reasons.append(f"lifted: {report.error}")
        return None
    schema = signature_schema(report.code) if report.code == code else _verify("lifted", report.code, request, settings, name, result)
    if schema is None:
        return None
    for key, prop in schema["properties"].items():  # the signature's types and defaults, with the question's words and bounds
        schema["properties"][key] = {**report.parameters.get(key, {}), **prop}
    return report.code, schema


Candidate = tuple[Method, str, str, str]


def _attempt(
    candidate: Candidate, request: CompileRequest, settings: Settings, result: CompileResult, names: ParameterNames
) -> tuple[str, dict[str, Any]] | None:
    """The verified (code, schema) of a candidate, or None; a lifted one (lifted with ``names``) keeps only the parameters that matter."""
    method, code, name, _ = candidate
    schema = _verify(method, code, request, settings, name, result)
    if schema is None:
        return None
    return _lift_relevant(request, code, settings, name, result, names) if method == "lifted" else (code, schema)


def _model_rewrite(request: CompileRequest, llm: LLMClient | None, settings: Settings, result: CompileResult, names: ParameterNames) -> bool:
    """Ask the model (once) to rewrite a plain script as run(...); True when its rewrite verified and was accepted."""
    if llm is None or "def run(" in request.code:
        return False
    found = _llm_candidate(request, llm, result.reasons)
    done = _attempt(found, request, settings, result, names) if found else None
    if found and done:
        _accept(result, request, found, *done)
    return result.ok


def compile_skill(request: CompileRequest, settings: Settings, llm: LLMClient | None = None) -> CompileResult:
    """Generalise and verify; the first candidate that reproduces the accepted answer becomes the skill (not stored)."""
    result = CompileResult()
    calls_before = len(llm.calls) if llm else 0
    parameterless: tuple[Candidate, str, dict[str, Any]] | None = None
    model_first = settings.skill_generaliser == "llm"
    names = SandboxSignatures(settings)  # in the sandbox, once for both liftings of the script
    if model_first and _model_rewrite(request, llm, settings, result, names):
        return _finish(result, llm, calls_before, settings)
    for candidate in _candidates(request, result.reasons, names):
        done = _attempt(candidate, request, settings, result, names)
        if done is None:
            continue
        if done[1]["properties"] or candidate[0] == "signature":
            _accept(result, request, candidate, *done)
            break
        parameterless = (candidate, *done)
        result.reasons.append("lifted: no constant the question states changes the answer")
    if not result.ok and not model_first:
        _model_rewrite(request, llm, settings, result, names)
    if not result.ok and parameterless is not None:
        _accept(result, request, *parameterless)
    if not result.ok:
        literal = _literal_candidate(request)
        done = _attempt(literal, request, settings, result, names)
        if done:
            _accept(result, request, literal, *done)
    return _finish(result, llm, calls_before, settings)


def _finish(result: CompileResult, llm: LLMClient | None, calls_before: int, settings: Settings) -> CompileResult:
    """The result with its model calls and the skill's declared wall time (from its own verification run)."""
    result.llm_calls = list(llm.calls[calls_before:]) if llm else []
    if result.skill is not None:
        result.skill.resources = SkillResources(
            walltime_s=declared_walltime(result._verified_s.get(result.skill.code, 0.0), settings), gpu_preferred=prefers_gpu(result.skill.code)
        )
    return result


def _accept(result: CompileResult, request: CompileRequest, candidate: Candidate, code: str, schema: dict[str, Any]) -> None:
    method, _, name, description = candidate
    params = {k: v["default"] for k, v in schema["properties"].items()}
    packages = module_names(request.packages + imported_packages(request.code) + imported_packages(code))
    result.ok, result.method = True, method
    result.skill = Skill(
        name=name,
        description=description,
        parameters=ParameterSchema.model_validate(schema),
        code=code,
        packages=packages,
        output_type=request.spec.output_type,
        unit=request.spec.unit,
        test_case=TestCase(params=params, expected=request.expected, tolerance=request.tolerance),
        provenance=request.provenance,
        method=method,
        hidden_inputs=result.relevance.hidden_inputs if method == "lifted" and result.relevance else [],
        independent_of=result.relevance.independent_of if method == "lifted" and result.relevance else [],
        tunables=result.relevance.tunables if method == "lifted" and result.relevance else [],
    )
