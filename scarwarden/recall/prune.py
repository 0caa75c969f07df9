"""Recall's first pass: the same candidates as the exhaustive statement, from few postings.

:func:`scarwarden.recall.candidates.candidates` sums every posting of every task stem
for every rule in SQL, and at 100k rules a common word has thousands of postings. Only
the rules that can reach the ``limit``-th best score make the result
(:func:`score.worth_explaining`), so this module finds those rules first and lets the
exhaustive statement rank just them: scores, order and ties are that statement's own.

It reads the packed postings (:mod:`scarwarden.index.packed_postings`, fetched in one
statement a recall): a stem's rules in runs of equal ``(tf, length)``, a tag's rules,
and a stem's cited *episodes* in runs of equal ``etf`` (an episode's words are the same
under every rule citing it, so its sum is worked out once and a rule gets its best
episode's, version 4); pairs are read from ``rule_pair_terms`` (few rules say a pair).
Then MaxScore (Turtle and Flood, "Query evaluation: strategies and optimizations",
1995):

1. **Sources** are a stem's postings, a pair's, a tag's rules, and the episode words
   (the citing rules of the best episodes get their episode score at once, the rest
   can gain at most the next episode's sum). Each has a bound: the most it adds to one
   rule. Every contribution is positive, so the ``limit``-th best partial sum is a
   floor under the ``limit``-th score.
2. Sources are read in full in the order that lowers the bound left most per posting
   read (rare stems first), the floor rising, until what is left sums below it: a rule
   found in none of the sources read cannot reach the result.
3. **The sources left** (the common stems) are looked up only for the rules that can
   still reach the floor (a bisection per run, or a pass filtered to them), dropping
   rules as what is left to add shrinks.
4. **The survivors** within a margin of the ``limit``-th best are ranked by
   :func:`candidates` restricted to them.

Margins of 1e-8 keep floating-point noise on the safe side: a bound is never below
what it bounds, a floor never above the score under it. The exhaustive statement runs
when there is nothing to skip (no posting: :data:`MIN_POSTINGS`), and before version
4 (every cited episode's words summed, not the closest's).
"""

from __future__ import annotations

import heapq
import json
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from itertools import repeat
from operator import itemgetter

from scarwarden.index.packed_postings import decode, unpack_ints
from scarwarden.recall import dense
from scarwarden.recall.candidates import candidates, episode_weights, pair_weights, weights
from scarwarden.recall.citing import CITING, CitingView
from scarwarden.recall.formulas import K1, TAG_WEIGHT, B
from scarwarden.recall.score import TaskTerms
from scarwarden.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Below this many postings for the task's stems (and its episode words), or without a
#: stem in :data:`MIN_COMMON` rules, the exhaustive statement runs: with none, there is
#: nothing to skip. Sessions 6-7 chose 2,000 and 500 on bench/recall.py's cited corpus,
#: where the statement was as fast; over the packed postings (session 10) this pass is
#: faster there. Session 17, interleaved, the same JSON: CPU p50 at 1 and 1, 0.95x of
#: 2,000 and 500's at 1k rules and 0.92x at 10k.
MIN_POSTINGS = 1
MIN_COMMON = 1
#: The floor is rechecked after about this many postings read (a pass over the sums).
_BATCH_POSTINGS = 1000
#: The best episodes' citing rules, up to one citation per this many rules, get their
#: episode score before anything else is read (2,000 at 100k rules).
_TOP_SHARE = 50
#: Relative safety margin on bounds and floors (scores are sums of a few dozen terms).
_MARGIN = 1e-8


def best_candidates(
    conn: Any, task: TaskTerms, limit: int, count: int, *, cache_key: tuple[str, str] | None = None
) -> list[tuple[str, float]]:
    """What :func:`candidates` returns for ``count``, at least for every rule whose
    score can reach the ``limit``-th best (all :func:`worth_explaining` reads).
    ``cache_key`` (index file, playbook blob): keep the episodes' citing rules read
    in this process (:data:`CITING`); None: read them each time.

    When ``limit == count`` (version 6 scores every one of them exactly, so only which
    rules they are matters), they are this pass's own, with its sums: the statement's
    rules, their scores equal to its but for rounding (the sums are added in another
    order), so in its order but where two differ only by that; when rules are within
    the margin of the ``limit``-th best without being among the ``limit`` best, the
    statement ranks those near the cut for the places the others leave."""
    lists = [*task.df.values(), *task.ep_df.values()]
    if not task.closest or sum(lists) < MIN_POSTINGS or max(lists, default=0) < MIN_COMMON:
        return candidates(conn, task, count)
    with _snapshot(conn):  # ordinals mean one thing from the first statement to the last
        reader = _Reader(conn, task, cache_key)
        if task.n >= dense.MIN_RULES and dense.available():
            kept = dense.survivors(reader, limit, cache_key)
        else:
            kept = _survivors(reader, limit)
        names = reader.rule_names(kept)
    if limit != count:
        return candidates(conn, task, count, only=sorted(names.values()))
    if len(kept) <= limit:
        return _by_score((names[o], v) for o, v in kept.items())
    # A near tie at the cut: the rules clearly above it (fewer than ``limit``) are in
    # whatever the statement's rounding; it ranks the others for the places left.
    kth = sorted(kept.values(), reverse=True)[limit - 1]
    bar = kth * (1.0 + _MARGIN) + _MARGIN
    sure = [(names[o], v) for o, v in kept.items() if v > bar]
    near = sorted(names[o] for o, v in kept.items() if v <= bar)
    return _by_score(sure + candidates(conn, task, count - len(sure), only=near))


def _by_score(found: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    return sorted(found, key=lambda item: (-item[1], item[0]))


@contextmanager
def _snapshot(conn: Any) -> Iterator[None]:
    """One read transaction around the pass (unless one is open already): another
    process refreshing the index in between could give an ordinal to another rule."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


@record
class _Source:
    """A list of postings: runs of rule ordinals, each adding ``value`` (``runs``), or
    the episode words (``met``: the rules already given their best episode's sum)."""

    bound: float
    size: int
    runs: list[tuple[Sequence[int], int, int, float]] = field(default_factory=list)
    met: dict[int, float] | None = None


def _survivors(reader: _Reader, limit: int) -> dict[int, float]:
    """Rule ordinal -> its sum, for the rules that can reach the ``limit``-th best."""
    sources = reader.sources()
    acc: dict[int, float] = defaultdict(float)
    episodes = reader.episode_source(acc)
    if episodes is not None:
        sources.append(episodes)
    sources.sort(key=lambda s: s.size / s.bound)
    left = [0.0] * (len(sources) + 1)  # what the sources from i on can add to one rule
    for i in range(len(sources) - 1, -1, -1):
        left[i] = left[i + 1] + sources[i].bound * (1.0 + _MARGIN)
    floor, unchecked = 0.0, _BATCH_POSTINGS
    for read, source in enumerate(sources):
        if len(acc) >= limit and (unchecked >= _BATCH_POSTINGS or source.size >= _BATCH_POSTINGS):
            floor, unchecked = _floor(acc.values(), limit), 0
        if left[read] < floor:
            break
        reader.add_all(acc, source)
        unchecked += source.size
    else:  # everything read: the sums are complete
        return _cut(acc, limit)
    need = floor - left[read]  # what a rule must hold already to reach the floor
    alive = {o: v for o, v in acc.items() if v >= need}
    for i in range(read, len(sources)):
        if not alive:
            break
        reader.add_alive(alive, sources[i])
        need = floor - left[i + 1]
        alive = {o: v for o, v in alive.items() if v >= need}
    return _cut(alive, limit)


def _floor(values: Iterable[float], limit: int) -> float:
    """A floor under the ``limit``-th best score (0.0 when fewer rules have a sum)."""
    best = heapq.nlargest(limit, values)
    return best[-1] * (1.0 - _MARGIN) - _MARGIN if len(best) == limit else 0.0


def _cut(sums: dict[int, float], limit: int) -> dict[int, float]:
    """The complete sums within the margin of the ``limit``-th best."""
    if len(sums) <= limit:
        return sums
    floor = _floor(sums.values(), limit)
    return {o: v for o, v in sums.items() if v >= floor}


class _Reader:
    """The task's packed entries, and what the sources add to partial sums."""

    def __init__(self, conn: Any, task: TaskTerms, cache_key: tuple[str, str] | None) -> None:
        self.conn, self.task = conn, task
        self.base, self.slope = K1 * (1.0 - B), K1 * B / task.avg
        self.terms, self.pairs, self.ep_w = weights(task), pair_weights(task), episode_weights(task)
        self.tags = self._hit_tags()
        self.entries: dict[tuple[str, str], tuple[bytes, bytes]] = {}
        keys = {"t": [t for t, _ in self.terms], "e": [t for t, _ in self.ep_w], "g": sorted(self.tags)}
        if any(keys.values()):
            rows = self.conn.execute(
                " UNION ALL ".join(
                    f"SELECT kind, key, ords, runs FROM packed WHERE kind = '{kind}' "
                    f"AND key IN (SELECT value FROM json_each(:{kind}))"
                    for kind in keys
                ),
                {kind: json.dumps(values) for kind, values in keys.items()},
            )
            self.entries = {(kind, key): (ords, runs) for kind, key, ords, runs in rows}
        self.cache_key = cache_key
        self.ep_sum: dict[int, float] = {}

    @cached_property
    def citing(self) -> CitingView:
        """The episodes' citing rules (read when the episode words are summed)."""
        return CITING.view(self.conn, self.cache_key)

    def _hit_tags(self) -> dict[str, float]:
        """The tags whose stems the task says in full -> what a hit adds (as the tag
        branch of :func:`candidates` computes it)."""
        found: dict[str, list[str]] = defaultdict(list)
        parts_of: dict[str, int] = {}
        rows = self.conn.execute(
            "SELECT stem, tag, parts FROM tag_stems WHERE stem IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(self.task.qtf)),),
        )
        for stem, tag, parts in rows:
            found[tag].append(stem)
            parts_of[tag] = parts
        q = self.task.q
        return {
            tag: TAG_WEIGHT * min(q(s) for s in stems)
            for tag, stems in found.items()
            if len(stems) == parts_of[tag]  # rows are distinct (stem, tag): all its stems
        }

    def sources(self) -> list[_Source]:
        """The stems', pairs' and tags' postings, each a source with its bound."""
        out = []
        for stem, w in self.terms:
            entry = self.entries.get(("t", stem))
            if entry is not None:
                ords, runs = decode(*entry)
                out.append(self._runs([(ords, start, end, tf, length) for start, end, tf, length in runs], w))
        by_pair = self.pair_postings()
        for pair, w in self.pairs:
            if pair in by_pair:
                groups = sorted((key, sorted(ords)) for key, ords in by_pair[pair].items())
                out.append(self._runs([(ords, 0, len(ords), tf, length) for (tf, length), ords in groups], w))
        for tag, value in sorted(self.tags.items()):
            entry = self.entries.get(("g", tag))
            if entry is not None:
                ords = unpack_ints(entry[0])
                out.append(_Source(value * (1.0 + _MARGIN), len(ords), [(ords, 0, len(ords), value)]))
        return out

    def pair_postings(self) -> dict[str, dict[tuple[int, int], list[int]]]:
        """Pair -> (tf, length) -> the rule ordinals saying it (few rules say a pair:
        read from ``rule_pair_terms``, not packed)."""
        by_pair: dict[str, dict[tuple[int, int], list[int]]] = defaultdict(lambda: defaultdict(list))
        if self.pairs:
            for pair, ordinal, tf, length in self.conn.execute(
                "SELECT p.term, o.ord, p.tf, p.length FROM rule_pair_terms AS p JOIN rule_ords AS o "
                "ON o.rule_id = p.rule_id WHERE p.term IN (SELECT value FROM json_each(?))",
                (json.dumps([p for p, _ in self.pairs]),),
            ):
                by_pair[pair][(tf, length)].append(ordinal)
        return by_pair

    def _runs(self, runs: list[tuple[Sequence[int], int, int, int, int]], w: float) -> _Source:
        """A stem's or pair's runs, each with what one of its postings adds."""
        valued = [
            (ords, start, end, w * tf / (tf + self.base + self.slope * length))
            for ords, start, end, tf, length in runs
        ]
        bound = max(value for *_, value in valued) * (1.0 + _MARGIN)
        return _Source(bound, sum(end - start for _, start, end, _ in valued), valued)

    def episode_source(self, acc: dict[int, float]) -> _Source | None:
        """Each cited episode's sum over the task's episode stems; the citing rules of
        the best episodes get their best episode's sum in ``acc`` now, and what is
        left is one source whose bound is the next episode's sum."""
        sums: dict[int, float] = {}
        get = sums.get
        for stem, w in self.ep_w:
            entry = self.entries.get(("e", stem))
            if entry is None:
                continue
            ords, runs = decode(*entry)
            for start, end, etf, _ in runs:
                value = w * etf / (etf + K1)
                for e in ords[start:end]:
                    sums[e] = get(e, 0.0) + value
        if not sums:
            return None
        self.ep_sum = sums
        order = [e for e, _ in sorted(sums.items(), key=itemgetter(1), reverse=True)]
        citing = self.citing.of(order)
        budget = max(1, self.citing.rules // _TOP_SHARE)
        top, cited = 0, 0
        while top < len(order) and cited < budget:
            cited += len(citing[order[top]])
            top += 1
        met = _best_episode({e: sums[e] for e in order[:top]}, citing)
        for o, v in met.items():
            acc[o] += v
        if top == len(order):
            return None
        size = sum(map(len, map(citing.__getitem__, order[top:])))
        return _Source(sums[order[top]] * (1.0 + _MARGIN), max(size, 1), met=met)

    def add_all(self, acc: dict[int, float], source: _Source) -> None:
        """Add every posting of ``source`` to ``acc``."""
        if source.met is None:
            for ords, start, end, value in source.runs:
                for o in ords[start:end]:
                    acc[o] += value
            return
        met = source.met
        for o, v in _best_episode(self.ep_sum, self.citing.of(self.ep_sum)).items():
            if o not in met:
                acc[o] += v

    def add_alive(self, alive: dict[int, float], source: _Source) -> None:
        """Add what ``source`` gives the rules in ``alive`` (others cannot make it)."""
        if source.met is None:
            if len(alive) * len(source.runs) * 8 < source.size:  # a bisection per run per rule
                for o in alive:
                    for ords, start, end, value in source.runs:
                        j = bisect_left(ords, o, start, end)
                        if j < end and ords[j] == o:
                            alive[o] += value
                            break
                return
            for ords, start, end, value in source.runs:
                for o in ords[start:end]:
                    if o in alive:
                        alive[o] += value
            return
        met, get = source.met, self.ep_sum.get
        if len(alive) * 30 < source.size:  # the alive rules' cited episodes, one by one
            cited = self._cited(o for o in alive if o not in met)
            for o, episodes in cited.items():
                alive[o] += max([get(e, 0.0) for e in episodes], default=0.0)
            return
        best = _best_episode(self.ep_sum, self.citing.of(self.ep_sum)).get
        for o in alive:
            if o not in met:
                alive[o] += best(o, 0.0)

    def _cited(self, ords: Iterable[int]) -> dict[int, Sequence[int]]:
        """Rule ordinal -> the ordinals of the episodes it cites."""
        rows = self.conn.execute(
            "SELECT ord, episodes FROM rule_ords WHERE ord IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(ords)),),
        )
        return {o: unpack_ints(blob) for o, blob in rows}

    def rule_names(self, ords: Iterable[int]) -> dict[int, str]:
        """Rule ordinal -> its ID, for ``ords``."""
        rows = self.conn.execute(
            "SELECT ord, rule_id FROM rule_ords WHERE ord IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(ords)),),
        )
        return dict(rows)


def _best_episode(sums: dict[int, float], citing: dict[int, Sequence[int]]) -> dict[int, float]:
    """Each citing rule's best episode's sum: episodes in ascending order of sum, the
    last write wins (the loop over citing rules runs in C)."""
    best: dict[int, float] = {}
    for e in sorted(sums, key=sums.__getitem__):
        best.update(zip(citing[e], repeat(sums[e])))
    return best
