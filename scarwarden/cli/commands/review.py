"""``scarwarden review``: the pull-request report of memory changes, with evidence."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scarwarden.cli.commands._common import OutputPath, echo_json, get_repo, verdict_output
from scarwarden.errors import ExitCode

if TYPE_CHECKING:
    from scarwarden.audit.review.build import Review


@click.command()
@click.option(
    "--base",
    metavar="REV",
    help="The branch or commit the change goes into; the report covers its merge "
    "base with --head. Default: the parent of the last distill commit.",
)
@click.option("--head", metavar="REV", help="The tip of the change (default: HEAD).")
@click.option(
    "--github",
    is_flag=True,
    help="Also append the report to $GITHUB_STEP_SUMMARY and print ::error / "
    "::warning annotations for GitHub Actions.",
)
@click.option(
    "--output",
    "-o",
    metavar="FILE",
    type=OutputPath(),
    help="Write the markdown to FILE instead of stdout; refused (exit 2) when empty or inside "
    ".git, the memory folder or .scarwarden/, or onto scarwarden.yaml.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print {base, head, ok, gate, gate_note, warnings, episodes_added, diff, "
    "evidence} as JSON instead of markdown.",
)
@click.pass_context
def review(
    ctx: click.Context, base: str | None, head: str | None, github: bool, output: str | None, as_json: bool
) -> None:
    """Pull-request report of memory changes, with the evidence quoted.

    For each rule added, changed, retired or removed: its old and new form, a word
    diff, the tags and citations added and removed, and every cited episode's task,
    action, outcome and correction. Then the provenance gate's result for the range
    and reviewer warnings: a rule resting on a single episode, a cited episode with
    no outcome and no correction, citations removed, rules that overlap heavily.

    Exits 1 when the gate fails, so a CI job fails with it (action.yml at the
    project root runs this on pull requests; see docs/audit.md).

    \b
    Examples:
      scarwarden review --base origin/main
      scarwarden review --base main --output review.md
      scarwarden review --base "$BASE_SHA" --head "$HEAD_SHA" --github
    """
    from scarwarden.audit.review.build import build_review
    from scarwarden.audit.review.markdown import render_markdown

    repo = get_repo(ctx)
    if output is not None:
        repo.refuse_own_files(output, "--output")  # before the work, and the file stays as it was
    summary = os.environ.get("GITHUB_STEP_SUMMARY") if github else None
    if summary:  # appended to: never .git/config, the playbook or the settings
        repo.refuse_own_files(summary, "GITHUB_STEP_SUMMARY")
    result = build_review(repo, base, head)
    with verdict_output(result.ok):  # `review | head`: the reader left, the gate's verdict stands
        _print(
            result, render_markdown(result), as_json=as_json, output=output, github=github, summary=summary
        )
    if not result.ok:
        problems = len(result.gate_problems())
        click.echo(
            f"the provenance gate failed ({problems} problem{'s' if problems != 1 else ''}); see the report",
            err=True,
        )
        ctx.exit(int(ExitCode.CHECK_FAILED))


def _print(
    result: Review, markdown: str, *, as_json: bool, output: str | None, github: bool, summary: str | None
) -> None:
    """The report, where it was asked for, and for GitHub its annotations and summary."""
    if as_json:
        echo_json(result.to_json())
    elif output is not None:
        Path(output).write_text(markdown, encoding="utf-8")
        click.echo(f"wrote the review to {output}", err=True)
    else:
        click.echo(markdown, nl=False)
    if github:
        for line in result.annotations():
            click.echo(line)
        if summary:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(markdown + "\n")
        else:
            click.echo("GITHUB_STEP_SUMMARY is not set: no job summary written", err=True)
