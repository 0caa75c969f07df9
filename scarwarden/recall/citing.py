"""The active rules citing each cited episode, as a process has read them for recall's
first pass (:mod:`scarwarden.recall.prune`), kept between recalls.

``episode_ords.rules`` (:mod:`scarwarden.index.packed_postings`) is read episode by
episode as a pass meets them, for one index at a time: keyed by the index file and
``meta.packed_stamp``, which moves whenever ordinals or citations do, so nothing kept
can go stale. A one-shot ``scarwarden recall`` reads what it needs and exits.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence

from scarwarden.index.packed_postings import unpack_ints

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Citing:
    """The active rules citing each episode (``episode_ords.rules``), as read by this
    process, for one index at a time: keyed by the index file and ``meta.packed_stamp``,
    which moves whenever ordinals or citations do. Read on demand, episode by episode;
    thread-safe (the web UI serves requests from several threads)."""

    def __init__(self) -> None:
        #: False: keep nothing between recalls (``bench/recall.py --no-cache``).
        self.keep = True
        self._key: tuple[str, str] | None = None
        self._citing: dict[int, Sequence[int]] = {}
        self._lock = threading.Lock()

    def view(self, conn: Any, cache_key: tuple[str, str] | None) -> CitingView:
        stamp, rules = conn.execute(
            "SELECT (SELECT value FROM meta WHERE key = 'packed_stamp'), "
            "(SELECT value FROM meta WHERE key = 'rule_count')"
        ).fetchone()
        rules = int(rules or 0)
        key = (cache_key[0], str(stamp)) if cache_key is not None else None
        if key is None or not self.keep:
            return CitingView(conn, {}, rules)
        with self._lock:
            if key != self._key:
                self._key, self._citing = key, {}
            return CitingView(conn, self._citing, rules)


class CitingView:
    """One recall's window on :class:`Citing` (or on nothing kept)."""

    def __init__(self, conn: Any, known: dict[int, Sequence[int]], rules: int) -> None:
        self.conn, self.known, self.rules = conn, known, rules

    def of(self, episodes: Iterable[int]) -> dict[int, Sequence[int]]:
        """Episode ordinal -> its citing rules' ordinals (read those not known yet)."""
        missing = sorted(set(episodes).difference(self.known))
        if missing:
            rows = self.conn.execute(
                "SELECT ord, rules FROM episode_ords WHERE ord IN (SELECT value FROM json_each(?))",
                (json.dumps(missing),),
            )
            self.known.update((o, unpack_ints(blob)) for o, blob in rows)
            for e in missing:
                self.known.setdefault(e, ())
        return self.known


#: The process's citing rules (recall on any index; the key tells indexes apart).
CITING = Citing()
