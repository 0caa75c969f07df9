"""Setting git's real index entries in a step a kill cannot cut in half (see
:mod:`scarwarden.git.index_commit`): a small shell in a session of its own, which
retries ``update-index`` while another git command holds the index.

The entries go to git on stdin (``update-index -z --index-info``), never on the command
line: a batch of ~18k files passed as ``--cacheinfo`` arguments was more than Linux lets
a command line hold ("Argument list too long"). The shell must read them again on each
try, so they are written first to a file in the git directory, named with our PID
(:data:`~scarwarden.git.temps.LIST_PREFIX`: a killed run's file is removed by the next
run) and removed when the shell is done.

How long it waits for the index is ``SCARWARDEN_INDEX_LOCK_WAIT`` (seconds, default 2:
more on a slow disk, where another git command may hold the index longer; 0 tries once),
checked before the shell starts (:func:`lock_tries`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from scarwarden.errors import ConfigError, GitError
from scarwarden.git.read import StagedEntry
from scarwarden.git.repository import git_dir
from scarwarden.git.run import lock_hint, run
from scarwarden.git.temps import LIST_PREFIX, temp_name

#: ``--no-commit``'s staging: ``update-index`` tried ``$SW_TRIES`` times, 0.1 s apart,
#: while another git command holds the index (exit 4 then: ~2 s by default,
#: :func:`lock_tries`); also the end of :data:`LAND`. The entries are read from the file
#: ``$SW_LIST`` (:func:`index_info`); setting an entry clears its flags, so those it had
#: are set again, in the same try: the paths in ``$SW_SKIP`` and ``$SW_VALID``, if any
#: (:func:`index_flags`).
STAGE = """
i=0
while [ $i -lt "$SW_TRIES" ]; do
  git update-index --add -z --index-info < "$SW_LIST" &&
    { [ ! -s "$SW_SKIP" ] || git update-index --skip-worktree -z --stdin < "$SW_SKIP"; } &&
    { [ ! -s "$SW_VALID" ] || git update-index --assume-unchanged -z --stdin < "$SW_VALID"; } &&
    exit 0
  i=$((i + 1)); [ $i -lt "$SW_TRIES" ] && sleep 0.1
done
exit 4
"""

#: The variable giving the wait for git's index, its default and its largest value (s).
LOCK_WAIT_VAR = "SCARWARDEN_INDEX_LOCK_WAIT"
LOCK_WAIT = 2.0
MAX_LOCK_WAIT = 3600.0

#: update-ref, then the real index: the private index swapped in when it started as the
#: real one and the real one is unchanged (same inode, under git's own index.lock, taken
#: with O_EXCL through ``set -C``), else our entries set by :data:`STAGE`. Exit 3 when the
#: ref did not move, 4 when it moved but the index stayed locked by another git command
#: for the whole wait (the journal fixes it later).
LAND = (
    """
git update-ref -m "$1" HEAD "$2" "$3" || exit 3
shift 3
idx=$SW_REAL_INDEX
if [ -n "$SW_INODE" ] && (set -C; : > "$idx.lock") 2>/dev/null; then
  now=$(ls -i "$idx" 2>/dev/null | awk '{print $1}')
  if [ "$now" = "$SW_INODE" ] && mv -f "$SW_PRIVATE" "$idx.lock" && mv -f "$idx.lock" "$idx"; then
    exit 0
  fi
  rm -f "$idx.lock"
fi
"""
    + STAGE
)


def lock_tries(environ: Mapping[str, str]) -> int:
    """How many times :data:`STAGE` tries ``update-index`` (0.1 s apart): one, plus one
    per 0.1 s of ``SCARWARDEN_INDEX_LOCK_WAIT`` (unset or empty: 2 s). A value that is
    not a number of seconds from 0 to 3600 is refused here, before git's index or HEAD
    is touched, so the write is undone by its caller and nothing is left."""
    import math

    text = environ.get(LOCK_WAIT_VAR, "")
    if not text:
        return 1 + round(LOCK_WAIT * 10)
    try:
        wait = float(text)
    except ValueError:
        wait = math.nan
    if not (0 <= wait <= MAX_LOCK_WAIT):  # NaN too
        raise ConfigError(
            f"{LOCK_WAIT_VAR} must be a number of seconds from 0 to {MAX_LOCK_WAIT:g}, got {text[:40]!r}; "
            "nothing was written",
            hint=f"how long a write waits for git's index while another git command holds it "
            f"(default {LOCK_WAIT:g} seconds): fix it (e.g. {LOCK_WAIT_VAR}=10) or unset it",
        )
    return 1 + round(wait * 10)


def index_info(entries: Sequence[StagedEntry]) -> bytes:
    """``entries`` as ``update-index -z --index-info`` reads them ("MODE SP SHA TAB PATH\\0")."""
    return b"".join(f"{e.mode} {e.blob}\t".encode() + os.fsencode(e.path) + b"\0" for e in entries)


#: The paths git's index marks skip-worktree, and those it marks assume-unchanged.
Flags = tuple[Sequence[str], Sequence[str]]


def index_flags(root: Path | str, paths: Sequence[str]) -> Flags:
    """The flags git's real index holds for ``paths`` (``ls-files -v``: tag ``S``, and a
    lowercase tag), which setting their entries would clear (``update-index`` makes a new
    entry). Many paths are matched here, not as pathspecs: git matches each entry against
    each pathspec (2 s for 18k paths)."""
    wanted = set(paths)
    if not wanted:
        return (), ()
    few = len(wanted) <= 64
    try:
        out = run(root, "ls-files", "-v", "-z", *(["--", *(f":(literal){p}" for p in wanted)] if few else []))
    except GitError as error:  # an index a newer git wrote, or a damaged one: git refuses it too
        raise GitError(
            f"git's index cannot be read, so nothing was committed or staged: {error.message}",
            hint=error.hint
            or "'git status' says the same; if a newer git wrote it, use that git; else rebuild "
            "it from HEAD with 'git read-tree HEAD' (what was staged is lost)",
        ) from None
    skip, valid = [], []
    for item in out.split(b"\0"):
        tag, path = item[:1].decode("ascii", "replace"), os.fsdecode(item[2:])
        if path in wanted:
            skip += [path] if tag in "Ss" else []
            valid += [path] if tag.islower() else []
    return skip, valid


def run_script(
    root: Path | str,
    gitdir: Path,
    script: str,
    args: Sequence[str],  # $0 (the script's name in its messages), $1...
    entries: Sequence[StagedEntry],
    *,
    env: Mapping[str, str] | None = None,
    keep_fds: Sequence[int] = (),
    flags: Flags = ((), ()),
) -> tuple[int, bytes, bytes]:
    """Run ``script`` (:data:`STAGE`, :data:`LAND`) with ``entries`` in ``$SW_LIST``, and
    the paths whose ``flags`` it sets again, in a session of its own; its exit status,
    stdout and stderr."""
    environ = os.environ if env is None else env
    tries = lock_tries(environ)
    listing = temp_name(gitdir, LIST_PREFIX)
    lists = {"SW_LIST": listing, "SW_SKIP": "", "SW_VALID": ""}
    try:
        Path(listing).write_bytes(index_info(entries))
        for var, paths in zip(("SW_SKIP", "SW_VALID"), flags, strict=True):
            if paths:
                lists[var] = temp_name(gitdir, LIST_PREFIX)
                Path(lists[var]).write_bytes(b"".join(os.fsencode(p) + b"\0" for p in paths))
        proc = subprocess.Popen(
            ["sh", "-c", script, *args],
            cwd=str(root),
            env={**environ, **lists, "SW_TRIES": str(tries)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a kill of our process group must not kill git mid-lock
            pass_fds=tuple(keep_fds),
        )
        out, err = _finish(proc)
    finally:
        for name in lists.values():
            if name:
                Path(name).unlink(missing_ok=True)
    return proc.returncode, out, err


def _finish(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Wait for ``proc`` even through Ctrl-C (its steps take milliseconds and leave the
    repository whole), then re-raise the interrupt."""
    interrupted = False
    while True:
        try:
            out, err = proc.communicate()
            break
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        raise KeyboardInterrupt
    return out, err


def stage(root: Path | str, entries: Sequence[StagedEntry], *, keep_fds: Sequence[int] = ()) -> None:
    """Set ``entries`` in git's real index (``--no-commit``), as a step a kill cannot cut
    in half: one ``update-index`` in a session of its own, holding the caller's write
    lock (see :func:`scarwarden.git.index_commit.land`), so a kill of the command cannot
    leave ``index.lock``."""
    flags = index_flags(root, [e.path for e in entries])
    code, out, err = run_script(
        root, git_dir(root), STAGE, ["stage"], entries, keep_fds=keep_fds, flags=flags
    )
    if code != 0:
        detail = (out + err).decode("utf-8", "replace").strip()
        raise GitError(
            "git could not stage the files written" + (f":\n{detail}" if detail else ""),
            hint=lock_hint(detail) or "nothing was staged; the files written were put back",
        )


def refresh_entries(root: Path | str, entries: Sequence[StagedEntry]) -> None:
    """Set the real index's entries for ``entries`` (used when a killed run's commit
    landed but its index update did not), with the flags they had (:func:`index_flags`)."""
    if entries:
        flags = index_flags(root, [e.path for e in entries])
        run(root, "update-index", "--add", "-z", "--index-info", input=index_info(entries))
        for option, paths in zip(("--skip-worktree", "--assume-unchanged"), flags, strict=True):
            if paths:
                run(
                    root,
                    "update-index",
                    option,
                    "-z",
                    "--stdin",
                    input=b"".join(os.fsencode(p) + b"\0" for p in paths),
                )
