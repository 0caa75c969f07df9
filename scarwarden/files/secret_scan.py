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
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

#: Put this in a field (or on a playbook line) to allow what looks like a secret there.
ALLOW_MARKER = "scarwarden:allow-secret"

# (kind, label, pattern, triggers). The value is group 1 when the pattern has one, else
# the match. A pattern is compiled and run only when one of its triggers is in the
# lower-cased text: most episodes hold none, and compiling every pattern would cost
# the hook a few ms. Order matters where prefixes overlap: the first kind wins a span.
_PATTERNS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "private-key",
        "private key block",
        "-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\\\\n|\\s)+([A-Za-z0-9+/=]{20,})",
        ("private key",),
    ),
    (
        "aws-access-key-id",
        "AWS access key ID",
        "\\b((?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})\\b",
        ("akia", "asia", "abia", "acca"),
    ),
    (
        "aws-secret-access-key",
        "AWS secret access key",
        "(?i)aws_?secret_?(?:access_?)?key[\\\"']?\\s*[:=]\\s*[\\\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        ("aws",),
    ),
    (
        "gcp-service-account",
        "Google Cloud service-account key",
        '\\"private_key_id\\"\\s*:\\s*\\"([0-9a-f]{40})\\"',
        ("private_key_id",),
    ),
    ("azure-storage-key", "Azure storage account key", "AccountKey=([A-Za-z0-9+/]{86}==)", ("accountkey=",)),
    (
        "azure-client-secret",
        "Azure AD client secret",
        "(?<![A-Za-z0-9_~.-])([A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])",
        ("q~",),
    ),
    (
        "azure-sas-token",
        "Azure shared access signature",
        "[?&]sig=([A-Za-z0-9%+/]{43,}(?:%3D|=)*)",
        ("sig=",),
    ),
    (
        "github-token",
        "GitHub token",
        "\\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36})\\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    (
        "github-fine-grained-token",
        "GitHub fine-grained token",
        "\\b(github_pat_[A-Za-z0-9_]{60,90})\\b",
        ("github_pat_",),
    ),
    (
        "gitlab-token",
        "GitLab token",
        "\\b(gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20,})",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-"),
    ),
    ("slack-token", "Slack token", "\\b(xox[abposr]-[A-Za-z0-9-]{10,})", ("xox",)),
    (
        "slack-webhook",
        "Slack webhook URL",
        "(https://hooks\\.slack\\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{20,})",
        ("hooks.slack.com",),
    ),
    (
        "discord-webhook",
        "Discord webhook URL",
        "(https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{60,})",
        ("/api/webhooks/",),
    ),
    (
        "discord-bot-token",
        "Discord bot token",
        "\\b([MNO][A-Za-z0-9_-]{23,25}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,38})\\b",
        (".",),
    ),
    (
        "telegram-bot-token",
        "Telegram bot token",
        "\\b([0-9]{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])",
        (":aa",),
    ),
    ("stripe-key", "Stripe live key", "\\b((?:sk|rk)_live_[A-Za-z0-9]{20,})\\b", ("_live_",)),
    ("anthropic-key", "Anthropic API key", "\\b(sk-ant-[A-Za-z0-9_-]{20,})", ("sk-ant-",)),
    (
        "openai-key",
        "OpenAI API key",
        "\\b(sk-(?:proj-|svcacct-|admin-)[A-Za-z0-9_-]{40,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{48})(?![A-Za-z0-9_-])",
        ("sk-",),
    ),
    ("google-api-key", "Google API key", "\\b(AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])", ("aiza",)),
    ("twilio-api-key", "Twilio API key", "\\b(SK[0-9a-fA-F]{32})\\b", ("sk",)),
    (
        "sendgrid-key",
        "SendGrid API key",
        "\\b(SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])",
        ("sg.",),
    ),
    ("npm-token", "npm access token", "\\b(npm_[A-Za-z0-9]{36})\\b", ("npm_",)),
    ("pypi-token", "PyPI API token", "\\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})", ("pypi-",)),
    ("huggingface-token", "Hugging Face token", "\\b(hf_[A-Za-z]{34})\\b", ("hf_",)),
    (
        "shopify-token",
        "Shopify access token",
        "\\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\\b",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    ("digitalocean-token", "DigitalOcean token", "\\b(do[opr]_v1_[a-f0-9]{64})\\b", ("_v1_",)),
    ("vault-token", "HashiCorp Vault token", "\\b(hv[sbr]\\.[A-Za-z0-9_-]{24,})", ("hvs.", "hvb.", "hvr.")),
    ("mailchimp-key", "Mailchimp API key", "\\b([0-9a-f]{32}-us[0-9]{1,2})\\b", ("-us",)),
    (
        "jwt",
        "JSON Web Token",
        "\\b(eyJ[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,})",
        ("eyj",),
    ),
    (
        "url-password",
        "password in a URL",
        "\\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\\s/:@\\\"'<>]+:([^\\s/@\\\"'<>]+)@[A-Za-z0-9.-]+",
        ("://",),
    ),
)

# A key/secret/token/password word, then '=', ':' or ' is ', then the value.
_KEY_WORDS = ("key", "secret", "token", "pass", "pwd", "credential")
_KEYWORD = (
    r"(?i)\b(api[_-]?key|apikey|secret(?:[_-]?key)?|client[_-]?secret|access[_-]?key|"
    r"auth[_-]?token|access[_-]?token|token|passw(?:or)?d|passwd|pwd|credentials?)\b"
    r"[\"']?\s*(?:[:=]|\bis\b)\s*[\"'`]?([^\s\"'`,;]{8,})"
)

#: Values that stand for a secret rather than being one (docs, templates, examples).
_PLACEHOLDER = (
    r"(?i)^(?:\$\{?[A-Z_][A-Z0-9_]*\}?|<[^>]*>|\{\{?[^}]*\}?\}|%\(?\w*\)?s|\*+|x+|\.+|"
    r"(?:your|my|the|some|example|sample|dummy|fake|test|changeme|redacted|placeholder)"
    r"[-_]?\w*|password|passwd|secret|token|none|null|true|false|\[redacted[^\]]*\])$"
)


@dataclass(frozen=True)
class Finding:
    """One credential (or personal datum) found: what, where, never the value."""

    kind: str
    label: str
    #: The episode field (``action``, ``tags[2]``) or ``None`` for plain text.
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


def _looks_secret(word: str, value: str) -> bool:
    """A value next to a key/secret/token/password word that is probably real."""
    value = value.rstrip(".)]}>")
    if _compiled(_PLACEHOLDER).match(value) or "://" in value or value.startswith(("$", "%", "{")):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
    if word.lower().startswith(("pass", "pwd")):
        return len(value) >= 8 and classes >= 3
    has_digit = any(c.isdigit() for c in value)
    return len(value) >= 16 and has_digit and classes >= 2 and entropy(value) >= 3.5


def _spans(text: str) -> Iterator[tuple[str, str, int, str]]:
    """(kind, label, offset, value) for each credential in ``text``, overlaps dropped."""
    taken: list[tuple[int, int]] = []
    lower = text.lower()
    for kind, label, source, triggers in _PATTERNS:
        if not any(t in lower for t in triggers):
            continue
        pattern = _compiled(source)
        for match in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            start, end = match.span(group)
            value = match.group(group)
            if kind == "url-password" and (_compiled(_PLACEHOLDER).match(value) or value.startswith("$")):
                continue
            if any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            yield kind, label, start, value
    if not any(word in lower for word in _KEY_WORDS):
        return
    for match in _compiled(_KEYWORD).finditer(text):
        start, end = match.span(2)
        if any(s < end and start < e for s, e in taken):
            continue
        if _looks_secret(match.group(1), match.group(2)):
            taken.append((start, end))
            yield "keyword-secret", f"high-entropy value after '{match.group(1)}'", start, match.group(2)


def scan_text(
    text: str, field: str | None = None, allow: Collection[str] = (), *, by_line: bool = False
) -> list[Finding]:
    """Every credential in ``text`` not allowed by fingerprint; with ``by_line``, lines
    carrying :data:`ALLOW_MARKER` are skipped and findings carry their line."""
    if not by_line and ALLOW_MARKER in text:
        return []
    found = []
    for kind, label, start, value in _spans(text):
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
    return found


def string_fields(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, text) for every string in an episode mapping, list items as ``key[i]``."""
    for key, value in data.items():
        if isinstance(value, str):
            yield str(key), value
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    yield f"{key}[{i}]", item


def scan_mapping(data: Mapping[str, Any], allow: Collection[str] = ()) -> list[Finding]:
    """Every credential in an episode's fields (a field holding the marker is allowed)."""
    found: list[Finding] = []
    for name, text in string_fields(data):
        found.extend(scan_text(text, name, allow))
    return found


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
