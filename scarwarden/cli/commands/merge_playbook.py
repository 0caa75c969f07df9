from __future__ import annotations

from pathlib import Path

import click


@click.command("merge-playbook")
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path", required=False)
@click.pass_context
def merge_playbook(ctx: click.Context, base: Path, ours: Path, theirs: Path, path: str | None) -> None:
    """Git's merge driver for the playbook: a three-way merge by rule, not by line.

    Git runs it as 'merge-playbook %O %A %B %P' and reads the result from OURS. New
    rules from both sides are kept; a rule changed on one side takes that side; changed
    on both, tags and citations are unioned and text merges when one side left it
    alone, otherwise that rule alone gets conflict markers (exit 1), which the gate
    refuses until they are resolved. Registered by 'scarwarden hooks install' and
    'scarwarden init'.

    \b
    Examples:
      scarwarden hooks install --merge-driver
    """
    from scarwarden.files.playbook_merge import OURS_MARKER, run_merge_driver

    result = run_merge_driver(base, ours, theirs)
    if result.clean:
        return
    name = path or "memory/playbook.md"
    if result.conflicts == ["lines"] and OURS_MARKER not in result.text:
        # git's line merge wrote no marker: it refused a side as binary (NUL bytes)
        click.echo(
            f"scarwarden: cannot merge {name}: a side is not text (git's line merge refuses "
            f"binary content), so {name} is left as ours; keep the version you want, fix it, "
            "then commit",
            err=True,
        )
        ctx.exit(1)
    where = ", ".join(result.conflicts)
    click.echo(f"scarwarden: conflict in {name}: {where}; resolve each conflict, then commit", err=True)
    ctx.exit(1)
