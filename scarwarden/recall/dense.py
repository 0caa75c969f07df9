"""Recall's first pass with numpy, on a large playbook, when numpy is installed.

The same sums as :mod:`scarwarden.recall.prune`'s MaxScore, worked out for every rule
at once in a vector of scores (one per rule ordinal): a stem's entry adds its runs'
values at its ordinals in one indexed addition, the episode words go into a vector
per episode, and each rule takes its best citing episode's sum through the citations
(``episode_ords.rules``, read once per process into two arrays). Nothing is pruned:
the rules within the margin of the ``limit``-th best are handed back as after MaxScore
(:func:`scarwarden.recall.prune.best_candidates` decides what the exhaustive statement
still ranks), so the result is the same to the bit.

Optional (``pip install 'scarwarden[fast]'``) and only for a playbook of
:data:`MIN_RULES` rules or more: ``import numpy`` costs ~100 ms of CPU, more than a
whole recall on a small memory, and a one-shot ``scarwarden recall`` must not pay it
(docs/recall.md, "Speed").
"""

from __future__ import annotations

import threading

from scarwarden.recall.formulas import K1

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: From this many active rules on, the vector pass runs when numpy is installed.
MIN_RULES = 20_000
#: Relative margin under the cut (as prune.py's).
_MARGIN = 1e-8

_HAVE: bool | None = None


def available() -> bool:
    """Whether numpy imports (tried once, when a large playbook first asks: a broken
    install falls back to the pure-Python pass rather than failing recall)."""
    global _HAVE
    if _HAVE is None:
        try:
            import numpy  # noqa: F401
        except ImportError:
            _HAVE = False
        else:
            _HAVE = True
    return _HAVE


def survivors(reader: Any, limit: int, cache_key: tuple[str, str] | None) -> dict[int, float]:
    """Rule ordinal -> its first-pass sum, for the rules within the margin of the
    ``limit``-th best (all of them when fewer have a sum); ``reader``: prune.py's, with
    the task's entries fetched."""
    import numpy as np

    ptr, cited, rules = CITATIONS.arrays(reader.conn, cache_key)
    try:
        touched, values = _sums(np, reader, ptr, cited, rules)
    except BaseException:
        _BUFFERS.__dict__.clear()  # one may be left holding sums: never reuse it
        raise
    if len(touched) > limit:
        kth = np.partition(values, len(values) - limit)[len(values) - limit]
        keep = values >= kth * (1.0 - _MARGIN) - _MARGIN
        touched, values = touched[keep], values[keep]
    return dict(zip(touched.tolist(), values.tolist(), strict=True))


def _sums(np: Any, reader: Any, ptr: Any, cited: Any, rules: int) -> tuple[Any, Any]:
    """The rules with a sum (ordinals) and their sums, worked out in this thread's
    buffers, which are all zeros again when it returns."""
    scores = _zeroed(np, "scores", rules)
    base, slope = reader.base, reader.slope
    for stem, w in reader.terms:
        entry = reader.entries.get(("t", stem))
        if entry is not None:
            ords, tf, length, count = _entry(np, entry)
            scores[ords] += np.repeat(w * tf / (tf + base + slope * length), count)
    by_pair = reader.pair_postings() if reader.pairs else {}  # one statement for all pairs
    for pair, w in reader.pairs:
        for (tf, length), ords in by_pair.get(pair, {}).items():
            scores[np.array(ords, dtype=np.int64)] += w * tf / (tf + base + slope * length)
    for tag, value in reader.tags.items():
        entry = reader.entries.get(("g", tag))
        if entry is not None:
            scores[np.frombuffer(entry[0], dtype="<i4")] += value
    if reader.ep_w:
        sums = _zeroed(np, "sums", len(ptr) - 1)
        for stem, w in reader.ep_w:
            entry = reader.entries.get(("e", stem))
            if entry is not None:
                ords, etf, _, count = _entry(np, entry)
                sums[ords] += np.repeat(w * etf / (etf + K1), count)
        hit = np.flatnonzero(sums != 0)
        starts, ends = ptr[hit], ptr[hit + 1]
        lengths = ends - starts
        # The citing rules of every episode hit, side by side; each rule keeps its best.
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        citing = cited[offsets]
        best = _zeroed(np, "best", rules)
        np.maximum.at(best, citing, np.repeat(sums[hit], lengths))
        scores[citing] += best[citing]  # a rule cited twice gets the same sum twice
        best[citing] = 0.0
        sums[hit] = 0.0
    touched = np.flatnonzero(scores != 0)
    values = scores[touched]
    scores[touched] = 0.0
    return touched, values


class _Buffers(threading.local):
    """Each thread's score vectors, kept between recalls: a fresh vector of 100k sums
    is a fresh mapping of memory, whose first touch of every page is a page fault."""


_BUFFERS = _Buffers()


def _zeroed(np: Any, name: str, size: int) -> Any:
    """This thread's vector ``name`` of ``size`` zeros (whoever used it last zeroed it)."""
    vector = _BUFFERS.__dict__.get(name)
    if vector is None or len(vector) != size:
        vector = _BUFFERS.__dict__[name] = np.zeros(size)
    return vector


def _entry(np: Any, entry: tuple[bytes, bytes]) -> tuple[Any, Any, Any, Any]:
    """An entry's ordinals, and its runs' tf (or etf), length and count as vectors
    (the tf and length as floats: the arithmetic's)."""
    ords = np.frombuffer(entry[0], dtype="<i4")
    runs = np.frombuffer(entry[1], dtype="<i4").reshape(-1, 3)
    return ords, runs[:, 0].astype(np.float64), runs[:, 1].astype(np.float64), runs[:, 2]


class Citations:
    """The citations as two arrays (CSR: episode ordinal -> its citing rules' ordinals
    at ``cited[ptr[e]:ptr[e + 1]]``) and how many rule ordinals there are, for one index
    at a time, keyed by the index file and ``meta.packed_stamp``."""

    def __init__(self) -> None:
        self._key: tuple[str, str] | None = None
        self._arrays: tuple[Any, Any, int] | None = None
        self._lock = threading.Lock()

    def arrays(self, conn: Any, cache_key: tuple[str, str] | None) -> tuple[Any, Any, int]:
        stamp = conn.execute("SELECT value FROM meta WHERE key = 'packed_stamp'").fetchone()
        key = (cache_key[0], str(stamp[0] if stamp else "")) if cache_key is not None else None
        with self._lock:
            if key is not None and key == self._key and self._arrays is not None:
                return self._arrays
        arrays = _load(conn)
        if key is not None:
            with self._lock:
                self._key, self._arrays = key, arrays
        return arrays


def _load(conn: Any) -> tuple[Any, Any, int]:
    import numpy as np

    rules, episodes = conn.execute(
        "SELECT (SELECT coalesce(max(ord), -1) FROM rule_ords), "
        "(SELECT coalesce(max(ord), -1) FROM episode_ords)"
    ).fetchone()
    lengths = np.zeros(episodes + 2, dtype=np.int64)
    blobs = []
    for ordinal, blob in conn.execute("SELECT ord, rules FROM episode_ords ORDER BY ord"):
        lengths[ordinal + 1] = len(blob or b"") // 4  # int32, little-endian (packed_postings.py)
        blobs.append(blob or b"")
    ptr = np.cumsum(lengths)
    cited = np.frombuffer(b"".join(blobs), dtype="<i4").astype(np.int64)
    return ptr, cited, rules + 1


#: The process's citations as arrays (recall on any index; the key tells indexes apart).
CITATIONS = Citations()
