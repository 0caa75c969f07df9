"""``scarwarden audit --html DIR``: the audit pages as static HTML."""

from __future__ import annotations

from pathlib import Path

import click

from scarwarden.cli.commands._common import echo_json, get_repo, require_ui


@click.command()
@click.option(
    "--html",
    "html_dir",
    required=True,
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Folder to write the pages into (created if missing); refused (exit 2) when empty "
    "or inside .git, the memory folder or .scarwarden/.",
)
@click.option("--json", "as_json", is_flag=True, help="Print {directory, pages, rules, episodes} as JSON.")
@click.pass_context
def audit(ctx: click.Context, html_dir: str, as_json: bool) -> None:
    """Write the audit pages as static HTML: the playbook, every rule and episode.

    DIR gets index.html (the playbook), rules/PB-NN.html (each rule, its cited
    episodes word for word, its git history), episodes/<id>.html (each episode
    and the rules citing it), ledger.html and static/style.css. Links are
    relative, so a CI job can publish the folder or attach it to a pull request.
    Uses the same templates as `scarwarden serve` (needs the ui extra).

    \b
    Examples:
      scarwarden audit --html site/
      scarwarden audit --html "${RUNNER_TEMP:-.}/audit" --json   # CI's temp folder, else here
    """
    require_ui("scarwarden audit --html")
    from scarwarden.audit.web.static_site import export_html
    from scarwarden.cli.commands._progress import progress_bar

    repo = get_repo(ctx)
    with progress_bar("writing pages", quiet=as_json) as progress:  # a bar on a terminal only
        result = export_html(repo, html_dir, progress=progress)
    if as_json:
        echo_json(result.to_json())
        return
    images = f" and {result.images} image page(s)" if result.images else ""
    click.echo(
        f"wrote {result.pages} pages ({result.rules} rules, {result.episodes} episodes){images} "
        f"to {html_dir}; open {Path(html_dir) / 'index.html'}"
    )
    if result.removed:
        click.echo(f"removed {result.removed} stale page(s) of an earlier export")
