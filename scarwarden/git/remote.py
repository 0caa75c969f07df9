"""Talking to a remote and integrating what it has (``scarwarden sync``)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scarwarden.errors import GitError
from scarwarden.git.index_commit import in_progress
from scarwarden.git.repository import git_dir
from scarwarden.git.run import own_session, run, run_ok


def remote_url(root: Path | str, remote: str) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(root), "remote", "get-url", remote],
        capture_output=True,
        start_new_session=own_session(),
    )
    return os.fsdecode(proc.stdout).strip() if proc.returncode == 0 else None


def _unit(
    root: Path | str,
    script: str,
    *args: str,
    keep_fds: Sequence[int] = (),
    env: Mapping[str, str] | None = None,
    reads_only: bool = False,
) -> tuple[int, str]:
    """Run a git step as a unit that a kill of our process group cannot cut in half: a
    small shell in a session of its own (given ``keep_fds``, the caller's write lock, so
    the next writer waits for it). A killed ``git rebase`` or ``merge`` would leave the
    operation half-done and ``index.lock`` behind; this one finishes, or aborts itself on
    a conflict, in the same unit (issue 15). ``env``: the whole environment, if not
    ours. ``reads_only``: a step that changes nothing here (reading a remote, fetching
    into a quarantine), which Ctrl-C stops at once: a remote that never answers would
    hold it for ever. (exit code, stdout + stderr)."""
    code, out, _ = _spawn(root, script, args, keep_fds, subprocess.STDOUT, env, reads_only)
    return code, out


def _spawn(
    root: Path | str,
    script: str,
    args: Sequence[str],
    keep_fds: Sequence[int],
    stderr: int,
    env: Mapping[str, str] | None = None,
    reads_only: bool = False,
) -> tuple[int, str, str]:
    """:func:`_unit`, with stderr merged into stdout or apart. (exit code, stdout, stderr)."""
    proc = subprocess.Popen(
        ["sh", "-c", script, "sync", *args],
        cwd=str(root),
        stdout=subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
        pass_fds=tuple(keep_fds),
        # As every other git command of ours (run.NO_REPLACE): a rebase or a push must
        # move the commits stored, never a replacement's view of them.
        env={**(os.environ if env is None else env), "GIT_NO_REPLACE_OBJECTS": "1"},
    )
    interrupted = False
    while True:
        try:
            out, err = proc.communicate()
            break
        except KeyboardInterrupt:  # let the unit finish: it leaves the repository whole
            interrupted = True
            if reads_only:  # nothing to leave whole: stop it (its own session: the group)
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.killpg(proc.pid, signal.SIGTERM)
    if interrupted:
        raise KeyboardInterrupt
    text = out.decode("utf-8", "replace").strip()
    return proc.returncode, text, (err or b"").decode("utf-8", "replace").strip()


def set_remote_branch(root: Path | str, remote: str, branch: str, sha: str) -> None:
    """Point the remote-tracking branch ``<remote>/<branch>`` at ``sha``, as a fetch does
    (a forced update: it names whatever the remote has), once sync has fetched ``sha`` and
    judged it (:func:`fetch_commits`, which writes no ref)."""
    ref = f"refs/remotes/{remote}/{branch}"
    run(root, "update-ref", "-m", f"sync: fetch {remote} {branch}", ref, sha)


def fast_forward(root: Path | str, target: str, *, keep_fds: Sequence[int] = ()) -> tuple[bool, str]:
    """Move the current branch (and work tree) to ``target`` if it is a fast-forward; if
    git updated the work tree and index but not the branch (a reference-transaction hook
    refused the move), put them back at HEAD (sync starts from a clean tree, so nothing
    of the user's is there to lose). (ok, git's message)."""
    script = 'git merge -q --ff-only "$1" && exit 0; git reset -q --merge HEAD >/dev/null 2>&1; exit 1'
    code, message = _unit(root, script, target, keep_fds=keep_fds)
    return code == 0, "" if code == 0 else message


def rebase_onto(root: Path | str, upstream: str, *, keep_fds: Sequence[int] = ()) -> tuple[bool, str]:
    """Rebase the current branch onto ``upstream``; on a conflict abort, so the branch,
    index and work tree are as they were. (ok, git's message)."""
    script = 'git rebase -q "$1" && exit 0; git rebase --abort; exit 1'
    code, message = _unit(root, script, upstream, keep_fds=keep_fds)
    return code == 0, "" if code == 0 else message


def merge_commit(
    root: Path | str, other: str, message: str, *, keep_fds: Sequence[int] = ()
) -> tuple[bool, str]:
    """Merge ``other`` into the current branch with a merge commit; on a conflict abort.
    (ok, git's message)."""
    script = 'git merge -q --no-ff -m "$2" "$1" && exit 0; git merge --abort; exit 1'
    code, detail = _unit(root, script, other, message, keep_fds=keep_fds)
    return code == 0, "" if code == 0 else detail


@dataclass(frozen=True)
class PushRefused:
    """How ``git push --porcelain`` reported our ref: its status line, which git writes,
    never the text the remote printed (a hook may print anything, "failed to update ref"
    too: git shows it as ``remote: ...``, apart from the status)."""

    #: "rejected" (refused here before sending: the remote has commits we lack),
    #: "remote rejected" (the server refused: a hook, a ref it could not update), or ""
    #: (no status line: a pre-push hook, no connection).
    status: str
    #: Git's reason in the status: "fetch first", "pre-receive hook declined", ...
    reason: str
    #: What git said, in one line ("[remote rejected] HEAD -> main (hook declined)").
    said: str

    @property
    def remote_was_ahead(self) -> bool:
        """The remote's branch had moved on when the push started: another clone pushed."""
        return self.status == "rejected" and self.reason in _BEHIND


#: The reasons of a ``[rejected]`` push whose branch is behind the remote's.
_BEHIND = ("fetch first", "non-fast-forward", "stale info")
_STATUS_RE = re.compile(r"\[(?P<status>[^\]]+)\](?: \((?P<reason>.*)\))?")


def push_branch(
    root: Path | str, remote: str, branch: str, *, keep_fds: Sequence[int] = ()
) -> PushRefused | None:
    """Push HEAD to ``remote``'s ``branch``: ``None`` when it was pushed, else how git
    says it was refused."""
    script = 'git push -q --porcelain "$1" "HEAD:refs/heads/$2"'
    code, out, err = _spawn(root, script, (remote, branch), keep_fds, subprocess.PIPE)
    ref = f"refs/heads/{branch}"
    for line in out.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0] == "!" and fields[1].endswith(f":{ref}"):
            match = _STATUS_RE.fullmatch(fields[2])
            if match:
                status, reason = match["status"], match["reason"] or ""
                said = f"[{status}] {fields[1].partition(':')[0]} -> {branch}" + (
                    f" ({reason})" if reason else ""
                )
                return PushRefused(status, reason, said)
    if code == 0:
        return None
    # No status for our ref: refused before it left (a pre-push hook: the gate's own
    # report is what to show, in full), or no connection (git's one line).
    kept = [
        line for line in (err or out).splitlines() if line.strip() and "failed to push some refs" not in line
    ]
    return PushRefused("", "", "\n".join(kept) if len(kept) > 1 else first_error(err or out))


def first_error(message: str) -> str:
    """Git's first error in one line (a hook's, a connection's), else its last line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    errors = [
        line for line in lines if line.startswith(("fatal:", "error:")) and "failed to push" not in line
    ]
    if errors:
        return errors[0].partition(":")[2].strip()
    return lines[-1] if lines else "git gave no reason"


def remote_branches(root: Path | str, remote: str) -> dict[str, str]:
    """The branches ``remote`` has, by name, with the commit each names there."""
    code, out, err = _spawn(
        root, 'git ls-remote --heads "$1"', (remote,), (), subprocess.PIPE, reads_only=True
    )
    if code != 0:
        raise GitError(
            f"cannot read the remote {remote}: {_unreadable(err or out)}; nothing was changed "
            "here, nothing pushed",
            hint=f"check its URL (git remote get-url {remote}) and that it is reachable, then sync again",
        )
    pairs = (line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    return {ref.removeprefix("refs/heads/"): sha for sha, ref in pairs}


def _unreadable(message: str) -> str:
    """Why git could not read a remote, in one line: its first line but git's closing
    boilerplate ("Could not read from remote repository", "Please make sure..."), which
    follows the reason (ssh's, the server's) and says nothing of its own."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    said = [
        line
        for line in lines
        if "could not read from remote repository" not in line.lower()
        and not line.startswith(("Please make sure", "and the repository exists"))
    ]
    return (said[0].removeprefix("fatal: ") if said else first_error(message)).rstrip(".")


def remote_tags(root: Path | str, remote: str) -> dict[str, str]:
    """The tags ``remote`` has, by name, each with the commit it names there (an
    annotated tag peeled to its commit: git lists that as ``<tag>^{}`` after the tag)."""
    out = run(root, "ls-remote", "--tags", remote).decode()
    tags: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        name = ref.removeprefix("refs/tags/")
        if name.endswith("^{}"):
            tags[name[:-3]] = sha
        elif name:
            tags.setdefault(name, sha)
    return tags


def fetch_commits(
    root: Path | str,
    remote: str,
    refs: Sequence[str],
    *,
    keep_fds: Sequence[int] = (),
    env: Mapping[str, str] | None = None,
) -> None:
    """Fetch the commits of ``remote``'s ``refs`` (``refs/heads/main``, ``refs/tags/v1``)
    without writing any ref: no remote-tracking branch (``--refmap=``), no ``FETCH_HEAD``;
    only objects, into a quarantine given its ``env`` (:mod:`scarwarden.git.quarantine`).
    No automatic gc after it: it would pack the quarantine, not our store."""
    script = 'r="$1"; shift; git fetch -q --no-tags --no-write-fetch-head --no-auto-gc --refmap= "$r" "$@"'
    code, message = _unit(root, script, remote, *refs, keep_fds=keep_fds, env=env, reads_only=env is not None)
    if code != 0:
        raise GitError(f"git fetch {remote} failed: {message}")


def commit_exists(root: Path | str, sha: str, *, env: Mapping[str, str] | None = None) -> bool:
    """Whether the commit ``sha`` is here (``env``: a quarantine's, to look in it too)."""
    return run_ok(root, "cat-file", "-e", f"{sha}^{{commit}}", env=env)


def reset_keep(root: Path | str, target: str, *, keep_fds: Sequence[int] = ()) -> tuple[bool, str]:
    """Move the current branch, index and work tree back to ``target`` (``git reset
    --keep``: it refuses rather than overwrite a local change). (ok, git's message)."""
    code, message = _unit(root, 'git reset -q --keep "$1"', target, keep_fds=keep_fds)
    return code == 0, message


def operation_in_progress(root: Path | str) -> str | None:
    """A merge, rebase, cherry-pick or revert that git has not finished, by name."""
    return in_progress(git_dir(root))


def tracked_changes(root: Path | str) -> list[str]:
    """Tracked files changed in the work tree or the index (untracked ones ignored)."""
    out = run(root, "status", "--porcelain", "--untracked-files=no").decode()
    return [line[3:] for line in out.splitlines() if line]
