"""The playbook, media and citation checks of a walk (:mod:`scarwarden.gate.walk`), each
a function of the walk's :class:`~scarwarden.gate.walk_state.WalkState`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scarwarden import git
from scarwarden.gate import policy as rules
from scarwarden.gate.policy import GateProblem
from scarwarden.gate.walk_state import CommitDiffs, WalkState, at

if TYPE_CHECKING:
    from scarwarden.files import playbook as pb


def _book(w: WalkState, blob: str | None) -> tuple[pb.Playbook | None, list[GateProblem]]:
    """The playbook in ``blob`` (parsed once) and its problems; none is empty."""
    if blob is None:
        from scarwarden.files import playbook as pb  # only when a commit's playbook is read

        return pb.empty(), []
    if blob in w.not_a_file:  # a symlink or a submodule: say so, not what its blob parses as
        bad = rules.playbook_mode_problem(w.pb_rel, w.not_a_file[blob])
        return None, [bad] if bad else []
    if blob not in w.parsed:
        raw = w.contents.get(blob)
        w.parsed[blob] = (
            rules.parse_playbook(raw, w.pb_rel)
            if raw is not None
            else (None, [rules.unreadable_playbook_problem(w.pb_rel, blob)])
        )
    return w.parsed[blob]


def check_playbook(w: WalkState, i: int, commit: CommitDiffs, lost: set[str]) -> None:
    """Check ``commit``'s playbook against its first parent's (when it changed, or
    when episodes left the tree) and note the citations to resolve."""
    sha, parents, _cdiffs = commit
    blob = w.playbook_blob[sha]
    parent_blob = w.playbook_blob.get(parents[0]) if parents else None
    if blob == parent_blob and not lost:
        return
    new, found = _book(w, blob)
    for p in found:
        w.report(i, ("playbook", p.code, p.message), at(p, sha))
    if w.screen and blob != parent_blob:
        _screen_playbook(w, i, sha, blob, parent_blob)
    if new is None:
        return
    old = _book(w, parent_blob)[0] if parents else None
    for p in rules.compare_playbooks(old, new, w.pb_rel):
        w.report(i, (p.code, p.rule or ""), at(p, sha))
    if old is not None:
        _check_reused_ids(w, i, sha, old, new)
    targets = rules.rules_to_resolve(old if blob != parent_blob else new, new, lost)
    w.result.rules += len(targets)
    raw = w.contents.get(blob) if blob else None
    text = raw.decode("utf-8", "replace") if raw else None
    for r in targets:
        line = rules.learnt_in_line(text, r)
        for ep in r.episode_ids:
            w.result.citations += 1
            w.citing.append((i, sha, r, ep, line))


def _screen_playbook(w: WalkState, i: int, sha: str, blob: str | None, parent_blob: str | None) -> None:
    """No credential on a playbook line this commit adds (the pre-commit hook's screen)."""
    from scarwarden.gate import screen

    new_raw = w.contents.get(blob) if blob else None
    old_raw = w.contents.get(parent_blob) if parent_blob else None
    if new_raw is None:
        return
    old_text = old_raw.decode("utf-8", "replace") if old_raw is not None else None
    for p in screen.playbook_problems(new_raw.decode("utf-8", "replace"), old_text, w.pb_rel, w.repo.config):
        w.report(i, ("screen", w.pb_rel, p.message), at(p, sha))


def _check_reused_ids(w: WalkState, i: int, sha: str, old: pb.Playbook, new: pb.Playbook) -> None:
    """Note the rules ``new`` removed; report a rule that takes a removed one's ID."""
    new_ids, old_ids = new.all_ids(), old.all_ids()
    for r in old.all_rules():
        if r.id not in new_ids:
            w.removed.setdefault(r.id, sha)
    for r in new.all_rules():
        if r.id not in old_ids and r.id in w.removed:
            w.report(
                i,
                ("rule-id-reused", r.id),
                rules.problem(
                    "rule-id-reused",
                    f"{r.id} reuses the ID of a rule removed in {w.removed[r.id][:10]}",
                    file=w.pb_rel,
                    line=r.line,
                    rule=r.id,
                    commit=sha,
                    hint="rule IDs are never reused; give it the next free ID",
                ),
            )


def check_media_changes(w: WalkState, i: int, commit: CommitDiffs) -> None:
    """Images attached to episodes are append-only too (issue 19): against the first
    parent, no media file changed, renamed or deleted. The ones the commit itself
    added (not merged in) are noted for :func:`check_media_content`."""
    from scarwarden.gate import media

    added, problems = media.changed_media(w.repo, commit.diffs[0])
    other_added = [{c.path for *_x, c in d if c.status in "AR"} for d in commit.diffs[1:]]
    for path, blob in added.items():
        if all(path in o for o in other_added):
            w.media_added.append((i, commit.sha, path, blob))
    for p in problems:
        w.report(i, ("media", p.code, p.file or ""), at(p, commit.sha))


def check_media_content(w: WalkState) -> None:
    """Each image the range added has the content its name says and is a whole image,
    read from the stored objects (a swapped blob cannot hide) in one stream. Ranges
    (``check --from-ref``) apply today's size cap; ``verify`` proves what was
    committed."""
    from scarwarden.gate import media

    items = [(path, blob) for _i, _sha, path, blob in w.media_added]
    found, w.result.media_lfs = media.check_history_media(w.repo, items, cap=w.screen)
    w.result.media = len(items)
    for n, p in found:
        i, sha, _path, _blob = w.media_added[n]
        w.report(i, ("media", p.code, p.file or ""), at(p, sha))


def check_attachments(w: WalkState) -> None:
    """Every attachment of an added episode is in the tree of the commit that added it."""
    if not w.attached:
        return
    from scarwarden.gate import media

    items = [(sha, path, ep) for _i, sha, path, ep in w.attached]
    for n, p in media.missing_in_commits(w.repo, items):
        i, sha, path, _ep = w.attached[n]
        w.report(i, ("attachment", path, p.message), at(p, sha))


def _resolve_boundary(w: WalkState) -> None:
    """Add the boundary's paths of every ID added or cited, then expand each
    citation into the paths its episode may be at."""
    if w.boundary is not None:
        ids = {rules.episode_id_of(path) or "" for *_x, path, _blob in w.added}
        ids |= {ep for *_x, ep, _line in w.citing}
        for ep, paths in w.boundary.episode_paths(ids).items():
            if ep:
                w.id_paths.setdefault(ep, set()).update(paths)
    for i, sha, r, ep, line in w.citing:
        for candidate in sorted(w.id_paths.get(ep, ())) or [""]:
            w.cites.append((i, sha, r, ep, candidate, line))


def check_ids_and_citations(w: WalkState) -> None:
    """Each added ID unique and each citation resolving in its commit's own tree,
    with one ``git cat-file --batch-check`` for all of them."""
    _resolve_boundary(w)
    probes: list[tuple[int, str, str, str, str]] = []
    for i, sha, path, _blob in w.added:
        ep = rules.episode_id_of(path) or ""
        for other in sorted(w.id_paths.get(ep, set()) - {path}):
            probes.append((i, sha, ep, path, other))
    specs = {f"{sha}:{path}" for _, sha, _, _, path, _ in w.cites if path}
    specs |= {f"{sha}:{other}" for _, sha, _, _, other in probes}
    exists = git.objects_exist(w.root, sorted(specs))
    for i, sha, ep, path, other in probes:
        if exists.get(f"{sha}:{other}"):
            w.report(i, ("duplicate", ep, path), at(rules.duplicate_id_problem(ep, path, other), sha))
    resolved = {(sha, r.id, ep) for _, sha, r, ep, path, _ in w.cites if path and exists.get(f"{sha}:{path}")}
    for i, sha, r, ep, _path, line in w.cites:
        if (sha, r.id, ep) not in resolved:
            w.report(
                i,
                ("citation", r.id, ep),
                at(
                    rules.citation_problem(r, ep, w.pb_rel, line, f"the tree of commit {sha[:10]}"),
                    sha,
                ),
            )
