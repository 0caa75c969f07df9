"""The ask-human loop: when recall says ``ASK_HUMAN``, the human's answer becomes memory.

The answer is recorded as an ordinary episode (``source: human-answer``, the task, the
answer as ``correction``, tags from the task's words) through the ledger, so it is
validated, written atomically and committed with its ``Scarwarden-Episode`` trailer
like any other, and the next distillation can turn it into a cited rule.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from scarwarden import text
from scarwarden.errors import UsageError
from scarwarden.files.episodes import TAG_RE, Episode
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.recall.result import RecallResult

#: At most this many tags are derived from a task.
MAX_TAGS = 8
#: At most this many episode IDs in ``refs``: the episodes that taught the recalled rules.
MAX_REFS = 20


def task_tags(task: str, *, limit: int = MAX_TAGS) -> list[str]:
    """Tag slugs from a task's content words, in order of first appearance.

    Stopwords are dropped, accents folded (``café`` -> ``cafe``); words that cannot
    be a slug (other scripts, single characters, bare numbers) are skipped.
    """
    out: list[str] = []
    for token in text.tokens(task):
        folded = unicodedata.normalize("NFKD", token).encode("ascii", "ignore").decode()
        slug = folded.replace("'", "").lower()
        if len(slug) < 2 or slug.isdigit() or not TAG_RE.match(slug) or slug in out:
            continue
        out.append(slug)
        if len(out) >= limit:
            break
    return out


def human_answer_input(task: str, answer: str) -> dict[str, object]:
    """The episode input for a human's answer (validated later by the ledger)."""
    task = task.strip() if isinstance(task, str) else ""
    answer = answer.strip() if isinstance(answer, str) else ""
    if not task:
        raise UsageError("the task is empty", hint="say which task the answer is for")
    if not answer:
        raise UsageError(
            "the answer is empty: nothing to record",
            hint="give the human's answer, e.g. --answer \"Use the travel "
            'agency portal and keep it under 400 EUR"',
        )
    data: dict[str, object] = {"task": task, "correction": answer, "source": "human-answer"}
    tags = task_tags(task)
    if tags:
        data["tags"] = tags
    return data


def recalled_refs(rules: Iterable[Any]) -> list[str]:
    """The episodes the recalled rules cite, in rank order, each once (at most
    :data:`MAX_REFS`): how an answer given despite a recall refers to those rules."""
    out: list[str] = []
    for rule in rules:
        out += [ep for ep in rule.episode_ids if ep not in out]
    return out[:MAX_REFS]


def _refs_for(repo: MemoryRepo, task: str) -> list[str]:
    """Recall ``task`` (unlogged) for :func:`recalled_refs`; nothing when recall cannot
    run (an unparsable playbook must not cost the human's answer)."""
    from scarwarden.errors import ScarwardenError
    from scarwarden.recall.engine import recall_task

    try:
        return recalled_refs(recall_task(repo, task, log=False).rules)
    except ScarwardenError:
        return []


def record_human_answer(
    repo: MemoryRepo,
    task: str,
    answer: str,
    *,
    commit: bool = True,
    receipt: Any = None,
    refs: Sequence[str] | None = None,
) -> Episode:
    """Record a human's answer to ``task`` as a new episode and commit it; ``receipt``
    (the recall's receipt or its ID, issue 20) is stored as its ``recalled:`` block.

    Whatever the verdict, the answer is kept (issue 13): when recall did return rules
    (``ACT_AND_FLAG``, or ``ACT`` the human overrode), the episode refers to them through
    ``refs``, the episodes those rules cite, so distillation sees the lineage and recall
    learns the task's words. ``refs``: those episode IDs (:func:`recalled_refs`), or
    ``None`` to recall ``task`` here and refer to what it returns.

    Raises :class:`UsageError` (exit 2) for an empty task or answer; ledger errors
    (validation, a failing commit) leave nothing behind, as ``episode add`` does.
    """
    from scarwarden.files.record import add_episodes
    from scarwarden.gate.door import gate_check

    data = human_answer_input(task, answer)
    refs = _refs_for(repo, str(data["task"])) if refs is None else list(refs)
    if refs:
        data["refs"] = refs
    if receipt is not None:
        from scarwarden.recall.receipts import resolve

        data["recalled"] = resolve(repo, receipt, source="receipt")
    (episode,) = add_episodes(
        repo, [data], commit=commit, source="human answer", check=gate_check(repo, "the answer")
    )
    return episode


def record_for_verdict(
    repo: MemoryRepo,
    result: RecallResult,
    answer: str | None,
    *,
    force: bool = False,
    commit: bool = True,
) -> Episode | None:
    """Record ``answer``, given for ``result``'s task, when its verdict calls for it
    (``scarwarden ask``): on ``ASK_HUMAN`` with no refs (nothing was recalled); on
    ``ACT_AND_FLAG``, or on ``ACT`` with ``force``, referring to the recalled rules.
    ``None`` when there is no answer, or on ``ACT`` without ``force`` (memory already
    covers the task: the caller says the answer was not recorded)."""
    from scarwarden.recall.router import ACT, ASK_HUMAN

    if answer is None or (result.verdict == ACT and not force):
        return None
    receipt = result.receipt.to_json() if result.receipt is not None else None
    refs = [] if result.verdict == ASK_HUMAN else recalled_refs(result.rules)
    return record_human_answer(repo, result.task, answer, commit=commit, receipt=receipt, refs=refs)
