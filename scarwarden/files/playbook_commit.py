"""Committing a playbook change: the one way ``rule add`` and ``distill`` land theirs.

The new playbook is written atomically and staged; with a message it is committed
alone (``git commit --only``: whatever else the user had staged stays staged and out
of the commit), together with any other paths the caller names. A caller's ``check``
(the provenance gate: this package may not import it, so the caller passes it) judges
the exact tree about to be committed, in a private index, before the commit is made;
the pre-commit hook, when installed, runs as for any commit.

On any failure (the check refuses, a hook rejects the commit, git is misconfigured) the
file and its entry in git's index are put back as they were: a refused change leaves
the repository as it found it. The caller holds the write lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from scarwarden import git
from scarwarden.errors import UsageError
from scarwarden.files.atomic import atomic_write
from scarwarden.repo import MemoryRepo

#: Judges the tree about to be committed: called with the environment that selects a
#: private index holding it (HEAD plus the committed paths); raises to refuse.
Check = Callable[[Mapping[str, str]], None]


def playbook_has_edits(repo: MemoryRepo) -> bool:
    """Whether the working tree's playbook (staged or not) differs from HEAD's."""
    return git.head(repo.root) is not None and git.has_uncommitted_changes(repo.root, repo.playbook_rel)


def commit_playbook(
    repo: MemoryRepo,
    data: bytes,
    message: str | None,
    *,
    also: Sequence[str] = (),
    check: Check | None = None,
    refuse_edits: UsageError | None = None,
    allow_empty: bool = False,
) -> str | None:
    """Write ``data`` as the playbook, stage it and, given a ``message``, commit it.

    ``message=None`` stops after staging (``--no-commit``) and returns ``None``;
    otherwise the new commit's ID is returned. ``also``: other paths that go into the
    same commit (their working-tree content, as ``git commit --only`` takes it).
    ``check`` runs on the tree about to be committed (see :data:`Check`).
    ``refuse_edits``: the error raised, before anything is written, when the playbook
    has uncommitted edits that the commit would take along or overwrite.
    """
    if refuse_edits is not None and playbook_has_edits(repo):
        raise refuse_edits
    original = repo.playbook_path.read_bytes() if repo.playbook_path.exists() else None
    entry = git.ls_files_stage(repo.root, repo.playbook_rel)
    atomic_write(repo.playbook_path, data)
    try:
        git.add(repo.root, [repo.playbook_rel])
        if message is None:
            return None
        paths = [repo.playbook_rel, *also]
        if check is not None:
            _check_commit_tree(repo, paths, check)
        return git.commit(repo.root, message, only=paths, allow_empty=allow_empty)
    except BaseException:
        _restore(repo, original, entry[0] if entry else None)
        raise


def _check_commit_tree(repo: MemoryRepo, paths: Sequence[str], check: Check) -> None:
    """Run ``check`` on what ``git commit --only paths`` would record: HEAD's tree with
    the working-tree content of ``paths``, built in a private index (the user's index
    is not touched)."""
    base = git.head(repo.root) or git.EMPTY_TREE
    with git.temporary_index(repo.root, base) as env:
        git.add(repo.root, paths, env=env)
        check(env)


def _restore(repo: MemoryRepo, original: bytes | None, entry: git.StagedEntry | None) -> None:
    """Put the playbook file and its index entry back as they were before the write."""
    if original is not None:
        atomic_write(repo.playbook_path, original)
    else:
        repo.playbook_path.unlink(missing_ok=True)
    if entry is not None:
        git.restore_index_entry(repo.root, entry)
    else:
        git.unstage(repo.root, [repo.playbook_rel])
