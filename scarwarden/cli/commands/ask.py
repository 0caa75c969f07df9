from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from scarwarden.cli.commands._common import echo_json, get_repo
from scarwarden.cli.commands._human import answer_option, kept_if_lost, prompt_human
from scarwarden.cli.commands._recall_text import format_result, read_task
from scarwarden.errors import ScarwardenError, ValidationError
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.api import Memory, Recall, Recorded
    from scarwarden.recall.result import RecallResult

PROMPT = "Memory has nothing on this task. What should the agent do?"
#: What a staged (--no-commit) episode needs first: distill reads committed episodes only.
STAGED = "commit it (git commit): distill reads committed episodes only; "


@click.command()
@click.argument("task", nargs=-1, required=True)
@click.option(
    "--answer",
    help="The human's answer, recorded when the verdict is ASK_HUMAN or ACT_AND_FLAG "
    "(instead of a prompt; '-' reads it from stdin); on ACT only with --force.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Record --answer even when the verdict is ACT (the human overrides memory).",
)
@click.option(
    "--confirm",
    "confirm",
    metavar="RULE",
    help="Record that RULE (one recall showed, e.g. a candidate on ASK_HUMAN) applies to "
    "TASK: an episode citing it, so the task's words reach the rule. PB-3, pb-03 accepted; "
    "a rule recall does not show for TASK is refused (exit 2).",
)
@click.option("--no-commit", is_flag=True, help="Stage the new episode instead of committing it.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print recall's JSON plus {meaning, episode, warnings} (episode: the recorded episode, or "
    "null; warnings: what privacy: warned about in it, recorded anyway).",
)
@click.pass_context
def ask(
    ctx: click.Context,
    task: tuple[str, ...],
    answer: str | None,
    force: bool,
    confirm: str | None,
    no_commit: bool,
    as_json: bool,
) -> None:
    """Recall for TASK; when memory has nothing, ask a human and remember the answer.

    TASK may be several words, or '-' to read it from stdin. On ACT or ACT_AND_FLAG it
    shows the rules to follow, with their citations and what the verdict means. On
    ASK_HUMAN it asks: a prompt on a terminal, or --answer for scripts. The answer is
    recorded as a new episode (source: human-answer, the task, the answer as its
    correction, tags from the task's words) and committed, so the next `scarwarden
    distill` can learn a rule from it. Without a terminal and without --answer it exits
    1 rather than wait. An --answer given on ACT_AND_FLAG (or on ACT with --force) is
    recorded too, referring to the recalled rules (refs: the episodes they cite): the
    human's answer is never thrown away, not even when recall fails (a playbook that
    does not parse: --answer is recorded with no refs, then exit 1).

    \b
    Examples:
      scarwarden ask "Draft a LinkedIn post announcing our beta"
      scarwarden ask "Book travel for the Berlin conference" \\
          --answer "Use the travel portal; economy class; hotel under 150 EUR a night"
      scarwarden ask "Rename the production Kafka topic" \\
          --answer "Announce it in #data a week ahead; keep the old topic mirrored"
      scarwarden ask "Book a table for the team dinner" --confirm PB-06
    """
    from scarwarden.api import Memory

    answer = answer_option(answer, task_from_stdin=task == ("-",))
    memory = Memory(get_repo(ctx))
    if confirm is not None:
        _confirm(memory, read_task(task), confirm, answer, as_json=as_json, staged=no_commit)
        return
    found = _recall(memory, read_task(task), answer, as_json=as_json, staged=no_commit)
    episode = _record(memory, found, answer, force=force, staged=no_commit)
    _print(memory.repo, found.engine, episode, as_json=as_json, staged=no_commit)


def _record(
    memory: Memory, found: Recall, answer: str | None, *, force: bool, staged: bool
) -> Recorded | None:
    """The human's answer, given or (on ASK_HUMAN) asked for, recorded when the verdict
    calls for it; one typed at the prompt is printed back if recording fails."""
    from scarwarden.answers.asking import refs_for_verdict
    from scarwarden.recall.router import ASK_HUMAN

    result: RecallResult = found.engine
    typed = result.verdict == ASK_HUMAN and answer is None
    if typed:
        answer = prompt_human(
            "ask",
            result.task,
            PROMPT,
            show=format_result(result, playbook_rel=memory.repo.playbook_rel),
            repo=memory.repo,
        )
    refs = None if answer is None else refs_for_verdict(result, force=force)
    if answer is not None and refs is not None:
        with kept_if_lost("ask", result.task, answer, typed=typed):
            return memory.answer(result.task, answer, receipt=_receipt(found), refs=refs, commit=not staged)
    if answer is not None:
        click.echo(
            f"memory already covers this ({result.verdict}); --answer was not recorded "
            "(add --force to record it anyway)",
            err=True,
        )
    return None


def _confirm(
    memory: Memory, task: str, rule_id: str, answer: str | None, *, as_json: bool, staged: bool
) -> None:
    """``--confirm``: record the human's confirmation of a rule for the task."""
    from scarwarden.errors import UsageError
    from scarwarden.recall.engine import check_task

    if answer is not None:
        raise UsageError("--confirm and --answer are two answers: give one", hint="run ask twice")
    episode, confirmed = memory.confirm(check_task(task), rule_id, commit=not staged)
    _warn(episode)
    if as_json:
        data = {"task": episode.episode["task"], "confirmed": confirmed, "episode": episode.episode}
        echo_json({**data, "warnings": [warning.to_json() for warning in episode.warnings]})
        return
    click.echo(episode.id)
    click.echo(
        f"{'Staged' if staged else 'Recorded and committed'} the confirmation as {episode.id}; "
        f"{STAGED if staged else ''}'scarwarden distill' adds it to the rule's citations, and the "
        "task's words then reach it.",
        err=True,
    )


def _recall(memory: Memory, task: str, answer: str | None, *, as_json: bool, staged: bool) -> Recall:
    """Recall for ``task``. When it cannot run (a playbook that does not parse), an
    ``--answer`` is recorded all the same (:func:`_record_unrecalled`) and recall's
    failure then ends the command (exit 1), saying what to fix; without an answer it
    ends before any prompt, so the human types nothing that would be lost."""
    try:
        return memory.recall(task)
    except ValidationError as failed:
        if answer is None:
            raise
        _record_unrecalled(memory, task, answer, as_json=as_json, staged=staged)
        raise ScarwardenError(
            f"recall failed: {failed.message}", hint=failed.hint, problems=failed.problems
        ) from None


def _receipt(found: Recall) -> dict[str, Any] | None:
    """Recall's receipt, for the answer's ``recalled:`` block; ``None`` when recall read a
    playbook with edits not committed yet: the gate proves a receipt from the committed
    playbook only, and would refuse the answer (saying so on stderr)."""
    if found.playbook_commit:
        return found.receipt
    click.echo(
        "note: the playbook has changes not committed yet: the answer is recorded without "
        "recall's receipt (a receipt names a committed playbook; commit it first to keep one)",
        err=True,
    )
    return None


def _record_unrecalled(memory: Memory, task: str, answer: str, *, as_json: bool, staged: bool) -> None:
    """The answer recorded without a recall, referring to no rule (the episode does not
    need the playbook), printed as :func:`_print` prints a recorded one."""
    episode = memory.answer(task, answer, refs=[], commit=not staged)
    _warn(episode)
    if as_json:
        data = {"task": episode.episode["task"], "verdict": None, "rules": [], "meaning": None}
        echo_json({**data, "episode": episode.episode, "warnings": [w.to_json() for w in episode.warnings]})
    else:
        click.echo(episode.id)
    click.echo(
        f"{'Staged' if staged else 'Recorded and committed'} the answer as {episode.id} "
        "(source: human-answer), referring to no rule: recall could not run.",
        err=True,
    )


def _print(
    repo: MemoryRepo, result: RecallResult, episode: Recorded | None, *, as_json: bool, staged: bool
) -> None:
    """Recall's result, or the ID of the episode the answer became (and what it means)."""
    if episode is not None:
        _warn(episode)
    if as_json:
        data = result.to_json()
        data["meaning"] = result.meaning
        data["episode"] = None if episode is None else episode.episode
        data["warnings"] = [] if episode is None else [warning.to_json() for warning in episode.warnings]
        echo_json(data)
        return
    if episode is None:
        click.echo(format_result(result, playbook_rel=repo.playbook_rel))
        return
    click.echo(episode.id)
    click.echo(
        f"{'Staged' if staged else 'Recorded and committed'} the answer as "
        f"{episode.id} (source: human-answer); {STAGED if staged else ''}'scarwarden distill' "
        f"can {'then' if staged else 'now'} learn from it.",
        err=True,
    )


def _warn(episode: Recorded) -> None:
    """What the write warned about and recorded anyway, on stderr as ``episode add`` says it."""
    for warning in episode.warnings:
        click.echo(f"warning: {warning}", err=True)
