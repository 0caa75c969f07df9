"""``scarwarden episode import``: recorded runs (chat transcripts, tau-bench logs) as episodes."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

import click

from scarwarden.cli.commands._common import InputFile, get_repo, refuse_future
from scarwarden.cli.output import json_text
from scarwarden.errors import UsageError
from scarwarden.files.transcripts import FORMATS

if TYPE_CHECKING:
    from scarwarden.api import ImportResult


class RunsFile(InputFile):
    """A file, a pipe (a FIFO, ``<(...)``) or ``-`` for stdin: a device or a socket is
    refused before a byte is read (/dev/zero would be read up to the size cap). A FIFO
    waits for its writer, as stdin does; on a terminal, saying so."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            mode = os.stat(value).st_mode if isinstance(value, str) and value != "-" else 0
        except OSError:
            mode = 0  # missing or unreadable: click's open says so
        kind = _SPECIAL.get(stat.S_IFMT(mode))
        if kind:
            self.fail(
                f"{value!r}: not a regular file or a pipe (a {kind}); give a file, a pipe, or '-' for stdin",
                param,
                ctx,
            )
        if stat.S_ISFIFO(mode) and sys.stderr is not None and sys.stderr.isatty():
            click.echo(f"Waiting for a writer on the FIFO {os.path.basename(value)}; Ctrl-C stops.", err=True)
        return super().convert(value, param, ctx)


_SPECIAL = {stat.S_IFCHR: "character device", stat.S_IFBLK: "block device", stat.S_IFSOCK: "socket"}


@click.command("import")
@click.argument("file", type=RunsFile())
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), required=True, help="How the file records its runs."
)
@click.option(
    "--correction",
    "corrections",
    multiple=True,
    metavar="[N:]TEXT",
    help="What a human corrected in conversation N (1-based; repeatable); bare TEXT when "
    "the file holds one conversation. Never invented: without it (or a 'correction' "
    "field), an episode has none.",
)
@click.option(
    "--write-tool",
    "writes",
    multiple=True,
    metavar="NAME",
    help="A tool whose calls change something (openai-chat; repeatable): marked [write].",
)
@click.option("--agent", help="The agent that ran (tau-bench: default the file's name).")
@click.option("--at", "at", help="When the runs happened (ISO 8601); default: now, in UTC.")
@click.option(
    "--allow-future",
    is_flag=True,
    help="Accept an --at later than now (beyond a few minutes of clock skew): the "
    "ledger is append-only, so a mistyped year stays for good.",
)
@click.option("--dry-run", is_flag=True, help="Read and check everything; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what was added (or would be) as JSON.")
@click.pass_context
def import_(
    ctx: click.Context,
    file: IO[bytes],
    fmt: str,
    corrections: tuple[str, ...],
    writes: tuple[str, ...],
    agent: str | None,
    at: str | None,
    allow_future: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Import recorded runs: one episode per conversation, one commit for the file.

    \b
    --format openai-chat: a JSON list of messages (one conversation), a JSON list of
      conversations, or JSON lines, one conversation a line (a list of messages, or
      {"messages": [...], "correction": ..., "tags": [...], "reward": ...}).
    --format tau-bench: tau-bench's recorded-run file (a list of records with reward,
      ground truth and trajectory); a failed run's correction is derived from its
      ground truth, as the replay benchmark's (docs/replay.md).

    The task is the first user message (tau-bench: the task's instruction), the action the tool calls
    (arguments given, results summarised, writes marked), the outcome the final reply or the reward. An
    episode's ID is derived from its conversation, so importing a file twice adds nothing. Tool-call
    arguments holding a credential refuse the file, naming the conversation and field; nothing is
    written. FILE (UTF-8) may be a pipe or '-' (stdin); a FIFO waits for its writer, as stdin does.

    \b
    Examples:
      scarwarden episode import --format openai-chat runs.jsonl --dry-run  # (not run: your own runs)
      scarwarden episode import --format openai-chat chat.json \\
          --correction "Ask before refunding"  # (not run: your own conversation)
      scarwarden episode import --format tau-bench gpt-4o-airline.json  # (not run: your own log)
    """
    from scarwarden.api import Memory

    refuse_future(at, allow_future)  # before the file is read: nothing to undo
    repo = get_repo(ctx)
    source = _source_name(file)
    with _bytes_read(file, quiet=as_json) as advance:
        result = Memory(repo).import_runs(
            file,
            fmt,
            name=source,
            corrections=_corrections(corrections),
            write_tools=writes,
            agent=agent,
            at=at,
            allow_future=allow_future,
            dry_run=dry_run,
            progress=advance,
            warn=lambda problem: click.echo(f"warning: {problem}", err=True),
        )
    if as_json:
        _echo_json(result)
        return
    for ep in result.added:
        click.echo(ep.id)
    click.echo(_summary(result), err=True)


def _echo_json(result: ImportResult) -> None:
    """``result.to_json()`` as every ``--json`` prints it, written an episode at a time:
    the whole document (each episode as a dict, then as text) was ~3x its size in memory.
    It is begun after the import (every refusal comes before its first byte: stdout
    stays empty, the error goes to stderr); a reader that stops early (``| head``) ends
    it, as any ``--json``."""
    head = json_text(result.to_json(episodes=False))  # "{\n  ...\n}": the last key's line open
    pieces, size = [head[: -len("\n}")] + ',\n  "episodes": '], 0
    for n, episode in enumerate(result.added):
        text = json_text(episode.to_json()).replace("\n", "\n    ")
        pieces.append(("[\n    " if n == 0 else ",\n    ") + text)
        size += len(text)
        if size > 1 << 16:
            click.echo("".join(pieces), nl=False)
            pieces, size = [], 0
    pieces.append("\n  ]\n}" if result.added else "[]\n}")
    click.echo("".join(pieces))


def _source_name(file: IO[bytes]) -> str:
    """What errors call the file: its base name, ``<stdin>``, or ``<pipe>`` for a
    descriptor's path (``<(gunzip -c log.gz)`` is /dev/fd/63: "63" is no file's name,
    and tau-bench's agent defaults to the file's name)."""
    name = getattr(file, "name", "<stdin>")
    if name in ("-", "<stdin>", "/dev/stdin"):
        return "<stdin>"
    folder, base = os.path.split(name)
    if folder == "/dev/fd" or (folder.startswith("/proc/") and folder.endswith("/fd")):
        return "<pipe>" if stat.S_ISFIFO(os.fstat(file.fileno()).st_mode) else f"<fd {base}>"
    return base


@contextmanager
def _bytes_read(file: IO[bytes], *, quiet: bool) -> Iterator[Callable[[int], None] | None]:
    """A ``progress`` callback for :meth:`Memory.import_runs` drawing the bytes of ``file``
    read so far (on a terminal, unless ``quiet``; else None); the bar is filled when the
    import succeeds."""
    from scarwarden.cli.commands._progress import progress_bar

    size = _size(file)
    with progress_bar("importing runs", quiet=quiet) as bar:
        # Bytes read of the file: conversations are counted only as they are read.
        advance = (lambda _n: bar(file.tell(), size)) if bar is not None and size else None
        yield advance
        if advance is not None and bar is not None:
            bar(size, size)


def _summary(result: ImportResult) -> str:
    """What was done, and what was already there (the same file imported again)."""
    skipped = len(result.skipped)
    if not result.added:
        said = "Nothing added"
        if skipped:
            said += f": all {skipped} conversation(s) are already in the ledger (imported before)"
        elif not result.conversations:
            said += ": the file holds no conversation"
        return said
    verb = "Would add" if result.dry_run else "Committed"
    said = f"{verb} {len(result.added)} episode(s) from {result.conversations} conversation(s)"
    if skipped:
        said += f"; {skipped} already in the ledger (imported before), not added again"
    if result.repeated:
        said += f"; {len(result.repeated)} repeated in the file, imported once"
    return said


def _corrections(given: tuple[str, ...]) -> dict[int, str]:
    """``N:TEXT`` by conversation number; a bare TEXT is conversation 1's (checked: one only)."""
    out: dict[int, str] = {}
    for item in given:
        head, sep, text = item.partition(":")
        number = int(head) if sep and head.strip().isdigit() else None
        if number is None:
            if len(given) > 1:
                raise UsageError("several --correction need their conversation: --correction N:TEXT")
            number, text = 1, item
        if number < 1 or number in out:
            raise UsageError(f"--correction {item!r}: conversation numbers start at 1 and appear once")
        if not text.strip():  # an unset shell variable: not "no human corrected it"
            raise UsageError(
                f"--correction {item!r} is empty: nothing was written",
                hint="give the correction's text, or leave --correction out",
            )
        out[number] = text.strip()
    return out


def _size(file: IO[bytes]) -> int:
    try:
        return os.fstat(file.fileno()).st_size
    except (OSError, ValueError, AttributeError):
        return 0
