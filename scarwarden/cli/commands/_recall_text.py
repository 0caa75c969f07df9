"""Recall's readable output and its task words, without click: the ``recall`` command
and the click-free recall door (:mod:`scarwarden.cli.door`) print the same text."""

from __future__ import annotations

import shlex

from scarwarden.cli.output import echo, json_text, style
from scarwarden.recall.result import RecallResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.repo import MemoryRepo

_VERDICT_COLOUR = {"ACT": "green", "ACT_AND_FLAG": "yellow", "ASK_HUMAN": "red"}


def read_task(words: tuple[str, ...]) -> str:
    """TASK words joined by spaces; a single ``-`` reads the task from stdin."""
    if words == ("-",):
        from scarwarden.cli.commands._input import read_stdin

        return read_stdin("the task")
    return " ".join(words)


def print_recall(
    repo: MemoryRepo, words: tuple[str, ...], *, as_json: bool, limit: int | None, explain: bool, no_log: bool
) -> None:
    """The ``recall`` command's work once its command line is read (by click or the
    door): recall TASK ``words`` and print the readable form, or ``--json``'s."""
    from scarwarden.api import Memory
    from scarwarden.recall.explain import HEADING

    found = Memory(repo).recall(read_task(words), limit=limit, explain=explain, log=not no_log)
    if as_json:
        echo(json_text(found.data))
        return
    echo(format_result(found.engine, playbook_rel=repo.playbook_rel))
    if found.explanation_lines is not None:
        echo("")
        echo("\n".join([style(HEADING, bold=True), *found.explanation_lines]))


def candidate_lines(result: RecallResult) -> list[str]:
    """ASK_HUMAN's "nearest, unconfirmed" section: rules (or failed episodes) to ask
    the human about, never to act on."""
    head = style("nearest, unconfirmed: ask before using", bold=True, fg="yellow")
    if not result.candidates:
        return ["", head, "   (none: no rule and no failed episode shares a word with this task)"]
    lines = ["", head]
    for c in result.candidates:
        if c.kind == "rule":
            lines.append(f" - {c.id}: {c.title}  (score {c.score:g}, confidence {c.confidence:g})")
            lines.append(f"   {c.text}")
            lines.append(f"   confirm it: scarwarden ask --confirm {c.id} {shlex.quote(result.task)}")
        else:
            lines.append(f" - failed episode {c.id}: {c.title}")
        lines += [f"   evidence ({q.episode_id}): {q.shown}" for q in c.quotes]
    return lines


def format_result(result: RecallResult, *, playbook_rel: str = "the playbook") -> str:
    """The readable form: the verdict and its meaning, then the ranked rules and why."""
    verdict = style(result.verdict, fg=_VERDICT_COLOUR[result.verdict], bold=True)
    lines = [f"{verdict}  {result.meaning}"]
    if not result.rules:
        lines.append("No rule in memory matches this task.")
    words = result.stats.words if result.stats is not None else {}
    for rank, rule in enumerate(result.rules, 1):
        lines.append("")
        lines.append(
            style(f"{rank}. {rule.id}: {rule.title}", bold=True)
            + f"  (score {rule.score:g}, confidence {rule.confidence:g})"
        )
        lines.append(f"   {rule.text}")
        lines += [f"   evidence ({q.episode_id}): {q.shown}" for q in rule.quotes]
        lines.append(f"   why: {rule.why(words)}")
        lines.append(f"   cite: {rule.citation()}")
        if rule.evidence_redacted:
            lines.append(style(f"   evidence redacted: {', '.join(rule.evidence_redacted)}", fg="yellow"))
    if result.verdict == "ASK_HUMAN":
        lines += candidate_lines(result)
    lines.append("")
    if result.playbook_commit:
        lines.append(
            style(
                f"playbook: {result.playbook_commit[:12]} (last commit that changed {playbook_rel})", dim=True
            )
        )
    else:
        lines.append(
            style("playbook: uncommitted (the working-tree playbook is not a committed version)", dim=True)
        )
    if result.receipt is not None:
        lines.append(
            style(
                f"receipt: {result.receipt.id} (record it: scarwarden episode add --receipt "
                f"{result.receipt.id} ...)",
                dim=True,
            )
        )
    return "\n".join(lines)
