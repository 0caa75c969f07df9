"""The words of each month folder's episodes, kept by month tree: what proving ASK_HUMAN's
failed-episode candidates reads (issues 26 and 30: a check costs what changed).

When no rule is near, the candidates a receipt names are the failed episodes whose
tasks share the most words with it (:func:`scarwarden.recall.nearest.episode_candidates`),
which depends on every episode of the receipt's ledger tree. A commit changes one month
folder or two, so what the ranking needs is kept per month folder, keyed by the month's
path and its tree ID (the same tree under another folder holds other valid episodes: an
episode is valid only at ``YYYY/MM/<id>.yaml`` of its own ID and date):

* an entry (:class:`MonthWords`): for each stem, the valid episodes of the month whose
  task says it (``!`` after those with a correction to show), then the month's valid
  IDs, sorted (NUL-separated, searched as :class:`scarwarden.gate.tree_names.Names`);
* kept in ``words/`` of the ledger cache folder (CI carries it with the statistics),
  ``<month key>-<tree ID>``: a header line (format, month, tree, episodes folder,
  SHA-256 of the body), checked before every use; a damaged entry is derived again;
* a month not kept is derived from the newest entry of the same month folder and the
  diff between the two month trees (only the files that differ are parsed), or, with
  none, from the month's own files. An entry is only ever written by that derivation:
  the chain of trust of the ledger statistics (docs/receipts.md).

The months of a tree are read from the episodes tree and its year trees (no month tree
is parsed). Which files count is the index's rule: valid episodes at
``YYYY/MM/<id>.yaml``, the first in path order when two share an ID (resolved when
ranking: :mod:`scarwarden.gate.proofs_candidates`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from scarwarden import git, text
from scarwarden.errors import GitError, ScarwardenError
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.gate.ledger_files import counts, file_blob
from scarwarden.gate.tree_names import Names
from scarwarden.recall.nearest import fixed

FORMAT = "candidates-words-1"
FOLDER = "words"
#: What each blob gave, in one file (main before the month entries): no longer read.
LEGACY = "tasks.json"
#: Entries kept per month folder (the most recently used), and in all.
KEEP_PER_MONTH = 4
KEEP = 4096
#: Above this many changed files in a month, its files are read whole instead.
MAX_DIFF = 2000

#: A valid episode's row: its task's stems (each once, sorted) and whether it has a
#: correction to show.
Row = tuple[list[str], bool]


def _enc(word: str) -> bytes:
    return word.encode("utf-8", "surrogatepass")


class MonthWords:
    """One month's entry: ``\\n\\t<stem>\\t<id>[!] <id>[!]...`` per stem, then ``\\n``
    and the sorted valid IDs (``\\0a\\0b\\0``; IDs hold no NUL, tab, space or newline)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.split = body.rfind(b"\n") + 1
        self.names = Names(body, self.split)

    @classmethod
    def of(cls, rows: Mapping[str, Row]) -> MonthWords:
        postings: dict[str, list[bytes]] = {}
        for episode_id in sorted(rows):
            stems, shown = rows[episode_id]
            token = _enc(episode_id) + (b"!" if shown else b"")
            for stem in stems:
                postings.setdefault(stem, []).append(token)
        lines = [b"\n\t%s\t%s" % (_enc(s), b" ".join(ids)) for s, ids in sorted(postings.items())]
        ids = Names.of([_enc(i) for i in rows]).body()
        return cls(b"".join(lines) + b"\n" + ids)

    def valid(self) -> bool:
        """Whether the body has this form (a damaged one is derived again)."""
        names = self.body[self.split :]
        return names[:1] == b"\0" and names[-1:] == b"\0" and (self.split == 1 or self.body[:2] == b"\n\t")

    def postings(self, stem: str) -> list[bytes]:
        """The month's valid episodes whose task says ``stem`` (``!``: a correction)."""
        key = b"\n\t" + _enc(stem) + b"\t"
        at = self.body.find(key, 0, self.split)
        if at < 0:
            return []
        return self.body[at + len(key) : self.body.find(b"\n", at + 1)].split(b" ")

    def has(self, episode_id: bytes) -> bool:
        return episode_id in self.names

    def rows(self) -> dict[str, Row]:
        """Every valid episode's row (a changed month is derived from these)."""
        ids = self.body[self.split :].split(b"\0")[1:-1]
        out: dict[str, Row] = {i.decode(): ([], False) for i in ids}
        for line in self.body[: self.split].split(b"\n")[1:-1]:
            _, stem, tokens = line.split(b"\t")
            word = stem.decode("utf-8", "surrogatepass")
            for token in tokens.split(b" "):
                shown = token.endswith(b"!")
                stems, _ = out[token.rstrip(b"!").decode()]
                stems.append(word)
                if shown:
                    out[token.rstrip(b"!").decode()] = (stems, True)
        return out


class MonthCache:
    """``words/`` of the ledger cache folder (``None``: nothing read or written)."""

    def __init__(self, ledger_dir: Path | None, episodes_rel: str) -> None:
        self.folder = None if ledger_dir is None else ledger_dir / FOLDER
        self.episodes_rel = episodes_rel

    def _path(self, month: str, tree: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{_key(month)}-{tree}"

    def _header(self, month: str, tree: str, body: bytes) -> bytes:
        digest = hashlib.sha256(body).hexdigest()
        head = {
            "format": FORMAT,
            "month": month,
            "tree": tree,
            "episodes": self.episodes_rel,
            "sha256": digest,
        }
        return json.dumps(head, sort_keys=True).encode("utf-8")

    def load(self, month: str, tree: str) -> MonthWords | None:
        """The entry kept for this month folder at this tree, checked; ``None``: none usable."""
        if self.folder is None:
            return None
        path = self._path(month, tree)
        try:
            head, _, body = path.read_bytes().partition(b"\n")
            if head != self._header(month, tree, body):
                return None
            os.utime(path)  # recently used: kept
        except OSError:
            return None
        words = MonthWords(body)
        return words if words.valid() else None

    def newest(self, month: str, tree: str) -> str | None:
        """The tree of the most recently used entry of this month folder (not ``tree``)."""
        if self.folder is None:
            return None
        try:
            kept = sorted(self.folder.glob(f"{_key(month)}-*"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return None
        trees = [p.name.rpartition("-")[2] for p in kept]
        return next((t for t in trees if t != tree and len(t) == len(tree)), None)

    def save(self, month: str, tree: str, words: MonthWords) -> None:
        """Keep ``words`` (a failure to write only costs a later derivation)."""
        if self.folder is None:
            return
        path = self._path(month, tree)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder.parent / LEGACY).unlink(missing_ok=True)  # read whole by every proof
            tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
            tmp.write_bytes(self._header(month, tree, words.body) + b"\n" + words.body)
            os.replace(tmp, path)
            self._prune(month)
        except OSError:
            return

    def _prune(self, month: str) -> None:
        assert self.folder is not None
        by_age = lambda paths: sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True)  # noqa: E731
        for old in by_age(self.folder.glob(f"{_key(month)}-*"))[KEEP_PER_MONTH:]:
            old.unlink(missing_ok=True)
        entries = [p for p in self.folder.iterdir() if not p.name.startswith(".")]
        if len(entries) > KEEP:
            for old in by_age(entries)[KEEP:]:
                old.unlink(missing_ok=True)


def _key(month: str) -> str:
    """A month folder's part of an entry's name (any folder name, made safe)."""
    return hashlib.sha256(month.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def month_trees(root: Path, tree: str, env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """``(YYYY/MM, month tree ID)`` of every folder two levels down in the episodes tree
    ``tree``, sorted by path: the episodes tree and its year trees are read (two
    ``cat-file`` calls), no month tree."""
    raw = git.cat_file_batch(root, [tree], env=env)[0]
    size = len(tree) // 2
    years = _subtrees(raw or b"", size)
    out: list[tuple[str, str]] = []
    for (year, _), body in zip(years, git.cat_file_batch(root, [t for _y, t in years], env=env), strict=True):
        out.extend((f"{year}/{month}", t) for month, t in _subtrees(body or b"", size))
    return sorted(out)


def _subtrees(raw: bytes, size: int) -> list[tuple[str, str]]:
    """(name, tree ID) of a raw tree object's folders (``40000 <name>\\0<hash>``)."""
    out, pos = [], 0
    while pos < len(raw):
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        if raw[pos:space] == b"40000":
            out.append(
                (raw[space + 1 : nul].decode("utf-8", "surrogateescape"), raw[nul + 1 : nul + 1 + size].hex())
            )
        pos = nul + 1 + size
    return out


class MonthDeriver:
    """Derives the entries of months not kept: from the newest kept entry of the same
    folder and a diff, else from the month's files; every file parsed counted."""

    def __init__(
        self, root: Path, episodes_rel: str, cache: MonthCache, env: Mapping[str, str] | None
    ) -> None:
        self.root, self.episodes_rel, self.cache, self.env = root, episodes_rel, cache, env
        #: Episode files parsed (for tests and the bench).
        self.read_files = 0

    def derive(
        self, months: list[tuple[str, str]], tree: str | None = None
    ) -> dict[tuple[str, str], MonthWords]:
        """The words of ``months`` ((folder, month tree) of the episodes tree ``tree``)."""
        rows: dict[tuple[str, str], dict[str, Row]] = {}
        items: list[tuple[tuple[str, str], str, str]] = []  # (month, tree), file name, blob
        whole = []
        for place in months:
            started = self._from_kept(*place)
            if started is None:
                whole.append(place)
                continue
            rows[place] = started[0]
            items.extend((place, name, blob) for name, blob in started[1])
        for place, files in self._files(whole, tree).items():
            rows[place] = {}
            items.extend((place, name, blob) for name, blob in files)
        contents = git.cat_file_stream(self.root, [blob for _m, _n, blob in items], env=self.env)
        for ((month, month_tree), name, _blob), raw in zip(items, contents, strict=True):
            self.read_files += 1
            row = self._parse(f"{month}/{name}", raw)
            if row is not None:
                rows[(month, month_tree)][name.removesuffix(".yaml")] = row
        out = {}
        for (month, month_tree), month_rows in rows.items():
            out[(month, month_tree)] = words = MonthWords.of(month_rows)
            self.cache.save(month, month_tree, words)
        return out

    def _from_kept(self, month: str, tree: str) -> tuple[dict[str, Row], list[tuple[str, str]]] | None:
        """The rows of the newest kept entry of the folder, minus the files the diff to
        ``tree`` names, and the files to parse (name, blob); ``None``: no usable entry."""
        base = self.cache.newest(month, tree)
        kept = None if base is None else self.cache.load(month, base)
        if kept is None or base is None:
            return None
        try:
            changed = {c.path for c in git.diff_name_status(self.root, base, tree, env=self.env)}
            rows = kept.rows() if len(changed) <= MAX_DIFF else None
        except (GitError, KeyError, ValueError):  # git failed, or an entry forged into nonsense
            return None
        if rows is None:
            return None
        names = sorted(p for p in changed if "/" not in p)
        for name in names:
            rows.pop(name.removesuffix(".yaml"), None)
        raw = git.cat_file_batch(self.root, [tree], env=self.env)[0] or b""
        blobs = [(n, file_blob(raw, n, len(tree) // 2)) for n in names if n.endswith(".yaml")]
        return rows, [(n, b) for n, b in blobs if b is not None]

    def _files(
        self, months: list[tuple[str, str]], tree: str | None
    ) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """Every file that can be an episode in each of ``months``, (name, blob) sorted:
        one listing of the episodes tree when more than one month is read whole."""
        if len(months) > 1 and tree is not None:
            by_month: dict[str, list[tuple[str, str]]] = {}
            for e in git.ls_tree(self.root, tree):
                if counts(e.path, e.mode):
                    month, _, name = e.path.rpartition("/")
                    by_month.setdefault(month, []).append((name, e.blob))
            return {(m, t): sorted(by_month.get(m, [])) for m, t in months}
        out = {}
        for month, month_tree in months:
            entries = git.ls_tree(self.root, month_tree)
            out[(month, month_tree)] = sorted(
                (e.path, e.blob) for e in entries if counts(f"{month}/{e.path}", e.mode)
            )
        return out

    def _parse(self, path: str, raw: bytes | None) -> Row | None:
        """A valid episode's row, ``None`` for an invalid file (the index skips it)."""
        if raw is None:
            return None
        try:
            ep = parse_episode_bytes(raw, f"{self.episodes_rel}/{path}", episodes_dir=self.episodes_rel)
        except ScarwardenError:
            return None
        return sorted(set(text.stems(ep.task))), fixed(
            ep.get("correction"), ep.get("redacted") is not None
        ) is not None
