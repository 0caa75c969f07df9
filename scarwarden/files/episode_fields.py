"""The episode format's vocabulary: its fields, ID patterns, size cap, and minting IDs.

Shared by the model (:mod:`scarwarden.files.episodes`), its validation
(:mod:`scarwarden.files.episode_validate`) and the playbook (rule IDs, tags).
"""

from __future__ import annotations

import re

from scarwarden.files import rule_ids as _rule_ids
from scarwarden.files.input_policy import quoted

#: Keys in the order they are written, so diffs stay small and stable.
FIELD_ORDER = (
    "id",
    "at",
    "agent",
    "task",
    "action",
    "outcome",
    "correction",
    "corrected_by",
    "tags",
    "source",
    "refs",
    # Images (issue 19): sha256:<hex> of files under memory/media/.
    "attachments",
    "rules_applied",
    # Recall receipts (issue 20): what recall gave the agent, and why it applied more.
    "rules_applied_reason",
    "recalled",
    # A redaction stub (issue 17): when, who, why, and the hash of what was removed.
    "redacted",
)


TEXT_FIELDS = ("agent", "task", "action", "outcome", "correction", "corrected_by", "rules_applied_reason")


LIST_FIELDS = ("tags", "refs", "rules_applied")


CONTENT_FIELDS = ("action", "outcome", "correction")


SOURCES = ("outcome", "correction", "human-answer", "import")


# \Z, not $: '$' also matches before a trailing newline, and "ep-abc\n" must not pass.
EPISODE_ID_RE = re.compile(r"^ep-[0-9a-z][0-9a-z-]{2,40}\Z")


#: Rule IDs, both forms (``PB-07`` and minted ``PB-7k2m9q4x``): see :mod:`scarwarden.files.rule_ids`.
RULE_ID_RE = _rule_ids.RULE_ID_RE


TAG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")


#: Most characters of a tag. A tag is a short label (``subject-line``), matched whole by
#: recall and listed on every rule and episode that has it: 64 holds a phrase of several
#: words, as a DNS label (63) does.
MAX_TAG_CHARS = 64


def tag_problem(tag: str, given: str | None = None, *, bounded: bool = True) -> tuple[str, str] | None:
    """Why ``tag`` is not a tag, and the hint, or None; the message quotes ``given`` (the
    tag as written, before lower-casing) when there is one. A tag over
    :data:`MAX_TAG_CHARS` is quoted by its start: the message must not be as long as the tag.
    ``bounded=False``: the slug alone is checked, as for what is stored already (an episode
    committed before the bound can never be edited; a playbook keeps parsing)."""
    given = tag if given is None else given
    if len(tag) > MAX_TAG_CHARS and bounded:
        start = repr(given[:20])[:-1] + "...'"
        why = f"tag {start} is {len(tag):,} characters; the limit is {MAX_TAG_CHARS}"
        return why, "a tag is a short label: shorten it (the text says the rest)"
    if not TAG_RE.match(tag):
        return f"tag {quoted(given)} is not a slug", "tags use a-z, 0-9 and '-' only, e.g. subject-line"
    return None


MAX_EPISODE_BYTES = 64 * 1024


#: Crockford's base32, lower-cased: no i, l, o, u, so IDs survive being read aloud.
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def mint_id() -> str:
    """A fresh random episode ID: 10 Crockford base32 characters, 50 bits.

    Random rather than counted so two clones on two branches never mint the same ID
    and ledgers merge without conflicts (birthday bound: ~1 in 10^6 at 35k episodes
    per pair of branches; :func:`scarwarden.files.record.add_episodes` re-mints on a clash).
    """
    # Imported here: secrets pulls in hashlib and OpenSSL (~3 ms), which the pre-commit
    # hook, validating episodes but never minting one, should not pay for.
    import secrets

    return "ep-" + "".join(secrets.choice(_CROCKFORD) for _ in range(10))


def expected_relpath(ep_id: str, at: str, episodes_dir: str) -> str:
    """``<episodes_dir>/YYYY/MM/<id>.yaml``, by the UTC month of ``at``."""
    return f"{episodes_dir}/{at[0:4]}/{at[5:7]}/{ep_id}.yaml"
