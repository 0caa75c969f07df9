from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from scarwarden.cli.commands._common import get_repo, print_verdict
from scarwarden.errors import UsageError

if TYPE_CHECKING:
    from scarwarden.gate.check import CheckReport


@click.command()
@click.option(
    "--staged",
    is_flag=True,
    help="The tree about to be committed, from git's index (the default).",
)
@click.option(
    "--all",
    "all_",
    is_flag=True,
    help="The committed-plus-staged tree as a whole (parses every episode).",
)
@click.option(
    "--from-ref",
    metavar="REV",
    help="Check every commit after REV (CI on a pull request); default from $PRE_COMMIT_FROM_REF.",
)
@click.option(
    "--to-ref", metavar="REV", help="...up to and including REV (default HEAD, or $PRE_COMMIT_TO_REF)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def check(
    ctx: click.Context, staged: bool, all_: bool, from_ref: str | None, to_ref: str | None, as_json: bool
) -> None:
    """The provenance gate: no provenance, no rule.

    Rejects a rule that cites no episode or an episode that is not in the tree, any
    edit, rename, deletion or mode change of an existing episode (the ledger is
    append-only), an invalid, misplaced or duplicate new episode, stray files in the
    episodes folder, and a playbook that does not parse, repeats a rule ID, drops a
    rule instead of retiring it, or reuses a retired ID. Every problem is reported,
    with file, line and a hint; exit 1 when there is any, 0 when clean, 2 when the
    command cannot run (a ref that names no commit, bad settings).

    --staged (the default; what the git hook runs) reads only git's index, so an
    untracked or unstaged file never makes a citation pass. --from-ref/--to-ref check
    every commit of a range against its parents and its own tree; under the pre-commit
    framework the range comes from PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF. History as
    a whole is 'scarwarden verify'.

    \b
    Examples:
      scarwarden check                       # what 'git commit' would record now
      scarwarden check --all                 # the whole ledger and playbook
      scarwarden check --from-ref origin/main --to-ref HEAD --json
    """
    from scarwarden.gate import check as gate

    if staged and all_:  # one tree or the other: neither may silently win
        raise UsageError(
            "--staged and --all are two scopes: give one",
            hint="--staged checks what the next commit records, --all the whole ledger and playbook",
        )
    scope = "all" if all_ else "staged" if staged else None
    from_ref, to_ref = _commit_range(scope, from_ref, to_ref)
    # Not initialised is fine: the hook may be installed before 'scarwarden init', and a
    # repository without memory has nothing to check (it must not block other commits).
    repo = get_repo(ctx, initialised=False)
    report: CheckReport
    if from_ref:
        report = gate.check_range(repo, from_ref, to_ref or "HEAD")
    elif scope == "all":
        from scarwarden.cli.commands._progress import progress_bar

        with progress_bar("checking episodes", quiet=as_json) as progress:  # a bar on a terminal only
            report = gate.check_all(repo, progress=progress)
    else:
        report = gate.check_staged(repo)
    print_verdict(ctx, report, as_json=as_json)


def _commit_range(
    scope: str | None, from_ref: str | None, to_ref: str | None
) -> tuple[str | None, str | None]:
    """``--from-ref``/``--to-ref`` checked against the scope; without them (and without
    ``--all``) the range the pre-commit framework passes in its environment, if any."""
    for name, ref in (("--from-ref", from_ref), ("--to-ref", to_ref)):
        if ref is not None and not ref.strip():  # CI's "$BASE" unset: not "no range"
            raise UsageError(
                f"{name} is empty: give the commit the range starts after (or ends at)",
                hint="in CI, check that the variable holding it is set (e.g. the pull request's base SHA)",
            )
    if (from_ref or to_ref) and scope is not None:
        raise UsageError(
            f"--{scope} checks one tree; it cannot be combined with "
            "--from-ref/--to-ref, which check every commit of a range"
        )
    if to_ref and not from_ref:
        raise UsageError("--to-ref needs --from-ref", hint="scarwarden check --from-ref A --to-ref B")
    if not from_ref and scope != "all":
        env_from = os.environ.get("PRE_COMMIT_FROM_REF")
        env_to = os.environ.get("PRE_COMMIT_TO_REF")
        if env_from and env_to:
            click.echo(
                f"scarwarden: checking {env_from}..{env_to} (from PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF)",
                err=True,
            )
            return env_from, env_to
    return from_ref, to_ref
