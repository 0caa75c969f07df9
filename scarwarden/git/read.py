"""Reading what git stores: file listings (index, trees, working tree) and objects.

Listings use ``-z`` and are split on NUL; many objects are read with one
``git cat-file --batch`` rather than one process each.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from scarwarden.digests import sha1
from scarwarden.errors import GitError
from scarwarden.git import batch
from scarwarden.git.run import NO_REPLACE, own_session, run, run_chunked, run_ok
from scarwarden.records import record

#: Above this many names, one listing of the whole folder beats a pattern per name
#: (git matches every index entry against every pattern).
MAX_NAME_PATTERNS = 8


@record(frozen=True)
class StagedEntry:
    mode: str
    blob: str
    path: str
    #: git's merge stage: 0, or 1-3 for each side of an unmerged path (``ls-files -s``).
    stage: int = 0


def blob_id(data: bytes) -> str:
    """Git's blob ID of ``data`` (so bytes read from disk or a cache compare with git's)."""
    return sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _paths(out: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def ls_files_stage(
    root: Path | str, *pathspec: str, env: Mapping[str, str] | None = None
) -> list[StagedEntry]:
    """``git ls-files -s``: the index's view (mode, blob, path) under ``pathspec`` (a
    long one, the paths of a big batch, is split over several processes: each entry
    is listed once all the same)."""
    out = run_chunked(root, ("ls-files", "-s", "-z", "--"), pathspec, env=env)
    entries = []
    for item in dict.fromkeys(out.split(b"\0")):
        if not item:
            continue
        meta, _, path = item.partition(b"\t")
        mode, blob, stage = meta.split(b" ")
        entries.append(
            StagedEntry(mode.decode(), blob.decode(), path.decode("utf-8", "surrogateescape"), int(stage))
        )
    return entries


def ls_files_modified(root: Path | str, *pathspec: str) -> set[str]:
    """``git ls-files -m``: the tracked files under ``pathspec`` whose working copy is
    not what git's index holds (edited, or gone). git stats each one, and compares
    content where only the file times moved."""
    return set(_paths(run_chunked(root, ("ls-files", "-m", "-z", "--"), pathspec)))


def ls_tree(root: Path | str, rev: str, *pathspec: str) -> list[StagedEntry]:
    """``git ls-tree -r``: (mode, blob, path) of a commit's tree under ``pathspec``."""
    out = run(root, "ls-tree", "-r", "-z", "--full-tree", rev, "--", *pathspec)
    entries = []
    for item in out.split(b"\0"):
        if not item:
            continue
        meta, _, path = item.partition(b"\t")
        mode, _kind, blob = meta.split(b" ")
        entries.append(StagedEntry(mode.decode(), blob.decode(), path.decode("utf-8", "surrogateescape")))
    return entries


def ls_tree_dirs(root: Path | str, rev: str, *pathspec: str) -> list[str]:
    """``git ls-tree -r -d``: the folders (trees) of a commit under ``pathspec``, the
    named folders included; git reads the trees but prints no file, so a 100k-file
    ledger costs a few dozen lines of output."""
    out = run(root, "ls-tree", "-r", "-d", "-z", "--full-tree", rev, "--", *pathspec)
    records = [r for r in out.split(b"\0") if r]
    return [r.partition(b"\t")[2].decode("utf-8", "surrogateescape") for r in records]


def ls_subfolders(root: Path | str, rev: str, folders: Sequence[str]) -> list[str]:
    """``git ls-tree -d``: the folders directly inside each of ``folders`` in ``rev``,
    one process for all. Only those folders' trees are read, not their subfolders'
    (at 100k episodes, listing the year folders skips parsing every month's tree)."""
    if not folders:
        return []
    specs = [f.rstrip("/") + "/" for f in folders]
    out = run(root, "ls-tree", "-d", "-z", "--full-tree", rev, "--", *specs)
    records = [r for r in out.split(b"\0") if r]
    return [r.partition(b"\t")[2].decode("utf-8", "surrogateescape") for r in records]


def ls_others(root: Path | str, *pathspec: str) -> list[str]:
    """Untracked, not ignored files under ``pathspec``."""
    return _paths(run(root, "ls-files", "-z", "--others", "--exclude-standard", "--", *pathspec))


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\\])", r"\\\1", text)


def files_named(root: Path | str, folder: str, names: Iterable[str]) -> list[str]:
    """Paths under ``folder``, at any depth, whose file name is one of ``names``.

    Both sides count: git's index (committed or staged) and the working tree (untracked
    files too, ignored or not), so a file is found whether or not it was added yet.
    """
    wanted = set(names)
    if not wanted:
        return []
    base = _glob_escape(folder.rstrip("/"))
    if len(wanted) <= MAX_NAME_PATTERNS:
        # Default pathspec magic: '*' also matches '/', so every depth is searched.
        specs = [f"{base}/*{_glob_escape(name)}" for name in sorted(wanted)]
    else:
        specs = [f"{base}/"]
    out = run(root, "ls-files", "-z", "--cached", "--others", "--", *specs)
    # '*name' also matches 'xname'; an unmerged path is listed once per stage.
    return list(dict.fromkeys(p for p in _paths(out) if p.rpartition("/")[2] in wanted))


def tree_id(root: Path | str, rev: str, path: str, env: Mapping[str, str] | None = None) -> str | None:
    """The tree ID of the folder ``path`` at ``rev`` (a commit or a tree); ``None``
    when ``rev`` has no such folder. Recall receipts name the ledger by it (issue 20)."""
    return tree_ids(root, [f"{rev}:{path}"], env=env)[f"{rev}:{path}"]


def object_exists(root: Path | str, sha: str) -> bool:
    """Whether the object ``sha`` (or ``rev:path``) exists."""
    if batch.serves([sha]):
        return batch.info(root, [sha], None)[0][-1] not in (b"missing", b"ambiguous")
    return run_ok(root, "cat-file", "-e", sha)


def objects_exist(root: Path | str, specs: Sequence[str]) -> dict[str, bool]:
    """Object name (a blob ID or ``rev:path``) -> whether it exists, with one
    ``git cat-file --batch-check``."""
    return {spec: not line.endswith(" missing") for spec, line in _batch_check(root, specs).items()}


def blob_ids(
    root: Path | str, specs: Sequence[str], env: Mapping[str, str] | None = None
) -> dict[str, str | None]:
    """Object name (``rev:path``) -> the blob ID it names, or ``None`` when it names
    nothing or no blob, with one ``git cat-file --batch-check``."""
    return _ids_of(root, specs, "blob", env)


def tree_ids(
    root: Path | str, specs: Sequence[str], env: Mapping[str, str] | None = None
) -> dict[str, str | None]:
    """Object name (``rev:folder``) -> the tree ID it names, or ``None`` when it names
    nothing or no tree, with one ``git cat-file --batch-check``."""
    return _ids_of(root, specs, "tree", env)


def _ids_of(
    root: Path | str, specs: Sequence[str], kind: str, env: Mapping[str, str] | None
) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for spec, line in _batch_check(root, specs, "%(objectname) %(objecttype)", env=env).items():
        sha, _, what = line.partition(" ")
        found[spec] = sha if what == kind else None
    return found


def _batch_check(
    root: Path | str, specs: Sequence[str], fmt: str | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Object name -> its ``git cat-file --batch-check`` line (in ``fmt``), one process."""
    if not specs:
        return {}
    if batch.serves(specs):
        return dict(zip(specs, (_check_line(f, fmt) for f in batch.info(root, specs, env)), strict=True))
    out = run(
        root,
        "cat-file",
        "--batch-check" + (f"={fmt}" if fmt else ""),
        input="".join(f"{s}\n" for s in specs).encode("utf-8", "surrogateescape"),
        env=env,
    )
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    return dict(zip(specs, lines[: len(specs)], strict=True))


def _check_line(fields: list[bytes], fmt: str | None) -> str:
    """A ``--batch-check`` line in ``fmt`` (the default or ``%(objectname)
    %(objecttype)``, the two this module asks for) from a session's answer."""
    if fields[-1] in (b"missing", b"ambiguous"):
        return b" ".join(fields).decode("utf-8", "surrogateescape")
    return b" ".join(fields[:2] if fmt else fields).decode("utf-8", "surrogateescape")


def cat_file_batch(
    root: Path | str, objects: Sequence[str], env: Mapping[str, str] | None = None
) -> list[bytes | None]:
    """Read many objects (blob IDs or ``rev:path``) with one ``git cat-file --batch``
    (in a :func:`~scarwarden.git.batch.session`, the session's)."""
    if not objects:
        return []
    if batch.serves(objects):
        return batch.contents(root, objects, env)
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
        results.append(out[pos : pos + size])
        pos += size + 1
    return results


def show_file(root: Path | str, rev: str, path: str, env: Mapping[str, str] | None = None) -> bytes | None:
    """A file's content at ``rev`` (``""`` for the index: ``:path``); ``None`` if absent."""
    spec = f":{path}" if rev == "" else f"{rev}:{path}"
    return cat_file_batch(root, [spec], env=env)[0]


def cat_file_stream(
    root: Path | str, objects: Sequence[str], env: Mapping[str, str] | None = None
) -> Iterator[bytes | None]:
    """Like :func:`cat_file_batch`, but yields each object as git writes it.

    For very many objects (a full index rebuild): the caller works on one object while
    git reads the next, and the whole output is never held at once. The request goes
    through a temporary file, so neither side can block on a full pipe.
    """
    if not objects:
        return
    import subprocess
    import tempfile  # here: ~3 ms of start-up, and most callers' lists are empty

    with tempfile.TemporaryFile() as request, tempfile.TemporaryFile() as errors:
        request.write("".join(f"{name}\n" for name in objects).encode("utf-8", "surrogateescape"))
        request.seek(0)
        # Popen, not run(): the output is read while git still writes it.
        proc = subprocess.Popen(
            ["git", *NO_REPLACE, "-C", str(root), "cat-file", "--batch"],
            stdin=request,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=None if env is None else dict(env),
            start_new_session=own_session(),
        )
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
