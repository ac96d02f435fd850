"""Turn accepted code into a verified, parameterised skill: generalise → verify (the store is the caller's).

Generalising tries, in order, until one candidate verifies:

1. ``signature`` — the code already defines ``run(p: type = default, …)``: its signature is the schema;
2. ``llm`` — the model rewrites the script as such a ``run`` (one call), then the result is checked;
3. ``literal`` — the script itself wrapped as ``run()`` with no parameters (reuse for the same question).

Verifying runs the candidate in the sandbox with its default parameters (the original ones)
and compares the result with the accepted answer within the tolerance. Only a verified
skill is stored (``tasks/compile.py``, the compile stage), with provenance; a failed compile stores nothing.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from deployments.llm.client import LLMCall, LLMClient
from deployments.llm.transport import LLMError
from deployments.packages import imported_packages, module_names
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings
from skills.answer_check import check_answer
from skills.answer_spec import AnswerSpec
from skills.documents import Provenance, Skill, TestCase, slug
from skills.params import SkillCodeError, run_summary, signature_schema
from skills.retrieval import tokens
from skills.runner import run_skill_code

__all__ = ["SkillDraft", "CompileRequest", "CompileResult", "compile_skill", "default_tolerance"]

Method = Literal["signature", "llm", "literal"]

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
    llm_calls: list[LLMCall] = Field(default_factory=list)


def default_tolerance(expected: JsonValue, spec: AnswerSpec) -> float | None:
    """How close a re-run must come: half a unit in the last asked decimal, else 1e-6 relative; exact for non-floats."""
    if not isinstance(expected, float):
        return None
    if spec.decimals is not None:
        return 0.5 * 10.0 ** (-spec.decimals) + 1e-12
    return 1e-6 * max(1.0, abs(expected))


def _draft(request: CompileRequest, llm: LLMClient) -> SkillDraft:
    system = (
        "You turn a working Python script into a reusable function. Define def run(name: type = default, ...) -> type "
        "with one parameter per input a user would change (material, molecule, SMILES, numeric settings); annotate each "
        "with str, int, float, bool, list or dict; each default must be the value the script used. run returns the answer "
        "(JSON-serialisable) instead of printing it. Document each parameter in run's docstring as 'name: meaning'."
    )
    user = f"Question it answered: {request.query}\nAnswer: {request.expected!r}\n\nScript:\n```python\n{request.code}\n```"
    return llm.structured("compile", system, user, SkillDraft)


def _candidates(request: CompileRequest, llm: LLMClient | None, reasons: list[str]) -> list[tuple[Method, str, str, str]]:
    """(method, code, name, description) in the order they are tried."""
    fallback_name = request.name or slug(" ".join(tokens(request.query)[:6]))
    description = request.description or request.query
    found: list[tuple[Method, str, str, str]] = []
    try:
        signature_schema(request.code)
        return [("signature", request.code, fallback_name, request.description or run_summary(request.code) or description)]
    except SkillCodeError:
        pass
    if llm is not None:
        try:
            draft = _draft(request, llm)
            found.append(("llm", draft.code, request.name or slug(draft.name), request.description or draft.description))
        except LLMError as exc:
            reasons.append(f"llm: {exc}")
    literal = _LITERAL.format(script=request.code, doc=request.query.replace('"""', "'''").replace("\\", "\\\\"))
    found.append(("literal", literal, fallback_name, description))
    return found


def compile_skill(request: CompileRequest, settings: Settings, llm: LLMClient | None = None) -> CompileResult:
    """Generalise and verify; the first candidate that reproduces the accepted answer becomes the skill (not stored)."""
    result = CompileResult()
    calls_before = len(llm.calls) if llm else 0
    for method, code, name, description in _candidates(request, llm, result.reasons):
        try:
            schema = signature_schema(code)
        except SkillCodeError as exc:
            result.reasons.append(f"{method}: {exc}")
            continue
        params = {k: v["default"] for k, v in schema["properties"].items()}
        packages = module_names(request.packages + imported_packages(request.code) + imported_packages(code))
        execution = run_skill_code(code, packages, params, settings, f"verify-{name}")
        result.verification = execution
        if not execution.ok:
            result.reasons.append(f"{method}: the skill failed when re-run — {execution.error}")
            continue
        check = check_answer(execution.answer, request.expected, request.tolerance)
        if not check.passed:
            result.reasons.append(f"{method}: the re-run does not reproduce the accepted answer ({check.reason})")
            continue
        result.ok, result.method = True, method
        result.skill = Skill(
            name=name,
            description=description,
            parameters=schema,
            code=code,
            packages=packages,
            output_type=request.spec.output_type,
            unit=request.spec.unit,
            test_case=TestCase(params=params, expected=request.expected, tolerance=request.tolerance),
            provenance=request.provenance,
        )
        break
    result.llm_calls = list(llm.calls[calls_before:]) if llm else []
    return result
