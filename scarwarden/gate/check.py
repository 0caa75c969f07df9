"""The provenance gate: ``scarwarden check``.

Three scopes, one set of rules (:mod:`scarwarden.gate.policy`):

* :func:`check_staged` (the pre-commit hook): the tree about to be committed, read from
  git's index only (``git diff --cached`` and blob IDs), never from the working folder,
  so an untracked or unstaged episode can never make a citation pass. ``GIT_INDEX_FILE``
  is inherited, which is how ``git commit -a`` and ``git commit <paths>`` hand the hook
  their temporary index. Its cost follows the staged change, not the ledger: it reads
  the blobs that changed, and finds the few episode IDs it needs in HEAD's tree (the
  month trees' names kept per tree ID) and the staged diff, instead of listing 100k files.
* :func:`check_range` (CI on a pull request): every commit in ``A..B`` against its
  parents, citations against each commit's own tree (:mod:`scarwarden.gate.verify` walks it).
* :func:`check_all`: the committed-plus-staged tree as a whole; the one scope that
  parses every episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from scarwarden import git
from scarwarden.errors import GitError
from scarwarden.gate.report import CheckReport
from scarwarden.gate.resolve import (
    EMPTY_BLOB,
    MAX_ID_PATTERNS,
    absent_memory,
    check_citations,
    find_episode_paths,
    memory_mode_problem,
    note_playbook_folder,
    open_memory,
    staged_episode_paths,
    unmerged_problem,
)
from scarwarden.records import field, record
from scarwarden.repo import MemoryRepo

__all__ = [
    "EMPTY_BLOB",
    "MAX_ID_PATTERNS",
    "CheckReport",
    "check_all",
    "check_range",
    "check_staged",
    "find_episode_paths",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.files import playbook as pb
    from scarwarden.files.episodes import Episode
    from scarwarden.gate.check_commits import check_range
    from scarwarden.gate.check_tree import check_all


def __getattr__(name: str) -> Any:
    """The two other scopes, imported when asked for (PEP 562): the pre-commit hook,
    which checks the staged change only, never loads the range and tree walkers."""
    if name == "check_range":
        from scarwarden.gate.check_commits import check_range

        return check_range
    if name == "check_all":
        from scarwarden.gate.check_tree import check_all

        return check_all
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _staged_diff(
    root: Path, memory_rel: str, env: Mapping[str, str] | None
) -> tuple[str | None, list[tuple[str, str, str, str, git.Change]]]:
    """(base, changes): the index against HEAD, or against the empty tree before the
    first commit. During a merge HEAD is the first parent, so the other side's episodes
    show up as additions, and are validated as such."""
    try:
        return "HEAD", git.diff_cached(root, "HEAD", memory_rel, env=env)
    except GitError:
        if git.head(root) is not None:
            raise
        return None, git.diff_cached(root, None, memory_rel, env=env)


@record
class _StagedChanges:
    """The staged diff, sorted by what the gate must read and check."""

    #: Added episode files that may be valid: path -> (blob, mode).
    added: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: IDs of episodes deleted or renamed away: the rules citing them must still resolve.
    lost: set[str] = field(default_factory=set)
    playbook_changed: bool = False
    #: The playbook's blob IDs before and after; ``None``: absent (or unchanged).
    playbook_old: str | None = None
    playbook_new: str | None = None
    #: Existing episodes whose content changed (a redaction, or refused): path -> (old, new).
    modified: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def needs_playbook(self) -> bool:
        return self.playbook_changed or bool(self.lost)


def check_staged(root: Path | str | MemoryRepo, env: Mapping[str, str] | None = None) -> CheckReport:
    """Check what ``git commit`` is about to record (git's index, honouring
    ``GIT_INDEX_FILE``; ``env=None`` inherits the process environment). ``root`` is the
    repository's top folder, or a :class:`MemoryRepo` whose settings are loaded."""
    repo = open_memory(root)
    report = CheckReport("staged")
    base, changes = _staged_diff(repo.root, repo.memory_rel, env)
    report.base = base
    if not changes:  # the common case in a code repository: before paying for YAML
        report.no_memory = absent_memory(repo, base, env)  # then nothing was checked: the hooks say nothing
        return report
    staged = _sort_staged_changes(report, repo, changes)
    blobs = _read_staged_blobs(repo, staged, base, env)
    with_receipts: list[tuple[str, Episode]] = []
    attached: list[tuple[str, Episode]] = []
    added_ids = _validate_added_episodes(report, repo, staged.added, blobs, with_receipts, attached)
    _check_staged_media(report, repo, changes, attached, env)
    if with_receipts:
        _prove_receipts(report, repo, with_receipts, [staged.playbook_new], base, env)
    if staged.modified:
        _check_redactions(report, repo, staged, blobs, set(added_ids), base)
    to_resolve, new_text = _check_staged_playbook(report, repo, staged, base, blobs)
    if staged.playbook_changed and new_text is not None:
        _screen_playbook(report, repo, new_text, blobs.get(staged.playbook_old or ""))
    _check_ids_and_citations(report, repo, added_ids, to_resolve, new_text, env, (base, changes))
    if staged.playbook_changed:  # issue 25: each sentence shares words with its episodes
        from scarwarden.gate.support import check_staged_support

        check_staged_support(report, repo, env)
    return report


def _sort_staged_changes(
    report: CheckReport, repo: MemoryRepo, changes: list[tuple[str, str, str, str, git.Change]]
) -> _StagedChanges:
    """Report what no content can excuse (unmerged files, episodes changed after they
    were added, misplaced files) and note the added episodes and playbook versions."""
    from scarwarden.gate import policy as rules

    ep_rel, pb_rel = repo.episodes_rel, repo.playbook_rel
    staged = _StagedChanges()
    for old_mode, new_mode, old_blob, new_blob, change in changes:
        report.count("files_changed")
        old_path = change.old_path or change.path
        if change.status == "U":
            report.problems.append(unmerged_problem(change.path))
            continue
        if bad := memory_mode_problem(pb_rel, ep_rel, change.path, new_mode, change.status):
            report.problems.append(bad)
            continue
        note_playbook_folder(report, pb_rel, change.path, change.status)
        if old_path == pb_rel or change.path == pb_rel:
            staged.playbook_changed = True
            staged.playbook_old = old_blob if old_path == pb_rel and change.status != "A" else None
            staged.playbook_new = new_blob if change.path == pb_rel and change.status != "D" else None
        if rules.is_under(old_path, ep_rel) and change.status == "M" and old_blob != new_blob:
            if old_mode == new_mode and new_mode in rules.REGULAR_MODES:
                staged.modified[change.path] = (old_blob, new_blob)  # judged once read
                continue
        if rules.is_under(old_path, ep_rel) and change.status != "A":
            if change.status in "DR":
                ep = rules.episode_id_of(old_path)
                if ep:
                    staged.lost.add(ep)
            report.problems.append(
                rules.changed_episode_problem(
                    change.status,
                    old_path,
                    old_mode=old_mode,
                    new_mode=new_mode,
                    old_blob=old_blob,
                    new_blob=new_blob,
                    new_path=change.path,
                )
            )
            continue
        if rules.is_under(change.path, ep_rel) and change.status in "AR":
            if new_blob == rules.ZERO_BLOB:
                continue  # 'git add -N': nothing of it is in this commit
            bad = rules.added_path_problem(change.path, new_mode, ep_rel)
            if bad is not None:
                report.problems.append(bad)
            elif change.path.endswith(".yaml"):
                staged.added[change.path] = (new_blob, new_mode)
    return staged


def _read_staged_blobs(
    repo: MemoryRepo, staged: _StagedChanges, base: str | None, env: Mapping[str, str] | None
) -> dict[str, bytes | None]:
    """The added episodes and the playbook versions to compare, with one
    ``git cat-file --batch``; keyed by blob ID (or ``<base>:<playbook>`` when the
    playbook is unchanged but must be read for the episodes that left)."""
    wanted: list[str] = [blob for blob, _ in staged.added.values()]
    wanted += [blob for pair in staged.modified.values() for blob in pair]
    if staged.modified and base and not staged.needs_playbook:
        wanted.append(f"{base}:{repo.playbook_rel}")  # the rules citing what is redacted
    if staged.playbook_changed:
        wanted += [b for b in (staged.playbook_new, staged.playbook_old) if b]
    elif staged.needs_playbook and base:
        wanted.append(f"{base}:{repo.playbook_rel}")
    return dict(zip(wanted, git.cat_file_batch(repo.root, wanted, env=env), strict=True))


def _validate_added_episodes(
    report: CheckReport,
    repo: MemoryRepo,
    added: dict[str, tuple[str, str]],
    blobs: Mapping[str, bytes | None],
    with_receipts: list[tuple[str, Episode]] | None = None,
    attached: list[tuple[str, Episode]] | None = None,
) -> dict[str, str]:
    """Validate each added episode; its ID (claimed by its content, else by its file
    name) -> its path, the first path per ID. Valid episodes that carry a recall
    receipt are appended to ``with_receipts``."""
    from scarwarden.gate import policy as rules

    added_ids: dict[str, str] = {}
    for path, (blob, _mode) in added.items():
        episode, found = rules.validate_episode(blobs.get(blob), path, repo.episodes_rel)
        report.problems.extend(found)
        report.count("episodes_added")
        if episode is not None and with_receipts is not None and episode.get("recalled") is not None:
            with_receipts.append((path, episode))
        if episode is not None:
            _screen_episode(report, repo, episode, path, blobs.get(blob))
            if attached is not None and episode.get("attachments"):
                attached.append((path, episode))
        ep = episode.id if episode else rules.episode_id_of(path)
        if ep:
            added_ids.setdefault(ep, path)
    return added_ids


def _check_staged_media(
    report: CheckReport,
    repo: MemoryRepo,
    changes: list[git.RawChange],
    attached: list[tuple[str, Episode]],
    env: Mapping[str, str] | None,
) -> None:
    """Images (issue 19): append-only, named by their hash, and every attachment present."""
    from scarwarden.gate import media

    added, problems = media.changed_media(repo, changes)
    report.problems.extend(problems)
    if added:
        report.count("media_added", len(added))
        raws = git.cat_file_batch(repo.root, list(added.values()), env=env)
        report.problems.extend(media.check_added_media(repo, added, raws))
        if lfs := media.lfs_pointers(raws):  # said, not hidden: their bytes were not seen
            report.count("media_in_lfs", lfs)
    report.problems.extend(media.missing_attachments(repo, attached, env))


def _screen_episode(
    report: CheckReport, repo: MemoryRepo, episode: Episode, path: str, raw: bytes | None
) -> None:
    """No credential (and no refused personal data) in an added episode."""
    from scarwarden.gate import screen

    problems, warnings = screen.episode_problems(episode, path, raw, repo.config)
    report.problems.extend(problems)
    report.warnings.extend(warnings)


def _screen_playbook(report: CheckReport, repo: MemoryRepo, new_text: str, old_raw: bytes | None) -> None:
    """No credential on a playbook line this change adds."""
    from scarwarden.gate import screen

    old_text = old_raw.decode("utf-8", "replace") if old_raw is not None else None
    report.problems.extend(screen.playbook_problems(new_text, old_text, repo.playbook_rel, repo.config))


def _prove_receipts(
    report: CheckReport,
    repo: MemoryRepo,
    episodes: list[tuple[str, Episode]],
    known: list[str | None],
    rev: str | None,
    env: Mapping[str, str] | None,
) -> None:
    """Re-run recall for each receipt at its playbook version (issue 20)."""
    from scarwarden.gate.proofs import Prover

    known_blobs = [b for b in known if b]
    prover = Prover(repo.root, repo.playbook_rel, known=known_blobs, rev=rev, env=env, merging=True)
    prover.prove_into(report, episodes)


def _check_redactions(
    report: CheckReport,
    repo: MemoryRepo,
    staged: _StagedChanges,
    blobs: Mapping[str, bytes | None],
    added_ids: set[str],
    base: str | None,
) -> None:
    """Each changed episode must be a valid redaction (refused otherwise); the rules
    citing a redacted episode are warned about."""
    from scarwarden.gate import policy as rules
    from scarwarden.gate import redactions

    redacted: dict[str, str] = {}
    for path, (old_blob, new_blob) in staged.modified.items():
        stub, found = redactions.judge(
            path, blobs.get(old_blob), blobs.get(new_blob), added_ids, repo.episodes_rel, repo.config
        )
        report.problems.extend(found)
        if stub is not None:
            report.count("redactions_checked")
            redacted[stub.id] = path
    if not redacted:
        return
    key = staged.playbook_new if staged.playbook_changed else f"{base}:{repo.playbook_rel}"
    book = rules.parse_playbook(blobs.get(key or ""), repo.playbook_rel)[0] if key else None
    report.warnings.extend(redactions.evidence_warnings(book, redacted, repo.playbook_rel))


def _check_staged_playbook(
    report: CheckReport,
    repo: MemoryRepo,
    staged: _StagedChanges,
    base: str | None,
    blobs: Mapping[str, bytes | None],
) -> tuple[list[pb.Rule], str | None]:
    """Parse the playbook being committed and compare it with the one it replaces.

    Returns the rules whose citations must resolve and the new playbook's text (for
    the line numbers of problems); none when the playbook need not be read."""
    from scarwarden.gate import policy as rules

    pb_rel = repo.playbook_rel
    if not staged.needs_playbook:
        return [], None
    if staged.playbook_changed:
        new_raw = blobs.get(staged.playbook_new) if staged.playbook_new else None
        old_raw = blobs.get(staged.playbook_old) if staged.playbook_old else None
    else:
        new_raw = old_raw = blobs.get(f"{base}:{pb_rel}")
    new_text = new_raw.decode("utf-8", "replace") if new_raw is not None else None
    new_book, found = rules.parse_playbook(new_raw, pb_rel)
    report.problems.extend(found)
    old_book = rules.parse_playbook(old_raw, pb_rel)[0] if old_raw is not None else None
    to_resolve: list[pb.Rule] = []
    if staged.playbook_changed and staged.playbook_new is None and old_book and old_book.all_rules():
        report.problems.append(
            rules.problem(
                "playbook-deleted",
                f"{pb_rel} was deleted; its rule IDs must stay on record",
                file=pb_rel,
                hint=f"restore it: git restore --source=HEAD --staged --worktree -- {pb_rel}",
            )
        )
    elif new_book is not None:
        report.problems.extend(rules.compare_playbooks(old_book, new_book, pb_rel))
        to_resolve = rules.rules_to_resolve(
            old_book if staged.playbook_changed else new_book, new_book, staged.lost
        )
        report.count("rules_checked", len(to_resolve))
    return to_resolve, new_text


def _check_ids_and_citations(
    report: CheckReport,
    repo: MemoryRepo,
    added_ids: dict[str, str],
    to_resolve: list[pb.Rule],
    new_text: str | None,
    env: Mapping[str, str] | None,
    staged: tuple[str | None, list[git.RawChange]],
) -> None:
    """Each added ID unique in the index, each citation of ``to_resolve`` resolving to
    an episode in the tree being committed (one lookup for both: HEAD's tree and the
    staged diff, :func:`~scarwarden.gate.resolve.staged_episode_paths`)."""
    from scarwarden.gate import policy as rules

    cited = {ep for rule in to_resolve for ep in rule.episode_ids}
    lookup = cited | set(added_ids)
    paths = staged_episode_paths(repo, *staged, lookup, env) if lookup else {}
    for ep, path in added_ids.items():
        others = [p for p in paths.get(ep, []) if p != path]
        if others:
            report.problems.append(rules.duplicate_id_problem(ep, path, others[0]))
    check_citations(
        report,
        repo,
        to_resolve,
        new_text,
        lambda ep: ep in added_ids or bool(paths.get(ep)),
        "the tree being committed",
    )
