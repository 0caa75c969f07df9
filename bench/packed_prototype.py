"""Packed postings for recall's first pass: how fast could it be, same results?

A bench-only prototype (issue 30): the first pass of recall
(:func:`scarwarden.recall.prune.best_candidates`, MaxScore over SQLite postings read
row by row) beside a first pass over *packed* postings, one entry per stem:

* ``t:<stem>`` / ``p:<pair>``: the rule ordinals saying it (int32), grouped by
  ``(tf, length)`` runs (int32 triplets ``tf, length, count``): the BM25 factor
  ``tf / (tf + K1 (1 - B + B len / avglen))`` is worked out once per run at query
  time, so a change of the average length rewrites nothing;
* ``g:<tag>``: the rule ordinals having the tag (a tag hits when all its stems are
  in the task, as :mod:`scarwarden.recall.candidates` says);
* ``e:<stem>``: the words of the cited episodes at the *episode* level: episode
  ordinals grouped by ``etf`` (task + correction) runs, plus one citation map
  episode -> rule ordinals (CSR arrays, loaded once per process); a rule's episode
  score is its best episode's sum (version 4);

rule ordinals = positions in the sorted rule-ID list, episode ordinals the same for
episode IDs. The entries are built from the cached index (SQL over rule_terms,
rule_pair_terms, rule_tag_stems, rule_episode_terms, citations: build time and size
printed apart, as index-build work) and stored as BLOBs in a temporary SQLite file
under /tmp, read back per query (one statement for all the task's entries,
``array.frombytes`` / ``np.frombuffer``): a process meeting the tasks for the first
time pays the fetch.

The first pass is then worked out over the entries three ways:

* ``packed-py``: every rule's score summed exhaustively in pure Python (the product's
  base dependencies: no numpy);
* ``packed-py-pruned``: pure Python, MaxScore as prune.py does it (sources read in
  full, cheapest per bound first, until what is left cannot lift a rule to the floor;
  the rest looked up by bisection for the rules still alive), the episode channel's
  sums exact up front at the episode level;
* ``packed-np``: every rule's score in a dense numpy vector.

The rules within 1e-8 of the ``limit + slack``-th best score go to
:func:`scarwarden.recall.candidates.candidates` restricted to them (``only=``), as
prune.py ends, so order, ties and scores are that statement's own; the ``-direct``
variants skip that statement and hand over their own top ``limit + slack`` (falling
back to the statement when a near tie straddles the cut).

Timed in CPU time (``time.process_time``) per query, interleaved query by query (which
engine goes first rotating) with today's recall and with SQLite FTS5 and bm25s (as
bench/recall.py builds them), in one process: the first pass alone and the whole recall
(the prototype's first pass substituted for ``best_candidates`` in
:func:`scarwarden.recall.engine.recall`, in this script only). Every prototype's
``to_json`` and ``--explain`` document is compared with today's for every query, and
its first-pass candidates with today's. Then what a refresh would rewrite (one rule
changed, one cited episode added), and ``import numpy``'s cost.

    python bench/packed_prototype.py                      # 1k, 10k, 100k, 300 queries
    python bench/packed_prototype.py --sizes 10000 --queries 100
    python bench/packed_prototype.py --memory             # entries held in memory (a warm server)

Session 10 built this into the product (index schema 20: ``scarwarden/index/packed_postings.py``;
the first pass: ``scarwarden/recall/prune.py``, MaxScore, and ``scarwarden/recall/dense.py``,
numpy); this script stays as the prototype's record, and still runs.

Not the product: nothing here changes scarwarden/, the benchmark repositories
(bench/.cache, built by bench/recall.py) are only read through the library, and the
packed entries are not kept in sync with the index (no refresh code, only its cost).
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time
from array import array
from bisect import bisect_left
from collections import defaultdict
from itertools import repeat
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import recall as bench  # noqa: E402

from scarwarden.index import open_index  # noqa: E402
from scarwarden.recall import engine  # noqa: E402
from scarwarden.recall.candidates import candidates, episode_weights, pair_weights, weights  # noqa: E402
from scarwarden.recall.explain import explain_data  # noqa: E402
from scarwarden.recall.formulas import K1, TAG_WEIGHT, B  # noqa: E402

#: The floor is rechecked after about this many postings read (as prune.py's batches).
_BATCH_POSTINGS = 1000
#: The best episodes' citing rules, up to one citation per this many rules (2,000 at
#: 100k rules, 200 at 10k), get their episode score before anything else is read.
_TOP_SHARE = 50
#: Relative margin under the cut (as prune.py's): a rule this close to the
#: ``limit + slack``-th score goes to the exhaustive statement too.
_MARGIN = 1e-8


class Packed:
    """The packed entries of one index (in a SQLite file of BLOBs, or in memory) and
    what a process loads once: rule and episode IDs, the citation map, tags' stems."""

    def __init__(self, conn: Any, path: Path, in_memory: bool) -> None:
        start = time.process_time()
        self.ids = [r for (r,) in conn.execute("SELECT id FROM rules WHERE NOT retired ORDER BY id")]
        ordinal = {r: i for i, r in enumerate(self.ids)}
        entries: dict[str, tuple[bytes, bytes]] = {}
        for kind, table in (("t", "rule_terms"), ("p", "rule_pair_terms")):
            runs: dict[tuple[int, int], array] = defaultdict(lambda: array("i"))
            last = None
            for term, rule_id, tf, length in conn.execute(
                f"SELECT term, rule_id, tf, length FROM {table} ORDER BY term, rule_id"
            ):
                if term != last:
                    if last is not None:
                        entries[f"{kind}:{last}"] = _runs(runs)
                    runs, last = defaultdict(lambda: array("i")), term
                runs[(tf, length)].append(ordinal[rule_id])
            if last is not None:
                entries[f"{kind}:{last}"] = _runs(runs)
        self.tags: dict[str, tuple[int, frozenset[str]]] = {}  # tag -> (parts, its stems)
        self.stem_tags: dict[str, list[str]] = defaultdict(list)
        tag_rules: dict[str, set[int]] = defaultdict(set)
        stems: dict[str, set[str]] = defaultdict(set)
        parts_of: dict[str, int] = {}
        for stem, rule_id, tag, parts in conn.execute("SELECT stem, rule_id, tag, parts FROM rule_tag_stems"):
            tag_rules[tag].add(ordinal[rule_id])
            stems[tag].add(stem)
            parts_of[tag] = parts
        for tag in sorted(tag_rules):
            self.tags[tag] = (parts_of[tag], frozenset(stems[tag]))
            for stem in sorted(stems[tag]):
                self.stem_tags[stem].append(tag)
            entries[f"g:{tag}"] = (array("i", sorted(tag_rules[tag])).tobytes(), b"")
        # The citation map (episode -> rules), CSR; the episodes' words by episode.
        cites: dict[str, list[int]] = defaultdict(list)
        for episode_id, rule_id in conn.execute("SELECT episode_id, rule_id FROM citations ORDER BY 1, 2"):
            if rule_id in ordinal:
                cites[episode_id].append(ordinal[rule_id])
        self.episodes = sorted(cites)
        ep_ord = {e: i for i, e in enumerate(self.episodes)}
        self.ptr, self.cited = array("i", [0]), array("i")
        for e in self.episodes:
            self.cited.extend(cites[e])
            self.ptr.append(len(self.cited))
        by_rule: dict[int, list[int]] = defaultdict(list)
        for e in self.episodes:
            for o in cites[e]:
                by_rule[o].append(ep_ord[e])
        self.rptr, self.reps = array("i", [0]), array("i")
        for o in range(len(self.ids)):
            self.reps.extend(by_rule.get(o, ()))
            self.rptr.append(len(self.reps))
        self.mismatched = 0  # (term, episode, field) groups not the same under every citing rule
        etf: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        for term, episode_id, _field, low, high, rules in conn.execute(
            "SELECT term, episode_id, field, min(tf), max(tf), count(*) FROM rule_episode_terms "
            "GROUP BY term, episode_id, field"
        ):
            if low != high or rules != len(cites.get(episode_id, ())):
                self.mismatched += 1
            etf[term][ep_ord[episode_id]] += low
        for term, by_episode in etf.items():
            runs = defaultdict(lambda: array("i"))
            for e in sorted(by_episode):
                runs[(by_episode[e], 0)].append(e)
            entries[f"e:{term}"] = _runs(runs)
        self.build_s = time.process_time() - start
        self.sizes = {key: len(a) + len(b) for key, (a, b) in entries.items()}
        self.csr_bytes = len(self.ptr.tobytes()) + len(self.cited.tobytes())
        self.rcsr_bytes = len(self.rptr.tobytes()) + len(self.reps.tobytes())
        self.memory = entries if in_memory else None
        self.db: sqlite3.Connection | None = None
        if not in_memory:
            path.unlink(missing_ok=True)
            db = sqlite3.connect(str(path))
            db.execute("CREATE TABLE packed (key TEXT PRIMARY KEY, ords BLOB, runs BLOB) WITHOUT ROWID")
            db.executemany(
                "INSERT INTO packed VALUES (?, ?, ?)", ((k, a, b) for k, (a, b) in entries.items())
            )
            db.commit()
            self.db, self.path = db, path
        self.file_bytes = path.stat().st_size if not in_memory else 0
        self.np_ptr = self.np_cited = None

    def fetch(self, keys: list[str]) -> dict[str, tuple[bytes, bytes]]:
        """The entries of ``keys`` (absent: no entry), one statement."""
        if self.memory is not None:
            return {k: self.memory[k] for k in keys if k in self.memory}
        assert self.db is not None
        rows = self.db.execute(
            "SELECT key, ords, runs FROM packed WHERE key IN (SELECT value FROM json_each(?))",
            (json.dumps(keys),),
        )
        return {k: (a, b) for k, a, b in rows}

    def hit_tags(self, task: Any) -> list[tuple[str, float]]:
        """The tags whose stems the task says in full -> what a hit adds."""
        seen = {tag for stem in task.qtf for tag in self.stem_tags.get(stem, ())}
        out = []
        for tag in sorted(seen):
            parts, stems = self.tags[tag]
            if sum(1 for s in stems if s in task.qtf) == parts:
                value = (
                    TAG_WEIGHT * min(task.q(s) for s in stems)
                    if any(task.q(s) != 1.0 for s in stems)
                    else TAG_WEIGHT
                )
                out.append((tag, value))
        return out

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.path.unlink(missing_ok=True)


def _runs(runs: dict[tuple[int, int], array]) -> tuple[bytes, bytes]:
    """(ordinals grouped by run, the runs' (tf, length, count) triplets) as bytes."""
    ords, meta = array("i"), array("i")
    for (tf, length), group in sorted(runs.items()):
        ords.extend(group)
        meta.extend((tf, length, len(group)))
    return ords.tobytes(), meta.tobytes()


def _keys(pk: Packed, task: Any) -> tuple[list, list, list, list]:
    terms = weights(task)
    pairs = pair_weights(task)
    eps = episode_weights(task) if task.closest else []
    tags = pk.hit_tags(task)
    return terms, pairs, eps, tags


def _unpack(entry: tuple[bytes, bytes]) -> tuple[array, list[tuple[int, int, int, int]]]:
    """An entry's ordinals and its runs, as (start, end, tf or etf, length): the
    inverse of :func:`_runs`."""
    ords, meta = array("i"), array("i")
    ords.frombytes(entry[0])
    meta.frombytes(entry[1])
    runs, at = [], 0
    for i in range(0, len(meta), 3):
        runs.append((at, at + meta[i + 2], meta[i], meta[i + 1]))
        at += meta[i + 2]
    return ords, runs


def _ordinals(blob: bytes) -> array:
    ords = array("i")
    ords.frombytes(blob)
    return ords


def _episode_sums(got: dict[str, tuple[bytes, bytes]], eps: list) -> dict[int, float]:
    """Each episode's sum over the task's episode stems (its words, once per episode)."""
    ep_sum: dict[int, float] = {}
    get = ep_sum.get
    for t, w in eps:
        entry = got.get(f"e:{t}")
        if entry is None:
            continue
        ords, runs = _unpack(entry)
        for start, end, etf, _length in runs:
            value = w * etf / (etf + K1)
            for e in ords[start:end]:
                ep_sum[e] = get(e, 0.0) + value
    return ep_sum


def first_pass_py(pk: Packed, conn: Any, task: Any, limit: int, count: int, direct: bool = False) -> list:
    """Every rule's first-pass score in pure Python over the packed entries, then the
    rules that can reach the ``limit``-th best ranked by the exhaustive statement."""
    terms, pairs, eps, tags = _keys(pk, task)
    got = pk.fetch(_entry_keys(terms, pairs, eps, tags))
    base, slope = K1 * (1.0 - B), K1 * B / task.avg
    acc: dict[int, float] = {}
    get = acc.get
    for kind, weighted in (("t", terms), ("p", pairs)):
        for t, w in weighted:
            entry = got.get(f"{kind}:{t}")
            if entry is None:
                continue
            ords, runs = _unpack(entry)
            for start, end, tf, length in runs:
                value = w * tf / (tf + base + slope * length)
                for o in ords[start:end]:
                    acc[o] = get(o, 0.0) + value
    for tag, value in tags:
        for o in _ordinals(got[f"g:{tag}"][0]):
            acc[o] = get(o, 0.0) + value
    for o, v in _episode_best(pk, _episode_sums(got, eps)).items():
        acc[o] = get(o, 0.0) + v
    return _finish(pk, conn, task, acc.items(), len(acc), limit, count, direct)


def _finish(
    pk: Packed, conn: Any, task: Any, scored: Any, touched: int, limit: int, count: int, direct: bool
) -> list:
    """The rules within the margin of the ``limit``-th best, ranked by the statement (or
    by our own sums when ``direct`` and no near tie straddles the cut)."""
    if touched <= limit:
        keep = [o for o, _ in scored]
    else:
        top = heapq.nlargest(limit, scored, key=lambda item: item[1])
        cut = top[-1][1] * (1.0 - _MARGIN) - _MARGIN
        keep = [o for o, v in scored if v >= cut]
        if direct and len(keep) == limit == count:
            return [(pk.ids[o], v) for o, v in sorted(top, key=lambda item: (-item[1], pk.ids[item[0]]))]
    return candidates(conn, task, count, only=sorted(pk.ids[o] for o in keep))


def first_pass_pruned(pk: Packed, conn: Any, task: Any, limit: int, count: int, direct: bool = False) -> list:
    """Pure Python, MaxScore over the packed entries (prune.py's plan without its SQL):
    sources (a stem's or pair's postings, a tag's rules, the episode channel) read in
    full, cheapest per bound first, until what is left cannot lift a rule to the floor
    (the ``limit``-th best partial sum); the rest looked up for the rules still alive
    (a bisection per run of a stem's sorted ordinals; a rule's cited episodes through
    the rule -> episodes map). The episodes' sums are exact up front: at the episode
    level a stem has a few dozen postings, not the ~1,500 (rule, episode) rows of today."""
    terms, pairs, eps, tags = _keys(pk, task)
    got = pk.fetch(_entry_keys(terms, pairs, eps, tags))
    base, slope = K1 * (1.0 - B), K1 * B / task.avg
    sources: list[tuple[float, int, float, str, Any]] = []  # (cost per bound, i, bound, kind, data)
    for kind, weighted in (("t", terms), ("p", pairs)):
        for t, w in weighted:
            entry = got.get(f"{kind}:{t}")
            if entry is None:
                continue
            ords, packed = _unpack(entry)
            runs = [(start, end, w * tf / (tf + base + slope * length)) for start, end, tf, length in packed]
            bound = max(v for _, _, v in runs) * (1.0 + _MARGIN)
            sources.append((len(ords) / bound, len(sources), bound, "runs", (ords, runs), len(ords)))
    for tag, value in tags:
        ords = _ordinals(got[f"g:{tag}"][0])
        bound = value * (1.0 + _MARGIN)
        sources.append(
            (len(ords) / bound, len(sources), bound, "runs", (ords, [(0, len(ords), value)]), len(ords))
        )
    ep_sum = _episode_sums(got, eps)
    acc: dict[int, float] = defaultdict(float)
    if ep_sum:
        # The best episodes' citing rules get their episode score now (their best, in
        # C); the others can gain at most the next episode's sum.
        ptr = pk.ptr
        order = sorted(ep_sum, key=lambda e: (-ep_sum[e], e))
        top, citations = 0, 0
        while top < len(order) and citations < len(pk.ids) // _TOP_SHARE:
            citations += ptr[order[top] + 1] - ptr[order[top]]
            top += 1
        met = _episode_best(pk, {e: ep_sum[e] for e in order[:top]})
        for o, v in met.items():
            acc[o] += v
        if top < len(order):
            size = sum(ptr[e + 1] - ptr[e] for e in order[top:])
            bound = ep_sum[order[top]] * (1.0 + _MARGIN)
            sources.append((size / bound, len(sources), bound, "episodes", met, size))
    sources.sort()
    floor, read, unchecked = 0.0, 0, _BATCH_POSTINGS
    while read < len(sources):
        rest = sum(source[2] for source in sources[read:]) * (1.0 + _MARGIN)
        # The floor (a pass over the partial sums) is rechecked after ~1,000 postings
        # read, or before a long source.
        if len(acc) >= limit and (unchecked >= _BATCH_POSTINGS or sources[read][5] >= _BATCH_POSTINGS):
            floor, unchecked = heapq.nlargest(limit, acc.values())[-1] * (1.0 - _MARGIN) - _MARGIN, 0
        if rest < floor:
            break
        _add_full(pk, acc, sources[read], ep_sum)
        unchecked += sources[read][5]
        read += 1
    else:  # everything read: the sums are complete
        return _finish(pk, conn, task, acc.items(), len(acc), limit, count, direct)
    alive = {o: v for o, v in acc.items() if v + rest >= floor}
    for source in sources[read:]:
        _add_alive(pk, alive, source, ep_sum)
        rest = max(0.0, rest - source[2])
        alive = {o: v for o, v in alive.items() if v + rest >= floor}
    return _finish(pk, conn, task, alive.items(), len(alive), limit, count, direct)


def _add_full(pk: Packed, acc: dict[int, float], source: tuple, ep_sum: dict[int, float]) -> None:
    if source[3] == "runs":
        ords, runs = source[4]
        for start, end, value in runs:
            for o in ords[start:end]:
                acc[o] += value
        return
    met = source[4]
    for o, v in _episode_best(pk, ep_sum).items():
        if o not in met:
            acc[o] += v


def _episode_best(pk: Packed, ep_sum: dict[int, float]) -> dict[int, float]:
    """Each rule's best cited episode's sum: episodes in ascending order, the last
    write wins (the loop over citing rules runs in C)."""
    best: dict[int, float] = {}
    ptr, cited = pk.ptr, pk.cited
    for e in sorted(ep_sum, key=ep_sum.__getitem__):
        best.update(zip(cited[ptr[e] : ptr[e + 1]], repeat(ep_sum[e])))
    return best


def _add_alive(pk: Packed, alive: dict[int, float], source: tuple, ep_sum: dict[int, float]) -> None:
    if source[3] == "runs":
        ords, runs = source[4]
        if len(alive) * len(runs) * 8 < len(ords):  # a bisection per run per rule
            for o in alive:
                for start, end, value in runs:
                    j = bisect_left(ords, o, start, end)
                    if j < end and ords[j] == o:
                        alive[o] += value
                        break
        else:
            for start, end, value in runs:
                for o in ords[start:end]:
                    if o in alive:
                        alive[o] += value
        return
    if len(alive) * 30 < source[5]:  # the alive rules' cited episodes, one by one
        rptr, reps, get, met = pk.rptr, pk.reps, ep_sum.get, source[4]
        for o in alive:
            if o not in met:
                alive[o] += max([get(e, 0.0) for e in reps[rptr[o] : rptr[o + 1]]], default=0.0)
        return
    get, met = _episode_best(pk, ep_sum).get, source[4]
    for o in alive:
        if o not in met:
            alive[o] += get(o, 0.0)


def _entry_keys(terms: list, pairs: list, eps: list, tags: list) -> list[str]:
    return (
        [f"t:{t}" for t, _ in terms]
        + [f"p:{p}" for p, _ in pairs]
        + [f"e:{t}" for t, _ in eps]
        + [f"g:{g}" for g, _ in tags]
    )


def first_pass_np(pk: Packed, conn: Any, task: Any, limit: int, count: int, direct: bool = False) -> list:
    """The same sums with numpy (a dense score vector over all rules)."""
    import numpy as np

    if pk.np_ptr is None:
        pk.np_ptr = np.frombuffer(pk.ptr.tobytes(), dtype=np.int32).astype(np.int64)
        pk.np_cited = np.frombuffer(pk.cited.tobytes(), dtype=np.int32)
    terms, pairs, eps, tags = _keys(pk, task)
    got = pk.fetch(_entry_keys(terms, pairs, eps, tags))
    base, slope = K1 * (1.0 - B), K1 * B / task.avg
    scores = np.zeros(len(pk.ids))
    for kind, weighted in (("t", terms), ("p", pairs)):
        for t, w in weighted:
            entry = got.get(f"{kind}:{t}")
            if entry is None:
                continue
            ords = np.frombuffer(entry[0], dtype=np.int32)
            meta = np.frombuffer(entry[1], dtype=np.int32).reshape(-1, 3).astype(np.float64)
            values = w * meta[:, 0] / (meta[:, 0] + base + slope * meta[:, 1])
            scores[ords] += np.repeat(values, meta[:, 2].astype(np.int64))
    for tag, value in tags:
        scores[np.frombuffer(got[f"g:{tag}"][0], dtype=np.int32)] += value
    if eps:
        ep_sum = np.zeros(len(pk.episodes))
        for t, w in eps:
            entry = got.get(f"e:{t}")
            if entry is None:
                continue
            ords = np.frombuffer(entry[0], dtype=np.int32)
            meta = np.frombuffer(entry[1], dtype=np.int32).reshape(-1, 3).astype(np.float64)
            ep_sum[ords] += np.repeat(w * meta[:, 0] / (meta[:, 0] + K1), meta[:, 2].astype(np.int64))
        hit = np.flatnonzero(ep_sum)
        starts, ends = pk.np_ptr[hit], pk.np_ptr[hit + 1]
        lengths = ends - starts
        # The citing rules of every episode hit, side by side (CSR gather).
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        best = np.zeros(len(pk.ids))
        np.maximum.at(best, pk.np_cited[offsets], np.repeat(ep_sum[hit], lengths))
        scores += best
    touched = np.flatnonzero(scores)
    values = scores[touched]
    if len(touched) <= limit:
        keep = touched
    else:
        kth = np.partition(values, len(values) - limit)[len(values) - limit]
        keep = touched[values >= kth * (1.0 - _MARGIN) - _MARGIN]
        if direct and len(keep) == limit == count:
            top = [(pk.ids[o], float(scores[o])) for o in keep.tolist()]
            return sorted(top, key=lambda item: (-item[1], item[0]))
    return candidates(conn, task, count, only=sorted(pk.ids[o] for o in keep.tolist()))


def refresh_cost(pk: Packed, conn: Any, rng: random.Random, samples: int = 200) -> dict[str, float]:
    """Bytes of packed entries a refresh rewrites, on average: one rule changed (the
    entries of its stems, pairs and tags; its citations' rows in the CSR), one episode
    added that one rule cites (the entries of the episode's stems, each gaining one
    posting, and the citation map)."""
    rules = rng.sample(pk.ids, min(samples, len(pk.ids)))
    per_rule = []
    for r in rules:
        keys = [f"t:{t}" for (t,) in conn.execute("SELECT term FROM rule_terms WHERE rule_id = ?", (r,))]
        keys += [
            f"p:{t}" for (t,) in conn.execute("SELECT term FROM rule_pair_terms WHERE rule_id = ?", (r,))
        ]
        keys += [
            f"g:{t}"
            for (t,) in conn.execute("SELECT DISTINCT tag FROM rule_tag_stems WHERE rule_id = ?", (r,))
        ]
        per_rule.append(sum(pk.sizes.get(k, 0) for k in set(keys)))
    episodes = rng.sample(pk.episodes, min(samples, len(pk.episodes)))
    per_episode = []
    for e in episodes:
        stems = {
            t
            for (t,) in conn.execute(
                "SELECT DISTINCT term FROM rule_episode_terms WHERE episode_id = ?", (e,)
            )
        }
        per_episode.append(sum(pk.sizes.get(f"e:{t}", 0) for t in stems))
    return {
        "rule": statistics.mean(per_rule),
        "rule_max": max(per_rule),
        "episode": statistics.mean(per_episode),
        "episode_max": max(per_episode),
    }


def numpy_import_cost(runs: int = 10) -> tuple[float, float, float, float]:
    """Median CPU and wall ms of ``python -c pass`` and ``python -c 'import numpy'``
    (interleaved, children's rusage)."""
    import resource

    def cpu() -> float:
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        return u.ru_utime + u.ru_stime

    out: dict[str, tuple[list, list]] = {"pass": ([], []), "import numpy": ([], [])}
    for _ in range(runs):
        for name in out:
            c, w = cpu(), time.perf_counter()
            subprocess.run([sys.executable, "-c", name], check=True)
            out[name][0].append(cpu() - c)
            out[name][1].append(time.perf_counter() - w)
    med = {k: (statistics.median(v[0]) * 1000, statistics.median(v[1]) * 1000) for k, v in out.items()}
    return (*med["pass"], *med["import numpy"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", help="rule counts (1000 10000, or 1000,10000)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--memory", action="store_true", help="hold the packed entries in memory, not in a BLOB file"
    )
    args = parser.parse_args()
    sizes = [int(x) for arg in args.sizes or () for x in arg.split(",") if x] or [1000, 10_000, 100_000]
    pass_cpu, pass_wall, np_cpu, np_wall = numpy_import_cost()
    print(
        f"import numpy: {np_cpu - pass_cpu:.0f} ms CPU more than python -c pass "
        f"({np_cpu:.0f} / {pass_cpu:.0f} ms; "
        f"wall {np_wall:.0f} / {pass_wall:.0f} ms; load {os.getloadavg()[0]:.2f})"
    )
    import numpy  # noqa: F401  (imported before timing: its cost is the line above)

    for n in sizes:
        run_size(n, args)


def run_size(n: int, args: Any) -> None:
    repo, rules, queries, _built = bench.build(n, args.seed)
    queries = queries[: args.queries]
    index = open_index(repo).__enter__()
    conn = index.conn
    pk = Packed(conn, Path(f"/tmp/packed-{n}-{os.getpid()}.db"), args.memory)
    total = sum(pk.sizes.values())
    print(
        f"{n:>7} packed build {pk.build_s:.1f} s CPU: {len(pk.sizes):,} entries, {total / 1e6:.1f} MB "
        f"(+ citation map {pk.csr_bytes / 1e6:.2f} MB, {len(pk.episodes):,} episodes), "
        + (f"BLOB file {pk.file_bytes / 1e6:.1f} MB; " if pk.file_bytes else "in memory; ")
        + f"episode groups not the same under every citing rule: {pk.mismatched}"
    )
    passes: dict[str, list[float]] = defaultdict(list)
    found: dict[str, list] = {}
    original = engine.best_candidates

    def patched(name: str, first: Any) -> Any:
        def run(conn: Any, task: Any, limit: int, count: int, **kw: Any) -> list:
            start = time.process_time()
            out = first(conn, task, limit, count, **kw)
            passes[name].append(time.process_time() - start)
            found[name] = out
            return out

        return run

    ours_first = patched("ours", original)
    variants = {
        "ours": ours_first,
        "packed-py": patched("packed-py", lambda c, t, lim, cnt, **kw: first_pass_py(pk, c, t, lim, cnt)),
        "packed-py-pruned": patched(
            "packed-py-pruned", lambda c, t, lim, cnt, **kw: first_pass_pruned(pk, c, t, lim, cnt)
        ),
        "packed-py-pruned-direct": patched(
            "packed-py-pruned-direct",
            lambda c, t, lim, cnt, **kw: first_pass_pruned(pk, c, t, lim, cnt, direct=True),
        ),
        "packed-np": patched("packed-np", lambda c, t, lim, cnt, **kw: first_pass_np(pk, c, t, lim, cnt)),
        "packed-np-direct": patched(
            "packed-np-direct", lambda c, t, lim, cnt, **kw: first_pass_np(pk, c, t, lim, cnt, direct=True)
        ),
    }
    docs: dict[str, str] = {}

    results: dict[str, Any] = {}
    exact: dict[str, list[float]] = defaultdict(list)  # score_rules' CPU time, by engine
    score_rules = engine.score_rules

    def recaller(name: str) -> Any:
        def timed(*a: Any) -> Any:
            start = time.process_time()
            out = score_rules(*a)
            exact[name].append(time.process_time() - start)
            return out

        def run(q: str) -> None:
            engine.best_candidates, engine.score_rules = variants[name], timed
            try:
                results[name] = engine.recall(index, q, limit=10)
            finally:
                engine.best_candidates, engine.score_rules = original, score_rules

        return run

    engines = {name: recaller(name) for name in variants}
    engines["fts5"], _, close_fts = bench.fts5(rules, Path(f"/tmp/packed-fts-{n}-{os.getpid()}.db"))
    fast = bench.bm25s_engine(rules)
    if fast is not None:
        engines["bm25s"] = fast[0]
    engines["ours"](queries[0])  # warm the page cache like any open server
    for name in variants:
        passes[name].clear()
        exact[name].clear()
    whole: dict[str, list[float]] = defaultdict(list)
    same = defaultdict(int)
    contains = defaultdict(int)
    names = list(engines)
    for i, q in enumerate(queries):
        # Each query through every engine, the first engine rotating: whichever goes
        # first reads the task's rules into SQLite's page cache for the others.
        for name in names[i % len(names) :] + names[: i % len(names)]:
            run = engines[name]
            start = time.process_time()
            run(q)
            whole[name].append(time.process_time() - start)
        for name in variants:  # the documents compared (not timed)
            docs[name] = json.dumps([results[name].to_json(), explain_data(results[name])], sort_keys=True)
        ours_ids = [r for r, _ in found["ours"]]
        for name in variants:
            if name == "ours":
                continue
            same[name] += docs[name] == docs["ours"]
            theirs = {r for r, _ in found[name]}
            contains[name] += all(r in theirs for r in ours_ids) and len(theirs) == len(ours_ids)
    close_fts()
    print(
        f"{'rules':>7} {'engine':<24}{'first p50':>10}{'p99':>8}{'exact p50':>10}{'whole p50':>11}{'p99':>8}"
        "   identical JSON, same candidates (CPU ms; exact: score_rules)"
    )
    for name in engines:
        p = passes.get(name)
        fp = f"{bench.pct(p, 50):10.2f}{bench.pct(p, 99):8.2f}" if p else f"{'':>10}{'':>8}"
        ident = f"   {same[name]}/{len(queries)}, {contains[name]}/{len(queries)}" if name in same else ""
        ex = f"{bench.pct(exact[name], 50):10.2f}" if exact.get(name) else f"{'':>10}"
        whole_ms = f"{bench.pct(whole[name], 50):11.2f}{bench.pct(whole[name], 99):8.2f}"
        print(f"{n:>7} {name:<24}{fp}{ex}{whole_ms}{ident}")
    fts = bench.pct(whole["fts5"], 50)
    line = f"{'':>7} whole recall / fts5: " + ", ".join(
        f"{name} {bench.pct(whole[name], 50) / fts:.2f}x" for name in variants
    )
    if "bm25s" in whole:
        line += "; / bm25s: " + ", ".join(
            f"{name} {bench.pct(whole[name], 50) / bench.pct(whole['bm25s'], 50):.2f}x" for name in variants
        )
    print(line + f" (CPU ms; load {os.getloadavg()[0]:.2f}; uptime: {_uptime()})")
    cost = refresh_cost(pk, conn, random.Random(args.seed))
    print(
        f"{n:>7} refresh: one rule changed rewrites {cost['rule'] / 1e3:.1f} kB of entries on average "
        f"(max {cost['rule_max'] / 1e3:.1f} kB); one cited episode added: {cost['episode'] / 1e3:.1f} kB "
        f"(max {cost['episode_max'] / 1e3:.1f} kB) + its citing rules in the citation map "
        f"({pk.csr_bytes / 1e3:.0f} kB if kept as one CSR blob)"
    )
    pk.close()
    index.__exit__(None, None, None)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()
