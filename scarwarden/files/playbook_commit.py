"""Committing a playbook change: the one way ``rule add`` and ``distill`` land theirs.

The new playbook is written atomically; with a message it is committed alone, together
with any other paths the caller names, through a temporary index
(:mod:`scarwarden.files.write_journal`): whatever else the user had staged stays staged
and out of the commit, and git's real index is never locked while a kill could leave
the lock behind. A caller's ``check`` (the provenance gate: this package may not import
it, so the caller passes it) and the commit hooks judge the exact tree about to be
committed, in that index, before HEAD moves. Without a message the playbook is staged.

On any failure (the check refuses, a hook rejects the commit, git is misconfigured) the
file is put back as it was and git's index is not touched (staging, too, is one step
that lands whole or not at all): a refused change leaves the repository as it found it.
The caller holds the write lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from scarwarden import git
from scarwarden.errors import UsageError
from scarwarden.files import write_journal
from scarwarden.files.atomic import atomic_write
from scarwarden.files.write_journal import Planned
from scarwarden.regular_files import read_regular
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
    write_journal.recover(repo)
    if refuse_edits is not None and playbook_has_edits(repo):
        raise refuse_edits
    try:
        original: bytes | None = read_regular(repo.playbook_path)  # a FIFO: refused, never waited on
    except FileNotFoundError:
        original = None
    # A killed run is finished or undone by the next writer from this journal, which
    # restores the playbook's bytes as they were (an unstaged edit's too).
    record = write_journal.begin(repo, [Planned(repo.playbook_rel, data)])
    try:
        atomic_write(repo.playbook_path, data)
    except BaseException:
        write_journal.recover(repo)  # not written (a read-only folder): nothing to undo, no journal left
        raise
    if message is None:
        try:
            write_journal.stage(repo, record, [repo.playbook_rel])  # as git add, a kill cannot cut it
        except BaseException:
            if write_journal.recover(repo) != "rolled forward":
                _restore_file(repo, original)  # git's index was not touched
            raise
        return None
    try:
        # Committed through a temporary index: ``check`` and the commit hooks judge the
        # exact tree committed, and git's real index is never locked while we could be
        # killed (see scarwarden.git.index_commit).
        return write_journal.commit(
            repo, record, message, [repo.playbook_rel, *also], check=check, allow_empty=allow_empty
        )
    except BaseException:
        if write_journal.recover(repo) != "rolled forward":
            _restore_file(repo, original)  # git's index was not touched
        raise


def _restore_file(repo: MemoryRepo, original: bytes | None) -> None:
    if original is not None:
        atomic_write(repo.playbook_path, original)
    else:
        repo.playbook_path.unlink(missing_ok=True)
