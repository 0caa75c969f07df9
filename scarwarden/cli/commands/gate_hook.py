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
    from scarwarden.gate.refgate import branch_moves, check_moves, push_moves, refused_move, resolve_old

    lines = sys.stdin.read().splitlines()
    moves = branch_moves(lines) if hook == "reference-transaction" else push_moves(lines)
    if not moves:
        return
    repo = get_repo(ctx, initialised=False)
    if hook == "reference-transaction":
        moves = resolve_old(repo.root, moves)
        if not moves:
            return
    report = check_moves(repo, moves, hook)
    if report.ok:
        return
    if hook == "reference-transaction":
        report = refused_move(report, moves)
    for p in report.problems:
        text = str(p).splitlines()
        click.echo(f"- {text[0]}", err=True)
        for line in text[1:]:
            click.echo(f"  {line}", err=True)
    what = "move" if hook == "reference-transaction" else "push"
    refs = ", ".join(dict.fromkeys(m.ref for m in moves))
    click.echo(
        f"scarwarden: refused to {what} {refs}: {len(report.problems)} problem(s) in the commits it adds",
        err=True,
    )
    click.echo(
        "hint: fix the commits (the gate's hint says how), or bypass once with SCARWARDEN_SKIP=1 "
        "(scarwarden verify still reports it)",
        err=True,
    )
    ctx.exit(1)
