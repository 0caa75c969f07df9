"""``scarwarden diff``: the semantic diff of the playbook between two revisions."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scarwarden.cli.commands._common import echo_json, get_repo


@click.command()
@click.argument("rev1", required=False)
@click.argument("rev2", required=False)
@click.option(
    "--json", "as_json", is_flag=True, help="Print {from, to, summary, rules, new_citations} as JSON."
)
@click.option(
    "--color/--no-color", default=None, help="Colour the word diff (default: only when stdout is a terminal)."
)
@click.option(
    "--textconv",
    "textconv_file",
    metavar="FILE",
    type=click.Path(exists=True, dir_okay=False),
    help="Print FILE (a playbook) rule by rule, for git's diff driver.",
)
@click.pass_context
def diff(
    ctx: click.Context,
    rev1: str | None,
    rev2: str | None,
    as_json: bool,
    color: bool | None,
    textconv_file: str | None,
) -> None:
    """Semantic diff of the playbook: rules added, retired and changed.

    Shows each changed rule's title and text as a word diff ([-old-]{+new+} without
    colour), the tags and citations added (+) and removed (-), and quotes the
    episodes newly cited, so the evidence is on the screen.

    With no revision: HEAD vs the working tree when the playbook has uncommitted
    changes; otherwise what the last `distill:` commit changed (its parent vs HEAD,
    including any edit since); with no distill commit, the last commit that touched
    the playbook. REV1 alone compares REV1 with the working tree.

    --textconv FILE is for git: with `memory/playbook.md diff=scarwarden` in
    .gitattributes and `git config diff.scarwarden.textconv "scarwarden diff
    --textconv"`, `git diff` and `git log -p` show the playbook rule by rule
    (docs/audit.md).

    \b
    Examples:
      scarwarden diff                      # what the last distill changed
      scarwarden diff HEAD~3 HEAD --json
      scarwarden diff main                 # main vs the working tree
    """
    if textconv_file is not None:
        from scarwarden.audit.diff.render import render_textconv
        from scarwarden.regular_files import read_regular

        text = read_regular(Path(textconv_file)).decode("utf-8", "replace")  # a FIFO: refused
        click.echo(render_textconv(text), nl=False)
        return
    from scarwarden.audit.diff.compare import semantic_diff

    repo = get_repo(ctx)
    result = semantic_diff(repo, rev1, rev2)
    if as_json:
        echo_json(result.to_json())
        return
    from scarwarden.audit.diff.render import render_text

    use_color = sys.stdout.isatty() if color is None else color
    click.echo(render_text(result, color=use_color), nl=False, color=use_color)
