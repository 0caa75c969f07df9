from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

import click

from scarwarden.cli.commands._common import (
    InputFile,
    echo_json,
    get_repo,
    limit_option,
    refuse_future,
    tag_list,
    tag_option,
)
from scarwarden.errors import UsageError
from scarwarden.files.display import format_episode
from scarwarden.files.episodes import SOURCES

if TYPE_CHECKING:
    from scarwarden.api import Recorded


@click.group()
def episode() -> None:
    """Record and read episodes: what the agent did, what happened, what was corrected.

    Episodes are append-only YAML files under memory/episodes/YYYY/MM/.

    \b
    Examples:
      scarwarden episode add --task "Draft the beta post" --correction "Lead with the pain"
      scarwarden episode list --tag linkedin --newest-first
      scarwarden episode show ep-hkgnqdz88f
    """


@episode.command("add")
@click.option("--task", help="What the agent was asked to do (required unless --file).")
@click.option("--action", help="What the agent did.")
@click.option("--outcome", help="What happened.")
@click.option("--correction", help="What a human corrected: the lesson.")
@click.option("--corrected-by", help="Who corrected it.")
@click.option("--agent", help="Which agent acted.")
@tag_option
@click.option("--source", type=click.Choice(SOURCES), help="How the episode came about.")
@click.option("--ref", "refs", multiple=True, help="A related episode ID (repeatable).")
@click.option(
    "--rule-applied",
    "rules_applied",
    multiple=True,
    help="A rule ID that was in play when the agent acted (repeatable).",
)
@click.option(
    "--rules-applied-reason",
    help="Why a rule applied is not in the receipt (e.g. a human told the agent to apply it).",
)
@click.option(
    "--receipt",
    metavar="R",
    help="The recall receipt: its ID from this clone's recall log, the JSON recall printed, "
    "or a file holding it ('-' = stdin). Stored as 'recalled:'; the gate proves it.",
)
@click.option(
    "--attach",
    "attach",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="An image (PNG, JPEG, WebP, GIF) to attach (repeatable): stored once under "
    "memory/media/ by its SHA-256, listed in 'attachments:'.",
)
@click.option("--at", "at", help="When it happened (ISO 8601); default: now, in UTC.")
@click.option(
    "--allow-future",
    is_flag=True,
    help="Accept an --at (or a --file episode's at:) later than now (beyond a few minutes "
    "of clock skew): the ledger is append-only, so a mistyped year stays for good.",
)
@click.option(
    "--file",
    "file",
    type=InputFile(),
    help="Read episode(s) from a YAML/JSON file, a list, or JSON lines ('-' = stdin).",
)
@click.option("--no-commit", is_flag=True, help="Stage the file(s) instead of committing.")
@click.option(
    "--redact-pii",
    is_flag=True,
    help="Replace email addresses, phone numbers and card numbers with [email], [phone], [card] first.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the stored episode as JSON (with --file: a list of them)."
)
@click.pass_context
def add(
    ctx: click.Context, file: IO[bytes] | None, no_commit: bool, redact_pii: bool, as_json: bool, **flags: Any
) -> None:
    """Record an episode (or a batch) and commit it.

    The ID is minted (random, collision-free across clones) and `at` defaults to now.
    The commit holds only the new file(s), with a `Scarwarden-Episode: <id>` trailer
    each; a batch from --file is one commit.

    An episode holding a credential (an API key, a token, a private key, a password in
    a URL) is refused, naming the field and the kind, never the value: record it
    redacted. Personal data is refused or warned about as 'privacy:' in
    scarwarden.yaml says; --redact-pii replaces it with typed placeholders.

    \b
    Examples:
      scarwarden episode add --task "Draft the beta post" \\
          --action "Opened with a feature list" --correction "Lead with the pain" \\
          --tag linkedin --tag post --agent writer --source correction
      scarwarden episode add --file import.jsonl
      scarwarden episode add --task "Banner for the beta" --correction "The logo was cropped" \\
          --attach banner.png  # (not run: your own image)
      scarwarden episode add --task "Post our discount code on Twitter" \\
          --action "Kept the code out" --rule-applied PB-02 \\
          --receipt 1d2eac8d15d63d22  # (not run: a receipt ID from your own recall log)
      scarwarden episode add --redact-pii --task "Refund" --outcome "Mailed jane@acme.io"
      echo '{"task": "x", "outcome": "y"}' | scarwarden episode add --file -
    """
    from scarwarden.api import Memory
    from scarwarden.gate.door import gate_check

    repo = get_repo(ctx)
    refuse_future(flags["at"], allow_future := flags.pop("allow_future"))
    receipt = flags.pop("receipt")
    images = _images(repo, flags.pop("attach"))
    inputs, source_name = _inputs(file, flags)
    if images:
        if file is not None:
            raise UsageError("--attach goes with the episode flags, not --file")
        inputs[0]["attachments"] = list(dict.fromkeys(image.attachment for image in images))
    if receipt is not None:
        if file is not None:
            raise UsageError(
                "--receipt goes with the episode flags",
                hint="in a --file, give each episode its receipt as a 'recalled:' block",
            )
        inputs[0]["recalled"] = _receipt(repo, receipt)
    episodes = Memory(repo).record_batch(
        inputs,
        commit=not no_commit,
        source=source_name,
        redact_pii=redact_pii,
        warn=lambda problem: click.echo(f"warning: {problem}", err=True),
        images=images,
        check=gate_check(repo, "the episode" if file is None else "the batch"),
        allow_future=allow_future,
    )
    _print_added(episodes, as_json=as_json, listed=file is not None, staged=no_commit)


def _print_added(episodes: list[Recorded], *, as_json: bool, listed: bool, staged: bool) -> None:
    """The new IDs (or, with --json, the episode; a list for --file), then what was done."""
    if as_json:
        echo_json([e.episode for e in episodes] if listed else episodes[0].episode)
        return
    for ep in episodes:
        click.echo(ep.id)
    verb = "Staged" if staged else "Committed"
    click.echo(f"{verb} {len(episodes)} episode(s)", err=True)


def _inputs(file: IO[bytes] | None, flags: dict[str, Any]) -> tuple[Sequence[Any], str]:
    """The episode input(s) and the name errors give their source: a file, or the flags."""
    from scarwarden.files.episode_input import parse_input_documents

    if file is not None:
        if any(flags.values()):
            raise UsageError(
                "--file cannot be combined with episode flags", hint="put every field in the file instead"
            )
        name = getattr(file, "name", "-")
        source_name = "<stdin>" if name in ("-", "<stdin>") else str(name)
        # Not list(): the parsed documents carry each item's lines for error messages.
        return parse_input_documents(file.read(), source=source_name), source_name
    if not flags["task"]:
        raise UsageError(
            "--task is required (or give --file)",
            hint='scarwarden episode add --task "..." --correction "..."',
        )
    keys = ["action", "outcome", "correction", "corrected_by", "agent", "source", "at"]
    keys.append("rules_applied_reason")
    fields = {key: flags[key] for key in keys}
    lists = tag_list(flags["tags"]), list(flags["refs"]), list(flags["rules_applied"])
    return [_document(flags["task"], fields, *lists)], "episode"


def _images(repo: Any, paths: Sequence[str]) -> list[Any]:
    """``--attach``: each file checked (format by content, size cap) before anything is written."""
    from pathlib import Path

    from scarwarden.files.media import read_image

    return [read_image(Path(path), max_bytes=repo.config.media.max_bytes) for path in paths]


def _receipt(repo: Any, value: str) -> dict[str, Any]:
    """``--receipt``: an ID from the recall log, JSON, a file, or ``-`` (stdin)."""
    import re
    from pathlib import Path

    from scarwarden.cli.commands._input import decode_input, read_stdin
    from scarwarden.files.receipt import HASH_CHARS
    from scarwarden.recall.receipts import resolve

    text = value
    receipt_id = re.fullmatch(rf"[0-9a-f]{{{HASH_CHARS}}}", value.strip())
    if value == "-":
        text = read_stdin("the receipt")
    elif not value.lstrip().startswith("{") and Path(value).is_file():
        text = decode_input(Path(value).read_bytes(), f"the receipt {value}")
    elif not value.lstrip().startswith(("{", "[")) and not receipt_id:
        # Neither JSON nor a receipt ID: a file name, mistyped or not a file.
        what = "not a regular file" if Path(value).exists() else "no such file"
        raise UsageError(
            f"--receipt {value}: {what}, and neither a receipt ID nor JSON",
            hint="pass the receipt ID recall printed (16 hex digits), its --json, or a file holding it",
        )
    return resolve(repo, text)


def _document(
    task: str, fields: dict[str, str | None], tags: list[str], refs: list[str], rules_applied: list[str]
) -> dict[str, object]:
    """The episode the flags describe, as an input document: only the fields given."""
    data: dict[str, object] = {"task": task}
    data.update({key: value for key, value in fields.items() if value is not None})
    for key, values in (("tags", tags), ("refs", refs), ("rules_applied", rules_applied)):
        if values:
            data[key] = values
    return data


@episode.command("show")
@click.argument("episode_id")
@click.option("--json", "as_json", is_flag=True, help="Print the episode as JSON.")
@click.pass_context
def show(ctx: click.Context, episode_id: str, as_json: bool) -> None:
    """Show one episode word for word, and the rules that cite it.

    \b
    Example:
      scarwarden episode show ep-hkgnqdz88f
    """
    from scarwarden.api import Memory

    repo = get_repo(ctx)
    found = Memory(repo).episode(episode_id)
    cited_by = list(found.cited_by)
    if as_json:
        echo_json({**found.fields, "path": found.path, "cited_by": cited_by})
        return
    click.echo(click.style(f"# {found.path}", dim=True))
    click.echo(format_episode(found.stored, repo, found.path))
    click.echo(click.style(f"# cited by: {', '.join(cited_by) or 'no rule yet'}", dim=True))


@episode.command("list")
@click.option("--tag", "tags", multiple=True, help="Only episodes with this tag (repeatable: all).")
@click.option(
    "--since",
    metavar="WHEN",
    help="At or after WHEN: 2026-11-01, 2026-11-01T09:00 (UTC unless an offset is "
    "given), or an age such as 7d, 12h, 30m.",
)
@click.option("--until", metavar="WHEN", help="At or before WHEN (a bare date means the end of that day).")
@click.option("--agent", help="Only this agent's episodes.")
@click.option("--grep", help="Full-text search over task, action, outcome and correction.")
@limit_option("At most N episodes.")
@click.option("--newest-first", is_flag=True, help="Newest first (default: oldest first).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of episodes.")
@click.pass_context
def list_(
    ctx: click.Context,
    tags: tuple[str, ...],
    since: str | None,
    until: str | None,
    agent: str | None,
    grep: str | None,
    limit: int | None,
    newest_first: bool,
    as_json: bool,
) -> None:
    """List episodes, filtered by tag, date, agent or text.

    \b
    Examples:
      scarwarden episode list --tag linkedin
      scarwarden episode list --since 2026-11-01 --agent writer --json
      scarwarden episode list --since 7d --newest-first
      scarwarden episode list --grep "discount code"
    """
    from scarwarden.index import open_index
    from scarwarden.times import parse_when

    since_at = parse_when(since) if since is not None else None
    until_at = parse_when(until, end=True) if until is not None else None
    repo = get_repo(ctx)
    with open_index(repo) as index:
        episodes = index.list_episodes(
            tags=tags,
            since=since_at,
            until=until_at,
            agent=agent,
            grep=grep,
            limit=limit,
            newest_first=newest_first,
        )
    if as_json:
        echo_json([e.to_json() for e in episodes])
        return
    if not episodes:
        click.echo("no episodes match", err=True)
        return
    for ep in episodes:
        tags_text = f"  [{', '.join(ep.tags)}]" if ep.tags else ""
        click.echo(f"{ep.id}  {ep.at}  {ep.task}{click.style(tags_text, dim=True)}")
    if sys.stdout.isatty():
        click.echo(f"{len(episodes)} episode(s)", err=True)


list_.name = "list"


def _add_import() -> None:
    """``episode import`` lives in its own module (episode_import.py)."""
    from scarwarden.cli.commands.episode_import import import_

    episode.add_command(import_)


_add_import()
