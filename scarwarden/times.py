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


#: The range of times that can be stored: what a UTC ``datetime`` can hold.
RANGE_HINT = "times must fall between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z"


class TimeOutOfRange(ValueError):
    """A time whose UTC equivalent falls outside years 1-9999 (``--at 9999-12-31T23:00-05:00``)."""


def format_at(value: dt.datetime) -> str:
    """``value`` in the stored form; a naive datetime is taken as UTC.

    Raises :class:`TimeOutOfRange` (a ``ValueError``), never ``OverflowError``, when the
    UTC time is outside years 1-9999. The year is always four digits: ``strftime('%Y')``
    writes year 1 as ``1`` here, which would not read back as a time.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    try:
        utc = value.astimezone(dt.timezone.utc)
    except OverflowError:
        raise TimeOutOfRange(f"{value.isoformat()} is out of range: {RANGE_HINT}") from None
    return f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"


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
        try:
            return format_at(start - dt.timedelta(**{unit: int(age.group(1))}))
        except (OverflowError, ValueError):  # timedelta(days=10**12), or before year 1
            raise UsageError(f"{value!r} reaches back too far", hint=RANGE_HINT) from None
    try:
        if _DATE.match(value):
            day = dt.date.fromisoformat(value)
            return day.isoformat() + ("T23:59:59Z" if end else "T00:00:00Z")
        # Python 3.10's fromisoformat does not read a trailing 'Z'.
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        return format_at(parsed)
    except TimeOutOfRange as exc:
        raise UsageError(str(exc), hint="give a time whose UTC equivalent is in years 1-9999") from None
    except ValueError:
        raise UsageError(
            f"cannot read {value!r} as a date or time",
            hint="use 2026-11-24, 2026-11-24T09:30, 2026-11-24T09:30:00Z or an age such as 7d, 12h, 30m",
        ) from None


#: How far past now an episode's time may be (clock skew between machines), in seconds.
FUTURE_SKEW_SECONDS = 300


def future_problem(at: object, named: str, allow: str) -> UsageError | None:
    """``at`` (text, or a datetime as YAML reads one) beyond :data:`FUTURE_SKEW_SECONDS`
    of now, as the error every door gives (issue 28: the ledger is append-only, a mistyped
    2999 stays for good); ``None`` when it is not, or does not read as a time (the
    episode's validation says why). ``named``: how the door calls it (``--at``, ``'at'``);
    ``allow``: how the door allows it (``--allow-future``, ``allow_future=True``)."""
    when = at
    if isinstance(at, str):
        try:
            when = dt.datetime.fromisoformat(at.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(when, dt.datetime):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    now = dt.datetime.now(dt.timezone.utc)
    try:
        ahead = (when.astimezone(dt.timezone.utc) - now).total_seconds()
    except OverflowError:  # out of range: the validation says so
        return None
    if ahead <= FUTURE_SKEW_SECONDS:
        return None
    return UsageError(
        f"{named} {at} is in the future (now is {now:%Y-%m-%dT%H:%M:%SZ}); episodes record "
        "what happened, and the ledger is append-only",
        hint=f"check the date, or pass {allow} if it is meant",
    )
