"""What the secret scanner reads instead of the raw text: the evasions undone.

A credential with a zero-width space inside, in fullwidth letters (``ｇｈｐ＿...``) or
with Cyrillic or Greek look-alikes (``gһp_...``) is still a credential to whoever copies
it out of memory. :func:`normalise` undoes all three (NFKC, which folds fullwidth and
mathematical letters; zero-width and other invisible characters removed; confusable
letters folded to the Latin ones they imitate) before any pattern runs. Plain ASCII,
nearly every episode, is returned as it is, without importing :mod:`unicodedata`.

:func:`base64_texts` finds long base64 runs and gives back the ones that decode to
text, so a credential wrapped in base64 is scanned as what it holds. Binary payloads
(images, hashes, random IDs) do not decode to text and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

#: Invisible characters that split a token without showing: removed.
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c"
    "\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061"
    "\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u3164\ufeff\uffa0"
)

#: Cyrillic and Greek letters that look like Latin ones (Unicode's confusables for the
#: letters credentials are made of), folded to the Latin letter.
_CONFUSABLE = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x",
    "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    "к": "k", "м": "m", "н": "h", "т": "t", "ь": "b", "г": "r", "п": "n",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԛ": "Q",
    "Ԝ": "W", "Ӏ": "I", "Ԁ": "D", "Ү": "Y", "Ғ": "F", "Ζ": "Z",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o", "ν": "v", "ρ": "p",
    "ι": "i", "κ": "k", "α": "a", "τ": "t", "υ": "u", "ϲ": "c", "ϳ": "j",
}  # fmt: skip


@cache
def _table() -> dict[int, str | None]:
    table: dict[int, str | None] = dict.fromkeys(map(ord, _INVISIBLE))
    table.update({ord(k): v for k, v in _CONFUSABLE.items()})
    return table


def normalise(text: str) -> str:
    """``text`` as the scanner reads it: NFKC, invisible characters removed, look-alike
    letters folded to Latin. Line breaks are kept, so line numbers stay right."""
    if text.isascii():
        return text
    import unicodedata

    return unicodedata.normalize("NFKC", text.translate(_table())).translate(_table())


#: A run long enough to hide a credential (a 20-character token is 28 in base64).
_B64_RUN = r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])"


@cache
def _b64_run() -> re.Pattern[str]:
    return re.compile(_B64_RUN)  # compiled on first use: the import stays cheap


def base64_texts(text: str) -> Iterator[tuple[int, str]]:
    """(offset, decoded text) of each base64 run in ``text`` that decodes to text."""
    for match in _b64_run().finditer(text):
        decoded = decode_base64(match.group())
        if decoded is not None:
            yield match.start(), decoded


def decode_base64(run: str) -> str | None:
    """The text a base64 (or base64url) run holds, or None for binary or not base64."""
    import binascii

    body = run.rstrip("=")
    url = "-" in body or "_" in body
    if url and ("+" in body or "/" in body):
        return None
    if url:
        body = body.replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        return None
    try:
        raw = binascii.a2b_base64(body + "=" * (-len(body) % 4))
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    printable = sum(1 for c in decoded if c.isprintable() or c in "\n\r\t")
    return decoded if decoded and printable >= 0.95 * len(decoded) else None
