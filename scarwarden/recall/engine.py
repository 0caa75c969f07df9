"""Deterministic, explainable recall: which rules apply to a task, and why.

No vectors, no model, no network. The task goes through the same text pipeline as the
rules (:mod:`scarwarden.text`: Unicode tokens, lower case, Snowball stopwords dropped,
Snowball English stems) and is scored against the postings in the SQLite index; the
playbook file is never re-read on a query.

Two numbers per rule (docs/recall.md works examples by hand). The **score** ranks::

    score(r) = sum over tag hits        TAG_WEIGHT
             + sum over shared stems t  idf(t) * qtf(t) * tf(t,r) * (K1 + 1)
                                        / (tf(t,r) + K1 * (1 - B + B * len(r) / avglen))

    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

* a *tag hit* is a rule tag whose normalised stems (split on ``-``, stopwords dropped,
  stemmed) are all among the task's stems (SPEC section 7);
* ``qtf(t)``: how often stem ``t`` occurs in the task; ``tf(t,r)``: in the rule's title
  plus text; ``len(r)``: the rule's number of stems; ``N``, ``avglen``, ``df``: over the
  active rules (meta ``rule_count``/``rule_total_length``, table ``rule_term_df``;
  ``df`` is 0 for a stem no rule's title or text contains);
* that is BM25 with Lucene's non-negative idf and K1 = 1.5, B = 0.75 (rank_bm25's
  defaults, so the benchmark baseline runs with the same constants; not tuned on the
  benchmark), plus a flat bonus per tag hit.

The **confidence** routes (:mod:`scarwarden.router`). A BM25 sum grows with every word
a task shares with a rule, so a long task that shares only generic words ("card",
"fee", "agent") outscores a short, exact one; the confidence does not::

    confidence(r) = matched(r) / sqrt(task_mass * rule_mass(r))          (0 to 1)

    task_mass     = sum of idf(t) over the task's distinct stems
    rule_mass(r)  = sum of idf(t) over the distinct stems of r's title, text and tags
    matched(r)    = sum of idf(t) over the task stems r matches (in its title or
                    text, or part of a tag that hits)

It is the geometric mean of how much of the task the rule explains
(``matched / task_mass``) and how much of the rule the task touches
(``matched / rule_mass``), each weighted by idf, so generic words count for little and
words memory has never seen (idf at df 0, the highest) count against the match. It is
1.0 when the task's stems are exactly the rule's. The **evidence**,
``matched(r) / idf(df=1)``, counts the match in rare words: the confidence of a
one-word task can be high on that word alone, so the router also asks for evidence.

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

from scarwarden import text
from scarwarden.config import RecallSettings
from scarwarden.errors import UsageError
from scarwarden.recall import router

if TYPE_CHECKING:
    from scarwarden.index.store import Index
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
    #: ``matched_mass / sqrt(task_mass * rule_mass)``, rounded (what the router reads).
    confidence: float = 0.0
    #: Sum of idf over the task stems this rule matches (terms and tag parts).
    matched_mass: float = 0.0
    #: Sum of idf over the distinct stems of the rule's title, text and tags.
    rule_mass: float = 0.0
    #: ``matched_mass / idf(df=1)``, rounded: the match counted in rare words (stems
    #: found in one rule only); the router wants ``act_tag_hits`` of them to act.
    evidence: float = 0.0
    #: The rule's distinct stems (title, text, tags) with their df, for ``--explain``.
    stem_df: dict[str, int] = field(default_factory=dict)
    #: The task stems it matches (in its title or text, or part of a tag that hits).
    matched_stems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "text": self.text, "score": self.score,
                "matched_tags": list(self.matched_tags),
                "matched_terms": list(self.matched_terms),
                "contributions": dict(self.contributions),
                "episode_ids": list(self.episode_ids),
                "confidence": self.confidence}

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
    #: Sum of idf over the task's distinct stems (the confidence's task side).
    task_mass: float = 0.0
    #: df of each task stem (0: in no rule's title or text), sorted by stem.
    task_df: dict[str, int] = field(default_factory=dict)
    best_score: float | None = None
    best_tag_hits: int = 0
    #: The best-ranked rule's confidence; ``None`` when no rule matched at all.
    best_confidence: float | None = None
    best_evidence: float = 0.0
    #: The best-ranked rule, also when the verdict (ASK_HUMAN) returns no rules.
    best: RecalledRule | None = None


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


def confidence(matched: float, task_mass: float, rule_mass: float) -> float:
    """``matched / sqrt(task_mass * rule_mass)``, rounded; 0.0 when either mass is 0."""
    if task_mass <= 0.0 or rule_mass <= 0.0:
        return 0.0
    return round(matched / math.sqrt(task_mass * rule_mass), DECIMALS)


def term_contribution(idf_value: float, qtf: int, tf: int, length: int,
                      avg_length: float) -> float:
    """One shared stem's BM25 contribution (unrounded)."""
    norm = tf + K1 * (1.0 - B + B * length / avg_length)
    return idf_value * qtf * tf * (K1 + 1.0) / norm


def recall(index: Index, task: str, *, limit: int | None = None,
           settings: RecallSettings | None = None) -> RecallResult:
    """Rank the active rules of ``index`` for ``task`` and route the result.

    Returns at most ``limit`` rules in rank order, each with a confidence of at least
    ``settings.floor`` (or with ``act_tag_hits`` tag hits); none when the verdict is
    ``ASK_HUMAN``. The verdict comes from the best-ranked rule
    (:func:`scarwarden.router.route`). Raises :class:`UsageError` for an empty or
    over-long task, :class:`ValidationError` when the playbook does not parse.
    """
    from scarwarden.recall.log import playbook_commit

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
    task_mass = math.fsum(idf(df.get(t, 0), n) for t in qtf) if n else 0.0
    stats = RecallStats(rule_count=n, avg_length=avg, task_stems=dict(sorted(qtf.items())),
                        unknown_stems=sorted(set(qtf) - set(df)), settings=settings,
                        task_mass=task_mass, task_df={t: df.get(t, 0) for t in sorted(qtf)})
    ranked: list[RecalledRule] = []
    if qtf and n:
        found = _candidates(conn, qtf, df, n, avg, limit + _SLACK)
        ranked = _explain(conn, _worth_explaining(found, limit), qtf, df, n, avg, task_mass)
        ranked.sort(key=lambda r: (-r.score, r.id))
    if ranked:
        stats.best_score = ranked[0].score
        stats.best_tag_hits = len(ranked[0].matched_tags)
        stats.best_confidence = ranked[0].confidence
        stats.best_evidence = ranked[0].evidence
        stats.best = ranked[0]
    verdict = router.route(stats.best_confidence, stats.best_tag_hits, stats.best_evidence,
                           settings)
    kept = [] if verdict == router.ASK_HUMAN else [
        r for r in ranked
        if r.confidence >= settings.floor or len(r.matched_tags) >= settings.act_tag_hits]
    return RecallResult(task=task, verdict=verdict, playbook_commit=playbook_commit(index),
                        rules=kept[:limit], stats=stats)


def recall_task(repo: MemoryRepo, task: str, *, limit: int | None = None,
                log: bool = True) -> RecallResult:
    """Open (and refresh) the index, recall, and append the recall to the recall log.

    Logging is best effort: a read-only or busy index loses the log line (with a
    warning), never the recall.
    """
    from scarwarden.index.store import open_index
    from scarwarden.recall.log import append

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


def _worth_explaining(found: list[tuple[str, float]], limit: int) -> list[str]:
    """The candidates that can still make the result (explaining costs a few queries):
    the first ``limit`` and those within floating-point noise of the ``limit``-th score.
    """
    if not found:
        return []
    cut = found[min(limit, len(found)) - 1][1]
    eps = 1e-9 * max(1.0, abs(cut))
    return [rule_id for rule_id, score in found if score >= cut - eps]


def _explain(conn: Any, ids: list[str], qtf: Counter[str], df: dict[str, int], n: int,
             avg: float, task_mass: float) -> list[RecalledRule]:
    """Exact contributions and confidences for the candidate rules, in a fixed order."""
    if not ids:
        return []
    id_json = json.dumps(ids)
    postings: dict[str, dict[str, tuple[int, int]]] = {i: {} for i in ids}
    # The rule's own stems with their df: the shared ones score, all of them weigh in
    # the rule's mass. By rule (a few dozen postings each), not by term: a long task
    # has hundreds.
    stem_df: dict[str, dict[str, int]] = {i: {} for i in ids}
    for term, rule_id, tf, length, term_df in conn.execute(
            "SELECT p.term, p.rule_id, p.tf, p.length, d.df FROM rule_terms AS p "
            "JOIN rule_term_df AS d ON d.term = p.term WHERE p.rule_id IN "
            "(SELECT value FROM json_each(?))", (id_json,)):
        stem_df[rule_id][term] = term_df
        if term in df:
            postings[rule_id][term] = (tf, length)
    tag_parts: dict[tuple[str, str], set[str]] = {}
    for rule_id, tag, stem, tag_df in conn.execute(
            "SELECT t.rule_id, t.tag, t.stem, coalesce(d.df, 0) FROM rule_tag_stems AS t "
            "LEFT JOIN rule_term_df AS d ON d.term = t.stem WHERE t.rule_id IN "
            "(SELECT value FROM json_each(?))", (id_json,)):
        tag_parts.setdefault((rule_id, tag), set()).add(stem)
        stem_df[rule_id].setdefault(stem, tag_df)
    rare = idf(1, n)  # the idf of a stem found in one rule only
    # A rule has dozens of stems but they share a handful of df values.
    weight = {d: idf(d, n) for d in {d for own in stem_df.values() for d in own.values()}}
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
        matched = set(postings[rule_id]).union(*(tag_parts[(rule_id, t)] for t in hits))
        own = stem_df[rule_id]
        # fsum is correctly rounded whatever the order: the masses are byte-stable.
        matched_mass = math.fsum(weight[own[s]] for s in matched)
        rule_mass = math.fsum(weight[d] for d in own.values())
        out.append(RecalledRule(
            id=rule_id, title=title, text=body, score=round(total, DECIMALS),
            matched_tags=hits, matched_terms=[m.stem for m in matches],
            contributions=contributions, episode_ids=list(json.loads(eps_json)),
            tags=tags, terms=matches,
            confidence=confidence(matched_mass, task_mass, rule_mass),
            matched_mass=matched_mass, rule_mass=rule_mass,
            evidence=round(matched_mass / rare, DECIMALS),
            stem_df=dict(sorted(own.items())), matched_stems=sorted(matched)))
    return out
