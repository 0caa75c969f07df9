from __future__ import annotations

import sys

import click

from scarwarden.cli.commands._common import get_repo


@click.command("gate-hook")
@click.argument("hook", type=click.Choice(["reference-transaction", "pre-push"]))
@click.pass_context
def gate_hook(ctx: click.Context, hook: str) -> None:
    """What the reference-transaction and pre-push hooks run (reads git's stdin).

    reference-transaction: refuses to move a branch onto commits that fail the gate,
    checking only what the move adds (old..new), so 'git revert', 'cherry-pick',
    'rebase', 'am' and fast-forward merges are checked before they land. pre-push:
    refuses to push such commits. Silent when clean; exit 1 with every problem when
    not. Bypass once with SCARWARDEN_SKIP=1 ('scarwarden verify' still catches it).

    \b
    Examples:
      scarwarden hooks install
    """
    from scarwarden.gate.refgate import run_hook

    code, lines = run_hook(hook, sys.stdin.read().splitlines(), lambda: get_repo(ctx, initialised=False))
    for line in lines:
        click.echo(line, err=True)
    if code:
        ctx.exit(code)
