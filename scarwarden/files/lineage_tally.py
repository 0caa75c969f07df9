"""Whether a rule is struggling, from tallies of its applications kept per part.

:func:`scarwarden.files.lineage_counts.count` reads every application of a rule: at 1M
episodes ~4,000 a rule in the scale bench's memory, ~29 ms a rule, in every proof of a
receipt whose ``ACT`` rests on it (issue 30). The struggling condition needs less: how
many applications are counted and how many of those were corrected, since the rule last
changed. So each part of the ledger (a month folder, :mod:`scarwarden.gate.ledger_months`)
keeps a :class:`Tally` of each rule's applications in it, derived from those
applications alone and kept beside them; :class:`Standing` answers from the tallies
and reads the applications of a part only where the rule's last change falls inside it
(a part whose applications are all before, or all since, is counted from its tally).

Exactly :func:`~scarwarden.files.lineage_counts.may_struggle` and
``count(...).struggling`` over all the parts' applications, by construction:

- which applications count is decided over all of them (only the ``verified`` ones
  where any is not ``claimed``): the tallies carry both totals and how many are claimed;
- "since the last change" compares each ``at`` with the change's date as datetimes, an
  ``at`` that does not parse counting as since: a tally keeps the earliest and latest
  ``at`` that parse (as written) and how many do not.

``tests/files/test_lineage_tally.py`` checks both against the full computation on
generated applications and change dates built to fall before, inside and after parts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from scarwarden.files.lineage_counts import STRUGGLING_MIN, STRUGGLING_SHARE, Application, when

if TYPE_CHECKING:
    from scarwarden.files.rule_dates import RuleChange


@dataclass(frozen=True)
class Tally:
    """What the struggling condition needs of some applications of one rule."""

    applied: int = 0
    corrected: int = 0
    #: Those whose status is ``verified``, and of them the corrected.
    verified: int = 0
    verified_corrected: int = 0
    #: Those whose status is ``claimed`` (no receipt).
    claimed: int = 0
    #: The earliest and the latest ``at`` that parse, as written (``None``: none does),
    #: and how many do not parse.
    first: str | None = None
    last: str | None = None
    undated: int = 0

    def to_json(self) -> list[Any]:
        return [
            self.applied,
            self.corrected,
            self.verified,
            self.verified_corrected,
            self.claimed,
            self.first,
            self.last,
            self.undated,
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> Tally:
        """What :meth:`to_json` wrote (``ValueError`` when it is not that)."""
        if not isinstance(row, list) or len(row) != 8:
            raise ValueError("not a tally")
        applied, corrected, verified, verified_corrected, claimed, undated = (
            int(n) for n in (row[0], row[1], row[2], row[3], row[4], row[7])
        )
        first, last = (None if v is None else str(v) for v in (row[5], row[6]))
        return cls(applied, corrected, verified, verified_corrected, claimed, first, last, undated)


def tally(apps: Iterable[Application]) -> Tally:
    """The tally of ``apps`` (in any order)."""
    applied = corrected = verified = verified_corrected = claimed = undated = 0
    first: tuple[datetime, str] | None = None
    last: tuple[datetime, str] | None = None
    for a in apps:
        applied += 1
        corrected += a.corrected
        if a.status == "verified":
            verified += 1
            verified_corrected += a.corrected
        elif a.status == "claimed":
            claimed += 1
        moment = when(a.at)
        if moment is None:
            undated += 1
            continue
        # Ties by time are broken by the text, so that a tally is one value of its apps.
        if first is None or (moment, a.at) < first:
            first = (moment, a.at)
        if last is None or (moment, a.at) > last:
            last = (moment, a.at)
    return Tally(
        applied,
        corrected,
        verified,
        verified_corrected,
        claimed,
        None if first is None else first[1],
        None if last is None else last[1],
        undated,
    )


def tally_rows(rows: dict[str, list[list[Any]]]) -> Tally:
    """The tally of a part's rows (episode ID -> its applications as
    :meth:`~scarwarden.files.lineage_counts.Application.to_json`)."""
    return tally(Application.from_json(row) for group in rows.values() for row in group)


#: One part of a rule's applications: its tally, and how to read its applications.
Part = tuple[Tally, Callable[[], Sequence[Application]]]


class Standing:
    """A rule's applications, as tallies per part (each part's applications read only
    when a question needs them)."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self.parts = [p for p in parts if p[0].applied]
        self.all_claimed = all(t.claimed == t.applied for t, _read in self.parts)

    def _counted(self, t: Tally) -> tuple[int, int]:
        """(applications counted, corrected among them) of a tally: all of them where
        every application of the rule is claimed, else the verified ones."""
        return (t.applied, t.corrected) if self.all_claimed else (t.verified, t.verified_corrected)

    def may_struggle(self) -> bool:
        """:func:`~scarwarden.files.lineage_counts.may_struggle` of every application."""
        counted = [self._counted(t) for t, _read in self.parts]
        applied, fixes = sum(n for n, _f in counted), sum(f for _n, f in counted)
        return applied >= STRUGGLING_MIN and fixes >= STRUGGLING_MIN * STRUGGLING_SHARE

    def struggling(self, changed: RuleChange | None) -> bool:
        """``count(rule, changed, every application).struggling``."""
        since = when(changed.date) if changed else None
        applied = fixes = 0
        for t, read in self.parts:
            if since is None or t.first is None or (when(t.first) or since) >= since:
                n, f = self._counted(t)  # every application since (or undated)
            elif not t.undated and (when(t.last) or since) < since:
                n, f = 0, 0  # every one before
            else:  # the change falls among them: count them
                recent = [
                    a
                    for a in read()
                    if (self.all_claimed or a.status == "verified") and (when(a.at) or since) >= since
                ]
                n, f = len(recent), sum(1 for a in recent if a.corrected)
            applied, fixes = applied + n, fixes + f
        return applied >= STRUGGLING_MIN and fixes >= STRUGGLING_SHARE * applied
