"""A rule's struggling status from tallies per part (files/lineage_tally.py) is the full
computation's (files/lineage_counts.py: ``may_struggle``, ``count(...).struggling``) on
every application, and reads a part's applications only where the rule's last change
falls among them (issue 30)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from scarwarden.files.lineage_counts import Application, count, may_struggle
from scarwarden.files.lineage_tally import Standing, Tally, tally
from scarwarden.files.rule_dates import RuleChange

STATUSES = ("verified", "claimed", "unverifiable", "reason", "refused")
# Times in three months, some equal, some in other zones (the same instant written
# otherwise), some that do not parse (they count as since the change).
TIMES = [
    "2026-01-05T10:00:00Z",
    "2026-01-20T23:30:00-02:00",  # 2026-01-21T01:30Z
    "2026-01-31T23:59:59Z",
    "2026-02-01T00:00:00Z",
    "2026-02-01T01:00:00+01:00",  # the same instant as the one before
    "2026-02-14T12:00:00Z",
    "2026-02-28T10:00:00",  # no zone: taken as UTC
    "2026-03-01T09:00:00Z",
    "2026-03-15T09:00:00Z",
    "not a time",
    "",
]
CHANGES = [None, "2025-12-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-02-14T12:00:00Z"]
CHANGES += ["2026-02-14T12:00:01Z", "2026-01-20T23:30:00-02:00", "2026-04-01T00:00:00Z", "garbage"]


def _app(i: int, at: str, fixed: bool, status: str) -> Application:
    return Application(f"ep-{i:010d}", at, fixed, not fixed and i % 3 != 0, status)


applications = st.lists(
    st.tuples(st.sampled_from(TIMES), st.booleans(), st.sampled_from(STATUSES)), max_size=40
).map(lambda rows: [_app(i, *row) for i, row in enumerate(rows)])


def _month(a: Application) -> str:
    return a.at[:7]


def _parts(apps: Sequence[Application], reads: list[str]) -> list[tuple[Tally, object]]:
    """The applications split by month (their ``at``'s first seven characters, as a
    month folder is named), each part's reads recorded."""
    by_month: dict[str, list[Application]] = {}
    for a in apps:
        by_month.setdefault(_month(a), []).append(a)

    def reader(month: str, mine: list[Application]) -> object:
        def read() -> list[Application]:
            reads.append(month)
            return mine

        return read

    return [(tally(mine), reader(month, mine)) for month, mine in sorted(by_month.items())]


def _full(apps: list[Application], changed: RuleChange | None) -> tuple[bool, bool]:
    ordered = sorted(apps, key=lambda a: (a.at, a.id))
    return may_struggle(ordered), count("PB-01", changed, ordered).struggling


@settings(max_examples=400, deadline=None)
@given(apps=applications, change=st.sampled_from(CHANGES))
def test_the_tallies_answer_as_every_application_does(apps: list[Application], change: str | None) -> None:
    changed = None if change is None else RuleChange("c" * 40, change)
    reads: list[str] = []
    standing = Standing(_parts(apps, reads))  # type: ignore[arg-type]
    assert (standing.may_struggle(), standing.struggling(changed)) == _full(apps, changed)
    # Split any other way (one part; one application a part), the same answer.
    for parts in ([apps], [[a] for a in apps]):
        other = Standing([(tally(p), lambda p=p: p) for p in parts])
        assert (other.may_struggle(), other.struggling(changed)) == _full(apps, changed)


def test_a_part_is_read_only_when_the_change_falls_among_its_applications() -> None:
    """Applications in January, February and March, mostly corrected; the rule changed
    before them all, in mid-February, or after them all."""
    times = ["2026-01-05T10:00:00Z", "2026-01-25T10:00:00Z", "2026-02-03T10:00:00Z", "2026-02-20T10:00:00Z"]
    times += ["2026-02-21T10:00:00Z", "2026-03-02T10:00:00Z", "2026-03-09T10:00:00Z"]
    apps = [_app(i, at, i != 2, "claimed") for i, at in enumerate(times)]
    cases = [
        (None, [], True),
        ("2025-12-31T00:00:00Z", [], True),
        ("2026-02-03T10:00:00Z", [], True),  # at February's first: all of it since
        ("2026-02-10T00:00:00Z", ["2026-02"], True),  # 4 since, all corrected
        ("2026-03-05T00:00:00Z", ["2026-03"], False),  # 1 since: too few
        ("2026-03-09T10:00:00Z", ["2026-03"], False),  # at March's last: that one since
        ("2026-04-01T00:00:00Z", [], False),
    ]
    for change, read, struggling in cases:
        changed = None if change is None else RuleChange("c" * 40, change)
        reads: list[str] = []
        standing = Standing(_parts(apps, reads))  # type: ignore[arg-type]
        assert standing.struggling(changed) is struggling == _full(apps, changed)[1]
        assert reads == read, change
    # An application whose time does not parse counts as since: a part holding one
    # beside earlier ones is read; a part of such applications alone is not.
    undated = [*apps, _app(9, "2026-03-99T00:00:00Z", True, "claimed"), _app(10, "soon", True, "claimed")]
    reads = []
    changed = RuleChange("c" * 40, "2026-04-01T00:00:00Z")
    standing = Standing(_parts(undated, reads))  # type: ignore[arg-type]
    assert standing.struggling(changed) is False == _full(undated, changed)[1] and reads == ["2026-03"]
    undated.append(_app(11, "later", True, "claimed"))
    reads = []
    standing = Standing(_parts(undated, reads))  # type: ignore[arg-type]
    assert standing.struggling(changed) is True == _full(undated, changed)[1] and reads == ["2026-03"]


def test_a_tally_round_trips_and_refuses_what_is_not_one() -> None:
    apps = [_app(1, "2026-01-05T10:00:00Z", True, "verified"), _app(2, "x", False, "claimed")]
    kept = tally(apps)
    assert kept == Tally(2, 1, 1, 1, 1, "2026-01-05T10:00:00Z", "2026-01-05T10:00:00Z", 1)
    assert Tally.from_json(kept.to_json()) == kept
    for bad in ([1, 2, 3], {"applied": 1}, [1, 1, 1, 1, 1, None, None, "many"]):
        try:
            Tally.from_json(bad)  # type: ignore[arg-type]
        except (ValueError, TypeError):
            continue
        raise AssertionError(f"{bad!r} taken for a tally")
