"""Validating an episode mapping: every field's type, form and canonical spelling.

:func:`validate_mapping` reports every problem of an episode at once, each naming its
field; :func:`scarwarden.files.episodes.parse_episode_bytes` and the input path call it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from scarwarden.errors import Problem
from scarwarden.files.episode_fields import (
    CONTENT_FIELDS,
    EPISODE_ID_RE,
    FIELD_ORDER,
    LIST_FIELDS,
    RULE_ID_RE,
    SOURCES,
    TEXT_FIELDS,
    tag_problem,
)
from scarwarden.files.input_policy import named, non_finite_in, problems_in, quoted, text_problem
from scarwarden.files.rule_ids import canonical
from scarwarden.times import RANGE_HINT, TimeOutOfRange, format_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: An ISO 8601 date-time's shape; one that has it and still does not parse names a
#: day, month or hour that does not exist (2026-02-30).
_ISO_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?([+-]\d{2}:?\d{2})?\Z")


class _NotReal(ValueError):
    """A date-time in ISO form that does not exist; the message says which part."""


def _parse_at(value: Any) -> str | None:
    """Normalise an ``at`` value to ``YYYY-MM-DDTHH:MM:SSZ``; ``None`` if not a time.

    Raises :class:`TimeOutOfRange` for a time whose UTC equivalent is outside years 1-9999,
    :class:`_NotReal` for one in ISO form that does not exist.
    """
    if isinstance(value, dt.datetime):
        # YAML reads an unquoted time as a datetime; without a zone it is ambiguous.
        return None if value.tzinfo is None else format_at(value)
    if isinstance(value, dt.date):
        return None  # a bare date has no time of day; ask for one
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        if _ISO_SHAPE.match(text):
            raise _NotReal(str(exc)) from None
        return None
    if parsed.tzinfo is None:
        return None
    return format_at(parsed)


class _Problems(list[Problem]):
    """The problems found in one episode, each naming its file (and field, when known)."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def bad(self, field: str | None, message: str, hint: str | None = None) -> None:
        self.append(Problem(message, file=self.source, field=field, hint=hint))


def validate_mapping(
    data: Any, *, source: str, normalise: bool = False
) -> tuple[dict[str, Any], list[Problem]]:
    """Check an episode mapping; return it in canonical order and the problems found.

    With ``normalise`` (user input), tags are lower-cased and ``at`` with another UTC
    offset is converted; for stored files the stored form must already be canonical.
    """
    problems = _Problems(source)
    if not isinstance(data, Mapping):
        problems.bad(
            None,
            f"an episode must be a YAML mapping, got {type(data).__name__}",
            "write 'key: value' lines: id, at, task, action, outcome, correction, ...",
        )
        return {}, list(problems)
    # Each check adds what it accepts to ``out``; the order of the checks is the order
    # of the problems in a message.
    out: dict[str, Any] = {}
    _check_keys(data, problems)
    _check_finite(data, problems)
    _check_id(data, out, problems)
    _check_at(data, out, problems, normalise)
    _check_text_fields(data, out, problems)
    for key in LIST_FIELDS:
        if key in data and data[key] is not None:
            _check_list(key, data[key], out, problems, normalise)
    _check_source(data, out, problems)
    _check_attachments(data, out, problems)
    _check_recalled(data, out, problems)
    _check_redacted(data, out, problems)
    ordered = {key: out[key] for key in FIELD_ORDER if key in out}
    ordered.update(_extensions(data, problems))
    return ordered, list(problems)


def _check_keys(data: Mapping[Any, Any], problems: _Problems) -> None:
    """Every key is a known field or an ``x-`` extension (a near miss gets a hint)."""
    for key in data:
        if not isinstance(key, str):
            problems.bad(named(str(key)), "keys must be strings")
        elif (reason := text_problem(key)) is not None:
            problems.bad(named(key), f"the key {reason}")
        elif key not in FIELD_ORDER and not key.startswith("x-"):
            close = [k for k in FIELD_ORDER if _similar(k, key)]
            hint = (
                f"did you mean '{close[0]}'?"
                if close
                else ("known keys: " + ", ".join(FIELD_ORDER) + "; extensions start with 'x-'")
            )
            problems.bad(named(key), "unknown key", hint)


def _check_finite(data: Mapping[Any, Any], problems: _Problems) -> None:
    """No number is NaN or infinite, in any field (input_policy.py: not JSON)."""
    for key, value in data.items():
        for where, number in non_finite_in(value):
            problems.bad(
                named(str(key)),
                f"{where + ': ' if where else ''}{number!r} is not a finite number"
                " (NaN and infinity are not JSON)",
                "write a finite number, or quote it to keep it as text",
            )


def _check_id(data: Mapping[Any, Any], out: dict[str, Any], problems: _Problems) -> None:
    ep_id = data.get("id")
    if ep_id is None:
        problems.bad("id", "missing", "every stored episode has an id (episode add mints one)")
    elif not isinstance(ep_id, str) or not EPISODE_ID_RE.match(ep_id):
        problems.bad(
            "id",
            f"{quoted(ep_id)} is not a valid episode ID",
            "IDs match ep-[0-9a-z][0-9a-z-]{2,40}: lower case, digits and '-', nothing else",
        )
    else:
        out["id"] = ep_id


def _check_at(data: Mapping[Any, Any], out: dict[str, Any], problems: _Problems, normalise: bool) -> None:
    at_raw = data.get("at")
    if at_raw is None:
        problems.bad("at", "missing", "a UTC time such as 2026-11-03T10:12:00Z")
        return
    try:
        at = _parse_at(at_raw)
    except TimeOutOfRange:
        problems.bad("at", f"{_show_at(at_raw)} is out of range", RANGE_HINT)
        return
    except _NotReal as exc:
        problems.bad("at", f"{quoted(at_raw)} is not a real date or time ({exc})", "fix the date")
        return
    if at is None:
        problems.bad(
            "at",
            f"{_show_at(at_raw)} is not a date-time with a time zone",
            "use ISO 8601 with a zone, e.g. 2026-11-03T10:12:00Z",
        )
    elif not normalise and not _canonical_at(at_raw, at):
        problems.bad("at", f"{_show_at(at_raw)} is not in canonical UTC form", f"write it as {at}")
    else:
        out["at"] = at


def _check_text_fields(data: Mapping[Any, Any], out: dict[str, Any], problems: _Problems) -> None:
    """The text fields, then the two the episode cannot do without: a task and content."""
    for key in TEXT_FIELDS:
        if key not in data or data[key] is None:
            continue
        value = data[key]
        if not isinstance(value, str):
            problems.bad(
                key,
                f"must be text, got {type(value).__name__}",
                "quote it if YAML read it as a number, date or boolean",
            )
        elif not value.strip():
            problems.bad(key, "must not be empty", "leave the key out instead")
        elif (reason := text_problem(value)) is not None:
            problems.bad(key, reason, "remove it; text is stored exactly as given, never repaired")
        else:
            out[key] = value
    if "task" not in data or data.get("task") is None:
        problems.bad("task", "missing", "say what the agent was asked to do")
    if "redacted" not in data and not any(
        isinstance(data.get(k), str) and data.get(k, "").strip() for k in CONTENT_FIELDS
    ):
        problems.bad(
            None,
            "an episode needs at least one of action, outcome, correction",
            "record what the agent did, what happened, or what a human corrected",
        )


def _check_list(key: str, value: Any, out: dict[str, Any], problems: _Problems, normalise: bool) -> None:
    """One list field: tags (slugs, de-duplicated), refs (episode IDs) or rules_applied."""
    if not isinstance(value, list):
        problems.bad(
            key,
            f"must be a list, got {type(value).__name__}",
            f"write {key}: [a, b] or one '- item' per line",
        )
        return
    items: list[str] = []
    for item in value:
        if not isinstance(item, str):
            problems.bad(key, f"item {quoted(item)} must be text")
        elif key == "tags":
            tag = item.strip().lower() if normalise else item
            problem = tag_problem(tag, item, bounded=normalise)  # the bound: new input only
            if problem is not None:
                problems.bad(key, *problem)
            elif tag not in items:
                items.append(tag)
        elif key == "refs":
            if not EPISODE_ID_RE.match(item):
                problems.bad(key, f"{quoted(item)} is not an episode ID")
            else:
                items.append(item)
        else:
            _check_rule_id(key, item, items, problems, normalise)
    if items:
        out[key] = items


def _check_rule_id(key: str, item: str, items: list[str], problems: _Problems, normalise: bool) -> None:
    """A ``rules_applied`` entry. Input takes every spelling a citation takes (``pb-3``,
    ``PB-7K2M9Q4X``) and stores the canonical ID once (issue 18); a stored file must
    already hold it, so the gate judges what is written, never a reading of it."""
    rule_id = canonical(item) if normalise else item
    if not RULE_ID_RE.match(rule_id):
        spelled = canonical(item)
        hint = f"write it as {spelled}" if RULE_ID_RE.match(spelled) else "rule IDs look like PB-03"
        problems.bad(key, f"{quoted(item)} is not a rule ID", hint)
    elif not (normalise and rule_id in items):  # "pb-3, PB-03" is one rule applied
        items.append(rule_id)


def _check_source(data: Mapping[Any, Any], out: dict[str, Any], problems: _Problems) -> None:
    source_value = data.get("source")
    if source_value is None:
        return
    if source_value not in SOURCES:
        problems.bad(
            "source", f"{quoted(source_value)} is not a known source", "one of: " + ", ".join(SOURCES)
        )
    else:
        out["source"] = source_value


def _extensions(data: Mapping[Any, Any], problems: _Problems) -> dict[str, Any]:
    """The ``x-`` keys, in their input order, whose values the index can store."""
    kept: dict[str, Any] = {}
    for key in data:
        if isinstance(key, str) and key.startswith("x-") and text_problem(key) is None:
            bad_text = next(problems_in(data[key]), None)
            if bad_text is not None:
                where, reason = bad_text
                problems.bad(named(key), f"{where + ': ' if where else ''}{reason}")
                continue
            if _depth(data[key]) > _MAX_EXTENSION_DEPTH:
                problems.bad(
                    named(key), f"nested more than {_MAX_EXTENSION_DEPTH} levels deep", "keep extensions flat"
                )
                continue
            if not _plain(data[key]):
                # The index stores episodes as JSON; a YAML date here would break it.
                problems.bad(
                    named(key),
                    "extension values must be text, numbers, booleans, lists or mappings",
                    "quote dates and times, e.g. x-reviewed: '2026-11-03'",
                )
                continue
            kept[key] = data[key]
    return kept


def _canonical_at(raw: Any, at: str) -> bool:
    if isinstance(raw, str):
        return raw == at
    # A datetime from YAML: canonical when it was written in UTC to the second.
    return isinstance(raw, dt.datetime) and raw.utcoffset() == dt.timedelta(0) and raw.microsecond == 0


def _show_at(raw: Any) -> str:
    """``at`` as written: YAML reads an unquoted time or date as a Python object."""
    return raw.isoformat() if isinstance(raw, dt.date) else quoted(raw)


#: Deepest nesting of an ``x-`` value: what :func:`_plain` (the index's JSON) accepts.
_MAX_EXTENSION_DEPTH = 9


def _depth(value: Any) -> int:
    """How many levels of lists and mappings ``value`` holds (0 for a scalar), counted
    no further than one past the limit."""
    level, layer = 0, [value]
    while level <= _MAX_EXTENSION_DEPTH:
        containers = [item for item in layer if isinstance(item, (list, dict))]
        if not containers:
            return level
        level += 1
        layer = [v for c in containers for v in _children(c)]
    return level


def _children(item: list[Any] | dict[Any, Any]) -> list[Any]:
    return list(item.values()) if isinstance(item, dict) else item


def _plain(value: Any, depth: int = 0) -> bool:
    """JSON-compatible (what the index can store), at most a few levels deep."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if depth > 8:
        return False
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _similar(a: str, b: str) -> bool:
    """Cheap typo detection: same length +-1 and few differing characters."""
    if abs(len(a) - len(b)) > 2:
        return False
    import difflib

    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


def _check_recalled(data: Mapping[Any, Any], out: dict[str, Any], problems: _Problems) -> None:
    """The ``recalled:`` block: a recall receipt whose hash matches its fields (issue 20)."""
    if data.get("recalled") is None:
        return
    from scarwarden.files import receipt

    found, bad = receipt.check(data["recalled"], source=problems.source)
    problems.extend(bad)
    if found is not None:
        out["recalled"] = found.to_json()


def _check_redacted(data: Mapping[Any, Any], out: dict[str, Any], problems: _Problems) -> None:
    """The ``redacted:`` block of a redaction stub (issue 17; docs/privacy.md)."""
    if "redacted" not in data:
        return
    from scarwarden.files.redaction import check_block

    block, bad = check_block(data["redacted"], problems.source)
    problems.extend(bad)
    if block is not None:
        out["redacted"] = block


def _check_attachments(data: Mapping[Any, Any], out: dict[str, Any], problems: _Problems) -> None:
    """``attachments:``: ``sha256:<hex>`` of images under memory/media/ (issue 19)."""
    value = data.get("attachments")
    if value is None:
        return
    from scarwarden.files.media import ATTACHMENT_RE

    if not isinstance(value, list):
        problems.bad(
            "attachments", f"must be a list, got {type(value).__name__}", "attachments: [sha256:...]"
        )
        return
    items: list[str] = []
    for item in value:
        if not isinstance(item, str) or not ATTACHMENT_RE.match(item):
            problems.bad(
                "attachments",
                f"{quoted(item)} is not an attachment",
                "attachments are sha256: and the image's 64-digit hex SHA-256; "
                "'episode add --attach FILE' writes them",
            )
        elif item not in items:
            items.append(item)
    if items:
        out["attachments"] = items
