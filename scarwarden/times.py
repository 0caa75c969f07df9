"""Times as Scarwarden stores and filters them: UTC, ``YYYY-MM-DDTHH:MM:SSZ``.

Episodes (``at``) and the recall log store times in this one form, so comparing two
times is comparing two strings (the index filters with plain SQL ``>=``/``<=``).
:func:`parse_when` reads the bounds users give to ``episode list`` and ``log``.
"""

from __future__ import annotations

import datetime as dt
import re

from scarwarden.errors import UsageError

STORED_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

_AGE = re.compile(r"^(\d+)([dhm])$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def format_at(value: dt.datetime) -> str:
    """``value`` in the stored form; a naive datetime is taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value.astimezone(dt.timezone.utc).strftime(STORED_FORMAT)


def utc_now() -> str:
    return format_at(dt.datetime.now(dt.timezone.utc))


def parse_when(value: str, *, end: bool = False, now: dt.datetime | None = None) -> str:
    """A user's time bound in the stored form.

    Accepts a date (``2026-11-24``; with ``end``, an upper bound, it means the end of
    that day), an ISO 8601 time with or without an offset (UTC when none), or an age:
    ``7d``, ``12h``, ``30m`` before ``now``. Anything else is a :class:`UsageError`.
    """
    value = value.strip()
    age = _AGE.match(value)
    if age:
        unit = {"d": "days", "h": "hours", "m": "minutes"}[age.group(2)]
        start = now or dt.datetime.now(dt.timezone.utc)
        return format_at(start - dt.timedelta(**{unit: int(age.group(1))}))
    try:
        if _DATE.match(value):
            day = dt.date.fromisoformat(value)
            return day.isoformat() + ("T23:59:59Z" if end else "T00:00:00Z")
        # Python 3.10's fromisoformat does not read a trailing 'Z'.
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"cannot read {value!r} as a date or time",
            hint="use 2026-11-24, 2026-11-24T09:30, 2026-11-24T09:30:00Z or an age such as 7d, 12h, 30m",
        ) from None
    return format_at(parsed)
