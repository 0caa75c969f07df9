"""Semantic diff of the playbook: rules added, retired, changed, with word diffs.

A line diff of ``memory/playbook.md`` shows a retired rule as forty lines moved and a
new citation as one changed line among many. This module compares two *parsed*
playbooks rule by rule instead: what was added, retired, restored or removed, how each
changed rule's title and text changed word by word, which tags and citations were
added or removed, and the episodes newly cited, so a reviewer can read the evidence.

Sides are commits or the working tree (``rev=None``). The default range is documented
in :func:`default_range`. Rendering lives in :mod:`scarwarden.semdiff_render`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from scarwarden import git
from scarwarden.errors import GitError, ScarwardenError, UsageError, ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode, parse_episode_bytes
from scarwarden.files.rule_ids import sort_key as rule_sort_key
from scarwarden.regular_files import read_regular
from scarwarden.repo import MemoryRepo

#: Word-diff operations.
EQUAL, DELETE, INSERT = "equal", "delete", "insert"
_WORD = re.compile(r"\s+|[^\W_]+(?:['\u2019][^\W_]+)*|[^\w\s]|_")


@dataclass(frozen=True)
class Side:
    """One end of a diff: a commit, or the working tree when ``rev`` is ``None``."""

    rev: str | None
    label: str

    @property
    def short(self) -> str:
        if self.rev is None:
            return "working tree"
        if self.rev in (git.EMPTY_TREE, git.EMPTY_TREE_SHA256):
            return "(nothing)"
        return self.rev[:10]

    def to_json(self) -> dict[str, object]:
        return {"rev": self.rev, "label": self.label}


@dataclass(frozen=True)
class Segment:
    op: str  # EQUAL, DELETE or INSERT
    text: str

    def to_json(self) -> dict[str, str]:
        return {"op": self.op, "text": self.text}


def word_diff(old: str, new: str) -> list[Segment]:
    """A word-level diff: runs of equal text, deletions and insertions.

    Whitespace between two changed words is folded into the change, so replacing a
    phrase reads as one deletion and one insertion rather than a word-by-word zipper.
    """
    a, b = _WORD.findall(old), _WORD.findall(new)
    raw: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            raw.append((EQUAL, "".join(a[i1:i2])))
        if tag in ("delete", "replace"):
            raw.append((DELETE, "".join(a[i1:i2])))
        if tag in ("insert", "replace"):
            raw.append((INSERT, "".join(b[j1:j2])))
    out: list[Segment] = []
    i = 0
    while i < len(raw):
        if raw[i][0] == EQUAL:
            out.append(Segment(EQUAL, raw[i][1]))
            i += 1
            continue
        deleted, inserted = [], []
        while i < len(raw):
            op, text = raw[i]
            if op == DELETE:
                deleted.append(text)
            elif op == INSERT:
                inserted.append(text)
            elif not text.strip() and i + 1 < len(raw) and raw[i + 1][0] != EQUAL:
                deleted.append(text)  # a lone space between two changes joins them
                inserted.append(text)
            else:
                break
            i += 1
        if deleted:
            out.append(Segment(DELETE, "".join(deleted)))
        if inserted:
            out.append(Segment(INSERT, "".join(inserted)))
    return out


@dataclass(frozen=True)
class RuleChange:
    """How one rule differs between the two sides."""

    id: str
    #: "added", "changed", "retired", "restored" or "removed" (gone from the record).
    kind: str
    before: pb.Rule | None
    after: pb.Rule | None
    title: list[Segment] | None = None
    text: list[Segment] | None = None
    reason: list[Segment] | None = None
    tags_added: tuple[str, ...] = ()
    tags_removed: tuple[str, ...] = ()
    citations_added: tuple[str, ...] = ()
    citations_removed: tuple[str, ...] = ()

    @property
    def current(self) -> pb.Rule:
        """The newest form of the rule (the old one when it was removed)."""
        rule = self.after or self.before
        assert rule is not None
        return rule

    def to_json(self) -> dict[str, object]:
        def segs(value: list[Segment] | None) -> list[dict[str, str]] | None:
            return None if value is None else [s.to_json() for s in value]

        return {
            "id": self.id,
            "change": self.kind,
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
            "title_diff": segs(self.title),
            "text_diff": segs(self.text),
            "reason_diff": segs(self.reason),
            "tags_added": list(self.tags_added),
            "tags_removed": list(self.tags_removed),
            "citations_added": list(self.citations_added),
            "citations_removed": list(self.citations_removed),
        }


def _added(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(x for x in new if x not in old)


def compare_rules(before: pb.Rule | None, after: pb.Rule | None) -> RuleChange | None:
    """The change from ``before`` to ``after`` (either may be missing); ``None`` if equal."""
    if before == after:
        return None
    if before is None:
        assert after is not None
        return RuleChange(
            after.id, "added", None, after, tags_added=after.tags, citations_added=after.episode_ids
        )
    if after is None:
        return RuleChange(before.id, "removed", before, None)
    if after.retired and not before.retired:
        kind = "retired"
    elif before.retired and not after.retired:
        kind = "restored"
    else:
        kind = "changed"
    reason = None
    if before.retired and after.retired and before.reason != after.reason:
        reason = word_diff(before.reason or "", after.reason or "")
    return RuleChange(
        after.id,
        kind,
        before,
        after,
        title=word_diff(before.title, after.title) if before.title != after.title else None,
        text=word_diff(before.text, after.text) if before.text != after.text else None,
        reason=reason,
        tags_added=_added(before.tags, after.tags),
        tags_removed=_added(after.tags, before.tags),
        citations_added=_added(before.episode_ids, after.episode_ids),
        citations_removed=_added(after.episode_ids, before.episode_ids),
    )


def compare_playbooks(old: pb.Playbook, new: pb.Playbook) -> list[RuleChange]:
    """Every rule that differs, ordered by rule number."""
    ids = sorted(old.all_ids() | new.all_ids(), key=rule_sort_key)
    changes = [compare_rules(old.get(rid), new.get(rid)) for rid in ids]
    return [c for c in changes if c is not None]


@dataclass
class PlaybookDiff:
    old: Side
    new: Side
    changes: list[RuleChange]
    #: Episodes newly cited by some rule, as found on the new side (None: not found).
    episodes: dict[str, Episode | None] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        counts = {k: 0 for k in ("added", "changed", "retired", "restored", "removed")}
        for change in self.changes:
            counts[change.kind] += 1
        return counts

    def to_json(self) -> dict[str, object]:
        return {
            "from": self.old.to_json(),
            "to": self.new.to_json(),
            "summary": self.counts(),
            "rules": [c.to_json() for c in self.changes],
            "new_citations": [
                {"id": ep_id, "found": ep is not None, "episode": ep.to_json() if ep else None}
                for ep_id, ep in self.episodes.items()
            ],
        }


# -- reading both sides ------------------------------------------------------------------


def playbook_bytes(repo: MemoryRepo, side: Side) -> bytes | None:
    if side.rev is None:
        try:
            return read_regular(repo.playbook_path)
        except FileNotFoundError:
            return None
    raw = git.show_file(repo.root, side.rev, repo.playbook_rel)
    if raw is None and side.rev not in (git.EMPTY_TREE, git.EMPTY_TREE_SHA256):
        listed = git.ls_tree(repo.root, side.rev, repo.playbook_rel)  # the tree alone
        if listed:  # the commit has a playbook the repository cannot read (corrupt, partial)
            raise GitError(
                f"the playbook at {side.label} ({listed[0].blob[:10]}) cannot be read: it is "
                "missing from this repository",
                hint="run 'git fsck'; fetch the history again from a clone that has it (git fetch)",
            )
    return raw


def load_playbook_at(repo: MemoryRepo, side: Side) -> pb.Playbook:
    """The playbook on one side (empty where there is none yet)."""
    raw = playbook_bytes(repo, side)
    if raw is None:
        return pb.empty()
    where = f"{repo.playbook_rel} ({side.label})"
    try:
        return pb.parse(raw.decode("utf-8"), source=where)
    except UnicodeDecodeError:
        raise ValidationError(f"{where} is not valid UTF-8") from None


def episodes_at(repo: MemoryRepo, side: Side, ids: list[str]) -> dict[str, Episode | None]:
    """The episodes ``ids`` as stored on one side; ``None`` for a missing or invalid one."""
    found: dict[str, Episode | None] = {ep_id: None for ep_id in ids}
    if not ids:
        return found
    raws: dict[str, bytes | None] = {}
    if side.rev is None:
        for ep_id in ids:
            on_disk = sorted(repo.episodes_dir.glob(f"*/*/{ep_id}.yaml"))
            if on_disk:
                raws[ep_id] = on_disk[0].read_bytes()
    else:
        wanted = {f"{ep_id}.yaml": ep_id for ep_id in ids}
        paths: dict[str, str] = {}
        for entry in git.ls_tree(repo.root, side.rev, repo.episodes_rel):
            name = entry.path.rsplit("/", 1)[-1]
            if name in wanted:
                paths[wanted[name]] = entry.path
        blobs = git.cat_file_batch(repo.root, [f"{side.rev}:{p}" for p in paths.values()])
        raws = dict(zip(paths, blobs, strict=True))
    for ep_id, raw in raws.items():
        if raw is None:
            continue
        try:
            found[ep_id] = parse_episode_bytes(raw, None, episodes_dir=None)
        except ScarwardenError:
            found[ep_id] = None
    return found


# -- the range ------------------------------------------------------------------------------


def _resolve(repo: MemoryRepo, rev: str) -> Side:
    sha = git.rev_parse(repo.root, rev)
    if sha is None:
        raise UsageError(
            f"unknown revision {rev!r}", hint="give a commit, branch or tag ('git log --oneline' lists them)"
        )
    return Side(sha, rev)


def _parent_side(root: Path, entry: git.LogEntry, why: str) -> Side:
    if entry.parents:
        return Side(entry.parents[0], f"{entry.sha[:10]}^ (before {why})")
    from scarwarden.git.integrity import shallow_depth

    depth = shallow_depth(root)
    if depth is not None:  # the clone's edge, not the first commit: all would read as added
        raise UsageError(
            f"the parent of {why} is not in this shallow clone ({depth} commit"
            f"{'s' if depth != 1 else ''} visible from HEAD)",
            hint="fetch the history (git fetch --unshallow; in CI, actions/checkout with "
            "fetch-depth: 0), or name the revisions to compare",
        )
    return Side(git.empty_tree(root), f"nothing (before {why}, the first commit)")


def last_change_base(repo: MemoryRepo, head: str = "HEAD") -> Side:
    """The parent of the last ``distill:`` commit reachable from ``head`` (first
    parents); with none, the parent of the last commit that touched the playbook."""
    distills = [
        e
        for e in git.log(repo.root, "--first-parent", "--grep=^distill:", head, "--", repo.playbook_rel)
        if e.subject.startswith("distill:")
    ]
    if distills:
        return _parent_side(repo.root, distills[0], f"distill commit {distills[0].sha[:10]}")
    touched = git.log(repo.root, "--first-parent", "-1", head, "--", repo.playbook_rel)
    if touched:
        return _parent_side(repo.root, touched[0], f"commit {touched[0].sha[:10]}")
    return Side(git.rev_parse(repo.root, head), head)


def default_range(repo: MemoryRepo) -> tuple[Side, Side]:
    """The range ``scarwarden diff`` shows with no revisions.

    1. The playbook has uncommitted changes (staged or not): HEAD vs the working tree.
    2. Else there is a commit whose subject starts ``distill:``: the last one's parent
       vs HEAD, i.e. what the last distillation changed plus any edit made since.
    3. Else the last commit that touched the playbook: its parent vs HEAD.
    """
    worktree = Side(None, "working tree")
    if git.head(repo.root) is None:
        return Side(git.empty_tree(repo.root), "nothing (no commit yet)"), worktree
    head = Side(git.rev_parse(repo.root, "HEAD"), "HEAD")
    if playbook_bytes(repo, worktree) != playbook_bytes(repo, head):
        return head, worktree
    return last_change_base(repo), head


def resolve_range(repo: MemoryRepo, rev1: str | None = None, rev2: str | None = None) -> tuple[Side, Side]:
    """``(old, new)`` for ``diff [REV1 [REV2]]``: REV1 alone compares with the working tree."""
    if rev1 is None:
        return default_range(repo)
    old = _resolve(repo, rev1)
    return old, (_resolve(repo, rev2) if rev2 is not None else Side(None, "working tree"))


def diff_sides(repo: MemoryRepo, old: Side, new: Side) -> PlaybookDiff:
    """The semantic diff between two sides, with the newly cited episodes loaded."""
    changes = compare_playbooks(load_playbook_at(repo, old), load_playbook_at(repo, new))
    cited = list(dict.fromkeys(ep for c in changes for ep in c.citations_added))
    return PlaybookDiff(old, new, changes, episodes_at(repo, new, cited))


def semantic_diff(repo: MemoryRepo, rev1: str | None = None, rev2: str | None = None) -> PlaybookDiff:
    """``scarwarden diff [REV1 [REV2]]`` as a value."""
    old, new = resolve_range(repo, rev1, rev2)
    return diff_sides(repo, old, new)
