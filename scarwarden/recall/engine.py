"""Deterministic, explainable recall: which rules apply to a task, and why.

No vectors, no model, no network. The task goes through the same text pipeline as the
rules (:mod:`scarwarden.text`: Unicode tokens, lower case, Snowball stopwords dropped,
Snowball English stems) and is scored against the postings in the SQLite index
(:mod:`scarwarden.recall.score` has the formulas); the playbook file is never re-read
on a query. The best-ranked rule's confidence decides the verdict
(:mod:`scarwarden.recall.router`).

Every result carries its contributions (``tag:<tag>``, ``term:<stem>``); the score is
their sum in that order, rounded to 4 decimals. Ranking: score descending, then rule ID
ascending, so equal scores never depend on storage order. Same index and same task give
byte-identical JSON.
"""

from __future__ import annotations

from collections import Counter
from functools import partial

from scarwarden import text
from scarwarden.config import RecallSettings
from scarwarden.errors import UsageError
from scarwarden.files.input_policy import encoding_problem, text_problem
from scarwarden.recall import router
from scarwarden.recall.earned import not_on_a_struggling_rule_alone
from scarwarden.recall.given import attach_evidence, candidates, read_episodes
from scarwarden.recall.prune import best_candidates
from scarwarden.recall.receipts import LEDGER_META, ledger_state, make_receipt, playbook_blob
from scarwarden.recall.result import RecalledRule, RecallResult, RecallStats
from scarwarden.recall.score import explained, score_rules, task_terms
from scarwarden.recall.term_counts import TERM_COUNTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.index import Index
    from scarwarden.recall.task import TaskTerms
    from scarwarden.repo import MemoryRepo

#: A longer task is refused (exit 2): recall stays bounded in time and a task is a
#: request, not a document. 20,000 characters is ~3,000 words.
MAX_TASK_CHARS = 20_000
#: Candidates fetched beyond ``limit`` before the exact re-ranking in Python, so a tie
#: at the cut is resolved by rule ID and not by floating-point noise in SQLite's sums
#: (a difference in the last bit between rules whose true scores are equal).
_SLACK = 10


def check_task(task: str) -> str:
    """The task, stripped; :class:`UsageError` (exit 2) when empty, too long, or holding
    a character stored text may not (NUL, ESC and other controls but tab and newline, a
    lone surrogate: :mod:`scarwarden.characters`), at every door: the task goes into the
    recall log, its export and the receipt, which another clone's ``log --import`` and
    ``episode add --receipt`` read as text."""
    if not isinstance(task, str) or not task.strip():
        raise UsageError(
            "the task is empty",
            # Every door checks a task here (recall, ask, the API, MCP, the web page):
            # the hint names none of them.
            hint='describe the task in words, e.g. "Draft a LinkedIn post announcing our beta"',
        )
    task = task.strip()
    if len(task) > MAX_TASK_CHARS:
        raise UsageError(
            f"the task is {len(task):,} characters; the limit is {MAX_TASK_CHARS:,}",
            hint="recall with the request itself, not a whole document",
        )
    problem = text_problem(task)
    if problem is not None:
        hint = "remove it (a file with CRLF line endings: convert it with dos2unix first)"
        if encoding_problem(task) is not None:  # no UTF-8 for the log or the receipt's hash
            hint = "give the task as valid Unicode text"
        raise UsageError(f"the task {problem}", hint=hint)
    return task


def recall(
    index: Index,
    task: str,
    *,
    limit: int | None = None,
    settings: RecallSettings | None = None,
    share: float = router.RETURN_SHARE,
) -> RecallResult:
    """Rank the active rules of ``index`` for ``task`` and route the result.

    Returns at most ``limit`` rules in rank order, each with a confidence of at least
    ``settings.floor`` (or with ``act_tag_hits`` tag hits) and a score of at least
    ``share`` x the best-ranked rule's (:func:`scarwarden.recall.router.returned`; 0 for
    a ranking probe: every rule); none when the verdict is ``ASK_HUMAN``. The verdict
    comes from the best-ranked rule (:func:`scarwarden.recall.router.route`). Raises
    :class:`UsageError` for an empty or over-long task, :class:`ValidationError` when
    the playbook does not parse.
    """
    from scarwarden.recall.log import playbook_commit

    settings = settings or index.repo.config.recall
    limit = settings.limit if limit is None else limit
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    task = check_task(task)
    index.require_playbook()
    sequence = text.stems(task)
    qtf = Counter(sequence)
    meta = index.metas(*_META)
    n = int(meta["rule_count"] or 0)
    total = int(meta["rule_total_length"] or 0)
    tasks = int(meta["task_count"] or 0)
    shared = meta["task_terms_shared"] != "0"
    terms = task_terms(index.conn, sequence, n, total / n if n and total else 1.0, tasks, shared)
    stats = terms.stats(settings)
    # No more than every rule: a limit past them all is all of them (and past 2^63, no
    # SQLite integer: '--limit 99999999999999999999' was an OverflowError).
    ranked = _ranked(index, terms, meta, min(limit, n)) if qtf and n else []
    verdict = _route(stats, ranked)
    verdict, doubt = not_on_a_struggling_rule_alone(index, verdict, ranked, settings)  # lineage counts
    stats.downgraded_by = doubt
    stats.words = task_words(task)
    kept = router.returned(ranked, verdict, settings, share=share)
    _note_share(stats, ranked, verdict, settings, kept, share, limit)
    _mark_redacted_and_quote(index, kept[:limit], terms)
    result = RecallResult(
        task=task,
        verdict=verdict,
        playbook_commit=playbook_commit(index, meta),
        rules=kept[:limit],
        stats=stats,
    )
    if verdict == router.ASK_HUMAN:
        result.candidates = candidates(index, ranked, terms)
    ledger = ledger_state(index, meta)
    result.receipt = make_receipt(result, playbook_blob(index, meta), settings, limit, ledger=ledger)
    return result


#: The meta values a recall reads (in one statement), its receipt's and log's included.
_META = (
    "rule_count",
    "rule_total_length",
    "task_count",
    "task_terms_shared",
    "playbook_blob",
    "rule_df_stamp",
    "task_df_stamp",
    "playbook_sig",
    *LEDGER_META,
)


def _ranked(index: Index, terms: TaskTerms, meta: dict[str, str | None], limit: int) -> list[RecalledRule]:
    """The candidates the first pass finds, scored exactly, best first."""
    path = str(index.repo.index_path)
    # The postings are a function of the playbook: its blob ID keys the cache.
    blob = meta["playbook_blob"]
    key = (path, blob) if blob else None
    # Version 6 scores every candidate of the first pass exactly (its same-case
    # term can lift one past the first pass's top few), so all of them must be exact.
    exact = limit + _SLACK if terms.same_case else limit
    found = best_candidates(index.conn, terms, exact, limit + _SLACK, cache_key=key)
    stamps = (path, meta["rule_df_stamp"], meta["task_df_stamp"])
    counts = partial(_kept_counts, stamps=stamps, rules=terms.n)
    kept = (path, blob, meta["rule_df_stamp"], meta["task_df_stamp"])
    ranked = score_rules(index.conn, explained(found, limit, terms.same_case), terms, counts, kept=kept)
    ranked.sort(key=lambda r: (-r.score, r.id))
    return ranked


def _kept_counts(
    conn: Any, stems: set[str], *, stamps: tuple[str, str | None, str | None], rules: int
) -> dict[str, tuple[int, int]]:
    """The stems' counts, kept by the process between recalls (:mod:`term_counts`)."""
    return TERM_COUNTS.read(conn, stems, *stamps, rules=rules)


def _note_share(
    stats: RecallStats,
    ranked: list[RecalledRule],
    verdict: str,
    settings: RecallSettings,
    kept: list[RecalledRule],
    share: float,
    limit: int,
) -> None:
    """Record, for ``--explain``, the rules the return share kept out of ``rules``: those
    the floor alone would have returned within ``limit``."""
    stats.return_share = share
    floor_only = router.returned(ranked, verdict, settings, share=0.0)[:limit]
    shown = {r.id for r in kept[:limit]}
    stats.left_by_share = [(r.id, r.score) for r in floor_only if r.id not in shown]


def task_words(task: str) -> dict[str, str]:
    """Each task stem -> the word the task first wrote it as (what the output shows;
    stems stay in ``--explain``'s arithmetic)."""
    out: dict[str, str] = {}
    for word in text.tokens(task):
        out.setdefault(text.stem(word), word)
    return out


def _mark_redacted_and_quote(index: Index, rules: list[RecalledRule], terms: TaskTerms) -> None:
    """Flag the citations of redacted episodes (a rule whose evidence was taken back) and
    attach each rule's evidence: the cited episodes are read once for both (the closest
    episode, whose correction is quoted, is one of them)."""
    stored, redacted = read_episodes(index, [ep for rule in rules for ep in rule.episode_ids])
    for rule in rules:
        rule.evidence_redacted = [ep for ep in rule.episode_ids if ep in redacted]
    attach_evidence(index, rules, terms, stored)


def _route(stats: RecallStats, ranked: list[RecalledRule]) -> str:
    """Record the best-ranked rule's numbers in ``stats`` and route on them."""
    if ranked:
        stats.best_score = ranked[0].score
        stats.best_tag_hits = len(ranked[0].matched_tags)
        stats.best_confidence = ranked[0].confidence
        stats.best_evidence = ranked[0].evidence
        stats.best_matched_words = len(ranked[0].matched_stems) + len(ranked[0].through_episodes)
        best = ranked[0]
        stats.best_rule_coverage = round(best.matched_mass / best.rule_mass, 4) if best.rule_mass else 0.0
        stats.best = ranked[0]
    return stats.route()


def recall_task(repo: MemoryRepo, task: str, *, limit: int | None = None, log: bool = True) -> RecallResult:
    """Open (and refresh) the index, recall, read how each returned rule has fared
    (:mod:`scarwarden.recall.standing`), and append the recall to the recall log.

    Logging is best effort: a read-only or busy index loses the log line (with a
    warning), never the recall.
    """
    from scarwarden.index import open_index
    from scarwarden.recall.log import append
    from scarwarden.recall.standing import attach_lineage

    task = check_task(task)
    with open_index(repo) as index:
        result = recall(index, task, limit=limit, settings=repo.config.recall)
        attach_lineage(index, result.rules)
        if log:
            result.log_id = append(index, result)
    return result
