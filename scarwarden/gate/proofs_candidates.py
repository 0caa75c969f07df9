"""The ledger's episodes, read from git, for proving the candidates a receipt names
when no rule was near (issue 26).

On ``ASK_HUMAN`` with no rule sharing a word or a tag with the task, recall shows the
failed episodes whose tasks share the most words with it
(:func:`scarwarden.recall.nearest.episode_candidates`). Which those are depends on every
episode's task, so the gate reads every episode of the receipt's ledger tree, once per
tree and run (as the ledger's statistics are derived from scratch:
:mod:`scarwarden.gate.ledger`; the index's rule for which files count: valid episodes
at ``YYYY/MM/<id>.yaml``, the first in path order when two share an ID). Only a receipt
that names candidates, whose recall gives ``ASK_HUMAN`` with no rule ranked, and whose
task shares a word with some past task (the statistics say so) pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from scarwarden import git
from scarwarden.errors import ScarwardenError
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.gate.ledger_files import counts
from scarwarden.recall.nearest import LedgerEpisode


class LedgerEpisodes:
    """Every episode of a ledger tree, as the candidates need it; read once per tree."""

    def __init__(self, root: Path, episodes_rel: str, env: Mapping[str, str] | None = None) -> None:
        self.root, self.episodes_rel, self.env = root, episodes_rel, env
        self._trees: dict[str, list[LedgerEpisode]] = {}
        #: Episode files read (for tests and the bench).
        self.read_files = 0

    def of(self, tree: str) -> list[LedgerEpisode]:
        if tree not in self._trees:
            self._trees = {tree: self._read(tree)}  # one tree kept: a walk moves on
        return self._trees[tree]

    def _read(self, tree: str) -> list[LedgerEpisode]:
        entries = sorted((e.path, e.blob) for e in git.ls_tree(self.root, tree) if counts(e.path, e.mode))
        out: dict[str, LedgerEpisode] = {}
        contents = git.cat_file_stream(self.root, [b for _p, b in entries], env=self.env)
        for (path, _blob), raw in zip(entries, contents, strict=True):
            self.read_files += 1
            if raw is None:
                continue
            try:
                ep = parse_episode_bytes(raw, f"{self.episodes_rel}/{path}", episodes_dir=self.episodes_rel)
            except ScarwardenError:
                continue  # the index skips an invalid file too
            if ep.id in out:
                continue  # the index keeps the first file in path order
            said = ep.get("correction")
            fixed = said if ep.get("redacted") is None and isinstance(said, str) else None
            out[ep.id] = LedgerEpisode(ep.id, ep.task, fixed)
        return list(out.values())
