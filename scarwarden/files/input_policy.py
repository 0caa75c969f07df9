"""The input policy: what text Scarwarden stores, decided in one place.

Every door that takes data (CLI flags, ``--file`` and stdin, JSON lines, the web
form, MCP tools, the distiller's model output, files found on disk by the index and
the gate) reaches this module through the episode validator
(:mod:`scarwarden.files.episode_validate`), the rule builder
(:func:`scarwarden.files.playbook.make_rule`) or the playbook parser. Stored text is:

* valid Unicode: no lone surrogates (a JSON ``"\\ud800"`` escape decodes to one, and
  it cannot be written as UTF-8);
* free of NUL and of control characters (C0, DEL and C1) other than tab and newline.
  A carriage return is refused inside a value; a playbook written with CRLF line
  endings is read as if it had LF ones.

Text is never repaired or silently altered: a value that breaks the policy is
refused with the field and the reason (docs/formats.md, "Text").

Numbers are stored as JSON numbers, so a stored number is finite: YAML's ``.nan`` and
``.inf`` and a JSON ``1e999`` (read as infinity) are refused wherever they sit
(:func:`non_finite_in`). The index keeps each episode as a JSON document, and SQLite
refuses one that holds ``NaN``: a single such episode would break every read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from scarwarden.characters import REFUSED, SURROGATE, first_refused, not_unicode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: What the characters are called in messages.
_NAMES = {"\x00": "a NUL character", "\r": "a carriage return", "\x1b": "an escape character"}


def text_problem(value: str) -> str | None:
    """Why ``value`` may not be stored as text, or ``None`` when it may."""
    found = first_refused(value)
    if found is None:
        return None
    char, where = found
    surrogate = not_unicode(char, where)
    if surrogate is not None:
        return surrogate
    name = _NAMES.get(char, "a control character")
    return f"holds {name} (U+{ord(char):04X}) {where}; only tab and newline are allowed"


def encoding_problem(value: str) -> str | None:
    """Why ``value`` cannot be written as UTF-8 at all (a lone surrogate), or ``None``:
    the part of :func:`text_problem` that holds for any text, stored or not."""
    found = first_refused(value, SURROGATE)
    return None if found is None else not_unicode(*found)


def problems_in(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, why) for every string in ``value`` (keys too, at any depth) that breaks
    the policy; ``where`` is a path such as ``x-meta.notes[2]`` below the field."""
    return _walk(value, path, text_problem)


def encoding_problems_in(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, why) for every string in ``value`` (keys too) that is not valid Unicode
    text (:func:`encoding_problem`): for data that is kept but not stored as text."""
    return _walk(value, path, encoding_problem)


def _walk(value: Any, path: str, check: Callable[[str], str | None]) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        reason = check(value)
        if reason is not None:
            yield path, reason
    elif isinstance(value, dict):
        for key, item in value.items():
            name = shown(key) if isinstance(key, str) else repr(key)
            if isinstance(key, str) and (reason := check(key)) is not None:
                yield f"{path} key {name}".strip(), f"the key {reason}"
                continue
            yield from _walk(item, f"{path}.{name}" if path else name, check)
    elif isinstance(value, (list, tuple)):
        for number, item in enumerate(value):
            yield from _walk(item, f"{path}[{number}]", check)


#: Longest value a message quotes whole; a longer one is quoted by its first
#: :data:`_START` characters and its length (a message must not be as long as the value).
_QUOTED_CHARS = 64
_START = 20


def shown(value: str) -> str:
    """``value`` safe to print in a message: quoted, refused characters escaped; a long
    one by its start and its length."""
    if len(value) > _QUOTED_CHARS:
        start = shown(value[:_START])
        return f"{start[:-1]}...{start[-1]} ({len(value):,} characters)"
    return repr(value) if REFUSED.search(value) else f"'{value}'"


def named(key: str) -> str:
    """A key as a message names its field: :func:`shown` without its quotes."""
    if len(key) > _QUOTED_CHARS:
        return f"{shown(key[:_START])[1:-1]}... ({len(key):,} characters)"
    return shown(key)[1:-1]


def quoted(value: Any) -> str:
    """``value`` as a message quotes it (its ``repr``); a long one by its start and its
    length, as :func:`shown` quotes text."""
    if isinstance(value, str) and len(value) > _QUOTED_CHARS:
        start = repr(value[:_START])
        return f"{start[:-1]}...{start[-1]} ({len(value):,} characters)"
    text = repr(value)
    if len(text) <= _QUOTED_CHARS:
        return text
    return f"{text[:_START]}... (a {type(value).__name__} of {len(text):,} characters as written)"


def printable(message: str) -> str:
    """A message that can be written as UTF-8 whatever it quotes (surrogates escaped)."""
    return message.encode("utf-8", "backslashreplace").decode("utf-8")


#: How deep :func:`non_finite_in` looks (deeper values are refused by their own checks).
_NUMBER_DEPTH = 64


def non_finite_in(value: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """(where, number) for every float in ``value`` that is NaN or infinite, at any depth
    (to :data:`_NUMBER_DEPTH`), in document order; ``where`` is a path such as
    ``scores[2]`` or ``meta.weight`` below the field."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                yield where, item
        elif depth < _NUMBER_DEPTH and isinstance(item, dict):
            names = [(f"{where}.{k}" if where else str(k), v) for k, v in item.items()]
            stack.extend((v, name, depth + 1) for name, v in reversed(names))
        elif depth < _NUMBER_DEPTH and isinstance(item, (list, tuple)):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in reversed(list(enumerate(item))))
