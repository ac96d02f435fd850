from deployments.sandbox.models import ExecutionResult
from skills.answer_spec import AnswerSpec
from tasks.models import (
    CodeAgentResult,
    DebugAttempt,
    DebugResult,
    Solution,
    SolveRequest,
)
from tasks.output import output_processor


def ran(answer=None, ok=True):
    return ExecutionResult(exit_code=0 if ok else 1, answer_found=ok, answer=answer if ok else None, error=None if ok else "boom")


def branch(strategy, answer, ok=True):
    attempt = DebugAttempt(attempt=1, solution=Solution(code=f"# {strategy}"), execution=ran(answer, ok), error=None if ok else "boom")
    return DebugResult(stage=f"debug:{strategy}", strategy=strategy, attempts=[attempt], success=ok, error=None if ok else "boom")


REQUEST = SolveRequest(query="q", spec=AnswerSpec(output_type="float", unit="eV", decimals=2))
FAILED_FIRST = CodeAgentResult(stage="code-agent", solution=Solution(code="x"), execution=ran(ok=False), error="first failed")


def test_agreeing_branches_beat_pipeline_order():
    final = output_processor.fn.__wrapped__(REQUEST, FAILED_FIRST, [branch("a", 1.0), branch("b", 2.001), branch("c", 1.999)])
    assert final.success and final.answer == 2.0 and final.formatted == "2.0 eV"
    assert final.agreeing_sources == ["debug:b", "debug:c"] and final.code == "# b"


def test_ties_keep_pipeline_order():
    final = output_processor.fn.__wrapped__(REQUEST, FAILED_FIRST, [branch("a", 1.0), branch("b", 3.0)])
    assert final.answer == 1.0 and final.source == "debug:a"


def test_answers_in_the_wrong_format_are_not_candidates():
    final = output_processor.fn.__wrapped__(REQUEST, FAILED_FIRST, [branch("a", "about nine"), branch("b", 9.0)])
    assert final.answer == 9.0


def test_nothing_valid_lists_every_source():
    final = output_processor.fn.__wrapped__(REQUEST, FAILED_FIRST, [branch("a", None, ok=False), branch("b", "x")])
    assert not final.success
    assert "code-agent: first failed" in final.error and "debug:a: boom" in final.error and "debug:b: expected a number" in final.error
