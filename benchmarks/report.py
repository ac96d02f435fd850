r"""The benchmark report: markdown tables (aggregates, then every case) and two PNG plots, written to a folder.

>>> from benchmarks.metrics import CaseRow, SystemSummary
>>> row = SystemSummary(passed=2, total=4, success_rate=0.5, pass_at_k={"1": 0.5}, mean_wall_s=1.0,
...                     mean_llm_calls=0, mean_tokens=0)
>>> print(markdown_table({"reference": row}).splitlines()[2])
| reference | 2/4 | 50.0 % | 50.0 % | 1.00 | 0.0 | 0 |
>>> case = CaseRow(task_id="t", level=1, rep=2, system="deep", passed=False, answer="a|b", expected=3,
...                reason="the run raised ValueError: bad\nline 2", wall_s=1.5, llm_calls=2)
>>> print(cases_table([case]).splitlines()[2])
| t | 1 | 2 | deep | no | "a\|b" | 3 | the run raised ValueError: bad⏎line 2 | 1.50 | 2 |
>>> print(cell("C:\\x|y " * 9, width=12))
C:\\x\|y C:\\x…
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import JsonValue

from benchmarks.metrics import CaseRow, SystemSummary
from deployments.files import write_atomic

__all__ = ["markdown_table", "breakdown_table", "cases_table", "cell", "write_report", "plot_pass_at_k", "plot_by_category"]

ANSWER_WIDTH = 40
REASON_WIDTH = 80


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def markdown_table(summaries: dict[str, SystemSummary]) -> str:
    """Systems as rows: passed/total, success rate, pass@k, mean wall time, LLM calls and tokens."""
    ks = sorted({k for s in summaries.values() for k in s.pass_at_k}, key=int)
    head = "| system | passed | success | " + " | ".join(f"pass@{k}" for k in ks) + " | mean wall s | mean LLM calls | mean tokens |"
    rule = "|" + "---|" * (len(ks) + 6)
    rows = [
        f"| {name} | {s.passed}/{s.total} | {_pct(s.success_rate)} | "
        + " | ".join(_pct(s.pass_at_k.get(k)) for k in ks)
        + f" | {s.mean_wall_s:.2f} | {s.mean_llm_calls:.1f} | {s.mean_tokens:.0f} |"
        for name, s in summaries.items()
    ]
    return "\n".join([head, rule, *rows])


def breakdown_table(summaries: dict[str, SystemSummary], field: str) -> str:
    """Success rate per group (``by_level``, ``by_category`` or ``by_difficulty``) and system."""
    groups = sorted({g for s in summaries.values() for g in getattr(s, field)})
    head = f"| {field.removeprefix('by_')} | " + " | ".join(summaries) + " |"
    rule = "|" + "---|" * (len(summaries) + 1)
    rows = [f"| {g} | " + " | ".join(_pct(getattr(s, field).get(g)) for s in summaries.values()) + " |" for g in groups]
    return "\n".join([head, rule, *rows])


def cell(text: str, width: int) -> str:
    """``text`` as one markdown table cell: at most ``width`` characters, on one line, ``|`` and ``\\`` escaped."""
    text = text.replace("\r\n", "\n").replace("\n", "⏎")
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _json_cell(value: JsonValue) -> str:
    return "–" if value is None else cell(json.dumps(value, ensure_ascii=False), ANSWER_WIDTH)


def cases_table(cases: Sequence[CaseRow]) -> str:
    """Every case as a row: task, level, repetition, system, passed, answers (shortened), why it failed, costs."""
    head = "| task | level | rep | system | passed | answer | expected | reason | wall s | LLM calls |"
    rule = "|" + "---|" * 10
    rows = [
        f"| {cell(c.task_id, REASON_WIDTH)} | {c.level} | {c.rep} | {cell(c.system, REASON_WIDTH)} | {'yes' if c.passed else 'no'} | "
        f"{_json_cell(c.answer)} | {_json_cell(c.expected)} | {cell(c.reason or '', REASON_WIDTH)} | {c.wall_s:.2f} | {c.llm_calls} |"
        for c in cases
    ]
    return "\n".join([head, rule, *rows])


def _figure():  # noqa: ANN202 - matplotlib figure and axes
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, *plt.subplots(figsize=(6.4, 4.0), dpi=100)


def plot_pass_at_k(summaries: dict[str, SystemSummary], path: Path) -> Path:
    """pass@k against k, one line per system."""
    plt, fig, ax = _figure()
    for name, s in summaries.items():
        ks = sorted(s.pass_at_k, key=int)
        ax.plot([int(k) for k in ks], [100 * s.pass_at_k[k] for k in ks], marker="o", label=name)
    ax.set(xlabel="k (runs drawn)", ylabel="pass@k (%)", ylim=(0, 120), title="pass@k per system")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(loc="upper center", ncol=max(len(summaries), 1), fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_by_category(summaries: dict[str, SystemSummary], path: Path) -> Path:
    """Success rate per category, grouped bars per system."""
    plt, fig, ax = _figure()
    categories = sorted({c for s in summaries.values() for c in s.by_category})
    width = 0.8 / max(len(summaries), 1)
    for i, (name, s) in enumerate(summaries.items()):
        xs = [j + i * width for j in range(len(categories))]
        ax.bar(xs, [100 * s.by_category.get(c, 0.0) for c in categories], width, label=name)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(categories))], categories, rotation=20, ha="right")
    ax.set(ylabel="success rate (%)", ylim=(0, 120), title="accuracy by category")
    ax.legend(loc="upper center", ncol=max(len(summaries), 1), fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_report(
    summaries: dict[str, SystemSummary], header: str, folder: Path, cases: Sequence[CaseRow] = ()
) -> tuple[str, list[Path]]:
    """Write ``report.md`` (aggregates, plots, then ``cases``), ``pass_at_k.png`` and ``by_category.png`` to ``folder``.

    Returns the markdown and the plot files.
    """
    folder.mkdir(parents=True, exist_ok=True)
    plots = [plot_pass_at_k(summaries, folder / "pass_at_k.png"), plot_by_category(summaries, folder / "by_category.png")]
    markdown = "\n\n".join(
        [
            header,
            "## Systems",
            markdown_table(summaries),
            "## By level",
            breakdown_table(summaries, "by_level"),
            "## By category",
            breakdown_table(summaries, "by_category"),
            "## By difficulty (P value across systems)",
            breakdown_table(summaries, "by_difficulty"),
            "![pass@k](pass_at_k.png)\n\n![accuracy by category](by_category.png)",
            "## Cases",
            cases_table(cases),
        ]
    )
    write_atomic(folder / "report.md", markdown + "\n")
    return markdown, plots
