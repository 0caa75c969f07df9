"""The ledger cache's files (:mod:`scarwarden.gate.ledger`): each tree's entry and
``cited.json``, written whole to a temporary file then renamed, checked before use.

A tree's entry (``<tree>.json``) is a header line (format, tree, episodes folder, the
SHA-256 of the rest), then its body: the counts and task words, then the tree ID of each
month folder (:meth:`~scarwarden.gate.ledger_months.TreeStats.head`); the months' own
entries are :mod:`scarwarden.gate.ledger_months`'."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from scarwarden.gate.ledger_months import MonthStore, TreeStats

#: Bump when what a tree's entry holds, or how it is derived, changes.
CACHE_FORMAT = "ledger-stats-8/months"  # the statistics, split by month folder
#: The format before (one entry per tree, read whole): converted when read.
OLD_FORMAT = "ledger-stats-7/v2"
#: ``cited.json``'s format: unchanged by the split (what a cited blob holds, and where).
CITED_FORMAT = OLD_FORMAT
#: Tree entries kept (the newest by modification time).
CACHE_KEEP = 6
#: The cited episodes' cache: its file, most episodes kept.
CITED = "cited.json"
MAX_CITED = 20_000


class TreeEntries:
    """The tree entries and ``cited.json`` in one ledger cache folder."""

    def __init__(self, folder: Path, episodes_rel: str) -> None:
        self.folder, self.episodes_rel = folder, episodes_rel

    def header(self, name: str, body: bytes, fmt: str = CACHE_FORMAT) -> dict[str, str]:
        """The first line of an entry: what it is, and the SHA-256 of the rest."""
        digest = hashlib.sha256(body).hexdigest()
        return {"format": fmt, "tree": name, "episodes": self.episodes_rel, "sha256": digest}

    def read(self, tree: str) -> tuple[str, bytes] | None:
        """(format, body) of ``tree``'s entry, in this format or the previous one;
        ``None`` when it is missing, unreadable or damaged."""
        try:
            head, _, body = (self.folder / f"{tree}.json").read_bytes().partition(b"\n")
            meta = json.loads(head)
        except (OSError, ValueError):
            return None
        for fmt in (CACHE_FORMAT, OLD_FORMAT):
            if meta == self.header(tree, body, fmt):
                return fmt, body
        return None

    def _write(self, name: str, head: dict[str, str], body: bytes) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f"{name}.tmp-{os.getpid()}"
        tmp.write_bytes(json.dumps(head, sort_keys=True).encode("utf-8") + b"\n" + body)
        os.replace(tmp, self.folder / name)

    def write(self, tree: str, stats: TreeStats, months: MonthStore) -> None:
        """Keep ``tree``'s entry and those of the months derived in this run; prune the
        oldest trees, and the months no kept tree names."""
        for folder, month in stats.loaded.items():
            if not months.path(folder, stats.folders[folder]).exists():
                months.save(folder, stats.folders[folder], month)
        body = stats.head()
        try:
            self._write(f"{tree}.json", self.header(tree, body), body)
            entries = [p for p in self.folder.glob("*.json") if len(p.stem) == 40]  # not cited.json
            kept = sorted(entries, key=lambda p: p.stat().st_mtime, reverse=True)
            for old in kept[CACHE_KEEP:]:
                old.unlink(missing_ok=True)
            months.prune(self._named_months(kept[:CACHE_KEEP], months))
        except OSError:
            pass  # a read-only git folder: derived again next time, still correct

    @staticmethod
    def _named_months(entries: list[Path], months: MonthStore) -> set[str]:
        """The month entries' file names the kept trees' entries name."""
        names: set[str] = set()
        for entry in entries:
            try:
                folders = json.loads(entry.read_bytes().rsplit(b"\n", 1)[-1])["folders"]
                names.update(months.path(f, t).name for f, t in folders.items())
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # an entry of the previous format names no month
        return names

    def newest(self, tree: str) -> str | None:
        """The most recently written tree entry but ``tree``'s."""
        try:
            files = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return None
        for path in files:
            if path.stem != tree and len(path.stem) == 40:
                return path.stem
        return None

    def read_cited(self) -> tuple[dict[str, list[Any]], dict[str, dict[str, Any]]] | None:
        """``cited.json``: (blob -> what it holds, tree -> where each cited episode is)."""
        try:
            head, _, body = (self.folder / CITED).read_bytes().partition(b"\n")
            if json.loads(head) != self.header(CITED, body, CITED_FORMAT):
                return None
            data = json.loads(body)
            where = {str(t): dict(places) for t, places in data["trees"].items()}
            return dict(data["blobs"]), where
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # missing or damaged: read from git again

    def write_cited(self, known: dict[str, list[Any]], trees: dict[str, Any]) -> None:
        if len(known) > MAX_CITED:
            known = dict(list(known.items())[-MAX_CITED:])
        body = json.dumps({"blobs": known, "trees": trees}, separators=(",", ":")).encode("utf-8")
        try:
            self._write(CITED, self.header(CITED, body, CITED_FORMAT), body)
        except OSError:
            pass
