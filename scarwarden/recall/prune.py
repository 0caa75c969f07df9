"""Recall's first pass on a large memory: the same candidates, reading few postings.

:func:`scarwarden.recall.candidates.candidates` sums every posting of every task stem
for every rule. At 100k rules a common word has thousands of postings, and summing
them (SQLite's GROUP BY over all of them) was most of a recall. Only the rules that can
reach the ``limit``-th best score make the result (:func:`score.worth_explaining`), so
this module finds those rules first (MaxScore: Turtle and Flood, "Query evaluation:
strategies and optimizations", 1995) and then lets the exhaustive statement rank just
them, so scores, order and ties are that statement's own:

1. **Partial sums for every rule** from what is cheap to read in full: the pairs and
   the few postings of a stem that a rule says more than once (a partial index). Every
   contribution is positive, so the ``limit``-th best partial sum is a floor
   (``theta``) under the ``limit``-th score.
2. **Bounds for the rest.** A stem's postings with tf 1 add at most
   ``w(t) / (1 + base + slope x min_length1(t))`` to a rule (the shortest rule saying
   it once, kept in ``rule_term_df``), a tag that hits its weight, a stem of the rules'
   cited episodes its episode weight times ``m / (m + K1)``, ``m`` the most one episode
   says it (``rule_episode_df.max_etf`` when the index keeps it; else 1, the limit of
   ``etf / (etf + K1)``; most episodes say a stem once: 0.4 of the weight); version 4 counts
   a rule's closest episode only, so what the stems read so far give each of its
   episodes is kept, and the rule's partial sum holds its best episode's). Sources are
   read in full in the order that lowers the bound left most per posting read (rare
   stems and tags first), the floor rising as they are, until what is left sums below
   it: a rule found in none of the sources read cannot reach the result.
3. **The common stems** left are looked up only for the rules that can still reach
   the floor (a seek each, or a pass over the stem's list filtered to them), dropping
   rules as what is left to add shrinks.
4. **The survivors** whose full sums reach the ``limit``-th best are ranked by
   :func:`candidates` restricted to them.

When nothing can be skipped (a small memory, or fewer than ``limit`` partial sums) the
exhaustive statement runs as before. Rules that cite many episodes make the episode
words the longest lists (at 100k rules citing ~3.5 episodes each, summing them all was
95% of a recall): their postings count towards the decision to prune. Margins of 1e-8
keep floating-point noise on the safe side: a bound is never below what it bounds, a
floor never above the score under it.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
from typing import Any

from scarwarden import text
from scarwarden.recall.candidates import candidates, episode_weights, weights
from scarwarden.recall.formulas import K1, TAG_WEIGHT, B
from scarwarden.recall.postings_cache import CACHE, PostingsCache
from scarwarden.recall.score import TaskTerms

#: Below this many postings for the task's stems (and its episode words), the
#: exhaustive statement is as fast. 2,000 and 500 (were 4,000 and 1,000, before the
#: episode words were sources): chosen on the first 150 tasks of bench/recall.py's
#: cited corpus at 10k rules (7.7 ms against 9.2 ms a recall; 1k rules unchanged).
MIN_POSTINGS = 2000
#: Pruning skips the lists of common stems: without one this long there is little to skip.
MIN_COMMON = 500
#: A task with more stems than this (a pasted scenario rather than a request) runs the
#: exhaustive statement: pruning would cost a query per stem.
MAX_STEMS = 64
#: Rare stems are read together up to this many postings before the floor is rechecked.
_BATCH_POSTINGS = 1000
#: A seek by (term, rule ID) costs about this many postings read in order.
_SEEK_COST = 4
#: Relative safety margin on bounds and floors (scores are sums of a few dozen terms).
_MARGIN = 1e-8


def best_candidates(
    conn: Any,
    task: TaskTerms,
    limit: int,
    count: int,
    *,
    cache_key: tuple[str, str] | None = None,
    min_postings: int | None = None,
    cache: PostingsCache = CACHE,
) -> list[tuple[str, float]]:
    """What :func:`candidates` returns for ``count``, at least for every rule whose
    score can reach the ``limit``-th best (all :func:`worth_explaining` reads).
    ``cache_key`` (index file, playbook blob): keep reused postings in ``cache``
    (:mod:`scarwarden.recall.postings_cache`); None: read everything from SQLite.
    ``min_postings``: prune from this many postings on, whatever the task (tests);
    by default only a short task (:data:`MAX_STEMS`) with :data:`MIN_POSTINGS` postings
    and a stem in :data:`MIN_COMMON` rules or more is pruned."""
    lists = [*task.df.values(), *task.ep_df.values()]
    if min_postings is None and (
        sum(lists) < MIN_POSTINGS or max(lists, default=0) < MIN_COMMON or len(task.df) > MAX_STEMS
    ):
        return candidates(conn, task, count)
    if min_postings is not None and sum(lists) < min_postings:
        return candidates(conn, task, count)
    reader = _Reader(conn, task, cache_key, cache)
    return candidates(conn, task, count, only=sorted(_survivors(reader, task, limit)))


def _survivors(reader: _Reader, task: TaskTerms, limit: int) -> set[str]:
    """The rules that can reach the ``limit``-th best score, and maybe a few more."""
    conn, w = reader.conn, reader.w
    min_length1 = _min_length1(conn, sorted(w))
    # Sources: each stem's tf-1 postings, and each tag that hits (its rules).
    sources = [
        (w[t] / (1.0 + reader.base + reader.slope * length) * (1.0 + _MARGIN), "stem", t)
        for t, length in min_length1.items()
    ]
    sources += [(value * (1.0 + _MARGIN), "tag", tag) for tag, value in reader.hit_tags().items()]
    caps = _etf_caps(conn, sorted(reader.ep_w))
    sources += [
        (value * _saturation(caps.get(t)) * (1.0 + _MARGIN), "episode", t) for t, value in reader.ep_w.items()
    ]
    # Any set of sources whose bounds sum below the floor may be skipped, not only the
    # lowest bounds: read first what lowers the bound left most per posting read (rare
    # stems, then tags, which hit a few hundred rules for 3 points each), so what is
    # skipped is the few stems with the longest lists.
    sources.sort(key=lambda source: (reader.size(source) / max(source[0], 1e-12), source[1], source[2]))
    # The episode words are sources of their own (version 4), else summed here in full.
    partial = dataclasses.replace(task, ep_df={}) if reader.ep_w else task
    acc = dict(candidates(conn, partial, -1, repeated_only=True, tags=False))
    read = 0
    while read < len(sources):
        rest = sum(bound for bound, _, _ in sources[read:]) * (1.0 + _MARGIN)
        floor = _floor(acc.values(), limit)
        if rest < floor:
            break
        batch = _batch(sources, read, reader.size)
        reader.add(acc, batch)
        read += len(batch)
    else:  # everything read: the sums are complete
        floor = _floor(acc.values(), limit)
        return {r for r, v in acc.items() if v >= floor}
    # What is left are common: no rule without a rarer stem or a tag can reach the floor.
    alive = {r: v for r, v in acc.items() if v + rest >= floor}
    for source in sources[read:]:
        if not alive:
            break
        reader.add(alive, [source], existing=True)
        rest = max(0.0, rest - source[0])
        alive = {r: v for r, v in alive.items() if v + rest >= floor}
    # Every source is in the sums left: they are scores, and their limit-th best is
    # the floor, so only the rules the cut can keep go to the exhaustive statement.
    floor = max(floor, _floor(alive.values(), limit))
    return {r for r, v in alive.items() if v >= floor}


_Source = tuple[float, str, str]  # (bound, "stem", "tag" or "episode", the stem or the tag)


def _batch(sources: list[_Source], start: int, size: Any) -> list[_Source]:
    """The next sources to read in full: one common stem, or rare ones up to ~1,000
    postings (a query each would cost more than their rows)."""
    end, postings = start, 0
    while end < len(sources) and (end == start or postings + size(sources[end]) <= _BATCH_POSTINGS):
        postings += size(sources[end])
        end += 1
    return sources[start:end]


def _floor(values: Any, limit: int) -> float:
    """A floor under the ``limit``-th best score: the ``limit``-th best partial sum,
    lowered by the margin (0.0 when fewer than ``limit`` rules have one)."""
    best = heapq.nlargest(limit, values)
    if len(best) < limit:
        return 0.0
    return best[-1] * (1.0 - _MARGIN) - _MARGIN


def _min_length1(conn: Any, stems: list[str]) -> dict[str, int]:
    """Stem -> the shortest active rule saying it once (stems no rule says once: absent)."""
    rows = conn.execute(
        "SELECT term, min_length1 FROM rule_term_df WHERE term IN (SELECT value FROM json_each(?))",
        (json.dumps(stems),),
    )
    return {term: int(length) for term, length in rows if length is not None}


def _etf_caps(conn: Any, stems: list[str]) -> dict[str, int]:
    """Stem -> the most any one cited episode says it (``etf``, task + correction), from
    ``rule_episode_df.max_etf`` (schema 18 on; a stem it does not give has no cap)."""
    if not stems:
        return {}
    rows = conn.execute(
        "SELECT term, max_etf FROM rule_episode_df WHERE term IN (SELECT value FROM json_each(?))",
        (json.dumps(stems),),
    ).fetchall()
    return {term: int(cap) for term, cap in rows if cap}


def _saturation(cap: int | None) -> float:
    """The most ``etf / (etf + K1)`` can be for a stem no episode says more than ``cap``
    times (1, its limit, when the index does not say)."""
    return 1.0 if cap is None else cap / (cap + K1)


class _Reader:
    """Adds what stems' tf-1 postings contribute to partial sums, from the postings
    cache when it has them, else from SQLite (which then does the arithmetic: a row
    crossing into Python costs more than it)."""

    def __init__(
        self, conn: Any, task: TaskTerms, cache_key: tuple[str, str] | None, cache: PostingsCache
    ) -> None:
        self.conn, self.task, self.cache_key, self.cache = conn, task, cache_key, cache
        self.w = dict(weights(task))
        self.tag_rules: dict[str, tuple[str, int]] = {}  # tag -> (one of its stems, rules)
        self.base, self.slope = K1 * (1.0 - B), K1 * B / task.avg
        # Version 4: each episode stem's weight; what the stems read give each episode
        # (the same under every rule citing it: an episode's words are its own), and
        # each rule's best episode so far (what its partial sum holds).
        self.ep_w = dict(episode_weights(task)) if task.closest else {}
        self.ep_sums: dict[str, float] = {}
        self.ep_best: dict[str, float] = {}

    def hit_tags(self) -> dict[str, float]:
        """The tags whose stems are all in the task -> what a hit adds (as the tag
        branch of :func:`candidates` computes it); also notes how many rules have each."""
        stems = sorted(self.task.qtf)
        rows = self.conn.execute(
            "SELECT tag, max(parts), count(*) FROM rule_tag_stems "
            "WHERE stem IN (SELECT value FROM json_each(?)) GROUP BY tag",
            (json.dumps(stems),),
        )
        hits: dict[str, float] = {}
        for tag, parts, count in rows:
            tag_stems = text.tag_stems(tag)
            if parts and len(tag_stems) == parts and all(s in self.task.qtf for s in tag_stems):
                hits[tag] = TAG_WEIGHT * min(self.task.q(s) for s in tag_stems)
                self.tag_rules[tag] = (tag_stems[0], count // parts)
        return hits

    def size(self, source: _Source) -> int:
        """How many postings a source has (an episode stem: the rules it is under)."""
        kind, key = source[1], source[2]
        if kind == "episode":
            return self.task.ep_df[key]
        return self.task.df[key] if kind == "stem" else self.tag_rules[key][1]

    def add(self, acc: dict[str, float], sources: list[_Source], *, existing: bool = False) -> None:
        """Add what ``sources`` contribute to ``acc``; ``existing``: to the rules it
        holds only (others cannot reach the floor any more)."""
        stems = [key for _, kind, key in sources if kind == "stem"]
        for _, kind, key in sources:
            if kind == "tag":
                self._add_tag(acc, key, existing)
            elif kind == "episode":
                self._add_episode(acc, key, existing)
        from_sql = []
        for stem in stems:
            cached = self.cache.get(self.conn, self.cache_key, stem, self.task.df[stem])
            if cached is None:
                from_sql.append(stem)
                continue
            self._add_cached(acc, stem, cached, existing)
        if from_sql:
            seek = existing and len(from_sql) == 1 and len(acc) * _SEEK_COST < self.task.df[from_sql[0]]
            self._from_sql(acc, from_sql, only=acc if seek else None, existing=existing)

    def _add_cached(self, acc: dict[str, float], stem: str, cached: dict[str, int], existing: bool) -> None:
        """The hot loop of a warm process: one contribution per rule length (rules
        share a few dozen lengths), a dictionary lookup or two per posting."""
        w, base, slope = self.w[stem], self.base, self.slope
        by_length: dict[int, float] = {}
        if existing and len(acc) < len(cached):
            find = cached.get
            for rule_id in acc:
                length = find(rule_id)
                if length is not None:
                    acc[rule_id] += w / (1.0 + base + slope * length)
            return
        get = acc.get
        for rule_id, length in cached.items():
            value = by_length.get(length)
            if value is None:
                value = by_length[length] = w / (1.0 + base + slope * length)
            if not existing:
                acc[rule_id] = get(rule_id, 0.0) + value
            elif rule_id in acc:
                acc[rule_id] += value

    def _add_tag(self, acc: dict[str, float], tag: str, existing: bool) -> None:
        value = TAG_WEIGHT * min(self.task.q(s) for s in text.tag_stems(tag))
        stem = self.tag_rules[tag][0]
        for (rule_id,) in self.conn.execute(
            "SELECT rule_id FROM rule_tag_stems WHERE stem = ? AND tag = ?", (stem, tag)
        ):
            if not existing:
                acc[rule_id] = acc.get(rule_id, 0.0) + value
            elif rule_id in acc:
                acc[rule_id] += value

    def _add_episode(self, acc: dict[str, float], stem: str, existing: bool) -> None:
        """Add what an episode stem gives each episode saying it; a rule's partial sum
        rises by what its best cited episode gained (the closest episode alone counts).
        The postings come in key order (the primary key's: no sort), a (rule, episode)'s
        fields one after the other, and are summed here: SQLite's GROUP BY cost as much
        as handing over the rows. (Split, a (rule, episode)'s sum would be too high.)
        An episode's sum is the same under every rule citing it, so it is kept by
        episode and worked out once per stem (``now``), not once per citing rule; a
        rule dropped (``existing``) is never read again, whatever its episodes add."""
        sql = (
            "SELECT rule_id, episode_id, tf FROM rule_episode_terms WHERE term = ?{only} "
            "ORDER BY rule_id, episode_id"
        )
        seek = existing and len(acc) * _SEEK_COST < self.task.ep_df[stem]
        rows = self.conn.execute(
            sql.format(only=" AND rule_id IN (SELECT value FROM json_each(?))" if seek else ""),
            (stem, json.dumps(list(acc))) if seek else (stem,),
        )
        w, sums, best = self.ep_w[stem], self.ep_sums, self.ep_best
        now: dict[str, float] = {}  # episode -> its sum with this stem
        get_sum, get_now, get_best, get_acc = sums.get, now.get, best.get, acc.get
        gain = [w * etf / (etf + K1) for etf in range(8)]  # by etf: most say a stem once
        rule: Any = None  # the (rule, episode) being summed, and its etf so far
        episode: Any = None
        etf = 0
        for rule_id, episode_id, tf in [*rows, (None, None, 0)]:  # a last row ends the last group
            if episode_id == episode and rule_id == rule:
                etf += tf
                continue
            if rule is not None and (not existing or rule in acc):
                value = get_now(episode)
                if value is None:
                    add = gain[etf] if etf < 8 else w * etf / (etf + K1)
                    value = now[episode] = get_sum(episode, 0.0) + add
                was = get_best(rule, 0.0)
                if value > was:
                    best[rule] = value
                    acc[rule] = get_acc(rule, 0.0) + (value - was)
            rule, episode, etf = rule_id, episode_id, tf
        sums.update(now)

    def _from_sql(
        self, acc: dict[str, float], stems: list[str], *, only: dict[str, float] | None, existing: bool
    ) -> None:
        """Each stem's tf-1 postings (``only``: a seek by (term, rule ID) for each of those
        rules), one statement per stem with its weight as a plain parameter: SQLite does
        the arithmetic, and no JSON is taken apart per posting."""
        sql = "SELECT rule_id, ? / (1.0 + ? + ? * length) FROM rule_terms WHERE term = ? AND tf = 1"
        if only is not None:
            sql += " AND rule_id IN (SELECT value FROM json_each(?))"
        extra = (json.dumps(list(only)),) if only is not None else ()
        for stem in stems:
            rows = self.conn.execute(sql, (self.w[stem], self.base, self.slope, stem, *extra))
            if existing:
                for rule_id, value in rows:
                    if rule_id in acc:
                        acc[rule_id] += value
            else:
                get = acc.get
                for rule_id, value in rows:
                    acc[rule_id] = get(rule_id, 0.0) + value
