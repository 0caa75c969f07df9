"""Finding credentials in memory before they are written: the patterns and the verdicts.

One scanner for every door (``episode add``, MCP ``record_episode``, the web answer form,
``rule add``/``distill`` and the provenance gate), so none of them can disagree. It is
our own set of patterns rather than a library: detect-secrets 1.5 costs ~113 ms to
import (it pulls in requests), most of the hook's 150 ms budget; these patterns compile
in ~2 ms and scan an episode in well under a millisecond (docs/privacy.md).

A finding never carries the secret itself, only its kind, the field it is in and a
short fingerprint (a truncated SHA-256), which is what ``secrets.allow`` in
``scarwarden.yaml`` lists for a known false positive. The inline marker
``scarwarden:allow-secret`` in a field (or on a playbook line) allows that field or
line, visibly, in the file itself.

What is scanned: every string of a mapping at any depth, and every key
(:func:`string_fields`); a key naming a secret (``x-db-password``) with its value; two
neighbouring fields joined, for a token split across them; each text normalised first
(:mod:`scarwarden.files.secret_normal`: zero-width characters, fullwidth and look-alike
letters) and every long base64 run in it decoded and scanned as what it holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Mapping
from functools import cache

from scarwarden.files.secret_normal import base64_texts, normalise
from scarwarden.files.secret_patterns import PATTERNS
from scarwarden.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Put this in a field (or on a playbook line) to allow what looks like a secret there.
ALLOW_MARKER = "scarwarden:allow-secret"

# A name holding a key/secret/token/password word, alone or as a part of an
# environment-style name (POSTGRES_PASSWORD, DD_API_KEY, secret_key_base, x-db-token;
# a suffix only when it still names the value: _base, _value, _b64...), then '=', ':'
# or ' is ', then the value.
_KEY_WORDS = ("key", "secret", "token", "pass", "pwd", "credential")
_KEY_WORD_RE = "|".join(_KEY_WORDS)
_KEYWORD = (
    r"(?i)(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_.-]){0,6}?"
    r"(?:api[_-]?key|apikey|secret(?:[_-]?key)?|client[_-]?secret|access[_-]?key|"
    r"auth[_-]?token|access[_-]?token|token|passw(?:or)?d|passwd|pwd|credentials?)"
    r"(?:[_.-](?:base|value|raw|plain(?:text)?|b64|base64|hex|str|string|[0-9]+))?)(?![A-Za-z0-9])"
    r"[\"']?\s*(?:[:=]|\bis\b)\s*[\"'`]?([^\s\"'`,;]{8,})"
)

#: Values that stand for a secret rather than being one (docs, templates, examples).
_PLACEHOLDER = (
    r"(?i)^(?:\$\{?[A-Z_][A-Z0-9_]*\}?|<[^>]*>|\{\{?[^}]*\}?\}|%\(?\w*\)?s|\*+|x+|\.+|"
    r"(?:your|my|the|some|example|sample|dummy|fake|test|changeme|redacted|placeholder)"
    r"[-_]?\w*|password|passwd|secret|token|none|null|true|false|\[redacted[^\]]*\])$"
)
#: Values that are not secrets whatever name they follow: paths (PWD=/Users/maya/app),
#: AWS resource names (credentials: arn:aws:iam::...:role/deploy), URLs.
_NOT_A_VALUE = r"(?i)^(?:/|~/|\.\.?/|[a-z]:\\|arn:aws[a-z-]*:)"
#: Kinds not looked for across two fields: their value ends where the text does.
_UNSPLIT = frozenset({"keyword-secret", "cli-password", "bearer-token", "basic-auth"})
#: Nested decoding stops here (base64 inside base64 inside base64).
_MAX_DEPTH = 2


@record(frozen=True)
class Finding:
    """One credential (or personal datum) found: what, where, never the value."""

    kind: str
    label: str
    #: The episode field (``action``, ``tags[2]``, ``x-deploy.hosts[0]``) or ``None``
    #: for plain text.
    field: str | None
    #: ``sha256:`` and 12 hex digits of the value: names it in an allowlist, not readable.
    fingerprint: str
    #: 1-based line within the scanned text (for playbooks), when known.
    line: int | None = None
    #: ``secret`` or ``pii``.
    category: str = "secret"


def fingerprint(value: str) -> str:
    """The short, stable name of a value for ``secrets.allow`` (SHA-256, 12 hex digits)."""
    import hashlib  # only when something was found: the clean hook never pays for it

    return "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def _placeholder(value: str) -> bool:
    # '[redacted': a value ends at a space, and hint()'s '[redacted <kind>]' has one
    return bool(_compiled(_PLACEHOLDER).match(value)) or value.startswith(("$", "%", "{", "[redacted"))


def _looks_secret(word: str, value: str) -> bool:
    """A value next to a key/secret/token/password name that is probably real."""
    value = value.rstrip(".)]}>")
    if _placeholder(value) or "://" in value or _compiled(_NOT_A_VALUE).match(value):
        return False
    classes = _classes(value)
    name = word.lower()
    if "pass" in name or "pwd" in name:
        strong = classes >= 2 and len(value) >= 12 and any(c.isdigit() for c in value)
        return len(value) >= 8 and (classes >= 3 or strong and entropy(value) >= 3.0)
    has_digit = any(c.isdigit() for c in value)
    # Random hex has at most 4 bits a character; 32 of them drawn give ~3.4 to 3.8.
    floor = 3.0 if len(value) >= 32 and all(c in "0123456789abcdefABCDEF" for c in value) else 3.5
    return len(value) >= 16 and has_digit and classes >= 2 and entropy(value) >= floor


def _random_enough(value: str) -> bool:
    """A bearer token is random: letters and digits, >= 3.5 bits a character."""
    return (
        not _placeholder(value)
        and _classes(value) >= 2
        and any(c.isdigit() for c in value)
        and entropy(value) >= 3.5
    )


def _basic_credentials(value: str) -> bool:
    """``Basic <base64>`` holding ``user:password`` with a real-looking password."""
    from scarwarden.files.secret_normal import decode_base64

    decoded = decode_base64(value)
    if decoded is None or ":" not in decoded:
        return False
    password = decoded.split(":", 1)[1]
    return bool(password) and not _placeholder(password)


#: Kinds whose match is a credential only when the value passes a second look.
_VALIDATE = {
    "url-password": lambda v: not _placeholder(v),
    "cli-password": lambda v: not _placeholder(v) and not v.isdigit() and len(v) >= 4,
    "bearer-token": _random_enough,
    "basic-auth": _basic_credentials,
}


@cache
def _triggers() -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each trigger once, with the patterns it wakes: one ``in`` test per trigger."""
    index: dict[str, list[int]] = {}
    for n, (_kind, _label, _source, triggers) in enumerate(PATTERNS):
        for trigger in triggers:
            index.setdefault(trigger, []).append(n)
    return tuple((t, tuple(ns)) for t, ns in index.items())


@record(frozen=True)
class _Plan:
    """What is worth running on the texts of one episode: the patterns, the key-word
    pattern and the base64 decoding that match somewhere in all of them joined by line
    breaks. A match in one text is a match in the joined text (every pattern's edges
    accept a line break), so nothing is missed; an ordinary episode, where nothing
    matches, costs a few searches in C instead of every pattern on every field
    (``check --all`` screens every episode)."""

    patterns: tuple[int, ...]
    keyword: bool
    base64: bool


def _woken(text: str) -> list[int]:
    """The patterns whose triggers ``text`` holds, in order."""
    lower = text.lower()
    return sorted({n for trigger, ns in _triggers() if trigger in lower for n in ns})


def _plan(joined: str, woken: list[int]) -> _Plan:
    """The plan for texts joined as ``joined``, of the patterns ``woken`` (see :func:`_woken`)."""
    return _Plan(
        tuple(n for n in woken if _compiled(PATTERNS[n][2]).search(joined)),
        bool(_compiled(_KEY_WORD_RE).search(joined.lower())) and bool(_compiled(_KEYWORD).search(joined)),
        next(base64_texts(joined), None) is not None,
    )


def _spans(text: str, depth: int = 0, plan: _Plan | None = None) -> Iterator[tuple[str, str, int, str]]:
    """(kind, label, offset, value) for each credential in ``text`` (normalised), overlaps
    dropped; what a base64 run holds is scanned too, at the run's offset. ``plan``: only
    what it says can match (see :class:`_Plan`)."""
    taken: list[tuple[int, int]] = []
    lower = text.lower()
    woken = _woken(text) if plan is None else list(plan.patterns)
    for n in woken:
        kind, label, source, _woken_by = PATTERNS[n]
        pattern = _compiled(source)
        check = _VALIDATE.get(kind)
        for match in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            start, end = match.span(group)
            value = match.group(group)
            if check is not None and not check(value):
                continue
            if any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            yield kind, label, start, value
    if plan.keyword if plan is not None else _compiled(_KEY_WORD_RE).search(lower):
        for match in _compiled(_KEYWORD).finditer(text):
            start, end = match.span(2)
            if any(s < end and start < e for s, e in taken):
                continue
            if _looks_secret(match.group(1), match.group(2)):
                taken.append((start, end))
                yield "keyword-secret", f"high-entropy value after '{match.group(1)}'", start, match.group(2)
    if depth < _MAX_DEPTH and (plan is None or plan.base64):
        for offset, decoded in base64_texts(text):
            for kind, label, _start, value in _spans(normalise(decoded), depth + 1):
                yield kind, f"{label} (base64-encoded)", offset, value


def scan_text(
    text: str,
    field: str | None = None,
    allow: Collection[str] = (),
    *,
    by_line: bool = False,
    _plan: _Plan | None = None,
    values: list[str] | None = None,
) -> list[Finding]:
    """Every credential in ``text`` not allowed by fingerprint; with ``by_line``, lines
    carrying :data:`ALLOW_MARKER` are skipped and findings carry their line. ``values``
    gets each finding's value (for :mod:`scarwarden.llm.screen`, which replaces them)."""
    if not by_line and ALLOW_MARKER in text:
        return []
    text = normalise(text)
    found = []
    for kind, label, start, value in _spans(text, 0, _plan):
        line_no = text.count("\n", 0, start) + 1
        if by_line:
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            if ALLOW_MARKER in text[line_start : line_end if line_end >= 0 else len(text)]:
                continue
        mark = fingerprint(value)
        if mark in allow:
            continue
        found.append(Finding(kind, label, field, mark, line_no if by_line else None))
        if values is not None:
            values.append(value)
    return found


#: A key shown as it is in a field's name; any other (it may be the secret) by position.
_PLAIN_KEY = r"[A-Za-z][A-Za-z_-]{0,29}\Z"


def _walk(value: Any, name: str) -> Iterator[tuple[str, str, str | None]]:
    """(field, text, key) for every string under ``value``; ``key`` is the mapping key a
    string value sits under, ``""`` for a list item; a key itself comes with ``None``."""
    if isinstance(value, str):
        yield name, value, ""
    elif isinstance(value, Mapping):
        for n, (key, item) in enumerate(value.items()):
            key_text = str(key)
            part = key_text if _compiled(_PLAIN_KEY).match(key_text) else f"<key {n + 1}>"
            child = f"{name}.{part}" if name else part
            if part != key_text or not (key_text.isascii() and key_text.isalpha()):
                yield child, key_text, None  # a plain word (``task``, ``notes``) is no token
            if isinstance(item, str):
                yield child, item, key_text
            else:
                yield from _walk(item, child)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _walk(item, f"{name}[{i}]")


def string_fields(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, text) for every string in an episode mapping at any depth, and every key:
    list items as ``key[i]``, nested values as ``x-deploy.hosts[0]``."""
    seen: set[tuple[str, str]] = set()
    for name, text, _key in _walk(data, ""):
        if (name, text) not in seen:
            seen.add((name, text))
            yield name, text


def scan_mapping(data: Mapping[str, Any], allow: Collection[str] = ()) -> list[Finding]:
    """Every credential in an episode's strings and keys (a field holding the marker is
    allowed): each alone, a value with a key that names a secret (``x-db-password:
    ...``), and each two neighbouring strings joined (a token split across them)."""
    found: list[Finding] = []
    seen: set[tuple[str | None, str]] = set()

    def keep(items: list[Finding]) -> None:
        for f in items:
            if (f.field, f.fingerprint) not in seen:
                seen.add((f.field, f.fingerprint))
                found.append(f)

    walked = list(_walk(data, ""))
    joined = normalise("\n".join(t for _, t, _ in walked))
    texts = [(name, text) for name, text, key in walked if key is not None]
    # The ends of neighbouring values, joined: a trigger cut in two is whole there.
    seams = "\n".join(
        normalise(a)[-24:] + normalise(b)[:24] for (_n, a), (_m, b) in zip(texts, texts[1:], strict=False)
    )
    woken = _woken(joined + "\n" + seams)
    plan = _plan(joined, woken)
    for name, text, key in walked:
        keep(scan_text(text, name, allow, _plan=plan))
        if key and any(word in key.lower() for word in _KEY_WORDS):
            keep(scan_text(f"{key}: {text}", name, allow))
    keep(_split_findings(texts, allow, {f.fingerprint for f in found}, woken))
    return found


def _split_findings(
    texts: list[tuple[str, str]], allow: Collection[str], known: set[str], woken: list[int]
) -> list[Finding]:
    """Credentials that only appear when two neighbouring strings are joined (``woken``:
    the patterns whose triggers the strings and their seams hold)."""
    out: list[Finding] = []
    windows = [
        (name_a, name_b, normalise(a)[-200:], normalise(b)[:200])
        for (name_a, a), (name_b, b) in zip(texts, texts[1:], strict=False)
        if a and b and ALLOW_MARKER not in a and ALLOW_MARKER not in b
    ]
    splittable = [n for n in woken if PATTERNS[n][0] not in _UNSPLIT]
    plan = _plan("\n".join(tail + head for _a, _b, tail, head in windows), splittable)
    plan = _Plan(plan.patterns, False, False)
    for name_a, name_b, tail, head in windows if plan.patterns else []:
        # Tokens of known shapes only: a key word's value glued to the next field's
        # first word ("password: <redacted>" + "Reset ...") is no credential.
        crossing = [
            s
            for s in _spans(tail + head, 0, plan)
            if s[2] < len(tail) < s[2] + len(s[3]) and s[0] not in _UNSPLIT
        ]
        if not crossing:
            continue
        # A credential found whole in either part (and run on into the other) is no split.
        alone = [(s[2], s[2] + len(s[3])) for s in _spans(tail)]
        alone += [(len(tail) + s[2], len(tail) + s[2] + len(s[3])) for s in _spans(head)]
        for kind, label, start, value in crossing:
            if not any(s < start + len(value) and start < e for s, e in alone):
                mark = fingerprint(value)
                if mark not in allow and mark not in known:
                    known.add(mark)
                    out.append(
                        Finding(kind, label + " (split across two fields)", f"{name_a}+{name_b}", mark)
                    )
    return out


def added_lines(new: str, old: str | None) -> str:
    """The lines of ``new`` that ``old`` does not have (blank elsewhere, so line numbers
    stay right): a playbook change is judged on what it adds, not on what was there."""
    if old is None:
        return new
    before = set(old.split("\n"))
    return "\n".join("" if line in before else line for line in new.split("\n"))


def describe(finding: Finding) -> str:
    """The message for a finding: the kind and fingerprint, never the value."""
    return (
        f"holds a secret: {finding.label} ({finding.kind}, {finding.fingerprint}); secrets never enter memory"
    )


def hint(finding: Finding, where: str = "field") -> str:
    """How to proceed: redact it, or allow a known false positive visibly."""
    return (
        f"record it with the secret replaced (e.g. '[redacted {finding.kind}]') and rotate the "
        f"credential if it is real; a known false positive: put '{ALLOW_MARKER}' in the {where}, "
        f"or add '{finding.fingerprint}' to secrets.allow in scarwarden.yaml"
    )
