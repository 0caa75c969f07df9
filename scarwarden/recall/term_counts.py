"""The counts recall's exact scoring weighs its candidates' stems by, kept by the process.

Scoring a candidate weighs every stem of its title, text and tags (its mass, behind the
confidence), not only those the task says: at 100k rules that is ~400 stems a recall,
and looking each one up in ``rule_term_df`` and ``task_term_df`` (two B-tree seeks a
stem) was half the cost of reading the candidates. Stems come back: a playbook's
vocabulary is a few thousand to a few tens of thousands. So a process keeps each
stem's counts once read, per index file:

* its df over the active rules, while ``meta.rule_df_stamp`` is the same;
* how many past tasks say it, while ``meta.task_df_stamp`` is the same.

The index draws a new stamp in the transaction that moves either table
(index/rules.py, index/ledger_words.py), and a build draws both, so a kept count is
never one the index no longer holds. An index without a stamp (or no key at all)
keeps nothing: every stem is read.

On a large playbook (:data:`WHOLE_RULES` active rules or more) the first recall under a
key reads the counts of every stem the rules say in one scan (~10 ms at 100k rules,
about what two recalls' lookups cost), so the process's first recalls do not pay a
lookup per stem while the mapping fills; a vocabulary over :data:`MAX_STEMS` is read
stem by stem as before.
"""

from __future__ import annotations

import json
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Stems kept before starting afresh (a bound on memory: ~100 bytes each).
MAX_STEMS = 200_000
#: From this many active rules on, the first recall under a key reads every rule stem's
#: counts at once (below it, a one-shot ``scarwarden recall`` would pay for it).
WHOLE_RULES = 20_000


class TermCounts:
    """Stem -> (df over the active rules, how many past tasks say it), as read from one
    index at a time (keyed by the index file and its two stamps)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, str, str] | None = None
        self._kept: dict[str, tuple[int, int]] = {}

    def read(
        self,
        conn: Any,
        stems: set[str],
        index: str | None,
        rule_stamp: str | None,
        task_stamp: str | None,
        *,
        rules: int = 0,
    ) -> dict[str, tuple[int, int]]:
        """Both counts of every stem in ``stems`` (0: no active rule, or no past task, says
        it): those kept under the same index and stamps, the rest read in one statement
        (and kept when both stamps are known). ``rules``: how many active rules there
        are (from :data:`WHOLE_RULES` on, a new key reads every rule stem at once)."""
        key = (index, rule_stamp, task_stamp) if index and rule_stamp and task_stamp else None
        with self._lock:
            if key is None or key != self._key or len(self._kept) > MAX_STEMS:
                self._key, self._kept = key, {}
                if key is not None and rules >= WHOLE_RULES:
                    self._kept.update(_every_rule_stem(conn))
            kept = self._kept
            # One probe a stem: the mapping is large and cold, each probe a cache miss.
            found: dict[str, Any] = {s: kept.get(s) for s in stems}
        missing = [s for s, counts in found.items() if counts is None]
        if missing:
            rows = conn.execute(
                "SELECT p.value, coalesce(d.df, 0), coalesce(t.df, 0) FROM json_each(?) AS p "
                "LEFT JOIN rule_term_df AS d ON d.term = p.value "
                "LEFT JOIN task_term_df AS t ON t.term = p.value",
                (json.dumps(sorted(missing)),),
            ).fetchall()
            read = {stem: (d, t) for stem, d, t in rows}
            found.update(read)
            with self._lock:  # the mapping is this key's (a newer key has a new one)
                kept.update(read)
        return found  # every stem found or read: none is None now


def _every_rule_stem(conn: Any) -> dict[str, tuple[int, int]]:
    """Every stem some active rule says, with both counts; nothing when there are more
    than :data:`MAX_STEMS` (they are then read as recalls meet them)."""
    rows = conn.execute(
        "SELECT d.term, d.df, coalesce(t.df, 0) FROM rule_term_df AS d "
        "LEFT JOIN task_term_df AS t ON t.term = d.term LIMIT ?",
        (MAX_STEMS + 1,),
    ).fetchall()
    return {} if len(rows) > MAX_STEMS else {stem: (d, t) for stem, d, t in rows}


#: The process's counts (recall on any index; the keys tell indexes and states apart).
TERM_COUNTS = TermCounts()
