"""What the distiller reads: the ledger at a commit, and which episodes are already distilled.

"Already distilled" is the union of

* every ``Scarwarden-Distilled-Episode: <id>`` line in the messages of the distill
  commits (those carrying ``Scarwarden-Distiller:``) reachable from HEAD, and
* every episode cited by a rule in the playbook (active or retired).

A union over reachable commits survives merges: merging a branch that distilled
other episodes brings its distill commit, and so its list, into HEAD's history; a
distill commit on an unmerged review branch does not count until it is merged. Lines
are read from the whole message, not only git's trailer block, so a squash merge that
folds several messages together still counts. Hand-written rules count through their
citations. (docs/distill.md explains the alternatives considered.)

Everything is read from git objects, never from the working tree or the SQLite cache,
so the episodes distilled are exactly those the commit will hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from scarwarden import git
from scarwarden.errors import ScarwardenError
from scarwarden.files.episodes import EPISODE_ID_RE, Episode, parse_episode_bytes
from scarwarden.repo import MemoryRepo

DISTILLER_TRAILER = "Scarwarden-Distiller"
COUNT_TRAILER = "Scarwarden-Distilled"
EPISODE_TRAILER = "Scarwarden-Distilled-Episode"
#: ``Scarwarden-Contradiction: PB-01 ep-...``: a possible contradiction left for a human.
CONTRADICTION_TRAILER = "Scarwarden-Contradiction"

_EPISODE_LINE = re.compile(rf"^{EPISODE_TRAILER}:\s*(\S+)\s*$", re.MULTILINE)


@dataclass
class Ledger:
    """The episodes committed at one commit: ID -> (path, blob)."""

    commit: str
    entries: dict[str, tuple[str, str]] = field(default_factory=dict)

    def __contains__(self, episode_id: object) -> bool:
        return episode_id in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)


def ledger_at(repo: MemoryRepo, commit: str) -> Ledger:
    """Every episode file in ``commit``'s tree (one ``git ls-tree``, no parsing)."""
    ledger = Ledger(commit)
    prefix = repo.episodes_rel + "/"
    for entry in git.ls_tree(repo.root, commit, repo.episodes_rel):
        name = entry.path.rsplit("/", 1)[-1]
        if not entry.path.startswith(prefix) or not name.endswith(".yaml"):
            continue
        episode_id = name[:-5]
        if EPISODE_ID_RE.match(episode_id):
            ledger.entries[episode_id] = (entry.path, entry.blob)
    return ledger


_REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{40})", re.MULTILINE)


def distilled_by_commits(repo: MemoryRepo, rev: str) -> set[str]:
    """Episode IDs listed by the distill commits reachable from ``rev``.

    A distill commit undone by ``git revert`` (and not re-done by reverting the revert)
    does not count, so a reviewer who reverts a bad distillation gets its episodes
    distilled again by the next run.
    """
    entries = git.log(
        repo.root, "-E", f"--grep=^{DISTILLER_TRAILER}: ", "--grep=^This reverts commit [0-9a-f]{40}", rev
    )
    reverted_by: dict[str, list[str]] = {}
    for entry in entries:
        for target in _REVERTS.findall(entry.body):
            reverted_by.setdefault(target, []).append(entry.sha)

    def undone(sha: str, depth: int = 0) -> bool:
        return depth < 20 and any(not undone(r, depth + 1) for r in reverted_by.get(sha, ()))

    found: set[str] = set()
    for entry in entries:
        if not undone(entry.sha):
            found.update(_EPISODE_LINE.findall(entry.body))
    return found


def load_episodes(
    repo: MemoryRepo, ledger: Ledger, ids: list[str]
) -> tuple[list[Episode], list[tuple[str, str]]]:
    """Parse the given episodes from their blobs (one ``cat-file --batch``).

    Returns the episodes sorted by (time, ID) and the (ID, problem) of any file that
    does not parse (only possible if the gate was bypassed with ``--no-verify``).
    """
    blobs = git.cat_file_batch(repo.root, [ledger.entries[i][1] for i in ids])
    episodes: list[Episode] = []
    bad: list[tuple[str, str]] = []
    for episode_id, raw in zip(ids, blobs, strict=True):
        path = ledger.entries[episode_id][0]
        if raw is None:
            bad.append((episode_id, f"{path} is missing from the object store"))
            continue
        try:
            episodes.append(parse_episode_bytes(raw, path, episodes_dir=repo.episodes_rel))
        except ScarwardenError as exc:
            reason = exc.problems[0].message if exc.problems else exc.message
            bad.append((episode_id, f"{path} is not a valid episode ({reason})"))
    episodes.sort(key=lambda ep: (ep.at, ep.id))
    return episodes, bad
