"""The ask-human loop: when recall says ``ASK_HUMAN``, the human's answer becomes memory.

The answer is recorded as an ordinary episode (``source: human-answer``, the task, the
answer as ``correction``, tags from the task's words) through the ledger, so it is
validated, written atomically and committed with its ``Scarwarden-Episode`` trailer
like any other, and the next distillation can turn it into a cited rule.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scarwarden import text
from scarwarden.errors import Problem, UsageError, ValidationError
from scarwarden.files.episode_fields import MAX_TAG_CHARS
from scarwarden.files.episodes import TAG_RE, Episode
from scarwarden.records import replace
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.recall.result import RecallResult

#: At most this many tags are derived from a task.
MAX_TAGS = 8
#: At most this many episode IDs in ``refs``: the episodes that taught the recalled rules.
MAX_REFS = 20


@dataclass(frozen=True)
class ConfirmHints:
    """What a refused confirmation tells the human to do, in the words of the door they
    confirmed through: the CLI's by default (``ask --confirm``; the Python API and MCP
    read the same), the web page its own (what to click: it has no commands to type)."""

    malformed: str = "confirm a rule recall showed, by its ID (e.g. PB-03)"
    unknown: str = "confirm one of the candidates recall listed (scarwarden recall TASK)"
    retired: str = "confirm an active rule; retired rules are never recalled"
    unshown: str = (
        "confirm a rule 'scarwarden recall TASK' lists; to teach something new, "
        "answer instead (scarwarden ask TASK --answer ...)"
    )


#: The CLI's words.
CLI_HINTS = ConfirmHints()


def task_tags(task: str, *, limit: int = MAX_TAGS) -> list[str]:
    """Tag slugs from a task's content words, in order of first appearance.

    Stopwords are dropped, accents folded (``café`` -> ``cafe``); words that cannot
    be a slug (other scripts, single characters, bare numbers, words over the tag bound
    of 64 characters: a hash, an identifier) are skipped.
    """
    out: list[str] = []
    for token in text.tokens(task):
        folded = unicodedata.normalize("NFKD", token).encode("ascii", "ignore").decode()
        slug = folded.replace("'", "").lower()
        if not 2 <= len(slug) <= MAX_TAG_CHARS or slug.isdigit() or not TAG_RE.match(slug) or slug in out:
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
            # Every door asks this (ask --answer, the page's form, MCP, the API): no option named.
            hint="give the human's answer in words, e.g. \"Use the travel agency portal and keep it "
            'under 400 EUR"',
        )
    data: dict[str, object] = {"task": task, "correction": answer, "source": "human-answer"}
    tags = task_tags(task)
    if tags:
        data["tags"] = tags
    return data


def answer_refusal(repo: MemoryRepo, answer: str) -> str | None:
    """Why the ledger would refuse ``answer``'s text as a human's answer (a credential,
    personal data ``privacy:`` refuses, text out of its bounds), or ``None``: for a prompt
    to ask again rather than lose what the human typed. Recording checks it all again."""
    from scarwarden.files.record import prepare, screen

    try:
        screen(
            repo, prepare([{"task": "the answer", "correction": answer}], source="the answer"), "the answer"
        )
    except ValidationError as exc:
        return "; ".join(p.message for p in exc.problems) or exc.message
    return None


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
    locked: bool = False,
    warn: Callable[[Problem], None] | None = None,
) -> Episode:
    """Record a human's answer to ``task`` as a new episode and commit it; ``receipt``
    (the recall's receipt or its ID, issue 20) is stored as its ``recalled:`` block.

    Whatever the verdict, the answer is kept (issue 13): when recall did return rules
    (``ACT_AND_FLAG``, or ``ACT`` the human overrode), the episode refers to them through
    ``refs``, the episodes those rules cite, so distillation sees the lineage and recall
    learns the task's words. ``refs``: those episode IDs (:func:`recalled_refs`), or
    ``None`` to recall ``task`` here and refer to what it returns. ``locked``: the caller
    holds the ledger's write lock (it looked for this answer already recorded under it).
    ``warn`` receives what does not block the write (personal data ``privacy:`` warns
    about), as ``episode add``'s: every door says it in its own way.

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
    with hinted_for_answers(warn) as warned:
        (episode,) = add_episodes(
            repo,
            [data],
            commit=commit,
            source="human answer",
            check=gate_check(repo, "the answer"),
            locked=locked,
            warn=warned,
        )
    return episode


#: A refusal of personal data in a human's answer: the ledger's hint names episode add's
#: --redact-pii, which no door recording an answer has (ask, answer, MCP, the web).
PERSONAL_DATA_HINT = (
    "give it without the personal data: a placeholder such as [email] or [card] in its place "
    "keeps the sense ('privacy:' in scarwarden.yaml says what is refused)"
)


#: The same for a warning: the answer was recorded with the personal data in it.
PERSONAL_DATA_WARNING_HINT = (
    "recorded as given; a placeholder such as [email] or [card] in its place keeps the sense "
    "without it ('scarwarden redact' takes a recorded value back out)"
)


@contextmanager
def hinted_for_answers(
    warn: Callable[[Problem], None] | None = None,
) -> Iterator[Callable[[Problem], None] | None]:
    """Re-raise a refusal of personal data with :data:`PERSONAL_DATA_HINT` on each of
    its problems (the same exception: its message, fields and exit code stay); yield
    ``warn`` passing each warning on with :data:`PERSONAL_DATA_WARNING_HINT`."""

    def hinted(problem: Problem, hint: str) -> Problem:
        return replace(problem, hint=hint) if problem.message.startswith("holds personal data") else problem

    try:
        yield None if warn is None else (lambda problem: warn(hinted(problem, PERSONAL_DATA_WARNING_HINT)))
    except ValidationError as exc:
        exc.problems = [hinted(p, PERSONAL_DATA_HINT) for p in exc.problems]
        raise


def refs_for_verdict(result: RecallResult, *, force: bool = False) -> list[str] | None:
    """What an answer given for ``result``'s task refers to, when its verdict calls for
    recording it (``scarwarden ask``): on ``ASK_HUMAN`` nothing (nothing was recalled);
    on ``ACT_AND_FLAG``, or on ``ACT`` with ``force``, the recalled rules' episodes
    (:func:`recalled_refs`). ``None`` on ``ACT`` without ``force``: memory already covers
    the task, the answer is not recorded (the caller says so)."""
    from scarwarden.recall.router import ACT, ASK_HUMAN

    if result.verdict == ACT and not force:
        return None
    return [] if result.verdict == ASK_HUMAN else recalled_refs(result.rules)


def confirmed_rule(repo: MemoryRepo, rule_id: str, *, hints: ConfirmHints = CLI_HINTS) -> Any:
    """The active rule a human confirms, by any accepted spelling of its ID
    (:func:`scarwarden.files.rule_ids.canonical`); :class:`UsageError` (exit 2) for an
    ID that is not a rule ID, an unknown rule or a retired one (nothing is written),
    hinted in ``hints``' words; :class:`ValidationError` (exit 1) for a playbook that
    does not parse."""
    from scarwarden.files.rule_ids import RULE_ID_RE, canonical
    from scarwarden.index import open_index

    wanted = canonical(rule_id or "")
    if not RULE_ID_RE.match(wanted):
        raise UsageError(f"{rule_id!r} is not a rule ID", hint=hints.malformed)
    with open_index(repo) as index:
        index.require_playbook()  # else an unparsable playbook reads as "no rule PB-..."
        rule = index.get_rule(wanted)
    if rule is None:
        raise UsageError(
            f"no rule {wanted} in {repo.playbook_rel}: nothing was recorded",
            hint=hints.unknown,
        )
    if rule.retired:
        instead = f" (replaced by {rule.replaced_by})" if rule.replaced_by else ""
        raise UsageError(
            f"{wanted} is retired{instead}: nothing was recorded",
            hint=hints.retired,
        )
    return rule


def _require_shown(repo: MemoryRepo, task: str, rule_id: str, hint: str) -> None:
    """A human confirms a rule recall showed for ``task`` (a rule it returns, or a
    candidate on ASK_HUMAN); any other is refused (exit 2): with no candidate shown,
    nothing tells the human the rule is related, and the episode would make it so."""
    from scarwarden.recall.engine import recall_task

    shown = recall_task(repo, task, log=False)
    ids = [r.id for r in shown.rules] + [c.id for c in shown.candidates if c.kind == "rule"]
    if rule_id not in ids:
        listed = f"it showed {', '.join(ids)}" if ids else "it showed no rule"
        raise UsageError(
            f"{rule_id} is not among the rules recall shows for this task ({listed}): nothing was recorded",
            hint=hint,
        )


def record_confirmation(
    repo: MemoryRepo,
    task: str,
    rule_id: str,
    *,
    commit: bool = True,
    hints: ConfirmHints = CLI_HINTS,
    receipt: Any = None,
    locked: bool = False,
    warn: Callable[[Problem], None] | None = None,
) -> tuple[Episode, str]:
    """Record a human's "yes, this rule applies to this task" as an episode
    (``ask --confirm``): the task, the rule's own words as the correction (so the next
    distill finds the lesson it teaches and adds the citation, and the task's words then
    reach the rule through the ledger's words, issue 13), ``refs`` the rule's cited
    episodes, the action naming the rule; returns it and the rule's canonical ID. Bad
    IDs: :func:`confirmed_rule`; a rule recall does not show for ``task``: UsageError;
    either hinted in ``hints``' words (the door's). ``receipt``, ``locked`` and ``warn``:
    as :func:`record_human_answer` takes them."""
    from scarwarden.files.record import add_episodes
    from scarwarden.gate.door import gate_check

    rule = confirmed_rule(repo, rule_id, hints=hints)
    _require_shown(repo, task, rule.id, hints.unshown)
    data = human_answer_input(task, rule.text)
    data["action"] = f"A human confirmed that {rule.id} ({rule.title}) applies to this task"
    refs = list(dict.fromkeys(rule.episode_ids))[:MAX_REFS]
    if refs:
        data["refs"] = refs
    if receipt is not None:
        from scarwarden.recall.receipts import resolve

        data["recalled"] = resolve(repo, receipt, source="receipt")
    check = gate_check(repo, "the confirmation")
    with hinted_for_answers(warn) as warned:
        (episode,) = add_episodes(
            repo, [data], commit=commit, source="human confirmation", check=check, locked=locked, warn=warned
        )
    return episode, str(rule.id)
