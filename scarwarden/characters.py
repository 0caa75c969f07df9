"""Which characters text may not hold: the one definition, below every part.

Stored text (:mod:`scarwarden.files.input_policy`) and settings
(:mod:`scarwarden.settings_check`, read before any file) refuse the same characters:
C0 controls but tab and newline, DEL, C1 controls, and lone surrogates. A surrogate from
U+DC80 to U+DCFF is how Python hands over a byte that is not UTF-8 (``surrogateescape``:
a file name, an argument, the environment), and it is named as that byte.
"""

from __future__ import annotations

import re

#: C0 controls except tab (09) and newline (0a), DEL, C1 controls, and surrogates.
REFUSED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
#: Lone surrogates alone: text that cannot be written as UTF-8 at all.
SURROGATE = re.compile("[\ud800-\udfff]")


def first_refused(value: str, pattern: re.Pattern[str] = REFUSED) -> tuple[str, str] | None:
    """The first character of ``value`` that ``pattern`` refuses and where it is
    (``at character N``), or ``None``."""
    found = pattern.search(value)
    return None if found is None else (found.group(), f"at character {found.start() + 1}")


def not_unicode(char: str, where: str) -> str | None:
    """Why the surrogate ``char`` is not text ("is not valid UTF-8 (the byte 0xFF ...)",
    or "holds a lone surrogate ..."), or ``None`` when ``char`` is no surrogate."""
    if not "\ud800" <= char <= "\udfff":
        return None
    code = f"U+{ord(char):04X}"
    if "\udc80" <= char <= "\udcff":
        return f"is not valid UTF-8 (the byte 0x{ord(char) - 0xDC00:02X} {where}, read as {code})"
    return (
        f"holds a lone surrogate ({code}) {where}: not valid Unicode text"
        " (a JSON '\\ud800'-style escape must be half of a surrogate pair)"
    )
