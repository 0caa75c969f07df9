"""Personal data in episodes, by policy: email addresses, phone numbers, card numbers.

``scarwarden.yaml`` says, per kind, ``off``, ``warn`` or ``refuse``
(:class:`scarwarden.config.PrivacySettings`); ``episode add --redact-pii`` replaces what
is found with a typed placeholder (``[email]``, ``[phone]``, ``[card]``) before
anything is written. Card numbers count only when they pass the Luhn check and start
like a real card (Visa, Mastercard, Amex, Discover), so IDs and timestamps do not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache

from scarwarden.files.secret_scan import Finding, string_fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KINDS = ("email", "phone", "card")
LABELS = {"email": "an email address", "phone": "a phone number", "card": "a payment card number"}
#: Domains reserved for examples and tests (RFC 2606/6761): never someone's address.
_EXAMPLE_DOMAINS = re.compile(r"(?i)(?:^|\.)(?:example\.(?:com|org|net)|example|invalid|test|localhost)$")


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "email": re.compile(
            r"(?<![\w.+/-])[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b"
        ),
        # International (+CC ...) or North American (NNN) NNN-NNNN; 8 to 15 digits.
        "phone": re.compile(
            r"(?<![\w+])(?:\+[1-9][0-9]{0,2}[ .-]?(?:\(?[0-9]{1,4}\)?[ .-]?){2,4}[0-9]{2,4}"
            r"|\(?[2-9][0-9]{2}\)?[ .-][0-9]{3}[ .-][0-9]{4})(?![\w-])"
        ),
        "card": re.compile(r"(?<![\w-])(?:[0-9][ -]?){12,18}[0-9](?![\w-])"),
    }


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        n = int(char)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _is_card(digits: str) -> bool:
    if not 13 <= len(digits) <= 19 or not luhn_ok(digits):
        return False
    two = int(digits[:2])
    return (
        digits[0] == "4"
        or 51 <= two <= 55
        or 22 <= two <= 27
        and len(digits) == 16
        or two in (34, 37)
        and len(digits) == 15
        or digits.startswith(("6011", "65"))
    )


def find(text: str, kinds: tuple[str, ...] = KINDS) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of each personal datum in ``text``; cards before phones, so a
    card number is never also counted as a phone number."""
    taken: list[tuple[int, int]] = []
    for kind in ("card", "email", "phone"):
        if kind not in kinds:
            continue
        for match in _patterns()[kind].finditer(text):
            start, end = match.span()
            if kind == "card" and not _is_card(re.sub(r"[ -]", "", match.group())):
                continue
            if kind == "email" and _EXAMPLE_DOMAINS.search(match.group(1)):
                continue
            if kind == "email" and text[end : end + 1] == ":" and text[end + 1 : end + 2].strip():
                continue  # an SSH remote (git@github.com:acme/api.git), not an address
            if kind == "phone" and not 8 <= sum(c.isdigit() for c in match.group()) <= 15:
                continue
            if any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            yield kind, start, end


def scan_mapping(data: Mapping[str, Any], kinds: tuple[str, ...] = KINDS) -> list[Finding]:
    """Personal data in an episode's fields (no fingerprint: the kind is what matters).
    All of them joined by line breaks are searched first: most episodes hold none, and
    a datum in one field is one in the joined text (every pattern's edges accept a line
    break)."""
    if not kinds:
        return []
    fields = list(string_fields(data))
    if next(find("\n".join(text for _name, text in fields), kinds), None) is None:
        return []
    return [
        Finding(kind, LABELS[kind], name, "", category="pii")
        for name, text in fields
        for kind, _start, _end in find(text, kinds)
    ]


def redact_text(text: str, kinds: tuple[str, ...] = KINDS) -> tuple[str, int]:
    """``text`` with each personal datum replaced by ``[kind]``; and how many."""
    spans = sorted(find(text, kinds), key=lambda span: span[1])
    out, last = [], 0
    for kind, start, end in spans:
        out.append(text[last:start] + f"[{kind}]")
        last = end
    out.append(text[last:])
    return "".join(out), len(spans)


#: How deep :func:`redact_mapping` reaches: past an ``x-`` value's 9 levels, the
#: episode is refused by its validation anyway.
_REDACT_DEPTH = 10


def redact_mapping(data: Mapping[str, Any], kinds: tuple[str, ...] = KINDS) -> tuple[dict[str, Any], int]:
    """An episode input with personal data replaced in every string value, list items and
    ``x-`` values included (the scan reads them all); and how many."""
    total = 0

    def redacted(value: Any, depth: int) -> Any:
        nonlocal total
        if isinstance(value, str):
            text, n = redact_text(value, kinds)
            total += n
            return text
        if depth < _REDACT_DEPTH and isinstance(value, list):
            return [redacted(item, depth + 1) for item in value]
        if depth < _REDACT_DEPTH and isinstance(value, dict):
            return {key: redacted(item, depth + 1) for key, item in value.items()}
        return value

    return {key: redacted(value, 0) for key, value in data.items()}, total
