"""When two rules say nearly the same thing (``review`` warns a reviewer of a change that
duplicates a rule the playbook has)."""

from __future__ import annotations

import functools
from collections.abc import Set

from scarwarden import text
from scarwarden.files import playbook as pb

#: Two rules overlap heavily when the stems of their titles and texts have a Jaccard
#: index at or above TEXT_OVERLAP, or their tags have one at or above TAG_OVERLAP and
#: their texts at least TEXT_WITH_TAGS, or their tag sets are identical. Across the
#: 91 pairs of the demo playbook's distinct rules the highest are 0.15 (text) and 0.29
#: (tags), so these flag near-duplicates without crying wolf.
TEXT_OVERLAP = 0.4
TAG_OVERLAP = 0.5
TEXT_WITH_TAGS = 0.2


def _jaccard(a: Set[str], b: Set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _stems(rule: pb.Rule) -> frozenset[str]:
    return _stems_of(rule.title, rule.text)


@functools.lru_cache(maxsize=4096)
def _stems_of(title: str, body: str) -> frozenset[str]:
    # Cached: every changed rule is compared with every active rule of the playbook.
    return frozenset(text.stems(f"{title} {body}"))


def overlap(a: pb.Rule, b: pb.Rule) -> tuple[float, float] | None:
    """``(text Jaccard, tag Jaccard)`` when two rules overlap heavily, else ``None``."""
    tj = _jaccard(set(a.tags), set(b.tags))
    xj = _jaccard(_stems(a), _stems(b))
    if (
        xj >= TEXT_OVERLAP
        or (tj >= TAG_OVERLAP and xj >= TEXT_WITH_TAGS)
        or (a.tags and set(a.tags) == set(b.tags))
    ):
        return xj, tj
    return None
