"""Redaction: the one permitted change to an episode, and its proof.

A redacted episode keeps its ``id`` and ``at`` (its path follows from them) and a
``redacted:`` block saying when, by whom, why, which fields were removed, which new
episode records the act, and the SHA-256 of the file's bytes before the redaction,
so anyone holding the old content can prove what was removed and nobody can swap in
other content. Removed text fields read ``[redacted]`` (``task`` must stay: it is
required); removed list, ``source`` and extension fields are left out.

:func:`redaction_problems` is the gate's verdict on a changed episode file (hook, CI
and ``verify`` call it); :func:`build_stub` makes the stub ``scarwarden redact`` writes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from scarwarden.errors import Problem
from scarwarden.files.episode_fields import EPISODE_ID_RE, TEXT_FIELDS
from scarwarden.files.input_policy import named, quoted

#: What a removed text field reads.
PLACEHOLDER = "[redacted]"
#: Fields a redaction never removes: the episode's identity and place in the ledger.
KEPT = ("id", "at")
KEYS = ("at", "by", "reason", "sha256", "record", "fields")
_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
_AT = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\Z")


def check_block(value: Any, source: str) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Validate a ``redacted:`` block; the block in canonical key order, or problems."""
    problems: list[Problem] = []

    def bad(message: str) -> None:
        problems.append(
            Problem(message, file=source, field="redacted", hint="only 'scarwarden redact' writes this block")
        )

    if not isinstance(value, Mapping):
        bad(f"must be a mapping, got {type(value).__name__}")
        return None, problems
    for key in value:
        if key not in KEYS:
            bad(f"unknown key {quoted(key)} (known: {', '.join(KEYS)})")
    for key in ("by", "reason"):
        if not isinstance(value.get(key), str) or not value[key].strip():
            bad(f"'{key}' must be non-empty text")
    if not isinstance(value.get("at"), str) or not _AT.match(value["at"]):
        bad("'at' must be a UTC time such as 2026-12-01T10:00:00Z (quoted)")
    if not isinstance(value.get("sha256"), str) or not _SHA256.match(value["sha256"]):
        bad("'sha256' must be 64 lower-case hex digits")
    if not isinstance(value.get("record"), str) or not EPISODE_ID_RE.match(value["record"]):
        bad("'record' must be the ID of the episode that records the redaction")
    fields = value.get("fields")
    if not isinstance(fields, list) or not fields or not all(isinstance(f, str) for f in fields):
        bad("'fields' must be a non-empty list of the field names removed")
    elif any(f in KEPT or f == "redacted" for f in fields):
        bad("'id' and 'at' are never redacted")
    if problems:
        return None, problems
    return {key: value[key] for key in KEYS}, []


def sha256_hex(raw: bytes) -> str:
    import hashlib

    return hashlib.sha256(raw).hexdigest()


def already_redacted(data: Mapping[str, Any]) -> set[str]:
    """The fields of an episode that redacting again would not change: text fields that
    read ``[redacted]``, and fields its ``redacted:`` block lists that are gone."""
    done = {key for key in TEXT_FIELDS if data.get(key) == PLACEHOLDER}
    block = data.get("redacted")
    listed = block.get("fields") if isinstance(block, Mapping) else None
    if isinstance(listed, list):
        done.update(f for f in listed if isinstance(f, str) and f not in data)
    return done


def build_stub(old: Mapping[str, Any], block: Mapping[str, Any]) -> dict[str, Any]:
    """The redacted episode: ``old`` without the fields ``block`` names, and the block."""
    removed = set(block["fields"])
    stub: dict[str, Any] = {}
    for key, value in old.items():
        if key == "redacted":
            continue  # a second redaction replaces the first; the hash covers it
        if key not in removed:
            stub[key] = value
        elif key in TEXT_FIELDS:
            stub[key] = PLACEHOLDER
    stub["redacted"] = dict(block)
    return stub


def redaction_problems(
    old: Mapping[str, Any], old_raw: bytes, new: Mapping[str, Any], added_ids: Collection[str]
) -> list[str]:
    """Why ``new`` is not a valid redaction of ``old`` (an empty list: it is).

    ``old_raw`` is the file's previous bytes (its hash must be the block's), ``added_ids``
    the episodes the same commit adds (the record of the act must be one of them)."""
    block = new.get("redacted")
    if not isinstance(block, Mapping):
        return ["it has no 'redacted:' block"]
    why = []
    missing = [f for f in block.get("fields") or [] if f not in old]
    if missing:
        why.append(f"it names fields the episode did not have: {', '.join(named(str(f)) for f in missing)}")
    if block.get("sha256") != sha256_hex(old_raw):
        why.append("its sha256 is not the hash of the content it replaces")
    if block.get("record") not in added_ids:
        why.append(f"the episode recording it ({block.get('record')}) is not added in the same commit")
    if build_stub(old, block) != dict(new):
        removed = ", ".join(named(str(f)) for f in block.get("fields") or [])
        why.append(
            f"it changes more than removing {removed or 'nothing'} (every other field must stay as it was)"
        )
    return why
