"""Lineage: act, get corrected, distil, act better.

:func:`record_answer` stores an answer run as an episode (the answer as ``action``, the
verified cited rules as ``rules_applied``, the playbook commit in ``x-playbook-commit``);
:func:`record_feedback` records what happened next as a new episode that ``refs`` it.
The ledger stays append-only: the first episode is never edited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scarwarden.errors import ModelError, UsageError
from scarwarden.files.episodes import Episode, mint_id
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from scarwarden.answers.answer import AnswerResult
    from scarwarden.errors import Problem

    #: What receives the write's warnings (personal data ``privacy:`` warns about).
    Warn = Callable[[Problem], None] | None


def _commit_message(kind: str, task: str, episode_id: str) -> str:
    task = " ".join(task.split())
    return f"{kind}: {task[:60]}{'...' if len(task) > 60 else ''}\n\nScarwarden-Episode: {episode_id}\n"


#: An answer longer than this (UTF-8 bytes) is cut when recorded, so the episode stays
#: under the ledger's 64 KiB cap with room for the other fields.
MAX_ACTION_BYTES = 48 * 1024


def _fit_action(text: str) -> str:
    raw = text.encode("utf-8")
    if len(raw) <= MAX_ACTION_BYTES:
        return text
    cut = raw[:MAX_ACTION_BYTES].decode("utf-8", "ignore")
    return f"{cut}\n[truncated by scarwarden: the answer had {len(text):,} characters]"


def _check_storable(answer: str) -> None:
    """A model error (5) for an answer the ledger cannot store: the text is the model's,
    so the episode validator's "invalid input, remove it" would blame the user."""
    from scarwarden.files.input_policy import text_problem

    problem = "is empty" if not answer.strip() else text_problem(answer)
    if problem is not None:
        raise ModelError(
            f"the model's answer {problem}; nothing was recorded",
            hint="run again, or choose another model (model.answer_model in scarwarden.yaml)",
        )


def record_answer(
    repo: MemoryRepo,
    result: AnswerResult,
    *,
    agent: str | None = None,
    commit: bool = True,
    warn: Warn = None,
) -> Episode:
    """Save a run as an episode: what the agent did, under which rules and playbook
    (``warn``: as :func:`record_feedback` takes it).

    ``source`` is left out on purpose: nothing has happened yet. What happens next is
    recorded by :func:`record_feedback` (source ``outcome`` or ``correction``).
    """
    from scarwarden.files.record import add_episodes
    from scarwarden.gate.door import gate_check

    side = result.primary
    if side is None or not side.answer:
        raise UsageError(
            "there is no answer to record",
            hint="--record needs a model answer (configure a model, or "
            "record the human's answer with 'scarwarden ask')",
        )
    _check_storable(side.answer)
    data: dict[str, Any] = {"id": mint_id(), "task": result.task, "action": _fit_action(side.answer)}
    if agent:
        data["agent"] = agent
    recalled = result.recall.rules if result.recall is not None else []
    tags = [t for rule in recalled for t in rule.matched_tags]
    if not tags:
        from scarwarden.answers.asking import task_tags

        tags = task_tags(result.task)
    if tags:
        data["tags"] = list(dict.fromkeys(tags))
    if side.verification is not None and side.verification.cited_rule_ids:
        data["rules_applied"] = side.verification.cited_rule_ids
    if result.recall is not None and result.recall.playbook_commit:
        data["x-playbook-commit"] = result.recall.playbook_commit
    if side.memory and result.recall is not None and result.recall.receipt is not None:
        # What the model was given, provably (issue 20); an answer without memory got nothing.
        data["recalled"] = result.recall.receipt.to_json()
    data.update(_run_fields(result, side))
    [episode] = add_episodes(
        repo,
        [data],
        commit=commit,
        source="answer",
        message=_commit_message("answer", result.task, data["id"]),
        check=gate_check(repo, "the answer's episode"),
        warn=warn,
    )
    return episode


def _run_fields(result: AnswerResult, side: Any) -> dict[str, Any]:
    """The run's ``x-`` fields: memory on or off, the verdict, the model, invented
    citations, the reviewer's verdict."""
    data: dict[str, Any] = {"x-memory": "on" if side.memory else "off"}
    if result.verdict:
        data["x-verdict"] = result.verdict
    if side.model:
        data["x-model"] = side.model
    if side.verification is not None and side.verification.invented:
        data["x-invented-citations"] = [
            i.rule_id + (f" {i.episode_id}" if i.episode_id else "") for i in side.verification.invented
        ]
    if side.qc is not None:
        data["x-qc"] = side.qc.verdict
    return data


def _feedback_id(
    episode_id: str, *, outcome: str | None, correction: str | None, corrected_by: str | None
) -> str:
    """The ID feedback is given on, stripped and lower-cased as ``episode show`` finds
    it; :class:`UsageError` (exit 2) for a value given blank (refused, as ``episode add``
    refuses an empty field, never dropped unsaid), no outcome or correction, no ID."""
    given = (("--outcome", outcome), ("--correction", correction), ("--corrected-by", corrected_by))
    blank = [option for option, value in given if value is not None and not value.strip()]
    if blank:
        raise UsageError(f"{blank[0]} is empty", hint="give it in words, or leave the option out")
    if not (outcome and outcome.strip()) and not (correction and correction.strip()):
        raise UsageError(
            "feedback needs --outcome or --correction (or both)",
            hint=f'scarwarden feedback {episode_id} --outcome "..." --correction "..."',
        )
    if not episode_id.strip():
        raise UsageError("the episode ID is empty", hint="'scarwarden episode list' shows the IDs")
    return episode_id.strip().lower()


def record_feedback(
    repo: MemoryRepo,
    episode_id: str,
    *,
    outcome: str | None = None,
    correction: str | None = None,
    corrected_by: str | None = None,
    commit: bool = True,
    warn: Warn = None,
) -> Episode:
    """Record what happened after ``episode_id`` as a new episode that ``refs`` it
    (``warn``: what ``privacy:`` warns about, recorded anyway, as ``add_episodes`` says it).

    The first episode is never edited (the ledger is append-only). The new one keeps the
    task, tags and ``rules_applied`` of the first, so distillation sees the lineage.
    """
    from scarwarden.answers.asking import hinted_for_answers
    from scarwarden.files.record import IMPORTED, add_episodes
    from scarwarden.gate.door import gate_check
    from scarwarden.index import open_index

    episode_id = _feedback_id(episode_id, outcome=outcome, correction=correction, corrected_by=corrected_by)
    with open_index(repo) as index:
        first = index.get_episode(episode_id)
    if first is None:
        raise UsageError(
            f"no episode {episode_id} in the ledger",
            hint="use the ID that 'scarwarden answer --record' printed; "
            "'scarwarden episode list' shows what there is",
        )
    data: dict[str, Any] = {"id": mint_id(), "task": first.task}
    for key, value in (("outcome", outcome), ("correction", correction), ("corrected_by", corrected_by)):
        if value and value.strip():
            data[key] = value
    if first.tags:
        data["tags"] = first.tags
    data["source"] = "correction" if "correction" in data else "outcome"
    data["refs"] = [first.id]
    if first.get("rules_applied"):
        data["rules_applied"] = list(first.get("rules_applied"))
    with hinted_for_answers(warn) as warned:  # no door of feedback has --redact-pii
        [episode] = add_episodes(
            repo,
            [data],
            commit=commit,
            source="feedback",
            message=_commit_message("feedback", first.task, data["id"]),
            check=gate_check(repo, "the feedback"),
            warn=warned,
            # An imported episode's rules_applied may name another memory's rules (recorded
            # with a warning): its feedback keeps them so, having no way to leave them out.
            allow_unknown_rules=first.get("source") == IMPORTED,
        )
    return episode
