"""What exact scoring reads of a candidate rule that no task changes, kept by the process.

:func:`scarwarden.recall.score.score_rules` weighs each candidate's title, text, tags,
citations and every stem it says with their counts (~0.5 ms of a 2.7 ms recall at 1k
rules, three statements and a few hundred dictionary entries for 20 candidates). None
of it depends on the task, and candidates come back: at 1k rules five in six of a
bench run's candidates are rules an earlier recall scored. So on a playbook of at most
:data:`KEEP_RULES` rules a process keeps each rule's facts once read, for one index
state at a time: keyed by the index file, the playbook's blob (the rules),
``meta.rule_df_stamp`` and ``meta.task_df_stamp`` (the counts, as
:mod:`scarwarden.recall.term_counts` keys them) and whether the ledger weighs the
rules' stems. Without all of them (an index from before the stamps) nothing
is kept. Kept facts are never handed out to be changed: a recalled rule gets copies.
"""

from __future__ import annotations

import math
import threading

from scarwarden.recall.formulas import idf
from scarwarden.recall.score_parts import own_ledger_weights
from scarwarden.recall.score_reads import add_tag_stems, load_json, rule_stems, tag_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.recall.score_reads import Counts
    from scarwarden.recall.task import TaskTerms

#: Kept only for a playbook of at most this many active rules: there a process meets
#: most of them again within a few hundred recalls (bench/recall.py's 300 tasks at 1k
#: rules: five candidates in six met before; CPU p50 0.86x of reading them each time).
#: At 10k rules, where 28% were, keeping them was 1.04-1.06x *slower* (interleaved, JSON
#: the same), as caching candidates' facts was in session 10: the kept memory grows
#: faster than the reads it saves. 5,000 lies between the two; it was not measured.
KEEP_RULES = 5_000


#: One rule's task-free facts: title, text, tags, its citations (JSON), its length in
#: stems, its stems said more than once -> tf, its title and text stems some rule says,
#: every stem of its title, text and tags -> df, those past tasks say -> how many, and
#: each tag -> its stems; the ledger weights of its stems (absent: 1.0), and its stems'
#: shares of its mass (idf x ledger weight) with their correctly rounded sum. The
#: dictionaries are handed out as copies (a recalled rule's ``stem_df``) or only read.
Facts = tuple[
    str,
    str,
    tuple[str, ...],
    str,
    "int | None",
    dict[str, int],
    frozenset[str],
    dict[str, int],
    dict[str, int],
    dict[str, set[str]],
    dict[str, float],
    tuple[list[float], float],
]


class RuleFacts:
    """Rule ID -> its :data:`Facts`, as read from one index state at a time; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._kept: dict[str, Facts] = {}

    def read(
        self,
        conn: Any,
        ids: list[str],
        key: tuple[Any, ...] | None,
        counts: Counts | None,
        task: TaskTerms,
    ) -> dict[str, Facts]:
        """The facts of ``ids`` (in that order; a rule the index does not hold is left
        out) for ``task``'s index state (its rules, tasks and ledger weighing): those kept
        under ``key``, the rest read in one go (and kept when ``key`` and no more than
        :data:`KEEP_RULES` rules are active)."""
        if key is None or None in key or task.n > KEEP_RULES:
            key = None
        else:
            key = (*key, task.ledger_shared, task.n, task.task_count)
        with self._lock:
            if key is None or key != self._key:
                self._key, self._kept = key, {}
            kept = self._kept if key is not None else {}
            found = {rule_id: kept.get(rule_id) for rule_id in ids}
        missing = [rule_id for rule_id, facts in found.items() if facts is None]
        if missing:
            read = _read(conn, missing, counts, task)
            for rule_id in missing:
                found[rule_id] = read.get(rule_id)
            if key is not None:
                with self._lock:  # the mapping is this key's (a newer key has a new one)
                    kept.update(read)
        return {rule_id: facts for rule_id, facts in found.items() if facts is not None}


def _read(conn: Any, ids: list[str], counts: Counts | None, task: TaskTerms) -> dict[str, Facts]:
    """The facts of ``ids`` from the index: their rows, stems, tags' stems and counts,
    and what their stems weigh in their masses."""
    import json

    ledger = task.ledger_shared

    id_json = json.dumps(ids)
    rows = conn.execute(
        "SELECT id, title, text, tags, episode_ids FROM rules WHERE id IN (SELECT value FROM json_each(?))",
        (id_json,),
    ).fetchall()
    tags = {row[0]: list(load_json(row[3])) for row in rows}
    parts = tag_parts(tags)
    said = sorted({s for by_tag in parts.values() for stems in by_tag.values() for s in stems})
    lengths: dict[str, int] = {}
    repeats: dict[str, dict[str, int]] = {}
    _postings, stem_df, stem_tdf, tag_df = rule_stems(
        conn, id_json, ids, {}, ledger, lengths, tag_stems=said, counts=counts, repeats=repeats
    )
    written = {rule_id: frozenset(own) for rule_id, own in stem_df.items()}  # title and text: no tags
    add_tag_stems(parts, tag_df, stem_df, stem_tdf)
    out: dict[str, Facts] = {}
    memo: dict[int, float] = {}
    # A rule has dozens of stems but they share a handful of df values.
    idfs = {d: idf(d, task.n) for d in {d for own in stem_df.values() for d in own.values()}}
    for rule_id, title, body, _tags, episodes in rows:
        own = stem_df[rule_id]
        q = own_ledger_weights(task, stem_tdf[rule_id], memo)
        weights = [idfs[d] * q.get(s, 1.0) for s, d in own.items()]  # the rule's mass, stem by stem
        out[rule_id] = (
            title,
            body,
            tuple(tags[rule_id]),
            episodes,
            lengths.get(rule_id),
            repeats.get(rule_id, {}),
            written[rule_id],
            own,
            stem_tdf[rule_id],
            parts.get(rule_id, {}),
            q,
            (weights, math.fsum(weights)),
        )
    return out


#: The process's rule facts (recall on any index; the key tells indexes and states apart).
RULE_FACTS = RuleFacts()
