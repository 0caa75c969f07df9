from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from scarwarden.cli.commands._common import echo_json, get_repo
from scarwarden.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from scarwarden.gate.check import CheckReport
    from scarwarden.repo import MemoryRepo


def print_problems(problems: Sequence[object], summary: str) -> None:
    """One problem per item (hint indented under it), then the summary line."""
    for p in problems:
        lines = str(p).splitlines()
        click.echo(f"- {lines[0]}")
        for line in lines[1:]:
            click.echo(f"  {line}")
    click.echo(summary)


@click.command()
@click.option("--staged", "scope", flag_value="staged",
              help="The tree about to be committed, from git's index (the default).")
@click.option("--all", "scope", flag_value="all",
              help="The committed-plus-staged tree as a whole (parses every episode).")
@click.option("--from-ref", metavar="REV",
              help="Check every commit after REV (CI on a pull request); "
                   "default from $PRE_COMMIT_FROM_REF.")
@click.option("--to-ref", metavar="REV",
              help="...up to and including REV (default HEAD, or $PRE_COMMIT_TO_REF).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def check(ctx: click.Context, scope: str | None, from_ref: str | None, to_ref: str | None,
          as_json: bool) -> None:
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

    if (from_ref or to_ref) and scope is not None:
        raise UsageError(f"--{scope} checks one tree; it cannot be combined with "
                         "--from-ref/--to-ref, which check every commit of a range")
    if to_ref and not from_ref:
        raise UsageError("--to-ref needs --from-ref", hint="scarwarden check --from-ref A --to-ref B")
    if not from_ref and scope != "all":
        env_from = os.environ.get("PRE_COMMIT_FROM_REF")
        env_to = os.environ.get("PRE_COMMIT_TO_REF")
        if env_from and env_to:
            from_ref, to_ref = env_from, env_to
            click.echo(f"scarwarden: checking {env_from}..{env_to} "
                       "(from PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF)", err=True)
    # Not initialised is fine: the hook may be installed before 'scarwarden init', and a
    # repository without memory has nothing to check (it must not block other commits).
    repo = get_repo(ctx, initialised=False)
    report: CheckReport
    if from_ref:
        report = gate.check_range(repo, from_ref, to_ref or "HEAD")
    elif scope == "all":
        report = gate.check_all(repo)
    else:
        report = gate.check_staged(repo)
    if as_json:
        echo_json(report.to_json())
    else:
        print_problems(report.problems, report.summary())
    if not report.ok:
        ctx.exit(int(ExitCode.CHECK_FAILED))


def demo_section(repo: MemoryRepo, echo: Callable[[str], None]) -> None:
    """The gate on a real ``git commit``: an honest rule passes, an invented citation
    is rejected with the reason, and nothing is committed."""
    from scarwarden import git
    from scarwarden.errors import GitError
    from scarwarden.files import playbook as pb
    from scarwarden.files.playbook_edit import load_playbook, save_playbook
    from scarwarden.files.record import add_episodes
    from scarwarden.gate.hooks import install

    install(repo.root)
    echo("The provenance gate runs as a git pre-commit hook (scarwarden hooks install).")
    [episode] = add_episodes(repo, [{
        "task": "Announce the webinar on the newsletter",
        "action": "Gave the start time as 10:00 with no timezone",
        "outcome": "Readers in three countries asked which 10:00",
        "correction": "Always give webinar times in UTC and the main local timezone",
        "tags": ["webinar", "timezone", "newsletter"], "source": "correction"}],
        source="demo")
    echo(f"  1. git commit of episode {episode.id}: accepted")
    book = load_playbook(repo)
    honest = pb.make_rule(book.next_id(), "Give webinar times with a timezone",
                          "State webinar times in UTC and the audience's main timezone.",
                          ["webinar", "timezone"], [episode.id])
    save_playbook(repo, book.with_rule(honest))
    git.add(repo.root, [repo.playbook_rel])
    git.commit(repo.root, f"rule: add {honest.id}\n", only=[repo.playbook_rel])
    echo(f"  2. git commit of rule {honest.id} citing {episode.id}: accepted")

    invented = "ep-n0such0ep1"
    book = load_playbook(repo)
    bogus = pb.make_rule(book.next_id(), "Always post on Fridays",
                         "Post every announcement on a Friday afternoon.", ["post"], [invented])
    original = repo.playbook_path.read_bytes()
    save_playbook(repo, book.with_rule(bogus))
    git.add(repo.root, [repo.playbook_rel])
    try:
        git.commit(repo.root, f"rule: add {bogus.id}\n", only=[repo.playbook_rel])
        echo("  (unexpected: the gate let an invented citation through)")
    except GitError as exc:
        echo(f"  3. git commit of rule {bogus.id} citing {invented}: REJECTED by the hook:")
        for line in exc.message.splitlines():
            if line.lstrip().startswith(("- ", "hint:", "scarwarden check:")):
                echo(f"       {line.strip()}")
    finally:
        repo.playbook_path.write_bytes(original)
        git.add(repo.root, [repo.playbook_rel])
    echo("No provenance, no rule: the commit did not happen; 'scarwarden verify' proves "
         "the whole history the same way.")
