from __future__ import annotations

import click

from scarwarden.cli.commands._common import echo_json, get_repo


@click.command()
@click.option("--remote", default="origin", show_default=True, help="The remote to sync with.")
@click.option(
    "--retries",
    type=click.IntRange(0, 100),
    default=8,
    show_default=True,
    help="Rounds to retry when the remote moved.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def sync(ctx: click.Context, remote: str, retries: int, as_json: bool) -> None:
    """Share memory with a remote other agents push to: fetch, integrate, push.

    Fetches the current branch from REMOTE, integrates it (a fast-forward; else the
    local commits are rebased onto it: new episodes never conflict, and the playbook
    merges rule by rule; else a merge commit; a merge at once when a local episode's
    recall receipt names the ledger of a local commit, which a rebase would rewrite
    away), and pushes. When another agent pushed meanwhile (git's status for the
    branch: rejected as behind the remote, or the remote's ref moved under the push),
    it waits (0.2 s doubled each round, at most 10 s, with jitter) and tries again, up
    to --retries times. A conflict no merge resolves, a push the remote refuses for a
    reason of its own (a hook, a protected or checked-out branch, a locked ref: not
    retried), or a remote still moving after --retries stops it with the repository as
    it was, nothing pushed (exit 1).

    A remote branch that shares no history with the local one (a wrong remote) is
    refused before anything changes (exit 2). Where REMOTE has no branch of this name
    yet, sync creates it when REMOTE is empty or one of its branches shares this
    history (a remote with tags and no branch: one of its tags); a remote whose
    branches all belong to another project is refused (exit 2: push there by hand with
    git if that is meant). Needs a clean tree of tracked files.

    Only the branch moves: sync fetches no tag (it writes no ref it has not judged)
    and pushes the branch alone (with git's push.followTags set, git adds the
    annotated tags it reaches). Share tags with git: git fetch --tags REMOTE, git push
    REMOTE TAG.

    \b
    Examples:
      scarwarden sync
      scarwarden sync --retries 3 --json
    """
    from scarwarden.agents.sync import sync as run_sync

    repo = get_repo(ctx)
    result = run_sync(repo, remote=remote, retries=retries)
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(result.summary())
