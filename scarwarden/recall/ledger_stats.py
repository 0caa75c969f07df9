"""What version-2 recall needs of a whole ledger, in memory (:class:`LedgerStats`):
built by :mod:`scarwarden.gate.ledger` from a tree's episodes, kept in its cache in a
compact form whose parts are decoded only when used, read by
:mod:`scarwarden.recall.pure_ledger`."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from scarwarden import text
from scarwarden.files.episodes import Episode
from scarwarden.files.lineage_counts import Application, application
from scarwarden.files.lineage_tally import Standing, tally

#: Month-folder changes a cache entry carries beside the folders it was derived from,
#: before it writes them all again.
MAX_MONTH_CHANGES = 5000


class LedgerStats:
    """What recall needs of a whole ledger: how many episodes, how many of their tasks
    say each stem, and every rule application (for lineage). Built from the valid
    episode files of one tree, as the index counts them.

    Read from a cache (:meth:`from_bytes`), the applications and the month folders stay
    undecoded until asked for: a receipt's recall needs the task words, the
    applications of a rule or two (only for a struggling check), and no month at all
    when the cited episodes' blobs are cached (at 100k episodes, decoding all of it was
    ~45 ms of a ~150 ms hook)."""

    def __init__(
        self,
        task_count: int = 0,
        task_df: Counter[str] | None = None,
        applied: dict[str, dict[str, list[list[Any]]]] | None = None,
        months: dict[str, str] | None = None,
    ) -> None:
        self.task_count = task_count
        self.task_df: Counter[str] = Counter() if task_df is None else task_df
        #: rule ID -> episode ID -> its applications as rows (:meth:`Application.to_json`;
        #: an episode naming a rule twice counts twice).
        self._applied = {} if applied is None else applied
        #: episode ID -> its month folder (``YYYY/MM``): where to read a cited episode.
        self._months = {} if months is None else months
        # Undecoded parts of a cache entry (JSON lines, see to_bytes).
        self._raw_rules: dict[str, bytes] = {}
        self._raw_months: bytes | None = None
        # Month folders set (or removed: None) since the undecoded ones were read: a tree
        # derived from the previous one by a diff is saved without decoding them all.
        self._month_changes: dict[str, str | None] = {}

    @property
    def applied(self) -> dict[str, dict[str, list[list[Any]]]]:
        for rule_id in list(self._raw_rules):
            self._rule(rule_id)
        return self._applied

    @property
    def months(self) -> dict[str, str]:
        if self._raw_months is not None:
            by_month = json.loads(self._raw_months)
            self._months = {ep: month for month, eps in by_month.items() for ep in eps}
            changes, self._raw_months, self._month_changes = self._month_changes, None, {}
            for ep_id, month in changes.items():
                self._set_month(ep_id, month)
        return self._months

    def _set_month(self, ep_id: str, month: str | None) -> None:
        if self._raw_months is not None:
            self._month_changes[ep_id] = month
        elif month is None:
            self._months.pop(ep_id, None)
        else:
            self._months[ep_id] = month

    def _rule(self, rule_id: str) -> dict[str, list[list[Any]]] | None:
        raw = self._raw_rules.pop(rule_id, None)
        if raw is not None:
            self._applied[rule_id] = json.loads(raw)
        return self._applied.get(rule_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LedgerStats):
            return NotImplemented
        mine = (self.task_count, self.task_df, self.applied, self.months)
        return mine == (other.task_count, other.task_df, other.applied, other.months)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def add(self, ep: Episode, sign: int = 1) -> None:
        """Count ``ep`` in (``sign`` 1) or out (-1)."""
        self.task_count += sign
        self._set_month(ep.id, f"{ep.at[0:4]}/{ep.at[5:7]}" if sign > 0 else None)
        for stem in set(text.stems(ep.task)):
            self.task_df[stem] += sign
            if self.task_df[stem] <= 0:
                del self.task_df[stem]
        for rule_id in ep.get("rules_applied") or []:
            if not isinstance(rule_id, str):
                continue
            by_episode = self._rule(rule_id)
            if by_episode is None:
                by_episode = self._applied[rule_id] = {}
            if sign > 0:
                by_episode.setdefault(ep.id, []).append(application(ep, rule_id).to_json())
            else:
                by_episode.pop(ep.id, None)
                if not by_episode:
                    del self._applied[rule_id]

    def copy(self) -> LedgerStats:
        """An independent copy (a base another tree's statistics are derived from)."""
        out = LedgerStats(
            task_count=self.task_count,
            task_df=Counter(self.task_df),
            applied={
                rule: {ep: list(rows) for ep, rows in eps.items()} for rule, eps in self._applied.items()
            },
            months=dict(self._months),
        )
        out._raw_rules, out._raw_months = dict(self._raw_rules), self._raw_months  # bytes: shared
        out._month_changes = dict(self._month_changes)
        return out

    @property
    def shared(self) -> bool:
        """Whether two past tasks or more say some word (meta ``task_terms_shared``)."""
        return any(d > 1 for d in self.task_df.values())

    def applications(self, rule_id: str) -> list[Application]:
        """The rule's applications, oldest first (by ``at``, then episode ID)."""
        rows = [row for group in (self._rule(rule_id) or {}).values() for row in group]
        return sorted((Application.from_json(row) for row in rows), key=lambda a: (a.at, a.id))

    def standing(self, rule_id: str) -> Standing:
        """The rule's applications as the struggling check reads them
        (:mod:`scarwarden.files.lineage_tally`): here one part, all of them; the
        gate's cached statistics keep a tally per month folder."""
        apps = self.applications(rule_id)
        return Standing([(tally(apps), lambda: apps)])

    def _by_month(self) -> dict[str, list[str]]:
        by_month: dict[str, list[str]] = {}
        for ep, month in sorted(self.months.items()):
            by_month.setdefault(month, []).append(ep)
        return dict(sorted(by_month.items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "months": self._by_month(),
            "task_count": self.task_count,
            "task_df": dict(sorted(self.task_df.items())),
            "applied": {rule: dict(sorted(eps.items())) for rule, eps in sorted(self.applied.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LedgerStats:
        return cls(
            task_count=int(data["task_count"]),
            task_df=Counter({str(k): int(v) for k, v in data["task_df"].items()}),
            applied=dict(data["applied"]),
            months={str(ep): str(month) for month, eps in data["months"].items() for ep in eps},
        )

    def to_bytes(self) -> bytes:
        """A cache's form, JSON lines: the counts and the rule IDs, the month folders
        and the changes to them since, then each rule's applications; :meth:`from_bytes`
        decodes each part only when it is used. Parts never decoded are written back as
        they were read (re-sorting 100k month folders was ~160 ms of a commit's check)."""
        rules = sorted(set(self._applied) | set(self._raw_rules))
        head = {"task_count": self.task_count, "task_df": dict(sorted(self.task_df.items())), "rules": rules}
        if self._raw_months is not None and len(self._month_changes) <= MAX_MONTH_CHANGES:
            lines = [_dumps(head), self._raw_months, _dumps(self._month_changes)]
        else:
            lines = [_dumps(head), _dumps(self._by_month()), b"{}"]
        for rule_id in rules:
            raw = self._raw_rules.get(rule_id)
            lines.append(raw if raw is not None else _dumps(dict(sorted(self._applied[rule_id].items()))))
        return b"\n".join(lines)

    @classmethod
    def from_bytes(cls, body: bytes) -> LedgerStats:
        """What :meth:`to_bytes` wrote (``ValueError`` when it is not that)."""
        lines = body.split(b"\n")
        head = json.loads(lines[0])
        rules = head["rules"]
        if not isinstance(rules, list) or len(lines) != 3 + len(rules):
            raise ValueError("not a ledger statistics entry")
        out = cls(task_count=int(head["task_count"]), task_df=Counter(head["task_df"]))
        out._raw_months, out._month_changes = lines[1], dict(json.loads(lines[2]))
        out._raw_rules = dict(zip(map(str, rules), lines[3:], strict=True))
        return out


def _dumps(data: Any) -> bytes:
    # ensure_ascii (the default) keeps every newline escaped: one part per line.
    return json.dumps(data, separators=(",", ":")).encode("ascii")
