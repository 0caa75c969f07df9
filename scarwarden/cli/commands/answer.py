"""``scarwarden answer``, ``review-draft`` and ``feedback``: answers that cite memory."""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING, Any

import click

from scarwarden.cli.commands._answer_human import ask_flow, recall_or_record, record_given_answer, warn
from scarwarden.cli.commands._common import echo_json, get_repo, limit_option, terminal_text
from scarwarden.cli.commands._human import answer_option
from scarwarden.cli.commands._input import read_file, read_stdin
from scarwarden.cli.commands._model import no_model_error
from scarwarden.errors import ScarwardenError, UsageError
from scarwarden.repo import MemoryRepo
from scarwarden.settings_check import MAX_RETAKES

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.answers.answer import AnswerResult
    from scarwarden.files.episodes import Episode
    from scarwarden.llm.client import ChatClient


def _client(repo: MemoryRepo) -> ChatClient | None:
    from scarwarden.llm.client import client_from_config

    return client_from_config(repo.config, os.environ)


# -- answer -------------------------------------------------------------------------


@click.command()
@click.argument("task")
@click.option("--no-memory", is_flag=True, help="The amnesia toggle: same task, same model, no rules.")
@click.option("--compare", is_flag=True, help="Answer with and without memory, side by side.")
@click.option(
    "--qc",
    is_flag=True,
    help="Let a reviewer check the answer against the rules; "
    "regenerate on a violation (up to answer.qc_max_retakes times).",
)
@click.option(
    "--max-retakes", type=click.IntRange(0, MAX_RETAKES), metavar="N", help="Override answer.qc_max_retakes."
)
@click.option("--strict", is_flag=True, help="Exit 1 when any citation is invented.")
@click.option("--record", is_flag=True, help="Save this run as an episode (lineage).")
@click.option("--agent", help="With --record: which agent acted.")
@click.option(
    "--answer",
    "human_answer",
    metavar="TEXT",
    help="On ASK_HUMAN: the human's answer (recorded as an episode) instead of a "
    "prompt; '-' reads it from stdin.",
)
@limit_option("Recall at most N rules (default: recall.limit in scarwarden.yaml, 5).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print {task, verdict, answer, rules, verification, model, usage, qc, ...}.",
)
@click.pass_context
def answer(
    ctx: click.Context,
    task: str,
    no_memory: bool,
    compare: bool,
    qc: bool,
    max_retakes: int | None,
    strict: bool,
    record: bool,
    agent: str | None,
    human_answer: str | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """Answer TASK ('-' reads the task from stdin) following the recalled rules, citing each one inline.

    Recall routes the task. On ACT / ACT_AND_FLAG the answer model gets the recalled rules and
    must cite every rule it applies as [PB-01, learnt in ep-..., ep-...]; code then verifies
    every citation (a cited rule must have been recalled, each cited episode must be one of that
    rule's own). On ASK_HUMAN no model guesses: you are asked, and your answer becomes a new
    episode. With no model configured the rule-grounded brief is printed instead, with a note on
    stderr (exit 0; --json says "model_configured": false). An --answer is not thrown away when
    recall fails (a playbook that does not parse): it is recorded with no refs, then exit 1.

    \b
    Exit codes: 0 ok; 1 invented citation with --strict, reviewer still objecting
    after the last retake, or ASK_HUMAN with no terminal and no --answer; 2 bad
    usage; 3 model unreachable; 4 no model configured and --no-memory or --record
    asked for a model's answer; 5 model error or invalid reviewer JSON.

    \b
    Examples:
      scarwarden answer "Draft a LinkedIn post announcing our beta"
      scarwarden answer "Post our discount code on Twitter" --strict --json
      scarwarden answer "Draft a LinkedIn post announcing our beta" --compare
      scarwarden answer "Write the release notes" --qc --record  # (exits 4: needs a model)
      scarwarden answer "Plan the office party" --answer "Ask Sam first; budget 300 EUR"
    """
    from scarwarden.answers.answer import ASK_HUMAN, answer_task

    _check_answer_options(no_memory=no_memory, compare=compare, qc=qc)
    human_answer = answer_option(human_answer, task_from_stdin=task == "-")
    repo = get_repo(ctx)
    task = read_stdin("the task") if task == "-" else task  # as ask and recall read it
    result = answer_task(
        repo,
        task,
        recalled=None if no_memory else recall_or_record(repo, task, human_answer, limit, as_json),
        memory=not no_memory,
        compare=compare,
        qc=qc,
        client=_client(repo),
        max_retakes=max_retakes,
        limit=limit,
    )
    if result.verdict == ASK_HUMAN and result.mode == "memory":
        ask_flow(repo, result, human_answer, as_json)
        return
    _record_and_print(repo, result, human_answer, agent, record=record, as_json=as_json)
    _finish(repo, result, strict=strict, record=record)


def _record_and_print(
    repo: MemoryRepo,
    result: AnswerResult,
    human_answer: str | None,
    agent: str | None,
    *,
    record: bool,
    as_json: bool,
) -> None:
    """Record the human's answer given despite a recall and, with --record, the run
    (lineage); then print the answer with both."""
    asked = record_given_answer(repo, result, human_answer)
    recorded = _record_run(repo, result, agent) if record else None
    if as_json:
        echo_json(_answer_json(result, asked, recorded))
    else:
        _print_answer(result, asked, recorded)


def _check_answer_options(*, no_memory: bool, compare: bool, qc: bool) -> None:
    """Refuse (exit 2) the option combinations that make no sense."""
    if no_memory and compare:
        raise UsageError(
            "--no-memory and --compare exclude each other",
            hint="--compare already includes the answer without memory",
        )
    if no_memory and qc:
        raise UsageError("--qc needs memory: without rules there is nothing to review against")


def _record_run(repo: MemoryRepo, result: AnswerResult, agent: str | None) -> Episode | None:
    """``--record``: the model's answer as a lineage episode, when there is one."""
    from scarwarden.answers.lineage import record_answer

    primary = result.primary
    if primary is not None and primary.answer:
        return record_answer(repo, result, agent=agent, warn=warn)
    click.echo("note: --record: there is no model answer to record", err=True)
    return None


def _answer_json(result: AnswerResult, asked: Episode | None, recorded: Episode | None) -> dict[str, Any]:
    """``answer --json``: the result plus the question asked and what was recorded."""
    from scarwarden.answers.answer import ASK_HUMAN
    from scarwarden.answers.prompts import ask_question

    data = result.to_json()
    data["question"] = ask_question(result.task) if result.verdict == ASK_HUMAN else None
    data["human_answer"] = asked.get("correction") if asked is not None else None
    data["recorded_episode"] = (
        recorded.id if recorded is not None else (asked.id if asked is not None else None)
    )
    return data


def _print_answer(result: AnswerResult, asked: Episode | None, recorded: Episode | None) -> None:
    from scarwarden.audit.answer_text import answer_text, recall_header

    click.echo(click.style(recall_header(result.task, result.recall), dim=True))
    click.echo("")
    click.echo(terminal_text(answer_text(result), lines=True))  # a model's text: no escapes run
    if asked is not None:
        click.echo(f"\nRecorded the human's answer as episode {asked.id}")
    if recorded is not None:
        click.echo(f"\nRecorded as episode {recorded.id}")
        click.echo(
            f'  what happened next: scarwarden feedback {recorded.id} --outcome "..." --correction "..."',
            err=True,
        )


def _finish(repo: MemoryRepo, result: AnswerResult, *, strict: bool, record: bool = False) -> None:
    """Exit codes after the output is printed (the boundary prints the message)."""
    if not result.model_configured:
        # The brief is the normal reduced result without a key (an agent that is itself a
        # model acts on it), so it exits 0 with a note; only a run that asked for what
        # needs a model (--no-memory, --record) fails with exit 4 (issue 18).
        if result.mode == "no-memory":
            raise no_model_error(repo, "there is no answer without memory to show")
        if record:
            raise no_model_error(repo, "there is no model answer to record (the brief was printed)")
        error = no_model_error(repo, "this is the rule-grounded brief, not a model's answer")
        click.echo(f"note: {error.message}\n  hint: {error.hint}", err=True)
        return
    side = result.memory
    if side is None:
        return
    if strict and side.verification is not None and not side.verification.ok:
        raise ScarwardenError(
            f"invented citations (--strict): {side.verification.summary}",
            hint="the answer cites rules or episodes its memory does not hold; do not use it as is",
        )
    if side.qc is not None and not side.qc.passed:
        raise ScarwardenError(
            side.qc.summary, hint="raise --max-retakes, fix the task, or edit the answer by hand"
        )


# -- review-draft -------------------------------------------------------------------


@click.command("review-draft")
@click.option("--task", required=True, help="The task the draft answers (recall runs on it).")
@click.argument("file", type=click.File("rb"))
@click.option(
    "--rewrite", is_flag=True, help="On a violation, regenerate the answer with the feedback (the QC loop)."
)
@click.option(
    "--max-retakes", type=click.IntRange(0, MAX_RETAKES), metavar="N", help="Override answer.qc_max_retakes."
)
@click.option("--strict", is_flag=True, help="Also exit 1 when any citation is invented.")
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON.")
@click.pass_context
def review_draft(
    ctx: click.Context,
    task: str,
    file: IO[bytes],
    rewrite: bool,
    max_retakes: int | None,
    strict: bool,
    as_json: bool,
) -> None:
    """Check a draft written elsewhere (FILE, or '-' for stdin) against the recalled rules.

    A reviewer model judges the draft and answers strict JSON: pass, or retake with
    the violated rule IDs and reasons (only recalled rules are trusted). The draft's
    inline citations are verified by code too, even with no model configured.

    \b
    Exit codes: 0 pass; 1 the reviewer sent the draft back (or, with --strict, a
    citation is invented); 3 model unreachable; 4 no model configured (only the
    citations were checked); 5 model error or invalid reviewer JSON.

    \b
    Examples:
      scarwarden review-draft --task "Post our discount code on Twitter" draft.txt  # (exits 4: no model)
      my-agent | scarwarden review-draft --task "Draft the beta post" - --json  # (exits 4: no model)
    """
    from scarwarden.answers.qc import review_task_draft
    from scarwarden.audit.answer_text import qc_text, recall_header, verification_text

    repo = get_repo(ctx)
    draft = read_file(file, "the draft")  # UTF-8, or exit 2 naming it
    result = review_task_draft(
        repo, task, draft, client=_client(repo), rewrite=rewrite, max_retakes=max_retakes
    )
    verification = result.verification
    assert verification is not None  # review_task_draft always checks the citations
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(click.style(recall_header(task, result.recall), dim=True))
        click.echo("")
        if result.qc is not None:
            click.echo(qc_text(result.qc))
            if rewrite and result.qc.retakes:
                click.echo("\nFinal text:\n" + terminal_text(result.final_text.strip(), lines=True))
            click.echo("")
        elif result.brief is None:
            click.echo("No rule was recalled for this task: nothing to review against.\n")
        click.echo(verification_text(verification))
        if result.brief is not None:
            click.echo("\n" + result.brief)
    # A check that ran and failed outranks the one that could not run (no model).
    if strict and not verification.ok:
        raise ScarwardenError(
            f"invented citations (--strict): {verification.summary}",
            hint="the draft cites rules or episodes its memory does not hold",
        )
    if result.brief is not None:
        raise no_model_error(repo, "no reviewer judged the draft; only its citations were checked, by code")
    if result.qc is not None and not result.qc.passed:
        raise ScarwardenError(result.qc.summary, hint="fix the draft, or run with --rewrite")


# -- feedback -----------------------------------------------------------------------


@click.command()
@click.argument("episode_id")
@click.option("--outcome", help="What happened after the agent acted.")
@click.option("--correction", help="What a human corrected: the lesson.")
@click.option("--corrected-by", help="Who corrected it.")
@click.option("--json", "as_json", is_flag=True, help="Print the new episode as JSON.")
@click.pass_context
def feedback(
    ctx: click.Context,
    episode_id: str,
    outcome: str | None,
    correction: str | None,
    corrected_by: str | None,
    as_json: bool,
) -> None:
    """Record what happened after a recorded answer, as a new episode that refs it.

    The first episode is never edited (the ledger is append-only); the new one keeps
    its task, tags and rules_applied, so distillation learns from the outcome.

    \b
    Examples:
      scarwarden feedback ep-hkgnqdz88f --outcome "Engagement doubled"
      scarwarden feedback ep-hkgnqdz88f --correction "Shorter hook" --corrected-by editor
    """
    from scarwarden.answers.lineage import record_feedback

    repo = get_repo(ctx)
    ep = record_feedback(
        repo, episode_id, outcome=outcome, correction=correction, corrected_by=corrected_by, warn=warn
    )
    if as_json:
        echo_json(ep.to_json())
        return
    click.echo(ep.id)
    click.echo(f"Committed {ep.id} (refs {ep.get('refs')[0]})", err=True)
