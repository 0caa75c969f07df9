"""The history: commits, their ancestry, messages and trailers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scarwarden.git.run import run, run_ok


@dataclass(frozen=True)
class LogEntry:
    sha: str
    parents: tuple[str, ...]
    author: str
    date: str
    subject: str
    body: str


def log(root: Path | str, *args: str) -> list[LogEntry]:
    """``git log`` with a machine-readable format; ``args`` are revisions and paths."""
    fmt = "%H%x1f%P%x1f%an <%ae>%x1f%aI%x1f%s%x1f%b%x1e"
    out = run(root, "log", f"--format={fmt}", *args).decode("utf-8", "replace")
    entries = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, parents, author, date, subject, body = record.split("\x1f", 5)
        entries.append(LogEntry(sha, tuple(parents.split()), author, date, subject, body.strip()))
    return entries


def trailers(root: Path | str, sha: str) -> list[tuple[str, str]]:
    """The trailers of one commit as (key, value) pairs, in order."""
    out = run(root, "log", "-1", "--format=%(trailers:only,unfold)", sha).decode("utf-8", "replace")
    pairs = []
    for line in out.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            pairs.append((key.strip(), value.strip()))
    return pairs


def is_ancestor(root: Path | str, a: str, b: str) -> bool:
    """Whether commit ``a`` is ``b`` or one of its ancestors."""
    return run_ok(root, "merge-base", "--is-ancestor", a, b)


def merge_base(
    root: Path | str, a: str, b: str, *others: str, env: Mapping[str, str] | None = None
) -> str | None:
    """The best common ancestor of commits ``a`` and ``b``; ``None`` when they share none.
    Given ``others`` too, of ``a`` and a merge of ``b`` and ``others`` (git's rule): not
    ``None`` when ``a`` shares history with any of them. ``env``: a quarantine's, to see
    the objects fetched into it (:mod:`scarwarden.git.quarantine`)."""
    out = run(root, "merge-base", a, b, *others, env=env, check=False)
    return out.decode().strip() or None


def rev_list(root: Path | str, *args: str) -> list[str]:
    """``git rev-list args...``: the commit IDs it lists."""
    return run(root, "rev-list", *args).decode().split()


def rev_list_with_parents(root: Path | str, rev_range: str) -> list[tuple[str, list[str]]]:
    """The commits of ``rev_range`` with their parents, oldest first and every parent
    before its children (``--reverse --topo-order``); raises GitError for a range
    git does not know. Words of ``rev_range`` are separate arguments (``NEW --not
    --branches``)."""
    args = rev_range.split() or [rev_range]
    listing = run(root, "rev-list", "--reverse", "--topo-order", "--parents", *args, "--").decode()
    return [(line.split()[0], line.split()[1:]) for line in listing.splitlines() if line]


def range_non_commits(root: Path | str, rev_range: str) -> list[tuple[str, str]]:
    """The objects ``rev_range`` names that are not commits (a tree, a blob, a tag of
    one), each as ``(type, ID)``, a tag's type being its target's. ``git rev-list`` lists
    no commit for them and says nothing: a walk of ``HEAD^{tree}`` finds 0 commits."""
    args = rev_range.split() or [rev_range]
    names = run(root, "rev-parse", "--revs-only", *args).decode().split()
    ids = list(dict.fromkeys(name.lstrip("^") for name in names))
    if not ids:
        return []
    # Each ID's type once tags are peeled ("^{}"), and whether it peels to a commit.
    lines = "".join(f"{i}^{{}}\n{i}^{{commit}}\n" for i in ids).encode()
    out = run(root, "cat-file", "--batch-check=%(objecttype)", input=lines).decode().splitlines()
    return [(out[2 * n], i) for n, i in enumerate(ids) if out[2 * n + 1].endswith(" missing")]


def commit_paths(root: Path | str, sha: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The paths a commit changed relative to its first parent (all, for a root commit)."""
    # `log`, not `diff-tree`: diff-tree also reads git's index (~10 ms at 100k files).
    out = run(
        root,
        "-c",
        "log.showSignature=false",
        "log",
        "-1",
        "--root",
        "--no-renames",
        "--name-only",
        "-z",
        "--format=",
        sha,
        "--",
        env=env,
    )
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def show_stat(root: Path | str, rev: str) -> str:
    """What ``git show --stat`` prints for one commit: its ID, full message and the
    files it changed with their line counts (for people to read, not to parse)."""
    out = run(root, "show", "--stat", "--format=commit %H%n%n%B", rev)
    return out.decode("utf-8", "replace")


def path_blobs(
    root: Path | str, revs: Sequence[str], path: str, env: Mapping[str, str] | None = None
) -> set[str]:
    """Every blob ID ``path`` has had in the history of ``revs`` (merges included: ``-m``
    lists a merge's result against each parent), from one ``git log --raw``."""
    out = run(
        root,
        "log",
        "-m",
        "--raw",
        "--no-abbrev",
        "--no-renames",
        "--format=",
        *revs,
        "--",
        path,
        env=env,
    )
    blobs: set[str] = set()
    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith(":"):
            fields = line[1:].split("\t", 1)[0].split()
            blobs.update(b for b in fields[2:4] if b.strip("0"))
    return blobs


def path_trees(
    root: Path | str, revs: Sequence[str], path: str, env: Mapping[str, str] | None = None
) -> set[str]:
    """Every tree ID the folder ``path`` has had in the history of ``revs`` (git's empty
    tree for a commit without it), from one ``git log`` and one ``cat-file
    --batch-check``: the commits that changed the folder, and their parents."""
    from scarwarden.git.diff import EMPTY_TREE
    from scarwarden.git.read import tree_ids

    out = run(root, "log", "--format=%H %P", *revs, "--", path, env=env)
    commits = {c for line in out.decode().splitlines() for c in line.split()}
    found = tree_ids(root, [f"{c}:{path}" for c in sorted(commits)], env=env)
    return {t or EMPTY_TREE for t in found.values()}
