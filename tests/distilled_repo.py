"""A real history for the audit tests: the demo memory, new episodes, then a distill
commit that adds PB-15, changes PB-01 (text, tags, citations) and retires PB-04.

Used through the ``distilled`` fixture (conftest.py) by the semdiff, review, web and
browser tests; tests/audit/test_semdiff_repo.py pins the history it builds, so a change
to it shows up in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from conftest import git, head

from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.files.playbook_edit import load_playbook, save_playbook
from scarwarden.files.record import add_episodes
from scarwarden.repo import MemoryRepo

SCRIPT = "<script>alert(1)</script>"

EMOJI_EPISODE = {
    "at": "2026-11-20T09:30:00Z",
    "agent": "writer",
    "task": "Draft a LinkedIn post for the pricing webinar",
    "action": "Opened with the pain point but used five emoji, one per line",
    "outcome": "Two followers called the post childish; reach was half the usual",
    "correction": "No emoji at all in LinkedIn posts: the audience reads them as unserious",
    "corrected_by": "maya",
    "tags": ["linkedin", "post", "emoji"],
    "source": "correction",
}
OUTAGE_EPISODE = {
    "at": "2026-11-21T14:05:00Z",
    "agent": "support-bot",
    "task": "Triage a ticket saying checkout is down for everyone",
    "action": "Routed it to the on-call engineer by email",
    "outcome": "The email sat unread for 40 minutes while checkout was failing",
    "correction": "Page on-call through the incident channel; email is never a page",
    "corrected_by": "lee",
    "tags": ["outage", "routing", "on-call"],
    "source": "correction",
}
# Untrusted text with markup, and no outcome or correction (a weak citation).
SCRIPT_EPISODE = {
    "at": "2026-11-22T08:00:00Z",
    "agent": "writer",
    "task": f"Draft a LinkedIn post quoting {SCRIPT} from the changelog",
    "action": f"Pasted the changelog verbatim, including {SCRIPT} & <b>bold</b> tags",
    "tags": ["linkedin", "post"],
    "source": "import",
}

NEW_PB01_TEXT = (
    "Open every LinkedIn post, beta or launch announcement with the pain the reader "
    "already feels, then introduce the product, never with a feature list. Use no emoji "
    "and put the hashtags at the end of the post."
)
PB15_TEXT = (
    "Send any report that the product is down for many users to the on-call engineer "
    "through the incident channel, never by email and never to sales. Page on-call as "
    "soon as three similar failure reports arrive within 30 minutes."
)
RETIRE_REASON = "Merged into PB-15, which pages on-call through the incident channel"
DISTILL_SUBJECT = "distill: 3 episodes -> 1 new rule, 1 changed, 1 retired"


@dataclass
class Distilled:
    repo: MemoryRepo
    base: str  # the commit before the distill commit (episodes added)
    init: str  # the demo memory's commit
    distill: str  # the distill commit (HEAD)
    emoji: Episode
    outage: Episode
    script: Episode


def build_distilled_repo(repo: MemoryRepo) -> Distilled:
    """Turn a committed demo repo into the history described in the module docstring."""
    init = head(repo)
    emoji, outage, script = add_episodes(repo, [EMOJI_EPISODE, OUTAGE_EPISODE, SCRIPT_EPISODE])
    base = head(repo)
    book = load_playbook(repo)
    old01 = book.get("PB-01")
    assert old01 is not None
    new01 = replace(
        old01,
        text=NEW_PB01_TEXT,
        tags=("linkedin", "post", "announcement", "emoji", "hashtags"),
        episode_ids=("ep-hkgnqdz88f", "ep-vd4adns6h9", emoji.id, script.id),
    )
    pb15 = pb.make_rule(
        "PB-15",
        "Page on-call through the incident channel for outages",
        PB15_TEXT,
        ["outage", "routing", "on-call", "incident"],
        [outage.id],
    )
    book = book.with_rule(new01).with_rule(pb15).with_retired("PB-04", RETIRE_REASON, "PB-15")
    save_playbook(repo, book)
    git(repo.root, "add", repo.playbook_rel)
    git(
        repo.root,
        "commit",
        "-q",
        "-m",
        DISTILL_SUBJECT,
        "-m",
        f"Scarwarden-Distill: offline\nScarwarden-Episode: {emoji.id}",
    )
    return Distilled(repo, base, init, head(repo), emoji, outage, script)
