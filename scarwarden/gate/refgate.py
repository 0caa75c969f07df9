"""The gate on the doors ``pre-commit`` cannot see: ref updates and pushes.

``git revert``, ``cherry-pick``, ``rebase`` (a dropped or edited pick), ``am``, a
fast-forward ``merge``/``pull`` and ``commit-tree`` + ``update-ref`` run no pre-commit
hook (shared/NOTES.md). They all end by moving a branch, and git >= 2.28 runs the
``reference-transaction`` hook for every ref update, in state ``prepared`` before it
lands, with ``<old> <new> <ref>`` lines on stdin; a non-zero exit aborts the update.
``pre-push`` gets ``<local ref> <local sha> <remote ref> <remote sha>`` lines.

Both check only what the move adds: the commits of ``old..new``, each against its
parents and its own tree (the range check CI runs, secrets screened), so the cost
follows the change. A branch moving back to an ancestor (``reset``) adds nothing and is
not checked; nor is a deletion.

git gives a zero old value whenever the command did not say what it expected the ref
to be (``update-ref refs/heads/main NEW``, ``update-ref --stdin``, ``branch -f``,
``checkout -B``, ``switch -C``, ``branch -M``): the ref's current value is read instead,
so such a move is checked as a move. A branch that truly does not exist yet (and a push
to a branch the remote does not have) is checked for the commits no branch or
remote-tracking branch holds yet (``new --not --branches --remotes``; for a push, no
remote-tracking branch), screened: a branch created at a commit already on one adds
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from scarwarden import git
from scarwarden.gate.check import check_range
from scarwarden.gate.report import CheckReport
from scarwarden.records import replace
from scarwarden.repo import MemoryRepo, open_repo

#: Set to 1 to let a ref update or a push through unchecked (``verify`` still sees it).
SKIP_ENV = "SCARWARDEN_SKIP"


def _zero(sha: str) -> bool:
    return set(sha) == {"0"}


@dataclass(frozen=True)
class Move:
    ref: str
    old: str
    new: str


def branch_moves(lines: Iterable[str]) -> list[Move]:
    """The branch updates worth checking among reference-transaction's stdin lines (a
    zero old value: not said, see :func:`resolve_old`)."""
    moves = []
    for line in lines:
        parts = line.split()
        if len(parts) != 3:
            continue
        old, new, ref = parts
        if not ref.startswith("refs/heads/"):
            continue
        if (not _zero(new) and old != new) or (_zero(old) and _zero(new)):
            moves.append(Move(ref, old, new))  # zero to zero: maybe a rename, see resolve_old
    return moves


def resolve_old(root: Path, moves: list[Move]) -> list[Move]:
    """Each move with a zero old value given the ref's current value (git passes zero
    when the command gave no expected value, not only for a new branch); a move that
    changes nothing is dropped.

    ``git branch -M other main`` (git 2.39's files backend) deletes ``main`` with zero
    old and new values, then writes it outside any transaction, so no hook ever sees
    the new value. While it runs, the renamed branch's reflog waits in
    ``logs/refs/.tmp-renamed-log``: its last entry is the value ``main`` is about to
    get, and the deletion is checked as that move."""
    out = []
    for move in moves:
        if _zero(move.new):
            renamed = _renamed_tip(root)
            if renamed is None:
                continue  # a plain deletion
            move = Move(move.ref, move.old, renamed)
        if _zero(move.old):
            current = git.rev_parse(root, move.ref)
            move = Move(move.ref, current, move.new) if current else move
        if move.old != move.new:
            out.append(move)
    return out


def _renamed_tip(root: Path) -> str | None:
    """The tip of the branch a ``git branch -m/-M`` is renaming, while it runs."""
    log = git.git_path(root, "logs/refs/.tmp-renamed-log")
    try:
        lines = (log if log.is_absolute() else root / log).read_text(errors="replace").splitlines()
    except OSError:
        return None
    fields = lines[-1].split() if lines else []
    return fields[1] if len(fields) >= 2 and len(fields[1]) in (40, 64) and not _zero(fields[1]) else None


def push_moves(lines: Iterable[str]) -> list[Move]:
    """The pushes worth checking among pre-push's stdin lines (deletions are not)."""
    moves = []
    for line in lines:
        parts = line.split()
        if len(parts) != 4:
            continue
        local_ref, local_sha, _remote_ref, remote_sha = parts
        if not _zero(local_sha):
            moves.append(Move(local_ref, remote_sha, local_sha))
    return moves


#: What a new branch is checked beyond, by door: a branch move, the commits on no
#: branch here yet; a push, the commits the remote's branches do not hold (the pushed
#: branch itself is a local branch, so local branches cannot count).
NEW_BRANCH_BASE = {"reference-transaction": "--branches --remotes", "pre-push": "--remotes"}


def check_moves(
    root: Path | str | MemoryRepo, moves: list[Move], hook: str = "reference-transaction"
) -> CheckReport:
    """Check what each move adds; one report for all of them."""
    from scarwarden.gate.walk import walk  # not through verify, which a move never runs

    repo = root if isinstance(root, MemoryRepo) else open_repo(root, initialised=False)
    report = CheckReport("range", base=", ".join(f"{m.ref} {m.old[:10]}..{m.new[:10]}" for m in moves))
    for move in moves:
        if not _zero(move.old) and git.object_exists(repo.root, move.old):
            top, old, new = repo.root, move.old, move.new
            if not _child_of(top, new, old) and git.is_ancestor(top, new, old):
                continue  # moving back: nothing new lands
            part = check_range(repo, move.old, move.new)
        else:
            # A new branch (here or on the remote), or a remote tip we never fetched:
            # nothing to compare with, so the commits no branch holds yet are checked,
            # screened as a range is (the rest was checked when it landed).
            walked = walk(repo, f"{move.new} --not {NEW_BRANCH_BASE[hook]}", screen=True)
            part = CheckReport("range", problems=list(walked.problems))
            part.stats = {"commits": walked.commits, "episodes_added": walked.episodes}
        report.problems.extend(part.problems)
        for key, value in part.stats.items():
            report.count(key, value)
    return report


def _child_of(root: Path, new: str, old: str) -> bool:
    """Whether ``old`` is a parent of commit ``new`` (a commit, a revert, a cherry-pick:
    then ``new`` cannot be an ancestor of ``old``, and git need not be asked). One object
    read, from the hook's session."""
    (raw,) = git.cat_file_batch(root, [new])
    head, _, _ = (raw or b"").partition(b"\n\n")
    return any(line == b"parent " + old.encode() for line in head.split(b"\n"))


#: Problems about an episode changed in place (the fix is to keep it as it was).
_APPEND_ONLY = frozenset(
    {"episode-modified", "episode-deleted", "episode-renamed", "episode-mode-changed", "episode-type-changed"}
)


def refused_move(report: CheckReport, moves: list[Move]) -> CheckReport:
    """The report with hints that fit a branch move the reference-transaction hook
    refused: the move never landed, so "rewrite the history" (verify's hint) does not
    apply. Each says what was refused, that the branch did not move, how to fix the
    commit and how to bypass once."""
    problems = []
    for p in report.problems:
        sha = p.commit
        if not sha:
            problems.append(p)
            continue
        # With several refs in one transaction, the one whose new tip is the commit.
        move = next((m for m in moves if m.new == sha), moves[0])
        fix = (
            "keep the episode as it was (episodes are append-only: record a correction as a "
            "new episode that refs it)"
            if p.code in _APPEND_ONLY
            else (p.hint or "fix what the message says")
        )
        hint = (
            f"{move.ref} did not move (it is still at {move.old[:10]}): commit {sha[:10]} never "
            f"landed. Fix that commit where it was made ({fix}), for example by redoing the "
            "revert, cherry-pick or rebase without the change or amending the commit, then run "
            "the git command again; to let it through once, run it with SCARWARDEN_SKIP=1 "
            "(scarwarden verify still reports it)"
        )
        problems.append(replace(p, hint=hint))
    refused = CheckReport(report.scope, base=report.base, problems=problems)
    refused.stats = dict(report.stats)
    return refused


def run_hook(hook: str, lines: list[str], opener: Callable[[], MemoryRepo]) -> tuple[int, list[str]]:
    """What ``scarwarden gate-hook HOOK`` does with git's stdin ``lines``: (exit code,
    the lines to print on stderr). Silent and 0 when clean; 1 with every problem when
    not. ``opener`` opens the repository, only when there is a move to check. The
    objects the check reads come from one ``git cat-file`` (a session)."""
    from scarwarden.git.batch import session

    moves = branch_moves(lines) if hook == "reference-transaction" else push_moves(lines)
    if not moves:
        return 0, []
    repo = opener()
    with session():
        if hook == "reference-transaction":
            moves = resolve_old(repo.root, moves)
            if not moves:
                return 0, []
        report = check_moves(repo, moves, hook)
    if report.ok:
        return 0, []
    if hook == "reference-transaction":
        report = refused_move(report, moves)
    out: list[str] = []
    for p in report.problems:
        text = str(p).splitlines()
        out.append(f"- {text[0]}")
        out.extend(f"  {line}" for line in text[1:])
    what = "move" if hook == "reference-transaction" else "push"
    refs = ", ".join(dict.fromkeys(m.ref for m in moves))
    n = len(report.problems)
    out.append(f"scarwarden: refused to {what} {refs}: {n} problem(s) in the commits it adds")
    out.append(
        "hint: fix the commits (the gate's hint says how), or bypass once with SCARWARDEN_SKIP=1 "
        "(scarwarden verify still reports it)"
    )
    return 1, out
