"""The ledger's episodes, read from git, for proving the candidates a receipt names
when no rule was near (issue 26).

On ``ASK_HUMAN`` with no rule sharing a word or a tag with the task, recall shows the
failed episodes whose tasks share the most words with it
(:func:`scarwarden.recall.nearest.episode_candidates`). Which those are depends on every
episode's task, so the gate lists every episode file of the receipt's ledger tree (the
index's rule for which files count: valid episodes at ``YYYY/MM/<id>.yaml``, the first
in path order when two share an ID) and needs, of each, its task's stems and whether it
has a correction to show. Only a receipt that names candidates, whose recall gives
``ASK_HUMAN`` with no rule ranked, and whose task shares a word with some past task (the
ledger's statistics say so) pays for it.

Parsing every episode costs ~0.15 ms each (1.5 s at 10k episodes), so what each blob
gives is kept by blob ID in ``.git/scarwarden/ledger/tasks.json`` (a blob ID fixes its
content, hence its ID and date, hence the one path it is valid at, which the entry
keeps: it cannot go stale, and a blob at another path is parsed again). The file is checked (format and a
SHA-256 of its body) before use; a damaged one is ignored. A later proof parses only
the episodes added since; ``SCARWARDEN_LEDGER_CACHE=off`` reads every one from git.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scarwarden import git, text
from scarwarden.errors import ScarwardenError
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.gate.ledger_files import cache_dir, counts
from scarwarden.recall.nearest import LedgerEpisode, fixed

#: The cache file, its format, and how many blobs it keeps at most (the newest tree's).
TASKS = "tasks.json"
FORMAT = "ledger-tasks-2"
MAX_KEPT = 300_000


class LedgerEpisodes:
    """Every episode of a ledger tree, as the candidates rank them; one tree kept."""

    def __init__(
        self,
        root: Path,
        episodes_rel: str,
        env: Mapping[str, str] | None = None,
        cache: bool | Path = True,
    ) -> None:
        """``cache``: keep what each blob gives in the git folder (``True``: found when
        first needed, so a check that proves no such candidate asks git nothing), in this
        folder, or not at all (``False``)."""
        self.root, self.episodes_rel, self.env = root, episodes_rel, env
        self._cache: bool | Path | None = cache
        self._tree: tuple[str, list[LedgerEpisode], dict[str, tuple[str, str]]] | None = None
        #: Episode files parsed (for tests and the bench).
        self.read_files = 0

    def of(self, tree: str) -> list[LedgerEpisode]:
        """The valid episodes of ``tree``, each once."""
        if self._tree is None or self._tree[0] != tree:
            with _no_gc():  # ~100k small lists and tuples: collections halved nothing but time
                episodes, blobs = self._read(tree)
            self._tree = (tree, episodes, blobs)
        return self._tree[1]

    def texts(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """Episode ID -> (task, correction) for episodes of the tree :meth:`of` read."""
        assert self._tree is not None
        places = [self._tree[2][i] for i in ids]
        raw = git.cat_file_batch(self.root, [blob for _path, blob in places], env=self.env)
        out: dict[str, tuple[str, str]] = {}
        for episode_id, (path, _blob), body in zip(ids, places, raw, strict=True):
            assert body is not None  # listed in the tree a moment ago
            ep = parse_episode_bytes(body, f"{self.episodes_rel}/{path}", episodes_dir=self.episodes_rel)
            out[episode_id] = (ep.task, fixed(ep.get("correction"), ep.get("redacted") is not None) or "")
        return out

    def _read(self, tree: str) -> tuple[list[LedgerEpisode], dict[str, tuple[str, str]]]:
        entries = sorted((e.path, e.blob) for e in git.ls_tree(self.root, tree) if counts(e.path, e.mode))
        known = self._load()
        rows = [(path, blob, known.get(blob)) for path, blob in entries]
        fresh = [i for i, (path, _blob, row) in enumerate(rows) if row is None or row[1] != path]
        contents = git.cat_file_stream(self.root, [rows[i][1] for i in fresh], env=self.env)
        for i, raw in zip(fresh, contents, strict=True):
            path, blob, _row = rows[i]
            self.read_files += 1
            rows[i] = (path, blob, self._parse(path, raw))
        episodes: dict[str, LedgerEpisode] = {}
        blobs: dict[str, tuple[str, str]] = {}
        kept: dict[str, list[Any]] = {}
        for path, blob, row in rows:
            if row is None or row[1] != path:
                continue  # not a valid episode (the index skips it too)
            kept[blob] = row
            if row[0] not in episodes:  # the index keeps the first file in path order
                episodes[row[0]] = LedgerEpisode(row[0], row[2], row[3])
                blobs[row[0]] = (path, blob)
        if fresh:
            self._save(kept)
        return list(episodes.values()), blobs

    def _parse(self, path: str, raw: bytes | None) -> list[Any] | None:
        """A blob's row: [ID, the one path it is valid at, its task's stems, whether it
        has a correction to show]."""
        if raw is None:
            return None
        try:
            ep = parse_episode_bytes(raw, f"{self.episodes_rel}/{path}", episodes_dir=self.episodes_rel)
        except ScarwardenError:
            return None  # the index skips an invalid file too
        shown = fixed(ep.get("correction"), ep.get("redacted") is not None)
        return [ep.id, path, sorted(set(text.stems(ep.task))), shown is not None]

    @property
    def cache_dir(self) -> Path | None:
        if self._cache is True:
            self._cache = cache_dir(self.root)
        return self._cache if isinstance(self._cache, Path) else None

    def _load(self) -> dict[str, list[Any]]:
        if self.cache_dir is None:
            return {}
        try:
            head, _, body = (self.cache_dir / TASKS).read_bytes().partition(b"\n")
            if json.loads(head) == _header(body):
                return dict(json.loads(body))
        except (OSError, ValueError, TypeError):
            pass  # missing or damaged: read from git again
        return {}

    def _save(self, kept: dict[str, list[Any]]) -> None:
        if self.cache_dir is None or len(kept) > MAX_KEPT:
            return
        body = json.dumps(kept, separators=(",", ":")).encode("utf-8")
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_dir / f"{TASKS}.tmp-{os.getpid()}"
            tmp.write_bytes(json.dumps(_header(body), sort_keys=True).encode("utf-8") + b"\n" + body)
            os.replace(tmp, self.cache_dir / TASKS)
        except OSError:
            pass  # a read-only git folder: read again next time, still correct


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused (the objects made hold no cycles): at 100k
    episodes it was half of reading the cache (2.2 against 1.1 s, load 13)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _header(body: bytes) -> dict[str, str]:
    return {"format": FORMAT, "sha256": hashlib.sha256(body).hexdigest()}
