"""Finding a rule from what a person (or an agent) typed: ``rule show``, the MCP
``get_rule`` tool (issue 28).

An ID in any case (``pb-7K2M9Q4X``, ``PB-3``), the rule's title, or, when nothing
matches, an error that names the nearest IDs or titles, the playbook's IDs in order when
there are few, and ``episode show`` for an episode ID.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from scarwarden.characters import REFUSED
from scarwarden.errors import UsageError
from scarwarden.files.episode_fields import EPISODE_ID_RE
from scarwarden.files.rule_ids import canonical, sort_key

#: How many IDs an error lists in full; beyond, it points to ``rule list``.
FEW = 6

_PB_PREFIX = re.compile(r"^pb-", re.IGNORECASE)


def spelled(typed: str) -> str:
    """``typed`` as a rule ID would be written: canonical when it is one, else ``PB-``
    and the rest in lower case for anything that starts ``PB-`` (minted IDs are lower
    case: ``PB-wgfef8b`` stays readable, never ``PB-WGFEF8B``), else as typed."""
    text = " ".join(typed.split())
    rule_id = canonical(text)
    if rule_id.startswith("PB-") and rule_id != text.upper():
        return rule_id
    if _PB_PREFIX.match(text):
        return "PB-" + text[3:].lower()
    return text


def find_rule(typed: str, rules: Sequence[tuple[str, str]], *, episode_hint: str, list_hint: str) -> str:
    """The ID of the rule ``typed`` names among ``rules`` (ID, title) pairs.

    ``episode_hint`` is how to look an episode up (``{id}`` is filled in), ``list_hint``
    how to see every rule. A :class:`UsageError` (exit 2) when no rule matches."""
    text = " ".join(typed.split())
    if not text:
        raise UsageError("the rule ID is empty: give a rule's ID (PB-01) or its title", hint=list_hint)
    if EPISODE_ID_RE.match(text.lower()):
        raise UsageError(
            f"{text.lower()} is an episode ID, not a rule ID",
            hint=episode_hint.format(id=text.lower()),
        )
    rule_id = spelled(text)
    ids = [rid for rid, _ in rules]
    if rule_id in ids:
        return rule_id
    titled = _by_title(text, rules)
    if len(titled) == 1:
        return titled[0]
    if not rules:
        raise UsageError(
            f"no rule {_escaped(rule_id)} in the playbook",
            hint="the playbook has no rules yet: 'scarwarden distill' learns them from episodes",
        )
    if titled:
        shown = " or ".join(f"{rid} ({_title(rules, rid)})" for rid in titled[:3])
        raise UsageError(f"{len(titled)} rules have {text!r} in their title", hint=f"did you mean {shown}?")
    looks_like_id = rule_id.startswith("PB-") or " " not in text
    what = _escaped(rule_id) if looks_like_id else repr(text)
    raise UsageError(f"no rule {what} in the playbook", hint=_nearest(rule_id, text, rules, list_hint))


def _escaped(rule_id: str) -> str:
    """``rule_id`` as a message prints it: quoted with its control characters escaped
    when it holds any (an escape sequence typed must not reach the terminal)."""
    return repr(rule_id) if REFUSED.search(rule_id) else rule_id


def _by_title(text: str, rules: Sequence[tuple[str, str]]) -> list[str]:
    """Rules whose title is ``text`` (any case, end punctuation aside); else those whose
    title holds it (4 characters or more)."""
    wanted = _plain(text)
    if not wanted:
        return []
    exact = [rid for rid, title in rules if _plain(title) == wanted]
    if exact or len(wanted) < 4:
        return exact
    return [rid for rid, title in rules if wanted in _plain(title)]


def _plain(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .!?:;'\"")


def _title(rules: Sequence[tuple[str, str]], rule_id: str) -> str:
    return next(title for rid, title in rules if rid == rule_id)


def _nearest(rule_id: str, text: str, rules: Sequence[tuple[str, str]], list_hint: str) -> str:
    """The closest IDs (a typo in a minted ID; PB-15 for PB-14 is no guess) or titles,
    best first, then the playbook's IDs in order when there are few."""
    ids = sorted((rid for rid, _ in rules), key=sort_key)
    close: list[str]
    if rule_id.startswith("PB-"):
        # Guess among minted IDs only: a minted ID typed one short may be all digits
        # (PB-5295392 for PB-5295392p), but a numbered ID is never guessed.
        minted = [rid for rid in ids if not rid[3:].isdigit()]
        close = difflib.get_close_matches(rule_id, minted, n=3, cutoff=0.6)
    else:
        titles = {_plain(title): rid for rid, title in rules}
        close = [titles[t] for t in difflib.get_close_matches(_plain(text), list(titles), n=3, cutoff=0.5)]
        close = [f"{rid} ({_title(rules, rid)})" for rid in close]
    guess = f"did you mean {' or '.join(close)}? " if close else ""
    if len(ids) <= FEW:
        return guess + f"the playbook's rules: {', '.join(ids)}"
    return guess + list_hint
