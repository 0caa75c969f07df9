"""``scarwarden distill``: new episodes -> cited playbook changes, as one commit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from scarwarden.cli.commands._common import echo_json, get_repo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.distill import DistillResult
    from scarwarden.repo import MemoryRepo


def _report(result: DistillResult, echo: Callable[[str], None]) -> None:
    """The human summary: what changed, what the gate refused, what was left."""
    if not result.new:
        echo("nothing new to distill: every episode in the ledger is distilled already")
        return
    if result.nothing_new:
        echo(f"{len(result.new)} new episode(s), nothing the {result.distiller} distiller can learn from:")
        for ep, why in result.left:
            echo(f"  {ep}: {why}")
        _drops(result, echo)  # why: without it, only --json said what the gate refused
        echo("no commit made")
        return
    echo(result.subject)
    for change in result.changes:
        echo("  " + change.describe().replace("\n", "\n  "))
    _drops(result, echo)
    if result.contradictions:
        echo(click.style(f"contradictions found ({len(result.contradictions)}):", fg="yellow"))
        for flag in result.contradictions:
            echo(f"  - {flag.describe()}")
    if result.struggling:
        echo(click.style(f"proposed for revision or retirement ({len(result.struggling)}):", fg="yellow"))
        for lineage in result.struggling:
            echo(f"  - {lineage.sentence()}")
    if result.no_lesson:
        echo(f"taught nothing ({len(result.no_lesson)}):")
        for ep, why in result.no_lesson:
            echo(f"  - {ep}: {why}")
    if result.left:
        echo(f"left for later ({len(result.left)}):")
        for ep, why in result.left:
            echo(f"  - {ep}: {why}")
    if result.distiller == "model":
        u = result.usage
        echo(
            f"model {result.model}: {result.calls} call(s), {u.prompt_tokens} prompt + "
            f"{u.completion_tokens} completion tokens{' (estimated)' if u.estimated else ''}"
        )


def _drops(result: DistillResult, echo: Callable[[str], None]) -> None:
    if result.drops:
        echo(click.style(f"dropped by the provenance gate ({len(result.drops)}):", fg="yellow"))
        for drop in result.drops:
            echo(f"  - {drop.describe()}")
    if result.review:  # kept, not dropped: a heuristic is the reviewer's cue, not a gate
        echo(click.style(f"review: may be injected text, not a lesson ({len(result.review)}):", fg="yellow"))
        for flag in result.review:
            echo(f"  - {flag.describe()}")


@click.command()
@click.option(
    "--offline", is_flag=True, help="Use the deterministic offline distiller even when a key is configured."
)
@click.option("--dry-run", is_flag=True, help="Print the playbook diff; change nothing.")
@click.option(
    "--branch",
    metavar="NAME",
    help="Commit on a new branch NAME; the current branch, index and working "
    "tree are not touched (open a pull request from it).",
)
@click.option(
    "--no-commit", is_flag=True, help="Write memory/playbook.md in the working tree and commit nothing."
)
@click.option(
    "--migrate",
    is_flag=True,
    help="Write '- Sentences from:' for rules without it (each sentence to the citations "
    "sharing its words), as one commit; nothing is distilled.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def distill(
    ctx: click.Context,
    offline: bool,
    dry_run: bool,
    branch: str | None,
    no_commit: bool,
    migrate: bool,
    as_json: bool,
) -> None:
    """Turn new episodes into cited playbook changes, as one commit.

    Reads the episodes not distilled yet (not listed by an earlier distill commit and
    not cited by any rule), asks the model (or, with no key configured or --offline,
    the deterministic offline distiller) for delta operations (add, update, retire,
    supersede), and admits only operations whose citations resolve in the ledger:
    invalid IDs are removed, an operation left without evidence is dropped, and every
    drop is reported here and in the commit body. Each change lists the lesson every
    episode added (an update's text changes to say it), the text before and after,
    and the contradictions found: a correction that contradicts a rule supersedes it
    (newer evidence wins) or is flagged for a human, as is a model's sentence that may
    be an obeyed prompt injection ("review:"). One "distill:" commit; none if nothing is new.

    Exit codes: 3 the model could not be reached, 5 the model answered with an error
    or with output that is not the JSON asked for (after one repair attempt); in
    both cases nothing is written. --dry-run is a preview: when the model cannot be
    used it shows the offline distiller's result instead, and says why.

    \b
    Examples:
      scarwarden distill                       # commit on the current branch
      scarwarden distill --dry-run             # show the playbook diff only
      scarwarden distill --branch distill/nov  # for review in a pull request
      scarwarden distill --offline --json
      scarwarden distill --migrate             # sentence maps for an older playbook
    """
    from scarwarden.api import Memory
    from scarwarden.cli.commands._progress import progress_bar

    repo = get_repo(ctx)
    if migrate:
        _refuse_with_migrate(branch=branch, no_commit=no_commit)
        _migrate(repo, dry_run=dry_run, as_json=as_json)
        return
    # A dry run is a preview: by the model when it can be used, else offline, saying so.
    with progress_bar("distilling episodes", quiet=as_json) as progress:  # model batches, on a terminal
        found = Memory(repo).distill(
            offline=True if offline else None,
            dry_run=dry_run,
            branch=branch,
            commit=not no_commit,
            progress=progress,
        )
    result: DistillResult = found.engine
    if result.notice and result.new:  # with nothing to distill, which distiller is moot
        click.echo(result.notice, err=True)
    if as_json:
        echo_json(found.data)
    else:
        _print_result(repo, result, dry_run=dry_run)


def _print_result(repo: MemoryRepo, result: DistillResult, *, dry_run: bool) -> None:
    from scarwarden.index import open_index

    if not result.new:
        with open_index(repo) as index:
            if index.episode_count() == 0:  # a first distill, before any episode
                click.echo(
                    "nothing to distill: the ledger has no episodes yet; record one first: "
                    'scarwarden episode add --task "..." --correction "..."'
                )
                return
    if dry_run:
        _print_preview(result)
    else:
        _print_outcome(repo, result)


def _refuse_with_migrate(*, branch: str | None, no_commit: bool) -> None:
    """--migrate commits on the current branch: a --branch or --no-commit it would ignore
    is refused, not dropped (the user would get the very commit they declined)."""
    from scarwarden.errors import UsageError

    given = "--branch" if branch is not None else "--no-commit" if no_commit else None
    if given is not None:
        raise UsageError(
            f"--migrate cannot be combined with {given}: it commits the sentence maps on the current branch",
            hint="preview them with 'scarwarden distill --migrate --dry-run', then run "
            "'scarwarden distill --migrate' on the branch that should carry them",
        )


def _migrate(repo: MemoryRepo, *, dry_run: bool, as_json: bool) -> None:
    """``--migrate``: sentence maps for a playbook written before them (issue 25)."""
    from scarwarden.distill.migrate import migrate

    result = migrate(repo, dry_run=dry_run)
    if as_json:
        echo_json(result.to_json())
        return
    for rule_id, done, left in result.rules:
        click.echo(f"{rule_id}: {done} sentences mapped, {left} left from the rule's citations")
    if not result.rules:
        click.echo("no rule to migrate: every rule has a sentence map, or no citation shares its words")
    elif result.commit:
        click.echo(f"committed {result.commit[:10]}")
    else:
        click.echo("dry run: nothing was written or committed")


def _print_preview(result: DistillResult) -> None:
    """``--dry-run``: the summary on stderr, the playbook diff on stdout."""
    _report(result, lambda line: click.echo(line, err=True))
    diff = result.diff()
    click.echo(diff if diff else "(the playbook would not change)", nl=bool(not diff))
    if not result.nothing_new:
        click.echo("dry run: nothing was written or committed", err=True)


def _print_outcome(repo: MemoryRepo, result: DistillResult) -> None:
    """The summary, then what was committed or written."""
    _report(result, click.echo)
    if result.commit and result.branch:
        click.echo(
            f"committed {result.commit[:10]} on new branch {result.branch} "
            "(current branch and working tree untouched)"
        )
    elif result.commit:
        click.echo(f"committed {result.commit[:10]}")
    elif result.message_file and result.changes:
        click.echo(
            f"wrote {repo.playbook_rel} (not committed); to commit it: "
            f"git commit -F {result.message_file} {repo.playbook_rel}"
        )
    elif result.message_file:
        click.echo(
            f"no rule changed, {repo.playbook_rel} left as it was; to record the episodes as "
            f"distilled: git commit --allow-empty -F {result.message_file}"
        )
    uncited = result.uncited() if result.message_file else []
    if uncited:  # distillation is a commit: the saved message marks them once committed
        who = "model" if result.distiller == "model" else "offline distiller"
        click.echo(
            f"note: the {len(uncited)} episode(s) the {who} saw that no rule cites are not marked "
            "distilled until that commit is made: the next distill sends them again",
            err=True,
        )
