"""Rule IDs: the two spellings every part accepts, minting new ones, ordering them.

Two forms are valid everywhere (the parser, the gate, citations in answers, episodes'
``rules_applied``, the web UI):

- ``PB-07``, ``PB-123``: the original sequential form, "one above the highest ever
  used". It stays valid for ever; nothing is renumbered.
- ``PB-7k2m9q4x``: ``PB-`` and 8 characters of Crockford's base32 in lower case (40
  bits, at least one letter), a hash of the rule as it was first written (title, text,
  tags, cited episodes). This is what ``rule add`` and the distillers mint: two branches
  (two pull requests, two agents) that each add different rules never take the same ID,
  with no coordination, so their playbooks merge rule by rule; two clones that distil
  the same episodes into the same rule mint the same ID (the offline distiller stays
  deterministic), and the merge keeps one copy.

Once committed, a rule's ID never changes: episodes, answers and exports cite it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: The characters of a minted suffix: Crockford's base32, lower-cased (no i, l, o, u).
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"

#: Length of a minted suffix: 40 bits, ~1 in 10^6 odds of a clash at 1,500 rules minted
#: on two branches at once; the minting side also re-rolls on an ID already in its file.
MINTED_LENGTH = 8

#: The ID a rule is built under before its real one is minted from its content (never
#: written: ``next_id`` starts at PB-01).
DRAFT_ID = "PB-00"

#: A rule ID inside other text (no anchors); ``\b`` after it at the use site.
RULE_ID_PATTERN = rf"PB-(?:[0-9]{{2,}}|[{CROCKFORD}]{{{MINTED_LENGTH}}})"

# \Z, not $: '$' also matches before a trailing newline, and "PB-01\n" must not pass.
RULE_ID_RE = re.compile(rf"^{RULE_ID_PATTERN}\Z")

#: Anything that looks like a rule ID, in any case, in free text (answers, model output).
LOOSE_RULE_ID_RE = re.compile(rf"\bPB-([0-9]+|[{CROCKFORD}]{{{MINTED_LENGTH}}})\b", re.IGNORECASE)


def is_minted(rule_id: str) -> bool:
    """True for the random form (``PB-7k2m9q4x``), False for ``PB-07``."""
    return not rule_id[3:].isdigit()


def normalise(suffix: str) -> str:
    """The canonical ID for a suffix as a reader might write it: ``3`` -> ``PB-03``,
    ``7K2M9Q4X`` -> ``PB-7k2m9q4x``."""
    if suffix.isdigit():
        return f"PB-{int(suffix):02d}" if len(suffix) < 2 else f"PB-{suffix}"
    return f"PB-{suffix.lower()}"


def mint_rule_id(taken: set[str] | frozenset[str] = frozenset(), content: str | None = None) -> str:
    """A new rule ID not in ``taken``: a hash of ``content`` (the rule as first written),
    or random without it.

    The hash is salted and taken again while the ID is in ``taken`` (a rule with the
    same content was added before and retired) or its suffix is digits only (it would
    read as the sequential form, and skew "one above the highest").
    """
    # Imported here, as for episode IDs: the hook validates IDs but never mints one.
    import hashlib
    import secrets

    seed = content if content is not None else secrets.token_hex(16)
    salt = 0
    while True:
        digest = hashlib.sha256(f"{seed}\x00{salt}".encode()).digest()
        number = int.from_bytes(digest[:5], "big")  # 40 bits: 8 base32 characters
        suffix = "".join(CROCKFORD[(number >> shift) & 31] for shift in range(35, -1, -5))
        rule_id = f"PB-{suffix}"
        if not suffix.isdigit() and rule_id not in taken:
            return rule_id
        salt += 1


def rule_content(title: str, text: str, tags: Iterable[str], episode_ids: Iterable[str]) -> str:
    """What a minted ID hashes: the rule as first written, one field a line."""
    return "\n".join([title, text, ",".join(tags), ",".join(episode_ids)])


def sort_key(rule_id: str) -> tuple[int, int, str]:
    """Sequential IDs first, by number, then minted ones by their text: a stable order
    for listings that do not follow the file (diffs, reports)."""
    suffix = rule_id[3:]
    if suffix.isdigit():
        return (0, int(suffix), rule_id)
    return (1, 0, rule_id)


def canonical(text: str) -> str:
    """A rule ID as typed (``pb-7K2M9Q4X``, ``pb-3``) in its canonical spelling; text
    that is no rule ID comes back upper-cased, to be reported as unknown."""
    text = text.strip()
    match = LOOSE_RULE_ID_RE.fullmatch(text)
    return normalise(match.group(1)) if match else text.upper()
