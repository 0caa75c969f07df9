"""``scarwarden export``: the playbook in AGENTS.md, CLAUDE.md, Cursor and Copilot files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scarwarden.cli.commands._common import OutputPath, echo_json, get_repo
from scarwarden.errors import UsageError

if TYPE_CHECKING:
    from scarwarden.agents.exports import ExportFile, ExportResult
    from scarwarden.repo import MemoryRepo

FORMAT_NAMES = (
    "agents-md",
    "claude-md",
    "cursor",
    "copilot",
    "gemini-md",
    "claude-skill",
    "all",
    "mcp-config",
)


@click.command()
@click.argument("formats", nargs=-1, metavar="[FORMAT]...", type=click.Choice(FORMAT_NAMES))
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 when an exported file is missing or out of date "
    "with the playbook. With no FORMAT, checks the files exported so far.",
)
@click.option(
    "--output",
    "-o",
    type=OutputPath(),
    help="Write (or check) this file instead of the format's default path (one FORMAT only). "
    "It may be outside the repository too (an absolute path, or '..'), and is never committed "
    "(--commit is refused with --output): commit it yourself. Refused (exit 2) when empty or "
    "inside .git, the memory folder or .scarwarden/, or onto scarwarden.yaml (symlinks and '..' "
    "followed); cursor and claude-skill write a whole file, so also onto a file that holds no "
    "export.",
)
@click.option(
    "--import-agents/--inline",
    "import_agents",
    default=None,
    help="claude-md: make CLAUDE.md import AGENTS.md ('@AGENTS.md', and export "
    "AGENTS.md too) or repeat the rules inline. Default: keep the form "
    "CLAUDE.md already has (inline for a new file).",
)
@click.option(
    "--commit",
    "do_commit",
    is_flag=True,
    help="Commit the export's change (by default exports are only written): a file git "
    "has is committed as HEAD holds it with only the section replaced, so your own edits "
    "stay uncommitted (and staged, if they were).",
)
@click.option(
    "--bare-command",
    is_flag=True,
    help="mcp-config: start 'scarwarden' by name, from the client's PATH, instead of by "
    "the absolute path of this executable (which works from a virtual environment).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON list of {format, path, status}; status is written, "
    "unchanged (export) or missing, stale, current (--check).",
)
@click.pass_context
def export(
    ctx: click.Context,
    formats: tuple[str, ...],
    check: bool,
    output: str | None,
    import_agents: bool | None,
    do_commit: bool,
    bare_command: bool,
    as_json: bool,
) -> None:
    """Write the playbook into the instruction files agents read natively.

    \b
    FORMAT      file (relative to the repository root)
    agents-md   AGENTS.md, a section between <!-- scarwarden:begin/end --> markers
    claude-md   CLAUDE.md, a section (or '@AGENTS.md' with --import-agents)
    cursor      .cursor/rules/scarwarden.mdc, a whole file (alwaysApply: true)
    copilot     .github/copilot-instructions.md, a section
    gemini-md   GEMINI.md (Gemini CLI), a section
    claude-skill .claude/skills/scarwarden/SKILL.md, a Claude Code skill: when to
                recall, how to pass receipts, how to record, then the rules
    all         all of the above
    mcp-config  print the MCP server entry for Claude Code, Cursor, VS Code and
                Codex, starting this executable by its absolute path
                (--bare-command: by name; --check: the project's MCP files
                run Scarwarden here)

    Every active rule is written with its ID, title, text and the episodes it was
    learnt in, under a short header telling the agent to cite rules as
    [PB-NN, learnt in ep-...] and to record episodes. Text outside the markers is
    left byte for byte; a file that would not change is not rewritten. Nothing is
    committed unless --commit is given. See docs/exports.md.

    \b
    Examples:
      scarwarden export agents-md
      scarwarden export all
      scarwarden export claude-md --import-agents
      scarwarden export --check            # CI / pre-commit: exit 1 on drift
      scarwarden export cursor --check      # (exits 1: nothing exported yet)
      scarwarden export agents-md --output docs/AGENTS.md
      scarwarden export gemini-md claude-skill
      scarwarden export mcp-config
    """
    from scarwarden.agents import exports

    repo = get_repo(ctx)
    if "mcp-config" in formats:
        _refuse_write_options(output, import_agents, do_commit)
        _mcp_config(repo, formats, check, as_json, bare_command)
        return
    if bare_command:
        raise UsageError("--bare-command goes with mcp-config")
    _refuse_ignored_options(formats, check, import_agents, do_commit)
    path = _output_path(ctx, output)
    if check:
        _check(exports.check_exports(repo, list(formats), output=path, import_agents=import_agents), as_json)
        return
    result = exports.export(repo, list(formats), output=path, import_agents=import_agents, commit=do_commit)
    _print_export(result, as_json, None if path is None else _inside(path, repo.root), do_commit)


def _refuse_write_options(output: str | None, import_agents: bool | None, do_commit: bool) -> None:
    """mcp-config writes nothing: an option of the formats that write files, given with
    it, is refused (as --bare-command is without it) rather than silently ignored."""
    given = [
        name
        for name, on in (
            ("--output", output is not None),
            ("--import-agents/--inline", import_agents is not None),
            ("--commit", do_commit),
        )
        if on
    ]
    if given:
        raise UsageError(
            f"{' and '.join(given)} {'goes' if len(given) == 1 else 'go'} with the formats that "
            "write files; mcp-config prints configuration and writes nothing",
            hint="scarwarden export mcp-config, then paste the entry into your client's file",
        )


def _refuse_ignored_options(
    formats: tuple[str, ...], check: bool, import_agents: bool | None, do_commit: bool
) -> None:
    """An option the export would do nothing with, given what else was asked, is refused
    (exit 2) rather than silently ignored: ``--check --commit`` committed nothing."""
    if check and do_commit:
        raise UsageError(
            "--commit goes with an export that writes; --check writes nothing",
            hint="scarwarden export FORMAT --commit, or --check alone",
        )
    if import_agents is not None and formats and not {"claude-md", "all"} & set(formats):
        raise UsageError(
            "--import-agents/--inline goes with claude-md (or all): it chooses how CLAUDE.md holds the rules",
            hint="scarwarden export claude-md --import-agents",
        )


def _print_export(
    result: ExportResult, as_json: bool, output_inside: bool | None = None, committing: bool = False
) -> None:
    """Each file written or unchanged, then whether they were committed. A file written
    by ``--output`` (``output_inside`` not None) is not offered ``--commit``, which is
    refused with it; one outside the repository is not git's to commit at all. With
    ``--commit`` and no commit, HEAD already held the export (the files were put back)."""
    if as_json:
        echo_json(result.to_json())
    else:
        for f in result.files:
            click.echo(f"{'wrote' if f in result.changed else 'unchanged'}  {f.rel}")
    if result.commit:
        click.echo(f"Committed {len(result.committed)} file(s) as {result.commit[:10]}", err=True)
    elif result.changed and committing:
        click.echo(
            "Not committed: HEAD already holds this export (the files were put back in line).", err=True
        )
    elif result.changed and output_inside is None:
        click.echo("Not committed: review and commit the exported files (or use --commit).", err=True)
    elif result.changed and output_inside:
        click.echo("Not committed: review and commit the exported file.", err=True)


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (absolute; '..' and symlinks followed) is in the repository."""
    return Path(os.path.realpath(path)).is_relative_to(root.resolve())


def _output_path(ctx: click.Context, output: str | None) -> Path | None:
    """``--output`` as given; a relative path follows the global ``--repo`` ("run as if
    started in PATH"). An empty one (an unset variable) is refused, not read as '.'."""
    if output is None:
        return None
    if not output:
        raise UsageError(
            "--output is empty: give the file to write", hint="leave -o out for the default path"
        )
    if Path(output).is_absolute():
        return Path(output)
    base = Path((ctx.find_root().obj or {}).get("repo_path", "."))
    return (base / output).absolute()


def _check(files: list[ExportFile], as_json: bool) -> None:
    """``--check``: each file's status; exit 1 (the boundary prints why) on drift."""
    from scarwarden.agents.exports import drift_error

    if not files:
        if as_json:
            echo_json([])
        click.echo(
            "nothing exported yet: no AGENTS.md, CLAUDE.md, Cursor or Copilot section to check", err=True
        )
        return
    if as_json:
        echo_json([f.to_json() for f in files])
    else:
        for f in files:
            click.echo(f"{f.status:<8} {f.rel}")
    error = drift_error(files)
    if error is not None:
        raise error


def _mcp_config(
    repo: MemoryRepo, formats: tuple[str, ...], check: bool, as_json: bool, bare: bool = False
) -> None:
    """``export mcp-config``: print each client's server entry, or check the project's."""
    from scarwarden.agents.runtimes import check_mcp_configs, mcp_entries

    if len(formats) != 1:
        raise UsageError("mcp-config prints configuration; export it on its own")
    if check:
        ok = check_mcp_configs(repo)
        if as_json:
            echo_json({"ok": True, "clients": ok})
        else:
            click.echo(f"current  MCP configuration for {', '.join(ok)}")
        return
    entries = mcp_entries(repo, bare=bare)
    if as_json:
        echo_json([e.to_json() for e in entries])
        return
    for e in entries:
        click.echo(f"# {e.client}: {e.path}" + (f"   (or: {e.command})" if e.command else ""))
        click.echo(e.text)
