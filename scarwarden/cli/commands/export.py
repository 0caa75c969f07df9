"""``scarwarden export``: the playbook in AGENTS.md, CLAUDE.md, Cursor and Copilot files."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scarwarden.cli.commands._common import echo_json, get_repo
from scarwarden.errors import Problem, ScarwardenError, UsageError
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:
    from scarwarden.agents.exports import ExportFile

FORMAT_NAMES = ("agents-md", "claude-md", "cursor", "copilot", "all")


@click.command()
@click.argument("formats", nargs=-1, metavar="[FORMAT]...",
                type=click.Choice(FORMAT_NAMES))
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 when an exported file is missing or out of date "
                   "with the playbook. With no FORMAT, checks the files exported so far.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write (or check) this file instead of the format's default path "
                   "(one FORMAT only).")
@click.option("--import-agents/--inline", "import_agents", default=None,
              help="claude-md: make CLAUDE.md import AGENTS.md ('@AGENTS.md', and export "
                   "AGENTS.md too) or repeat the rules inline. Default: keep the form "
                   "CLAUDE.md already has (inline for a new file).")
@click.option("--commit", "do_commit", is_flag=True,
              help="Commit the files that changed (by default exports are only written).")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list of {format, path, status}; status is written, "
                   "unchanged (export) or missing, stale, current (--check).")
@click.pass_context
def export(ctx: click.Context, formats: tuple[str, ...], check: bool, output: Path | None,
           import_agents: bool | None, do_commit: bool, as_json: bool) -> None:
    """Write the playbook into the instruction files agents read natively.

    \b
    FORMAT      file (relative to the repository root)
    agents-md   AGENTS.md, a section between <!-- scarwarden:begin/end --> markers
    claude-md   CLAUDE.md, a section (or '@AGENTS.md' with --import-agents)
    cursor      .cursor/rules/scarwarden.mdc, a whole file (alwaysApply: true)
    copilot     .github/copilot-instructions.md, a section
    all         all four

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
      scarwarden export cursor --check
      scarwarden export agents-md --output docs/AGENTS.md
    """
    from scarwarden.agents import exports

    repo = get_repo(ctx)
    if output is not None and not output.is_absolute():
        # "Run as if started in PATH": relative paths follow the global --repo.
        base = Path((ctx.find_root().obj or {}).get("repo_path", "."))
        output = (base / output).absolute()
    names = list(formats)
    if not names:
        if not check:
            raise UsageError("name a format to export",
                             hint="scarwarden export agents-md (or claude-md, cursor, copilot, all)")
        names = exports.exported_formats(repo)
        if not names:
            if as_json:
                echo_json([])
            click.echo("nothing exported yet: no AGENTS.md, CLAUDE.md, Cursor or Copilot "
                       "section to check", err=True)
            return
    files = exports.plan(repo, names, output=output, import_agents=import_agents)
    if check:
        _report_check(files, as_json)
        return
    if do_commit and output is not None:
        raise UsageError("--commit cannot be combined with --output",
                         hint="commit the file yourself")
    changed = exports.write_exports(files)
    sha = exports.commit_exports(repo, changed) if do_commit and changed else None
    if as_json:
        echo_json([{"format": f.format, "path": f.rel,
                    "status": "written" if f in changed else "unchanged"} for f in files])
    else:
        for f in files:
            click.echo(f"{'wrote' if f in changed else 'unchanged'}  {f.rel}")
    if sha:
        click.echo(f"Committed {len(changed)} file(s) as {sha[:10]}", err=True)
    elif changed:
        click.echo("Not committed: review and commit the exported files (or use --commit).",
                   err=True)


def _report_check(files: list[ExportFile], as_json: bool) -> None:
    bad = [f for f in files if f.status != "current"]
    if as_json:
        echo_json([f.to_json() for f in files])
    else:
        for f in files:
            click.echo(f"{f.status:<8} {f.rel}")
    if bad:
        fmts = " ".join(dict.fromkeys(f.format for f in bad))
        problems = [Problem("missing" if f.status == "missing" else
                            "out of date with the playbook", file=f.rel) for f in bad]
        raise ScarwardenError(
            f"{len(bad)} exported file(s) not current with the playbook", problems=problems,
            hint=f"run 'scarwarden export {fmts}' and commit the result")


def demo_section(repo: MemoryRepo, echo: Callable[[str], None]) -> None:
    """Demo: export the playbook into AGENTS.md and show the head of the section."""
    from scarwarden.agents import exports

    files = exports.plan(repo, ["agents-md"])
    exports.write_exports(files)
    text = files[0].path.read_text(encoding="utf-8")
    echo("$ scarwarden export agents-md")
    echo(f"wrote  {files[0].rel}  (a marked section; the rest of the file is left alone)")
    for line in text.splitlines()[:14]:
        # Wrap the long header paragraphs for a terminal; the file keeps them whole.
        for part in textwrap.wrap(line, 92, break_on_hyphens=False) or [""]:
            echo(f"  | {part}")
    echo("  | ...")
    again = exports.plan(repo, ["agents-md"])
    echo(f"$ scarwarden export --check   ->  {again[0].rel}: {again[0].status}")
