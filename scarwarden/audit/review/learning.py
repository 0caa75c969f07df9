"""What a reviewer should know about how the changed rules learn: contradictions and
lineage counts.

* a rule citing an episode whose correction contradicts the rule's text
  (:mod:`scarwarden.files.claims`): "PB-01 is contradicted by ep-...";
* the possible contradictions a distillation in the range flagged for a human
  (``Scarwarden-Contradiction: PB-01 ep-...``), while the rule still says what the
  episode contradicts;
* how each changed rule has fared since it last changed (:mod:`scarwarden.index.lineage`):
  "PB-04 was applied 9 times and corrected 4 times since it last changed".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from scarwarden import git
from scarwarden.errors import ScarwardenError, one_line
from scarwarden.files import claims
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.logs import log
from scarwarden.regular_files import is_refusal
from scarwarden.repo import MemoryRepo

Warn = Callable[[str, str | None, str], None]  # (message, rule ID, level)

_FLAG = re.compile(r"^Scarwarden-Contradiction:\s*(\S+)\s+(\S+)\s*$", re.MULTILINE)


def contradiction(rule: pb.Rule, ep: Episode) -> claims.Contradiction | None:
    """How the episode's correction contradicts the rule's text, if it does."""
    correction = str(ep.get("correction") or "")
    return claims.contradiction(rule.text, correction) if correction.strip() else None


def cited_contradictions(rule: pb.Rule, evidence: dict[str, Episode | None]) -> list[str]:
    """Messages for the rule's citations that contradict what it says."""
    out = []
    for ep_id in rule.episode_ids:
        ep = evidence.get(ep_id)
        found = contradiction(rule, ep) if ep is not None else None
        if found is not None and found.clear:  # unsure ones reach review as distill flags
            out.append(
                f"{rule.id} is contradicted by {ep_id}, which it cites ({found.reason}): "
                "a rule must not cite evidence against itself; supersede or revise it"
            )
    return out


def flagged(repo: MemoryRepo, base: str | None, head: str) -> list[tuple[str, str]]:
    """(rule ID, episode ID) flagged by the distill commits in ``base..head``."""
    rev = head if base is None else f"{base}..{head}"
    found: list[tuple[str, str]] = []
    for entry in git.log(repo.root, "--grep=^Scarwarden-Contradiction: ", rev):
        found += _FLAG.findall(entry.body)
    return list(dict.fromkeys(found))


def flagged_messages(
    repo: MemoryRepo, base: str | None, head: str, book: pb.Playbook, episodes: dict[str, Episode | None]
) -> list[tuple[str, str]]:
    """(rule ID, message) for each flag still standing: the rule is active and the
    episode still contradicts its text."""
    out = []
    for rule_id, ep_id in flagged(repo, base, head):
        rule, ep = book.get(rule_id), episodes.get(ep_id)
        found = contradiction(rule, ep) if rule is not None and not rule.retired and ep is not None else None
        if found is not None:
            out.append(
                (
                    rule_id,
                    f"{rule_id} is contradicted by {ep_id} ({found.reason}); the distiller could not "
                    "decide: revise, supersede or retire the rule, or confirm it",
                )
            )
    return out


def lineage_lines(repo: MemoryRepo, rule_ids: Iterable[str]) -> list[tuple[str, str, bool]]:
    """(rule ID, "PB-04 was applied 9 times and corrected 4 times since ...", struggling)
    for the rules applied since they last changed; best effort (no index, no lines), but
    a FIFO, socket or device where a memory file should be is raised (exit 2, naming it),
    as every command that reads the working tree raises it."""
    from scarwarden.index import open_index
    from scarwarden.index.lineage import lineage_counts

    rule_ids = list(rule_ids)
    if not rule_ids:  # no rule changed in the range: nothing to count, no index to open
        return []
    try:
        with open_index(repo) as index:
            counts = lineage_counts(index, rule_ids)
    except (ScarwardenError, OSError) as exc:
        if is_refusal(exc):
            raise
        log.warning("lineage counts unavailable (%s)", one_line(exc, root=str(repo.root)))
        return []
    return [(rid, c.sentence(), c.struggling) for rid, c in counts.items() if c.applied]
