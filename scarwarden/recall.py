"""Deterministic, explainable recall: which rules apply to a task, and why.

No vectors, no model, no network. The task goes through the same text pipeline as the
rules (:mod:`scarwarden.text`: Unicode tokens, lower case, Snowball stopwords dropped,
Snowball English stems) and is scored against the postings in the SQLite index; the
playbook file is never re-read on a query.

The score of a rule ``r`` for a task (docs/recall.md works two examples by hand)::

    score(r) = sum over tag hits        TAG_WEIGHT
             + sum over shared stems t  idf(t) * qtf(t) * tf(t,r) * (K1 + 1)
                                        / (tf(t,r) + K1 * (1 - B + B * len(r) / avglen))

    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

* a *tag hit* is a rule tag whose normalised stems (split on ``-``, stopwords dropped,
  stemmed) are all among the task's stems (SPEC section 7);
* ``qtf(t)``: how often stem ``t`` occurs in the task; ``tf(t,r)``: in the rule's title
  plus text; ``len(r)``: the rule's number of stems; ``N``, ``avglen``, ``df``: over the
  active rules (meta ``rule_count``/``rule_total_length``, table ``rule_term_df``);
* that is BM25 with Lucene's non-negative idf and K1 = 1.5, B = 0.75 (rank_bm25's
  defaults, so the benchmark baseline runs with the same constants; not tuned on the
  benchmark), plus a flat bonus per tag hit.

Every result carries its contributions (``tag:<tag>``, ``term:<stem>``); the score is
their sum in that order, rounded to 4 decimals. Ranking: score descending, then rule ID
ascending, so equal scores never depend on storage order. Same index and same task give
byte-identical JSON.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scarwarden import router, text
from scarwarden.config import RecallSettings
from scarwarden.errors import UsageError

if TYPE_CHECKING:
    from scarwarden.index import Index
    from scarwarden.repo import MemoryRepo

K1 = 1.5
B = 0.75
#: Points for each tag hit: a curated tag is worth more than any single shared word.
TAG_WEIGHT = 3.0
#: Scores and contributions are rounded to this many decimals (byte-stable JSON).
DECIMALS = 4
#: A longer task is refused (exit 2): recall stays bounded in time and a task is a
#: request, not a document. 20,000 characters is ~3,000 words.
MAX_TASK_CHARS = 20_000
#: Candidates fetched beyond ``limit`` before the exact re-ranking in Python, so a tie
#: at the cut is resolved by rule ID and not by floating-point noise in SQLite's sums
#: (a difference in the last bit between rules whose true scores are equal).
_SLACK = 10


@dataclass(frozen=True)
class TermMatch:
    """The arithmetic behind one ``term:<stem>`` contribution (for ``--explain``)."""

    stem: str
    qtf: int
    df: int
    idf: float
    tf: int
    length: int
    contribution: float


@dataclass
class RecalledRule:
    """One recalled rule, with why it matched."""

    id: str
    title: str
    text: str
    score: float
    matched_tags: list[str]
    matched_terms: list[str]
    contributions: dict[str, float]
    episode_ids: list[str]
    tags: list[str] = field(default_factory=list)
    terms: list[TermMatch] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "text": self.text, "score": self.score,
                "matched_tags": list(self.matched_tags),
                "matched_terms": list(self.matched_terms),
                "contributions": dict(self.contributions),
                "episode_ids": list(self.episode_ids)}

    def why(self) -> str:
        """One line: the tags and terms that matched and what each contributed."""
        parts = [f"tag {t} +{self.contributions['tag:' + t]:g}" for t in self.matched_tags]
        parts += [f"term {s} +{self.contributions['term:' + s]:g}" for s in self.matched_terms]
        return ", ".join(parts) or "nothing"

    def citation(self) -> str:
        """The inline citation an answer uses: ``[PB-01, learnt in ep-a, ep-b]``."""
        return f"[{self.id}, learnt in {', '.join(self.episode_ids)}]"


@dataclass
class RecallStats:
    """The numbers a reader needs to redo the arithmetic by hand."""

    rule_count: int
    avg_length: float
    task_stems: dict[str, int]  # stem -> qtf, sorted by stem
    unknown_stems: list[str]  # task stems no active rule contains
    settings: RecallSettings
    best_score: float | None = None
    best_tag_hits: int = 0


@dataclass
class RecallResult:
    """What recall found for a task, and the router's verdict."""

    task: str
    verdict: str
    playbook_commit: str | None
    rules: list[RecalledRule]
    stats: RecallStats | None = None
    #: rowid in the recall log, when the recall was logged.
    log_id: int | None = None

    @property
    def meaning(self) -> str:
        return router.VERDICT_MEANING[self.verdict]

    def to_json(self) -> dict[str, Any]:
        """SPEC section 6: ``{task, verdict, playbook_commit, rules: [...]}``."""
        return {"task": self.task, "verdict": self.verdict,
                "playbook_commit": self.playbook_commit,
                "rules": [r.to_json() for r in self.rules]}

    def dumps(self) -> str:
        """The JSON document, byte-stable for the same playbook and task."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False)


def check_task(task: str) -> str:
    """The task, stripped; :class:`UsageError` (exit 2) when empty or too long."""
    if not isinstance(task, str) or not task.strip():
        raise UsageError("the task is empty", hint='describe the task, e.g. '
                         'scarwarden recall "Draft a LinkedIn post announcing our beta"')
    task = task.strip()
    if len(task) > MAX_TASK_CHARS:
        raise UsageError(f"the task is {len(task):,} characters; the limit is "
                         f"{MAX_TASK_CHARS:,}",
                         hint="recall with the request itself, not a whole document")
    return task


def idf(df: int, n: int) -> float:
    """Lucene's BM25 idf: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, never negative."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def term_contribution(idf_value: float, qtf: int, tf: int, length: int,
                      avg_length: float) -> float:
    """One shared stem's BM25 contribution (unrounded)."""
    norm = tf + K1 * (1.0 - B + B * length / avg_length)
    return idf_value * qtf * tf * (K1 + 1.0) / norm


def recall(index: Index, task: str, *, limit: int | None = None,
           settings: RecallSettings | None = None) -> RecallResult:
    """Rank the active rules of ``index`` for ``task`` and route the result.

    Returns at most ``limit`` rules (default ``settings.limit``), each scoring at least
    ``settings.floor`` (or with ``act_tag_hits`` tag hits). Raises :class:`UsageError`
    for an empty or over-long task, :class:`ValidationError` when the playbook does
    not parse.
    """
    from scarwarden.recall_log import playbook_commit

    settings = settings or index.repo.config.recall
    limit = settings.limit if limit is None else limit
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    task = check_task(task)
    index.require_playbook()
    qtf = Counter(text.stems(task))
    conn = index.conn
    n = int(index.meta("rule_count") or 0)
    total = int(index.meta("rule_total_length") or 0)
    avg = total / n if n and total else 1.0
    df = _document_frequencies(conn, sorted(qtf))
    stats = RecallStats(rule_count=n, avg_length=avg, task_stems=dict(sorted(qtf.items())),
                        unknown_stems=sorted(set(qtf) - set(df)), settings=settings)
    ranked: list[RecalledRule] = []
    if qtf and n:
        found = _candidates(conn, qtf, df, n, avg, limit + _SLACK)
        ranked = _explain(conn, _worth_explaining(found, limit, settings), qtf, df, n, avg)
        ranked.sort(key=lambda r: (-r.score, r.id))
    if ranked:
        stats.best_score = ranked[0].score
        stats.best_tag_hits = len(ranked[0].matched_tags)
    verdict = router.route(stats.best_score, stats.best_tag_hits, settings)
    kept = [r for r in ranked
            if r.score >= settings.floor or len(r.matched_tags) >= settings.act_tag_hits]
    return RecallResult(task=task, verdict=verdict, playbook_commit=playbook_commit(index),
                        rules=kept[:limit], stats=stats)


def recall_task(repo: MemoryRepo, task: str, *, limit: int | None = None,
                log: bool = True) -> RecallResult:
    """Open (and refresh) the index, recall, and append the recall to the recall log.

    Logging is best effort: a read-only or busy index loses the log line (with a
    warning), never the recall.
    """
    from scarwarden.index import open_index
    from scarwarden.recall_log import append

    task = check_task(task)
    with open_index(repo) as index:
        result = recall(index, task, limit=limit, settings=repo.config.recall)
        if log:
            result.log_id = append(index, result)
    return result


# -- scoring --------------------------------------------------------------------------

def _document_frequencies(conn: Any, stems: list[str]) -> dict[str, int]:
    if not stems:
        return {}
    rows = conn.execute("SELECT term, df FROM rule_term_df WHERE term IN "
                        "(SELECT value FROM json_each(?))", (json.dumps(stems),))
    return {term: int(df) for term, df in rows if df}


def _candidates(conn: Any, qtf: Counter[str], df: dict[str, int], n: int, avg: float,
                count: int) -> list[tuple[str, float]]:
    """The ``count`` best (rule ID, score), scored in SQL (one pass over the postings).

    Query stems and their weights travel as one JSON parameter, so a long task never
    hits SQLite's limit on bound variables. Equal rules sum their contributions in the
    same order, so exact ties stay exact and are broken by rule ID here too; the final
    order is set by :func:`_explain`'s exact sums (hence the slack).
    """
    weights = [[t, idf(d, n) * qtf[t] * (K1 + 1.0)] for t, d in sorted(df.items())]
    sql = """
        WITH q(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:weights)),
        s(rule_id, c) AS (
            SELECT p.rule_id, q.w * p.tf / (p.tf + :base + :slope * p.length)
            FROM q CROSS JOIN rule_terms AS p ON p.term = q.term
            UNION ALL
            SELECT rule_id, :tag_weight FROM rule_tag_stems
            WHERE stem IN (SELECT value FROM json_each(:stems))
            GROUP BY rule_id, tag HAVING count(*) = max(parts))
        SELECT rule_id, sum(c) AS score FROM s GROUP BY rule_id
        ORDER BY score DESC, rule_id LIMIT :count
    """
    params = {"weights": json.dumps(weights), "stems": json.dumps(sorted(qtf)),
              "base": K1 * (1.0 - B), "slope": K1 * B / avg, "tag_weight": TAG_WEIGHT,
              "count": count}
    return [(row[0], float(row[1])) for row in conn.execute(sql, params)]


def _worth_explaining(found: list[tuple[str, float]], limit: int,
                      settings: RecallSettings) -> list[str]:
    """The candidates that can still make the result (explaining costs a few queries).

    The best one always (the router needs it); then those within floating-point noise
    of the ``limit``-th score, and only those that can pass the floor (or have enough
    room in their score for ``act_tag_hits`` tag hits).
    """
    if not found:
        return []
    cut = found[min(limit, len(found)) - 1][1]
    eps = 1e-9 * max(1.0, abs(cut))
    keep_at = min(settings.floor, settings.act_tag_hits * TAG_WEIGHT) - eps
    return [found[0][0]] + [rule_id for rule_id, score in found[1:]
                            if score >= cut - eps and score >= keep_at]


def _explain(conn: Any, ids: list[str], qtf: Counter[str], df: dict[str, int], n: int,
             avg: float) -> list[RecalledRule]:
    """Exact contributions for the candidate rules, computed in a fixed order."""
    if not ids:
        return []
    id_json = json.dumps(ids)
    postings: dict[str, dict[str, tuple[int, int]]] = {i: {} for i in ids}
    # By rule (a few dozen postings each), not by term: a long task has hundreds.
    for term, rule_id, tf, length in conn.execute(
            "SELECT term, rule_id, tf, length FROM rule_terms WHERE rule_id IN "
            "(SELECT value FROM json_each(?))", (id_json,)):
        if term in df:
            postings[rule_id][term] = (int(tf), int(length))
    tag_parts: dict[tuple[str, str], set[str]] = {}
    for rule_id, tag, stem in conn.execute(
            "SELECT rule_id, tag, stem FROM rule_tag_stems WHERE rule_id IN "
            "(SELECT value FROM json_each(?))", (id_json,)):
        tag_parts.setdefault((rule_id, tag), set()).add(stem)
    out = []
    for row in conn.execute("SELECT id, title, text, tags, episode_ids FROM rules "
                            "WHERE id IN (SELECT value FROM json_each(?))", (id_json,)):
        rule_id, title, body, tags_json, eps_json = row
        tags = list(json.loads(tags_json))
        hits = [t for t in tags
                if (rule_id, t) in tag_parts and tag_parts[(rule_id, t)] <= qtf.keys()]
        contributions: dict[str, float] = {}
        total = 0.0
        for tag in hits:
            contributions[f"tag:{tag}"] = TAG_WEIGHT
            total += TAG_WEIGHT
        matches = []
        for stem, (tf, length) in sorted(postings[rule_id].items()):
            idf_value = idf(df[stem], n)
            value = term_contribution(idf_value, qtf[stem], tf, length, avg)
            total += value
            matches.append(TermMatch(stem, qtf[stem], df[stem], idf_value, tf, length,
                                     round(value, DECIMALS)))
        matches.sort(key=lambda m: (-m.contribution, m.stem))
        for m in matches:
            contributions[f"term:{m.stem}"] = m.contribution
        out.append(RecalledRule(
            id=rule_id, title=title, text=body, score=round(total, DECIMALS),
            matched_tags=hits, matched_terms=[m.stem for m in matches],
            contributions=contributions, episode_ids=list(json.loads(eps_json)),
            tags=tags, terms=matches))
    return out
