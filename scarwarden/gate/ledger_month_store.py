"""A month folder's share of a tree's ledger statistics, and its entry in the cache
(``months/<month tree>-<folder key>.json``, :mod:`scarwarden.gate.ledger_months`).

A month entry is a header line (format, month tree, folder, episodes folder, the rules it
holds, the length and SHA-256 of each part), then its parts, one JSON line each: the IDs,
then one line per rule (episode ID -> its applications, as
:meth:`~scarwarden.files.lineage_counts.Application.to_json`), then the tallies (rule ID
-> :class:`~scarwarden.files.lineage_tally.Tally` of its applications in the month,
issue 30: a struggling check read every application of the rule, ~29 ms a rule at 1M
episodes). The tallies are derived from the rules' parts when the entry is written (a
part carried over undecoded keeps its tally, as it keeps its bytes). A part is checked
against its SHA-256 when read, and the entry's length against the parts'; a damaged or
missing entry is derived again from the month's episodes (docs/receipts.md, the chain of
trust); an entry of the previous format (no tallies) is converted from its own parts.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scarwarden.files.episodes import Episode
from scarwarden.files.lineage_counts import application
from scarwarden.files.lineage_tally import Tally, tally_rows

#: Bump when what a month entry holds, or how it is derived, changes.
MONTH_FORMAT = "ledger-month-2"  # the tallies
#: The format before the tallies: converted when read, from its own parts.
OLD_MONTH_FORMAT = "ledger-month-1"
#: Month entries kept beyond those the kept trees name (the most recently written).
SPARE_MONTHS = 16
Rows = dict[str, list[list[Any]]]
#: The tallies' name among a month's parts (a rule ID is ``PB-...``: an episode naming
#: another is not valid, so not counted).
TALLIES = "#tallies"


def dumps(data: Any) -> bytes:
    """Canonical JSON (sorted keys, no spaces, ASCII: one line)."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode("ascii")


def _sha(part: bytes) -> str:
    return hashlib.sha256(part).hexdigest()


def _tallies(raw: bytes) -> dict[str, Tally]:
    """A tallies part, decoded (``ValueError``/``TypeError`` when it is not one)."""
    return {str(rule_id): Tally.from_json(row) for rule_id, row in json.loads(raw).items()}


class Month:
    """One month folder's share of a tree's statistics: its episode IDs and each rule's
    applications. Parts read from an entry stay undecoded (and are written back as
    read) until a change needs them."""

    def __init__(self, ids: Iterable[str] = (), rules: dict[str, Rows] | None = None) -> None:
        self._ids: set[str] | None = set(ids)
        self._rules: dict[str, Rows] = {} if rules is None else rules
        self._raw: dict[str, tuple[bytes, str]] = {}  # part name -> (bytes, SHA-256), undecoded
        #: The tallies read with the entry: used for the rules whose part is still undecoded.
        self._tallies: dict[str, Tally] = {}

    @property
    def ids(self) -> set[str]:
        if self._ids is None:
            self._ids = set(json.loads(self._raw.pop("")[0]))
        return self._ids

    def rule_ids(self) -> list[str]:
        return sorted(set(self._rules) | {r for r in self._raw if r})

    def rule(self, rule_id: str) -> Rows | None:
        if rule_id in self._raw:
            self._rules[rule_id] = json.loads(self._raw.pop(rule_id)[0])
        return self._rules.get(rule_id)

    def copy(self) -> Month:
        out = Month(rules={r: {e: list(rows) for e, rows in eps.items()} for r, eps in self._rules.items()})
        out._ids = None if self._ids is None else set(self._ids)
        out._raw, out._tallies = dict(self._raw), dict(self._tallies)
        return out

    def add(self, ep: Episode, sign: int = 1) -> None:
        """Count ``ep`` in or out, as :meth:`LedgerStats.add` does for the whole ledger."""
        if sign > 0:
            self.ids.add(ep.id)
        else:
            self.ids.discard(ep.id)
        for rule_id in ep.get("rules_applied") or []:
            if not isinstance(rule_id, str):
                continue
            rows = self.rule(rule_id)
            if rows is None:
                rows = self._rules[rule_id] = {}
            if sign > 0:
                rows.setdefault(ep.id, []).append(application(ep, rule_id).to_json())
            else:
                rows.pop(ep.id, None)
                if not rows:
                    del self._rules[rule_id]

    def parts(self) -> list[tuple[str, bytes, str]]:
        """(name, bytes, SHA-256) of each part: the IDs (name ""), then each rule's."""
        out = []
        for name in ["", *self.rule_ids()]:
            if name in self._raw:
                out.append((name, *self._raw[name]))
                continue
            data = sorted(self.ids) if name == "" else dict(sorted(self._rules[name].items()))
            raw = dumps(data)
            out.append((name, raw, _sha(raw)))
        return out

    def tallies(self) -> bytes:
        """The tallies part: each rule's, as read where its part is undecoded, else
        derived from its applications."""
        found = {}
        for rule_id in self.rule_ids():
            raw = self._raw.get(rule_id)
            kept = self._tallies.get(rule_id) if raw is not None else None
            if kept is None:
                kept = tally_rows(json.loads(raw[0]) if raw is not None else self._rules[rule_id])
            found[rule_id] = kept.to_json()
        return dumps(found)


class MonthStore:
    """``months/`` under the ledger cache folder: one entry per (folder, month tree)."""

    def __init__(self, cache_dir: Path, episodes_rel: str) -> None:
        self.folder, self.episodes_rel = cache_dir / "months", episodes_rel

    def path(self, folder: str, tree: str) -> Path:
        key = hashlib.sha256(folder.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return self.folder / f"{tree}-{key}.json"

    def _header(
        self, folder: str, tree: str, rules: list[str], parts: list[list[Any]], fmt: str = MONTH_FORMAT
    ) -> dict[str, Any]:
        return {
            "format": fmt,
            "tree": tree,
            "folder": folder,
            "episodes": self.episodes_rel,
            "rules": rules,
            "parts": parts,
        }

    def save(self, folder: str, tree: str, month: Month) -> None:
        parts = month.parts()
        tallies = month.tallies()
        parts.append(("", tallies, _sha(tallies)))
        rules = [n for n, _b, _s in parts[1:-1]]
        head = self._header(folder, tree, rules, [[len(b), s] for _n, b, s in parts])
        path = self.path(folder, tree)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
            tmp.write_bytes(b"\n".join([dumps(head), *(b for _n, b, _s in parts)]))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only git folder: derived again when needed, still correct

    def _open(self, folder: str, tree: str) -> tuple[Any, dict[str, Any], int] | None:
        """(the open file, its checked header, where the parts start), or ``None``; an
        entry of the previous format is converted first."""
        for converted in (False, True):
            try:
                f = self.path(folder, tree).open("rb")
            except OSError:
                return None
            try:
                line = f.readline(1 << 20)
                head = json.loads(line)
                rules, parts = head["rules"], head["parts"]
                if not converted and head == self._header(folder, tree, rules, parts, OLD_MONTH_FORMAT):
                    with f:
                        self._convert(folder, tree, head, f.read())
                    continue
                if head != self._header(folder, tree, rules, parts) or len(parts) != 2 + len(rules):
                    raise ValueError("not this month's entry")
                # Parts one a line: an entry cut short, or run on, is caught before any is read.
                size = len(line) + sum(int(n) for n, _d in parts) + len(parts) - 1
                if os.fstat(f.fileno()).st_size != size:
                    raise ValueError("not the length its parts say")
                return f, head, len(line)
            except (OSError, ValueError, TypeError, KeyError):
                f.close()
                return None
        return None

    def _convert(self, folder: str, tree: str, head: dict[str, Any], body: bytes) -> None:
        """Rewrite an entry of the previous format (its parts checked) in this one: the
        tallies derived from its rules' parts, no episode read. A damaged one is left
        as it is (then derived again from the month's episodes)."""
        pieces, names = body.split(b"\n"), ["", *head["rules"]]
        if len(pieces) != len(names) or len(head["parts"]) != len(names):
            return
        month = Month()
        month._ids = None
        for name, raw, (size, digest) in zip(names, pieces, head["parts"], strict=True):
            if len(raw) != size or _sha(raw) != digest:
                return
            month._raw[name] = (raw, digest)
        self.save(folder, tree, month)

    def _part(self, folder: str, tree: str, names: list[str]) -> dict[str, bytes] | None:
        """The parts ``names`` ("" the IDs, :data:`TALLIES` the tallies, else a rule ID;
        a rule the month does not hold is left out), each checked; ``None``: no usable
        entry."""
        opened = self._open(folder, tree)
        if opened is None:
            return None
        f, head, at = opened
        index = {name: i for i, name in enumerate(["", *head["rules"], TALLIES])}
        found: dict[str, bytes] = {}
        with f:
            try:
                offsets = [at]
                for size, _sha_hex in head["parts"]:
                    offsets.append(offsets[-1] + int(size) + 1)
                for name in names:
                    if name not in index:
                        continue
                    i = index[name]
                    size, digest = head["parts"][i]
                    f.seek(offsets[i])
                    raw = f.read(int(size))
                    if len(raw) != int(size) or _sha(raw) != digest:
                        return None
                    found[name] = raw
            except (OSError, ValueError, TypeError):
                return None
        return found

    def load(self, folder: str, tree: str) -> Month | None:
        """The whole entry, every part checked (kept undecoded); ``None``: none usable."""
        opened = self._open(folder, tree)
        if opened is None:
            return None
        f, head, _at = opened
        with f:
            try:
                body = f.read()
            except OSError:
                return None
        pieces = body.split(b"\n")
        names = ["", *head["rules"], TALLIES]
        if len(pieces) != len(names):
            return None
        month = Month()
        month._ids = None
        for name, raw, (size, digest) in zip(names, pieces, head["parts"], strict=True):
            if len(raw) != size or _sha(raw) != digest:
                return None
            if name != TALLIES:
                month._raw[name] = (raw, digest)
        try:
            month._tallies = _tallies(pieces[-1])
        except (ValueError, TypeError, AttributeError):
            return None
        return month

    def tallies(self, folder: str, tree: str) -> dict[str, Any] | None:
        """Each rule's tally in the month, undecoded (:meth:`Tally.from_json` reads one);
        ``None``: no usable entry."""
        found = self._part(folder, tree, [TALLIES])
        if found is None or TALLIES not in found:
            return None
        try:
            rows = json.loads(found[TALLIES])
        except ValueError:
            return None
        return rows if isinstance(rows, dict) else None

    def rule(self, folder: str, tree: str, rule_id: str) -> Rows | None:
        """One rule's applications in the month (``{}``: none); ``None``: no usable entry."""
        found = self._part(folder, tree, [rule_id])
        if found is None:
            return None
        return json.loads(found[rule_id]) if rule_id in found else {}

    def rule_ids(self, folder: str, tree: str) -> list[str] | None:
        opened = self._open(folder, tree)
        if opened is None:
            return None
        opened[0].close()
        return list(opened[1]["rules"])

    def ids(self, folder: str, tree: str) -> list[str] | None:
        found = self._part(folder, tree, [""])
        return None if found is None else list(json.loads(found[""]))

    def prune(self, keep: set[str]) -> None:
        """Remove the entries no kept tree names, but the newest :data:`SPARE_MONTHS`."""
        try:
            entries = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in [p for p in entries if p.name not in keep][SPARE_MONTHS:]:
                old.unlink(missing_ok=True)
        except OSError:
            pass
