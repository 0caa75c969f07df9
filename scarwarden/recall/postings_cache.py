"""The tf-1 postings of stems a long-lived process recalls again and again, in memory.

A server (MCP, the web UI, a benchmark) recalls many tasks on one memory, and common
words come back in most of them. Reading a common stem's postings out of SQLite costs
about half a microsecond a row; a dictionary lookup a tenth of that. So a stem's tf-1
postings (rule ID -> length) are kept here from the *second* time a process asks for
them: a one-shot ``scarwarden recall`` never pays for loading a list it will not reuse.

The postings are a function of the playbook alone (its active rules' title and text),
so the cache is keyed by the index file and the playbook's blob ID
(``meta.playbook_blob``): any change to the playbook, committed or not, is a new key
and empties the cache. Bounded (least recently used out first); thread-safe, since the
web UI serves requests from several threads.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter, OrderedDict
from typing import Any

#: At most this many postings in memory (rule IDs interned: ~40 bytes each, ~40 MB).
BUDGET = 1_000_000
#: Shorter lists are read from SQLite each time: their rows cost little, and the
#: common stems, whose lists are long, are the ones that come back in most tasks.
MIN_CACHED = 500


class PostingsCache:
    """Stem -> {rule ID: length} of its tf-1 postings, for one playbook at a time."""

    def __init__(self, budget: int = BUDGET, min_cached: int = MIN_CACHED) -> None:
        self.budget, self.min_cached = budget, min_cached
        self._key: tuple[str, str] | None = None
        self._lists: OrderedDict[str, dict[str, int]] = OrderedDict()
        self._asked: Counter[str] = Counter()
        self._size = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """How many postings are held."""
        return self._size

    def get(self, conn: Any, key: tuple[str, str] | None, stem: str, df: int) -> dict[str, int] | None:
        """The stem's postings if cached (loading them the second time they are asked
        for); None: read them from SQLite this time."""
        if key is None or df < self.min_cached or 4 * df > self.budget:
            return None
        with self._lock:
            if key != self._key:
                self._key, self._size = key, 0
                self._lists.clear()
                self._asked.clear()
            cached = self._lists.get(stem)
            if cached is not None:
                self._lists.move_to_end(stem)
                return cached
            if len(self._asked) > self.budget:  # a bound on the bookkeeping too
                self._asked.clear()
            self._asked[stem] += 1
            if self._asked[stem] < 2:
                return None
        rows = conn.execute("SELECT rule_id, length FROM rule_terms WHERE term = ? AND tf = 1", (stem,))
        loaded = {sys.intern(rule_id): int(length) for rule_id, length in rows}
        with self._lock:
            if key == self._key and stem not in self._lists:
                self._lists[stem] = loaded
                self._size += len(loaded)
                while self._size > self.budget:
                    _, dropped = self._lists.popitem(last=False)
                    self._size -= len(dropped)
        return loaded


#: The process's cache (recall on any index; the key tells playbooks apart).
CACHE = PostingsCache()
