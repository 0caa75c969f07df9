"""Answers as terminal text: the memory side, the citation report, QC, and ``--compare``.

Plain strings, no click: ``scarwarden answer``, ``review-draft`` and the demo print
them, so this is library code (the demo may not import the CLI). ``--compare`` is two
columns on a terminal at least :data:`TWO_COLUMNS_MIN` wide, one side after the other
below that.
"""

from __future__ import annotations

import shutil
import textwrap
from typing import TYPE_CHECKING, Any

from scarwarden.answers.prompts import brief, no_memory_brief

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.answers.answer import AnswerResult
    from scarwarden.answers.citations import Verification
    from scarwarden.answers.qc import QCResult

#: Below this many columns the two sides of --compare are printed one after the other.
TWO_COLUMNS_MIN = 100


def terminal_width() -> int:
    return shutil.get_terminal_size((80, 24)).columns


def wrap_lines(text: str, width: int) -> list[str]:
    """``text`` wrapped to ``width``, keeping blank lines and each line's indentation."""
    out: list[str] = []
    for line in text.splitlines() or [""]:
        stripped = line.rstrip()
        if not stripped:
            out.append("")
            continue
        indent = stripped[: len(stripped) - len(stripped.lstrip())][: width // 2]
        out.extend(
            textwrap.wrap(
                stripped.strip(),
                width,
                initial_indent=indent,
                subsequent_indent=indent,
                break_on_hyphens=False,
            )
            or [""]
        )
    return out


def side_by_side(left_title: str, left: str, right_title: str, right: str, width: int) -> str:
    """Two texts in two columns of a ``width``-column terminal."""
    col = (width - 3) // 2
    lcol = [left_title[:col], "-" * col, *wrap_lines(left, col)]
    rcol = [right_title[:col], "-" * col, *wrap_lines(right, col)]
    rows = max(len(lcol), len(rcol))
    lcol += [""] * (rows - len(lcol))
    rcol += [""] * (rows - len(rcol))
    return "\n".join(f"{a.ljust(col)} | {b}".rstrip() for a, b in zip(lcol, rcol, strict=True))


def one_after_other(left_title: str, left: str, right_title: str, right: str) -> str:
    return "\n".join([f"== {left_title} ==", left, "", f"== {right_title} ==", right])


def column_width(width: int | None = None) -> int | None:
    """The width of one column of --compare, or ``None`` when the terminal is too narrow."""
    if width is None:
        width = terminal_width()
    return (width - 3) // 2 if width >= TWO_COLUMNS_MIN else None


def compare_layout(left_title: str, left: str, right_title: str, right: str, width: int | None = None) -> str:
    """Side by side on a terminal wide enough, one after the other otherwise."""
    if width is None:
        width = terminal_width()
    if column_width(width) is not None:
        return side_by_side(left_title, left, right_title, right, width)
    return one_after_other(left_title, left, right_title, right)


def verification_text(verification: Verification) -> str:
    """The citation report: the summary, then each citation verified, invented, uncited."""
    lines = [f"Citations: {verification.summary}"]
    for c in verification.verified:
        lines.append(f"  ok       {c.raw}")
    for i in verification.invented:
        target = i.rule_id + (f" {i.episode_id}" if i.episode_id else "")
        lines.append(f"  INVENTED {target}: {i.reason}")
    for rule_id in verification.uncited:
        lines.append(f"  uncited  {rule_id} was recalled but not cited")
    return "\n".join(lines)


def qc_text(qc: QCResult) -> str:
    """The reviewer's final verdict and the history of drafts."""
    lines = [qc.summary[:1].upper() + qc.summary[1:]]
    for n, rnd in enumerate(qc.rounds):
        label = "draft" if n == 0 else f"retake {n}"
        verdict = "pass" if rnd.review.passed else "retake"
        lines.append(f"  {label}: {verdict}")
        for v in rnd.review.violations:
            lines.append(f"    {v.rule_id}: {v.reason}")
        for v in rnd.review.untrusted:
            lines.append(f"    (ignored) {v.rule_id} was not recalled for this task: {v.reason}")
    return "\n".join(lines)


def memory_side_text(result: AnswerResult, *, width: int = 88) -> str:
    """The memory side as text: the answer (or the brief), its verification, QC."""
    side = result.memory
    if side is None:
        return ""
    if side.answer is None:
        return brief(result.recall, width=width, header=False)
    parts = [side.answer.strip()]
    if side.verification is not None:
        parts += ["", verification_text(side.verification)]
    if side.qc is not None:
        parts += ["", qc_text(side.qc)]
    return "\n".join(parts)


def recall_header(task: str, recall_result: Any) -> str:
    """Two lines above an answer: the task, and the verdict with the rules recalled."""
    if recall_result is None:
        return f"Task: {task}\nMemory: off (no rules sent)"
    ids = ", ".join(r.id for r in recall_result.rules) or "none"
    return f"Task: {task}\nVerdict: {recall_result.verdict}  (recalled: {ids})"


def render_compare(result: AnswerResult, width: int | None = None) -> str:
    """Both sides of a --compare result, laid out for a ``width``-column terminal."""
    if width is None:
        width = terminal_width()
    col = column_width(width) or 88
    nm = result.no_memory
    right = nm.answer.strip() if nm is not None and nm.answer else no_memory_brief(result.task, width=col)
    model = (result.memory.model if result.memory else None) or "no model"
    return compare_layout(
        f"WITH MEMORY ({model})",
        memory_side_text(result, width=col),
        f"WITHOUT MEMORY ({model})",
        right,
        width,
    )


def answer_text(result: AnswerResult) -> str:
    """The body of ``scarwarden answer``'s output for any mode (below the header)."""
    if result.mode == "compare":
        return render_compare(result)
    if result.mode == "no-memory":
        side = result.no_memory
        return side.answer.strip() if side and side.answer else (result.brief or "")
    return memory_side_text(result)
