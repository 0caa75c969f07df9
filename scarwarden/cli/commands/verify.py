from __future__ import annotations

import click

from scarwarden.cli.commands._common import get_repo, print_verdict


@click.command()
@click.argument("rev_range", required=False, metavar="[RANGE]")
@click.option("--all-refs", is_flag=True, help="Walk every branch and tag, not just HEAD.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def verify(ctx: click.Context, rev_range: str | None, all_refs: bool, as_json: bool) -> None:
    """Prove the history honest: an append-only ledger and a playbook that resolved.

    Walks every commit of the current branch (or RANGE, e.g. origin/main..HEAD),
    oldest first, and proves that no episode file was ever modified, renamed, deleted
    or changed mode after it was added, that every added episode was valid and unique,
    and that every version of the playbook parsed, kept its rule IDs and cited only
    episodes in that commit's own tree. Each problem is reported once, at the first
    commit that introduced it, so a commit made with 'git commit --no-verify' is caught
    here. Exit 1 when anything is wrong; exit 2 for a RANGE git cannot resolve or
    one naming something other than commits (a tree such as HEAD^{tree}, a blob).

    Objects are read as stored ('git replace' is ignored), and a shallow clone is
    reported as unverifiable (exit 6, with the depth it could see) instead of honest.

    \b
    Examples:
      scarwarden verify
      scarwarden verify origin/main..HEAD
      scarwarden verify --json
      scarwarden verify --all-refs
    """
    from scarwarden.errors import UsageError
    from scarwarden.gate.history_check import verify_history

    if all_refs and rev_range:
        raise UsageError("--all-refs walks every branch and tag; it cannot take a RANGE too")
    from scarwarden.cli.commands._progress import progress_bar

    repo = get_repo(ctx, initialised=False)
    with progress_bar("verifying history", quiet=as_json) as progress:  # a bar on a terminal only
        result = verify_history(repo, rev_range, all_refs=all_refs, progress=progress)
    print_verdict(ctx, result, as_json=as_json)
