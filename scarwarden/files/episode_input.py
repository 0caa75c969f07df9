"""Episode input: what ``episode add``, imports and the ask-human loop hand the ledger.

Input is more forgiving than a stored file (:func:`~scarwarden.files.episodes.parse_episode_bytes`):
``id`` and ``at`` may be left out and are minted, ``at`` may carry any UTC offset, tags
are lower-cased, and one input may hold many episodes (a YAML/JSON list or JSON lines).
:func:`normalise_input` turns one item into the episode that will be stored, through
the same :func:`~scarwarden.files.episodes.validate_mapping` as stored files. This module
imports :mod:`scarwarden.files.episodes` (the model, IDs, validation), never the reverse.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scarwarden import yamlio
from scarwarden.errors import Problem, ValidationError
from scarwarden.files.episodes import (
    MAX_EPISODE_BYTES,
    Episode,
    mint_id,
    render_episode,
    utf8_error,
    validate_mapping,
)
from scarwarden.files.input_policy import shown
from scarwarden.times import utc_now


def normalise_input(data: Any, *, source: str, now: str | None = None) -> Episode:
    """Turn user input into a storable episode: mint ``id``/``at`` when absent."""
    if isinstance(data, Mapping):
        data = dict(data)
        if data.get("id") is None:
            data["id"] = mint_id()
        if data.get("at") is None:
            data["at"] = now or utc_now()
    episode, problems = validate_mapping(data, source=source, normalise=True)
    text = None
    if not problems:
        # Text is stored at least verbatim: a cheap lower bound spares rendering (slow in
        # PyYAML's pure-Python emitter) of a 10 MB paste.
        size = sum(len(v.encode("utf-8")) for v in episode.values() if isinstance(v, str))
        at_least = size > MAX_EPISODE_BYTES
        if not at_least:
            text = render_episode(episode)
            size = len(text.encode("utf-8"))
        if size > MAX_EPISODE_BYTES:
            problems.append(_size_problem(episode, size, source, at_least))
    if problems:
        raise ValidationError(f"{source}: invalid episode", problems=problems)
    return Episode(episode, text=text)  # rendered once: the file's bytes are these


def _size_problem(data: Mapping[str, Any], size: int, source: str, at_least: bool) -> Problem:
    sizes = {k: len(str(v).encode("utf-8")) for k, v in data.items()}
    biggest = max(sizes, key=lambda k: sizes[k]) if sizes else None
    return Problem(
        f"episode is {'at least ' if at_least else ''}{size:,} bytes, "
        f"over the {MAX_EPISODE_BYTES // 1024} KiB cap"
        + (f" ('{biggest}' alone is {sizes[biggest]:,} bytes)" if biggest else ""),
        file=source,
        field=biggest,
        hint="keep episodes short; link to long material instead",
    )


class InputDocuments(list[Any]):
    """Parsed episode input: a plain list that also knows where each item starts."""

    def __init__(self, items: list[Any], text: str, item_lines: list[int] | None = None):
        super().__init__(items)
        self._text = text
        self._item_lines = item_lines  # JSON lines: the line of each item
        self._keys: list[tuple[int, dict[str, int]]] | None = None

    def where(self, index: int) -> tuple[int, dict[str, int]] | None:
        """(first line, key -> line) of item ``index``; ``None`` when unknown."""
        if self._item_lines is not None:
            return (self._item_lines[index], {}) if index < len(self._item_lines) else None
        if self._keys is None:
            self._keys = yamlio.key_lines(self._text)  # error path only: parse again
        return self._keys[index] if index < len(self._keys) else None


def parse_input_documents(raw: bytes, *, source: str) -> list[Any]:
    """Read episode input: one mapping, a list of mappings (YAML or JSON), or JSON lines.

    Returns an :class:`InputDocuments` (a list) so errors can later name lines.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise utf8_error(raw, exc, source) from None
    # A byte order mark is an encoding marker, not text (YAML drops it too; JSON would
    # refuse it): dropped, so Notepad's UTF-8 files read like any other.
    text = text.removeprefix("\ufeff")
    stripped = text.strip()
    if not stripped:
        raise ValidationError(
            f"{source}: no episode in the input",
            hint="give a YAML/JSON mapping, a list of them, or JSON lines",
        )
    lines = [line for line in stripped.splitlines() if line.strip()]
    if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines):
        docs = []
        numbers = []
        offset = text[: len(text) - len(text.lstrip())].count("\n")
        for number, line in enumerate(stripped.splitlines(), 1 + offset):
            if not line.strip():
                continue
            try:
                docs.append(_json_loads(line, source, number))
            except (json.JSONDecodeError, RecursionError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
                raise ValidationError(
                    f"{source}: line {number} is not valid JSON",
                    problems=[Problem(reason, file=source, line=number)],
                ) from None
            numbers.append(number)
        return InputDocuments(docs, text, numbers)
    loaded: Any
    if stripped[0] in "[{":
        try:
            loaded = _json_loads(stripped, source, None)
        except (json.JSONDecodeError, RecursionError):
            loaded = yamlio.load(text, source=source)  # flow-style YAML looks like JSON
    else:
        loaded = yamlio.load(text, source=source)
    return InputDocuments(loaded if isinstance(loaded, list) else [loaded], text)


def _json_loads(text: str, source: str, line: int | None) -> Any:
    """``json.loads``, strict: a key given twice and NaN/Infinity (not JSON) are refused.

    Python's ``json`` keeps the last of two equal keys without a word, which would
    store ``{"task": "a", "task": "b"}`` as ``b`` (issue 16).
    """

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise ValidationError(
                    f"{source}: refused JSON",
                    problems=[
                        Problem(
                            f"duplicate key {shown(key)}", file=source, line=line, hint="give each key once"
                        )
                    ],
                )
            out[key] = value
        return out

    def constant(name: str) -> Any:
        raise ValidationError(
            f"{source}: not valid JSON",
            problems=[
                Problem(f"{name} is not a JSON value", file=source, line=line, hint="use a number or text")
            ],
        )

    loaded = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    if _deeper_than(loaded, yamlio.MAX_DEPTH):
        # Python 3.11's parser raised this at ~1,000 levels; 3.12's C parser goes on to
        # thousands, and what reads the value after it (validation) recursed into an
        # "internal error". Deeper than YAML's bound, refused as 3.11 refused it.
        raise RecursionError(f"nested more than {yamlio.MAX_DEPTH} levels deep")
    return loaded


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and mappings nest in ``value`` more than ``limit`` deep (level by
    level, without recursing: the value may be thousands of levels deep)."""
    level, depth = [value], 0
    while True:
        containers = [item for item in level if isinstance(item, (list, dict))]
        if not containers:
            return False
        depth += 1
        if depth > limit:
            return True
        level = [item for c in containers for item in (c.values() if isinstance(c, dict) else c)]
