"""The playbook, exported into the instruction files agents already read.

Formats (``scarwarden export FORMAT``):

* ``agents-md``: a section of ``AGENTS.md`` (Codex, Cursor, Copilot, Zed, Jules, ...);
* ``claude-md``: a section of ``CLAUDE.md`` (Claude Code), either the rules themselves
  or, with ``import_agents``, the single line ``@AGENTS.md`` (Claude Code's import);
* ``cursor``: ``.cursor/rules/scarwarden.mdc``, a whole generated file with front
  matter (``description``, ``globs``, ``alwaysApply: true``);
* ``copilot``: a section of ``.github/copilot-instructions.md``.

A section sits between ``<!-- scarwarden:begin -->`` and ``<!-- scarwarden:end -->``;
everything outside the markers is the user's and is kept byte for byte. Rendering is
deterministic and a file whose bytes would not change is not written at all (its
mtime stays), so exporting twice changes nothing and ``--check`` can compare bytes.
Exports never commit by themselves; :func:`commit_exports` is the opt-in.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from scarwarden import git
from scarwarden.agents.export_section import marked, section, section_body, shaped_as, splice
from scarwarden.answers.cite_as import format_citation
from scarwarden.errors import Problem, ScarwardenError, UsageError, ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files import write_journal
from scarwarden.files.atomic import refuse_hard_link, write_lock
from scarwarden.regular_files import read_regular
from scarwarden.repo import MemoryRepo

#: format -> default path, relative to the repository root, in ``all`` order.
FORMATS: dict[str, str] = {
    "agents-md": "AGENTS.md",
    "claude-md": "CLAUDE.md",
    "cursor": ".cursor/rules/scarwarden.mdc",
    "copilot": ".github/copilot-instructions.md",
    # Issue 20: Gemini CLI's context file, and a Claude Code skill (a whole generated file).
    "gemini-md": "GEMINI.md",
    "claude-skill": ".claude/skills/scarwarden/SKILL.md",
}

CURSOR_DESCRIPTION = (
    "Scarwarden playbook, rules learnt from recorded episodes. "
    "Cite a rule you apply as [PB-NN, learnt in ep-...]"
)


@dataclass(frozen=True)
class ExportFile:
    """One file an export would write: its bytes now (``old``) and as exported (``new``)."""

    format: str
    path: Path
    rel: str
    old: bytes | None
    new: bytes
    section: str | None = None  # the marked section spliced in (not for a whole file)

    @property
    def status(self) -> str:
        """``missing``, ``stale`` (differs from the playbook) or ``current``."""
        if self.old is None:
            return "missing"
        return "current" if self.old == self.new else "stale"

    def to_json(self) -> dict[str, object]:
        return {"format": self.format, "path": self.rel, "status": self.status}


def expand_formats(names: list[str] | tuple[str, ...]) -> list[str]:
    """Validate format names; ``all`` means every format. Order follows :data:`FORMATS`."""
    wanted: set[str] = set()
    for name in names:
        if name == "all":
            wanted.update(FORMATS)
        elif name in FORMATS:
            wanted.add(name)
        else:
            raise UsageError(
                f"unknown export format {name!r}", hint=f"choose from: {', '.join(FORMATS)}, all"
            )
    return [name for name in FORMATS if name in wanted]


def citation(rule: pb.Rule) -> str:
    """How an answer cites ``rule`` (SPEC section 5): the one format, from citations.py."""
    return format_citation(rule.id, rule.episode_ids)


def redacted_citations(repo: MemoryRepo, playbook: pb.Playbook) -> set[str]:
    """The cited episodes that are redaction stubs (read from the files: one ``git
    ls-files`` for all of them, then only their own bytes)."""
    cited = {ep for rule in playbook.rules for ep in rule.episode_ids}
    if not cited:
        return set()
    found = set()
    for rel in git.files_named(repo.root, repo.episodes_rel, {f"{ep}.yaml" for ep in cited}):
        try:
            raw = (repo.root / rel).read_bytes()
        except OSError:
            continue
        if b"\nredacted:" in raw:
            found.add(rel.rpartition("/")[2].removesuffix(".yaml"))
    return found


def render_rules(playbook: pb.Playbook, playbook_rel: str, redacted: Collection[str] = ()) -> str:
    """The exported markdown: a header on citing and recording, then every active rule
    (a citation of a redacted episode is marked: the rule's evidence is gone)."""
    example = citation(playbook.rules[0]) if playbook.rules else "[PB-01, learnt in ep-abc1234567]"
    lines = [
        "## Scarwarden playbook",
        "",
        f"Rules learnt from experience: each was distilled from recorded episodes and is kept in "
        f"`{playbook_rel}`. Follow the rules that apply to your task. When you apply one, cite "
        f"it inline exactly as `[PB-NN, learnt in ep-...]`, with the rule's ID and the episodes "
        f"it was learnt in as listed under it, for example `{example}`. Cite only rules listed "
        f"here, and only their own episodes.",
        "",
        "When a task goes wrong, or a human corrects you, record what happened as a new episode "
        '(`scarwarden episode add --task "..." --action "..." --correction "..."`, or the '
        "`record_episode` tool of `scarwarden mcp`) so the playbook can learn from it.",
    ]
    if not playbook.rules:
        lines += ["", "The playbook has no rules yet."]
    for rule in playbook.rules:
        lines += [
            "",
            f"### {rule.id}: {rule.title}",
            "",
            rule.text.strip("\n"),
            "",
            f"- Learnt in: {', '.join(rule.episode_ids)}" + _redacted_note(rule, redacted),
            f"- Cite as: `{citation(rule)}`",
        ]
    return "\n".join(lines)


def _redacted_note(rule: pb.Rule, redacted: Collection[str]) -> str:
    gone = [ep for ep in rule.episode_ids if ep in redacted]
    return f" (evidence redacted: {', '.join(gone)})" if gone else ""


def _read(path: Path, rel: str) -> bytes | None:
    try:
        return read_regular(path)  # a FIFO there is refused, not waited on for ever
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UsageError(f"{rel} is a folder, not a file", hint="use --output FILE") from None


def _decode(raw: bytes | None, rel: str) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"{rel} is not valid UTF-8 (byte {exc.start})", hint="save it as UTF-8, then export again"
        ) from None


def _display(repo: MemoryRepo, path: Path) -> str:
    return path.relative_to(repo.root).as_posix() if path.is_relative_to(repo.root) else str(path)


def load_playbook(repo: MemoryRepo) -> pb.Playbook:
    """The working tree's playbook (what a pre-commit run sees), parsed and validated."""
    from scarwarden.files import playbook_edit as rules

    if not repo.playbook_path.exists():  # not is_file(): a FIFO's read says what it is
        raise UsageError(f"no playbook at {repo.playbook_rel}", hint="run 'scarwarden init' first")
    return rules.load_playbook(repo)


def claude_imports_agents(repo: MemoryRepo, path: Path | None = None) -> bool:
    """Whether CLAUDE.md's section is the ``@AGENTS.md`` import (so the mode sticks)."""
    path = path or repo.root / FORMATS["claude-md"]
    rel = _display(repo, path)
    text = _decode(_read(path, rel), rel)
    if text is None:
        return False
    body = section_body(text, rel)
    return body is not None and body.strip().startswith("@") and "\n" not in body.strip()


def plan(
    repo: MemoryRepo, formats: list[str], *, output: Path | None = None, import_agents: bool | None = None
) -> list[ExportFile]:
    """Every file the export of ``formats`` touches, with its current and exported bytes.

    ``output`` (one format only) replaces the default path. ``import_agents`` makes
    CLAUDE.md import AGENTS.md instead of repeating the rules (and adds ``agents-md``);
    None keeps whichever form CLAUDE.md already has.
    """
    formats = expand_formats(formats)
    if output is not None and len(formats) != 1:
        raise UsageError("--output needs exactly one format, not several or 'all'")
    paths = {fmt: repo.root / FORMATS[fmt] for fmt in formats}
    if output is not None:
        repo.refuse_own_files(output, "--output")
        paths[formats[0]] = output
    if "claude-md" in formats:
        if import_agents is None:
            import_agents = claude_imports_agents(repo, paths["claude-md"])
        if import_agents and "agents-md" not in paths:
            paths["agents-md"] = repo.root / FORMATS["agents-md"]
    _through_links(repo, paths)
    playbook = load_playbook(repo)
    rules_md = render_rules(playbook, repo.playbook_rel, redacted_citations(repo, playbook))
    files: list[ExportFile] = []
    for fmt in FORMATS:
        if fmt not in paths:
            continue
        path = paths[fmt]
        rel = _display(repo, path)
        old = _read(path, rel)
        whole = fmt in ("cursor", "claude-skill")  # a whole file, not a section
        if output is not None and whole and old is not None:
            _refuse_replacing(old, fmt, rel)
        body = rules_md
        if fmt == "claude-md" and import_agents:
            target = os.path.relpath(paths["agents-md"], path.parent)
            body = "@" + Path(target).as_posix()
        new_section = section(body, fmt, repo.playbook_rel)
        if fmt == "cursor":
            text = (
                f"---\ndescription: {CURSOR_DESCRIPTION}\nglobs:\nalwaysApply: true\n---\n\n{new_section}\n"
            )
        elif fmt == "claude-skill":
            from scarwarden.agents.runtimes import skill_file

            text = skill_file(new_section)
        else:
            text = splice(_decode(old, rel), new_section, rel)
        if whole and old is not None:  # a whole file: as it was (CRLF, a BOM)
            text = shaped_as(text, old.decode("utf-8", "replace"))
        files.append(ExportFile(fmt, path, rel, old, text.encode("utf-8"), None if whole else new_section))
    return files


def _refuse_replacing(old: bytes, fmt: str, rel: str) -> None:
    """A format that writes a whole file, sent by ``--output`` onto a file that holds no
    export (no section): refused (exit 2), as it would replace the user's text."""
    if not marked(old.decode("utf-8", "replace")):
        raise UsageError(
            f"--output {rel} is not a Scarwarden export: {fmt} writes a whole file and would "
            "replace what it holds; nothing was written",
            hint="give --output a new file (or one exported before), or move that file away",
        )


def _through_links(repo: MemoryRepo, paths: dict[str, Path]) -> None:
    """Each path that is a symlink (or in a linked folder), followed to the file it names:
    the export writes (and commits) that file, and the link stays (it was replaced by a
    file). A link in the repository out of it or into its own files, and two formats onto
    one file (each would overwrite the other's section), are refused (exit 2)."""
    top = repo.root.resolve()
    seen: dict[str, str] = {}
    for fmt, path in paths.items():
        rel = _display(repo, path)
        real = Path(os.path.realpath(path))
        # The file, or a folder on its way (.cursor -> elsewhere); a loop: its read says so.
        linked = real != Path(os.path.abspath(path)) and not real.is_symlink()
        if linked and real.is_relative_to(top):
            repo.refuse_own_files(real, f"{rel} links to")
            paths[fmt] = repo.root / real.relative_to(top)
        elif linked and Path(os.path.abspath(path)).is_relative_to(repo.root):
            what = "is a symbolic link" if path.is_symlink() else "is in a folder linked"
            raise UsageError(
                f"{rel} {what} out of the repository ({real}): refusing to write there",
                hint="remove the link, or export to that file with --output",
            )
        elif linked and path.is_symlink():  # an --output outside the repository: the link stays
            paths[fmt] = real
        if str(real) in seen:
            raise UsageError(
                f"{seen[str(real)]} and {rel} are the same file ({_display(repo, paths[fmt])}): "
                "exporting both would write one section over the other",
                hint="export one of them (an agent reading the other reads it through the link)",
            )
        seen[str(real)] = rel


def exported_formats(repo: MemoryRepo) -> list[str]:
    """Formats already exported at their default paths (files carrying our section)."""
    found, seen = [], set()
    for fmt, rel in FORMATS.items():
        path = repo.root / rel
        if not path.is_file() or os.path.realpath(path) in seen:  # a link to one checked already
            continue
        seen.add(os.path.realpath(path))
        if fmt == "cursor" or marked(path.read_bytes().decode("utf-8", "replace"), hidden=True):
            found.append(fmt)
    return found


def write_exports(files: list[ExportFile], root: Path | None = None) -> list[ExportFile]:
    """Write the files whose bytes change, all or none (:mod:`.export_write`); return
    those (an unchanged file is not touched). ``root``: paths in an error are shown from it."""
    from scarwarden.agents.export_write import write_all

    changed = [f for f in files if f.status != "current"]
    for f in changed:  # before any write: a refused target leaves the others as they were
        refuse_hard_link(f.path)
    write_all(root, changed)
    return changed


def commit_exports(repo: MemoryRepo, files: list[ExportFile]) -> tuple[str | None, list[ExportFile]]:
    """Write ``files``; commit their sections onto HEAD (``export --commit``, :mod:`.export_commit`)."""
    from scarwarden.agents import export_commit

    return export_commit.write_and_commit(repo, files)


@dataclass(frozen=True)
class ExportResult:
    """What ``scarwarden export`` did: every file planned, those written, the commit."""

    files: list[ExportFile]
    changed: list[ExportFile]
    commit: str | None
    committed: tuple[ExportFile, ...] = ()  # the files the commit holds (not those put back)

    def to_json(self) -> list[dict[str, str]]:
        return [
            {"format": f.format, "path": f.rel, "status": "written" if f in self.changed else "unchanged"}
            for f in self.files
        ]


def export(
    repo: MemoryRepo,
    formats: list[str],
    *,
    output: Path | None = None,
    import_agents: bool | None = None,
    commit: bool = False,
) -> ExportResult:
    """Write the export of ``formats`` (see :func:`plan`); with ``commit``, commit the
    files that changed. Nothing is committed otherwise."""
    if not formats:
        raise UsageError(
            "name a format to export", hint="scarwarden export agents-md (or claude-md, cursor, copilot, all)"
        )
    if commit and output is not None:
        raise UsageError("--commit cannot be combined with --output", hint="commit the file yourself")
    if not commit:
        files = plan(repo, formats, output=output, import_agents=import_agents)
        return ExportResult(files, write_exports(files, repo.root), None)
    with write_lock(repo):
        write_journal.recover(repo)  # a killed write's files back first: they are what we read
        files = plan(repo, formats, output=output, import_agents=import_agents)
        changed = [f for f in files if f.status != "current"]
        sha, committed = commit_exports(repo, files)  # one written before, uncommitted, too
        return ExportResult(files, changed, sha, tuple(committed))


def check_exports(
    repo: MemoryRepo, formats: list[str], *, output: Path | None = None, import_agents: bool | None = None
) -> list[ExportFile]:
    """The files ``export --check`` compares, written nowhere. With no ``formats``,
    those exported so far; an empty list when nothing was ever exported."""
    if output is not None and not formats:  # those are found at their own paths, not there
        raise UsageError(
            "--output needs one FORMAT: the file is checked as that format's export",
            hint="scarwarden export agents-md --check --output FILE (or another format)",
        )
    formats = formats or exported_formats(repo)
    if not formats:
        return []
    return plan(repo, formats, output=output, import_agents=import_agents)


def drift_error(files: list[ExportFile]) -> ScarwardenError | None:
    """The failure (exit 1) when any of ``files`` is missing or out of date, else None."""
    bad = [f for f in files if f.status != "current"]
    if not bad:
        return None
    fmts = " ".join(dict.fromkeys(f.format for f in bad))
    problems = [
        Problem("missing" if f.status == "missing" else "out of date with the playbook", file=f.rel)
        for f in bad
    ]
    return ScarwardenError(
        f"{len(bad)} exported file(s) not current with the playbook",
        problems=problems,
        hint=f"run 'scarwarden export {fmts}' and commit the result",
    )
