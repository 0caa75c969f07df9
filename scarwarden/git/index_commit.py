"""Committing without git's real index: a temporary index file, then a compare-and-swap.

``git commit`` takes ``.git/index.lock`` for the whole commit (hooks included), and a
``kill -9`` at the wrong moment leaves it behind: every later command that takes the
index then fails until someone removes it by hand (measured: 2 of 30 kills of a distill,
issue 15). Our writes add a few files on top of HEAD, which needs no real index:

1. a private index file in the git directory, named with our PID (``read-tree HEAD``,
   then ``git add`` of the paths written), so a dead run's file is recognised and
   removed by the next one (:func:`scarwarden.git.temps.remove_dead_temporaries`);
2. the caller's check (the provenance gate) and the repository's ``pre-commit``,
   ``prepare-commit-msg`` and ``commit-msg`` hooks run on that index, exactly as
   ``git commit --only`` runs them on its own temporary index: no bypass;
3. ``write-tree`` and ``commit-tree`` make the commit object (nothing moves yet);
4. :func:`land`: ``update-ref HEAD new old`` (a compare-and-swap: it fails if HEAD moved;
   the ``reference-transaction`` hook gates it like any commit), then the real index's
   entries for the paths written are set to the committed blobs (``update-index
   --index-info``: the user's other staged changes are not touched). These are the two
   steps that take a lock git leaves behind when killed (``HEAD.lock`` or the branch's
   ``.lock``, then ``index.lock``), so they run as one small shell in a session of their
   own: killing the command, or its whole process group, does not kill them; they
   finish in milliseconds and release their locks. The caller passes the file
   descriptor of its write lock, which the shell inherits, so the next Scarwarden writer
   waits until they are done (the shell and its runner: :mod:`scarwarden.git.staging`).

The files layer keeps a journal of the write (``files/write_journal.py``) so that a run
killed anywhere (even by a power cut, when the shell dies too) is rolled forward or back
by the next one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scarwarden.errors import GitError
from scarwarden.git.read import StagedEntry
from scarwarden.git.run import NO_REPLACE, lock_hint, own_session, run, run_chunked, run_ok
from scarwarden.git.staging import LAND, Flags, index_flags, index_info, run_script
from scarwarden.git.staging import refresh_entries as refresh_entries  # re-exported for callers
from scarwarden.git.staging import stage as stage  # re-exported for callers
from scarwarden.git.temps import INDEX_PREFIX, MESSAGE_PREFIX, drop, remove_dead_temporaries, temp_name
from scarwarden.git.write import commit_tree

#: Judges the tree about to be committed, given the env selecting the private index.
Check = Callable[[Mapping[str, str]], None]
#: Where a commit whose check vouches for it (the gate's, at a write door: ``check.vouches``)
#: is marked in the git folder: a file named by its ID holding its parent's. The
#: reference-transaction hook lets that one move through without Python (issue 30).
DOOR_MARKS = "scarwarden/door"


@dataclass(frozen=True)
class PreparedCommit:
    """A commit object made but not yet on any branch."""

    sha: str
    #: HEAD when the commit was built (its parent), None on an unborn branch.
    old: str | None
    #: The committed entries of the paths written (mode, blob, path).
    entries: tuple[StagedEntry, ...]
    subject: str
    #: The private index (removed by :func:`land`).
    index: str
    #: The real index's inode when the private one started as it (the swap is allowed).
    inode: int | None
    where: Where
    #: An open descriptor of that inode: while it is open the number cannot be reused by
    #: a new real index, so "same inode" means "the same file" (closed by :func:`land`).
    pin: int | None = None
    #: What git's real index gets for those paths, when not ``entries`` (a staged version kept).
    staged: tuple[StagedEntry, ...] = ()
    #: The flags git's real index held for those paths, set again with their entries.
    flags: Flags = ((), ())

    @property
    def index_entries(self) -> tuple[StagedEntry, ...]:
        return self.staged or self.entries


def _private_index(
    root: Path | str, gitdir: Path, old: str | None, *, flagged: bool = False
) -> tuple[dict[str, str], int | None]:
    """A private index holding HEAD's tree; the env selecting it, and an open descriptor
    of the real index when the private one started as it (see below), else None.

    Fast path: when nothing is staged, git's real index *is* HEAD's tree, with its stat
    data and cache tree; a hard link to it costs nothing (git never writes an index in
    place: it writes ``<file>.lock`` and renames it, so the real file is untouched).
    :func:`land` then swaps the private index in as the real one, if no one changed the
    real one meanwhile. At 100k files this saves the ``read-tree`` (a full index
    write) and a full ``update-index`` of the real index. Otherwise (and when a path
    written is ``flagged`` there: ``update-index`` leaves a skip-worktree entry as it is,
    and the swap would drop its flag): ``read-tree HEAD``.
    """
    path = temp_name(gitdir, INDEX_PREFIX)
    os.unlink(path)  # git wants to create the index itself
    env = dict(os.environ)
    env["GIT_INDEX_FILE"] = path
    env["GIT_NO_REPLACE_OBJECTS"] = "1"  # what the hooks read is what is stored
    real = gitdir / "index"
    if old is not None and "GIT_INDEX_FILE" not in os.environ and not flagged:
        try:
            os.link(real, path)
            pin: int | None = os.open(path, os.O_RDONLY)
        except OSError:
            pin = None
        if pin is not None:
            # The copy itself is checked: a race with a `git add` cannot slip through.
            if run_ok(root, "diff-index", "--cached", "--quiet", old, env=env):
                return env, pin
            os.close(pin)
            os.unlink(path)
    if old is not None:
        run(root, "read-tree", old, env=env)
    return env, None


def in_progress(gitdir: Path) -> str | None:
    """A merge, rebase, cherry-pick or revert git has not finished (read from files:
    no process)."""
    for name, marker in (
        ("merge", "MERGE_HEAD"),
        ("rebase", "rebase-merge"),
        ("rebase", "rebase-apply"),
        ("cherry-pick", "CHERRY_PICK_HEAD"),
        ("revert", "REVERT_HEAD"),
    ):
        if (gitdir / marker).exists():
            return name
    return None


def prepare_commit(
    root: Path | str,
    message: str,
    paths: Sequence[str],
    *,
    check: Check | None = None,
    allow_empty: bool = False,
    contents: Mapping[str, bytes] | None = None,
    staged: Mapping[str, bytes | None] | None = None,
    modes: Mapping[str, tuple[str, str]] | None = None,
) -> PreparedCommit:
    """Build the commit of HEAD plus the working-tree content of ``paths`` in a private
    index; run ``check`` and the commit hooks on it; return it, not yet on a branch.
    ``contents``: the bytes committed for some of ``paths`` instead of the working
    tree's; ``staged``: those git's real index gets instead of the committed ones, None
    for none (a deletion the user staged; both for ``export --commit``, which commits its
    section only); ``modes``: the modes committed and given git's real index for some of
    ``paths`` instead of the disk's (HEAD's and the one staged: a chmod not committed)."""
    where = _where(root)
    gitdir = where.gitdir
    remove_dead_temporaries(gitdir)
    busy = in_progress(gitdir)
    if busy:
        raise GitError(
            f"a {busy} is in progress: committing now would mix it with this change",
            hint=f"finish it (git {busy} --continue, or git commit) or abort it (git {busy} --abort) first",
        )
    old = where.head
    flags = index_flags(root, paths)  # set again in git's index, after the commit
    env, pin = _private_index(root, gitdir, old, flagged=any(flags))
    try:
        blobs = _add(root, env, paths, contents or {}, modes or {})
        if check is not None:
            check(env)
        vouched = getattr(check, "vouches", False)
        hook_env = {**env, "SCARWARDEN_DOOR_CHECKED": env["GIT_INDEX_FILE"]} if vouched else env
        message = _run_commit_hooks(root, where, hook_env, message)
        tree = run(root, "write-tree", env=env).decode().strip()
        if not allow_empty and old is not None and tree == where.tree:
            raise GitError("nothing to commit: the files written are already committed as they are")
        sha = commit_tree(root, tree, [old] if old else [], message)
    except BaseException:
        drop(env["GIT_INDEX_FILE"])
        if pin is not None:
            os.close(pin)
        raise
    if old is not None and vouched:
        _mark(gitdir, sha, old)
    inode = None if pin is None or staged else os.fstat(pin).st_ino  # no swap: the index differs
    modes = modes or {}
    mode = {p: modes[p][0] if p in modes else _mode(Path(root) / p) for p in paths}  # committed
    entries = tuple(StagedEntry(mode[p], b, p) for p, b in zip(paths, blobs, strict=True))
    kept = {p: None if data is None else _blob(root, data) for p, data in (staged or {}).items()}
    index = tuple(_kept(e, kept, modes) for e in entries) if kept or modes else ()
    subject = message.split("\n", 1)[0]
    return PreparedCommit(sha, old, entries, subject, env["GIT_INDEX_FILE"], inode, where, pin, index, flags)


def _add(
    root: Path | str,
    env: Mapping[str, str],
    paths: Sequence[str],
    contents: Mapping[str, bytes],
    modes: Mapping[str, tuple[str, str]],
) -> list[str]:
    """Add ``paths`` to the private index ``env`` selects, from the working tree or, for
    a path in ``contents``, from those bytes (as they are: no filter), with the mode
    ``modes`` commits, if any; their blobs."""
    disk = [p for p in paths if p not in contents]
    found = run_chunked(root, ("hash-object", "--"), disk).decode().split() if disk else []
    blobs = dict(zip(disk, found, strict=True))
    blobs.update((p, _blob(root, data)) for p, data in contents.items() if p in paths)
    if disk:
        listing = b"".join(os.fsencode(p) + b"\0" for p in disk)
        run(root, "update-index", "--add", "-z", "--stdin", input=listing, env=env)
    for bit, mode in (("-x", "100644"), ("+x", "100755")):  # the disk's mode, not committed
        chmod = b"".join(os.fsencode(p) + b"\0" for p in disk if modes.get(p, ("",))[0] == mode)
        if chmod:
            run(root, "update-index", f"--chmod={bit}", "-z", "--stdin", input=chmod, env=env)
    given = [
        StagedEntry(modes[p][0] if p in modes else _mode(Path(root) / p), blobs[p], p)
        for p in paths
        if p in contents
    ]
    if given:
        run(root, "update-index", "--add", "-z", "--index-info", input=index_info(given), env=env)
    return [blobs[p] for p in paths]


def _kept(
    entry: StagedEntry, kept: Mapping[str, str | None], modes: Mapping[str, tuple[str, str]]
) -> StagedEntry:
    """What git's real index gets for the committed ``entry``: its blob, the one kept
    staged, or (None) no entry: mode 0 makes ``update-index --index-info`` remove it;
    with the mode kept staged, if ``modes`` gives one."""
    mode = modes[entry.path][1] if entry.path in modes else entry.mode
    if entry.path not in kept:
        return StagedEntry(mode, entry.blob, entry.path)
    blob = kept[entry.path]
    if blob is None:
        return StagedEntry("0", "0" * len(entry.blob), entry.path)
    return StagedEntry(mode, blob, entry.path)


def _blob(root: Path | str, data: bytes) -> str:
    return run(root, "hash-object", "-w", "--stdin", input=data).decode().strip()


def _mark(gitdir: Path, sha: str, old: str) -> None:
    """The door's mark for the move ``old`` -> ``sha`` (best effort: without it the hook
    runs the gate)."""
    try:
        (gitdir / DOOR_MARKS).mkdir(parents=True, exist_ok=True)
        (gitdir / DOOR_MARKS / sha).write_text(old + "\n")
    except OSError:
        pass


def _mode(path: Path) -> str:
    return "100755" if os.access(path, os.X_OK) else "100644"


@dataclass(frozen=True)
class Where:
    """The repository's facts a commit needs, from one ``git rev-parse``."""

    gitdir: Path
    #: The hooks folder (``core.hooksPath`` honoured).
    hooks: Path
    head: str | None
    tree: str | None

    def has_hook(self, name: str) -> bool:
        path = self.hooks / name
        return path.is_file() and os.access(path, os.X_OK)


def _where(root: Path | str) -> Where:
    """The git directory, hooks folder, HEAD and its tree in one process (each commit
    starts a dozen git processes; at 1k episodes their start-up is the cost)."""
    proc = subprocess.run(
        ["git", *NO_REPLACE, "-C", str(root), "rev-parse", "--absolute-git-dir", "--git-path", "hooks"]
        + ["HEAD^{commit}", "HEAD^{tree}", "--"],
        capture_output=True,
        start_new_session=own_session(),
    )
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) < 2:
        raise GitError("git rev-parse failed: " + proc.stderr.decode("utf-8", "replace").strip())
    hooks = Path(lines[1]) if Path(lines[1]).is_absolute() else Path(root) / lines[1]
    if proc.returncode != 0:  # an unborn branch: no HEAD yet
        return Where(Path(lines[0]), hooks, None, None)
    return Where(Path(lines[0]), hooks, lines[2], lines[3])


def _run_commit_hooks(root: Path | str, where: Where, env: Mapping[str, str], message: str) -> str:
    """``pre-commit``, ``prepare-commit-msg`` and ``commit-msg``, as ``git commit -F``
    runs them (``git hook run``: ``core.hooksPath`` honoured; missing hooks skipped
    without starting git). Returns the message as the hooks left it."""
    if where.has_hook("pre-commit"):
        _hook(root, env, "pre-commit")
    if not (where.has_hook("prepare-commit-msg") or where.has_hook("commit-msg")):
        return message
    path = temp_name(where.gitdir, MESSAGE_PREFIX)
    try:
        Path(path).write_bytes(message.encode("utf-8"))
        _hook(root, env, "prepare-commit-msg", path, "message")
        _hook(root, env, "commit-msg", path)
        return Path(path).read_bytes().decode("utf-8", "replace")
    finally:
        Path(path).unlink(missing_ok=True)


def _hook(root: Path | str, env: Mapping[str, str], name: str, *args: str) -> None:
    proc = subprocess.run(
        ["git", "-C", str(root), "hook", "run", "--ignore-missing", name, "--", *args],
        capture_output=True,
        env=dict(env),
        start_new_session=own_session(),
    )
    if proc.returncode != 0:
        detail = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
        raise GitError(
            f"git commit failed: the {name} hook refused the commit" + (f":\n{detail}" if detail else ""),
            hint="its message above says why; nothing was committed",
        )


def land(root: Path | str, prepared: PreparedCommit, *, keep_fds: Sequence[int] = ()) -> bool:
    """Move HEAD to the prepared commit if it is still at its parent, then bring the
    real index up to date for the committed paths. Returns False when HEAD moved but
    the real index could not be updated (another git command held it); raises when
    HEAD did not move (it moved meanwhile, or the reference-transaction hook refused).
    The private index is removed in every case."""
    reflog = f"commit: {prepared.subject}"
    env = dict(os.environ)
    env.update(
        SW_REAL_INDEX=str(prepared.where.gitdir / "index"),
        SW_INODE="" if prepared.inode is None else str(prepared.inode),
        SW_PRIVATE=prepared.index,
        GIT_NO_REPLACE_OBJECTS="1",
    )
    try:
        args = ["land", reflog, prepared.sha, prepared.old or ""]
        code, out, err = run_script(
            root,
            prepared.where.gitdir,
            LAND,
            args,
            prepared.index_entries,
            env=env,
            keep_fds=keep_fds,
            flags=prepared.flags,
        )
    finally:
        drop(prepared.index)
        (prepared.where.gitdir / DOOR_MARKS / prepared.sha).unlink(missing_ok=True)
        if prepared.pin is not None:
            os.close(prepared.pin)
    if code in (0, 4):
        return code == 0
    detail = (out + err).decode("utf-8", "replace").strip()
    if "cannot lock ref" in detail and "but expected" in detail:
        raise GitError(
            "HEAD moved while this commit was being made (another process committed); nothing was committed",
            hint="run the command again",
        )
    raise GitError(
        "git commit failed" + (f":\n{detail}" if detail else ""),
        hint=lock_hint(detail)
        or "if a hook refused the commit, its message above says why; nothing was committed",
    )


def post_commit(root: Path | str, prepared: PreparedCommit) -> None:
    """The ``post-commit`` hook, as git runs it: its failure changes nothing."""
    if not prepared.where.has_hook("post-commit"):
        return
    args = ["git", "-C", str(root), "hook", "run", "--ignore-missing", "post-commit"]
    subprocess.run(args, capture_output=True, start_new_session=own_session())


def entries_of(root: Path | str, paths: Sequence[str]) -> tuple[StagedEntry, ...]:
    """The index entries ``git add`` would make of ``paths`` (their blobs stored now:
    ``hash-object -w`` takes no lock)."""
    blobs = run_chunked(root, ("hash-object", "-w", "--"), paths).decode().split()
    return tuple(StagedEntry(_mode(Path(root) / p), b, p) for p, b in zip(paths, blobs, strict=True))


def check_entries(root: Path | str, entries: Sequence[StagedEntry], check: Check) -> None:
    """Run ``check`` on HEAD plus ``entries`` in a private index (``--no-commit``: what
    the staging would let a later ``git commit`` record is judged before it is staged)."""
    where = _where(root)
    remove_dead_temporaries(where.gitdir)
    path = temp_name(where.gitdir, INDEX_PREFIX)
    os.unlink(path)  # git wants to create the index itself
    env = dict(os.environ, GIT_INDEX_FILE=path, GIT_NO_REPLACE_OBJECTS="1")
    try:
        if where.head is not None:
            run(root, "read-tree", where.head, env=env)
        run(root, "update-index", "--add", "-z", "--index-info", input=index_info(entries), env=env)
        check(env)
    finally:
        drop(path)
