"""The only place git is called: one small function per question.

Everything here runs the git binary through ``subprocess``; importing GitPython costs
~90 ms and its object reads are 8-13x slower than ``ls-files``/``cat-file --batch``
(shared/NOTES.md), so the hot paths (index refresh, recall, the hook) never touch it.
Output is read with ``-z`` and split on NUL wherever paths are involved.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from scarwarden.errors import GitError, UsageError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def no_git_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment minus ``GIT_*`` variables that pin git to another repository.

    Inside a hook git exports GIT_DIR, GIT_INDEX_FILE and friends; a git command run
    in *another* repository (a temporary clone, say) would otherwise act on the hook's
    repository. Same reasoning as pre-commit's ``no_git_env``; identity and config
    variables are kept.
    """
    env = dict(os.environ if environ is None else environ)
    keep = {"GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO",
            "GIT_SSL_NO_VERIFY", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
            "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE",
            "GIT_COMMITTER_DATE"}
    return {k: v for k, v in env.items() if not k.startswith("GIT_") or k in keep}


def run(root: Path | str, *args: str, input: bytes | None = None,
        env: Mapping[str, str] | None = None, check: bool = True) -> bytes:
    """Run ``git -C root args...`` and return stdout; raise :class:`GitError` on failure."""
    proc = subprocess.run(
        ["git", "-C", str(root), *args],
        input=input,
        capture_output=True,
        env=None if env is None else dict(env),
    )
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip() or f"exit {proc.returncode}"
        raise GitError(f"git {' '.join(args[:2])} failed: {message}")
    return proc.stdout


def run_ok(root: Path | str, *args: str, env: Mapping[str, str] | None = None) -> bool:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                          env=None if env is None else dict(env))
    return proc.returncode == 0


def toplevel(path: Path | str) -> Path | None:
    """The work tree root containing ``path``, or ``None`` outside a git repository."""
    proc = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"],
                          capture_output=True)
    if proc.returncode != 0:
        return None
    return Path(proc.stdout.decode().strip())


def require_toplevel(path: Path | str) -> Path:
    root = toplevel(path)
    if root is None:
        raise UsageError(f"{path} is not inside a git repository",
                         hint="run 'git init' first, or pass --repo PATH")
    return root


def git_dir(root: Path | str) -> Path:
    out = run(root, "rev-parse", "--absolute-git-dir").decode().strip()
    return Path(out)


def head(root: Path | str) -> str | None:
    """The commit HEAD points at, or ``None`` before the first commit."""
    return rev_parse(root, "HEAD")


def rev_parse(root: Path | str, rev: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "-q", "--verify",
                           f"{rev}^{{commit}}"], capture_output=True)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip()


def object_exists(root: Path | str, sha: str) -> bool:
    return run_ok(root, "cat-file", "-e", sha)


def current_branch(root: Path | str) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), "symbolic-ref", "-q", "--short", "HEAD"],
                          capture_output=True)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


@dataclass(frozen=True)
class StagedEntry:
    mode: str
    blob: str
    path: str


def ls_files_stage(root: Path | str, *pathspec: str,
                   env: Mapping[str, str] | None = None) -> list[StagedEntry]:
    """``git ls-files -s``: the index's view (mode, blob, path) under ``pathspec``."""
    out = run(root, "ls-files", "-s", "-z", "--", *pathspec, env=env)
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, blob, _stage = meta.split(b" ")
        entries.append(StagedEntry(mode.decode(), blob.decode(), path.decode("utf-8", "surrogateescape")))
    return entries


def ls_tree(root: Path | str, rev: str, *pathspec: str) -> list[StagedEntry]:
    """``git ls-tree -r``: (mode, blob, path) of a commit's tree under ``pathspec``."""
    out = run(root, "ls-tree", "-r", "-z", "--full-tree", rev, "--", *pathspec)
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _kind, blob = meta.split(b" ")
        entries.append(StagedEntry(mode.decode(), blob.decode(), path.decode("utf-8", "surrogateescape")))
    return entries


def ls_others(root: Path | str, *pathspec: str) -> list[str]:
    """Untracked, not ignored files under ``pathspec``."""
    out = run(root, "ls-files", "-z", "--others", "--exclude-standard", "--", *pathspec)
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def cat_file_batch(root: Path | str, objects: Sequence[str],
                   env: Mapping[str, str] | None = None) -> list[bytes | None]:
    """Read many objects (blob IDs or ``rev:path``) with one ``git cat-file --batch``."""
    if not objects:
        return []
    request = "".join(f"{name}\n" for name in objects).encode("utf-8", "surrogateescape")
    out = run(root, "cat-file", "--batch", input=request, env=env)
    results: list[bytes | None] = []
    pos = 0
    for _ in objects:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split(b" ")
        pos = eol + 1
        if len(header) < 3 or header[-1] == b"missing" or header[1] == b"missing":
            results.append(None)
            continue
        size = int(header[2])
        results.append(out[pos:pos + size])
        pos += size + 1
    return results


def show_file(root: Path | str, rev: str, path: str,
              env: Mapping[str, str] | None = None) -> bytes | None:
    """A file's content at ``rev`` (``""`` for the index: ``:path``); ``None`` if absent."""
    spec = f":{path}" if rev == "" else f"{rev}:{path}"
    return cat_file_batch(root, [spec], env=env)[0]


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D, T, R, C (first letter of git's status)
    path: str
    old_path: str | None = None
    score: str = ""


def _parse_name_status(out: bytes) -> list[Change]:
    fields = [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0")]
    changes: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status[0] in "RC":
            changes.append(Change(status[0], fields[i + 2], fields[i + 1], status[1:]))
            i += 3
        else:
            changes.append(Change(status[0], fields[i + 1]))
            i += 2
    return changes


def diff_name_status(root: Path | str, a: str | None, b: str | None, *pathspec: str,
                     cached: bool = False, renames: bool = False,
                     env: Mapping[str, str] | None = None) -> list[Change]:
    """Files changed between two trees (``a``/``b`` commits; ``cached`` compares ``a`` to the index)."""
    args = ["diff", "--name-status", "-z", "--no-ext-diff", "--no-textconv"]
    args.append("-M" if renames else "--no-renames")
    if cached:
        args += ["--cached", a or EMPTY_TREE]
    else:
        args += [a or EMPTY_TREE] + ([b] if b else [])
    args += ["--", *pathspec]
    return _parse_name_status(run(root, *args, env=env))


def diff_raw(root: Path | str, a: str | None, *pathspec: str, cached: bool = True,
             env: Mapping[str, str] | None = None) -> list[tuple[str, str, str, str, Change]]:
    """``git diff --raw``: (old mode, new mode, old blob, new blob, change) per file."""
    args = ["diff", "--raw", "-z", "--no-abbrev", "-M", "--no-ext-diff"]
    if cached:
        args.append("--cached")
    args += [a or EMPTY_TREE, "--", *pathspec]
    out = run(root, *args, env=env)
    fields = [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0")]
    result = []
    i = 0
    while i < len(fields) and fields[i]:
        meta = fields[i].lstrip(":").split(" ")
        old_mode, new_mode, old_blob, new_blob, status = meta[:5]
        if status[0] in "RC":
            change = Change(status[0], fields[i + 2], fields[i + 1], status[1:])
            i += 3
        else:
            change = Change(status[0], fields[i + 1])
            i += 2
        result.append((old_mode, new_mode, old_blob, new_blob, change))
    return result


def add(root: Path | str, paths: Iterable[str], env: Mapping[str, str] | None = None) -> None:
    paths = list(paths)
    if paths:
        run(root, "add", "--", *paths, env=env)


def unstage(root: Path | str, paths: Iterable[str]) -> None:
    """Drop paths from the index (used to undo a failed write; HEAD may not exist)."""
    paths = list(paths)
    if paths:
        run(root, "rm", "-q", "--cached", "--ignore-unmatch", "--", *paths, check=False)


def commit(root: Path | str, message: str, *, only: Sequence[str] | None = None,
           allow_empty: bool = False, no_verify: bool = False,
           env: Mapping[str, str] | None = None) -> str:
    """Commit and return the new HEAD.

    With ``only`` the commit holds exactly those paths (``git commit --only``): whatever
    else the user had staged stays staged and out of the commit.
    """
    args = ["commit", "-q", "-F", "-"]
    if allow_empty:
        args.append("--allow-empty")
    if no_verify:
        args.append("--no-verify")
    if only is not None:
        args += ["--only", "--", *only]
    proc = subprocess.run(["git", "-C", str(root), *args], input=message.encode("utf-8"),
                          capture_output=True, env=None if env is None else dict(env))
    if proc.returncode != 0:
        detail = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
        raise GitError("git commit failed" + (f":\n{detail}" if detail else ""),
                       hint="if a hook rejected the commit, its message above says why")
    sha = head(root)
    assert sha is not None
    return sha


def config_get(root: Path | str, key: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), "config", "--get", key], capture_output=True)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def is_ancestor(root: Path | str, a: str, b: str) -> bool:
    return run_ok(root, "merge-base", "--is-ancestor", a, b)


def rev_list(root: Path | str, *args: str) -> list[str]:
    return run(root, "rev-list", *args).decode().split()


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


# -- commits that do not touch the work tree (distill --branch) ----------------------

@contextmanager
def temporary_index(root: Path | str, rev: str,
                    env: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """A private index file holding ``rev``'s tree; yields the env that selects it.

    Lets a command build a commit for another branch (``read-tree`` + ``update-index``
    + ``write-tree``) while the user's index, HEAD and working tree stay untouched.
    """
    import tempfile

    fd, path = tempfile.mkstemp(prefix="scarwarden-index-", dir=str(git_dir(root)))
    os.close(fd)
    os.unlink(path)  # git wants to create the index itself
    private = dict(os.environ if env is None else env)
    private["GIT_INDEX_FILE"] = path
    try:
        run(root, "read-tree", rev, env=private)
        yield private
    finally:
        for leftover in (path, path + ".lock"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def stage_bytes(root: Path | str, path: str, data: bytes, *,
                env: Mapping[str, str] | None = None) -> str:
    """Write ``data`` as a blob and stage it at ``path`` (in the index ``env`` selects)."""
    blob = run(root, "hash-object", "-w", "--stdin", input=data, env=env).decode().strip()
    run(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    return blob


def write_tree(root: Path | str, env: Mapping[str, str] | None = None) -> str:
    return run(root, "write-tree", env=env).decode().strip()


def commit_tree(root: Path | str, tree: str, parents: Sequence[str], message: str,
                env: Mapping[str, str] | None = None) -> str:
    """A commit object for ``tree`` (no ref moves, no hooks run)."""
    args = ["commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    return run(root, *args, input=message.encode("utf-8"), env=env).decode().strip()


def valid_branch_name(root: Path | str, name: str) -> bool:
    return run_ok(root, "check-ref-format", "--branch", name) and not name.startswith("-")


def create_branch(root: Path | str, name: str, sha: str) -> None:
    """Point the new branch ``name`` at ``sha``; fails if the branch already exists."""
    run(root, "update-ref", f"refs/heads/{name}", sha, "")  # "": must not exist yet


def cat_file_stream(root: Path | str, objects: Sequence[str],
                    env: Mapping[str, str] | None = None) -> Iterator[bytes | None]:
    """Like :func:`cat_file_batch`, but yields each object as git writes it.

    For very many objects (a full index rebuild): the caller works on one object while
    git reads the next, and the whole output is never held at once. The request goes
    through a temporary file, so neither side can block on a full pipe.
    """
    import tempfile

    if not objects:
        return
    with tempfile.TemporaryFile() as request, tempfile.TemporaryFile() as errors:
        request.write("".join(f"{name}\n" for name in objects).encode("utf-8", "surrogateescape"))
        request.seek(0)
        proc = subprocess.Popen(["git", "-C", str(root), "cat-file", "--batch"],
                                stdin=request, stdout=subprocess.PIPE, stderr=errors,
                                env=None if env is None else dict(env))
        assert proc.stdout is not None
        try:
            out = proc.stdout
            for _ in objects:
                header = out.readline().split(b" ")
                if len(header) < 3 or header[1] == b"missing" or header[-1] == b"missing\n":
                    if not header[0]:  # EOF: git stopped early
                        break
                    yield None
                    continue
                size = int(header[2])
                data = out.read(size + 1)  # the object and its trailing newline
                yield data[:size]
        finally:
            proc.stdout.close()
            code = proc.wait()
        if code != 0:
            errors.seek(0)
            message = errors.read().decode("utf-8", "replace").strip() or f"exit {code}"
            raise GitError(f"git cat-file failed: {message}")


def nothing_staged(root: Path | str, env: Mapping[str, str] | None = None) -> bool:
    """True when git's index matches HEAD (or is empty before the first commit).

    ~10 ms at 100k files (git's cache-tree), far cheaper than ``commit --only``,
    which writes a second full index.
    """
    return run_ok(root, "diff", "--cached", "--quiet", "--no-ext-diff", env=env)


def commit_paths(root: Path | str, sha: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The paths a commit changed relative to its first parent (all, for a root commit)."""
    # `log`, not `diff-tree`: diff-tree also reads git's index (~10 ms at 100k files).
    out = run(root, "-c", "log.showSignature=false", "log", "-1", "--root", "--no-renames",
              "--name-only", "-z", "--format=", sha, "--", env=env)
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]
