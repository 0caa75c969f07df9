"""Committing files through a temporary index, with a journal so a killed write leaves
nothing behind (issue 15).

A write that is killed (``kill -9``, a power cut) can stop anywhere: after some files
are written, after the commit object is made, after HEAD moved but before git's real
index learnt the new entries. Before the first byte is written, the write records what
it is about to do in ``.scarwarden/write-journal.json``: each file, the SHA-256 of the
content it will hold and its index entry before. The next writer (under the same write
lock, so the dead one is not running) reads the journal and:

* if the commit landed (HEAD contains it): sets the real index's entries the dead run
  did not get to (only where the user has not staged something else since);
* otherwise: puts back each file that still holds exactly what the dead run wrote
  (removed if it was new or absent, its indexed content restored if it existed), so the
  working tree is as before the run.

Then it deletes the journal. Git's real index and refs are only touched by
:func:`scarwarden.git.index_commit.land`, which cannot leave a lock behind when we are
killed (see there).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scarwarden import git
from scarwarden.errors import GitError
from scarwarden.files.atomic import atomic_write, held_lock_fds, remove_dead_temps, write_lock
from scarwarden.git import index_commit
from scarwarden.git.index_commit import Check
from scarwarden.git.temps import remove_dead_temporaries
from scarwarden.repo import MemoryRepo

JOURNAL = "write-journal.json"

#: The journal as read from JSON: ``pid``, ``files`` (``path``, ``sha256``, ``before``:
#: [mode, blob] or absent, ``was``: the blob of bytes the index did not hold, or absent,
#: ``absent``: true when the index has the file but the working tree did not),
#: then ``commit`` and ``entries`` ([mode, blob, path]), or ``staged`` (the same, for
#: ``--no-commit``).
Journal = dict[str, Any]


@dataclass(frozen=True)
class Planned:
    """A file a write is about to put in the working tree."""

    path: str
    data: bytes


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _journal_path(repo: MemoryRepo) -> Path:
    return repo.state_dir / JOURNAL


def _save(repo: MemoryRepo, record: Journal) -> None:
    repo.state_dir.mkdir(parents=True, exist_ok=True)
    ignore = repo.state_dir / ".gitignore"  # the state folder is never committed
    if not ignore.exists():
        ignore.write_text("*\n")
    atomic_write(_journal_path(repo), json.dumps(record).encode("utf-8"))


def begin(repo: MemoryRepo, planned: Sequence[Planned], *, new: bool = False) -> Journal:
    """Record the files about to be written (before writing any of them). ``new``: the
    caller knows git's index has none of them (new episodes), so none is looked up."""
    paths = [p.path for p in planned]
    befores = {e.path: e for e in git.ls_files_stage(repo.root, *paths)} if paths and not new else {}
    was = {} if new else _worktree_blobs(repo, paths)
    files = []
    for item in planned:
        before = befores.get(item.path)
        entry: dict[str, Any] = {"path": item.path, "sha256": _sha256(item.data)}
        if before is not None:
            entry["before"] = [before.mode, before.blob]
        if item.path in was and (before is None or was[item.path] != before.blob):
            entry["was"] = was[item.path]
        elif before is not None and not os.path.lexists(repo.root / item.path):
            entry["absent"] = True  # the user deleted it: a roll-back must not bring it back
        files.append(entry)
    record: Journal = {"pid": os.getpid(), "files": files}
    _save(repo, record)
    return record


def _worktree_blobs(repo: MemoryRepo, paths: Sequence[str]) -> dict[str, str]:
    """The files about to be overwritten whose bytes git's index does not hold (an
    untracked ``.gitignore``, unstaged edits to ``AGENTS.md``), stored as blobs, so a
    roll-back puts back those bytes, not the index's."""
    present = [p for p in paths if (repo.root / p).is_file()]
    return dict(zip(present, git.store_files(repo.root, present), strict=True))


def add_files(repo: MemoryRepo, record: Journal, planned: Sequence[Planned]) -> None:
    """Add files to the journal of a write under way (media stored after the start)."""
    files = record["files"]
    assert isinstance(files, list)
    files += [{"path": p.path, "sha256": _sha256(p.data)} for p in planned]
    _save(repo, record)


def clear(repo: MemoryRepo) -> None:
    _journal_path(repo).unlink(missing_ok=True)


def commit(
    repo: MemoryRepo,
    record: Journal,
    message: str,
    paths: Sequence[str],
    *,
    check: Check | None = None,
    allow_empty: bool = False,
    contents: Mapping[str, bytes] | None = None,
    staged: Mapping[str, bytes | None] | None = None,
    modes: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """Commit HEAD plus the working-tree content of ``paths`` (or ``contents``, and
    ``staged`` left in git's index, with ``modes``: see :func:`index_commit.prepare_commit`)
    without taking git's real index (see :mod:`scarwarden.git.index_commit`); return the
    new commit."""
    prepared = index_commit.prepare_commit(
        repo.root,
        message,
        paths,
        check=check,
        allow_empty=allow_empty,
        contents=contents,
        staged=staged,
        modes=modes,
    )
    record["commit"] = prepared.sha
    record["entries"] = [[e.mode, e.blob, e.path] for e in prepared.index_entries]
    _save(repo, record)
    indexed = index_commit.land(repo.root, prepared, keep_fds=held_lock_fds())
    index_commit.post_commit(repo.root, prepared)
    if indexed:
        clear(repo)  # else the next writer sets the index entries (see recover)
    else:
        _index_waits(prepared)
    return prepared.sha


def _index_waits(prepared: index_commit.PreparedCommit) -> None:
    """Say that the commit landed but git's real index still holds its files as they
    were: until the next write sets them, `git status` lists them (a new one deleted and
    untracked), and a plain `git commit` would record that undoing."""
    from scarwarden.logs import log

    log.warning(_waits_message(prepared.sha, prepared.where.gitdir / "index.lock"))


def _waits_message(sha: str, lock: Path) -> str:
    import shlex

    return (
        f"committed {sha[:10]}, but git's index is locked ({lock} exists): it still "
        "holds the files committed as they were, so 'git status' lists them until the next "
        "scarwarden write updates it; if no git command is running, remove the lock: "
        f"rm {shlex.quote(str(lock))}"
    )


def index_waiting(repo: MemoryRepo) -> str | None:
    """What :func:`commit` warned of, while it is still so: the journal names a commit
    that landed whose entries git's real index does not hold yet; else ``None``. For a
    door that shows the warning elsewhere than on stderr (the web pages)."""
    try:
        record = json.loads(_journal_path(repo).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    sha, head = record.get("commit"), git.head(repo.root)
    if not (sha and head and git.is_ancestor(repo.root, sha, head)):
        return None
    entries = {tuple(e) for e in record.get("entries", [])}
    now = {(e.mode, e.blob, e.path) for e in git.ls_files_stage(repo.root, *[p for _, _, p in entries])}
    held = {p for _, _, p in now}  # mode 0: no entry (a deletion the user staged stays so)
    if all(e in now or (e[0] == "0" and e[2] not in held) for e in entries):
        return None
    lock = git.git_dir(repo.root) / "index.lock"
    if not lock.exists():  # released since: the next write sets the entries
        return (
            f"committed {sha[:10]}, but git's index was locked and still holds the files committed "
            "as they were, so 'git status' lists them until the next scarwarden write updates it"
        )
    return _waits_message(sha, lock)


def stage(repo: MemoryRepo, record: Journal, paths: Sequence[str], *, check: Check | None = None) -> None:
    """``--no-commit``: set git's index entries for ``paths`` (as ``git add`` would) in
    one step a kill cannot cut in half; the journal names them first, so the next
    writer knows whether they landed (then the files stay) or not (then they go).
    ``check`` judges HEAD plus these entries first (in a private index)."""
    entries = index_commit.entries_of(repo.root, paths)
    if check is not None:
        index_commit.check_entries(repo.root, entries, check)
    record["staged"] = [[e.mode, e.blob, e.path] for e in entries]
    _save(repo, record)
    index_commit.stage(repo.root, entries, keep_fds=held_lock_fds())
    clear(repo)


def recover_interrupted(repo: MemoryRepo) -> str | None:
    """:func:`recover` under the write lock, for a command that checks the working tree
    before it takes the lock itself (distill, sync); free when there is no journal."""
    if not _journal_path(repo).exists():
        return None
    with write_lock(repo):
        return recover(repo)


def recover(repo: MemoryRepo) -> str | None:
    """Finish or undo a write that was killed; call with the write lock held. Returns
    what was done ("rolled forward", "rolled back") or None when there was nothing."""
    path = _journal_path(repo)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        record = None
    # A killed write may have left its staging shell's entries file (or its private
    # index) in the git directory, and this run may commit nothing to tidy them.
    remove_dead_temporaries(git.git_dir(repo.root))
    if record is None:
        path.unlink(missing_ok=True)  # half a journal: its write never started writing
        return None
    sha = record.get("commit")
    head = git.head(repo.root)
    if sha and head and git.is_ancestor(repo.root, sha, head):
        _roll_forward(repo, record)
        done = "rolled forward"
    elif record.get("staged") and _staged(repo, record["staged"]):
        done = "rolled forward"  # --no-commit's staging landed: the files stay, staged
    else:
        _roll_back(repo, record)
        done = "rolled back"
    clear(repo)
    return done


def _staged(repo: MemoryRepo, entries: list[list[str]]) -> bool:
    """Whether git's index holds ``entries`` ([mode, blob, path]): one ``update-index``
    set them all, so all or none; not when git cannot read the index (none landed there)."""
    try:
        listed = git.ls_files_stage(repo.root, *[p for _, _, p in entries])
    except GitError:
        return False
    now = {(e.mode, e.blob, e.path) for e in listed}
    return all(tuple(e) in now for e in entries)


def _roll_forward(repo: MemoryRepo, record: Journal) -> None:
    """The commit landed: set the index entries the killed run did not set, where the
    index still holds what it held before (the user may have staged since)."""
    entries = [git.StagedEntry(m, b, p) for m, b, p in record.get("entries", [])]
    befores = {f["path"]: tuple(f.get("before") or ()) for f in record.get("files", [])}
    now = {e.path: (e.mode, e.blob) for e in git.ls_files_stage(repo.root, *[e.path for e in entries])}
    todo = [e for e in entries if e.path not in now or now[e.path] == befores.get(e.path, ())]
    index_commit.refresh_entries(repo.root, [e for e in todo if now.get(e.path) != (e.mode, e.blob)])


def _roll_back(repo: MemoryRepo, record: Journal) -> None:
    """The commit never landed: put back each file still holding what the run wrote
    (its bytes before the run: ``was``, else the index's blob; removed if it was new or
    absent),
    and remove the temporary files its interrupted writes left in those folders."""
    folders: set[Path] = set()
    for item in record.get("files", []):
        target = repo.root / item["path"]
        if target.parent not in folders and target.parent.is_dir():
            remove_dead_temps(target.parent)  # else the folder a new file needed stays
        folders.add(target.parent)
        before = None if item.get("absent") else item.get("was") or (item.get("before") or [None, None])[1]
        try:
            ours = _sha256(target.read_bytes()) == item["sha256"]
        except OSError:
            ours = False  # never written, or gone
        if ours and before:
            (content,) = git.cat_file_batch(repo.root, [before])
            if content is not None:
                atomic_write(target, content)
        elif ours:
            target.unlink()
        if not before:
            _remove_empty_dirs(repo, target.parent)  # the folders a new file needed


def _remove_empty_dirs(repo: MemoryRepo, folder: Path) -> None:
    stop = repo.memory_dir
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()  # only succeeds when empty
        except OSError:
            break
        folder = folder.parent
