"""``scarwarden answer``'s human side: the answer a human gives when memory has nothing
(at the prompt or with ``--answer``), recorded as an episode; and an ``--answer`` given
when recall cannot run, recorded all the same, as ``ask`` records it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from scarwarden.cli.commands._common import echo_json
from scarwarden.cli.commands._human import kept_if_lost, prompt_human
from scarwarden.errors import ScarwardenError, ValidationError
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.answers.answer import AnswerResult
    from scarwarden.errors import Problem
    from scarwarden.files.episodes import Episode
    from scarwarden.recall.result import RecallResult

#: The prompt when memory has nothing and a human is at the terminal.
PROMPT = "Your answer (it becomes a new episode)"


def recall_or_record(
    repo: MemoryRepo, task: str, human_answer: str | None, limit: int | None, as_json: bool
) -> RecallResult | None:
    """Recall for ``task`` (``None`` for a blank task: the answer refuses it). When
    recall cannot run (a playbook that does not parse), an ``--answer`` is recorded all
    the same, referring to no rule (the episode does not need the playbook), and
    recall's failure then ends the command (exit 1), saying what to fix; without an
    answer it ends before any prompt, so the human types nothing that would be lost."""
    from scarwarden.answers.asking import record_human_answer
    from scarwarden.recall.engine import recall_task

    if not task.strip():
        return None
    try:
        return recall_task(repo, task, limit=limit)
    except ValidationError as failed:
        if human_answer is None:
            raise
        episode = record_human_answer(repo, task, human_answer, refs=[], warn=warn)
        if as_json:
            data: dict[str, object] = {"task": episode.task, "verdict": None, "rules": [], "answer": None}
            echo_json({**data, "human_answer": episode.get("correction"), "recorded_episode": episode.id})
        else:
            click.echo(
                f"Recorded the human's answer as episode {episode.id}, referring to no rule: "
                "recall could not run."
            )
        raise ScarwardenError(
            f"recall failed: {failed.message}", hint=failed.hint, problems=failed.problems
        ) from None


def record_given_answer(repo: MemoryRepo, result: AnswerResult, human_answer: str | None) -> Episode | None:
    """An ``--answer`` given up front: recorded on ASK_HUMAN (``--compare`` never
    prompts), otherwise only noted as unused."""
    from scarwarden.answers.answer import ASK_HUMAN
    from scarwarden.answers.asking import record_human_answer

    if human_answer is None:
        return None
    if result.verdict == ASK_HUMAN:
        return record_human_answer(repo, result.task, human_answer, warn=warn)
    click.echo("note: --answer is only used when memory has nothing (ASK_HUMAN)", err=True)
    return None


def ask_flow(repo: MemoryRepo, result: AnswerResult, human_answer: str | None, as_json: bool) -> None:
    """ASK_HUMAN: show why memory cannot help, take the human's answer, record it."""
    from scarwarden.answers.asking import record_human_answer
    from scarwarden.answers.prompts import ask_question, brief

    text = brief(result.recall)
    if not as_json:
        click.echo(text)
        click.echo("")
    typed = human_answer is None
    if human_answer is None:  # with --json, stdout is for the JSON: the question goes to stderr
        human_answer = prompt_human("answer", result.task, PROMPT, show=text if as_json else None, repo=repo)
    with kept_if_lost("answer", result.task, human_answer, typed=typed):
        episode = record_human_answer(repo, result.task, human_answer, warn=warn)
    if as_json:
        data = result.to_json()
        data["question"] = ask_question(result.task)
        data["human_answer"] = episode.get("correction")
        data["recorded_episode"] = episode.id
        data["brief"] = text
        echo_json(data)
        return
    click.echo(
        f"Recorded the human's answer as episode {episode.id}; recall will find it "
        "once it is distilled into a rule (scarwarden distill)."
    )


def warn(problem: Problem) -> None:
    """What ``privacy:`` warns about in the human's answer, recorded anyway: on stderr,
    in ``episode add``'s and ``ask``'s words."""
    click.echo(f"warning: {problem}", err=True)
