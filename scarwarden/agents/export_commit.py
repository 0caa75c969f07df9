"""``export --commit``: the exported files written and committed as one write.

As every write that commits (issue 15): the files are recorded in the write journal
before the first byte is written, then committed through a temporary index
(:mod:`scarwarden.files.write_journal`), so the commit holds exactly the exported
files (what else the user staged stays staged), the commit hooks judge that tree
before HEAD moves, git's real index is never locked while a kill could leave the lock
behind, and a killed or refused export puts every file back as it was (an unstaged
edit outside the markers included). Under the write lock, like every other writer.

The commit is Scarwarden's change only, as ``git add -p`` of the section would make it:
a file HEAD holds is committed as HEAD holds it with the section replaced (in HEAD's
mode: a ``chmod`` is the user's), so the user's own edits outside the markers stay in
the working tree, uncommitted, and a version of it the user staged stays staged (with
the new section) and out of the commit. A file new to git, and a whole generated file
(``cursor``, ``claude-skill``), are committed as written.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from scarwarden import git
from scarwarden.agents.export_section import splice
from scarwarden.agents.export_write import Written, new_folders, nothing_changed, write_all
from scarwarden.errors import GitError, ScarwardenError, UsageError, ValidationError
from scarwarden.files import write_journal
from scarwarden.files.atomic import atomic_write
from scarwarden.files.write_journal import Planned
from scarwarden.gate.door import gate_check
from scarwarden.git.index_commit import Check
from scarwarden.repo import MemoryRepo


class ExportFile(Written, Protocol):
    """What is committed of :class:`scarwarden.agents.exports.ExportFile` (named here,
    not imported: that module calls this one): what is put back of it, and more."""

    @property
    def format(self) -> str: ...
    @property
    def section(self) -> str | None: ...


File = TypeVar("File", bound=ExportFile)


def message(files: Sequence[ExportFile]) -> str:
    return (
        "export: update agent instruction files from the playbook\n\n"
        + "\n".join(f"Scarwarden-Export: {f.format} {f.rel}" for f in files)
        + "\n"
    )


def write_and_commit(repo: MemoryRepo, files: Sequence[File]) -> tuple[str | None, list[File]]:
    """Write ``files`` (those whose bytes change) and commit what the export changes of
    the ones HEAD holds (their sections: see above) and the new ones, a file already
    current on disk too (exported before, not committed); the commit and the files it
    holds (None and none when that changes nothing: the files are still written). The
    caller holds the write lock and has recovered a killed write
    (:func:`write_journal.recover`)."""
    _refuse_ignored(repo, files)
    inside = [f for f in files if not Path(f.rel).is_absolute()]  # (--output is refused)
    _refuse_nested(repo, inside)
    seen = git.head(repo.root)
    base, modes = _in_head(repo, inside, seen)
    onto = {
        f.rel: _onto(base[f.rel], f, "in HEAD") for f in inside if f.rel in base and f.section is not None
    }
    differ = [f.rel for f in inside if onto.get(f.rel, f.new) != base.get(f.rel)]
    staged, indexed = _staged(repo, [f for f in inside if f.rel in base], base)
    written = [f for f in files if f.new != f.old]  # a current file keeps its mtime
    if not differ:
        write_all(repo.root, written)
        return None, []
    # A file whose new bytes are what is committed is added from the disk (stat and all).
    contents = {f.rel: onto[f.rel] for f in inside if f.rel in differ and onto.get(f.rel, f.new) != f.new}
    kept = {rel: data for rel, data in staged.items() if rel in differ}
    # HEAD's mode committed, the index's kept: a chmod of the user's is not the export's
    mode = {rel: (modes[rel], indexed.get(rel, modes[rel])) for rel in differ if rel in modes}
    if git.config_get(repo.root, "core.fileMode", kind="bool") == "false":
        # The disk's executable bit is not git's (WSL's /mnt/c): a new file is added 100644.
        mode |= {rel: ("100644", "100644") for rel in differ if rel not in mode}
    committed = [f for f in inside if f.rel in differ]  # a file only put back is not named
    folders = new_folders(written)
    journal = write_journal.begin(repo, [Planned(f.rel, f.new) for f in written])
    try:
        for f in written:
            atomic_write(f.path, f.new)
        check = _unmoved(repo, seen, gate_check(repo, "the export"))  # the gate: issue 27
        sha = write_journal.commit(
            repo, journal, message(committed), differ, check=check, contents=contents, staged=kept, modes=mode
        )
        return sha, committed
    except BaseException:
        if write_journal.recover(repo) == "rolled forward":  # each file back as it was,
            raise  # unless the commit landed
        with nothing_changed(repo.root, folders):  # the folders made go too; a file not
            raise  # written is reported saying nothing was changed


def _unmoved(repo: MemoryRepo, seen: str | None, check: Check) -> Check:
    """``check``, once HEAD is known to be still ``seen``, the commit whose files the
    sections were put onto: the commit is built on the HEAD read later, so one another
    process made meanwhile (a change to AGENTS.md) would be undone by ours. The commit's
    compare-and-swap refuses the moves after that read (a move back to ``seen`` too)."""

    def unmoved(env: Mapping[str, str]) -> None:
        if git.head(repo.root) != seen:
            raise GitError(
                "HEAD moved while the export was being made (another process committed); "
                "nothing was committed",
                hint="run the command again: the section goes onto the new HEAD's version",
            )
        check(env)

    unmoved.vouches = getattr(check, "vouches", False)  # type: ignore[attr-defined]
    return unmoved


def _in_head(
    repo: MemoryRepo, files: Sequence[ExportFile], head: str | None
) -> tuple[dict[str, bytes], dict[str, str]]:
    """The bytes ``head`` holds of each of ``files`` that it holds as a file (not a
    link), and their modes."""
    rels = {f.rel for f in files}
    if not head or not rels:
        return {}, {}
    folders = {p.as_posix(): f.rel for f in files for p in Path(f.rel).parents if p.parts}
    tree = git.ls_tree(repo.root, head, *_literal([*rels, *folders]))
    _refuse_type_change(tree, rels, folders)
    entries = [e for e in tree if e.path in rels and e.mode in ("100644", "100755")]
    blobs = git.cat_file_batch(repo.root, [e.blob for e in entries])
    found = {e.path: data for e, data in zip(entries, blobs, strict=True) if data is not None}
    return found, {e.path: e.mode for e in entries}


def _refuse_type_change(
    tree: Sequence[git.StagedEntry], rels: Collection[str], folders: Mapping[str, str]
) -> None:
    """A file HEAD holds as a symbolic link (its text lives where the link points) or as a
    folder, and the disk as a file (the user replaced it), or a folder on the way to one
    (of ``folders``) that HEAD holds as a file or link (the user removed it): committing
    the export would commit that change, the user's. Refused (exit 1). ``tree``: HEAD's
    entries under ``rels`` and ``folders``."""
    for e in tree:
        under = next((rel for rel in rels if e.path.startswith(rel + "/")), None)
        if under is not None:
            raise ValidationError(
                f"{under} is a folder in HEAD and a file here (the folder was replaced): "
                "--commit would commit that change, with the file's text; nothing was written",
                hint=f"commit the file yourself first (git rm -r -q --cached {under} && git add "
                f"{under} && git commit); then export --commit again (or export without --commit)",
            )
        if e.path in folders:
            kind = {"120000": "symbolic link", "160000": "submodule"}.get(e.mode, "file")
            raise ValidationError(
                f"{e.path} is a {kind} in HEAD and a folder here ({folders[e.path]} goes in it): "
                f"--commit would commit the {kind}'s removal; nothing was written",
                hint=f"commit its removal yourself first (git rm --cached {e.path}, then git commit); "
                "then export --commit again (or export without --commit)",
            )
        if e.path in rels and e.mode == "120000":
            raise ValidationError(
                f"{e.path} is a symbolic link in HEAD and a file here (the link was replaced): "
                "--commit would commit that change, with the file's text; nothing was written",
                hint=f"commit the file yourself first (git add {e.path} && git commit), or move "
                f"your text where the link points and put the link back (git restore --staged "
                f"--worktree {e.path}); then export --commit again (or export without --commit)",
            )


def _staged(
    repo: MemoryRepo, files: Sequence[ExportFile], base: dict[str, bytes]
) -> tuple[dict[str, bytes | None], dict[str, str]]:
    """Each of ``files`` (those HEAD holds) that git's index holds otherwise than HEAD
    (the user staged an edit): that version with the new section, to stay staged (a
    whole generated file is the export's: its new version is staged; a symbolic link
    staged over the file stays as it is); None for one it
    does not hold (a deletion the user staged stays staged). And the mode the index
    holds of each (a chmod staged stays staged). A file with a merge conflict git has
    not seen resolved is refused: committing would mark it resolved."""
    entries = git.ls_files_stage(repo.root, *_literal([f.rel for f in files])) if files else []
    indexed = {e.path: e.mode for e in entries if not e.stage}
    listed = {e.path for e in entries}
    kept: dict[str, bytes | None] = {f.rel: None for f in files if f.rel not in listed}  # git rm --cached
    spliced = {f.rel for f in files if f.section is not None}
    entries = [e for e in entries if e.path in spliced]
    unmerged = sorted({e.path for e in entries if e.stage})
    if unmerged:
        raise ValidationError(
            f"{unmerged[0]} has a merge conflict git has not seen resolved: --commit would mark it resolved",
            hint=f"resolve it and 'git add {unmerged[0]}', then export --commit again "
            "(or export without --commit)",
        )
    edited = {e.path: e.blob for e in entries if e.path in base and e.blob != git.blob_id(base[e.path])}
    if not edited:
        return kept, indexed
    by_rel = {f.rel: f for f in files}
    blobs = git.cat_file_batch(repo.root, list(edited.values()))
    return kept | {  # a link staged over the file (the user's) stays as it is: no section
        rel: (data or b"") if indexed.get(rel) == "120000" else _onto(data or b"", by_rel[rel], "as staged")
        for rel, data in zip(edited, blobs, strict=True)
    }, indexed


def _onto(data: bytes, f: ExportFile, where: str) -> bytes:
    """``data`` (``f`` as HEAD or git's index holds it) with the exported section in
    place of its own (appended if it has none)."""
    try:
        return splice(data.decode("utf-8"), f.section or "", f.rel).encode("utf-8")
    except (UnicodeDecodeError, ScarwardenError) as exc:
        why = " is not valid UTF-8"
        if isinstance(exc, ScarwardenError):
            # A section a code block hides, a conflict: said as the working file's refusal is.
            own = ": " + exc.message.removeprefix(f"{f.rel}: ")
            why = " has broken Scarwarden markers" if "markers are broken" in exc.message else own
        raise ValidationError(
            f"{f.rel} {where}{why}: --commit commits only the new section onto it; nothing was written",
            problems=getattr(exc, "problems", None),
            hint=f"commit your own fix of {f.rel} first, or export without --commit and commit it yourself"
            if where == "in HEAD"
            else f"fix it and 'git add {f.rel}' again, or unstage it ('git restore --staged {f.rel}')",
        ) from None


def _refuse_ignored(repo: MemoryRepo, files: Sequence[ExportFile]) -> None:
    """``--commit`` does not force a file git ignores (and does not track) into the
    commit, as ``git add`` would not: refused (exit 2) before anything is written."""
    rels = [f.rel for f in files if not Path(f.rel).is_absolute()]
    names = "\0".join(f"./{rel}" for rel in rels).encode("utf-8", "surrogateescape")  # not magic
    out = git.run(repo.root, "check-ignore", "-z", "--stdin", input=names, check=False) if rels else b""
    ignored = [name.removeprefix("./") for name in out.decode("utf-8", "surrogateescape").split("\0") if name]
    if ignored:
        raise UsageError(
            f"{', '.join(ignored)} is ignored by git: --commit would force it in",
            hint="export without --commit (the file is written, not committed), or stop ignoring it",
        )


def _refuse_nested(repo: MemoryRepo, files: Sequence[ExportFile]) -> None:
    """A file in a git repository of its own (``.github`` a clone, or a submodule) is that
    repository's: ``git add`` skips it, and ``--commit`` would put it in this one.
    Refused (exit 2) before anything is written."""
    folders = {
        str(Path(*Path(f.rel).parts[:i])): f.rel for f in files for i in range(1, len(Path(f.rel).parts))
    }
    linked = (
        {e.path for e in git.ls_files_stage(repo.root, *_literal(folders)) if e.mode == "160000"}
        if folders
        else set()
    )
    for folder, rel in folders.items():
        if folder in linked or os.path.lexists(repo.root / folder / ".git"):
            raise UsageError(
                f"{rel} is in another git repository ({folder}): --commit would commit it into this "
                "one, where 'git add' skips it; nothing was written",
                hint=f"export without --commit (the file is written), then commit it in {folder} "
                f"(git -C {folder} add {Path(rel).relative_to(folder).as_posix()})",
            )


def _literal(paths: Iterable[str]) -> list[str]:
    """``paths`` as git pathspecs that name them: a name git would read otherwise (a
    folder ':notes', pathspec magic; 'docs[1]', a glob) means itself."""
    return [f":(literal){path}" for path in paths]
