"""The ledger's failed episodes nearest a task, read from git, for proving the candidates
a receipt names when no rule was near (issue 26), in what changed (issue 30).

On ``ASK_HUMAN`` with no rule sharing a word or a tag with the task, recall shows the
failed episodes whose tasks share the most words with it
(:func:`scarwarden.recall.nearest.episode_candidates`). Which those are depends on every
episode's task; only a receipt that names candidates, whose recall gives ``ASK_HUMAN``
with no rule ranked, and whose task shares a word with some past task (the ledger's
statistics say so) pays for it.

The words of each month folder's episodes are kept by month tree
(:mod:`scarwarden.gate.candidates_months`), so a proof reads the months a commit changed
from git and, of the others, only their kept entries: per task stem, the month's
episodes that say it. The gate scores those (the sum over shared stems of
ln(1 + tasks / task_df), as :mod:`scarwarden.recall.nearest`), walks the ranking best
first, drops an episode whose ID is valid in an earlier month (the index keeps the
first file in path order), and hands the first ``20 x MAX_CANDIDATES`` to
:func:`~scarwarden.recall.nearest.episode_candidates`, which chooses and quotes exactly
as it did over the whole ledger. ``SCARWARDEN_LEDGER_CACHE=off`` derives every month from
its files.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scarwarden import git
from scarwarden.collector import collector_paused
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.gate.candidates_months import MonthCache, MonthDeriver, MonthWords, month_trees
from scarwarden.gate.ledger_files import cache_dir
from scarwarden.recall import nearest
from scarwarden.recall.evidence import Candidate
from scarwarden.recall.nearest import EPISODES_LOOKED_AT, LedgerEpisode, fixed

#: Month entries one reader keeps in memory (a walk's receipts may name many trees).
KEEP_IN_MEMORY = 256


class LedgerEpisodes:
    """The failed episodes of ledger trees nearest a task, month by month."""

    def __init__(
        self,
        root: Path,
        episodes_rel: str,
        env: Mapping[str, str] | None = None,
        cache: bool | Path = True,
    ) -> None:
        """``cache``: keep each month's words in the git folder's ledger cache (``True``:
        found when first needed, so a check that proves no such candidate asks git
        nothing), in this ledger cache folder, or not at all (``False``)."""
        self.root, self.episodes_rel, self.env = root, episodes_rel, env
        self._cache: bool | Path | None = cache
        self._deriver: MonthDeriver | None = None
        self._months: dict[tuple[str, str], MonthWords] = {}
        #: Ledger tree -> its month folders and their trees.
        self._trees: dict[str, list[tuple[str, str]]] = {}
        #: Episode ID -> (its month folder, the month's tree) of the last ranking.
        self._where: dict[str, tuple[str, str]] = {}
        #: Month entries read from the cache, derived (for tests and the bench).
        self.months_read = 0

    @property
    def read_files(self) -> int:
        """Episode files parsed (for tests and the bench)."""
        return 0 if self._deriver is None else self._deriver.read_files

    def candidates(
        self, tree: str
    ) -> Callable[[list[Any], Any, Callable[[str], str | None]], list[Candidate]]:
        """What :func:`scarwarden.recall.pure_ledger.recall_ledger` calls on ``ASK_HUMAN``
        (:func:`scarwarden.recall.nearest.gate_candidates`, the ledger read by month)."""

        def chosen(
            ranked: list[Any], task: Any, correction_of: Callable[[str], str | None]
        ) -> list[Candidate]:
            if ranked:
                return nearest.rule_candidates(ranked, task, correction_of)
            if not task.task_df:
                return []  # no past task says a word of this one: nothing to read
            return nearest.episode_candidates(task, self.nearest(tree, task), self.texts)

        return chosen

    def nearest(self, tree: str, task: Any) -> list[LedgerEpisode]:
        """The first ``EPISODES_LOOKED_AT`` valid episodes of ``tree`` by the candidates'
        ranking (score, then ID), each with the task stems it shares: all
        :func:`~scarwarden.recall.nearest.episode_candidates` looks at."""
        months = self._of(tree)
        count = max(1, task.task_count)
        weight = {s: math.log(1.0 + count / max(1, int(task.task_df.get(s, 0)))) for s in set(task.qtf)}
        hits: list[tuple[float, bytes, int, list[str], bool]] = []
        for k, (_place, words) in enumerate(months):
            shared: dict[bytes, list[str]] = {}
            shown: set[bytes] = set()
            for stem in weight:
                for token in words.postings(stem):
                    if token.endswith(b"!"):
                        token = token[:-1]
                        shown.add(token)
                    shared.setdefault(token, []).append(stem)
            for token, stems in shared.items():
                score = round(math.fsum(weight[s] for s in stems), 4)
                hits.append((-score, token, k, stems, token in shown))
        hits.sort(key=lambda h: h[:3])
        out: list[LedgerEpisode] = []
        self._where = {}
        for _score, token, k, stems, shows in hits:
            if any(months[j][1].has(token) for j in range(k)):
                continue  # valid in an earlier month too: the index keeps that file
            episode_id = token.decode()
            out.append(LedgerEpisode(episode_id, stems, shows))
            self._where[episode_id] = months[k][0]
            if len(out) == EPISODES_LOOKED_AT:
                break
        return out

    def texts(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """Episode ID -> (task, correction) for episodes the last :meth:`nearest` gave."""
        places = [self._where[i] for i in ids]
        raw = git.cat_file_batch(
            self.root, [f"{tree}:{i}.yaml" for i, (_m, tree) in zip(ids, places, strict=True)], env=self.env
        )
        out: dict[str, tuple[str, str]] = {}
        for episode_id, (month, _tree), body in zip(ids, places, raw, strict=True):
            assert body is not None  # listed in the month a moment ago
            path = f"{self.episodes_rel}/{month}/{episode_id}.yaml"
            ep = parse_episode_bytes(body, path, episodes_dir=self.episodes_rel)
            out[episode_id] = (ep.task, fixed(ep.get("correction"), ep.get("redacted") is not None) or "")
        return out

    def _of(self, tree: str) -> list[tuple[tuple[str, str], MonthWords]]:
        """Each month folder of ``tree`` (path order) with its words: in memory, kept, or
        derived (only the months not kept)."""
        if tree not in self._trees:
            self._trees[tree] = month_trees(self.root, tree, env=self.env)
        places = self._trees[tree]
        deriver = self._deriver_()
        missing = []
        for place in places:
            if place not in self._months:
                words = deriver.cache.load(*place)
                if words is None:
                    missing.append(place)
                else:
                    self.months_read += 1
                    self._months[place] = words
        # ~100k small lists and tuples, no cycle: the collections halved nothing but time
        with collector_paused():
            self._months.update(deriver.derive(missing, tree))
        found = [(place, self._months[place]) for place in places]
        while len(self._months) > max(KEEP_IN_MEMORY, len(places)):
            del self._months[next(iter(self._months))]
        return found

    def _deriver_(self) -> MonthDeriver:
        if self._deriver is None:
            folder = cache_dir(self.root) if self._cache is True else self._cache or None
            self._deriver = MonthDeriver(
                self.root, self.episodes_rel, MonthCache(folder or None, self.episodes_rel), self.env
            )
        return self._deriver


def warm(root: Path, rev: str = "HEAD") -> int | None:
    """Derive and keep the words of ``rev``'s month folders (from the restored entries
    by a diff: what changed), when this clone's ledger cache already keeps some (a
    memory whose checks once proved such candidates; the others pay nothing): what the
    CI action runs after the gate, so the next job proves in what changed. Returns the
    episode files parsed (``None``: nothing kept, or no episodes folder at ``rev``)."""
    from scarwarden.repo import open_repo

    memory = open_repo(root, initialised=False)
    folder = cache_dir(memory.root)
    spec = f"{rev}:{memory.episodes_rel}"
    tree = git.tree_ids(memory.root, [spec]).get(spec)
    if folder is None or tree is None or not (folder / "words").is_dir():
        return None
    reader = LedgerEpisodes(memory.root, memory.episodes_rel, cache=folder)
    reader._of(tree)
    return reader.read_files


if __name__ == "__main__":  # python -m scarwarden.gate.proofs_candidates [REV]: the CI action
    import sys

    parsed = warm(Path("."), sys.argv[1] if len(sys.argv) > 1 else "HEAD")
    print(
        "no candidates' words kept" if parsed is None else f"candidates' words kept ({parsed} files parsed)"
    )
