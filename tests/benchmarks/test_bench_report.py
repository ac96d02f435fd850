"""The per-case rows of a benchmark and their markdown table: order, values, shortening and escaping."""

from pathlib import Path

from benchmarks.metrics import CaseRow, SystemSummary, case_rows
from benchmarks.report import ANSWER_WIDTH, cases_table, cell, write_report
from skills.documents import BenchmarkRecord


def record(system: str, task: str, rep: int, level: int = 1, passed: bool = True, **fields) -> BenchmarkRecord:
    return BenchmarkRecord(run_id="r", system=system, rep=rep, level=level, task_id=task, passed=passed, **fields)


def row(**fields) -> CaseRow:
    defaults = {"task_id": "t", "level": 1, "rep": 1, "system": "deep", "passed": False, "answer": 4, "expected": 3,
                "reason": "got 4.0, expected exactly 3.0", "wall_s": 2.5, "llm_calls": 3}  # fmt: skip
    return CaseRow(**{**defaults, **fields})


def cells(line: str) -> list[str]:
    """A markdown table row split at its unescaped pipes, as a GFM renderer splits it."""
    found, current, escaped = [], "", False
    for char in line.strip()[1:]:
        if char == "|" and not escaped:
            found.append(current.strip())
            current = ""
            continue
        current += char
        escaped = char == "\\" and not escaped
    return found


def test_case_rows_are_ordered_by_task_level_rep_then_system_and_keep_the_record_values():
    records = [
        record("deep", "b", 1),
        record("native", "a", 2, passed=False, answer="4 eV", expected=3, reason="got the text '4 eV', expected a number", llm_calls=1, wall_s=1.25),
        record("deep", "a", 2),
        record("native", "a", 1, level=0),
        record("reference", "a", 1),  # a system not asked for is left out
    ]
    rows = case_rows(records, ["native", "deep"])
    assert [(r.task_id, r.level, r.rep, r.system) for r in rows] == [("a", 0, 1, "native"), ("a", 1, 2, "native"), ("a", 1, 2, "deep"), ("b", 1, 1, "deep")]
    assert rows[1].model_dump() == {
        "task_id": "a", "level": 1, "rep": 2, "system": "native", "passed": False, "answer": "4 eV", "expected": 3,
        "reason": "got the text '4 eV', expected a number", "wall_s": 1.25, "llm_calls": 1,
    }  # fmt: skip


def test_a_case_row_is_one_table_row_whatever_its_answer_and_reason_hold():
    rows = [
        row(answer="a|b\nc\\|d " * 20, expected=["x|y", 2], reason="the run raised ValueError: bad\nline 2 | more"),
        row(task_id="ok", passed=True, answer=3, reason=None, llm_calls=0),
        row(task_id="none", answer=None, reason="no answer"),
    ]
    lines = cases_table(rows).splitlines()
    assert lines[0] == "| task | level | rep | system | passed | answer | expected | reason | wall s | LLM calls |"
    assert len(lines) == 2 + len(rows) and all(len(cells(line)) == 10 for line in lines)
    first = cells(lines[2])
    assert first[:5] == ["t", "1", "1", "deep", "no"] and first[8:] == ["2.50", "3"]
    assert len(first[5].replace("\\\\", "\\").replace("\\|", "|")) == ANSWER_WIDTH and first[5].endswith("…")
    assert first[5].startswith('"a\\|b\\\\nc\\\\\\\\\\|d ')  # JSON's \n and \\ shown with their backslashes escaped
    assert first[6] == '["x\\|y", 2]'
    assert first[7] == "the run raised ValueError: bad⏎line 2 \\| more"
    assert cells(lines[3])[4:8] == ["yes", "3", "3", ""]
    assert cells(lines[4])[5:8] == ["–", "3", "no answer"]


def test_cell_shortens_to_the_width_and_escapes():
    assert cell("short", 10) == "short"
    assert cell("x" * 11, 10) == "x" * 9 + "…"
    assert cell("a|b", 10) == "a\\|b" and cell("a\\b", 10) == "a\\\\b" and cell("a\r\nb\nc", 10) == "a⏎b⏎c"


def test_the_report_lists_the_cases_after_the_aggregates(tmp_path: Path):
    summary = SystemSummary(passed=0, total=1, success_rate=0.0, pass_at_k={"1": 0.0}, mean_wall_s=2.5, mean_llm_calls=3, mean_tokens=10)
    markdown, plots = write_report({"deep": summary}, "# head", tmp_path, [row()])
    assert (tmp_path / "report.md").read_text() == markdown + "\n"
    assert markdown.index("## Systems") < markdown.index("## By difficulty") < markdown.index("![pass@k]") < markdown.index("## Cases")
    assert markdown.rstrip().endswith("| t | 1 | 1 | deep | no | 4 | 3 | got 4.0, expected exactly 3.0 | 2.50 | 3 |")
    assert [p.name for p in plots] == ["pass_at_k.png", "by_category.png"]
