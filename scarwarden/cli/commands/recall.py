from __future__ import annotations

import shlex

import click

from scarwarden.cli.commands._common import echo_json, get_repo, limit_option
from scarwarden.recall.result import RecallResult

_VERDICT_COLOUR = {"ACT": "green", "ACT_AND_FLAG": "yellow", "ASK_HUMAN": "red"}


def read_task(words: tuple[str, ...]) -> str:
    """TASK words joined by spaces; a single ``-`` reads the task from stdin."""
    if words == ("-",):
        from scarwarden.cli.commands._input import read_stdin

        return read_stdin("the task")
    return " ".join(words)


@click.command()
@click.argument("task", nargs=-1, required=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print {task, verdict, playbook_commit, rules: [{id, title, text, score, "
    "matched_tags, matched_terms, contributions, episode_ids}]}.",
)
@limit_option("At most N rules (default: recall.limit in scarwarden.yaml, 5).")
@click.option(
    "--explain", is_flag=True, help="Show the full arithmetic: idf, tf, length normalisation, weights."
)
@click.option("--no-log", is_flag=True, help="Do not append this recall to the recall log.")
@click.pass_context
def recall(
    ctx: click.Context, task: tuple[str, ...], as_json: bool, limit: int | None, explain: bool, no_log: bool
) -> None:
    """Rules that apply to TASK, why each matched, and the router's verdict.

    Deterministic (no model, no network): the same playbook and task give the same
    output, byte for byte. The verdict says how to proceed: ACT (follow the rules),
    ACT_AND_FLAG (follow them, but state your assumptions), ASK_HUMAN (memory has
    nothing: ask, e.g. with `scarwarden ask`). Each recall is appended to the recall
    log (`scarwarden log`) unless --no-log. TASK may be several words, or `-` to read
    it from stdin (at most 20,000 characters; no NUL, ESC or other control character
    but tab and newline: exit 2).

    \b
    Examples:
      scarwarden recall "Draft a LinkedIn post announcing our beta"
      scarwarden recall "Post our discount code on Twitter" --json
      scarwarden recall --explain --limit 3 "Close the billing ticket"
    """
    from scarwarden.api import Memory
    from scarwarden.recall.explain import HEADING

    repo = get_repo(ctx)
    found = Memory(repo).recall(read_task(task), limit=limit, explain=explain, log=not no_log)
    if as_json:
        echo_json(found.data)
        return
    click.echo(format_result(found.engine, playbook_rel=repo.playbook_rel))
    if found.explanation_lines is not None:
        click.echo("")
        click.echo("\n".join([click.style(HEADING, bold=True), *found.explanation_lines]))


def candidate_lines(result: RecallResult) -> list[str]:
    """ASK_HUMAN's "nearest, unconfirmed" section: rules (or failed episodes) to ask
    the human about, never to act on."""
    head = click.style("nearest, unconfirmed: ask before using", bold=True, fg="yellow")
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
    verdict = click.style(result.verdict, fg=_VERDICT_COLOUR[result.verdict], bold=True)
    lines = [f"{verdict}  {result.meaning}"]
    if not result.rules:
        lines.append("No rule in memory matches this task.")
    words = result.stats.words if result.stats is not None else {}
    for rank, rule in enumerate(result.rules, 1):
        lines.append("")
        lines.append(
            click.style(f"{rank}. {rule.id}: {rule.title}", bold=True)
            + f"  (score {rule.score:g}, confidence {rule.confidence:g})"
        )
        lines.append(f"   {rule.text}")
        lines += [f"   evidence ({q.episode_id}): {q.shown}" for q in rule.quotes]
        lines.append(f"   why: {rule.why(words)}")
        lines.append(f"   cite: {rule.citation()}")
        if rule.evidence_redacted:
            lines.append(
                click.style(f"   evidence redacted: {', '.join(rule.evidence_redacted)}", fg="yellow")
            )
    if result.verdict == "ASK_HUMAN":
        lines += candidate_lines(result)
    lines.append("")
    if result.playbook_commit:
        lines.append(
            click.style(
                f"playbook: {result.playbook_commit[:12]} (last commit that changed {playbook_rel})", dim=True
            )
        )
    else:
        lines.append(
            click.style(
                "playbook: uncommitted (the working-tree playbook is not a committed version)", dim=True
            )
        )
    if result.receipt is not None:
        lines.append(
            click.style(
                f"receipt: {result.receipt.id} (record it: scarwarden episode add --receipt "
                f"{result.receipt.id} ...)",
                dim=True,
            )
        )
    return "\n".join(lines)
