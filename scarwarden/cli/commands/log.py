from __future__ import annotations

from typing import IO, TYPE_CHECKING

import click

from scarwarden.cli.commands._common import echo_json, get_repo, limit_option, terminal_text

if TYPE_CHECKING:
    from scarwarden.recall.log import LogEntry
    from scarwarden.repo import MemoryRepo

_VERDICTS = ("ACT", "ACT_AND_FLAG", "ASK_HUMAN")


@click.command("log")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a list of {id, at, task, verdict, rule_ids, scores, playbook_commit, detail}, newest first.",
)
@limit_option("At most N entries.", default=20)
@click.option(
    "--since",
    metavar="WHEN",
    help="Only recalls at or after WHEN: 2026-11-24, 2026-11-24T09:00, or an age "
    "such as 7d, 12h, 30m (times without an offset are UTC).",
)
@click.option(
    "--until", metavar="WHEN", help="Only recalls at or before WHEN (a bare date means the end of that day)."
)
@click.option("--task-grep", metavar="TEXT", help="Only tasks containing TEXT (any case).")
@click.option(
    "--verdict",
    type=click.Choice(_VERDICTS, case_sensitive=False),
    metavar="VERDICT",
    help="Only recalls with this verdict: ACT, ACT_AND_FLAG or ASK_HUMAN.",
)
@click.option(
    "--export",
    "export",
    is_flag=True,
    help="Write the log as JSON lines to stdout, oldest first (the filters apply, --limit does not), "
    "for another clone's `log --import`; screened as the ledger screens episodes (see above).",
)
@click.option(
    "--import",
    "import_file",
    type=click.File("rb"),
    metavar="FILE",
    help="Merge a file written by `log --export` ('-' = stdin); lines already in the log are skipped, "
    "a bad line (one whose text holds NUL or another control character but tab and newline, "
    "or a task recall would refuse) refuses the whole file (exit 1, naming the line).",
)
@click.pass_context
def log_cmd(
    ctx: click.Context,
    export: bool,
    import_file: IO[bytes] | None,
    as_json: bool,
    limit: int,
    since: str | None,
    until: str | None,
    task_grep: str | None,
    verdict: str | None,
) -> None:
    """The recall log: what was recalled, when, with which verdict and playbook.

    Every `scarwarden recall` (and `ask`, `answer`, the MCP `recall` tool) appends one
    line: the time (UTC), the task, the verdict, the rules and scores, and the commit
    the playbook came from, so "why did the agent do X last Tuesday" has an answer:
    `git show <playbook_commit>:memory/playbook.md` is the playbook it saw. The log
    lives in the index database (.scarwarden/index.db), not in git. Recall refuses a
    task holding control characters; a log written by an older version may hold one
    (ESC, BEL, NUL...), shown escaped, as \\x1b, so a task cannot drive the terminal;
    --json and --export keep the text exact (but what --export's screen replaces).

    The log is local and keeps each task as asked, credentials too (receipts are resolved
    from it; a receipt's hash covers its task). --export, what leaves this clone, screens
    every text as the ledger screens episodes: a credential becomes [redacted <kind>],
    personal data privacy: refuses becomes [email], [phone] or [card] (such a line drops
    its receipt; detail.redacted lists the kinds); stderr says how many lines were
    redacted, and how many hold personal data privacy: warn lets through.

    \b
    Examples:
      scarwarden log
      scarwarden log --since 2026-11-24 --until 2026-11-24 --task-grep invoice
      scarwarden log --verdict ASK_HUMAN --since 7d --json
      scarwarden log --export --since 30d > recalls.jsonl
      scarwarden log --import teammate.jsonl  # (not run: another clone's export)
    """
    from scarwarden.index import open_index
    from scarwarden.recall.log import read_log
    from scarwarden.times import parse_when

    _refuse_mixed(export, import_file is not None, as_json, since, until, task_grep, verdict)
    repo = get_repo(ctx)
    since_at = parse_when(since) if since is not None else None
    until_at = parse_when(until, end=True) if until is not None else None
    if import_file is not None:
        _import(repo, import_file, as_json)
        return
    filters = {"since": since_at, "until": until_at, "task_grep": task_grep, "verdict": verdict}
    if export:
        _export(repo, filters)
        return
    with open_index(repo) as index:
        entries = read_log(
            index, limit=limit, since=since_at, until=until_at, task_grep=task_grep, verdict=verdict
        )
    if as_json:
        echo_json([e.to_json() for e in entries])
    else:
        _print_entries(entries, filtered=bool(since or until or task_grep or verdict))


def _refuse_mixed(export: bool, importing: bool, as_json: bool, *filters: str | None) -> None:
    """An option the chosen mode would ignore is refused (exit 2), not dropped in silence."""
    from scarwarden.errors import UsageError

    if importing and export:
        raise UsageError(
            "--import and --export go one at a time: --import merges a file into this log, "
            "--export writes this log out",
            hint="scarwarden log --import teammate.jsonl, then scarwarden log --export > recalls.jsonl",
        )
    if importing and any(f is not None for f in filters):
        raise UsageError(
            "--import merges the whole file: --since, --until, --task-grep and --verdict choose what "
            "is shown or exported, not what is imported",
            hint="filter when exporting: scarwarden log --export --since 30d > recalls.jsonl",
        )
    if export and as_json:
        raise UsageError(
            "--export writes JSON lines already (one recall per line, for log --import); --json "
            "prints the log as one JSON list",
            hint="scarwarden log --export > recalls.jsonl, or scarwarden log --json",
        )


def _print_entries(entries: list[LogEntry], *, filtered: bool) -> None:
    """One bold line per recall (time, verdict, task), then its rules and playbook."""
    if not entries:
        if filtered:
            click.echo("no recall matches", err=True)
        else:  # a newcomer's first look: say what fills it
            click.echo(
                'the recall log is empty: each scarwarden recall "..." adds its task, verdict and '
                "rules (unless --no-log)",
                err=True,
            )
        return
    for entry in entries:
        task = terminal_text(" ".join(entry.task.split()))
        task = task if len(task) <= 100 else task[:97] + "..."
        click.echo(click.style(f"{entry.at}  {entry.verdict:<12}", bold=True) + f"  {task}")
        rules = ", ".join(
            f"{terminal_text(r)} ({s:g})" for r, s in zip(entry.rule_ids, entry.scores, strict=False)
        )
        commit = terminal_text(entry.playbook_commit[:12]) if entry.playbook_commit else "uncommitted"
        click.echo(f"    rules: {rules or '-'}   playbook: {commit}")


def _export(repo: MemoryRepo, filters: dict[str, str | None]) -> None:
    """``--export``: the log as JSON lines, screened; what the screen did, on stderr."""
    from scarwarden.index import open_index
    from scarwarden.recall.log_share import ExportTally, export_lines

    tally = ExportTally()
    with open_index(repo) as index:
        for line in export_lines(index, tally, **filters):
            click.echo(line)
    if tally.redacted:
        click.echo(
            f"log --export: {tally.redacted} of {tally.lines} recall(s) had a credential or personal data "
            "replaced by a placeholder, and their receipts left out (a receipt's hash covers the task); "
            "this clone's log keeps the exact text",
            err=True,
        )
    if tally.personal:
        click.echo(
            f"warning: {tally.personal} exported recall(s) hold personal data that privacy: warn lets "
            "through (privacy: refuse in scarwarden.yaml replaces it with a placeholder)",
            err=True,
        )


def _import(repo: MemoryRepo, file: IO[bytes], as_json: bool) -> None:
    """``--import``: merge another clone's exported lines."""
    from scarwarden.index import open_index
    from scarwarden.recall.log_share import import_lines

    name = getattr(file, "name", "-")
    source = "<stdin>" if name in ("-", "<stdin>") else str(name)
    with open_index(repo) as index:
        result = import_lines(index, file.read().splitlines(), source=source)
    if as_json:
        echo_json(result.to_json())
        return
    click.echo(f"imported {result.added} recall(s); {result.skipped} already in the log", err=True)
